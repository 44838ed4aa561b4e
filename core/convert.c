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
#include <zip.h>

#include "convert.h"
#include "export.h"
#include "lib/perfscript.h"
#include "lib/sanitize.h"
#include "stackset.h"
#include "zipline.h"

#define MAX_FRAMES 1024

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
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > 10 && strcmp(base + n - 10, ".trace.zip") == 0)
		n -= 10;
	else if (n > 4 && strcmp(base + n - 4, ".zip") == 0)
		n -= 4;
	snprintf(buf, len, "%.*s", (int)n, base);
}

/* perf.data.txt at the top (tracerig) or under NAME.trace/ (perfcollect). */
static const char *find_perf_script(zip_t *za)
{
	zip_int64_t n = zip_get_num_entries(za, 0);

	if (zip_name_locate(za, "perf.data.txt", 0) >= 0)
		return "perf.data.txt";
	for (zip_int64_t i = 0; i < n; i++) {
		const char *name = zip_get_name(za, (zip_uint64_t)i, 0);
		size_t len = name ? strlen(name) : 0;

		if (len > 14 && strcmp(name + len - 14, "/perf.data.txt") == 0 && !strstr(name, ".."))
			return name;
	}
	return NULL;
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
 * periods are counts of something else. */
static int period_is_ns(const char *event)
{
	return strcmp(event, "cpu-clock") == 0 || strcmp(event, "task-clock") == 0;
}

struct script_reader {
	struct tr_stackset *set;
	struct ps_frame frames[MAX_FRAMES];
	struct ss_frame ss[MAX_FRAMES];
	char *frame_text[MAX_FRAMES];
	size_t n;
	int in_sample;
	struct ps_header h;
	char comm[256], event[128];
	uint64_t samples, no_period;
};

static int end_sample(struct script_reader *r)
{
	int ret = 0;

	if (r->in_sample) {
		int ns = period_is_ns(r->event) && r->h.period;

		for (size_t i = 0; i < r->n; i++) {
			r->ss[i] = (struct ss_frame){ r->frames[i].symbol, r->frames[i].dso,
						      r->frames[i].address,
						      is_kernel_frame(&r->frames[i]) };
		}
		ret = tr_stackset_add(r->set, r->ss, r->n, r->h.pid, r->h.tid, r->comm,
				      ns ? (int64_t)r->h.period : 0, 1);
		r->samples++;
		r->no_period += !ns;
	}
	for (size_t i = 0; i < r->n; i++)
		free(r->frame_text[i]);
	r->n = 0;
	r->in_sample = 0;
	return ret;
}

static int read_perf_script(zip_t *za, const char *entry, struct tr_stackset *set)
{
	struct script_reader *r = calloc(1, sizeof(*r));
	struct tr_zipline lines;
	int ret;

	if (!r)
		return -ENOMEM;
	r->set = set;
	ret = tr_zipline_open(&lines, za, entry);
	while (ret == 0 && (ret = tr_zipline_next(&lines)) > 0) {
		char *line = lines.line;

		ret = 0;
		if (!*line) {
			ret = end_sample(r);
		} else if (ps_is_frame_line(line)) {
			char *copy;

			if (!r->in_sample || r->n == MAX_FRAMES)
				continue;
			/* The frame points into its own copy: the line buffer
			 * is reused for the next line. */
			copy = strdup(line);
			if (!copy) {
				ret = -ENOMEM;
				break;
			}
			if (ps_parse_frame(copy, &r->frames[r->n]) < 0) {
				free(copy);
				continue;
			}
			/* In place: both point into copy. */
			sanitize_in_place(r->frames[r->n].symbol);
			sanitize_in_place(r->frames[r->n].dso);
			r->frame_text[r->n++] = copy;
		} else {
			ret = end_sample(r);
			if (ret == 0 && ps_parse_header(line, &r->h) == 0) {
				snprintf(r->comm, sizeof(r->comm), "%s", r->h.comm);
				tr_sanitize_name(r->comm, sizeof(r->comm), r->comm);
				snprintf(r->event, sizeof(r->event), "%s", r->h.event);
				r->h.comm = r->comm;
				r->h.event = r->event;
				r->in_sample = 1;
			}
		}
	}
	if (ret == 0)
		ret = end_sample(r);
	else
		end_sample(r);
	tr_zipline_warn_skipped(&lines, "convert", entry);
	tr_zipline_close(&lines);
	if (ret == 0 && r->samples && r->no_period)
		fprintf(stderr, "tracerig: convert: %s: %llu of %llu samples have no cpu-clock "
			"period: their CPU time is unknown (sample counts are right)\n", entry,
			(unsigned long long)r->no_period, (unsigned long long)r->samples);
	free(r);
	return ret;
}

/* "root;outer;...;leaf 123": the root is the process ("comm" or, in
 * cpu.folded, "comm-PID"); "_[k]" marks kernel frames. */
static int read_folded(zip_t *za, const char *entry, struct tr_stackset *set, int64_t scale,
		       int counts)
{
	struct ss_frame *frames = calloc(MAX_FRAMES, sizeof(*frames));
	struct tr_zipline lines;
	int ret;

	if (!frames)
		return -ENOMEM;
	ret = tr_zipline_open(&lines, za, entry);
	while (ret == 0 && (ret = tr_zipline_next(&lines)) > 0) {
		char *line = lines.line, *space = strrchr(line, ' '), *end, *p, *root, *dash;
		char *parts[MAX_FRAMES + 1];
		size_t n = 0;
		long long value;
		long pid = -1;

		ret = 0;
		if (!space)
			continue;
		value = strtoll(space + 1, &end, 10);
		if (*end || value < 0)
			continue;
		*space = '\0';
		for (p = line; p && n <= MAX_FRAMES; n++) {
			parts[n] = p;
			p = strchr(p, ';');
			if (p)
				*p++ = '\0';
			sanitize_in_place(parts[n]);
		}
		root = parts[0];
		dash = strrchr(root, '-');
		if (counts && dash && dash[1] && strspn(dash + 1, "0123456789") == strlen(dash + 1)) {
			pid = strtol(dash + 1, NULL, 10);
			*dash = '\0';
		}
		/* Leaf first, as the stack set wants. */
		for (size_t i = 1; i < n; i++) {
			struct ss_frame *f = &frames[n - 1 - i];
			size_t len = strlen(parts[i]);

			f->name = parts[i];
			f->dso = "";
			f->address = 0;
			f->kernel = len > 4 && strcmp(parts[i] + len - 4, "_[k]") == 0;
			if (f->kernel)
				parts[i][len - 4] = '\0';
		}
		ret = tr_stackset_add(set, frames, n ? n - 1 : 0, pid, -1, root,
				      counts ? 0 : value * scale, counts ? value : 0);
	}
	tr_zipline_warn_skipped(&lines, "convert", entry);
	tr_zipline_close(&lines);
	free(frames);
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
		     const char *base)
{
	char path[4096], suffix[64];
	FILE *f;
	int ret;

	snprintf(suffix, sizeof(suffix), "%s.%s", set->kind, to == TO_PPROF ? "pb.gz" : "folded");
	f = open_output(dir, base, suffix, path, sizeof(path));
	if (!f)
		return -errno;
	ret = to == TO_PPROF ? tr_export_pprof(set, f) : tr_export_folded(set, f);
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
	const char *dir = ".", *archive, *script;
	enum target to = TO_PPROF;
	char base[256];
	zip_t *za;
	int c, err, ret = 0;
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
	za = zip_open(archive, ZIP_RDONLY, &err);
	if (!za) {
		zip_error_t ze;

		zip_error_init_with_code(&ze, err);
		fprintf(stderr, "tracerig convert: %s: %s\n", archive, zip_error_strerror(&ze));
		zip_error_fini(&ze);
		return 1;
	}
	archive_base(archive, base, sizeof(base));
	script = find_perf_script(za);
	ret = tr_stackset_init(&sets[n_sets++], "cpu", "cpu", "nanoseconds");
	if (ret == 0 && script)
		ret = read_perf_script(za, script, &sets[0]);
	else if (ret == 0 && zip_name_locate(za, "cpu.folded", 0) >= 0)
		ret = read_folded(za, "cpu.folded", &sets[0], 1, 1);
	if (ret == 0 && zip_name_locate(za, "offcpu.folded", 0) >= 0) {
		ret = tr_stackset_init(&sets[n_sets], "offcpu", "offcpu", "nanoseconds");
		if (ret == 0)
			ret = read_folded(za, "offcpu.folded", &sets[n_sets++], 1000, 0);
	}
	if (ret == 0 && zip_name_locate(za, "wall.folded", 0) >= 0) {
		ret = tr_stackset_init(&sets[n_sets], "wall", "wall", "nanoseconds");
		if (ret == 0)
			ret = read_folded(za, "wall.folded", &sets[n_sets++], 1000, 0);
	}
	zip_close(za);
	if (ret < 0) {
		fprintf(stderr, "tracerig convert: %s: %s\n", archive,
			ret == -EIO ? "the archive is damaged (an entry cannot be read)"
				    : strerror(-ret));
		goto out;
	}
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
		for (size_t i = 0; i < n_filled && ret == 0; i++)
			ret = write_set(filled[i], to, dir, base);
	}
out:
	for (size_t i = 0; i < n_sets; i++)
		tr_stackset_free(&sets[i]);
	return ret < 0 ? 1 : 0;
}
