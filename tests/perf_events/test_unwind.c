/* Unwinding copied user stacks, and unwinding them while collecting: a
 * sample of this very process (its registers and a copy of its stack, as
 * the kernel writes them with PERF_SAMPLE_REGS_USER and STACK_USER) is
 * unwound through test_level_two -> test_level_one -> main; the unwinding
 * thread finds the same frames, takes what its queue has room for and
 * leaves the rest; another unwinder adopts those frames where its model
 * has the same objects, and refuses them where it has none.  The thread
 * runs at SCHED_IDLE (when it may come back) until stopped, then unwinds
 * its whole backlog. */
#include "config.h"

#include "collector.h"
#include "core/symbols/symbolizer.h"
#include "unwind.h"
#include "unwindbg.h"
#include "lib/procpid.h"
#include "../lib/stack-sample.h"

#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#if UW_AVAILABLE

#include "testing.h"

#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |      \
		     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |          \
		     PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define SAMPLE_ID 42
#define STACK_BYTES 8192
#define RECORDS 40

struct tracerig_ctx {
	struct tr_symbolizer *sym;
};

static int svc_object(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr,
		      struct tracerig_object *out)
{
	return tr_symbolizer_object(ctx->sym, pid, addr, out);
}

static const struct tracerig_internal_services internal = { .symbolizer_object = svc_object };
/* No core: the unwinder logs and counts nothing. */
static const struct tracerig_run_services no_run = { 0 };
static const struct tracerig_services svc = { .run = &no_run, .internal = &internal };

/* A process model that does not know the objects yet, as one read just
 * after an exec, before ld.so mapped the libraries. */
static int model_blind;
static unsigned int model_asked; /* lookups once it knows them */

static int svc_object_late(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr,
			   struct tracerig_object *out)
{
	if (model_blind)
		return -ENOENT;
	model_asked++;
	return svc_object(ctx, pid, addr, out);
}

static const struct tracerig_internal_services internal_late = { .symbolizer_object =
									 svc_object_late };
static const struct tracerig_services svc_late = { .run = &no_run, .internal = &internal_late };
static struct tracerig_ctx ctx;
static struct pc_opened event;
static uint64_t event_ids[1] = { SAMPLE_ID };

/* The sample, as the kernel would have written it at the getcontext(). */
static uint64_t record[(sizeof(struct perf_event_header) + 512 + STACK_BYTES) / 8 + 8];

static void take_sample(const ucontext_t *uc)
{
	struct perf_event_header *h = (void *)record;
	uint64_t *p = (uint64_t *)(h + 1), size;

	*p++ = SAMPLE_ID;
	*p++ = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	*p++ = (uint64_t)getpid() | (uint64_t)getpid() << 32;
	*p++ = 1;   /* time */
	*p++ = 0;   /* cpu */
	*p++ = 1;   /* period */
	*p++ = 0;   /* callchain: no kernel frames */
	*p++ = PERF_SAMPLE_REGS_ABI_64;
	for (int r = 0; r < PERF_REG_X86_64_MAX; r++) {
		if (!(PC_USER_REGS_MASK & (1ull << r)))
			continue;
		*p++ = stack_sample_reg(uc, r);
	}
	size = stack_sample_copy(uc, p + 1, STACK_BYTES);
	*p++ = size;
	p += size / 8;
	*p++ = size; /* dyn_size */
	h->type = PERF_RECORD_SAMPLE;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = (uint16_t)((const char *)p - (const char *)record);
}

static const struct perf_event_header *sample(void)
{
	return (const void *)record;
}

/* The sample's regs part: after id, ip, tid, time, cpu, period, nr. */
static const uint64_t *regs_of(const struct perf_event_header *h)
{
	return (const uint64_t *)(h + 1) + 7;
}

static const uint64_t *end_of(const struct perf_event_header *h)
{
	return (const uint64_t *)((const char *)h + h->size);
}

static const char *name_of(uint64_t addr)
{
	struct tracerig_symbol s;

	return tr_symbolizer_lookup(ctx.sym, getpid(), addr, 0, &s) == 0 ? s.name : "?";
}

