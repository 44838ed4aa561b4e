/* The stack sink (core/views/stacks.c): stacks as addresses become folded
 * lines rooted "comm-PID;tcomm-TID", user frames outer to inner then the
 * kernel's, lost parts shown, runs of unknown frames folded; written as
 * NAME.folded (off-CPU in microseconds), NAME.svg and NAME.pb.gz, and
 * handed to the wall-clock view (lines and profile, in memory) at the
 * worth of one unit. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../core/archive/staging.h"
#include "../../core/views/stacks.h"
#include "../../lib/folded.h"
#include "../../lib/pprof.h"
#include "../testing.h"

/* A symbolizer stand-in: addresses name themselves ("u1", "ka1_[k]"),
 * those with bit 16 set are in no known object, 0xbad has a name that
 * would break the format had the symbolizer not sanitized it. */
static int frame_name(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
		      uint64_t time_ns, const char **name, struct tracerig_symbol *sym)
{
	static char buf[8][128];
	static unsigned next;
	char *b = buf[next++ % 8];

	(void)ctx;
	(void)pid;
	(void)time_ns;
	(void)sym;
	if (addr & 0x10000) {
		*name = kernel ? "[unknown]_[k]" : "[unknown]";
		return -ENOENT;
	}
	if (addr == 0xbad)
		*name = "operator:weird?name";
	else if (addr >= 0x100000) /* a long name, for the deep stacks */
		snprintf(b, sizeof(buf[0]), "%0100" PRIx64, addr), *name = b;
	else
		snprintf(b, sizeof(buf[0]), "%s%" PRIx64 "%s", kernel ? "k" : "u", addr,
			 kernel ? "_[k]" : ""),
			*name = b;
	return 0;
}

static void log_line(struct tracerig_ctx *ctx, enum tracerig_log_level level, const char *fmt, ...)
	TRACERIG_PRINTF(3, 4);
