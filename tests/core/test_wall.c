/* The core's wall-clock step (core/views/wall.c): the views stack sinks
 * hand over (lines and profiles in memory) joined into wall.folded (and
 * wall.pb.gz, with the mappings of the views' profiles, dated by the
 * session's window), samples turned into time at their worth, leaves
 * marked, other processes left out, nothing written without both sides. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../../core/archive/staging.h"
#include "../../core/session/pids.h"
#include "../../core/views/wall.h"
#include "../../lib/folded.h"
#include "../../lib/pprof.h"
#include "../testing.h"
#include "profile.pb-c.h"

static char dir[] = "/tmp/tracerig-test-wall.XXXXXX";
/* The session's registry of observed processes. */
static struct tr_pids *observed;

static char *get(const char *name)
{
	return tr_test_slurp(dir, name);
}

static void rm(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/* The session's views, as stack sinks hand theirs over. */
static struct tr_wall_views *the_views(void)
{
	static struct tr_wall_views *views;

	if (!views)
		views = tr_wall_views_new();
	return views;
}

/* Lines as a sink holds them, from "stack weight" lines, each weight
 * times `scale` (1000: microseconds given, nanoseconds held, as an
 * off-CPU sink holds them). */
static struct tr_folded *lines(const char *text, uint64_t scale)
{
	struct tr_folded *set = tr_folded_new();
	const char *at = text;

	if (!set)
		TEST_FAIL("tr_folded_new");
	while (*at) {
		const char *nl = strchrnul(at, '\n'), *sp = nl;

		while (sp > at && *sp != ' ')
			sp--;
		if (tr_folded_add(set, at, (size_t)(sp - at), strtoull(sp + 1, NULL, 10) * scale))
			TEST_FAIL("tr_folded_add");
		at = *nl ? nl + 1 : nl;
	}
	return set;
}

/* Hands a view to the wall as a sink of `who` would. */
static int take(const char *who, enum tracerig_time what, struct tr_folded *set,
		uint64_t ns_per_unit, struct pp_builder *profile, const struct tracerig_window *w)
{
	struct tr_wall_view v = { "test.folded", what, set, ns_per_unit, profile };
	int ret = tr_wall_take(the_views(), who, &v, w);

	EXPECT_TRUE(v.lines == NULL && v.profile == NULL && v.name == NULL);
	return ret;
}

/* tr_wall_write with the processes the registry has observed, listed as
 * the session lists them (core/session/record.c). */
static int write_wall(struct tracerig_archive *ar, const struct tracerig_targets *t,
		      struct tr_wall_pprof *pb)
{
	struct tr_wall_observed seen;
	pid_t *pids = tr_pids_all(observed, &seen.n);
	int ret;

	seen.pids = pids;
	ret = tr_wall_write(the_views(), ar, t, seen, pb);
	free(pids);
	return ret;
}

/* Hands over the two views (on-CPU at `oncpu_ns` a sample, off-CPU given
 * in microseconds), runs the step and returns wall.folded (NULL: none). */
static char *join(const char *cpu, uint64_t oncpu_ns, const char *off,
		  const struct tracerig_targets *t)
{
	struct tracerig_archive ar = { .dir = dir, .output = NULL };

	EXPECT_EQ_INT(
		0, take("perf_events", TRACERIG_TIME_ONCPU, lines(cpu, 1), oncpu_ns, NULL, NULL));
	EXPECT_EQ_INT(0, take("ebpf", TRACERIG_TIME_OFFCPU, lines(off, 1000), 1, NULL, NULL));
	EXPECT_EQ_INT(0, write_wall(&ar, t, NULL));
	return get("wall.folded");
}

DEF_TEST(views_join_into_time_marked_and_filtered)
{
	struct tracerig_targets t = { .command_pid = 42 };
	char *out, *svg;

	/* 100 Hz: a sample is 10 ms.  PID 77 is no process of the session;
	 * 43 is a child some source observed. */
	tr_pids_observe(observed, 43);
	out = join("app-42;app-42;main;compute 3\n"
		   "other-77;other-77;main;spin 10\n"
		   "app-42;worker-44;main;compute 1\n"
		   "child-43;child-43;run 2\n",
		   10000000,
		   "app-42;worker-44;main;read;pipe_read_[k] 250000\n"
		   "other-77;other-77;main;read 9\n",
		   &t);
	EXPECT_EQ_STR("app-42;app-42;main;compute;[on-cpu] 30000\n"
		      "app-42;worker-44;main;compute;[on-cpu] 10000\n"
		      "app-42;worker-44;main;read;pipe_read_[k];[off-cpu] 250000\n"
		      "child-43;child-43;run;[on-cpu] 20000\n", out);
	free(out);
	svg = get("wall.svg");
	CHECK_NOT_NULL(svg);
	EXPECT_CONTAINS("<svg", svg);
	EXPECT_CONTAINS("compute", svg);
	free(svg);
	rm("wall.folded");
	rm("wall.svg");
}

DEF_TEST(the_whole_machine_keeps_every_process)
{
	struct tracerig_targets t = { .system_wide = 1 };
	char *out = join("other-77;other-77;main;spin 1\n", 1000000,
			 "app-42;app-42;read 1500\n", &t);

	EXPECT_EQ_STR("app-42;app-42;read;[off-cpu] 1500\n"
		      "other-77;other-77;main;spin;[on-cpu] 1000\n", out);
	free(out);
	rm("wall.folded");
	rm("wall.svg");
}

static const struct pp_value_type cpu[2] = { { "samples", "count" }, { "cpu", "nanoseconds" } };
static const struct pp_value_type offcpu = { "offcpu", "nanoseconds" };

/* A profile of one stack of names, labelled with pid and tid. */
static void add_named(struct pp_builder *b, const char *leaf, const char *root, int64_t pid,
		      int64_t tid, const int64_t *values)
{
	uint64_t ids[2] = { pp_location(b, 0, 0, leaf), pp_location(b, 0, 0, root) };

	EXPECT_EQ_INT(0,
		      pp_add(b, ids, 2, values,
			     (struct pp_label[]){ { "pid", NULL, pid }, { "tid", NULL, tid } }, 2));
}

DEF_TEST(the_view_as_pprof_totals_its_nanoseconds)
{
	struct tracerig_archive ar = { .dir = dir, .output = NULL };
	struct tracerig_targets t = { .system_wide = 1 };
	struct tr_wall_pprof pb = { 0 };
	struct pp_builder *on = pp_new(cpu, 2, cpu[1], 1000000),
			  *off = pp_new(&offcpu, 1, offcpu, 0);
	char *gz;

	CHECK_NOT_NULL(on);
	CHECK_NOT_NULL(off);
	add_named(on, "spin", "main", 77, 77, (int64_t[]){ 1, 1000000 });
	add_named(off, "read", "main", 42, 42, (int64_t[]){ 1500000 });
	add_named(off, "read", "main", 42, 43, (int64_t[]){ 2000 });
	EXPECT_EQ_INT(0, take("perf_events", TRACERIG_TIME_ONCPU,
			      lines("other-77;other-77;main;spin 1", 1), 1000000, on, NULL));
	EXPECT_EQ_INT(
		0, take("ebpf", TRACERIG_TIME_OFFCPU,
			lines("app-42;app-42;main;read 1500\napp-42;worker-43;main;read 2", 1000),
			1, off, NULL));
	EXPECT_EQ_INT(0, write_wall(&ar, &t, &pb));
	EXPECT_EQ_INT(1, pb.written);
	/* One pprof sample per stack and thread; 1 ms on the CPU and 1502 us off. */
	EXPECT_EQ_INT(3, pb.samples);
	EXPECT_EQ_INT(2502000, pb.total);
	gz = get("wall.pb.gz");
	CHECK_NOT_NULL(gz);
	EXPECT_EQ_INT(0x1f, (unsigned char)gz[0]); /* gzip's magic */
	EXPECT_EQ_INT(0x8b, (unsigned char)gz[1]);
	free(gz);
	rm("wall.pb.gz");

	/* Without pprof, no wall.pb.gz. */
	EXPECT_EQ_INT(0, take("perf_events", TRACERIG_TIME_ONCPU, lines("a-1;a-1;f 1", 1), 1000,
			      NULL, NULL));
	EXPECT_EQ_INT(
		0, take("ebpf", TRACERIG_TIME_OFFCPU, lines("a-1;a-1;g 1", 1000), 1, NULL, NULL));
	pb = (struct tr_wall_pprof){ 0 };
	EXPECT_EQ_INT(0, write_wall(&ar, &t, &pb));
	EXPECT_EQ_INT(0, pb.written);
	gz = get("wall.pb.gz");
	EXPECT_TRUE(gz == NULL);
	free(gz);
	rm("wall.folded");
	rm("wall.svg");
}

static Perftools__Profiles__Profile *get_pprof(const char *name)
{
	static uint8_t buf[1 << 20];
	Perftools__Profiles__Profile *p;
	char path[4096];
	gzFile z;
	int n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	z = gzopen(path, "rb");
	if (!z)
		return NULL;
	n = gzread(z, buf, sizeof(buf));
	gzclose(z);
	if (n < 0)
		return NULL;
	p = perftools__profiles__profile__unpack(NULL, (size_t)n, buf);
	if (!p)
		TEST_FAIL("%s is no profile", path);
	return p;
}

static const char *loc_name(const Perftools__Profiles__Profile *p, uint64_t id)
{
	const Perftools__Profiles__Location *l = p->location[id - 1];

	return l->n_line ? p->string_table[p->function[l->line[0]->function_id - 1]->name] : "";
}

static int64_t label_num(const Perftools__Profiles__Profile *p,
			 const Perftools__Profiles__Sample *s, const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (strcmp(p->string_table[s->label[i]->key], key) == 0)
			return s->label[i]->num;
	return -1;
}

DEF_TEST(the_pprof_keeps_the_mappings_of_the_views_profiles)
{
	struct tracerig_archive ar = { .dir = dir, .output = NULL };
	struct tracerig_targets t = { .command_pid = 42 };
	struct tracerig_window w = { 1000000000, 3500000000, 1790000000123456789 };
	struct tr_wall_pprof pb = { 0 };
	struct pp_builder *b = pp_new(cpu, 2, cpu[1], 1000000),
			  *off = pp_new(&offcpu, 1, offcpu, 0);
	Perftools__Profiles__Profile *p;
	uint64_t app, kernel, ids[3], off_ids[4];
	int seen[2] = { 0, 0 };

	CHECK_NOT_NULL(b);
	CHECK_NOT_NULL(off);
	app = pp_mapping(b, 0x1000, 0x3000, 0x1000, "/usr/bin/app", "abcdef0123");
	kernel = pp_mapping(b, 0xffffffff81000000, ~0ull, 0, "[kernel.kallsyms]", "5678");
	ids[0] = pp_location(b, kernel, 0xffffffff81001234, "do_work");
	ids[1] = pp_location(b, app, 0x1200, "compute");
	ids[2] = pp_location(b, app, 0x1100, "main");
	/* 3 samples of PID 42 (2.9 ms measured), 1 of PID 77, no process
	 * of the session. */
	EXPECT_EQ_INT(0, pp_add(b, ids, 3, (int64_t[]){ 3, 2900000 },
				(struct pp_label[]){ { "pid", NULL, 42 }, { "tid", NULL, 42 },
						     { "comm", "app", 0 } }, 3));
	EXPECT_EQ_INT(0, pp_add(b, ids + 1, 2, (int64_t[]){ 1, 1000000 },
				(struct pp_label[]){ { "pid", NULL, 77 } }, 1));
	/* 1.5 ms off the CPU in a thread of PID 42, in the kernel then in
	 * libc, which the off-CPU view's profile maps at another address. */
	kernel = pp_mapping(off, 0xffffffff81000000, ~0ull, 0, "[kernel.kallsyms]", "5678");
	off_ids[0] = pp_location(off, kernel, 0xffffffff81005678, "pipe_read");
	app = pp_mapping(off, 0x7000, 0x9000, 0x1000, "/usr/bin/app", "abcdef0123");
	off_ids[1] = pp_location(off, app, 0x7300, "read");
	off_ids[2] = pp_location(off, app, 0x7100, "main");
	EXPECT_EQ_INT(0,
		      pp_add(off, off_ids, 3, (int64_t[]){ 1500000 },
			     (struct pp_label[]){ { "pid", NULL, 42 }, { "tid", NULL, 43 } }, 2));
	EXPECT_EQ_INT(0, take("perf_events", TRACERIG_TIME_ONCPU,
			      lines("app-42;app-42;main;compute;do_work_[k] 3\n"
				    "other-77;other-77;main;compute 1",
				    1),
			      1000000, b, &w));
	EXPECT_EQ_INT(0, take("ebpf", TRACERIG_TIME_OFFCPU,
			      lines("app-42;worker-43;main;read;pipe_read_[k] 1500", 1000), 1, off,
			      &w));
	EXPECT_EQ_INT(0, write_wall(&ar, &t, &pb));
	EXPECT_EQ_INT(2, pb.samples);
	EXPECT_EQ_INT(2900000 + 1500000, pb.total);
	p = get_pprof("wall.pb.gz");
	CHECK_NOT_NULL(p);
	EXPECT_EQ_INT(1790000000123456789, p->time_nanos);
	EXPECT_EQ_INT(2500000000, p->duration_nanos);
	EXPECT_EQ_INT(2, p->n_sample);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const char *mark = loc_name(p, s->location_id[0]);

		EXPECT_EQ_INT(42, label_num(p, s, "pid"));
		if (strcmp(mark, "[on-cpu]") == 0) {
			const Perftools__Profiles__Location *l = p->location[s->location_id[2] - 1];
			const Perftools__Profiles__Mapping *m = p->mapping[l->mapping_id - 1];

			seen[0]++;
			/* As measured, not 3 samples at the view's 1 ms. */
			EXPECT_EQ_INT(2900000, s->value[0]);
			EXPECT_EQ_INT(4, s->n_location_id);
			EXPECT_EQ_STR("do_work", loc_name(p, s->location_id[1]));
			EXPECT_EQ_STR("compute", loc_name(p, s->location_id[2]));
			EXPECT_EQ_INT(0x1200, l->address);
			EXPECT_EQ_STR("/usr/bin/app", p->string_table[m->filename]);
			EXPECT_EQ_STR("abcdef0123", p->string_table[m->build_id]);
			EXPECT_EQ_INT(0x1000, m->memory_start);
			EXPECT_EQ_INT(0x1000, m->file_offset);
			l = p->location[s->location_id[1] - 1];
			EXPECT_EQ_STR("[kernel.kallsyms]",
				      p->string_table[p->mapping[l->mapping_id - 1]->filename]);
		} else {
			const Perftools__Profiles__Location *k = p->location[s->location_id[1] - 1];
			const Perftools__Profiles__Location *r = p->location[s->location_id[2] - 1];

			seen[1]++;
			EXPECT_EQ_STR("[off-cpu]", mark);
			EXPECT_EQ_INT(1500000, s->value[0]);
			EXPECT_EQ_INT(43, label_num(p, s, "tid"));
			EXPECT_EQ_STR("pipe_read", loc_name(p, s->location_id[1]));
			EXPECT_EQ_STR("[kernel.kallsyms]",
				      p->string_table[p->mapping[k->mapping_id - 1]->filename]);
			/* The same bytes of the app as the on-CPU view's, moved to
			 * its address: one mapping. */
			EXPECT_EQ_STR("read", loc_name(p, s->location_id[2]));
			EXPECT_EQ_INT(0x1300, r->address);
			EXPECT_EQ_STR("/usr/bin/app",
				      p->string_table[p->mapping[r->mapping_id - 1]->filename]);
		}
	}
	EXPECT_EQ_INT(1, seen[0]);
	EXPECT_EQ_INT(1, seen[1]);
	perftools__profiles__profile__free_unpacked(p, NULL);

	/* A view without a profile (pprof off for its sink): no wall.pb.gz
	 * rather than one without that view. */
	EXPECT_EQ_INT(0, take("perf_events", TRACERIG_TIME_ONCPU, lines("app-42;app-42;f 1", 1),
			      1000, NULL, NULL));
	off = pp_new(&offcpu, 1, offcpu, 0);
	CHECK_NOT_NULL(off);
	add_named(off, "read", "main", 42, 42, (int64_t[]){ 1000 });
	EXPECT_EQ_INT(0, take("ebpf", TRACERIG_TIME_OFFCPU, lines("app-42;app-42;g 1", 1000), 1,
			      off, NULL));
	rm("wall.pb.gz");
	pb = (struct tr_wall_pprof){ 0 };
	EXPECT_EQ_INT(0, write_wall(&ar, &t, &pb));
	EXPECT_EQ_INT(0, pb.written);
	EXPECT_TRUE(get_pprof("wall.pb.gz") == NULL);
	rm("wall.folded");
	rm("wall.svg");
}

