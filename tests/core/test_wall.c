/* The core's wall-clock step (core/wall.c): the declared views joined into
 * wall.folded (and wall.pb.gz), samples turned into time at their declared
 * worth, leaves marked, other processes left out, nothing written without
 * both sides. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/pids.h"
#include "../../core/staging.h"
#include "../../core/wall.h"
#include "../testing.h"

static char dir[] = "/tmp/tracerig-test-wall.XXXXXX";

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

/* Stages the two views, declares them (on-CPU at `oncpu_ns` a sample, off-CPU
 * in microseconds), runs the step and returns wall.folded (NULL: none). */
static char *join(const char *cpu, uint64_t oncpu_ns, const char *off,
		  const struct tracerig_targets *t)
{
	struct tracerig_archive ar = { .dir = dir, .output = NULL };

	put("cpu.folded", cpu);
	put("offcpu.folded", off);
	EXPECT_EQ_INT(0, tr_wall_declare("perf_events", "cpu.folded", TRACERIG_TIME_ONCPU,
					 oncpu_ns));
	EXPECT_EQ_INT(0, tr_wall_declare("ebpf", "offcpu.folded", TRACERIG_TIME_OFFCPU, 1000));
	EXPECT_EQ_INT(0, tr_wall_write(&ar, t, NULL));
	return get("wall.folded");
}

DEF_TEST(views_join_into_time_marked_and_filtered)
{
	struct tracerig_targets t = { .command_pid = 42 };
	char *out, *svg;

	/* 100 Hz: a sample is 10 ms.  PID 77 is no process of the session;
	 * 43 is a child some source observed. */
	tr_pids_observe(43);
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
	EXPECT_EQ_INT(0, tr_wall_declare("perf_events", "cpu.folded", TRACERIG_TIME_ONCPU, 1000000));
	EXPECT_EQ_INT(0, tr_wall_declare("ebpf", "offcpu.folded", TRACERIG_TIME_OFFCPU, 1000));
	EXPECT_EQ_INT(0, tr_wall_write(&ar, &t, &pb));
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
	EXPECT_EQ_INT(0, tr_wall_declare("perf_events", "cpu.folded", TRACERIG_TIME_ONCPU, 1000000));
	EXPECT_EQ_INT(0, tr_wall_declare("ebpf", "offcpu.folded", TRACERIG_TIME_OFFCPU, 1000));
	EXPECT_EQ_INT(0, tr_wall_write(&ar, &t, NULL));
	gz = get("wall.pb.gz");
	EXPECT_TRUE(gz == NULL);
	free(gz);
	rm("wall.folded");
	rm("wall.svg");
}

DEF_TEST(one_side_alone_writes_nothing_and_is_forgotten)
{
	struct tracerig_archive ar = { .dir = dir, .output = NULL };
	struct tracerig_targets t = { .system_wide = 1 };
	char *out;

	EXPECT_EQ_INT(0, tr_wall_declare("ebpf", "offcpu.folded", TRACERIG_TIME_OFFCPU, 1000));
	EXPECT_EQ_INT(0, tr_wall_write(&ar, &t, NULL));
	out = get("wall.folded");
	EXPECT_TRUE(out == NULL);
	free(out);
	/* The next session starts with no views. */
	EXPECT_EQ_INT(0, tr_wall_declare("perf_events", "cpu.folded", TRACERIG_TIME_ONCPU, 1));
	EXPECT_EQ_INT(0, tr_wall_write(&ar, &t, NULL));
	out = get("wall.folded");
	EXPECT_TRUE(out == NULL);
	free(out);
}

DEF_TEST(bad_declarations_are_refused)
{
	EXPECT_EQ_INT(-EINVAL, tr_wall_declare("x", "../cpu.folded", TRACERIG_TIME_ONCPU, 1));
	EXPECT_EQ_INT(-EINVAL, tr_wall_declare("x", "cpu.folded", TRACERIG_TIME_ONCPU, 0));
	EXPECT_EQ_INT(-EINVAL, tr_wall_declare("x", "cpu.folded", (enum tracerig_time)7, 1));
	EXPECT_EQ_INT(-EINVAL, tr_wall_declare("x", NULL, TRACERIG_TIME_ONCPU, 1));
}

DEF_TEST(a_declared_file_that_is_missing_is_an_error)
{
	struct tracerig_archive ar = { .dir = dir, .output = NULL };
	struct tracerig_targets t = { .system_wide = 1 };

	put("cpu.folded", "a-1;a-1;f 1\n");
	rm("offcpu.folded");
	EXPECT_EQ_INT(0, tr_wall_declare("a", "cpu.folded", TRACERIG_TIME_ONCPU, 1000));
	EXPECT_EQ_INT(0, tr_wall_declare("b", "offcpu.folded", TRACERIG_TIME_OFFCPU, 1000));
	EXPECT_EQ_INT(-ENOENT, tr_wall_write(&ar, &t, NULL));
	EXPECT_TRUE(get("wall.folded") == NULL);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN_TEST(views_join_into_time_marked_and_filtered);
	RUN_TEST(the_whole_machine_keeps_every_process);
	RUN_TEST(the_view_as_pprof_totals_its_nanoseconds);
	RUN_TEST(one_side_alone_writes_nothing_and_is_forgotten);
	RUN_TEST(bad_declarations_are_refused);
	RUN_TEST(a_declared_file_that_is_missing_is_an_error);
	rm("cpu.folded");
	rm("offcpu.folded");
	rmdir(dir);
	TEST_MAIN_END();
}