static void log_line(struct tracerig_ctx *ctx, enum tracerig_log_level level, const char *fmt, ...)
{
	va_list ap;

	(void)ctx;
	(void)level;
	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static FILE *archive_fopen(struct tracerig_archive *ar, const char *name)
{
	return tr_staging_fopen_entry(ar, name);
}

/* What the sink told the core. */
static struct {
	int offered;
	enum tracerig_time what;
	uint64_t ns_per_unit;
	size_t lines, samples; /* of the view handed over */
	char pprof[64];
	uint64_t pprof_samples, pprof_total;
} told;

/* The wall-clock view's side (tr_wall_take): it owns what it is handed. */
static int wall_view(struct tracerig_ctx *ctx, struct tr_wall_view *v)
{
	(void)ctx;
	told.offered++;
	told.what = v->what;
	told.ns_per_unit = v->ns_per_unit;
	told.lines = tr_folded_count(v->lines);
	told.samples = v->profile ? pp_sample_count(v->profile) : 0;
	tr_folded_free(v->lines);
	pp_free(v->profile);
	return 0;
}

static int pprof_entry(struct tracerig_ctx *ctx, const char *name, uint64_t samples, uint64_t total)
{
	(void)ctx;
	snprintf(told.pprof, sizeof(told.pprof), "%s", name);
	told.pprof_samples = samples;
	told.pprof_total = total;
	return 0;
}

static const char *process_cgroup(struct tracerig_ctx *ctx, pid_t pid)
{
	(void)ctx;
	return pid == 42 ? "/system.slice/app.service" : NULL;
}

static int no_mapping(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
		      struct tracerig_frame_mapping *out)
{
	(void)ctx;
	(void)pid;
	(void)addr;
	(void)kernel;
	(void)out;
	return -ENOENT;
}

static int no_window(struct tracerig_ctx *ctx, struct tracerig_archive *ar,
		     struct tracerig_window *out)
{
	(void)ctx;
	(void)ar;
	(void)out;
	return -ENOENT;
}

/* Nothing moves in the stand-in's processes. */
static int same_generation(struct tracerig_ctx *ctx, pid_t pid, uint32_t *gen)
{
	(void)ctx;
	(void)pid;
	*gen = 1;
	return 0;
}

static const struct tracerig_symbol_services symbols = { .frame_name = frame_name };
static const struct tracerig_run_services run = { .log = log_line, .clock_ns = clock_ns };
static const struct tracerig_archive_services archive = { .fopen = archive_fopen };
static const struct tracerig_internal_services internal = {
	.pprof_entry = pprof_entry,
	.process_cgroup = process_cgroup,
	.symbolizer_mapping = no_mapping,
	.archive_window = no_window,
	.frame_generation = same_generation,
};
static const struct tracerig_services svc = {
	.run = &run, .symbols = &symbols, .archive = &archive, .internal = &internal
};

/* A sink for `name`, NAME.pb.gz when `pprof`. */
static struct tracerig_stacks *open_sink(const char *name, enum tracerig_time what,
					 const char *title, unsigned flags, int pprof)
{
	struct tracerig_stacks_spec spec = {
		.name = name, .title = title, .what = what, .flags = flags
	};

	return tr_stacks_open(&svc, NULL, &spec, pprof, wall_view);
}

static int first_line(void *arg, const char *line, uint64_t weight)
{
	(void)weight;
	snprintf(arg, 1024, "%s", line);
	return 1;
}

/* The folded line of one stack. */
static void line_of(const struct tracerig_stack *st, char *line, uint64_t *folded_away)
{
	struct tracerig_stacks *s = open_sink("t", TRACERIG_TIME_OFFCPU, "t", 0, 0);
	struct tracerig_stacks_stats stats;

	line[0] = '\0';
	if (!s)
		return;
	EXPECT_EQ_INT(0, tr_stacks_add(s, st, 1));
	(void)tr_folded_each(tr_stacks_folded(s), first_line, line);
	tr_stacks_stats(s, &stats);
	if (folded_away)
		*folded_away = stats.folded_away;
	tr_stacks_close(s);
}

DEF_TEST(line_is_process_thread_then_user_outer_to_inner_then_kernel)
{
	uint64_t u[] = { 0x1, 0x2, 0x3 }; /* innermost first, as the stack map gives them */
	uint64_t k[] = { 0xa1, 0xa2 };
	struct tracerig_stack st = { .pid = 42,
				     .tid = 43,
				     .comm = "app",
				     .tcomm = "worker",
				     .user = u,
				     .n_user = 3,
				     .kernel = k,
				     .n_kernel = 2,
				     .ns = 1 };
	char line[1024];

	line_of(&st, line, NULL);
	EXPECT_EQ_STR("app-42;worker-43;u3;u2;u1;ka2_[k];ka1_[k]", line);
}

DEF_TEST(lost_stacks_are_shown_not_hidden)
{
	uint64_t k[] = { 0xa1 };
	struct tracerig_stack st = { .pid = 42,
				     .tid = 43,
				     .comm = "app",
				     .tcomm = "worker",
				     .kernel = k,
				     .n_kernel = 1,
				     .ns = 1,
				     .flags = TRACERIG_STACK_USER_LOST };
	char line[1024];

	line_of(&st, line, NULL);
	EXPECT_EQ_STR("app-42;worker-43;[user stack lost];ka1_[k]", line);
	st.n_kernel = 0;
	st.flags |= TRACERIG_STACK_KERNEL_LOST;
	line_of(&st, line, NULL);
	EXPECT_EQ_STR("app-42;worker-43;[user stack lost];[kernel stack lost]", line);
}

DEF_TEST(names_cannot_break_the_format)
{
	uint64_t u[] = { 0xbad };
	struct tracerig_stack st = { .pid = 7,
				     .tid = 8,
				     .comm = "we;ird",
				     .tcomm = "t\n",
				     .user = u,
				     .n_user = 1,
				     .ns = 1 };
	char line[1024];

	line_of(&st, line, NULL);
	/* The one rule of lib/sanitize.h: the newline becomes "?". */
	EXPECT_EQ_STR("we:ird-7;t?-8;operator:weird?name", line);
	st = (struct tracerig_stack){ .pid = 7, .tid = 8, .comm = "", .ns = 1 };
	line_of(&st, line, NULL);
	EXPECT_EQ_STR("[unknown]-7;[unknown]-8", line);
}

DEF_TEST(runs_of_frames_in_no_object_become_one_unknown_frame)
{
	/* Innermost first: u1, a run of three, u2, a single one, u3. */
	uint64_t u[] = { 0x1, 0x10001, 0x10002, 0x10003, 0x2, 0x10004, 0x3 };
	uint64_t k[] = { 0x10005, 0x10006, 0xa1 };
	struct tracerig_stack st = { .pid = 42,
				     .tid = 43,
				     .comm = "app",
				     .tcomm = "worker",
				     .user = u,
				     .n_user = 7,
				     .kernel = k,
				     .n_kernel = 3,
				     .ns = 1 };
	uint64_t folded_away = 0;
	char line[1024];

	line_of(&st, line, &folded_away);
	EXPECT_EQ_STR("app-42;worker-43;u3;[unknown];u2;[unknown];u1;ka1_[k];[unknown]_[k]", line);
	EXPECT_EQ_INT(3, folded_away);
}

static int line_length(void *arg, const char *line, uint64_t weight)
{
	size_t *len = arg;

	(void)weight;
	*len = strlen(line);
	return strncmp(line, "app-42;worker-43;", 17) == 0 ? 1 : 2;
}

DEF_TEST(too_deep_a_stack_keeps_its_outer_frames)
{
	size_t n = 2000, len = 0;
	uint64_t *u = calloc(n, sizeof(*u));
	struct tracerig_stacks *s = open_sink("t", TRACERIG_TIME_ONCPU, "t", 0, 0);
	struct tracerig_stack st = { .pid = 42,
				     .tid = 43,
				     .comm = "app",
				     .tcomm = "worker",
				     .user = u,
				     .n_user = n,
				     .count = 1 };

	CHECK_NOT_NULL(u);
	CHECK_NOT_NULL(s);
	for (size_t i = 0; i < n; i++)
		u[i] = 0x100000 + i;
	EXPECT_EQ_INT(0, tr_stacks_add(s, &st, 1));
	/* Counted, rooted, cut below 64 KiB of line. */
	EXPECT_EQ_INT(1, tr_folded_each(tr_stacks_folded(s), line_length, &len));
	EXPECT_TRUE(len > 60000 && len < (size_t)64 * 1024);
	/* It ends with a whole frame: the root, then frames of 100 digits
	 * each after their ';', nothing of a frame that did not fit. */
	EXPECT_EQ_INT(0, (int)((len - strlen("app-42;worker-43")) % 101));
	tr_stacks_close(s);
	free(u);
}

static void remove_entries(const char *dir, const char *name)
{
	static const char *const ext[] = { ".folded", ".svg", ".pb.gz" };
	char path[4096];

	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s%s", dir, name, ext[i]);
		unlink(path);
	}
}

