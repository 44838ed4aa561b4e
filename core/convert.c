/* `tracerig convert ARCHIVE --to pprof|folded|speedscope [-o DIR]`: the
 * stacks of an archive taken earlier — tracerig's own, or perfcollect's
 * NAME.trace.zip whose perf.data.txt holds the samples — in the formats
 * continuous-profiling stores and viewers take.  The archive may come from
 * anywhere: every name read from it goes through the sanitizer. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert.h"
#include "export.h"
#include "jsonread.h"
#include "lib/path.h"
#include "lib/perfscript.h"
#include "lib/sanitize.h"
#include "lib/strmap.h"
#include "report/archive.h"
#include "report/lines.h"
#include "stackset.h"

#define MAX_FRAMES 1024
/* manifest.json is a few KiB: anything near this is no tracerig's. */
#define MAX_MANIFEST (16u << 20)

enum target { TO_PPROF, TO_FOLDED, TO_SPEEDSCOPE };

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: tracerig convert ARCHIVE [--to pprof|folded|speedscope] [-o DIR]\n"
		"\n"
		"Writes the stacks of ARCHIVE (a tracerig archive, or perfcollect's\n"
		"NAME.trace.zip) for other tools, into DIR (default: here):\n"
		"  pprof       NAME.cpu.pb.gz, NAME.offcpu.pb.gz, NAME.wall.pb.gz (go tool pprof,\n"
		"              Pyroscope, Parca); labels pid, tid, comm\n"
		"  folded      NAME.cpu.folded, ... (flamegraph.pl, speedscope, inferno)\n"
		"  speedscope  NAME.speedscope.json (speedscope.app, the speedscope CLI)\n");
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
	uint64_t samples, no_period;
	uint64_t first_ns, last_ns; /* the samples' span, 0 when untimed */
};

static int end_sample(struct script_reader *r)
{
	int ret = 0;

	if (r->in_sample) {
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
 * (offcpu.folded, wall.folded); "_[k]" marks kernel frames. */
struct folded_reader {
	struct tr_stackset *set;
	struct ss_folded_scratch scratch;
	int64_t scale;
	int counts;
};

static int folded_line(void *arg, char *line)
{
	struct folded_reader *fr = arg;
	char *space = strrchr(line, ' '), *end;
	long long value;

	if (!space)
		return 0;
	value = strtoll(space + 1, &end, 10);
	if (*end || value < 0)
		return 0;
	*space = '\0';
	/* Before the thread frame, only cpu.folded's root held a PID: an
	 * off-CPU root is a name, whatever digits end it. */
	return tr_stackset_add_folded(fr->set, line, fr->counts, fr->counts ? 0 : value * fr->scale,
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
	ret = rp_lines_each(ar, entry, folded_line, fr);
	free(fr);
	return ret;
}

static FILE *open_output(const char *dir, const char *base, const char *suffix, char *path,
			 size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s.%s", dir, base, suffix);
	f = fopen(path, "we");
	if (!f)
		fprintf(stderr, "tracerig: convert: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

static int write_set(const struct tr_stackset *set, enum target to, const char *dir,
		     const char *base, const struct when *w)
{
	char path[4096], suffix[64];
	FILE *f;
	int ret;

	snprintf(suffix, sizeof(suffix), "%s.%s", set->kind, to == TO_PPROF ? "pb.gz" : "folded");
	f = open_output(dir, base, suffix, path, sizeof(path));
	if (!f)
		return -errno;
	ret = to == TO_PPROF ? tr_export_pprof(set, w->time_nanos, w->duration_nanos, f)
			     : tr_export_folded(set, f);
	if (fclose(f) != 0 && ret == 0)
		ret = -errno;
	if (ret < 0) {
		fprintf(stderr, "tracerig: convert: cannot write %s: %s\n", path, strerror(-ret));
		unlink(path);
		return ret;
	}
	printf("%s\n", path);
	return 0;
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

int tr_convert_main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "to", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tr_stackset sets[3];
	const struct tr_stackset *filled[3];
	size_t n_sets = 0, n_filled = 0;
	const char *dir = ".", *archive;
	enum target to = TO_PPROF;
	struct when when;
	char base[256];
	struct rp_archive ar;
	int c, ret = 0;
	struct stat st;

	memset(sets, 0, sizeof(sets));
	optind = 1;
	while ((c = getopt_long(argc, argv, "t:o:h", options, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_target(optarg, &to) < 0) {
				fprintf(stderr, "tracerig convert: --to %s: use pprof, folded or "
					"speedscope\n", optarg);
				return 2;
			}
			break;
		case 'o':
			dir = optarg;
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
	archive = argv[optind];
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "tracerig convert: -o %s: not a directory (create it, or name an "
			"existing one)\n", dir);
		return 2;
	}
	if (rp_archive_open(archive, "convert", &ar) < 0)
		return 1;
	archive_base(archive, base, sizeof(base));
	read_when(&ar, &when);
	ret = tr_stackset_init(&sets[n_sets++], "cpu", "cpu", "nanoseconds");
	if (ret == 0 && rp_archive_has(&ar, "perf.data.txt"))
		ret = read_perf_script(&ar, &sets[0], &when);
	else if (ret == 0 && rp_archive_has(&ar, "cpu.folded"))
		ret = read_folded(&ar, "cpu.folded", &sets[0], 1, 1);
	if (ret == 0 && rp_archive_has(&ar, "offcpu.folded")) {
		ret = tr_stackset_init(&sets[n_sets], "offcpu", "offcpu", "nanoseconds");
		if (ret == 0)
			ret = read_folded(&ar, "offcpu.folded", &sets[n_sets++], 1000, 0);
	}
	if (ret == 0 && rp_archive_has(&ar, "wall.folded")) {
		ret = tr_stackset_init(&sets[n_sets], "wall", "wall", "nanoseconds");
		if (ret == 0)
			ret = read_folded(&ar, "wall.folded", &sets[n_sets++], 1000, 0);
	}
	if (ret < 0)
		fprintf(stderr, "tracerig convert: %s: %s\n", archive, rp_archive_strerror(&ar, ret));
	rp_archive_close(&ar);
	if (ret < 0)
		goto out;
	for (size_t i = 0; i < n_sets; i++)
		if (sets[i].n_stacks)
			filled[n_filled++] = &sets[i];
	if (n_filled == 0) {
		fprintf(stderr, "tracerig convert: %s holds no stacks (no perf.data.txt, "
			"cpu.folded, offcpu.folded or wall.folded)\n", archive);
		ret = -ENOENT;
		goto out;
	}
	if (to == TO_SPEEDSCOPE) {
		char path[4096];
		FILE *f = open_output(dir, base, "speedscope.json", path, sizeof(path));

		ret = f ? tr_export_speedscope(filled, n_filled, base, f) : -errno;
		if (f && fclose(f) != 0 && ret == 0)
			ret = -errno;
		if (ret == 0)
			printf("%s\n", path);
	} else {
		/* Without the window, only perf.data.txt's stacks have times. */
		struct when untimed = { 0 };

		for (size_t i = 0; i < n_filled && ret == 0; i++)
			ret = write_set(filled[i], to, dir, base,
					when.have_window || filled[i] == &sets[0] ? &when : &untimed);
	}
out:
	for (size_t i = 0; i < n_sets; i++)
		tr_stackset_free(&sets[i]);
	return ret < 0 ? 1 : 0;
}
