/* offcpu.pb.gz (oncpu.pb.gz) from the same intervals (samples) and frames
 * as offcpu.folded (oncpu.folded). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "folded.h"
#include "lib/ppframes.h"
#include "lib/pprof.h"
#include "profile.h"

struct op_profile {
	struct pp_builder *b;
	int samples; /* values: samples and nanoseconds, else nanoseconds */
	struct pp_frames *frames;
	struct fr_namer *namer;
	uint64_t *locs; /* leaf first: kernel frames, markers, user frames */
	size_t cap;
};

struct op_profile *op_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			  size_t depth, struct fr_namer *namer, uint64_t period_ns)
{
	static const struct pp_value_type ns = { "offcpu", "nanoseconds" };
	static const struct pp_value_type sampled[2] = { { "samples", "count" },
							 { "cpu", "nanoseconds" } };
	struct op_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->namer = namer;
	p->samples = period_ns != 0;
	p->cap = 2 * depth + 2; /* and the two lost-stack markers */
	p->locs = calloc(p->cap, sizeof(*p->locs));
	/* An interval stands for its own length: no sampling period. */
	if (p->samples)
		p->b = pp_new(sampled, 2, sampled[1], (int64_t)period_ns);
	else
		p->b = pp_new(&ns, 1, ns, 0);
	p->frames = p->b ? pp_frames_new(p->b, svc, ctx) : NULL;
	if (!p->locs || !p->frames) {
		op_free(p);
		return NULL;
	}
	return p;
}

void op_free(struct op_profile *p)
{
	if (!p)
		return;
	pp_frames_free(p->frames);
	pp_free(p->b);
	free(p->locs);
	free(p);
}

/* Appends the frames ips[from, to) (innermost first) to p->locs at *n. */
static int add_frames(struct op_profile *p, size_t *n, pid_t pid, const uint64_t *ips, size_t from,
		      size_t to, int kernel)
{
	for (size_t i = from; i < to && *n < p->cap; i++) {
		uint64_t loc = pp_frames_location(p->frames, pid, ips[i], kernel, NULL, 0);

		if (!loc)
			return -ENOMEM;
		p->locs[(*n)++] = loc;
	}
	return 0;
}

static int add_marker(struct op_profile *p, size_t *n, const char *name)
{
	uint64_t loc = pp_frames_marker(p->frames, name);

	if (!loc)
		return -ENOMEM;
	if (*n < p->cap)
		p->locs[(*n)++] = loc;
	return 0;
}

int op_add(struct op_profile *p, pid_t pid, pid_t tid, const char *tcomm, const char *cgroup,
	   const uint64_t *uips, size_t nu, int ulost, const uint64_t *kips, size_t nk, int klost,
	   uint64_t samples, uint64_t ns)
{
	/* The tracing machinery's frames stay out, as in offcpu.folded. */
	size_t kstart = fd_tracing_frames(pid, kips, nk, fr_name, p->namer), n = 0;
	int64_t values[2] = { (int64_t)samples, (int64_t)ns };
	struct pp_label labels[] = {
		{ .key = "pid", .num = pid },
		{ .key = "tid", .num = tid },
		{ .key = "comm", .str = tcomm },
		{ .key = "cgroup", .str = cgroup },
	};

	if (add_frames(p, &n, pid, kips, kstart, nk, 1) < 0 ||
	    (klost && add_marker(p, &n, "[kernel stack lost]") < 0) ||
	    add_frames(p, &n, pid, uips, 0, nu, 0) < 0 ||
	    (ulost && add_marker(p, &n, "[user stack lost]") < 0))
		return -ENOMEM;
	/* The cgroup label only where it is known. */
	return pp_add(p->b, p->locs, n, p->samples ? values : values + 1, labels, cgroup ? 4 : 3);
}

struct pp_builder *op_builder(struct op_profile *p)
{
	return p->b;
}
