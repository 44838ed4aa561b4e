/* Flight mode's live side-band (no root): the state a new chunk replays
 * instead of rescanning /proc.  Threads keep their latest name and go at
 * their exit; a process keeps its mappings in time order, drops them at an
 * exec, loses an older mapping to a newer one that covers it, starts as a
 * copy of its parent at a fork, and is gone at its main thread's exit.
 * Records reach the state out of time order (one ring per CPU): the rules
 * go by their times.  The replay is each process's COMMs then its
 * mappings, the bytes as written but with the trailer's time 0. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "livesb.h"
#include "testing.h"

/* The collector's tracking event: its trailer is pid/tid, time, cpu, id. */
#define SAMPLE_TYPE                                                                        \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |    \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define TRAILER 32
#define ID 77

struct rec {
	unsigned char b[512] __attribute__((aligned(8)));
};

static size_t put_trailer(unsigned char *p, uint32_t pid, uint32_t tid, uint64_t time)
{
	uint32_t cpu[2] = { 1, 0 };
	uint64_t id = ID;

	memcpy(p, &pid, 4);
	memcpy(p + 4, &tid, 4);
	memcpy(p + 8, &time, 8);
	memcpy(p + 16, cpu, 8);
	memcpy(p + 24, &id, 8);
	return TRAILER;
}

static const struct perf_event_header *finish(struct rec *r, uint32_t type, uint16_t misc, size_t len)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = (uint16_t)len };

	memcpy(r->b, &h, sizeof(h));
	return (const void *)r->b;
}

static const struct perf_event_header *comm(struct rec *r, uint32_t pid, uint32_t tid,
					    const char *name, int exec, uint64_t time)
{
	size_t n = 8;

	memset(r, 0, sizeof(*r));
	memcpy(r->b + n, &pid, 4);
	memcpy(r->b + n + 4, &tid, 4);
	n += 8;
	strcpy((char *)r->b + n, name);
	n += (strlen(name) + 8) & ~(size_t)7;
	n += put_trailer(r->b + n, pid, tid, time);
	return finish(r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, n);
}

/* An MMAP2 with a build id (its first byte tells the mapping apart). */
static const struct perf_event_header *mmap2(struct rec *r, uint32_t pid, uint64_t start,
					     uint64_t len, const char *name, uint64_t time)
{
	uint64_t q[3] = { start, len, 0 };
	uint32_t prot[2] = { PROT_READ | PROT_EXEC, MAP_PRIVATE };
	size_t n = 8;

	memset(r, 0, sizeof(*r));
	memcpy(r->b + n, &pid, 4);
	memcpy(r->b + n + 4, &pid, 4);
	n += 8;
	memcpy(r->b + n, q, sizeof(q));
	n += sizeof(q);
	r->b[n] = 20;                       /* build id size */
	r->b[n + 4] = (unsigned char)start; /* the build id's first byte */
	n += 24;
	memcpy(r->b + n, prot, sizeof(prot));
	n += 8;
	strcpy((char *)r->b + n, name);
	n += (strlen(name) + 8) & ~(size_t)7;
	n += put_trailer(r->b + n, pid, pid, time);
	return finish(r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID, n);
}

static const struct perf_event_header *task(struct rec *r, uint32_t type, uint32_t pid,
					    uint32_t ppid, uint32_t tid, uint32_t ptid,
					    uint64_t time)
{
	uint32_t u[4] = { pid, ppid, tid, ptid };
	size_t n = 8;

	memset(r, 0, sizeof(*r));
	memcpy(r->b + n, u, sizeof(u));
	memcpy(r->b + n + 16, &time, 8);
	n += 24;
	n += put_trailer(r->b + n, pid, tid, time);
	return finish(r, type, 0, n);
}

/* What a replay wrote, one line per record: "comm PID/TID NAME",
 * "mmap PID START-END NAME", and the raw records. */
struct replayed {
	char text[4096];
	struct rec recs[64];
	size_t n;
};

static int collect(void *arg, const void *record, size_t len)
{
	struct replayed *out = arg;
	const struct perf_event_header *h = record;
	const uint32_t *u = (const uint32_t *)(h + 1);
	char line[256];

	if (h->size != len || out->n >= 64)
		return -1;
	memcpy(out->recs[out->n++].b, record, len);
	if (h->type == PERF_RECORD_COMM) {
		snprintf(line, sizeof(line), "comm %u/%u %s\n", u[0], u[1], (const char *)(u + 2));
	} else {
		const uint64_t *q = (const uint64_t *)(u + 2);

		snprintf(line, sizeof(line), "mmap %u %llx-%llx %s\n", u[0],
			 (unsigned long long)q[0], (unsigned long long)(q[0] + q[1]),
			 (const char *)record + 8 + 8 + 24 + 24 + 8);
	}
	strncat(out->text, line, sizeof(out->text) - strlen(out->text) - 1);
	return 0;
}