/* Whether the frames hold `names` one after the other. */
static int has_chain(const uint64_t *ips, size_t n, const char *const *names, size_t k)
{
	for (size_t i = 0; i + k <= n; i++) {
		size_t j = 0;

		while (j < k && strcmp(name_of(ips[i + j]), names[j]) == 0)
			j++;
		if (j == k)
			return 1;
	}
	return 0;
}

static const char *const chain[] = { "test_level_two", "test_level_one", "main" };

DEF_TEST(unwinds_own_sample)
{
	struct unwinder *u = uw_new(&svc, &ctx, NULL);
	const uint64_t *ips;
	size_t n;

	CHECK_NOT_NULL(u);
	n = uw_sample(u, &event.attr, getpid(), getpid(), regs_of(sample()), end_of(sample()), &ips);
	EXPECT_TRUE(n >= 3);
	if (!has_chain(ips, n, chain, 3)) {
		TEST_FAIL("no test_level_two -> test_level_one -> main in %zu frames", n);
		for (size_t i = 0; i < n; i++)
			printf("#   %#llx %s\n", (unsigned long long)ips[i], name_of(ips[i]));
	}
	uw_free(u);
}

/* An address the model had no object for is asked again once the
 * model can have reread the process's mappings: it is not absent for
 * the rest of the session (every later stack through it cut short). */
DEF_TEST(objects_mapped_after_a_miss_are_found)
{
	struct unwinder *u = uw_new(&svc_late, &ctx, NULL);
	const uint64_t *ips;
	size_t n;

	CHECK_NOT_NULL(u);
	model_blind = 1;
	(void)uw_sample(u, &event.attr, getpid(), getpid(), regs_of(sample()), end_of(sample()),
			&ips);
	model_blind = 0;
	usleep(60 * 1000); /* longer than the model's reread interval */
	n = uw_sample(u, &event.attr, getpid(), getpid(), regs_of(sample()), end_of(sample()), &ips);
	/* The same addresses again: each was asked of the model anew (the
	 * chain alone would not tell: this test is built with frame
	 * pointers, which libdwfl follows where it has no CFI). */
	EXPECT_TRUE(model_asked > 0);
	if (!has_chain(ips, n, chain, 3))
		TEST_FAIL("no test_level_two -> test_level_one -> main in %zu frames", n);
	uw_free(u);
}

/* Pushes RECORDS copies of the sample at offsets 0, 100000, ... into a
 * queue of `queue_bytes`, then lets the thread finish. */
static struct uw_bg *run_background(struct uw_objects *objects, size_t queue_bytes)
{
	struct uw_bg *bg;

	if (uw_bg_new(&svc, &ctx, objects, queue_bytes, &bg) < 0)
		return NULL;
	if (uw_bg_start(bg, &event, 1) < 0) {
		uw_bg_free(bg);
		return NULL;
	}
	for (uint64_t i = 0; i < RECORDS; i++)
		uw_bg_record(bg, i * 100000, sample());
	uw_bg_pass(bg);
	uw_bg_stop(bg);
	uw_bg_join(bg);
	return bg;
}

