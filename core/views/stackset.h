/* Stacks with their weights, merged as they are added: what `tracerig
 * convert` reads from an archive (perf.data.txt samples, folded lines) and
 * writes as pprof, folded stacks or speedscope. */
#ifndef TR_STACKSET_H
#define TR_STACKSET_H

#include <stddef.h>
#include <stdint.h>

/* A frame as read: a name ("" when unknown), and where known the address
 * and the object (dso) it is in. */
struct ss_frame {
	const char *name;
	const char *dso; /* "" when unknown */
	uint64_t address; /* 0 when unknown */
	int kernel;
};

struct ss_stack {
	uint32_t *frames; /* indexes into set->frames, leaf first */
	size_t n_frames;
	long pid, tid;    /* -1 when unknown */
	const char *comm; /* the process (or thread) name, "" when unknown */
	int64_t value;    /* summed weight */
	int64_t count;    /* samples or intervals merged */
};

struct tr_stackset {
	const char *kind;        /* "cpu", "offcpu", "wall" */
	const char *value_type;  /* pprof's words: ("cpu", "nanoseconds"), ... */
	const char *value_unit;
	struct ss_frame *frames; /* distinct frames; names and dsos interned */
	size_t n_frames, cap_frames;
	struct ss_stack *stacks;
	size_t n_stacks, cap_stacks;
	void *index; /* interning tables */
	/* What the frames and stacks take, roughly, and the most they may
	 * (0: no cap): an archive can hold more distinct stacks than memory. */
	uint64_t bytes, max_bytes;
	int saturated; /* a sum reached INT64_MAX and stayed there */
};

int tr_stackset_init(struct tr_stackset *s, const char *kind, const char *value_type,
		     const char *value_unit);
void tr_stackset_free(struct tr_stackset *s);

/* Adds one stack (frames leaf first) with its weight and how many samples
 * or intervals that is; sums that would overflow stay at INT64_MAX (and
 * s->saturated says so).  0, -ENOMEM, or -E2BIG when a new stack or frame
 * would take the set past s->max_bytes. */
int tr_stackset_add(struct tr_stackset *s, const struct ss_frame *frames, size_t n_frames,
		    long pid, long tid, const char *comm, int64_t value, int64_t count);

/* The id of a frame (interned on first sight), -ENOMEM or -E2BIG: for callers
 * that see the same frame many times and keep its id. */
int64_t tr_stackset_frame(struct tr_stackset *s, const struct ss_frame *f);
/* tr_stackset_add with frames given by id. */
int tr_stackset_add_ids(struct tr_stackset *s, const uint32_t *frame_ids, size_t n_frames,
			long pid, long tid, const char *comm, int64_t value, int64_t count);

/* Room to split one folded stack in (tr_stackset_add_folded): deeper
 * stacks are cut at their outermost SS_FOLDED_MAX frames. */
#define SS_FOLDED_MAX 1024
struct ss_folded_scratch {
	struct ss_frame frames[SS_FOLDED_MAX];
	char *parts[SS_FOLDED_MAX];
};

/* Adds a folded stack, "root;outermost;...;leaf" without its weight (any
 * root lib/folded.h parses), which it splits in place: frames ending in
 * "_[k]" are kernel frames of that name, names go under the sanitize rule
 * (lines come from archives).  An old root "name-DIGITS" without a thread
 * frame holds a PID only when `pid_without_thread` (cpu.folded's did;
 * offcpu.folded's was a name).  0, -ENOMEM or -E2BIG. */
int tr_stackset_add_folded(struct tr_stackset *s, char *stack, int pid_without_thread,
			   int64_t value, int64_t count, struct ss_folded_scratch *scratch);

/* Sum of every stack's value, or of its count, held at INT64_MAX. */
int64_t tr_stackset_total(const struct tr_stackset *s);
int64_t tr_stackset_count(const struct tr_stackset *s);

#endif