DEF_TEST(offcpu_is_written_in_microseconds_and_offered_to_the_wall)
{
	char dir[] = "/tmp/tracerig-test-stacks.XXXXXX";
	struct tracerig_archive ar = { .dir = dir };
	uint64_t u[] = { 0x1, 0x2 }, k[] = { 0xa1 };
	struct tracerig_stack st[] = {
		{ .pid = 42,
		  .tid = 43,
		  .comm = "app",
		  .tcomm = "w",
		  .user = u,
		  .n_user = 2,
		  .kernel = k,
		  .n_kernel = 1,
		  .count = 3,
		  .ns = 2500000 },
		{ .pid = 42,
		  .tid = 43,
		  .comm = "app",
		  .tcomm = "w",
		  .user = u,
		  .n_user = 2,
		  .kernel = k,
		  .n_kernel = 1,
		  .count = 1,
		  .ns = 500000 },
		{ .pid = 9,
		  .tid = 9,
		  .comm = "other",
		  .tcomm = "other",
		  .user = u + 1,
		  .n_user = 1,
		  .count = 1,
		  .ns = 1000 },
	};
	struct tracerig_stacks *s;
	struct tracerig_stacks_stats stats;
	char *folded, *svg;

	CHECK_NOT_NULL(mkdtemp(dir));
	memset(&told, 0, sizeof(told));
	s = open_sink("offcpu", TRACERIG_TIME_OFFCPU, "Off-CPU time", TRACERIG_STACKS_WALL, 1);
	CHECK_NOT_NULL(s);
	EXPECT_EQ_INT(0, tr_stacks_add(s, st, 3));
	EXPECT_EQ_INT(0, tr_stacks_write(s, &ar, &stats));
	tr_stacks_close(s);
	EXPECT_EQ_INT(2, stats.stacks);
	EXPECT_EQ_INT(5, stats.count);
	EXPECT_EQ_INT(3001000, stats.ns);
	folded = tr_test_slurp(dir, "offcpu.folded");
	svg = tr_test_slurp(dir, "offcpu.svg");
	EXPECT_EQ_STR("app-42;w-43;u2;u1;ka1_[k] 3000\nother-9;other-9;u2 1\n",
		      folded ? folded : "");
	EXPECT_TRUE(svg && strstr(svg, "<svg") && strstr(svg, "Off-CPU time") &&
		    strstr(svg, "ka1_[k]"));
	/* The view in nanoseconds, its lines and profile handed over; the
	 * profile's samples are its two stacks' (the labels set them apart),
	 * their nanoseconds. */
	EXPECT_EQ_INT(1, told.offered);
	EXPECT_EQ_INT(TRACERIG_TIME_OFFCPU, told.what);
	EXPECT_EQ_INT(1, told.ns_per_unit);
	EXPECT_EQ_INT(2, told.lines);
	EXPECT_EQ_INT(2, told.samples);
	EXPECT_EQ_STR("offcpu.pb.gz", told.pprof);
	EXPECT_EQ_INT(2, told.pprof_samples);
	EXPECT_EQ_INT(3001000, told.pprof_total);
	free(folded);
	free(svg);
	remove_entries(dir, "offcpu");
	EXPECT_EQ_INT(0, rmdir(dir));
}