/* The replay of `s` as text, one process at a time in `pids` order (the
 * table's order is its own). */
static const char *replay_text(struct livesb *s, struct replayed *out, const pid_t *pids,
			       size_t n_pids)
{
	struct replayed all;
	char *p;

	memset(&all, 0, sizeof(all));
	memset(out, 0, sizeof(*out));
	if (lsb_replay(s, collect, &all) != 0)
		return "(replay failed)";
	for (size_t k = 0; k < n_pids; k++) {
		for (char *line = all.text; *line; line = p + 1) {
			unsigned pid;

			p = strchr(line, '\n');
			if (sscanf(strchr(line, ' ') + 1, "%u", &pid) == 1 && (pid_t)pid == pids[k])
				strncat(out->text, line, (size_t)(p - line) + 1);
		}
	}
	memcpy(out->recs, all.recs, sizeof(all.recs));
	out->n = all.n;
	return out->text;
}

static uint64_t time_of(const struct rec *r)
{
	const struct perf_event_header *h = (const void *)r->b;
	uint64_t t;

	memcpy(&t, r->b + h->size - TRAILER + 8, 8);
	return t;
}

#define FEED(s, rec) EXPECT_EQ_INT(0, lsb_record((s), (rec)))

DEF_TEST(replay_is_each_process_comms_then_mappings_in_time_order)
{
	struct livesb *s = lsb_new(SAMPLE_TYPE);
	struct replayed out;
	struct rec r;
	pid_t pids[] = { 100 };

	CHECK_NOT_NULL(s);
	/* As the recording's start describes a process (time 0), then what
	 * the kernel wrote. */
	FEED(s, comm(&r, 100, 100, "app", 0, 0));
	FEED(s, mmap2(&r, 100, 0x1000, 0x1000, "/usr/bin/app", 0));
	FEED(s, comm(&r, 100, 101, "worker", 0, 0));
	FEED(s, mmap2(&r, 100, 0x3000, 0x1000, "/lib/libc.so", 0));
	FEED(s, mmap2(&r, 100, 0x5000, 0x1000, "/lib/late.so", 500));
	/* Drained from another CPU's ring after a later one. */
	FEED(s, mmap2(&r, 100, 0x4000, 0x1000, "/lib/early.so", 400));
	FEED(s, comm(&r, 100, 101, "renamed", 0, 600));
	EXPECT_EQ_STR("comm 100/100 app\n"
		      "comm 100/101 renamed\n"
		      "mmap 100 1000-2000 /usr/bin/app\n"
		      "mmap 100 3000-4000 /lib/libc.so\n"
		      "mmap 100 4000-5000 /lib/early.so\n"
		      "mmap 100 5000-6000 /lib/late.so\n",
		      replay_text(s, &out, pids, 1));
	/* Each record as it was written, but for the time. */
	for (size_t i = 0; i < out.n; i++)
		EXPECT_EQ_INT(0, time_of(&out.recs[i]));
	for (size_t i = 0; i < out.n; i++) {
		const struct perf_event_header *h = (const void *)out.recs[i].b;
		const unsigned char *q = out.recs[i].b + 8 + 8 + 24;

		if (h->type != PERF_RECORD_MMAP2)
			continue;
		EXPECT_EQ_INT(PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID, h->misc);
		EXPECT_EQ_INT(20, q[0]);
		EXPECT_EQ_INT(ID, out.recs[i].b[h->size - 8]);
	}
	lsb_free(s);
}

DEF_TEST(an_exec_drops_the_mappings_and_threads_before_it)
{
	struct livesb *s = lsb_new(SAMPLE_TYPE);
	struct replayed out;
	struct rec r;
	pid_t pids[] = { 200 };

	CHECK_NOT_NULL(s);
	FEED(s, comm(&r, 200, 200, "sh", 0, 0));
	FEED(s, comm(&r, 200, 201, "sh-thread", 0, 0));
	FEED(s, mmap2(&r, 200, 0x1000, 0x1000, "/bin/sh", 0));
	FEED(s, mmap2(&r, 200, 0x8000, 0x1000, "/lib/libc-old.so", 100));
	/* The new image's loader, drained before the exec's COMM. */
	FEED(s, mmap2(&r, 200, 0x9000, 0x1000, "/lib/ld.so", 1001));
	FEED(s, comm(&r, 200, 200, "newprog", 1, 1000));
	FEED(s, mmap2(&r, 200, 0x2000, 0x1000, "/usr/bin/newprog", 1002));
	/* A mapping of the old image, drained after the exec. */
	FEED(s, mmap2(&r, 200, 0xa000, 0x1000, "/lib/stale.so", 999));
	EXPECT_EQ_STR("comm 200/200 newprog\n"
		      "mmap 200 9000-a000 /lib/ld.so\n"
		      "mmap 200 2000-3000 /usr/bin/newprog\n",
		      replay_text(s, &out, pids, 1));
	lsb_free(s);
}

