/* `tracerig convert ARCHIVE --to pprof|folded|speedscope [-o DIR]`: the
 * stacks of an archive taken earlier — tracerig's own, or perfcollect's
 * NAME.trace.zip whose perf.data.txt holds the samples — in the formats
 * continuous-profiling stores and viewers take.  The archive may come from
 * anywhere: every name read from it goes through the sanitizer. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "convert.h"
#include "core/archive/jsonread.h"
#include "core/archive/output.h"
#include "core/views/export.h"
#include "core/views/stackset.h"
#include "folded.h"
#include "lib/path.h"
#include "lib/perfscript.h"
#include "lib/sanitize.h"
#include "lib/strmap.h"
#include "lines.h"

#define MAX_FRAMES 1024
/* manifest.json is a few KiB: anything near this is no tracerig's. */
#define MAX_MANIFEST (16u << 20)

enum target { TO_PPROF, TO_FOLDED, TO_SPEEDSCOPE };

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: tracerig convert ARCHIVE [--to pprof|folded|speedscope] [-o DIR] [-f]\n"
		"                        [--max-size SIZE]\n"
		"\n"
		"Writes the stacks of ARCHIVE (a tracerig archive, or perfcollect's\n"
		"NAME.trace.zip) for other tools, into DIR (default: here):\n"
		"  pprof       NAME.cpu.pb.gz, NAME.offcpu.pb.gz, NAME.wall.pb.gz (go tool pprof,\n"
		"              Pyroscope, Parca); labels pid, tid, comm\n"
		"  folded      NAME.cpu.folded, ... (flamegraph.pl, speedscope, inferno)\n"
		"  speedscope  NAME.speedscope.json (speedscope.app, the speedscope CLI)\n"
		"Files there are not replaced: NAME-2.cpu.pb.gz, NAME-3... are written instead,\n"
		"unless -f (--force) is given; links, FIFOs and devices never are.\n"
		"  --max-size SIZE  read no entry that inflates past SIZE, and hold no more\n"
		"                   than SIZE of stacks (default 1G)\n");
}

/* "web.trace.zip" -> "web" */
static void archive_base(const char *path, char *buf, size_t len)
{
	static const char *const suffixes[] = { ".trace.zip", ".zip", NULL };

	tr_path_stem(path, suffixes, buf, len);
}

/* Names from an archive made elsewhere, before they reach any output. */
static void sanitize_in_place(const char *text)
{
	char *s = (char *)text;

	/* "" may be the parser's literal for an absent field. */
	if (*s)
		tr_sanitize_name(s, strlen(s) + 1, s);
}

static int is_kernel_frame(const struct ps_frame *f)
{
	return f->address >= 0xffff800000000000ull || strcmp(f->dso, "[kernel.kallsyms]") == 0 ||
	       strncmp(f->dso, "[kernel.", 8) == 0;
}

/* The cpu-clock and task-clock periods are nanoseconds; other events'
 * periods are counts of something else.  perf names an event with its
 * modifiers ("cpu-clock:ppp" where there is no PMU, "cpu-clock:u"). */
static int period_is_ns(const char *event)
{
	size_t n = strcspn(event, ":");

	return (n == 9 && strncmp(event, "cpu-clock", n) == 0) ||
	       (n == 10 && strncmp(event, "task-clock", n) == 0);
}

struct script_reader {
	struct tr_stackset *set;
	struct tr_strmap frame_lines; /* a frame line as printed -> frame id + 1 */
	uint32_t ids[MAX_FRAMES];
	size_t n;
	int in_sample;
	struct ps_header h;
	char comm[256], event[128];
	uint64_t samples, no_period, bad_period;
	uint64_t first_ns, last_ns; /* the samples' span, 0 when untimed */
};

static int end_sample(struct script_reader *r)
{
	int ret = 0;

	if (r->in_sample && r->h.period > RP_FOLDED_MAX_WEIGHT) {
		/* Past any real period, and past what sums of them can hold. */
		r->bad_period++;
	} else if (r->in_sample) {
		int ns = period_is_ns(r->event) && r->h.period;

		ret = tr_stackset_add_ids(r->set, r->ids, r->n, r->h.pid, r->h.tid, r->comm,
					  ns ? (int64_t)r->h.period : 0, 1);
		if (r->h.time_ns && (!r->first_ns || r->h.time_ns < r->first_ns))
			r->first_ns = r->h.time_ns;
		if (r->h.time_ns > r->last_ns)
			r->last_ns = r->h.time_ns;
		r->samples++;
		r->no_period += !ns;
	}
	r->n = 0;
	r->in_sample = 0;
	return ret;
}

