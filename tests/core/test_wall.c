/* The core's wall-clock step (core/views/wall.c): the declared views joined into
 * wall.folded (and wall.pb.gz, with the mappings of the profiles staged
 * beside the views, dated by the session's window), samples turned into
 * time at their declared worth, leaves marked, other processes left out,
 * nothing written without both sides. */
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
#include "../../lib/pprof.h"
#include "../testing.h"
#include "profile.pb-c.h"

static char dir[] = "/tmp/tracerig-test-wall.XXXXXX";
/* The session's registry of observed processes. */
static struct tr_pids *observed;

static void put(const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		TEST_FAIL("cannot write %s", path);
}

static char *get(const char *name)
{
	char path[4096], *buf = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	if (getdelim(&buf, &cap, '\0', f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

static void rm(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/* The session's views, as the folded_view service fills them. */
static struct tr_wall_views *the_views(void)
{
	static struct tr_wall_views *views;

	if (!views)
		views = tr_wall_views_new();
	return views;
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

/* Stages the two views, declares them (on-CPU at `oncpu_ns` a sample, off-CPU
 * in microseconds), runs the step and returns wall.folded (NULL: none). */
static char *join(const char *cpu, uint64_t oncpu_ns, const char *off,
		  const struct tracerig_targets *t)
{
	struct tracerig_archive ar = { .dir = dir, .output = NULL };

	put("cpu.folded", cpu);
	put("offcpu.folded", off);
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "perf_events", "cpu.folded",
					 TRACERIG_TIME_ONCPU, oncpu_ns, NULL));
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "ebpf", "offcpu.folded", TRACERIG_TIME_OFFCPU,
					 1000, NULL));
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
		   "child-43;child-43;run 2\n"
		   "# a comment 5\n"
		   "garbage\n", 10000000,
		   "app-42;worker-44;main;read;pipe_read_[k] 250000\n"
		   "other-77;other-77;main;read 9\n", &t);
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

DEF_TEST(the_view_as_pprof_totals_its_nanoseconds)
{
	struct tracerig_archive ar = { .dir = dir, .output = NULL };
	struct tracerig_targets t = { .system_wide = 1 };
	struct tr_wall_pprof pb = { 0 };
	char *gz;

	put("cpu.folded", "other-77;other-77;main;spin 1\n");
	put("offcpu.folded", "app-42;app-42;read 1500\napp-42;worker-43;read 2\n");
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "perf_events", "cpu.folded",
					 TRACERIG_TIME_ONCPU, 1000000, NULL));
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "ebpf", "offcpu.folded", TRACERIG_TIME_OFFCPU,
					 1000, NULL));
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
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "perf_events", "cpu.folded",
					 TRACERIG_TIME_ONCPU, 1000000, NULL));
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "ebpf", "offcpu.folded", TRACERIG_TIME_OFFCPU,
					 1000, NULL));
	EXPECT_EQ_INT(0, write_wall(&ar, &t, NULL));
	gz = get("wall.pb.gz");
	EXPECT_TRUE(gz == NULL);
	free(gz);
	rm("wall.folded");
	rm("wall.svg");
}

/* A staged profile, as perf_events writes cpu.pb.gz beside cpu.folded. */
static void put_pprof(const char *name, struct pp_builder *b)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || pp_write_gz(b, f) != 0 || fclose(f) != 0)
		TEST_FAIL("cannot write %s", path);
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

