/* The frame texts of perf_events' conversion: for every frame, its
 * perf.data.txt line and its name in folded stacks, made once per
 * (process, generation of its address space, address) from what the
 * core's frame_name service answered, and served from here, without
 * asking the core (and taking its lock) again, while the process keeps
 * that generation (the service frame_generation).  The core stays the one
 * source of names: nothing here names a frame, it only keeps the core's
 * answers for as long as the core says they hold.
 *
 * One conversion, one thread: nothing here locks. */
#ifndef TR_PERF_FRAMETEXTS_H
#define TR_PERF_FRAMETEXTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracerig-private/ext.h"

/* A frame's text.  Both parts come from frame_name, which hands out its
 * strings under the sanitize rule already (names and paths are the traced
 * program's: one with a newline would add frame lines of its choosing, a
 * ';' would split a folded frame). */
struct frame_text {
	uint32_t line_len, fold_len;
	/* "\t%16llx name (object)\n", then the name as frame_name gives it
	 * ("_[k]" after a kernel frame's), NUL-terminated: what the stack
	 * sink folds. */
	char s[];
};

struct frametexts;

struct frametexts *ft_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx);
void ft_free(struct frametexts *ft);

/* A new sample begins: the replay may have changed its process's
 * mappings since the last one, so its generation is read again (once, at
 * its first user frame). */
void ft_sample(struct frametexts *ft);

/* The text of the frame at `addr` of `pid` (ignored when `kernel`) in a
 * sample taken at time_ns (the session clock; 0: unknown), and in *ret
 * what frame_name returned for it (0: a symbol names it).  The text
 * stays where it is until ft_free, or until ft_exit says its process is
 * over.  NULL when out of memory. */
const struct frame_text *ft_text(struct frametexts *ft, pid_t pid, uint64_t addr, int kernel,
				 uint64_t time_ns, int *ret);

/* The replay's PERF_RECORD_FORK and PERF_RECORD_EXIT, in time order, so
 * that what is kept for a process goes once it is over: a system-wide
 * session that sees a compile loop sees thousands of processes a minute.
 * Only processes whose birth the recording holds (a FORK with pid != ppid)
 * are followed, thread by thread; the others (there before the recording)
 * stay.
 *
 * ft_exit returns 1 when `pid` is now over (its last thread exited, its
 * leader among them).  What it kept goes FT_GRACE_NS later in the
 * recording's time, at the ft_expire that returns its pid (the caller then
 * tells the core, symbolizer_exit): a thread is still sampled while it
 * exits, after the kernel wrote its EXIT record (in perf_event_exit_task
 * itself, or preempted before its last schedule), so its last samples may
 * come just after the EXIT in time order.  ft_fork returns 1 when a process
 * of that PID had ended and was still kept: it goes now, before the new
 * one, and the caller tells the core before it replays the fork; 0
 * otherwise, -ENOMEM when the fork could not be noted (the process is then
 * never followed, as one there before). */
#define FT_GRACE_NS 1000000000ull
int ft_fork(struct frametexts *ft, pid_t pid, pid_t ppid, pid_t tid);
int ft_exit(struct frametexts *ft, pid_t pid, pid_t tid, uint64_t time_ns);
/* The next process that ended FT_GRACE_NS or more before `now_ns`, its
 * texts freed, or 0 when there is none (call until 0). */
pid_t ft_expire(struct frametexts *ft, uint64_t now_ns);

/* What is kept, for the log and for tests: processes followed, user
 * frames' texts (of every process) and kernel frames' (shared). */
void ft_counts(const struct frametexts *ft, size_t *processes, size_t *user, size_t *kernel);

#endif