DEF_TEST(a_mapping_that_covers_an_older_one_supersedes_it)
{
	struct livesb *s = lsb_new(SAMPLE_TYPE);
	struct replayed out;
	struct lsb_stats st;
	struct rec r;
	pid_t pids[] = { 300 };

	CHECK_NOT_NULL(s);
	FEED(s, comm(&r, 300, 300, "jit", 0, 0));
	FEED(s, mmap2(&r, 300, 0x1000, 0x1000, "/a.so", 10));
	FEED(s, mmap2(&r, 300, 0x3000, 0x1000, "/b.so", 20));
	FEED(s, mmap2(&r, 300, 0x5000, 0x2000, "/c.so", 30));
	/* Covers /a.so exactly and /b.so with more: both go. */
	FEED(s, mmap2(&r, 300, 0x1000, 0x1000, "/a2.so", 40));
	FEED(s, mmap2(&r, 300, 0x2000, 0x3000, "/b2.so", 50));
	/* Covers only part of /c.so: both stay, in time order. */
	FEED(s, mmap2(&r, 300, 0x6000, 0x2000, "/d.so", 60));
	/* Older than one that covers it (another CPU's ring): left out. */
	FEED(s, mmap2(&r, 300, 0x2800, 0x100, "/older.so", 45));
	EXPECT_EQ_STR("comm 300/300 jit\n"
		      "mmap 300 5000-7000 /c.so\n"
		      "mmap 300 1000-2000 /a2.so\n"
		      "mmap 300 2000-5000 /b2.so\n"
		      "mmap 300 6000-8000 /d.so\n",
		      replay_text(s, &out, pids, 1));
	/* Mapping the same range again and again keeps one. */
	for (uint64_t t = 100; t < 1100; t++)
		FEED(s, mmap2(&r, 300, 0x10000, 0x1000, "//anon", t));
	lsb_stats(s, &st);
	EXPECT_EQ_INT(1, st.processes);
	EXPECT_EQ_INT(1, st.threads);
	EXPECT_EQ_INT(5, st.mappings);
	lsb_free(s);
}

DEF_TEST(a_fork_copies_the_parent_and_names_the_child_after_it)
{
	struct livesb *s = lsb_new(SAMPLE_TYPE);
	struct replayed out;
	struct rec r;
	pid_t pids[] = { 400, 401 };

	CHECK_NOT_NULL(s);
	FEED(s, comm(&r, 400, 400, "server", 0, 0));
	FEED(s, comm(&r, 400, 402, "acceptor", 0, 0));
	FEED(s, mmap2(&r, 400, 0x1000, 0x1000, "/usr/bin/server", 0));
	FEED(s, mmap2(&r, 400, 0x4000, 0x1000, "/lib/plugin.so", 50));
	/* The acceptor forks a worker process, and a thread of its own. */
	FEED(s, task(&r, PERF_RECORD_FORK, 401, 400, 401, 402, 100));
	FEED(s, task(&r, PERF_RECORD_FORK, 400, 400, 403, 400, 110));
	/* Mapped by the parent after the fork: not the child's. */
	FEED(s, mmap2(&r, 400, 0x6000, 0x1000, "/lib/after.so", 120));
	FEED(s, mmap2(&r, 401, 0x8000, 0x1000, "/lib/child.so", 130));
	EXPECT_EQ_STR("comm 400/400 server\n"
		      "comm 400/402 acceptor\n"
		      "comm 400/403 server\n"
		      "mmap 400 1000-2000 /usr/bin/server\n"
		      "mmap 400 4000-5000 /lib/plugin.so\n"
		      "mmap 400 6000-7000 /lib/after.so\n"
		      "comm 401/401 acceptor\n"
		      "mmap 401 1000-2000 /usr/bin/server\n"
		      "mmap 401 4000-5000 /lib/plugin.so\n"
		      "mmap 401 8000-9000 /lib/child.so\n",
		      replay_text(s, &out, pids, 2));
	/* The copies carry the child's pid/tid in the trailer too. */
	for (size_t i = 0; i < out.n; i++) {
		const struct perf_event_header *h = (const void *)out.recs[i].b;
		uint32_t body[2], trailer[2];

		memcpy(body, out.recs[i].b + 8, 8);
		memcpy(trailer, out.recs[i].b + h->size - TRAILER, 8);
		EXPECT_EQ_INT(body[0], trailer[0]);
		EXPECT_EQ_INT(body[1], trailer[1]);
	}
	lsb_free(s);
}

