/* Off-CPU folded lines ("comm-PID;tcomm-TID;outer;...;inner", the root
 * of lib/folded.h) from the frame addresses of an aggregated interval;
 * lib/folded.c sums and writes them. */
#ifndef TR_EBPF_FOLDED_H
#define TR_EBPF_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes the name of the frame at `addr` into buf (already made safe for
 * the folded format by the caller or not: fd_* sanitize it); "[unknown]" when
 * the address is in no known object. */
typedef void (*fd_frame_fn)(void *arg, pid_t pid, uint64_t addr, int kernel, char *buf,
			    size_t len);

/* How many of the innermost kernel frames `kips` are the tracing
 * machinery's (the BPF program, bpf_trace_run): the same in every stack,
 * left out of every output. */
size_t fd_tracing_frames(pid_t pid, const uint64_t *kips, size_t nk, fd_frame_fn frame,
			 void *arg);

/* Builds "comm-PID;tcomm-TID;user outer..inner;kernel outer..inner" from
 * innermost-first frame addresses.  Kernel frames of the tracing machinery
 * (the BPF program, bpf_trace_run) are left out; `kstack_err`, when
 * nonzero, adds a frame saying the kernel stack was lost.  A run of frames
 * in no known object becomes one "[unknown]" frame; the frames it leaves
 * out are added to *folded_away (when not NULL).  Returns the length or
 * -ENOSPC. */
int fd_build_line(char *buf, size_t len, const char *comm, pid_t pid, const char *tcomm,
		  pid_t tid, const uint64_t *uips, size_t nu, const uint64_t *kips, size_t nk,
		  int ustack_lost, int kstack_lost, fd_frame_fn frame, void *arg,
		  uint64_t *folded_away);

#endif
