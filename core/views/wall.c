/* The wall-clock view, joined by the core from the views stack sinks
 * hand over (their lines and profiles, in memory): on-CPU samples turned
 * into time at the period they were taken at, off-CPU time as measured,
 * both under the same root ("comm-PID;tcomm-TID", lib/folded.h) and
 * marked at the leaf. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/archive/staging.h"
#include "core/log.h"
#include "flamegraph.h"
#include "lib/folded.h"
#include "lib/pprof.h"
#include "lib/vec.h"
#include "wall.h"

#define WALL_ENTRY "wall.folded"
#define WALL_SVG "wall.svg"
#define WALL_PPROF "wall.pb.gz"

struct view {
	char *who, *name;
	struct tr_wall_view v;         /* v.name: name */
	struct tracerig_window window; /* when has_window */
	int has_window;
};

/* Declared from the sources' driver threads, read after the last flush. */
struct tr_wall_views {
	pthread_mutex_t lock;
	struct view *v;
	size_t n, cap;
};

struct tr_wall_views *tr_wall_views_new(void)
{
	struct tr_wall_views *views = calloc(1, sizeof(*views));

	if (views)
		pthread_mutex_init(&views->lock, NULL);
	return views;
}

static void view_free(struct tr_wall_view *v)
{
	tr_folded_free(v->lines);
	pp_free(v->profile);
	*v = (struct tr_wall_view){ 0 };
}

int tr_wall_take(struct tr_wall_views *views, const char *who, struct tr_wall_view *taken,
		 const struct tracerig_window *window)
{
	struct view *grown, v = { .v = *taken };
	const char *source = who ? who : "?", *name = taken->name ? taken->name : "?";

	*taken = (struct tr_wall_view){ 0 };
	if (!v.v.lines || !v.v.ns_per_unit ||
	    (v.v.what != TRACERIG_TIME_ONCPU && v.v.what != TRACERIG_TIME_OFFCPU)) {
		view_free(&v.v);
		return -EINVAL;
	}
	if (window) {
		v.window = *window;
		v.has_window = 1;
	}
	pthread_mutex_lock(&views->lock);
	/* One source of on-CPU time: two (perf_events' samples and ebpf's
	 * sampler) would count the same CPU time twice.  The first offered
	 * (perf_events flushes first) stays. */
	for (size_t i = 0; v.v.what == TRACERIG_TIME_ONCPU && i < views->n; i++) {
		if (views->v[i].v.what == TRACERIG_TIME_ONCPU &&
		    strcmp(views->v[i].who, source) != 0) {
			tr_info("wall view: on-CPU time from %s's %s; %s's %s is not added to it "
				"(the same CPU time twice)",
				views->v[i].who, views->v[i].name, source, name);
			pthread_mutex_unlock(&views->lock);
			view_free(&v.v);
			return 0;
		}
	}
	v.who = strdup(source);
	v.name = strdup(name);
	v.v.name = v.name;
	grown = v.who && v.name
			? tr_vec_grow(views->v, &views->cap, views->n + 1, sizeof(*grown), 4)
			: NULL;
	if (grown) {
		views->v = grown;
		views->v[views->n++] = v;
	}
	pthread_mutex_unlock(&views->lock);
	if (!grown) {
		free(v.who);
		free(v.name);
		view_free(&v.v);
		return -ENOMEM;
	}
	return 0;
}

/* The views handed over, taken: a source frozen in flush past its deadline
 * may still hand one over while the step runs, into the next list. */
struct views {
	struct view *v;
	size_t n;
};

static struct views take_views(struct tr_wall_views *views)
{
	struct views taken;

	pthread_mutex_lock(&views->lock);
	taken.v = views->v;
	taken.n = views->n;
	views->v = NULL;
	views->n = views->cap = 0;
	pthread_mutex_unlock(&views->lock);
	return taken;
}

static void free_views(struct views *vs)
{
	for (size_t i = 0; i < vs->n; i++) {
		free(vs->v[i].who);
		free(vs->v[i].name);
		view_free(&vs->v[i].v);
	}
	free(vs->v);
}

void tr_wall_views_free(struct tr_wall_views *views)
{
	struct views left;

	if (!views)
		return;
	left = take_views(views);
	free_views(&left);
	pthread_mutex_destroy(&views->lock);
	free(views);
}

struct adding {
	struct tr_folded *wall;
	const char *mark;
	uint64_t ns_per_unit;
	tr_wall_filter_fn filter;
	void *arg;
	char *out;
	size_t out_cap;
	long added;
};

static int add_line(void *arg, const char *line, uint64_t weight)
{
	struct adding *a = arg;
	struct tr_folded_rootinfo root;
	size_t need = strlen(line) + strlen(a->mark) + 2;
	int n;

	tr_folded_root_parse(line, &root);
	if (root.pid >= 0 && a->filter && !a->filter(a->arg, root.pid))
		return 0;
	if (need > a->out_cap) {
		char *grown = realloc(a->out, need);

		if (!grown)
			return -ENOMEM;
		a->out = grown;
		a->out_cap = need;
	}
	n = snprintf(a->out, a->out_cap, "%s;%s", line, a->mark);
	a->added++;
	return tr_folded_add(a->wall, a->out, (size_t)n, weight * a->ns_per_unit);
}

