/* The on-CPU sampler's perf.data.txt (see script.h). */
#define _GNU_SOURCE
#include "script.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/probe.h"
#include "lib/sanitize.h"
#include "lib/vec.h"

/* A stack read from the stacks map once: its frames in the pool. */
struct cached_stack {
	uint64_t id; /* 0: a free slot (ids below OFFCPU_STACK_FIRST_ID are never kept) */
	uint32_t first, n;
};

struct sc_script {
	FILE *f;
	uint64_t kept, not_kept;
	int write_failed; /* the first failure's errno, said at flush */
};

/* Reading back: the stacks already read, and where their frames are. */
struct stack_cache {
	struct cached_stack *slots;
	size_t cap, n;
	uint64_t *pool;
	size_t pool_len, pool_cap;
};

static int slot_used(const void *slot)
{
	return ((const struct cached_stack *)slot)->id != 0;
}

static uint64_t slot_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return tr_u64_hash(((const struct cached_stack *)slot)->id);
}

static int slot_is(const void *slot, const void *key)
{
	return ((const struct cached_stack *)slot)->id == *(const uint64_t *)key;
}

static const struct tr_probe_ops stack_ops = {
	.size = sizeof(struct cached_stack),
	.first = 256,
	.used = slot_used,
	.hash = slot_hash,
};

/* O_TMPFILE: the file has no name, so the packager never sees it and a
 * killed tracerig leaves nothing behind.  Where the file system cannot,
 * a named one unlinked at once. */