DEF_TEST(oncpu_samples_are_counted_and_worth_their_mean_period)
{
	char dir[] = "/tmp/tracerig-test-stacks.XXXXXX";
	struct tracerig_archive ar = { .dir = dir };
	uint64_t u[] = { 0x1 };
	struct tracerig_stack st[] = {
		{ .pid = 42,
		  .tid = 42,
		  .comm = "app",
		  .tcomm = "app",
		  .user = u,
		  .n_user = 1,
		  .count = 3,
		  .ns = 3000001 },
		{ .pid = 42, .tid = 42, .comm = "app", .tcomm = "app", .count = 1, .ns = 1000003 },
	};
	struct tracerig_stacks *s;
	struct tracerig_stacks_stats stats;
	char *folded;

	CHECK_NOT_NULL(mkdtemp(dir));
	memset(&told, 0, sizeof(told));
	s = open_sink("oncpu", TRACERIG_TIME_ONCPU, "On-CPU samples", TRACERIG_STACKS_WALL, 0);
	CHECK_NOT_NULL(s);
	EXPECT_EQ_INT(0, tr_stacks_add(s, st, 2));
	EXPECT_EQ_INT(0, tr_stacks_write(s, &ar, &stats));
	tr_stacks_close(s);
	EXPECT_EQ_INT(1000001, stats.ns_per_sample);
	folded = tr_test_slurp(dir, "oncpu.folded");
	EXPECT_EQ_STR("app-42;app-42 1\napp-42;app-42;u1 3\n", folded ? folded : "");
	EXPECT_EQ_INT(1, told.offered);
	EXPECT_EQ_INT(1000001, told.ns_per_unit);
	EXPECT_EQ_INT(TRACERIG_TIME_ONCPU, told.what);
	EXPECT_EQ_INT(2, told.lines);
	EXPECT_EQ_INT(0, told.samples);
	/* No pprof asked for: none written, none declared. */
	EXPECT_EQ_STR("", told.pprof);
	free(folded);
	folded = tr_test_slurp(dir, "oncpu.pb.gz");
	EXPECT_TRUE(folded == NULL);
	remove_entries(dir, "oncpu");
	EXPECT_EQ_INT(0, rmdir(dir));
}