/* The id of the frame a line prints.  The same lines come back sample
 * after sample: each is parsed and sanitized once. */
static int64_t frame_of_line(struct script_reader *r, const char *line)
{
	struct tr_strmap_entry *e = tr_strmap_get(&r->frame_lines, line, strlen(line));
	struct ps_frame f;
	char *copy;
	int64_t id;

	if (!e)
		return -ENOMEM;
	if (e->value)
		return (int64_t)e->value - 1;
	copy = strdup(line);
	if (!copy)
		return -ENOMEM;
	if (ps_parse_frame(copy, &f) < 0) {
		free(copy);
		return -EINVAL;
	}
	/* In place: both point into copy. */
	sanitize_in_place(f.symbol);
	sanitize_in_place(f.dso);
	id = tr_stackset_frame(r->set, &(struct ss_frame){ f.symbol, f.dso, f.address,
							    is_kernel_frame(&f) });
	free(copy);
	if (id >= 0)
		e->value = (uint64_t)id + 1;
	return id;
}

static int script_line(void *arg, char *line)
{
	struct script_reader *r = arg;
	int64_t id;

	if (!*line || (ps_is_frame_line(line) && strspn(line, " \t") == strlen(line)))
		return end_sample(r);
	if (!ps_is_frame_line(line)) {
		int ret = end_sample(r);

		if (ret == 0 && ps_parse_header(line, &r->h) == 0) {
			snprintf(r->comm, sizeof(r->comm), "%s", r->h.comm);
			tr_sanitize_name(r->comm, sizeof(r->comm), r->comm);
			snprintf(r->event, sizeof(r->event), "%s", r->h.event);
			r->h.comm = r->comm;
			r->h.event = r->event;
			r->in_sample = 1;
		}
		return ret;
	}
	if (!r->in_sample || r->n == MAX_FRAMES)
		return 0;
	id = frame_of_line(r, line);
	if (id == -EINVAL)
		return 0; /* not a frame: skipped */
	if (id < 0)
		return (int)id;
	r->ids[r->n++] = (uint32_t)id;
	return 0;
}

/* When the stacks were taken: what pprof's time_nanos and duration_nanos
 * say.  From a tracerig manifest, the session's window (as the archive's
 * own .pb.gz entries are dated); else the span of perf.data.txt's samples,
 * dated where the manifest ties the recording's clock to the epoch. */
struct when {
	int64_t time_nanos, duration_nanos;
	int have_window, have_offset;
	int64_t realtime_minus_monotonic_ns;
};

static int64_t manifest_i64(const struct tr_jv *m, const char *section, const char *key,
			    int *found)
{
	double v;

	*found = tr_jv_num(tr_jv_get(m, section, key, NULL), &v) && v >= -9.2e18 && v <= 9.2e18;
	return *found ? (int64_t)v : 0;
}

/* The manifest's window and clock, where there is one: a perfcollect
 * archive has none, its clock (perf's) unknown. */
static void read_when(struct rp_archive *ar, struct when *w)
{
	char *text = NULL;
	size_t len;
	struct tr_jv m;
	int64_t start, end;
	int s_found, e_found;

	memset(w, 0, sizeof(*w));
	if (rp_archive_read(ar, "manifest.json", MAX_MANIFEST, &text, &len) < 0 ||
	    tr_jv_parse(text, len, &m) < 0) {
		free(text);
		return;
	}
	free(text);
	/* The manifest's numbers are doubles: the date to a few hundred ns. */
	w->realtime_minus_monotonic_ns = manifest_i64(&m, "clock", "realtime_minus_monotonic_ns",
						      &w->have_offset);
	start = manifest_i64(&m, "session", "window_start_monotonic_ns", &s_found);
	end = manifest_i64(&m, "session", "window_end_monotonic_ns", &e_found);
	if (w->have_offset && s_found && e_found && start > 0 && end >= start) {
		w->have_window = 1;
		w->time_nanos = start + w->realtime_minus_monotonic_ns;
		w->duration_nanos = end - start;
	}
	tr_jv_free(&m);
}

