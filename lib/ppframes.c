/* pprof locations of frames, with their mappings, cached per frame. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "pprof.h"
#include "ppframes.h"

/* Samples repeat their frames: a location costs a symbolizer_mapping call
 * (the symbolizer's lock) and two interned keys in the builder, a cache
 * hit neither.  Direct-mapped; an entry of an older generation is stale
 * for user frames (kernel frames do not move). */
#define LOC_CACHE 4096
#define NAME_MAX_LEN 4096

struct loc_cached {
	uint64_t addr;
	uint64_t location; /* 0: empty */
	pid_t pid;         /* -1 for kernel frames */
	uint32_t gen;
};

struct pp_frames {
	struct pp_builder *b;
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	uint32_t gen;
	struct loc_cached cache[LOC_CACHE];
	char name[NAME_MAX_LEN];
};

struct pp_frames *pp_frames_new(struct pp_builder *b, const struct tracerig_services *svc,
				struct tracerig_ctx *ctx)
{
	struct pp_frames *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->b = b;
	f->svc = svc;
	f->ctx = ctx;
	return f;
}

void pp_frames_free(struct pp_frames *f)
{
	free(f);
}

void pp_frames_generation(struct pp_frames *f, uint32_t gen)
{
	f->gen = gen;
}

/* The name as frame_name gives it, "_[k]" taken off a kernel frame's, in
 * f->name. */
static const char *frame_name(struct pp_frames *f, pid_t pid, uint64_t addr, int kernel,
			      const char *name, size_t len)
{
	if (!name) {
		/* On any failure the service still names the frame ("[unknown]"). */
		(void)f->svc->symbols->frame_name(f->ctx, pid, addr, kernel, 0, &name, NULL);
		len = strlen(name);
	}
	if (kernel && len >= 4 && memcmp(name + len - 4, "_[k]", 4) == 0)
		len -= 4;
	if (len >= sizeof(f->name))
		len = sizeof(f->name) - 1;
	memcpy(f->name, name, len);
	f->name[len] = '\0';
	return f->name;
}

uint64_t pp_frames_location(struct pp_frames *f, pid_t pid, uint64_t addr, int kernel,
			    const char *name, size_t name_len)
{
	pid_t key_pid = kernel ? -1 : pid;
	uint64_t h = tr_u64_hash(addr ^ ((uint64_t)(uint32_t)key_pid << 40));
	struct loc_cached *c = &f->cache[(h >> 32) % LOC_CACHE];
	struct tracerig_frame_mapping m;
	uint64_t mapping = 0, address = addr;

	if (c->location && c->addr == addr && c->pid == key_pid && (kernel || c->gen == f->gen))
		return c->location;
	if (tracerig_internal(f->svc)->symbolizer_mapping(f->ctx, pid, addr, kernel, &m) == 0) {
		mapping = pp_mapping(f->b, m.start, m.limit, m.pgoff, m.path,
				     m.build_id[0] ? m.build_id : NULL);
		if (!mapping)
			return 0;
		address = pp_mapped_address(f->b, mapping, m.start, addr);
	} else {
		/* No mapping (a process gone before its maps were read, an
		 * address in nothing mapped: a frame-pointer chain through
		 * code built without them).  Its address, different in every
		 * process, would make a location per frame of each, without
		 * bound over a long system-wide session: one per name. */
		address = 0;
	}
	*c = (struct loc_cached){
		.addr = addr, .pid = key_pid, .gen = f->gen,
		.location = pp_location(f->b, mapping, address,
					frame_name(f, pid, addr, kernel, name, name_len)),
	};
	return c->location;
}

uint64_t pp_frames_marker(struct pp_frames *f, const char *name)
{
	return pp_location(f->b, 0, 0, name);
}

int pp_stage_entry(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
		   struct tracerig_archive *ar, const char *name, struct pp_builder *b)
{
	struct tracerig_window w;
	uint64_t t0 = svc->run->clock_ns();
	long bytes = -1;
	FILE *f;
	int ret;

	/* A services table without it (a test or bench harness's own): no date. */
	if (tracerig_internal(svc)->archive_window &&
	    tracerig_internal(svc)->archive_window(ctx, ar, &w) == 0)
		pp_set_time(b, w.start_real_ns, (int64_t)(w.end_ns - w.start_ns));
	f = svc->archive->fopen(ar, name);
	if (!f) {
		ret = -errno;
		svc->run->log(ctx, TRACERIG_LOG_ERROR, "cannot create %s: %s", name,
			      strerror(-ret));
		return ret;
	}
	ret = pp_write_gz(b, f);
	if (!ret)
		bytes = ftell(f);
	if (fclose(f) != 0 && !ret)
		ret = -errno;
	if (ret < 0) {
		svc->run->log(ctx, TRACERIG_LOG_ERROR, "cannot write %s: %s", name, strerror(-ret));
		return ret;
	}
	/* What pprof adds to the end of collection, for the benchmarks. */
	svc->run->log(ctx, TRACERIG_LOG_DEBUG, "%s: %zu samples, %ld bytes, written in %.1f ms",
		      name, pp_sample_count(b), bytes, (double)(svc->run->clock_ns() - t0) / 1e6);
	ret = tracerig_internal(svc)->pprof_entry(ctx, name, pp_sample_count(b),
						  (uint64_t)pp_total(b, 0));
	if (ret < 0)
		svc->run->log(ctx, TRACERIG_LOG_ERROR, "cannot list %s in the manifest: %s", name,
			      strerror(-ret));
	return ret;
}