DEF_TEST(background_frames_are_adopted)
{
	struct uw_objects *objects = uw_objects_new();
	struct uw_bg *bg = objects ? run_background(objects, 4u << 20) : NULL;
	struct unwinder *u = objects ? uw_new(&svc, &ctx, objects) : NULL;
	struct uw_bg_stats st;
	struct uw_frames f;
	const uint64_t *ips;
	size_t n;

	CHECK_NOT_NULL(bg);
	CHECK_NOT_NULL(u);
	uw_bg_get_stats(bg, &st);
	EXPECT_EQ_INT(RECORDS, st.queued);
	EXPECT_EQ_INT(0, st.queue_full);
	EXPECT_EQ_INT(RECORDS, st.kept);
	for (uint64_t i = 0; i < RECORDS; i++) {
		if (!uw_bg_frames(bg, i * 100000, &f)) {
			TEST_FAIL("no frames kept for the sample at %llu", (unsigned long long)i * 100000);
			continue;
		}
		EXPECT_TRUE(has_chain(f.ips, f.n_ips, chain, 3));
		EXPECT_EQ_INT(1, uw_adopt(u, getpid(), &f));
	}
	EXPECT_EQ_INT(0, uw_bg_frames(bg, 50000, &f));
	/* What the other unwinder finds itself is what it adopted. */
	EXPECT_TRUE(uw_bg_frames(bg, 0, &f));
	n = uw_sample(u, &event.attr, getpid(), getpid(), regs_of(sample()), end_of(sample()), &ips);
	EXPECT_EQ_INT(f.n_ips, n);
	EXPECT_TRUE(n == f.n_ips && memcmp(ips, f.ips, n * sizeof(*ips)) == 0);
	/* A process whose model has no objects there does not adopt them. */
	EXPECT_EQ_INT(0, uw_adopt(u, 0x3ffffff0, &f));
	uw_free(u);
	uw_bg_free(bg);
	uw_objects_free(objects);
}

DEF_TEST(full_queue_leaves_samples)
{
	struct uw_objects *objects = uw_objects_new();
	/* Smaller than one sample: none fits. */
	struct uw_bg *none = objects ? run_background(objects, 4096) : NULL;
	/* Room for a few: the rest find it full, whatever the thread did meanwhile. */
	struct uw_bg *few = objects ? run_background(objects, 5 * (size_t)sample()->size) : NULL;
	struct uw_bg_stats st;
	struct uw_frames f;
	size_t kept = 0;

	CHECK_NOT_NULL(none);
	CHECK_NOT_NULL(few);
	uw_bg_get_stats(none, &st);
	EXPECT_EQ_INT(0, st.queued);
	EXPECT_EQ_INT(RECORDS, st.queue_full);
	EXPECT_EQ_INT(0, uw_bg_frames(none, 0, &f));
	uw_bg_get_stats(few, &st);
	EXPECT_EQ_INT(RECORDS, st.queued + st.queue_full);
	EXPECT_TRUE(st.queued >= 1);
	EXPECT_EQ_INT(st.queued, st.kept);
	for (uint64_t i = 0; i < RECORDS; i++)
		kept += (size_t)uw_bg_frames(few, i * 100000, &f);
	EXPECT_EQ_INT(st.kept, kept);
	uw_bg_free(none);
	uw_bg_free(few);
	uw_objects_free(objects);
}

/* What a conversion while collecting relies on: how far the thread has
 * got (uw_bg_done), frames readable before the thread ends, and frames of
 * samples converted already released. */
DEF_TEST(done_and_released_while_running)
{
	struct uw_objects *objects = uw_objects_new();
	const struct perf_event_header *h = sample();
	uint64_t end = (RECORDS - 1) * 100000 + h->size, done = 0;
	struct uw_bg *bg = NULL;
	struct uw_frames f;

	CHECK_NOT_NULL(objects);
	if (uw_bg_new(&svc, &ctx, objects, 4u << 20, &bg) < 0) {
		TEST_FAIL("uw_bg_new failed");
		uw_objects_free(objects);
		return;
	}
	EXPECT_EQ_INT(UINT64_MAX, uw_bg_done(bg)); /* not started: no limit */
	if (uw_bg_start(bg, &event, 1) < 0) {
		TEST_FAIL("uw_bg_start failed");
		uw_bg_free(bg);
		uw_objects_free(objects);
		return;
	}
	EXPECT_EQ_INT(0, uw_bg_done(bg));
	for (uint64_t i = 0; i < RECORDS; i++)
		uw_bg_record(bg, i * 100000, h);
	uw_bg_pass(bg);
	/* At SCHED_IDLE it gets there once the machine lets it: a minute at most. */
	for (int i = 0; i < 6000 && (done = uw_bg_done(bg)) < end; i++)
		usleep(10 * 1000);
	EXPECT_EQ_INT(end, done);
	for (uint64_t i = 0; i < RECORDS; i++)
		EXPECT_TRUE(uw_bg_frames(bg, i * 100000, &f) && has_chain(f.ips, f.n_ips, chain, 3));
	uw_bg_release(bg, RECORDS / 2 * 100000);
	EXPECT_EQ_INT(0, uw_bg_frames(bg, 0, &f));
	EXPECT_EQ_INT(0, uw_bg_frames(bg, (RECORDS / 2 - 1) * 100000, &f));
	EXPECT_TRUE(uw_bg_frames(bg, RECORDS / 2 * 100000, &f) && has_chain(f.ips, f.n_ips, chain, 3));
	EXPECT_TRUE(uw_bg_frames(bg, (RECORDS - 1) * 100000, &f) && has_chain(f.ips, f.n_ips, chain, 3));
	uw_bg_join(bg);
	EXPECT_EQ_INT(UINT64_MAX, uw_bg_done(bg)); /* ended: nothing to wait for */
	uw_bg_free(bg);
	uw_objects_free(objects);
}