static int read_perf_script(struct rp_archive *ar, struct tr_stackset *set, struct when *w)
{
	struct script_reader *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	r->set = set;
	ret = rp_lines_each(ar, "perf.data.txt", script_line, r);
	if (ret == 0)
		ret = end_sample(r);
	else
		end_sample(r);
	tr_strmap_free(&r->frame_lines);
	if (ret == 0 && r->bad_period)
		fprintf(stderr, "tracerig: convert: perf.data.txt: %" PRIu64 " sample(s) skipped: "
			"their period is over %" PRIu64 " (perf never writes such: the archive was "
			"altered)\n", r->bad_period, (uint64_t)RP_FOLDED_MAX_WEIGHT);
	if (ret == 0 && r->samples && r->no_period)
		fprintf(stderr, "tracerig: convert: perf.data.txt: %llu of %llu samples have no "
			"cpu-clock period: their CPU time is unknown (sample counts are right)\n",
			(unsigned long long)r->no_period, (unsigned long long)r->samples);
	if (ret == 0 && !w->have_window && r->last_ns > r->first_ns) {
		w->duration_nanos = (int64_t)(r->last_ns - r->first_ns);
		w->time_nanos = w->have_offset ? (int64_t)r->first_ns + w->realtime_minus_monotonic_ns
					       : 0;
	}
	free(r);
	return ret;
}

/* "root;outer;...;leaf 123": the root is "comm-PID;tcomm-TID" (lib/folded.h),
 * or in archives written before it "comm-PID" (cpu.folded) or "comm"
 * (offcpu.folded, wall.folded); "_[k]" marks kernel frames.  The weights
 * are the report's reader's: at most RP_FOLDED_MAX_WEIGHT, so that one
 * times the scale (1000 at most) fits. */
struct folded_reader {
	struct tr_stackset *set;
	struct ss_folded_scratch scratch;
	int64_t scale;
	int counts;
};

static int folded_stack(void *arg, char *stack, uint64_t weight)
{
	struct folded_reader *fr = arg;
	int64_t value = (int64_t)weight;

	/* Before the thread frame, only cpu.folded's root held a PID: an
	 * off-CPU root is a name, whatever digits end it. */
	return tr_stackset_add_folded(fr->set, stack, fr->counts, fr->counts ? 0 : value * fr->scale,
				      fr->counts ? value : 0, &fr->scratch);
}

static int read_folded(struct rp_archive *ar, const char *entry, struct tr_stackset *set,
		       int64_t scale, int counts)
{
	struct folded_reader *fr = calloc(1, sizeof(*fr));
	int ret;

	if (!fr)
		return -ENOMEM;
	fr->set = set;
	fr->scale = scale;
	fr->counts = counts;
	ret = rp_folded_read(ar, entry, folded_stack, fr);
	free(fr);
	return ret;
}

/* Where the outputs go: DIR/BASE.SUFFIX, or unless --force DIR/BASE-N.SUFFIX
 * for the first N at which none of them exists, as the archive's own name
 * is picked: what is there is another run's, or not the user's at all. */
struct outputs {
	const char *dir;
	char name[320]; /* BASE or BASE-N */
	int force;
};

static int pick_name(struct outputs *o, const char *base, const char *const *suffixes, size_t n)
{
	char path[4096], first[4096] = "";

	for (unsigned k = 1; k <= 9999; k++) {
		int taken = 0;

		snprintf(o->name, sizeof(o->name), k == 1 ? "%s" : "%s-%u", base, k);
		for (size_t i = 0; i < n && !taken && !o->force; i++) {
			snprintf(path, sizeof(path), "%s/%s.%s", o->dir, o->name, suffixes[i]);
			taken = tr_output_what_is(path) != NULL;
			if (taken && !first[0])
				snprintf(first, sizeof(first), "%s", path);
		}
		if (!taken) {
			if (first[0])
				fprintf(stderr, "tracerig: convert: %s exists: writing %s/%s.* "
					"instead (give -f to replace it)\n", first, o->dir, o->name);
			return 0;
		}
	}
	fprintf(stderr, "tracerig: convert: %s/%s.* to %s-9999.* all exist (move old ones away, "
		"or give -f to replace them)\n", o->dir, base, base);
	return -EEXIST;
}

/* Writes DIR/NAME.SUFFIX through a temporary file of its own, so that
 * nothing planted there is followed, truncated or waited on. */
