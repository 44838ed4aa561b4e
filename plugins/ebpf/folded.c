/* Off-CPU folded lines from frame addresses. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "lib/folded.h"
#include "lib/sanitize.h"

/* Frames of the tracing machinery at the inner end of every kernel stack. */
#define TRACING_FRAMES_MAX 6
/* What the frame_name service calls a frame in no known object. */
#define UNKNOWN "[unknown]"
static int is_tracing_frame(const char *name)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trace_run", "__bpf_trace_",
						"__traceiter_", "trace_call_bpf" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

static int append(char *buf, size_t len, size_t *pos, const char *frame)
{
	size_t n = strlen(frame);

	if (*pos + 1 + n + 1 > len)
		return -ENOSPC;
	if (*pos)
		buf[(*pos)++] = ';';
	memcpy(buf + *pos, frame, n);
	*pos += n;
	buf[*pos] = '\0';
	return 0;
}

/* A frame-pointer walk through code built without frame pointers reads
 * garbage off the stack: a run of addresses in no known object (clone3
 * followed by 115 of them).  One "[unknown]" stands for such a run, as in
 * perf_events' cpu.folded, so the flame graph keeps its height. */
static int append_frames(char *buf, size_t len, size_t *pos, pid_t pid, const uint64_t *ips,
			 size_t from, size_t to, int kernel, fd_frame_fn frame, void *arg,
			 uint64_t *folded_away)
{
	char name[512], next[512];

	for (size_t i = to; i-- > from;) {
		frame(arg, pid, ips[i], kernel, name, sizeof(name));
		if (strncmp(name, UNKNOWN, sizeof(UNKNOWN) - 1) == 0) {
			size_t run = 0; /* more of them right inside this one */

			while (i - run > from) {
				frame(arg, pid, ips[i - run - 1], kernel, next, sizeof(next));
				if (strncmp(next, UNKNOWN, sizeof(UNKNOWN) - 1) != 0)
					break;
				run++;
			}
			if (folded_away)
				*folded_away += run;
			i -= run;
		}
		tr_sanitize_name(name, sizeof(name), name);
		if (append(buf, len, pos, name) < 0)
			return -ENOSPC;
	}
	return 0;
}

size_t fd_tracing_frames(pid_t pid, const uint64_t *kips, size_t nk, fd_frame_fn frame,
			 void *arg)
{
	char name[512];
	size_t kstart = 0;

	/* Up to the last such frame among the first few, as the BPF
	 * program's own frame may have no name. */
	for (size_t i = 0; i < nk && i < TRACING_FRAMES_MAX; i++) {
		frame(arg, pid, kips[i], 1, name, sizeof(name));
		if (is_tracing_frame(name))
			kstart = i + 1;
	}
	return kstart;
}

int fd_build_line(char *buf, size_t len, const char *comm, pid_t pid, const char *tcomm,
		  pid_t tid, const uint64_t *uips, size_t nu, const uint64_t *kips, size_t nk,
		  int ustack_lost, int kstack_lost, fd_frame_fn frame, void *arg,
		  uint64_t *folded_away)
{
	size_t pos = 0, kstart;
	int root;

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	root = tr_folded_root(buf, len, comm, pid, tcomm, tid);
	if (root < 0)
		return -ENOSPC;
	pos = (size_t)root;

	if (ustack_lost && append(buf, len, &pos, "[user stack lost]") < 0)
		return -ENOSPC;
	if (append_frames(buf, len, &pos, pid, uips, 0, nu, 0, frame, arg, folded_away) < 0)
		return -ENOSPC;

	/* Leave out the innermost frames of the tracing machinery (the same in
	 * every stack). */
	kstart = fd_tracing_frames(pid, kips, nk, frame, arg);
	if (kstack_lost && append(buf, len, &pos, "[kernel stack lost]") < 0)
		return -ENOSPC;
	if (append_frames(buf, len, &pos, pid, kips, kstart, nk, 1, frame, arg, folded_away) < 0)
		return -ENOSPC;
	return (int)pos;
}
