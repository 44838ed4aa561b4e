/* Folded stacks: building, summing, writing, and the wall-clock merge. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "lib/sanitize.h"
#include "lib/strmap.h"

struct fd_stacks {
	struct tr_strmap lines; /* line -> summed weight in ns */
};

struct fd_stacks *fd_stacks_new(void)
{
	return calloc(1, sizeof(struct fd_stacks));
}

void fd_stacks_free(struct fd_stacks *s)
{
	if (!s)
		return;
	tr_strmap_free(&s->lines);
	free(s);
}

size_t fd_stacks_count(const struct fd_stacks *s)
{
	return s->lines.n;
}

int fd_stacks_add(struct fd_stacks *s, const char *line, uint64_t weight_ns)
{
	struct tr_strmap_entry *e = tr_strmap_get(&s->lines, line, strlen(line));

	if (!e)
		return -ENOMEM;
	e->value += weight_ns;
	return 0;
}

int fd_stacks_add_marked(struct fd_stacks *dst, const struct fd_stacks *src, const char *mark)
{
	const struct tr_strmap_entry *l;

	for (size_t i = 0; (l = tr_strmap_next(&src->lines, &i));) {
		size_t len = strlen(l->key) + strlen(mark) + 2;
		char *text = malloc(len);
		int ret;

		if (!text)
			return -ENOMEM;
		snprintf(text, len, "%s;%s", l->key, mark);
		ret = fd_stacks_add(dst, text, l->value);
		free(text);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int fd_stacks_write(const struct fd_stacks *s, FILE *out)
{
	const struct tr_strmap_entry **v;
	int ret = 0;

	if (!s->lines.n)
		return 0;
	v = tr_strmap_sorted(&s->lines);
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->lines.n; i++) {
		uint64_t us = (v[i]->value + 500) / 1000;

		if (us && fprintf(out, "%s %" PRIu64 "\n", v[i]->key, us) < 0) {
			ret = -EIO;
			break;
		}
	}
	free(v);
	return ret;
}


/* Frames of the tracing machinery at the inner end of every kernel stack. */
#define TRACING_FRAMES_MAX 6
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
 * perf_events' cpu.folded, so the flame graph keeps its height; a single
 * one keeps its address. */
static int append_frames(char *buf, size_t len, size_t *pos, pid_t pid, const uint64_t *ips,
			 size_t from, size_t to, int kernel, fd_frame_fn frame, void *arg,
			 uint64_t *folded_away)
{
	char name[512], next[512];

	for (size_t i = to; i-- > from;) {
		frame(arg, pid, ips[i], kernel, name, sizeof(name));
		if (strncmp(name, "0x", 2) == 0) {
			size_t run = 0; /* more of them right inside this one */

			while (i - run > from) {
				frame(arg, pid, ips[i - run - 1], kernel, next, sizeof(next));
				if (strncmp(next, "0x", 2) != 0)
					break;
				run++;
			}
			if (run) {
				snprintf(name, sizeof(name), "[unknown]%s", kernel ? "_[k]" : "");
				if (folded_away)
					*folded_away += run;
				i -= run;
			}
		}
		tr_sanitize_name(name, sizeof(name), name);
		if (append(buf, len, pos, name) < 0)
			return -ENOSPC;
	}
	return 0;
}

int fd_build_line(char *buf, size_t len, const char *comm, pid_t pid,
		  const uint64_t *uips, size_t nu, const uint64_t *kips, size_t nk,
		  int ustack_lost, int kstack_lost, fd_frame_fn frame, void *arg,
		  uint64_t *folded_away)
{
	char name[512];
	size_t pos = 0, kstart = 0;

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	if (comm && *comm)
		snprintf(name, sizeof(name), "%s", comm);
	else
		snprintf(name, sizeof(name), "[pid %d]", (int)pid);
	tr_sanitize_name(name, sizeof(name), name);
	if (append(buf, len, &pos, name) < 0)
		return -ENOSPC;

	if (ustack_lost && append(buf, len, &pos, "[user stack lost]") < 0)
		return -ENOSPC;
	if (append_frames(buf, len, &pos, pid, uips, 0, nu, 0, frame, arg, folded_away) < 0)
		return -ENOSPC;

	/* Leave out the innermost frames of the tracing machinery (the same in
	 * every stack): up to the last such frame among the first few, as the
	 * BPF program's own frame may have no name. */
	for (size_t i = 0; i < nk && i < TRACING_FRAMES_MAX; i++) {
		frame(arg, pid, kips[i], 1, name, sizeof(name));
		if (is_tracing_frame(name))
			kstart = i + 1;
	}
	if (kstack_lost && append(buf, len, &pos, "[kernel stack lost]") < 0)
		return -ENOSPC;
	if (append_frames(buf, len, &pos, pid, kips, kstart, nk, 1, frame, arg, folded_away) < 0)
		return -ENOSPC;
	return (int)pos;
}

/* "comm-1234" -> 1234 and the length of "comm"; -1 when no PID suffix. */
static pid_t process_frame_pid(const char *frame, size_t len, size_t *name_len)
{
	size_t i = len;
	long pid = 0, mul = 1;

	while (i > 0 && isdigit((unsigned char)frame[i - 1])) {
		if (len - i >= 9)
			return -1;
		pid += (frame[i - 1] - '0') * mul;
		mul *= 10;
		i--;
	}
	if (i == len || i < 2 || (frame[i - 1] != '-' && frame[i - 1] != '/'))
		return -1;
	*name_len = i - 1;
	return (pid_t)pid;
}

long fd_merge_oncpu(struct fd_stacks *s, FILE *in, uint64_t ns_per_sample,
		    fd_pid_filter_fn filter, void *arg)
{
	char *line = NULL, *out = NULL;
	size_t cap = 0, out_cap = 0;
	long added = 0;
	ssize_t n;
	int ret = 0;

	while ((n = getline(&line, &cap, in)) > 0) {
		char *sp, *end, *semi;
		unsigned long long samples;
		size_t first_len, name_len, need;
		pid_t pid;

		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		sp = strrchr(line, ' ');
		if (!sp || sp == line || line[0] == '#')
			continue;
		errno = 0;
		samples = strtoull(sp + 1, &end, 10);
		if (errno || *end || end == sp + 1 || !samples)
			continue;
		*sp = '\0';
		semi = strchr(line, ';');
		first_len = semi ? (size_t)(semi - line) : strlen(line);
		name_len = first_len;
		pid = process_frame_pid(line, first_len, &name_len);
		if (pid >= 0 && filter && !filter(arg, pid))
			continue;
		need = strlen(line) + sizeof(FD_ONCPU_MARK) + 2;
		if (need > out_cap) {
			char *grown = realloc(out, need);

			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			out = grown;
			out_cap = need;
		}
		snprintf(out, out_cap, "%.*s%s;%s", (int)name_len, line, line + first_len,
			 FD_ONCPU_MARK);
		ret = fd_stacks_add(s, out, (uint64_t)samples * ns_per_sample);
		if (ret < 0)
			break;
		added++;
	}
	if (!ret && ferror(in))
		ret = -EIO;
	free(line);
	free(out);
	return ret < 0 ? ret : added;
}