static int write_output(const struct outputs *o, const char *suffix,
			int (*fill)(const void *arg, FILE *f), const void *arg)
{
	char name[400], final[4096], why[256];
	const char *what = NULL;
	char *tmp = NULL;
	FILE *f;
	int fd, ret;

	snprintf(name, sizeof(name), "%s.%s", o->name, suffix);
	snprintf(final, sizeof(final), "%s/%s", o->dir, name);
	fd = tr_output_open_temp(o->dir, name, 0666, &tmp);
	if (fd < 0) {
		fprintf(stderr, "tracerig: convert: cannot write %s: %s\n", final,
			tr_output_strerror(fd, why, sizeof(why)));
		return fd;
	}
	f = fdopen(fd, "w");
	if (!f) {
		ret = -errno;
		close(fd);
	} else {
		ret = fill(arg, f);
		if (fclose(f) != 0 && ret == 0)
			ret = -errno;
	}
	if (ret == 0)
		ret = tr_output_place(tmp, final, o->force, &what);
	if (ret == -EEXIST && what && o->force)
		fprintf(stderr, "tracerig: convert: cannot write %s: it is %s, which tracerig never "
			"replaces (remove it, or choose another directory with -o)\n", final, what);
	else if (ret == -EEXIST && what)
		fprintf(stderr, "tracerig: convert: cannot write %s: %s appeared there meanwhile "
			"(run again, or give -f to replace a regular file)\n", final, what);
	else if (ret < 0)
		fprintf(stderr, "tracerig: convert: cannot write %s: %s\n", final,
			tr_output_strerror(ret, why, sizeof(why)));
	if (ret < 0)
		unlink(tmp);
	else
		printf("%s\n", final);
	free(tmp);
	return ret;
}

struct pprof_job {
	const struct tr_stackset *set;
	const struct when *when;
};

static int write_pprof(const void *arg, FILE *f)
{
	const struct pprof_job *job = arg;

	return tr_export_pprof(job->set, job->when->time_nanos, job->when->duration_nanos, f);
}

static int write_folded(const void *arg, FILE *f)
{
	return tr_export_folded(arg, f);
}

struct speedscope_job {
	const struct tr_stackset *const *sets;
	size_t n;
	const char *name;
};

static int write_speedscope(const void *arg, FILE *f)
{
	const struct speedscope_job *job = arg;

	return tr_export_speedscope(job->sets, job->n, job->name, f);
}

/* Every output of `filled` in format `to`; 0 or -errno once said. */
static int write_outputs(struct outputs *o, const char *base, enum target to,
			 const struct tr_stackset *const *filled, size_t n_filled,
			 const struct tr_stackset *timed, const struct when *when)
{
	/* Without the window, only perf.data.txt's stacks have times. */
	static const struct when untimed = { 0 };
	char suffixes[3][64];
	const char *names[3];
	int ret;

	for (size_t i = 0; i < n_filled; i++) {
		snprintf(suffixes[i], sizeof(suffixes[i]), "%s.%s", filled[i]->kind,
			 to == TO_PPROF ? "pb.gz" : "folded");
		names[i] = to == TO_SPEEDSCOPE ? "speedscope.json" : suffixes[i];
	}
	ret = pick_name(o, base, names, to == TO_SPEEDSCOPE ? 1 : n_filled);
	if (ret < 0)
		return ret;
	if (to == TO_SPEEDSCOPE) {
		struct speedscope_job job = { filled, n_filled, base };

		return write_output(o, "speedscope.json", write_speedscope, &job);
	}
	for (size_t i = 0; i < n_filled && ret == 0; i++) {
		struct pprof_job job = {
			filled[i], when->have_window || filled[i] == timed ? when : &untimed
		};

		ret = to == TO_PPROF ? write_output(o, suffixes[i], write_pprof, &job)
				     : write_output(o, suffixes[i], write_folded, filled[i]);
	}
	return ret;
}

static int parse_target(const char *word, enum target *to)
{
	if (strcmp(word, "pprof") == 0)
		*to = TO_PPROF;
	else if (strcmp(word, "folded") == 0)
		*to = TO_FOLDED;
	else if (strcmp(word, "speedscope") == 0)
		*to = TO_SPEEDSCOPE;
	else
		return -1;
	return 0;
}

/* Reads `entry` into `set`; 0 or -errno once said. */
static int read_entry(struct rp_archive *ar, const char *entry, struct tr_stackset *set,
		      struct when *w)
{
	int ret;

	set->max_bytes = ar->max_size;
	if (strcmp(entry, "perf.data.txt") == 0)
		ret = read_perf_script(ar, set, w);
	else if (strcmp(entry, "cpu.folded") == 0 || strcmp(entry, "oncpu.folded") == 0)
		ret = read_folded(ar, entry, set, 1, 1); /* weights: samples */
	else
		ret = read_folded(ar, entry, set, 1000, 0);
	if (ret < 0)
		rp_archive_perror(ar, entry, ret);
	else if (set->saturated)
		fprintf(stderr, "tracerig: convert: %s: weights add up past 2^63: their sums are "
			"held at %" PRId64 " (tracerig never writes such: the archive was altered)\n",
			entry, INT64_MAX);
	return ret;
}

