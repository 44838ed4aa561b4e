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

struct tracerig_stacks {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	enum tracerig_time what;
	unsigned flags;
	char folded_name[ENTRY_NAME_MAX], svg_name[ENTRY_NAME_MAX], pb_name[ENTRY_NAME_MAX];
	char *title;
	struct tr_folded *set;
	char *line;
	/* pprof, when wanted: the builder, its locations' cache, and room
	 * for one stack's location ids (leaf first). */
	struct pp_builder *pp;
	struct pp_frames *frames;
	uint64_t *locs;
	size_t cap_locs;
	/* The last process's cgroup label: stacks come process by process. */
	pid_t cgroup_pid;
	const char *cgroup;
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

/* On-CPU samples: a sample and the nanoseconds it stands for (the period
 * set once every sample is in); off-CPU intervals: their nanoseconds. */
static struct pp_builder *pprof_for(enum tracerig_time what)
{
	static const struct pp_value_type offcpu = { "offcpu", "nanoseconds" };
	static const struct pp_value_type sampled[2] = { { "samples", "count" },
							 { "cpu", "nanoseconds" } };

	if (what == TRACERIG_TIME_ONCPU)
		return pp_new(sampled, 2, sampled[1], 0);
	return pp_new(&offcpu, 1, offcpu, 0);
}

struct tracerig_stacks *tr_stacks_open(const struct tracerig_services *svc,
				       struct tracerig_ctx *ctx, const char *name,
				       enum tracerig_time what, const char *title, unsigned flags,
				       int pprof)
{
	struct tracerig_stacks *s;

	if (!name || !title || (what != TRACERIG_TIME_ONCPU && what != TRACERIG_TIME_OFFCPU)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->svc = svc;
	s->ctx = ctx;
	s->what = what;
	s->flags = flags;
	s->cgroup_pid = -1;
	if (!entry_names(s, name)) {
		free(s);
		errno = EINVAL;
		return NULL;
	}
	s->title = strdup(title);
	s->set = tr_folded_new();
	s->line = malloc(LINE_MAX_LEN);
	if (pprof) {
		s->pp = pprof_for(what);
		s->frames = s->pp ? pp_frames_new(s->pp, svc, ctx) : NULL;
	}
	if (!s->title || !s->set || !s->line || (pprof && !s->frames)) {
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
	free(s->line);
	tr_folded_free(s->set);
	free(s->title);
	free(s);
}

/* The frame's name as every output writes it. */
static const char *name_of(struct tracerig_stacks *s, const struct tracerig_stack *st,
			   uint64_t addr, int kernel)
{
	const char *name;
	/* On any failure the service still names the frame ("[unknown]"). */
	int ret = s->svc->symbols->frame_name(s->ctx, st->pid, addr, kernel, st->time_ns, &name,
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

	if (*pos + 1 + n + 1 > LINE_MAX_LEN) {
		*pos = LINE_MAX_LEN; /* full: nothing more goes in */
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
			  const uint64_t *ips, size_t n, int kernel)
{
	int in_run = 0;

	for (size_t i = n; i-- > 0;) {
		const char *name = name_of(s, st, ips[i], kernel);

		if (is_unknown(name) && in_run) {
			s->folded_away++;
			continue;
		}
		in_run = is_unknown(name);
		append(s, pos, name);
	}
}

/* "comm-PID;tcomm-TID;[user stack lost];user...;[kernel stack lost];kernel..." */
static size_t fold(struct tracerig_stacks *s, const struct tracerig_stack *st)
{
	int root = tr_folded_root(s->line, LINE_MAX_LEN, st->comm, st->pid, st->tcomm, st->tid);
	size_t pos = root < 0 ? 0 : (size_t)root;

	if (st->flags & TRACERIG_STACK_USER_LOST)
		append(s, &pos, USER_LOST);
	append_frames(s, &pos, st, st->user, st->n_user, 0);
	if (st->flags & TRACERIG_STACK_KERNEL_LOST)
		append(s, &pos, KERNEL_LOST);
	append_frames(s, &pos, st, st->kernel, st->n_kernel, 1);
	return pos < LINE_MAX_LEN ? pos : strnlen(s->line, LINE_MAX_LEN);
}

static int add_locations(struct tracerig_stacks *s, size_t *n, const struct tracerig_stack *st,
			 const uint64_t *ips, size_t n_ips, int kernel)
{
	for (size_t i = 0; i < n_ips; i++) {
		/* Named from the services' cache, as in NAME.folded. */
		const char *name = name_of(s, st, ips[i], kernel);
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
	if (pid != s->cgroup_pid) {
		s->cgroup_pid = pid;
		s->cgroup = pid > 0 ? tracerig_internal(s->svc)->process_cgroup(s->ctx, pid) : NULL;
	}
	return s->cgroup;
}

/* The stack as a pprof sample: leaf first, labelled by process, thread,
 * the thread's name and, where known, the cgroup (the container). */
static int add_sample(struct tracerig_stacks *s, const struct tracerig_stack *st)
{
	size_t n = 0, need = st->n_kernel + st->n_user + 2;
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
	if (add_locations(s, &n, st, st->kernel, st->n_kernel, 1) < 0 ||
	    ((st->flags & TRACERIG_STACK_KERNEL_LOST) && add_marker(s, &n, KERNEL_LOST) < 0) ||
	    add_locations(s, &n, st, st->user, st->n_user, 0) < 0 ||
	    ((st->flags & TRACERIG_STACK_USER_LOST) && add_marker(s, &n, USER_LOST) < 0))
		return -ENOMEM;
	return pp_add(s->pp, s->locs, n, s->what == TRACERIG_TIME_ONCPU ? values : values + 1,
		      labels, cgroup ? 4 : 3);
}

int tr_stacks_add(struct tracerig_stacks *s, const struct tracerig_stack *stacks, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct tracerig_stack *st = &stacks[i];
		size_t len = fold(s, st);
		int ret = tr_folded_add(s->set, s->line, len,
					s->what == TRACERIG_TIME_ONCPU ? st->count : st->ns);

		if (ret == 0 && s->pp)
			ret = add_sample(s, st);
		if (ret < 0)
			return ret;
		s->count += st->count;
		s->ns += st->ns;
	}
	return 0;
}

const struct tr_folded *tr_stacks_folded(const struct tracerig_stacks *s)
{
	return s->set;
}

void tr_stacks_stats(const struct tracerig_stacks *s, struct tracerig_stacks_stats *out)
{
	*out = (struct tracerig_stacks_stats){
		.stacks = tr_folded_count(s->set),
		.count = s->count,
		.ns = s->ns,
		.folded_away = s->folded_away,
		.unnamed = s->unnamed,
		.ns_per_sample = s->count ? (s->ns + s->count / 2) / s->count : 0,
	};
}

static void log_error(struct tracerig_stacks *s, const char *what, const char *name, int err)
{
	s->svc->run->log(s->ctx, TRACERIG_LOG_ERROR, "cannot %s %s: %s", what, name,
			 strerror(-err));
}

/* NAME.folded: on-CPU samples as counted, off-CPU time in microseconds. */
static int write_folded(struct tracerig_stacks *s, struct tracerig_archive *ar)
{
	FILE *f = s->svc->archive->fopen(ar, s->folded_name);
	int ret;

	if (!f) {
		ret = -errno;
		log_error(s, "create", s->folded_name, ret);
		return ret;
	}
	ret = tr_folded_write(s->set, f, s->what == TRACERIG_TIME_ONCPU ? 1 : 1000);
	if (fclose(f) != 0 && !ret)
		ret = -errno;
	if (ret < 0)
		log_error(s, "write", s->folded_name, ret);
	return ret;
}

static void offer_to_wall(struct tracerig_stacks *s, const struct tracerig_stacks_stats *st)
{
	uint64_t ns_per_unit = s->what == TRACERIG_TIME_ONCPU ? st->ns_per_sample : 1000;
	int ret;

	if (!(s->flags & TRACERIG_STACKS_WALL) || !st->count || !ns_per_unit)
		return;
	ret = tracerig_internal(s->svc)->folded_view(s->ctx, s->folded_name, s->what, ns_per_unit);
	if (ret < 0)
		s->svc->run->log(s->ctx, TRACERIG_LOG_ERROR,
				 "cannot offer %s to the wall-clock view: %s", s->folded_name,
				 strerror(-ret));
}

int tr_stacks_write(struct tracerig_stacks *s, struct tracerig_archive *ar,
		    struct tracerig_stacks_stats *out)
{
	struct tracerig_stacks_stats st;
	int ret;

	tr_stacks_stats(s, &st);
	if (out)
		*out = st;
	ret = write_folded(s, ar);
	if (ret < 0)
		return ret;
	ret = tr_flamegraph_entry(ar, s->folded_name, s->svg_name, s->title,
				  s->what == TRACERIG_TIME_ONCPU ? "samples" : "us");
	if (ret < 0) {
		log_error(s, "render", s->svg_name, ret);
		return ret;
	}
	if (s->pp) {
		if (s->what == TRACERIG_TIME_ONCPU)
			pp_set_period(s->pp, (int64_t)st.ns_per_sample);
		ret = pp_stage_entry(s->svc, s->ctx, ar, s->pb_name, s->pp);
		if (ret < 0)
			return ret;
	}
	offer_to_wall(s, &st);
	return 0;
}