long tr_wall_add_view(struct tr_folded *wall, const struct tr_wall_view *v,
		      tr_wall_filter_fn filter, void *arg)
{
	struct adding a = {
		.wall = wall,
		.mark = v->what == TRACERIG_TIME_ONCPU ? TR_WALL_ONCPU : TR_WALL_OFFCPU,
		.ns_per_unit = v->ns_per_unit,
		.filter = filter,
		.arg = arg,
	};
	int ret = tr_folded_each(v->lines, add_line, &a);

	free(a.out);
	return ret < 0 ? ret : a.added;
}

/* The processes the session traced, sorted: NULL for the whole machine. */
struct traced {
	pid_t *pids;
	size_t n;
};

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int traced_accepts(void *arg, long pid)
{
	const struct traced *t = arg;
	pid_t p = (pid_t)pid;

	return bsearch(&p, t->pids, t->n, sizeof(pid_t), cmp_pid) != NULL;
}

/* -p, a command or a cgroup select processes: the targets and those the
 * sources observed (their children, the cgroup's members).  A line of any
 * other process is one a source saw around them (a system-wide on-CPU
 * sampler next to an off-CPU tracer filtered to a cgroup). */
static int traced_load(struct traced *tr, const struct tracerig_targets *t,
		       struct tr_wall_observed observed)
{
	tr->pids = NULL;
	tr->n = 0;
	if (t->system_wide && !t->cgroup)
		return 0;
	if (!observed.pids)
		return -ENOMEM;
	tr->pids = calloc(observed.n + t->n_pids + 1, sizeof(pid_t));
	if (!tr->pids)
		return -ENOMEM;
	if (observed.n)
		memcpy(tr->pids, observed.pids, observed.n * sizeof(pid_t));
	tr->n = observed.n;
	for (size_t i = 0; i < t->n_pids; i++)
		tr->pids[tr->n++] = t->pids[i];
	if (t->command_pid > 0)
		tr->pids[tr->n++] = t->command_pid;
	qsort(tr->pids, tr->n, sizeof(pid_t), cmp_pid);
	return 0;
}

/* Each view's lines into wall, then freed: the profiles are joined next. */
static int add_views(struct tr_folded *wall, struct views *vs, struct traced *tr, long added[2])
{
	for (size_t i = 0; i < vs->n; i++) {
		struct view *v = &vs->v[i];
		long n = tr_wall_add_view(wall, &v->v, tr->pids ? traced_accepts : NULL, tr);

		tr_folded_free(v->v.lines);
		v->v.lines = NULL;
		if (n < 0) {
			tr_err("%s: cannot add %s to " WALL_ENTRY ": %s", v->who, v->name,
			       strerror((int)-n));
			return (int)n;
		}
		added[v->v.what == TRACERIG_TIME_ONCPU ? 0 : 1] += n;
		tr_log(TRACERIG_LOG_DEBUG, NULL,
		       WALL_ENTRY ": %ld lines of %s (%s, %" PRIu64 " ns per unit)", n, v->name,
		       v->v.what == TRACERIG_TIME_ONCPU ? "on-CPU" : "off-CPU", v->v.ns_per_unit);
	}
	return 0;
}

static int write_folded(struct tracerig_archive *ar, const struct tr_folded *wall)
{
	FILE *f = tr_staging_fopen_entry(ar, WALL_ENTRY);
	int ret;

	if (!f)
		return -errno;
	ret = tr_folded_write(wall, f, 1000); /* ns -> us */
	if (fclose(f) != 0 && !ret)
		ret = -errno;
	return ret;
}

/* Which samples of a view's profile wall.pb.gz keeps: as its lines. */
static int traced_keeps(void *arg, int64_t pid)
{
	return traced_accepts(arg, (long)pid);
}

/* One view's samples, under a leaf saying on or off CPU, with the
 * mappings (object, build id, file offset) and addresses of their
 * locations: time as measured where the profile has nanoseconds
 * (cpu.pb.gz's periods, offcpu.pb.gz's intervals), else its first column
 * at the view's worth.  0 or a negative errno. */
static int add_view(struct pp_builder *b, const struct view *v, struct traced *tr)
{
	const struct pp_builder *p = v->v.profile;
	uint64_t leaf = pp_location(
		b, 0, 0, v->v.what == TRACERIG_TIME_ONCPU ? TR_WALL_ONCPU : TR_WALL_OFFCPU);
	int column = pp_column(p, "nanoseconds");

	if (!leaf)
		return -ENOMEM;
	return pp_merge(b, p, column >= 0 ? (size_t)column : 0,
			column >= 0 ? 1 : (int64_t)v->v.ns_per_unit, leaf,
			tr->pids ? traced_keeps : NULL, tr);
}

