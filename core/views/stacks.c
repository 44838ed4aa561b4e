/* The stack sink: stacks as addresses in, folded stacks, a flame graph
 * and a pprof profile out (see stacks.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/archive/staging.h"
#include "flamegraph.h"
#include "lib/folded.h"
#include "lib/ppframes.h"
#include "lib/pprof.h"
#include "lib/vec.h"
#include "stacks.h"

/* Room for one folded line: a deeper stack loses its innermost frames. */
#define LINE_MAX_LEN ((size_t)64 * 1024)
#define ENTRY_NAME_MAX 256
/* What frame_name calls a frame in no known object (its kernel form
 * has "_[k]" after it). */
#define UNKNOWN "[unknown]"
#define USER_LOST "[user stack lost]"
#define KERNEL_LOST "[kernel stack lost]"
/* Where a stack cut at the callchain limit begins: its outermost frames
 * are missing. */
#define CUT "[cut at max_stack]"

/* Roots and cgroups are kept per thread (process) for the stacks that
 * follow: samples come thread by thread. */
#define MEMO_SLOTS 64
#define ROOT_MAX 160

struct root_memo {
	pid_t pid, tid; /* tid 0 with len 0: empty */
	int len;
	char comm[ROOT_MAX / 2], tcomm[ROOT_MAX / 2];
	char root[ROOT_MAX];
};

/* A thread's stacks often fold to the line its last one did: repeats are
 * counted here and handed to the set once per run, rather than hashed and
 * looked up again one by one. */
struct pending {
	pid_t tid;
	char *line;
	size_t len, cap;
	uint64_t weight; /* 0: empty */
};

struct cgroup_memo {
	pid_t pid; /* 0: empty */
	const char *path;
};

struct tracerig_stacks {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	enum tracerig_time what;
	unsigned flags;
	uint64_t ns_per_sample; /* the spec's: 0 for the mean */
	tr_stacks_offer_fn offer;
	char folded_name[ENTRY_NAME_MAX], svg_name[ENTRY_NAME_MAX], pb_name[ENTRY_NAME_MAX];
	char *title;
	struct tr_folded *set; /* NULL with TRACERIG_STACKS_NO_FOLDED */
	char *line;
	int line_full; /* a frame did not fit: the line ends before it */
	struct root_memo roots[MEMO_SLOTS];
	struct pending pending[MEMO_SLOTS];
	/* pprof, when wanted: the builder, its locations' cache, and room
	 * for one stack's location ids (leaf first). */
	struct pp_builder *pp;
	struct pp_frames *frames;
	uint64_t *locs;
	size_t cap_locs;
	struct cgroup_memo cgroups[MEMO_SLOTS];
	uint64_t count, ns, folded_away, unnamed;
};

static int entry_names(struct tracerig_stacks *s, const char *name)
{
	int a = snprintf(s->folded_name, sizeof(s->folded_name), "%s.folded", name);
	int b = snprintf(s->svg_name, sizeof(s->svg_name), "%s.svg", name);
	int c = snprintf(s->pb_name, sizeof(s->pb_name), "%s.pb.gz", name);

	return a > 0 && b > 0 && c > 0 && (size_t)c < sizeof(s->pb_name) &&
	       tr_entry_name_ok(s->pb_name);
}

/* On-CPU samples: a sample and what it stands for (the spec's column);
 * off-CPU intervals: their nanoseconds. */
static struct pp_builder *pprof_for(const struct tracerig_stacks_spec *spec)
{
	static const struct pp_value_type offcpu = { "offcpu", "nanoseconds" };
	struct pp_value_type sampled[2] = {
		{ "samples", "count" },
		{ spec->value_type ? spec->value_type : "cpu",
		  spec->value_unit ? spec->value_unit : "nanoseconds" },
	};

	if (spec->what == TRACERIG_TIME_ONCPU)
		return pp_new(sampled, 2, sampled[1], (int64_t)spec->period);
	return pp_new(&offcpu, 1, offcpu, 0);
}

static int spec_ok(const struct tracerig_stacks_spec *spec)
{
	return spec && spec->name && spec->title &&
	       (spec->what == TRACERIG_TIME_ONCPU || spec->what == TRACERIG_TIME_OFFCPU);
}

/* What the lines and the samples may take in memory: beyond it they wait
 * in the staging directory (lib/folded.h, lib/pprof.h). */