/* Threads of this process whose scheduling policy is SCHED_IDLE (field 41
 * of /proc/self/task/TID/stat). */
static int idle_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[300], buf[1024];
		unsigned long long policy;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", de->d_name);
		if (tr_read_text(path, buf, sizeof(buf)) > 0 && tr_stat_field(buf, 41, &policy) == 0 &&
		    policy == SCHED_IDLE)
			n++;
	}
	closedir(d);
	return n;
}

static int has_cap_sys_nice(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];

	return syscall(SYS_capget, &hdr, caps) == 0 &&
	       (caps[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32)));
}

DEF_TEST(thread_idle_until_stopped)
{
	struct uw_objects *objects = uw_objects_new();
	struct uw_bg *bg = NULL;
	struct uw_bg_stats st;
	struct uw_frames f;
	int during, after;

	CHECK_NOT_NULL(objects);
	EXPECT_EQ_INT(0, idle_threads());
	if (uw_bg_new(&svc, &ctx, objects, 4u << 20, &bg) < 0 || uw_bg_start(bg, &event, 1) < 0) {
		TEST_FAIL("cannot start the unwinding thread");
		uw_bg_free(bg);
		uw_objects_free(objects);
		return;
	}
	for (uint64_t i = 0; i < RECORDS; i++)
		uw_bg_record(bg, i * 100000, sample());
	uw_bg_pass(bg);
	during = idle_threads();
	uw_bg_stop(bg);
	after = idle_threads();
	uw_bg_join(bg);
	uw_bg_get_stats(bg, &st);
	/* With CAP_SYS_NICE it may come back from SCHED_IDLE, so goes there. */
	if (has_cap_sys_nice())
		EXPECT_EQ_INT(1, st.idle);
	EXPECT_EQ_INT(st.idle, during);
	EXPECT_EQ_INT(0, after);
	/* Whatever it had not got to when stopped, it unwound after. */
	EXPECT_EQ_INT(RECORDS, st.kept);
	EXPECT_TRUE(uw_bg_frames(bg, (RECORDS - 1) * 100000, &f) && has_chain(f.ips, f.n_ips, chain, 3));
	uw_bg_free(bg);
	uw_objects_free(objects);
}

int main(void)
{
	ctx.sym = tr_symbolizer_new();
	if (!ctx.sym)
		return 1;
	event.attr.size = sizeof(event.attr);
	event.attr.sample_type = SAMPLE_TYPE;
	event.attr.sample_regs_user = PC_USER_REGS_MASK;
	event.attr.sample_stack_user = STACK_BYTES;
	event.ids = event_ids;
	event.n_ids = 1;
	test_level_one();
	RUN_TEST(unwinds_own_sample);
	RUN_TEST(objects_mapped_after_a_miss_are_found);
	RUN_TEST(background_frames_are_adopted);
	RUN_TEST(full_queue_leaves_samples);
	RUN_TEST(done_and_released_while_running);
	RUN_TEST(thread_idle_until_stopped);
	tr_symbolizer_free(ctx.sym);
	TEST_MAIN_END();
}

#else

int main(void)
{
	return stack_sample_skip_all();
}

#endif