/* The command line: 0 with the settings filled, else the exit status. */
static int parse_args(int argc, char **argv, struct outputs *out, uint64_t *max_size,
		      enum target *to, const char **archive)
{
	static const struct option options[] = {
		{ "to", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "max-size", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stat st;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:o:fh", options, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_target(optarg, to) < 0) {
				fprintf(stderr,
					"tracerig convert: --to %s: use pprof, folded or "
					"speedscope\n",
					optarg);
				return 2;
			}
			break;
		case 'o': out->dir = optarg; break;
		case 'f': out->force = 1; break;
		case 'M':
			if (rp_archive_parse_size(optarg, max_size) < 0) {
				fprintf(stderr,
					"tracerig convert: --max-size %s: not a size (use "
					"--max-size 4G, or 512M)\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	*archive = argv[optind];
	if (stat(out->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"tracerig convert: -o %s: not a directory (create it, or name an "
			"existing one)\n",
			out->dir);
		return 2;
	}
	return -1;
}

/* The archive's stacks into sets[0] (cpu: perf.data.txt's samples, else
 * cpu.folded's counts, else the BPF sampler's oncpu.folded: each holds
 * the one before's stacks again, when both are there) and one set per
 * other view.  0 or -errno. */
static int read_sets(struct rp_archive *ar, const char *archive, struct tr_stackset *sets,
		     size_t *n_sets, struct when *when)
{
	static const struct {
		const char *entry, *kind;
	} entries[] = {
		{ "perf.data.txt", "cpu" },    { "cpu.folded", "cpu" },   { "oncpu.folded", "cpu" },
		{ "offcpu.folded", "offcpu" }, { "wall.folded", "wall" },
	};
	int ret = tr_stackset_init(&sets[(*n_sets)++], "cpu", "cpu", "nanoseconds"), have_cpu = 0;

	if (ret < 0)
		fprintf(stderr, "tracerig convert: %s: %s\n", archive, strerror(ENOMEM));
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]) && ret == 0; i++) {
		int cpu = strcmp(entries[i].kind, "cpu") == 0;
		struct tr_stackset *set = &sets[cpu ? 0 : *n_sets];

		if ((cpu && have_cpu) || !rp_archive_has(ar, entries[i].entry))
			continue;
		if (!cpu && tr_stackset_init(&sets[(*n_sets)++], entries[i].kind, entries[i].kind,
					     "nanoseconds") < 0) {
			fprintf(stderr, "tracerig convert: %s: %s\n", archive, strerror(ENOMEM));
			return -ENOMEM;
		}
		ret = read_entry(ar, entries[i].entry, set, when);
		have_cpu |= cpu;
	}
	return ret;
}

int tr_convert_main(int argc, char **argv)
{
	struct tr_stackset sets[3];
	const struct tr_stackset *filled[3];
	size_t n_sets = 0, n_filled = 0;
	struct outputs out = { .dir = "." };
	const char *archive = NULL;
	uint64_t max_size = RP_MAX_SIZE_DEFAULT;
	enum target to = TO_PPROF;
	struct when when;
	char base[256];
	struct rp_archive ar;
	int ret;

	memset(sets, 0, sizeof(sets));
	ret = parse_args(argc, argv, &out, &max_size, &to, &archive);
	if (ret >= 0)
		return ret;
	if (rp_archive_open(archive, "convert", &ar) < 0)
		return 1;
	ar.max_size = max_size;
	archive_base(archive, base, sizeof(base));
	read_when(&ar, &when);
	ret = read_sets(&ar, archive, sets, &n_sets, &when);
	rp_archive_close(&ar);
	if (ret < 0)
		goto out;
	for (size_t i = 0; i < n_sets; i++)
		if (sets[i].n_stacks)
			filled[n_filled++] = &sets[i];
	if (n_filled == 0) {
		fprintf(stderr,
			"tracerig convert: %s holds no stacks (no perf.data.txt, "
			"cpu.folded, offcpu.folded or wall.folded)\n",
			archive);
		ret = -ENOENT;
		goto out;
	}
	ret = write_outputs(&out, base, to, filled, n_filled, &sets[0], &when);
out:
	for (size_t i = 0; i < n_sets; i++)
		tr_stackset_free(&sets[i]);
	return ret < 0 ? 1 : 0;
}