DEF_TEST(one_side_alone_writes_nothing_and_is_forgotten)
{
	struct tracerig_archive ar = { .dir = dir, .output = NULL };
	struct tracerig_targets t = { .system_wide = 1 };
	char *out;

	EXPECT_EQ_INT(
		0, take("ebpf", TRACERIG_TIME_OFFCPU, lines("a-1;a-1;f 1", 1000), 1, NULL, NULL));
	EXPECT_EQ_INT(0, write_wall(&ar, &t, NULL));
	out = get("wall.folded");
	EXPECT_TRUE(out == NULL);
	free(out);
	/* The next session starts with no views. */
	EXPECT_EQ_INT(0, take("perf_events", TRACERIG_TIME_ONCPU, lines("a-1;a-1;f 1", 1), 1, NULL,
			      NULL));
	EXPECT_EQ_INT(0, write_wall(&ar, &t, NULL));
	out = get("wall.folded");
	EXPECT_TRUE(out == NULL);
	free(out);
}

DEF_TEST(bad_views_are_refused_and_freed)
{
	EXPECT_EQ_INT(-EINVAL, take("x", TRACERIG_TIME_ONCPU, NULL, 1, NULL, NULL));
	EXPECT_EQ_INT(-EINVAL, take("x", TRACERIG_TIME_ONCPU, lines("a-1;a-1;f 1", 1), 0,
				    pp_new(cpu, 2, cpu[1], 1), NULL));
	EXPECT_EQ_INT(-EINVAL,
		      take("x", (enum tracerig_time)7, lines("a-1;a-1;f 1", 1), 1, NULL, NULL));
}