DEF_TEST(nothing_added_offers_no_view)
{
	char dir[] = "/tmp/tracerig-test-stacks.XXXXXX";
	struct tracerig_archive ar = { .dir = dir };
	struct tracerig_stacks *s;
	char *folded;

	CHECK_NOT_NULL(mkdtemp(dir));
	memset(&told, 0, sizeof(told));
	s = open_sink("offcpu", TRACERIG_TIME_OFFCPU, "Off-CPU time", TRACERIG_STACKS_WALL, 0);
	CHECK_NOT_NULL(s);
	EXPECT_EQ_INT(0, tr_stacks_write(s, &ar, NULL));
	tr_stacks_close(s);
	folded = tr_test_slurp(dir, "offcpu.folded");
	EXPECT_EQ_STR("", folded ? folded : "(none)");
	EXPECT_EQ_INT(0, told.offered);
	free(folded);
	remove_entries(dir, "offcpu");
	EXPECT_EQ_INT(0, rmdir(dir));
}

DEF_TEST(given_names_are_taken_and_a_cut_stack_says_so)
{
	/* A source that named its frames already (for a text of its own)
	 * hands the names over: nothing is asked again. */
	uint64_t u[] = { 0x1, 0x10001, 0x10002 }, k[] = { 0xa1 };
	const char *un[] = { "inner", "[unknown]", "[unknown]" }, *kn[] = { "do_work_[k]" };
	struct tracerig_stack st = { .pid = 42,
				     .tid = 43,
				     .comm = "app",
				     .tcomm = "worker",
				     .user = u,
				     .n_user = 3,
				     .user_names = un,
				     .kernel = k,
				     .n_kernel = 1,
				     .kernel_names = kn,
				     .flags = TRACERIG_STACK_CUT,
				     .count = 1,
				     .ns = 1 };
	uint64_t folded_away = 0;
	char line[1024];

	line_of(&st, line, &folded_away);
	EXPECT_EQ_STR("app-42;worker-43;[cut at max_stack];[unknown];inner;do_work_[k]", line);
	EXPECT_EQ_INT(1, folded_away);
}

static int all_lines(void *arg, const char *line, uint64_t weight)
{
	char *out = arg;
	size_t len = strlen(out);

	snprintf(out + len, 1024 - len, "%s %llu\n", line, (unsigned long long)weight);
	return 0;
}

DEF_TEST(repeats_of_a_threads_stack_are_summed)
{
	uint64_t a = 0x1, b = 0x2;
	struct tracerig_stack st[] = {
		{ .pid = 1,
		  .tid = 1,
		  .comm = "p",
		  .tcomm = "p",
		  .user = &a,
		  .n_user = 1,
		  .count = 1 },
		{ .pid = 1,
		  .tid = 1,
		  .comm = "p",
		  .tcomm = "p",
		  .user = &a,
		  .n_user = 1,
		  .count = 2 },
		{ .pid = 1,
		  .tid = 2,
		  .comm = "p",
		  .tcomm = "q",
		  .user = &a,
		  .n_user = 1,
		  .count = 1 },
		{ .pid = 1,
		  .tid = 1,
		  .comm = "p",
		  .tcomm = "p",
		  .user = &a,
		  .n_user = 1,
		  .count = 1 },
		{ .pid = 1,
		  .tid = 1,
		  .comm = "p",
		  .tcomm = "p",
		  .user = &b,
		  .n_user = 1,
		  .count = 1 },
		/* Renamed: a new root, not the one kept for the thread. */
		{ .pid = 1,
		  .tid = 1,
		  .comm = "p",
		  .tcomm = "r",
		  .user = &b,
		  .n_user = 1,
		  .count = 5 },
	};
	struct tracerig_stacks *s = open_sink("t", TRACERIG_TIME_ONCPU, "t", 0, 0);
	const struct tr_folded *set;
	char out[1024] = "";

	CHECK_NOT_NULL(s);
	EXPECT_EQ_INT(0, tr_stacks_add(s, st, 6));
	set = tr_stacks_folded(s);
	CHECK_NOT_NULL(set);
	EXPECT_EQ_INT(0, tr_folded_each(set, all_lines, out));
	EXPECT_EQ_STR("p-1;p-1;u1 4\np-1;p-1;u2 1\np-1;q-2;u1 1\np-1;r-1;u2 5\n", out);
	tr_stacks_close(s);
}