DEF_TEST(a_fork_drained_after_the_childs_exec_leaves_the_new_image)
{
	struct livesb *s = lsb_new(SAMPLE_TYPE);
	struct replayed out;
	struct rec r;
	pid_t pids[] = { 801 };

	CHECK_NOT_NULL(s);
	FEED(s, comm(&r, 800, 800, "bash", 0, 0));
	FEED(s, mmap2(&r, 800, 0x1000, 0x1000, "/bin/bash", 0));
	/* The child ran on another CPU: its exec reached the state first. */
	FEED(s, comm(&r, 801, 801, "ls", 1, 120));
	FEED(s, mmap2(&r, 801, 0x7000, 0x1000, "/bin/ls", 121));
	FEED(s, task(&r, PERF_RECORD_FORK, 801, 800, 801, 800, 100));
	EXPECT_EQ_STR("comm 801/801 ls\n"
		      "mmap 801 7000-8000 /bin/ls\n",
		      replay_text(s, &out, pids, 1));
	lsb_free(s);
}

DEF_TEST(an_exit_drops_the_thread_and_the_main_thread_the_process)
{
	struct livesb *s = lsb_new(SAMPLE_TYPE);
	struct replayed out;
	struct lsb_stats st;
	struct rec r;
	pid_t pids[] = { 500, 600 };

	CHECK_NOT_NULL(s);
	FEED(s, comm(&r, 500, 500, "short", 0, 0));
	FEED(s, comm(&r, 500, 501, "helper", 0, 0));
	FEED(s, mmap2(&r, 500, 0x1000, 0x1000, "/usr/bin/short", 0));
	FEED(s, comm(&r, 600, 600, "long", 0, 0));
	FEED(s, mmap2(&r, 600, 0x1000, 0x1000, "/usr/bin/long", 0));
	FEED(s, task(&r, PERF_RECORD_EXIT, 500, 1, 501, 1, 100));
	EXPECT_EQ_STR("comm 500/500 short\n"
		      "mmap 500 1000-2000 /usr/bin/short\n"
		      "comm 600/600 long\n"
		      "mmap 600 1000-2000 /usr/bin/long\n",
		      replay_text(s, &out, pids, 2));
	FEED(s, task(&r, PERF_RECORD_EXIT, 500, 1, 500, 1, 200));
	EXPECT_EQ_STR("comm 600/600 long\n"
		      "mmap 600 1000-2000 /usr/bin/long\n",
		      replay_text(s, &out, pids, 2));
	lsb_stats(s, &st);
	EXPECT_EQ_INT(1, st.processes);
	EXPECT_EQ_INT(1, st.threads);
	EXPECT_EQ_INT(1, st.mappings);
	/* Thousands of short processes come and go: the state stays. */
	for (uint32_t pid = 1000; pid < 5000; pid++) {
		FEED(s, task(&r, PERF_RECORD_FORK, pid, 600, pid, 600, 1000 + pid * 10));
		FEED(s, comm(&r, pid, pid, "true", 1, 1001 + pid * 10));
		FEED(s, mmap2(&r, pid, 0x1000, 0x1000, "/bin/true", 1002 + pid * 10));
		FEED(s, task(&r, PERF_RECORD_EXIT, pid, 600, pid, 600, 1003 + pid * 10));
	}
	lsb_stats(s, &st);
	EXPECT_EQ_INT(1, st.processes);
	EXPECT_EQ_INT(1, st.threads);
	EXPECT_EQ_INT(1, st.mappings);
	lsb_free(s);
}

DEF_TEST(a_pid_used_again_starts_afresh)
{
	struct livesb *s = lsb_new(SAMPLE_TYPE);
	struct replayed out;
	struct rec r;
	pid_t pids[] = { 700 };

	CHECK_NOT_NULL(s);
	FEED(s, comm(&r, 1, 1, "init", 0, 0));
	FEED(s, mmap2(&r, 1, 0x1000, 0x1000, "/sbin/init", 0));
	/* Its exit was lost: what is older than the new fork is forgotten. */
	FEED(s, comm(&r, 700, 700, "gone", 0, 0));
	FEED(s, mmap2(&r, 700, 0x5000, 0x1000, "/gone.so", 0));
	FEED(s, task(&r, PERF_RECORD_FORK, 700, 1, 700, 1, 100));
	EXPECT_EQ_STR("comm 700/700 init\n"
		      "mmap 700 1000-2000 /sbin/init\n",
		      replay_text(s, &out, pids, 1));
	lsb_free(s);
}