/* perf_events' samples and ebpf's sampler would count the same CPU time
 * twice: the first on-CPU view offered stays, a second source's goes. */
DEF_TEST(one_source_of_cpu_time)
{
	struct tracerig_targets t = { .system_wide = 1 };
	struct tracerig_archive ar = { .dir = dir, .output = NULL };
	char *out;

	EXPECT_EQ_INT(0, take("perf_events", TRACERIG_TIME_ONCPU, lines("a-1;a-1;f 2", 1), 1000,
			      NULL, NULL));
	EXPECT_EQ_INT(0,
		      take("ebpf", TRACERIG_TIME_ONCPU, lines("a-1;a-1;g 5", 1), 1000, NULL, NULL));
	EXPECT_EQ_INT(
		0, take("ebpf", TRACERIG_TIME_OFFCPU, lines("a-1;a-1;h 3", 1000), 1, NULL, NULL));
	EXPECT_EQ_INT(0, write_wall(&ar, &t, NULL));
	out = get("wall.folded");
	EXPECT_EQ_STR("a-1;a-1;f;[on-cpu] 2\na-1;a-1;h;[off-cpu] 3\n", out);
	free(out);
	rm("wall.folded");
	rm("wall.svg");
}

/* A long session's lines wait on disk (a sink's memory_limit): joined all
 * the same. */