static int unnamed_file(const char *dir)
{
	char path[4096];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd >= 0 ? fd : -errno;
	if (snprintf(path, sizeof(path), "%s/.oncpu-samples.XXXXXX", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	(void)unlink(path);
	return fd;
}

int sc_new(const char *dir, struct sc_script **out)
{
	struct sc_script *s = calloc(1, sizeof(*s));
	int fd;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	fd = unnamed_file(dir);
	if (fd < 0) {
		free(s);
		return fd;
	}
	s->f = fdopen(fd, "w+");
	if (!s->f) {
		int ret = -errno;

		close(fd);
		free(s);
		return ret;
	}
	*out = s;
	return 0;
}

void sc_free(struct sc_script *s)
{
	if (!s)
		return;
	if (s->f)
		fclose(s->f);
	free(s);
}

void sc_add(void *script, const struct offcpu_sample *sample)
{
	struct sc_script *s = script;

	/* A full disk loses the script's samples, not the aggregation's. */
	if (s->write_failed || fwrite_unlocked(sample, sizeof(*sample), 1, s->f) != 1) {
		if (!s->write_failed)
			s->write_failed = errno ? errno : EIO;
		s->not_kept++;
		return;
	}
	s->kept++;
}

/* The frames of stack `id`, read from the map once: *n of them at
 * c->pool + *first, an offset since the pool moves as it grows; *n = 0
 * for none (OFFCPU_STACK_NONE, _LOST, an id gone from the map). */
static void stack_frames(struct stack_cache *c, struct oc_collector *oc, uint64_t id, size_t *first,
			 size_t *n)
{
	uint64_t ips[OFFCPU_MAX_DEPTH];
	struct cached_stack *grown;
	size_t i, depth = oc_stack_depth(oc);
	uint64_t *pool;

	*first = *n = 0;
	if (id < OFFCPU_STACK_FIRST_ID)
		return;
	if (c->cap) {
		i = tr_probe_find(c->slots, c->cap, &stack_ops, tr_u64_hash(id), slot_is, &id);
		if (c->slots[i].id) {
			*first = c->slots[i].first;
			*n = c->slots[i].n;
			return;
		}
	}
	*n = oc_stack(oc, id, ips, depth < OFFCPU_MAX_DEPTH ? depth : OFFCPU_MAX_DEPTH);
	grown = tr_probe_grow(c->slots, &c->cap, c->n + 1, &stack_ops, NULL);
	pool = grown ? tr_vec_grow(c->pool, &c->pool_cap, c->pool_len + *n + 1, sizeof(*pool), 1024)
		     : NULL;
	if (grown)
		c->slots = grown;
	if (!pool) {
		*n = 0; /* out of memory: the sample goes without these frames */
		return;
	}
	c->pool = pool;
	i = tr_probe_find(c->slots, c->cap, &stack_ops, tr_u64_hash(id), NULL, NULL);
	c->slots[i] = (struct cached_stack){ .id = id,
					     .first = (uint32_t)c->pool_len,
					     .n = (uint32_t)*n };
	c->n++;
	memcpy(c->pool + c->pool_len, ips, *n * sizeof(*ips));
	*first = c->pool_len;
	c->pool_len += *n;
}

/* "\t%16llx name (object)": perf script's frame line, from the core's
 * answer (strings under the sanitize rule already). */
static void write_frames(FILE *out, const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			 const struct offcpu_sample *s, const uint64_t *ips, size_t n, int kernel)
{
	for (size_t i = 0; i < n; i++) {
		struct tracerig_symbol sym = { 0 };
		const char *name = NULL;

		(void)svc->symbols->frame_name(ctx, (pid_t)s->tgid, ips[i], kernel, s->time_ns,
					       &name, &sym);
		fprintf(out, "\t%16" PRIx64 " %s (%s)\n", ips[i], sym.name ? sym.name : "[unknown]",
			sym.dso ? sym.dso : "[unknown]");
	}
}

/* One sample: "comm  pid/tid [cpu] secs.usecs: period cpu-clock:" as perf
 * script prints it (perf_events' perf.data.txt has the same columns), the
 * kernel's frames, the user ones, a blank line. */
static void write_sample(FILE *out, struct stack_cache *c, struct oc_collector *oc,
			 const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			 const struct offcpu_sample *s, struct sc_stats *st)
{
	char comm[OFFCPU_COMM_LEN + 1];
	size_t kfirst, nk, ufirst, nu;

	memcpy(comm, s->tcomm, OFFCPU_COMM_LEN);
	comm[OFFCPU_COMM_LEN] = '\0';
	/* The thread names itself: one with a newline would add lines. */
	tr_sanitize_name(comm, sizeof(comm), comm);
	/* Both read before either is used: reading the second may move the
	 * pool the first is in. */
	stack_frames(c, oc, s->kstack, &kfirst, &nk);
	stack_frames(c, oc, s->ustack, &ufirst, &nu);
	if ((s->kstack >= OFFCPU_STACK_FIRST_ID && !nk) ||
	    (s->ustack >= OFFCPU_STACK_FIRST_ID && !nu))
		st->stacks_gone++;
	fprintf(out, "%s %5u/%-5u [%03u] %5" PRIu64 ".%06" PRIu64 ": %10" PRIu64 " cpu-clock: \n",
		comm[0] ? comm : ":", s->tgid, s->pid, s->cpu, (uint64_t)s->time_ns / 1000000000u,
		(uint64_t)s->time_ns % 1000000000u / 1000u, (uint64_t)s->period_ns);
	write_frames(out, svc, ctx, s, nk ? c->pool + kfirst : NULL, nk, 1);
	write_frames(out, svc, ctx, s, nu ? c->pool + ufirst : NULL, nu, 0);
	fputc_unlocked('\n', out);
	st->samples++;
}

int sc_write(struct sc_script *s, struct oc_collector *oc, const struct tracerig_services *svc,
	     struct tracerig_ctx *ctx, FILE *out, struct sc_stats *st)
{
	struct stack_cache cache = { 0 };
	struct offcpu_sample sample;
	int ret = 0;

	memset(st, 0, sizeof(*st));
	st->not_kept = s->not_kept;
	st->keep_errno = s->write_failed;
	if (fflush(s->f) != 0 || fseek(s->f, 0, SEEK_SET) != 0)
		return -errno;
	while (fread_unlocked(&sample, sizeof(sample), 1, s->f) == 1) {
		write_sample(out, &cache, oc, svc, ctx, &sample, st);
		if (ferror_unlocked(out)) {
			ret = -(errno ? errno : EIO);
			break;
		}
	}
	if (!ret && ferror_unlocked(s->f))
		ret = -(errno ? errno : EIO);
	free(cache.slots);
	free(cache.pool);
	return ret;
}