DEF_TEST(the_kernel_map_is_kept_once_and_replayed_first)
{
	struct livesb *s = lsb_new(SAMPLE_TYPE);
	struct replayed out;
	struct lsb_stats st;
	struct rec r;
	pid_t pids[] = { 10 };

	CHECK_NOT_NULL(s);
	EXPECT_TRUE(!lsb_has_kernel(s));
	FEED(s, comm(&r, 10, 10, "p", 0, 0));
	FEED(s, mmap2(&r, (uint32_t)-1, 0xff000000, 0x1000000, "[kernel.kallsyms]_text", 0));
	FEED(s, mmap2(&r, (uint32_t)-1, 0xfe000000, 0x1000000, "[kernel.kallsyms]_text", 0));
	/* Another mapping of pid -1 is not the kernel's text. */
	FEED(s, mmap2(&r, (uint32_t)-1, 0x1000, 0x1000, "/some/module.ko", 0));
	/* Neither samples nor exits of unknown processes are kept. */
	FEED(s, finish(&r, PERF_RECORD_SAMPLE, 0, 64));
	FEED(s, task(&r, PERF_RECORD_EXIT, 900, 1, 900, 1, 5));
	EXPECT_TRUE(lsb_has_kernel(s));
	lsb_stats(s, &st);
	EXPECT_EQ_INT(1, st.processes);
	EXPECT_EQ_INT(0, st.mappings);
	replay_text(s, &out, pids, 1);
	EXPECT_EQ_INT(2, out.n);
	{
		struct replayed all;

		memset(&all, 0, sizeof(all));
		EXPECT_EQ_INT(0, lsb_replay(s, collect, &all));
		EXPECT_EQ_STR("mmap 4294967295 fe000000-ff000000 [kernel.kallsyms]_text\n"
			      "comm 10/10 p\n", all.text);
	}
	EXPECT_TRUE(lsb_ok(s));
	lsb_free(s);
}

DEF_TEST(many_processes_grow_and_shrink_the_table)
{
	struct livesb *s = lsb_new(SAMPLE_TYPE);
	struct lsb_stats st;
	struct replayed out;
	struct rec r;
	int all_found = 1;

	CHECK_NOT_NULL(s);
	for (uint32_t pid = 2; pid < 3000; pid++)
		FEED(s, comm(&r, pid, pid, "p", 0, 0));
	/* Every other one exits: the others are still found. */
	for (uint32_t pid = 2; pid < 3000; pid += 2)
		FEED(s, task(&r, PERF_RECORD_EXIT, pid, 1, pid, 1, 10));
	for (uint32_t pid = 3; pid < 3000; pid += 2) {
		FEED(s, task(&r, PERF_RECORD_FORK, pid, pid, pid + 100000, pid, 20));
		lsb_stats(s, &st);
		all_found &= st.threads == 1499 + (pid - 1) / 2;
	}
	EXPECT_TRUE(all_found);
	lsb_stats(s, &st);
	EXPECT_EQ_INT(1499, st.processes);
	EXPECT_EQ_INT(2998, st.threads);
	lsb_reset(s);
	lsb_stats(s, &st);
	EXPECT_EQ_INT(0, st.processes);
	EXPECT_EQ_INT(0, st.bytes);
	EXPECT_EQ_STR("", replay_text(s, &out, NULL, 0));
	lsb_free(s);
}

int main(void)
{
	RUN_TEST(replay_is_each_process_comms_then_mappings_in_time_order);
	RUN_TEST(an_exec_drops_the_mappings_and_threads_before_it);
	RUN_TEST(a_mapping_that_covers_an_older_one_supersedes_it);
	RUN_TEST(a_fork_copies_the_parent_and_names_the_child_after_it);
	RUN_TEST(a_fork_drained_after_the_childs_exec_leaves_the_new_image);
	RUN_TEST(an_exit_drops_the_thread_and_the_main_thread_the_process);
	RUN_TEST(a_pid_used_again_starts_afresh);
	RUN_TEST(the_kernel_map_is_kept_once_and_replayed_first);
	RUN_TEST(many_processes_grow_and_shrink_the_table);
	TEST_MAIN_END();
}
