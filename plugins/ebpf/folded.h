/* Folded stacks ("process;outer;...;inner weight" lines, the flame graph
 * input): building them from the aggregated intervals, summing identical
 * lines, merging perf_events' on-CPU samples into a wall-clock view. */
#ifndef TR_EBPF_FOLDED_H
#define TR_EBPF_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define FD_ONCPU_MARK "[on-cpu]"
#define FD_OFFCPU_MARK "[off-cpu]"

/* Writes the name of the frame at `addr` into buf (already made safe for
 * the folded format by the caller or not: fd_* sanitize it); "0x..." when
 * the address is in no known object. */
typedef void (*fd_frame_fn)(void *arg, pid_t pid, uint64_t addr, int kernel, char *buf,
			    size_t len);
/* Which processes of on-CPU samples belong in the wall view. */
typedef int (*fd_pid_filter_fn)(void *arg, pid_t pid);

/* A set of folded lines with their weights in nanoseconds. */
struct fd_stacks;

struct fd_stacks *fd_stacks_new(void);
void fd_stacks_free(struct fd_stacks *s);
int fd_stacks_add(struct fd_stacks *s, const char *line, uint64_t weight_ns);
size_t fd_stacks_count(const struct fd_stacks *s);
/* Writes "line weight_us\n" sorted by line, dropping lines under 0.5 us.
 * Returns 0 or -errno. */
int fd_stacks_write(const struct fd_stacks *s, FILE *out);
/* Adds every line of `src` to `dst` with ";mark" appended. */
int fd_stacks_add_marked(struct fd_stacks *dst, const struct fd_stacks *src, const char *mark);

/* Builds "comm;user outer..inner;kernel outer..inner" from innermost-first
 * frame addresses.  Kernel frames of the tracing machinery (the BPF
 * program, bpf_trace_run) are left out; `kstack_err`, when nonzero, adds a
 * frame saying the kernel stack was lost.  A run of frames in no known
 * object becomes one "[unknown]" frame; the frames it leaves out are added
 * to *folded_away (when not NULL).  Returns the length or -ENOSPC. */
int fd_build_line(char *buf, size_t len, const char *comm, pid_t pid,
		  const uint64_t *uips, size_t nu, const uint64_t *kips, size_t nk,
		  int ustack_lost, int kstack_lost, fd_frame_fn frame, void *arg,
		  uint64_t *folded_away);

/* Reads on-CPU folded lines (weight = samples) from `in`, keeps those whose
 * process frame carries an accepted PID ("comm-PID"; lines without one are
 * kept), and adds them to `s` with the process frame reduced to its name
 * each sample worth `ns_per_sample` and FD_ONCPU_MARK as the last frame.
 * Returns the number of lines added or -errno. */
long fd_merge_oncpu(struct fd_stacks *s, FILE *in, uint64_t ns_per_sample,
		    fd_pid_filter_fn filter, void *arg);

#endif
