/* The wall-clock view, joined by the core from the folded views sources
 * declare: on-CPU samples turned into time at the period they were taken
 * at, off-CPU time as measured, both under the same root
 * ("comm-PID;tcomm-TID", lib/folded.h) and marked at the leaf. */
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
/* Frames of a folded line wall.pb.gz keeps (the outermost): as convert. */
#define MAX_DEPTH 1024

struct view {
	char *who, *name;
	enum tracerig_time what;
	uint64_t ns_per_unit;
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

int tr_wall_declare(struct tr_wall_views *views, const char *who, const char *folded_name,
		    enum tracerig_time what, uint64_t ns_per_unit,
		    const struct tracerig_window *window)
{
	struct view *grown, v = { .what = what, .ns_per_unit = ns_per_unit };

	if (!folded_name || !tr_entry_name_ok(folded_name) || !ns_per_unit ||
	    (what != TRACERIG_TIME_ONCPU && what != TRACERIG_TIME_OFFCPU))
		return -EINVAL;
	if (window) {
		v.window = *window;
		v.has_window = 1;
	}
	pthread_mutex_lock(&views->lock);
	/* One source of on-CPU time: two (perf_events' samples and ebpf's
	 * sampler) would count the same CPU time twice.  The first declared
	 * (perf_events flushes first) stays. */
	for (size_t i = 0; what == TRACERIG_TIME_ONCPU && i < views->n; i++) {
		if (views->v[i].what == TRACERIG_TIME_ONCPU &&
		    strcmp(views->v[i].who, who ? who : "?") != 0) {
			tr_info("wall view: on-CPU time from %s's %s; %s's %s is not added to it "
				"(the same CPU time twice)",
				views->v[i].who, views->v[i].name, who ? who : "?", folded_name);
			pthread_mutex_unlock(&views->lock);
			return 0;
		}
	}
	v.who = strdup(who ? who : "?");
	v.name = strdup(folded_name);
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
		return -ENOMEM;
	}
	return 0;
}

/* The declared views, taken: a source frozen in flush past its deadline
 * may still declare while the step runs, into the next list. */
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

/* One line of a folded view: its weight cut off, its root parsed; 0 when
 * it is none (a comment, no weight). */
static int parse_view_line(char *line, ssize_t n, unsigned long long *units,
			   struct tr_folded_rootinfo *root)
{
	char *sp, *end;

	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	/* The weight follows the last space: names may hold spaces. */
	sp = strrchr(line, ' ');
	if (!sp || sp == line || line[0] == '#')
		return 0;
	errno = 0;
	*units = strtoull(sp + 1, &end, 10);
	if (errno || *end || end == sp + 1 || !*units)
		return 0;
	*sp = '\0';
	tr_folded_root_parse(line, root);
	return 1;
}