DEF_TEST(the_pprof_keeps_the_mappings_of_the_profiles_beside_the_views)
{
	static const struct pp_value_type cpu[2] = { { "samples", "count" },
						     { "cpu", "nanoseconds" } };
	struct tracerig_archive ar = { .dir = dir, .output = NULL };
	struct tracerig_targets t = { .command_pid = 42 };
	struct tracerig_window w = { 1000000000, 3500000000, 1790000000123456789 };
	struct tr_wall_pprof pb = { 0 };
	struct pp_builder *b = pp_new(cpu, 2, cpu[1], 1000000);
	Perftools__Profiles__Profile *p;
	uint64_t app, kernel, ids[3];
	int seen[2] = { 0, 0 };

	CHECK_NOT_NULL(b);
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
	put_pprof("cpu.pb.gz", b);
	pp_free(b);
	put("cpu.folded", "app-42;app-42;main;compute;do_work_[k] 3\nother-77;other-77;main;compute 1\n");
	/* No offcpu.pb.gz: that view comes from its lines. */
	put("offcpu.folded", "app-42;worker-43;main;read;pipe_read_[k] 1500\n");
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "perf_events", "cpu.folded",
					 TRACERIG_TIME_ONCPU, 1000000, &w));
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "ebpf", "offcpu.folded", TRACERIG_TIME_OFFCPU,
					 1000, &w));
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

			seen[1]++;
			EXPECT_EQ_STR("[off-cpu]", mark);
			EXPECT_EQ_INT(1500000, s->value[0]);
			EXPECT_EQ_INT(43, label_num(p, s, "tid"));
			/* From its line: names, the kernel's frames in the kernel's mapping. */
			EXPECT_EQ_STR("pipe_read", loc_name(p, s->location_id[1]));
			EXPECT_EQ_STR("[kernel.kallsyms]",
				      p->string_table[p->mapping[k->mapping_id - 1]->filename]);
			EXPECT_EQ_INT(0, p->location[s->location_id[3] - 1]->mapping_id);
		}
	}
	EXPECT_EQ_INT(1, seen[0]);
	EXPECT_EQ_INT(1, seen[1]);
	perftools__profiles__profile__free_unpacked(p, NULL);

	/* A profile beside the view that is none: the view from its lines. */
	put("cpu.pb.gz", "not a profile\n");
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "perf_events", "cpu.folded",
					 TRACERIG_TIME_ONCPU, 1000000, NULL));
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "ebpf", "offcpu.folded", TRACERIG_TIME_OFFCPU,
					 1000, NULL));
	EXPECT_EQ_INT(0, write_wall(&ar, &t, &pb));
	EXPECT_EQ_INT(2, pb.samples);
	EXPECT_EQ_INT(3000000 + 1500000, pb.total);
	p = get_pprof("wall.pb.gz");
	CHECK_NOT_NULL(p);
	EXPECT_EQ_INT(0, p->time_nanos);
	perftools__profiles__profile__free_unpacked(p, NULL);
	rm("cpu.pb.gz");
	rm("wall.pb.gz");
	rm("wall.folded");
	rm("wall.svg");
}

DEF_TEST(one_side_alone_writes_nothing_and_is_forgotten)
{
	struct tracerig_archive ar = { .dir = dir, .output = NULL };
	struct tracerig_targets t = { .system_wide = 1 };
	char *out;

	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "ebpf", "offcpu.folded", TRACERIG_TIME_OFFCPU,
					 1000, NULL));
	EXPECT_EQ_INT(0, write_wall(&ar, &t, NULL));
	out = get("wall.folded");
	EXPECT_TRUE(out == NULL);
	free(out);
	/* The next session starts with no views. */
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "perf_events", "cpu.folded",
					 TRACERIG_TIME_ONCPU, 1, NULL));
	EXPECT_EQ_INT(0, write_wall(&ar, &t, NULL));
	out = get("wall.folded");
	EXPECT_TRUE(out == NULL);
	free(out);
}

DEF_TEST(bad_declarations_are_refused)
{
	EXPECT_EQ_INT(-EINVAL, tr_wall_declare(the_views(), "x", "../cpu.folded",
					       TRACERIG_TIME_ONCPU, 1, NULL));
	EXPECT_EQ_INT(-EINVAL, tr_wall_declare(the_views(), "x", "cpu.folded", TRACERIG_TIME_ONCPU,
					       0, NULL));
	EXPECT_EQ_INT(-EINVAL, tr_wall_declare(the_views(), "x", "cpu.folded",
					       (enum tracerig_time)7, 1, NULL));
	EXPECT_EQ_INT(-EINVAL,
		      tr_wall_declare(the_views(), "x", NULL, TRACERIG_TIME_ONCPU, 1, NULL));
}

DEF_TEST(a_declared_file_that_is_missing_is_an_error)
{
	struct tracerig_archive ar = { .dir = dir, .output = NULL };
	struct tracerig_targets t = { .system_wide = 1 };

	put("cpu.folded", "a-1;a-1;f 1\n");
	rm("offcpu.folded");
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "a", "cpu.folded", TRACERIG_TIME_ONCPU, 1000,
					 NULL));
	EXPECT_EQ_INT(0, tr_wall_declare(the_views(), "b", "offcpu.folded", TRACERIG_TIME_OFFCPU,
					 1000, NULL));
	EXPECT_EQ_INT(-ENOENT, write_wall(&ar, &t, NULL));
	EXPECT_TRUE(get("wall.folded") == NULL);
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
	RUN_TEST(the_pprof_keeps_the_mappings_of_the_profiles_beside_the_views);
	RUN_TEST(one_side_alone_writes_nothing_and_is_forgotten);
	RUN_TEST(bad_declarations_are_refused);
	RUN_TEST(a_declared_file_that_is_missing_is_an_error);
	rm("cpu.folded");
	rm("offcpu.folded");
	rmdir(dir);
	tr_pids_free(observed);
	TEST_MAIN_END();
}