/* wall.pb.gz: each view's samples from its source's profile (so its
 * locations keep their mappings and build ids), dated by the session's
 * window or the flight snapshot's range; none when a view came without a
 * profile (pprof off).  0 or a negative errno. */
static int write_pprof(struct tracerig_archive *ar, const struct views *vs, struct traced *tr,
		       struct tr_wall_pprof *pb, const struct tracerig_window *range)
{
	static const struct pp_value_type wall = { "wall", "nanoseconds" };
	struct pp_builder *b = pp_new(&wall, 1, wall, 0);
	FILE *f = NULL;
	int ret = b ? 0 : -ENOMEM;

	for (size_t i = 0; i < vs->n; i++)
		if (!vs->v[i].v.profile) {
			tr_log(TRACERIG_LOG_DEBUG, NULL,
			       "no " WALL_PPROF ": %s's %s has no profile", vs->v[i].who,
			       vs->v[i].name);
			pp_free(b);
			return 0;
		}
	for (size_t i = 0; i < vs->n && ret == 0; i++)
		ret = add_view(b, &vs->v[i], tr);
	/* A flight snapshot is dated by its own range; a recording by its
	 * sources' window. */
	if (ret == 0 && range)
		pp_set_time(b, range->start_real_ns, (int64_t)(range->end_ns - range->start_ns));
	else
		for (size_t i = 0; i < vs->n && ret == 0; i++)
			if (vs->v[i].has_window) {
				const struct tracerig_window *w = &vs->v[i].window;

				pp_set_time(b, w->start_real_ns, (int64_t)(w->end_ns - w->start_ns));
				break;
			}
	if (ret == 0) {
		f = tr_staging_fopen_entry(ar, WALL_PPROF);
		ret = f ? pp_write_gz(b, f) : -errno;
	}
	if (f && fclose(f) != 0 && !ret)
		ret = -errno;
	if (ret == 0) {
		*pb = (struct tr_wall_pprof){ 1, pp_sample_count(b), (uint64_t)pp_total(b, 0) };
		tr_log(TRACERIG_LOG_DEBUG, NULL, WALL_PPROF ": %zu samples of %zu views",
		       pp_sample_count(b), vs->n);
	} else if (f) {
		tr_staging_remove_entry(ar, WALL_PPROF);
	}
	pp_free(b);
	return ret;
}

int tr_wall_write(struct tr_wall_views *views, struct tracerig_archive *ar,
		  const struct tracerig_targets *t, struct tr_wall_observed observed,
		  struct tr_wall_pprof *pb)
{
	return tr_wall_write_dated(views, ar, t, observed, pb, NULL);
}

int tr_wall_write_dated(struct tr_wall_views *views, struct tracerig_archive *ar,
			const struct tracerig_targets *t, struct tr_wall_observed observed,
			struct tr_wall_pprof *pb, const struct tracerig_window *range)
{
	struct tr_folded *wall = NULL;
	struct traced tr = { NULL, 0 };
	long added[2] = { 0, 0 };
	struct views vs = take_views(views);
	int have[2] = { 0, 0 }, ret;

	for (size_t i = 0; i < vs.n; i++)
		have[vs.v[i].v.what == TRACERIG_TIME_ONCPU ? 0 : 1] = 1;
	if (!have[0] || !have[1]) {
		if (vs.n)
			tr_log(TRACERIG_LOG_DEBUG, NULL, "no %s view: no " WALL_ENTRY,
			       have[0] ? "off-CPU" : "on-CPU");
		free_views(&vs);
		return 0;
	}
	wall = tr_folded_new();
	ret = wall ? traced_load(&tr, t, observed) : -ENOMEM;
	if (ret < 0)
		tr_err("out of memory joining " WALL_ENTRY);
	else
		ret = add_views(wall, &vs, &tr, added); /* logs its failures */
	if (ret == 0) {
		ret = write_folded(ar, wall);
		if (ret < 0) {
			tr_err("cannot write " WALL_ENTRY ": %s", strerror(-ret));
			tr_staging_remove_entry(ar, WALL_ENTRY);
		}
	}
	if (ret == 0) {
		ret = tr_flamegraph_stage(ar, wall, 1000, WALL_SVG,
					  "Wall clock: on-CPU and off-CPU time", "us");
		if (ret < 0)
			tr_err("cannot render " WALL_SVG ": %s", strerror(-ret));
		else
			tr_log(TRACERIG_LOG_INFO, NULL, WALL_ENTRY ": %ld on-CPU and %ld off-CPU "
			       "stacks", added[0], added[1]);
	}
	if (ret == 0 && pb) {
		ret = write_pprof(ar, &vs, &tr, pb, range);
		if (ret < 0)
			tr_err("cannot write " WALL_PPROF ": %s", strerror(-ret));
	}
	free(tr.pids);
	tr_folded_free(wall);
	free_views(&vs);
	return ret;
}