static int set_limit(struct tracerig_stacks *s, size_t limit)
{
	const char *dir;

	if (!limit)
		return 0;
	dir = s->svc->archive->staging_dir(s->ctx);
	if ((s->set && tr_folded_spill(s->set, dir, limit) < 0) ||
	    (s->pp && pp_spill(s->pp, dir, limit) < 0))
		return -ENOMEM;
	return 0;
}

struct tracerig_stacks *tr_stacks_open(const struct tracerig_services *svc,
				       struct tracerig_ctx *ctx,
				       const struct tracerig_stacks_spec *spec, int pprof,
				       tr_stacks_offer_fn offer)
{
	struct tracerig_stacks *s;
	int folded = spec && !(spec->flags & TRACERIG_STACKS_NO_FOLDED);

	if (!spec_ok(spec)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->svc = svc;
	s->ctx = ctx;
	s->what = spec->what;
	s->flags = spec->flags;
	s->ns_per_sample = spec->ns_per_sample;
	s->offer = offer;
	if (!entry_names(s, spec->name)) {
		free(s);
		errno = EINVAL;
		return NULL;
	}
	s->title = strdup(spec->title);
	s->set = folded ? tr_folded_new() : NULL;
	s->line = folded ? malloc(LINE_MAX_LEN) : NULL;
	if (pprof) {
		s->pp = pprof_for(spec);
		s->frames = s->pp ? pp_frames_new(s->pp, svc, ctx) : NULL;
	}
	if (!s->title || (folded && (!s->set || !s->line)) || (pprof && !s->frames) ||
	    set_limit(s, spec->memory_limit) < 0) {
		tr_stacks_close(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void tr_stacks_close(struct tracerig_stacks *s)
{
	if (!s)
		return;
	pp_frames_free(s->frames);
	pp_free(s->pp);
	free(s->locs);
	for (size_t i = 0; i < MEMO_SLOTS; i++)
		free(s->pending[i].line);
	free(s->line);
	tr_folded_free(s->set);
	free(s->title);
	free(s);
}

/* The frame's name as every output writes it: the source's, when it
 * gave it, else the service's. */
static const char *name_of(struct tracerig_stacks *s, const struct tracerig_stack *st,
			   const char *const *names, size_t i, const uint64_t *ips, int kernel)
{
	const char *name;
	int ret;

	if (names)
		return names[i];
	/* On any failure the service still names the frame ("[unknown]"). */
	ret = s->svc->symbols->frame_name(s->ctx, st->pid, ips[i], kernel, st->time_ns, &name,
					  NULL);
	if (ret == -ENOENT || ret == -ENODATA)
		s->unnamed++;
	return name;
}

static int is_unknown(const char *name)
{
	return strncmp(name, UNKNOWN, sizeof(UNKNOWN) - 1) == 0;
}

/* Appends ";frame" (no ';' at the start); a frame that does not fit is
 * left out, with those after it. */
static void append(struct tracerig_stacks *s, size_t *pos, const char *frame)
{
	size_t n = strlen(frame);

	if (s->line_full || *pos + 1 + n + 1 > LINE_MAX_LEN) {
		s->line_full = 1; /* nothing more goes in: the line stays as it is */
		return;
	}
	if (*pos)
		s->line[(*pos)++] = ';';
	memcpy(s->line + *pos, frame, n);
	*pos += n;
}

/* Frames outermost first.  A frame-pointer walk through code built
 * without frame pointers reads garbage off the stack: a run of addresses
 * in no known object (clone3 followed by 115 of them).  One "[unknown]"
 * stands for such a run, so the flame graph keeps its height. */
static void append_frames(struct tracerig_stacks *s, size_t *pos, const struct tracerig_stack *st,
			  const uint64_t *ips, const char *const *names, size_t n, int kernel)
{
	int in_run = 0;

	for (size_t i = n; i-- > 0;) {
		const char *name = name_of(s, st, names, i, ips, kernel);

		if (is_unknown(name) && in_run) {
			s->folded_away++;
			continue;
		}
		in_run = is_unknown(name);
		append(s, pos, name);
	}
}

/* "comm-PID;tcomm-TID" (lib/folded.h), made again only when the
 * thread's names change. */
static void append_root(struct tracerig_stacks *s, size_t *pos, const struct tracerig_stack *st)
{
	struct root_memo *m = &s->roots[(uint32_t)st->tid % MEMO_SLOTS];
	const char *comm = st->comm ? st->comm : "", *tcomm = st->tcomm ? st->tcomm : "";
	int len;

	if (m->len > 0 && m->pid == st->pid && m->tid == st->tid && strcmp(m->comm, comm) == 0 &&
	    strcmp(m->tcomm, tcomm) == 0) {
		memcpy(s->line, m->root, (size_t)m->len);
		*pos = (size_t)m->len;
		return;
	}
	len = tr_folded_root(s->line, LINE_MAX_LEN, st->comm, st->pid, st->tcomm, st->tid);
	*pos = len < 0 ? 0 : (size_t)len;
	m->len = 0;
	if (len < 0 || (size_t)len > sizeof(m->root) || strlen(comm) >= sizeof(m->comm) ||
	    strlen(tcomm) >= sizeof(m->tcomm))
		return; /* made, not kept */
	memcpy(m->root, s->line, (size_t)len);
	strcpy(m->comm, comm);
	strcpy(m->tcomm, tcomm);
	m->pid = st->pid;
	m->tid = st->tid;
	m->len = len;
}

/* "root;[cut at max_stack];[user stack lost];user...;[kernel stack lost];kernel..." */
static size_t fold(struct tracerig_stacks *s, const struct tracerig_stack *st)
{
	size_t pos;

	s->line_full = 0;
	append_root(s, &pos, st);
	if (st->flags & TRACERIG_STACK_CUT)
		append(s, &pos, CUT);
	if (st->flags & TRACERIG_STACK_USER_LOST)
		append(s, &pos, USER_LOST);
	append_frames(s, &pos, st, st->user, st->user_names, st->n_user, 0);
	if (st->flags & TRACERIG_STACK_KERNEL_LOST)
		append(s, &pos, KERNEL_LOST);
	append_frames(s, &pos, st, st->kernel, st->kernel_names, st->n_kernel, 1);
	return pos;
}

static int add_locations(struct tracerig_stacks *s, size_t *n, const struct tracerig_stack *st,
			 const uint64_t *ips, const char *const *names, size_t n_ips, int kernel)
{
	for (size_t i = 0; i < n_ips; i++) {
		/* Named as in NAME.folded. */
		const char *name = name_of(s, st, names, i, ips, kernel);
		uint64_t loc =
			pp_frames_location(s->frames, st->pid, ips[i], kernel, name, strlen(name));

		if (!loc)
			return -ENOMEM;
		s->locs[(*n)++] = loc;
	}
	return 0;
}

static int add_marker(struct tracerig_stacks *s, size_t *n, const char *name)
{
	uint64_t loc = pp_frames_marker(s->frames, name);

	if (!loc)
		return -ENOMEM;
	s->locs[(*n)++] = loc;
	return 0;
}

static const char *cgroup_of(struct tracerig_stacks *s, pid_t pid)
{
	struct cgroup_memo *m = &s->cgroups[(uint32_t)pid % MEMO_SLOTS];

	if (pid <= 0)
		return NULL;
	if (m->pid != pid) {
		m->pid = pid;
		m->path = tracerig_internal(s->svc)->process_cgroup(s->ctx, pid);
	}
	return m->path;
}

/* Where the process model stands for the stack's process: a user
 * frame's location holds for that generation of its address space. */
static void follow_generation(struct tracerig_stacks *s, const struct tracerig_stack *st)
{
	uint32_t gen;

	if (st->n_user && tracerig_internal(s->svc)->frame_generation(s->ctx, st->pid, &gen) == 0)
		pp_frames_generation(s->frames, gen);
}

/* The stack as a pprof sample: leaf first, labelled by process, thread,
 * the thread's name and, where known, the cgroup (the container). */
static int add_sample(struct tracerig_stacks *s, const struct tracerig_stack *st)
{
	size_t n = 0, need = st->n_kernel + st->n_user + 3;
	int64_t values[2] = { (int64_t)st->count, (int64_t)st->ns };
	const char *cgroup = cgroup_of(s, st->pid);
	struct pp_label labels[] = {
		{ .key = "pid", .num = st->pid },
		{ .key = "tid", .num = st->tid },
		{ .key = "comm", .str = st->tcomm ? st->tcomm : "" },
		{ .key = "cgroup", .str = cgroup },
	};
	uint64_t *grown = tr_vec_grow(s->locs, &s->cap_locs, need, sizeof(*grown), 256);

	if (!grown)
		return -ENOMEM;
	s->locs = grown;
	follow_generation(s, st);
	if (add_locations(s, &n, st, st->kernel, st->kernel_names, st->n_kernel, 1) < 0 ||
	    ((st->flags & TRACERIG_STACK_KERNEL_LOST) && add_marker(s, &n, KERNEL_LOST) < 0) ||
	    add_locations(s, &n, st, st->user, st->user_names, st->n_user, 0) < 0 ||
	    ((st->flags & TRACERIG_STACK_USER_LOST) && add_marker(s, &n, USER_LOST) < 0) ||
	    ((st->flags & TRACERIG_STACK_CUT) && add_marker(s, &n, CUT) < 0))
		return -ENOMEM;
	return pp_add(s->pp, s->locs, n, s->what == TRACERIG_TIME_ONCPU ? values : values + 1,
		      labels, cgroup ? 4 : 3);
}

static int flush_pending(struct tracerig_stacks *s, struct pending *pd)
{
	int ret = pd->weight ? tr_folded_add(s->set, pd->line, pd->len, pd->weight) : 0;

	pd->weight = 0;
	return ret;
}

/* Every line counted so far, in the set. */
static int flush_all(struct tracerig_stacks *s)
{
	int ret = 0;

	for (size_t i = 0; s->set && i < MEMO_SLOTS; i++) {
		int r = flush_pending(s, &s->pending[i]);

		if (r < 0 && !ret)
			ret = r;
	}
	return ret;
}

/* Counts the line built in s->line (len bytes) for a stack of `tid`. */
static int count_line(struct tracerig_stacks *s, pid_t tid, size_t len, uint64_t weight)
{
	struct pending *pd = &s->pending[(uint32_t)tid % MEMO_SLOTS];
	int ret;

	if (pd->weight && pd->tid == tid && pd->len == len && memcmp(pd->line, s->line, len) == 0) {
		pd->weight += weight;
		return 0;
	}
	ret = flush_pending(s, pd);
	if (ret < 0)
		return ret;
	if (len > pd->cap) {
		char *grown = realloc(pd->line, len);

		if (!grown)
			return tr_folded_add(s->set, s->line, len, weight);
		pd->line = grown;
		pd->cap = len;
	}
	memcpy(pd->line, s->line, len);
	pd->len = len;
	pd->tid = tid;
	pd->weight = weight;
	return 0;
}

int tr_stacks_add(struct tracerig_stacks *s, const struct tracerig_stack *stacks, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct tracerig_stack *st = &stacks[i];
		uint64_t weight = s->what == TRACERIG_TIME_ONCPU ? st->count : st->ns;
		int ret = 0;

		/* A weight of 0 (an interval rounded away) adds no line. */
		if (s->set && weight)
			ret = count_line(s, st->tid, fold(s, st), weight);
		if (ret == 0 && s->pp)
			ret = add_sample(s, st);
		if (ret < 0)
			return ret;
		s->count += st->count;
		s->ns += st->ns;
	}
	return 0;
}

const struct tr_folded *tr_stacks_folded(struct tracerig_stacks *s)
{
	return flush_all(s) < 0 ? NULL : s->set;
}

struct pp_builder *tr_stacks_pprof(struct tracerig_stacks *s)
{
	return s->pp;
}

void tr_stacks_stats(struct tracerig_stacks *s, struct tracerig_stacks_stats *out)
{
	size_t runs = 0, spills = 0;
	uint64_t spill_bytes = 0;
	int folded_err, pp_err;

	/* Out of memory here, the set misses a run of repeats: write says so. */
	(void)flush_all(s);
	folded_err = s->set ? tr_folded_spilled(s->set, &runs) : 0;
	pp_err = s->pp ? pp_spilled(s->pp, &spills, &spill_bytes) : 0;

	*out = (struct tracerig_stacks_stats){
		.stacks = s->set  ? tr_folded_count(s->set)
			  : s->pp ? pp_sample_count(s->pp)
				  : 0,
		.count = s->count,
		.ns = s->ns,
		.folded_away = s->folded_away,
		.unnamed = s->unnamed,
		.ns_per_sample = s->count ? (s->ns + s->count / 2) / s->count : 0,
		.folded_runs = runs,
		.pprof_spills = spills,
		.pprof_spill_bytes = spill_bytes,
		.spill_err = folded_err < 0 ? folded_err : pp_err,
	};
}

static void log_error(struct tracerig_stacks *s, const char *what, const char *name, int err)
{
	s->svc->run->log(s->ctx, TRACERIG_LOG_ERROR, "cannot %s %s: %s", what, name,
			 strerror(-err));
}

/* A view's entry, created to be written once, front to back, and never
 * read back: the core deflates it on another CPU as it grows (-ENOTSUP:
 * streaming is off, or a flight snapshot) and frees what it deflated, so
 * that packaging has little of it left to do.  A .NET service's
 * cpu.folded is tens of MiB; its flame graph, a few. */
static FILE *create_view(struct tracerig_stacks *s, struct tracerig_archive *ar, const char *name)
{
	const struct tracerig_internal_services *in = tracerig_internal(s->svc);
	FILE *f = s->svc->archive->fopen(ar, name);

	if (!f) {
		int err = errno;

		log_error(s, "create", name, -err);
		errno = err;
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	if (in->archive_append_only && in->archive_append_only(s->ctx, name, 0) == 0)
		(void)in->archive_release(s->ctx, name, UINT64_MAX);
	return f;
}

/* NAME.folded: on-CPU samples as counted, off-CPU time in microseconds. */
static int write_folded(struct tracerig_stacks *s, struct tracerig_archive *ar)
{
	FILE *f = create_view(s, ar, s->folded_name);
	int ret;

	if (!f)
		return -errno;
	ret = tr_folded_write(s->set, f, s->what == TRACERIG_TIME_ONCPU ? 1 : 1000);
	if (fclose(f) != 0 && !ret)
		ret = -errno;
	if (ret < 0)
		log_error(s, "write", s->folded_name, ret);
	return ret;
}

/* The lines and the profile, written, go to the wall-clock view as they
 * are in memory. */
static void offer_to_wall(struct tracerig_stacks *s, const struct tracerig_stacks_stats *st)
{
	/* The lines count on-CPU samples, off-CPU nanoseconds. */
	struct tr_wall_view v = {
		.name = s->folded_name,
		.what = s->what,
		.lines = s->set,
		.ns_per_unit = s->what == TRACERIG_TIME_OFFCPU ? 1
			       : s->ns_per_sample              ? s->ns_per_sample
							       : st->ns_per_sample,
		.profile = s->pp,
	};
	int ret;

	if (!(s->flags & TRACERIG_STACKS_WALL) || !s->offer || !st->count || !v.ns_per_unit)
		return;
	s->set = NULL;
	s->pp = NULL;
	ret = s->offer(s->ctx, &v);
	if (ret < 0)
		s->svc->run->log(s->ctx, TRACERIG_LOG_ERROR,
				 "cannot offer %s to the wall-clock view: %s", s->folded_name,
				 strerror(-ret));
}

/* NAME.folded and NAME.svg. */
static int write_views(struct tracerig_stacks *s, struct tracerig_archive *ar)
{
	int ret = write_folded(s, ar);
	FILE *svg;

	if (ret < 0)
		return ret;
	svg = create_view(s, ar, s->svg_name);
	if (!svg)
		return -errno;
	ret = tr_flamegraph_write_set(s->set, s->what == TRACERIG_TIME_ONCPU ? 1 : 1000, svg,
				      s->title, s->what == TRACERIG_TIME_ONCPU ? "samples" : "us");
	if (fclose(svg) != 0 && !ret)
		ret = -errno;
	if (ret < 0)
		log_error(s, "render", s->svg_name, ret);
	return ret;
}

int tr_stacks_write(struct tracerig_stacks *s, struct tracerig_archive *ar,
		    struct tracerig_stacks_stats *out)
{
	struct tracerig_stacks_stats st;
	int ret = flush_all(s);

	if (ret < 0) {
		log_error(s, "count the stacks of", s->folded_name, ret);
		return ret;
	}
	tr_stacks_stats(s, &st);
	if (out)
		*out = st;
	if (s->set) {
		ret = write_views(s, ar);
		if (ret < 0)
			return ret;
	}
	if (s->pp) {
		if (s->what == TRACERIG_TIME_ONCPU && (s->flags & TRACERIG_STACKS_MEAN_PERIOD))
			pp_set_period(s->pp, (int64_t)st.ns_per_sample);
		ret = pp_stage_entry(s->svc, s->ctx, ar, s->pb_name, s->pp);
		if (ret < 0)
			return ret;
	}
	if (s->set)
		offer_to_wall(s, &st);
	return 0;
}