DEF_TEST(lines_spilled_to_disk_are_joined)
{
	struct tracerig_targets t = { .system_wide = 1 };
	struct tracerig_archive ar = { .dir = dir, .output = NULL };
	struct tr_folded *on = tr_folded_new();
	char line[64], *out;
	size_t runs = 0;
	long seen = 0;

	CHECK_NOT_NULL(on);
	EXPECT_EQ_INT(0, tr_folded_spill(on, dir, 4096));
	for (int i = 0; i < 2000; i++) {
		int n = snprintf(line, sizeof(line), "p-%d;p-%d;f%d", 100 + i % 500, 100 + i % 500,
				 i % 3);

		EXPECT_EQ_INT(0, tr_folded_add(on, line, (size_t)n, 1));
	}
	EXPECT_EQ_INT(0, tr_folded_spilled(on, &runs));
	EXPECT_TRUE(runs >= 2);
	EXPECT_EQ_INT(0, take("perf_events", TRACERIG_TIME_ONCPU, on, 1000, NULL, NULL));
	EXPECT_EQ_INT(0, take("ebpf", TRACERIG_TIME_OFFCPU, lines("p-100;p-100;w 7", 1000), 1, NULL,
			      NULL));
	EXPECT_EQ_INT(0, write_wall(&ar, &t, NULL));
	out = get("wall.folded");
	CHECK_NOT_NULL(out);
	/* 500 processes' 3 stacks (each line once, summed across runs: 1500
	 * of them), and the off-CPU one. */
	for (char *p = out; (p = strchr(p, '\n')) != NULL; p++)
		seen++;
	EXPECT_EQ_INT(1501, seen);
	EXPECT_CONTAINS("p-100;p-100;f0;[on-cpu] 2\n", out);
	free(out);
	rm("wall.folded");
	rm("wall.svg");
}

int main(void)
{
	observed = tr_pids_new();
	if (!observed || !mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN_TEST(views_join_into_time_marked_and_filtered);
	RUN_TEST(the_whole_machine_keeps_every_process);
	RUN_TEST(the_view_as_pprof_totals_its_nanoseconds);
	RUN_TEST(the_pprof_keeps_the_mappings_of_the_views_profiles);
	RUN_TEST(one_side_alone_writes_nothing_and_is_forgotten);
	RUN_TEST(bad_views_are_refused_and_freed);
	RUN_TEST(one_source_of_cpu_time);
	RUN_TEST(lines_spilled_to_disk_are_joined);
	EXPECT_EQ_INT(0, rmdir(dir));
	tr_pids_free(observed);
	TEST_MAIN_END();
}