long tr_wall_add_view(struct tr_folded *wall, FILE *in, enum tracerig_time what,
		      uint64_t ns_per_unit, tr_wall_filter_fn filter, void *arg)
{
	const char *mark = what == TRACERIG_TIME_ONCPU ? TR_WALL_ONCPU : TR_WALL_OFFCPU;
	char *line = NULL, *out = NULL;
	size_t cap = 0, out_cap = 0;
	long added = 0;
	ssize_t n;
	int ret = 0;

	while ((n = getline(&line, &cap, in)) > 0) {
		struct tr_folded_rootinfo root;
		unsigned long long units;
		size_t need;

		if (!parse_view_line(line, n, &units, &root))
			continue;
		if (root.pid >= 0 && filter && !filter(arg, root.pid))
			continue;
		need = strlen(line) + strlen(mark) + 2;
		if (need > out_cap) {
			char *grown = realloc(out, need);

			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			out = grown;
			out_cap = need;
		}
		n = snprintf(out, out_cap, "%s;%s", line, mark);
		ret = tr_folded_add(wall, out, (size_t)n, (uint64_t)units * ns_per_unit);
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

static int add_views(struct tr_folded *wall, const struct views *vs,
		     struct tracerig_archive *ar, struct traced *tr, long added[2])
{
	char path[4096];

	for (size_t i = 0; i < vs->n; i++) {
		const struct view *v = &vs->v[i];
		long n;
		FILE *in;

		snprintf(path, sizeof(path), "%s/%s", ar->dir, v->name);
		in = fopen(path, "re");
		if (!in) {
			int ret = -errno;

			tr_err("%s: cannot read %s for " WALL_ENTRY ": %s", v->who, v->name,
			       strerror(-ret));
			return ret;
		}
		n = tr_wall_add_view(wall, in, v->what, v->ns_per_unit,
				     tr->pids ? traced_accepts : NULL, tr);
		fclose(in);
		if (n < 0) {
			tr_err("%s: cannot read %s for " WALL_ENTRY ": %s", v->who, v->name,
			       strerror((int)-n));
			return (int)n;
		}
		added[v->what == TRACERIG_TIME_ONCPU ? 0 : 1] += n;
		tr_log(TRACERIG_LOG_DEBUG, NULL, WALL_ENTRY ": %ld lines of %s (%s, %" PRIu64
		       " ns per unit)", n, v->name, v->what == TRACERIG_TIME_ONCPU ? "on-CPU" :
		       "off-CPU", v->ns_per_unit);
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

/* "cpu.folded" -> "cpu.pb.gz": where a source that writes pprof puts the
 * profile of a folded view (plugin.h, pprof_wanted).  0, or -1 when the
 * view's name is not NAME.folded. */
static int pprof_beside(const char *folded, char *buf, size_t len)
{
	size_t n = strlen(folded);

	if (n <= 7 || strcmp(folded + n - 7, ".folded") != 0 ||
	    (size_t)snprintf(buf, len, "%.*s.pb.gz", (int)(n - 7), folded) >= len)
		return -1;
	return 0;
}

/* The view's samples from the profile its source staged beside it, with
 * the mappings (object, build id, file offset) and addresses of its
 * locations: time as measured where the profile has nanoseconds (cpu.pb.gz's
 * periods, offcpu.pb.gz's intervals), else its first column at the view's
 * worth.  1 when merged, 0 when there is no such profile to read (the view
 * is then taken from its folded lines), or -ENOMEM. */
static int add_view_pprof(struct pp_builder *b, struct tracerig_archive *ar,
			  const struct view *v, struct traced *tr, uint64_t leaf)
{
	struct pp_profile *p = NULL;
	char name[4096], path[8192];
	int column, ret;

	if (pprof_beside(v->name, name, sizeof(name)) < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", ar->dir, name);
	ret = pp_read_gz(path, &p);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		if (ret != -ENOMEM)
			tr_log(TRACERIG_LOG_WARN, NULL, WALL_PPROF ": cannot read %s of %s (%s): "
			       "its frames from %s, without mappings", name, v->who, strerror(-ret),
			       v->name);
		return ret == -ENOMEM ? ret : 0;
	}
	column = pp_profile_column(p, "nanoseconds");
	ret = pp_merge(b, p, column >= 0 ? (size_t)column : 0,
		       column >= 0 ? 1 : (int64_t)v->ns_per_unit, leaf,
		       tr->pids ? traced_keeps : NULL, tr);
	pp_profile_free(p);
	return ret < 0 ? ret : 1;
}

/* The view's samples from its folded lines, for a source that staged no
 * profile beside it: frames are names only (kernel frames in the kernel's
 * mapping), labelled from the root.  0 or a negative errno. */
static int add_view_folded(struct pp_builder *b, FILE *in, const struct view *v,
			   struct traced *tr, uint64_t leaf)
{
	uint64_t ids[1 + MAX_DEPTH], kernel = 0;
	char *line = NULL, comm[256];
	size_t cap = 0;
	ssize_t n;
	int ret = 0;

	while (ret == 0 && (n = getline(&line, &cap, in)) > 0) {
		struct tr_folded_rootinfo root;
		struct pp_label labels[3];
		unsigned long long units;
		size_t n_ids = 0, n_labels = 0, depth = 0;
		char *frames[MAX_DEPTH], *p;
		int64_t value;

		if (!parse_view_line(line, n, &units, &root))
			continue;
		if (root.pid >= 0 && tr->pids && !traced_accepts(tr, root.pid))
			continue;
		for (p = (char *)root.frames; p && depth < MAX_DEPTH;) {
			frames[depth++] = p;
			p = strchr(p, ';');
			if (p)
				*p++ = '\0';
		}
		/* The thread's name, as cpu.pb.gz and offcpu.pb.gz label it. */
		snprintf(comm, sizeof(comm), "%.*s", (int)(root.tcomm ? root.tcomm_len : root.comm_len),
			 root.tcomm ? root.tcomm : root.comm);
		if (root.pid >= 0)
			labels[n_labels++] = (struct pp_label){ "pid", NULL, root.pid };
		if (root.tid >= 0)
			labels[n_labels++] = (struct pp_label){ "tid", NULL, root.tid };
		if (*comm)
			labels[n_labels++] = (struct pp_label){ "comm", comm, 0 };
		ids[n_ids++] = leaf;
		while (depth-- > 0 && ret == 0) {
			char *name = frames[depth];
			size_t len = strlen(name);
			int k = len > 4 && strcmp(name + len - 4, "_[k]") == 0;

			if (k) {
				name[len - 4] = '\0';
				if (!kernel)
					kernel = pp_mapping(b, 0, 0, 0, "[kernel.kallsyms]", NULL);
				if (!kernel)
					ret = -ENOMEM;
			}
			if (ret == 0 && !(ids[n_ids++] = pp_location(b, k ? kernel : 0, 0, name)))
				ret = -ENOMEM;
		}
		value = (int64_t)(units * v->ns_per_unit);
		if (ret == 0)
			ret = pp_add(b, ids, n_ids, &value, labels, n_labels);
	}
	if (ret == 0 && ferror(in))
		ret = -EIO;
	free(line);
	return ret;
}

/* One view's samples, under a leaf saying on or off CPU: 1 when taken from
 * the profile its source staged (with mappings), 0 from its folded
 * lines, or a negative errno. */
static int add_view(struct pp_builder *b, struct tracerig_archive *ar, const struct view *v,
		    struct traced *tr)
{
	uint64_t leaf = pp_location(
		b, 0, 0, v->what == TRACERIG_TIME_ONCPU ? TR_WALL_ONCPU : TR_WALL_OFFCPU);
	char path[4096];
	FILE *in;
	int ret;

	if (!leaf)
		return -ENOMEM;
	ret = add_view_pprof(b, ar, v, tr, leaf);
	if (ret != 0)
		return ret;
	snprintf(path, sizeof(path), "%s/%s", ar->dir, v->name);
	in = fopen(path, "re");
	if (!in)
		return -errno;
	ret = add_view_folded(b, in, v, tr, leaf);
	fclose(in);
	return ret;
}

/* wall.pb.gz: each view's samples, from the profile its source staged
 * beside it where there is one (so its locations keep their mappings and
 * build ids), else from its folded lines; dated by the session's window
 * or the flight snapshot's range.
 * 0 or a negative errno. */
static int write_pprof(struct tracerig_archive *ar, const struct views *vs, struct traced *tr,
		       struct tr_wall_pprof *pb, const struct tracerig_window *range)
{
	static const struct pp_value_type wall = { "wall", "nanoseconds" };
	struct pp_builder *b = pp_new(&wall, 1, wall, 0);
	size_t mapped = 0;
	FILE *f = NULL;
	int ret = b ? 0 : -ENOMEM;

	for (size_t i = 0; i < vs->n && ret == 0; i++) {
		ret = add_view(b, ar, &vs->v[i], tr);
		if (ret > 0) {
			mapped++;
			ret = 0;
		}
	}
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
		tr_log(TRACERIG_LOG_DEBUG, NULL, WALL_PPROF ": %zu samples; %zu of %zu views "
		       "with their mappings", pp_sample_count(b), mapped, vs->n);
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
		have[vs.v[i].what == TRACERIG_TIME_ONCPU ? 0 : 1] = 1;
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
		ret = add_views(wall, &vs, ar, &tr, added); /* logs its failures */
	if (ret == 0) {
		ret = write_folded(ar, wall);
		if (ret < 0) {
			tr_err("cannot write " WALL_ENTRY ": %s", strerror(-ret));
			tr_staging_remove_entry(ar, WALL_ENTRY);
		}
	}
	if (ret == 0) {
		ret = tr_flamegraph_entry(ar, WALL_ENTRY, WALL_SVG,
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
