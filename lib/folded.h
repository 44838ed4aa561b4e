/* Folded stacks, the flame graph's input: one "root;outer;...;inner weight"
 * line per distinct stack, written once here for every file tracerig
 * folds (cpu.folded, offcpu.folded, wall.folded).
 *
 * Every line is rooted the same way, a process frame then a thread frame:
 *
 *     comm-PID;tcomm-TID;outermost;...;innermost WEIGHT
 *
 * comm is the process's name (its main thread's), tcomm the thread's, PID
 * and TID host IDs; names are under the rule of lib/sanitize.h.  Archives
 * written before this convention rooted cpu.folded at "comm-PID" alone and
 * offcpu.folded / wall.folded at "comm"; tr_folded_root_parse reads all
 * three. */
#ifndef TR_LIB_FOLDED_H
#define TR_LIB_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* A set of folded lines with their summed weights. */
struct tr_folded;

struct tr_folded *tr_folded_new(void);
void tr_folded_free(struct tr_folded *f);
/* Adds `weight` to line[0..len) (no NUL needed).  0 or -ENOMEM. */
int tr_folded_add(struct tr_folded *f, const char *line, size_t len, uint64_t weight);
/* Splits a folded line, "stack weight", at its last space (frames may
 * hold spaces): 1 with the line cut there and *weight set; 0 for a line
 * that carries no weight (blank, or no digits after the space); -ERANGE
 * for a weight that is negative or over `max`.  Ends the line at its
 * first \r or \n. */
int tr_folded_split(char *line, uint64_t max, uint64_t *weight);
/* Adds every "stack weight" line of `in` (folded text, as
 * tr_folded_write writes it); lines without a weight and weights of 0
 * are skipped.  0, -ENOMEM or -EIO. */
int tr_folded_read(struct tr_folded *f, FILE *in);
/* From now on, once the distinct lines in memory take more than about
 * `limit` bytes, they are written sorted to a run (an unlinked file in
 * `dir`, the session's staging directory) and memory starts empty again;
 * tr_folded_write and tr_folded_each merge the runs back, summing a line
 * found in several.  A long system-wide session roots every process's
 * stacks at its own PID, so its distinct lines grow with every process
 * it sees: this bounds what they hold in memory.  A run that cannot be
 * written (a full disk) leaves the lines in memory, as without a limit
 * (tr_folded_spilled says so).  0 or -ENOMEM. */
int tr_folded_spill(struct tr_folded *f, const char *dir, size_t limit);
/* 0, or the -errno that stopped spilling; *runs (if not NULL) the runs
 * on disk now. */
int tr_folded_spilled(const struct tr_folded *f, size_t *runs);
/* Distinct lines so far (once spilled, at most: a line may be in more
 * than one run). */
size_t tr_folded_count(const struct tr_folded *f);
/* Writes "line weight\n" sorted by line, each weight divided by `divisor`
 * and rounded to the nearest (1: as summed); a line that rounds to 0 is
 * left out.  0, -ENOMEM or -EIO. */
int tr_folded_write(const struct tr_folded *f, FILE *out, uint64_t divisor);
/* Calls each(arg, line, weight) for every line, sorted (as written);
 * stops at and returns the first nonzero return, or a -errno of reading
 * the runs back. */
int tr_folded_each(const struct tr_folded *f,
		   int (*each)(void *arg, const char *line, uint64_t weight), void *arg);

/* Writes the root "comm-PID;tcomm-TID" into buf, the names under the
 * sanitize rule ("[unknown]" for an empty or NULL one).  Returns its
 * length, or -ENOSPC when buf is too small. */
int tr_folded_root(char *buf, size_t len, const char *comm, pid_t pid, const char *tcomm,
		   pid_t tid);

/* The root of a folded stack (the weight already cut off). */
struct tr_folded_rootinfo {
	const char *comm;  /* the process frame's name, comm_len bytes */
	size_t comm_len;
	long pid;          /* -1 when the root carries none (old offcpu.folded) */
	const char *tcomm; /* the thread frame's name, or NULL (old formats) */
	size_t tcomm_len;
	long tid;          /* -1 when there is no thread frame */
	const char *frames; /* the outermost stack frame, NULL when there is none */
};

/* Splits `stack` into its root and its frames, in any of the three forms:
 * "comm-PID;tcomm-TID;frames" (both root frames end in -digits),
 * "comm-PID;frames" (cpu.folded before the thread frame) and "comm;frames"
 * (offcpu.folded / wall.folded before it).  A name may hold '-': the ID is
 * after the last one.  Points into `stack`, which it does not change. */
void tr_folded_root_parse(const char *stack, struct tr_folded_rootinfo *r);

#endif