DEF_TEST(pprof_alone_writes_no_folded_view)
{
	char dir[] = "/tmp/tracerig-test-stacks.XXXXXX";
	struct tracerig_archive ar = { .dir = dir };
	uint64_t u[] = { 0x1 };
	struct tracerig_stack st = { .pid = 42,
				     .tid = 42,
				     .comm = "app",
				     .tcomm = "app",
				     .user = u,
				     .n_user = 1,
				     .count = 2,
				     .ns = 2000 };
	struct tracerig_stacks *s;
	struct tracerig_stacks_stats stats;
	char *folded;

	CHECK_NOT_NULL(mkdtemp(dir));
	memset(&told, 0, sizeof(told));
	s = open_sink("cpu", TRACERIG_TIME_ONCPU, "CPU samples",
		      TRACERIG_STACKS_NO_FOLDED | TRACERIG_STACKS_WALL, 1);
	CHECK_NOT_NULL(s);
	EXPECT_EQ_INT(0, tr_stacks_add(s, &st, 1));
	EXPECT_EQ_INT(0, tr_stacks_write(s, &ar, &stats));
	tr_stacks_close(s);
	folded = tr_test_slurp(dir, "cpu.folded");
	EXPECT_TRUE(folded == NULL);
	free(folded);
	EXPECT_EQ_STR("cpu.pb.gz", told.pprof);
	EXPECT_EQ_INT(1, told.pprof_samples);
	EXPECT_EQ_INT(2, told.pprof_total);
	/* No folded view, none for the wall. */
	EXPECT_EQ_INT(0, told.offered);
	remove_entries(dir, "cpu");
	EXPECT_EQ_INT(0, rmdir(dir));
}

DEF_TEST(bad_arguments_are_refused)
{
	errno = 0;
	EXPECT_TRUE(!open_sink("../x", TRACERIG_TIME_OFFCPU, "t", 0, 0));
	EXPECT_EQ_INT(EINVAL, errno);
	EXPECT_TRUE(!open_sink("x", (enum tracerig_time)7, "t", 0, 0));
	EXPECT_TRUE(!open_sink(NULL, TRACERIG_TIME_OFFCPU, "t", 0, 0));
}

int main(void)
{
	RUN_TEST(line_is_process_thread_then_user_outer_to_inner_then_kernel);
	RUN_TEST(lost_stacks_are_shown_not_hidden);
	RUN_TEST(names_cannot_break_the_format);
	RUN_TEST(runs_of_frames_in_no_object_become_one_unknown_frame);
	RUN_TEST(too_deep_a_stack_keeps_its_outer_frames);
	RUN_TEST(offcpu_is_written_in_microseconds_and_offered_to_the_wall);
	RUN_TEST(oncpu_samples_are_counted_and_worth_their_mean_period);
	RUN_TEST(nothing_added_offers_no_view);
	RUN_TEST(given_names_are_taken_and_a_cut_stack_says_so);
	RUN_TEST(repeats_of_a_threads_stack_are_summed);
	RUN_TEST(pprof_alone_writes_no_folded_view);
	RUN_TEST(bad_arguments_are_refused);
	TEST_MAIN_END();
}
