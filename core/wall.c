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

#include "export.h"
#include "flamegraph.h"
#include "lib/folded.h"
#include "log.h"
#include "pids.h"
#include "stackset.h"
#include "staging.h"
#include "wall.h"

#define WALL_ENTRY "wall.folded"
#define WALL_SVG "wall.svg"
#define WALL_PPROF "wall.pb.gz"

struct view {
	char *who, *name;
	enum tracerig_time what;
	uint64_t ns_per_unit;
};

/* Declared from the sources' driver threads, read after the last flush. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct view *views;
static size_t n_views;

int tr_wall_declare(const char *who, const char *folded_name, enum tracerig_time what,
		    uint64_t ns_per_unit)
{
	struct view *grown, v = { .what = what, .ns_per_unit = ns_per_unit };

	if (!folded_name || !tr_entry_name_ok(folded_name) || !ns_per_unit ||
	    (what != TRACERIG_TIME_ONCPU && what != TRACERIG_TIME_OFFCPU))
		return -EINVAL;
	v.who = strdup(who ? who : "?");
	v.name = strdup(folded_name);
	pthread_mutex_lock(&lock);
	grown = v.who && v.name ? realloc(views, (n_views + 1) * sizeof(*views)) : NULL;
	if (grown) {
		views = grown;
		views[n_views++] = v;
	}
	pthread_mutex_unlock(&lock);
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

static struct views take_views(void)
{
	struct views taken;

	pthread_mutex_lock(&lock);
	taken.v = views;
	taken.n = n_views;
	views = NULL;
	n_views = 0;
	pthread_mutex_unlock(&lock);
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
		char *sp, *end;
		size_t need;

		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		/* The weight follows the last space: names may hold spaces. */
		sp = strrchr(line, ' ');
		if (!sp || sp == line || line[0] == '#')
			continue;
		errno = 0;
		units = strtoull(sp + 1, &end, 10);
		if (errno || *end || end == sp + 1 || !units)
			continue;
		*sp = '\0';
		tr_folded_root_parse(line, &root);
		if (root.pid >= 0 && filter && !filter(arg, root.pid))
			continue;
		need = (size_t)(sp - line) + strlen(mark) + 2;
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
static int traced_load(struct traced *tr, const struct tracerig_targets *t)
{
	size_t n;

	tr->pids = NULL;
	tr->n = 0;
	if (t->system_wide && !t->cgroup)
		return 0;
	n = tr_pids_count();
	tr->pids = calloc(n + t->n_pids + 1, sizeof(pid_t));
	if (!tr->pids)
		return -ENOMEM;
	tr->n = tr_pids_list(tr->pids, n);
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

struct pprof_adder {
	struct tr_stackset set;
	struct ss_folded_scratch scratch;
	char *line;
	size_t cap;
};

static int add_pprof_line(void *arg, const char *line, uint64_t weight)
{
	struct pprof_adder *pa = arg;
	size_t len = strlen(line);

	if (len + 1 > pa->cap) {
		char *grown = realloc(pa->line, len + 1);

		if (!grown)
			return -ENOMEM;
		pa->line = grown;
		pa->cap = len + 1;
	}
	memcpy(pa->line, line, len + 1);
	return tr_stackset_add_folded(&pa->set, pa->line, 1, (int64_t)weight, 0, &pa->scratch);
}

/* wall.pb.gz from the joined lines (nanoseconds), as `tracerig convert`
 * makes it from wall.folded: the views reach the core as folded stacks,
 * so its frames are names without mappings (cpu.pb.gz and offcpu.pb.gz
 * carry those).  0 or a negative errno. */
static int write_pprof(struct tracerig_archive *ar, const struct tr_folded *wall,
		       struct tr_wall_pprof *pb)
{
	struct pprof_adder *pa = calloc(1, sizeof(*pa));
	FILE *f = NULL;
	int ret;

	if (!pa)
		return -ENOMEM;
	ret = tr_stackset_init(&pa->set, "wall", "wall", "nanoseconds");
	if (ret < 0) {
		free(pa);
		return ret;
	}
	ret = tr_folded_each(wall, add_pprof_line, pa);
	if (ret == 0) {
		f = tr_staging_fopen_entry(ar, WALL_PPROF);
		ret = f ? tr_export_pprof(&pa->set, f) : -errno;
	}
	if (f && fclose(f) != 0 && !ret)
		ret = -errno;
	if (ret == 0)
		*pb = (struct tr_wall_pprof){ 1, pa->set.n_stacks,
					      (uint64_t)tr_stackset_total(&pa->set) };
	else if (f)
		tr_staging_remove_entry(ar, WALL_PPROF);
	tr_stackset_free(&pa->set);
	free(pa->line);
	free(pa);
	return ret;
}

int tr_wall_write(struct tracerig_archive *ar, const struct tracerig_targets *t,
		  struct tr_wall_pprof *pb)
{
	struct tr_folded *wall = NULL;
	struct traced tr = { NULL, 0 };
	long added[2] = { 0, 0 };
	struct views vs = take_views();
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
	ret = wall ? traced_load(&tr, t) : -ENOMEM;
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
		ret = write_pprof(ar, wall, pb);
		if (ret < 0)
			tr_err("cannot write " WALL_PPROF ": %s", strerror(-ret));
	}
	free(tr.pids);
	tr_folded_free(wall);
	free_views(&vs);
	return ret;
}
