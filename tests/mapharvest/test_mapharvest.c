/* Unit tests of mapharvest's pieces: /proc parsing, runtime settings, the
 * safe opener against hostile files, incremental copies, and the harvester
 * on a real child process that exits before the end. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "copy.h"
#include "harvest.h"
#include "jitdump.h"
#include "procinfo.h"
#include "testing.h"

static char tmpdir[] = "/tmp/mapharvest-test.XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

DEF_TEST(status_innermost_nstgid)
{
	pid_t tgid = 0, ns = 0;
	int kthread = 1;

	EXPECT_EQ_INT(0, mh_parse_status("Name:\tnode\nTgid:\t4242\nPPid:\t17\n"
					 "NStgid:\t4242\t57\t1\nNSpid:\t4243\t58\t2\n",
					 &tgid, &ns, &kthread));
	EXPECT_EQ_INT(4242, tgid);
	EXPECT_EQ_INT(1, ns);
	EXPECT_EQ_INT(0, kthread);
	EXPECT_EQ_INT(0, mh_parse_status("Tgid:\t77\nPPid:\t2\n", &tgid, &ns, &kthread));
	EXPECT_EQ_INT(77, ns);
	EXPECT_EQ_INT(1, kthread);
	EXPECT_EQ_INT(-EINVAL, mh_parse_status("Name:\tx\n", &tgid, &ns, &kthread));
}

#define BLOCK(s) s, sizeof(s) - 1

DEF_TEST(dotnet_settings)
{
	struct mh_runtime rt;

	EXPECT_EQ_INT(0, mh_runtime_parse(&rt, BLOCK("PATH=/bin\0DOTNET_PerfMapEnabled=1\0"
						     "DOTNET_PerfMapJitDumpPath=/var/maps/\0"),
					  BLOCK("dotnet\0app.dll\0"), "/app"));
	EXPECT_EQ_INT(MH_EXPECT(MH_PERF_MAP) | MH_EXPECT(MH_JITDUMP), rt.expect);
	EXPECT_EQ_INT(3, rt.n_dirs);
	EXPECT_EQ_STR("/var/maps", rt.dirs[0]);
	EXPECT_EQ_STR("/tmp", rt.dirs[1]);
	EXPECT_EQ_STR("/app", rt.dirs[2]);
	EXPECT_CONTAINS("DOTNET_PerfMapEnabled=1", rt.why);
	mh_runtime_free(&rt);

	/* DOTNET_ wins over COMPlus_; 2 = jitdump only; relative dump path. */
	EXPECT_EQ_INT(0, mh_runtime_parse(&rt, BLOCK("COMPlus_PerfMapEnabled=3\0"
						     "DOTNET_PerfMapEnabled=2\0"
						     "COMPlus_PerfMapJitDumpPath=maps\0TMPDIR=/tmp/\0"),
					  BLOCK(""), "/srv"));
	EXPECT_EQ_INT(MH_EXPECT(MH_JITDUMP), rt.expect);
	EXPECT_EQ_STR("/srv/maps", rt.dirs[0]);
	EXPECT_EQ_STR("/tmp", rt.dirs[1]);
	EXPECT_EQ_STR("/srv", rt.dirs[2]);
	EXPECT_EQ_INT(3, rt.n_dirs);
	mh_runtime_free(&rt);

	EXPECT_EQ_INT(0, mh_runtime_parse(&rt, BLOCK("DOTNET_PerfMapEnabled=0\0"), BLOCK(""), NULL));
	EXPECT_EQ_INT(0, rt.expect);
	EXPECT_EQ_INT(1, rt.n_dirs);
	mh_runtime_free(&rt);
}

DEF_TEST(node_flags)
{
	struct mh_runtime rt;

	EXPECT_EQ_INT(0, mh_runtime_parse(&rt, BLOCK("HOME=/\0"),
					  BLOCK("node\0--perf-basic-prof\0app.js\0"), "/"));
	EXPECT_EQ_INT(MH_EXPECT(MH_PERF_MAP), rt.expect);
	mh_runtime_free(&rt);
	EXPECT_EQ_INT(0, mh_runtime_parse(&rt, BLOCK("NODE_OPTIONS=--max-old-space-size=99 --perf-prof\0"),
					  BLOCK("node\0app.js\0"), "/"));
	EXPECT_EQ_INT(MH_EXPECT(MH_JITDUMP), rt.expect);
	mh_runtime_free(&rt);
	/* A script argument that merely contains the flag's text is not it. */
	EXPECT_EQ_INT(0, mh_runtime_parse(&rt, BLOCK(""), BLOCK("node\0--perf-basic-profX\0"), "/"));
	EXPECT_EQ_INT(0, rt.expect);
	mh_runtime_free(&rt);
}

DEF_TEST(cwd_inside_root)
{
	char *s;

	s = mh_cwd_in_root("/", "/app");
	EXPECT_EQ_STR("/app", s);
	free(s);
	s = mh_cwd_in_root("/srv/jail", "/srv/jail/app");
	EXPECT_EQ_STR("/app", s);
	free(s);
	s = mh_cwd_in_root("/srv/jail", "/srv/jail");
	EXPECT_EQ_STR("/", s);
	free(s);
	EXPECT_TRUE(mh_cwd_in_root("/srv/jail", "/srv/jailbreak") == NULL);
	EXPECT_TRUE(mh_cwd_in_root("/srv/jail", "/etc") == NULL);
}

/* Opening hostile files is lib/untrusted.c's, tested in tests/lib. */

DEF_TEST(copy_follows_appends)
{
	char src_path[512], dst_path[512];
	uint64_t done = 0;
	int src, dst;
	char buf[64] = "";

	snprintf(src_path, sizeof(src_path), "%s/src", tmpdir);
	snprintf(dst_path, sizeof(dst_path), "%s/dst", tmpdir);
	write_file(src_path, "a 1 one\n");
	src = open(src_path, O_RDONLY);
	dst = open(dst_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	EXPECT_EQ_INT(8, mh_copy_tail(src, dst, &done, 100));
	EXPECT_EQ_INT(0, mh_copy_tail(src, dst, &done, 100));
	write_file(src_path, "a 1 one\nb 2 tw"); /* a half-written line */
	EXPECT_EQ_INT(6, mh_copy_tail(src, dst, &done, 100));
	write_file(src_path, "a 1 one\nb 2 two\n");
	EXPECT_EQ_INT(2, mh_copy_tail(src, dst, &done, 100));
	EXPECT_EQ_INT(16, done);
	EXPECT_EQ_INT(-EFBIG, mh_copy_tail(src, dst, &(uint64_t){ 0 }, 10));
	close(src);
	close(dst);
	dst = open(dst_path, O_RDONLY);
	EXPECT_EQ_INT(16, read(dst, buf, sizeof(buf)));
	EXPECT_EQ_STR("a 1 one\nb 2 two\n", buf);
	close(dst);
}

/* A jitdump as a runtime in a PID namespace writes it (PID 1), with a
 * record from another PID, a debug record and a half-written last record. */
DEF_TEST(jitdump_pids_become_host_pids)
{
	struct {
		uint32_t magic, version, total_size, elf_mach, pad1, pid;
		uint64_t timestamp, flags;
	} hdr = { 0x4A695444u, 1, 40, 62, 0, 1, 0, 0 };
	struct rec {
		uint32_t id, total_size;
		uint64_t timestamp;
		uint32_t pid, tid;
		uint64_t more[4];
	} load = { 0, sizeof(struct rec), 1, 1, 7, { 0 } },
	  other = { 1, sizeof(struct rec), 2, 99, 99, { 0 } },
	  debug = { 2, sizeof(struct rec), 3, 1, 1, { 0 } },
	  partial = { 0, 4096, 4, 1, 1, { 0 } };
	char path[512];
	struct rec back;
	uint32_t hpid = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/jit.dump", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	EXPECT_TRUE(fd >= 0);
	if (fd < 0)
		return;
	EXPECT_TRUE(write(fd, &hdr, sizeof(hdr)) == sizeof(hdr));
	EXPECT_TRUE(write(fd, &load, sizeof(load)) == sizeof(load));
	EXPECT_TRUE(write(fd, &other, sizeof(other)) == sizeof(other));
	EXPECT_TRUE(write(fd, &debug, sizeof(debug)) == sizeof(debug));
	EXPECT_TRUE(write(fd, &partial, sizeof(partial)) == sizeof(partial));
	EXPECT_EQ_INT(1, mh_jitdump_set_pid(fd, sizeof(hdr) + 4 * sizeof(struct rec), 1, 4242));
	EXPECT_TRUE(pread(fd, &hpid, 4, 20) == 4);
	EXPECT_EQ_INT(4242, hpid);
	EXPECT_TRUE(pread(fd, &back, sizeof(back), sizeof(hdr)) == sizeof(back));
	EXPECT_EQ_INT(4242, back.pid);
	EXPECT_EQ_INT(4242, back.tid);
	EXPECT_TRUE(pread(fd, &back, sizeof(back), sizeof(hdr) + sizeof(back)) == sizeof(back));
	EXPECT_EQ_INT(99, back.pid);
	EXPECT_TRUE(pread(fd, &back, sizeof(back), sizeof(hdr) + 2 * sizeof(back)) == sizeof(back));
	EXPECT_EQ_INT(1, back.pid); /* debug info has no PID: untouched */
	/* Not a jitdump at all. */
	EXPECT_TRUE(pwrite(fd, "nope", 4, 0) == 4);
	EXPECT_EQ_INT(-EINVAL, mh_jitdump_set_pid(fd, sizeof(hdr), 1, 4242));
	close(fd);
}

/* A jitdump far larger than the window its records are read through
 * (records of varied sizes straddling every window boundary), whose
 * writer gave up inside its last record; and the same walk rewriting
 * PIDs across the windows. */
DEF_TEST(jitdump_walk_crosses_read_windows)
{
	struct {
		uint32_t magic, version, total_size, elf_mach, pad1, pid;
		uint64_t timestamp, flags;
	} hdr = { 0x4A695444u, 1, 40, 62, 0, 1, 0, 0 };
	struct {
		uint32_t id, total_size;
		uint64_t timestamp;
		uint32_t pid, tid;
	} rec;
	static unsigned char body[5000];
	char path[512];
	uint64_t records = 0, off = sizeof(hdr), n = 0, loads = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/big-jit.dump", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	EXPECT_TRUE(fd >= 0);
	if (fd < 0)
		return;
	EXPECT_TRUE(pwrite(fd, &hdr, sizeof(hdr), 0) == sizeof(hdr));
	/* About 2 MiB: 8 windows of 256 KiB. */
	while (off < 2u << 20) {
		size_t size = sizeof(rec) + (n * 397) % sizeof(body);

		rec = (typeof(rec)){ .id = n % 3 == 2 ? 2 : 0, .total_size = (uint32_t)size,
				     .timestamp = n, .pid = 1, .tid = 1 };
		EXPECT_TRUE(pwrite(fd, &rec, sizeof(rec), (off_t)off) == sizeof(rec));
		EXPECT_TRUE(pwrite(fd, body, size - sizeof(rec), (off_t)(off + sizeof(rec))) ==
			    (ssize_t)(size - sizeof(rec)));
		loads += rec.id == 0;
		off += size;
		n++;
	}
	/* The last record, cut inside its code bytes. */
	rec = (typeof(rec)){ .id = 0, .total_size = 65536, .pid = 1, .tid = 1 };
	EXPECT_TRUE(pwrite(fd, &rec, sizeof(rec), (off_t)off) == sizeof(rec));
	EXPECT_TRUE(pwrite(fd, body, 1000, (off_t)(off + sizeof(rec))) == 1000);
	EXPECT_EQ_INT((long long)off, (long long)mh_jitdump_whole(fd, off + sizeof(rec) + 1000,
								   &records));
	EXPECT_EQ_INT((long long)n, (long long)records);
	/* Whole to the end. */
	EXPECT_EQ_INT((long long)off, (long long)mh_jitdump_whole(fd, off, &records));
	EXPECT_EQ_INT((long long)loads, (long long)mh_jitdump_set_pid(fd, off, 1, 4242));
	EXPECT_TRUE(pread(fd, &rec, sizeof(rec), (off_t)(off - (sizeof(rec) +
						((n - 1) * 397) % sizeof(body)))) == sizeof(rec));
	EXPECT_EQ_INT((n - 1) % 3 == 2 ? 1 : 4242, rec.pid);
	close(fd);
}

/* ---- the harvester against a fake services table ---- */

static char logbuf[8192];
static int jit_files_added;
static pid_t jit_file_pid;

static void fake_log(struct tracerig_ctx *ctx, enum tracerig_log_level level, const char *fmt, ...)
{
	size_t used = strlen(logbuf);
	va_list ap;

	(void)ctx;
	(void)level;
	va_start(ap, fmt);
	if (used < sizeof(logbuf) - 2) {
		vsnprintf(logbuf + used, sizeof(logbuf) - used - 1, fmt, ap);
		strcat(logbuf, "\n");
	}
	va_end(ap);
}

static void fake_counter(struct tracerig_ctx *ctx, const char *name, uint64_t value)
{
	(void)ctx;
	(void)name;
	(void)value;
}

static void fake_progress(struct tracerig_ctx *ctx, const char *fmt, ...)
{
	(void)ctx;
	(void)fmt;
}

static int fake_add_jit(struct tracerig_ctx *ctx, pid_t pid, const char *path)
{
	(void)ctx;
	jit_files_added++;
	jit_file_pid = pid;
	return access(path, R_OK) == 0 ? 0 : -ENOENT;
}

/* What finish declares final, so the core deflates it during the flushes. */
static int declared_final;

static int fake_append_only(struct tracerig_ctx *ctx, const char *name, uint64_t from)
{
	(void)ctx;
	if (from == 0 && strncmp(name, "perf-", 5) == 0)
		declared_final++;
	return 0;
}

static const struct tracerig_run_services fake_run = {
	.size = sizeof(fake_run),
	.log = fake_log,
	.counter_set = fake_counter,
	.progress_set = fake_progress,
};
static const struct tracerig_internal_services fake_internal = {
	.size = sizeof(fake_internal),
	.symbolizer_add_jit_file = fake_add_jit,
	.archive_append_only = fake_append_only,
};
static const struct tracerig_services fake_svc = {
	.abi_version = TRACERIG_ABI_VERSION,
	.run = &fake_run,
	.internal = &fake_internal,
};

DEF_TEST(exited_process_keeps_its_whole_map)
{
	struct mh_harvester h;
	char staging[512], path[600], buf[256] = "";
	int go[2], ready[2], fd;
	pid_t child;
	char c = 0;

	snprintf(staging, sizeof(staging), "%s/staging", tmpdir);
	if (mkdir(staging, 0755) < 0 || pipe(go) < 0 || pipe(ready) < 0) {
		TEST_FAIL("setup: %s", strerror(errno));
		return;
	}
	child = fork();
	if (child == 0) {
		/* A "runtime": writes its map, waits, appends, removes it, exits. */
		char map[64];
		FILE *f;

		snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
		f = fopen(map, "w");
		if (!f)
			_exit(1);
		fputs("1000 10 first\n", f);
		fflush(f);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		fputs("2000 10 second\n", f);
		fclose(f);
		unlink(map);
		_exit(0);
	}
	if (read(ready[0], &c, 1) != 1) {
		TEST_FAIL("child did not start");
		return;
	}
	EXPECT_EQ_INT(0, mh_harvester_init(&h, &fake_svc, NULL, staging, 1 << 20, 0));
	mh_harvest(&h, child);
	EXPECT_EQ_INT(1, h.n_files);
	if (write(go[1], &c, 1) != 1)
		TEST_FAIL("cannot release the child");
	waitpid(child, NULL, 0);
	/* Gone, and its file unlinked: the held fd still has everything. */
	mh_harvest_tick(&h);
	declared_final = 0;
	mh_harvester_finish(&h);
	/* Whole now: declared so from its first byte. */
	EXPECT_EQ_INT(1, declared_final);
	snprintf(path, sizeof(path), "%s/perf-%d.map", staging, (int)child);
	fd = open(path, O_RDONLY);
	EXPECT_TRUE(fd >= 0);
	if (fd >= 0) {
		EXPECT_TRUE(read(fd, buf, sizeof(buf) - 1) > 0);
		close(fd);
	}
	EXPECT_EQ_STR("1000 10 first\n2000 10 second\n", buf);
	/* Handed when found (a conversion made while collecting reads it as
	 * it grows), and again once complete. */
	EXPECT_EQ_INT(2, jit_files_added);
	EXPECT_EQ_INT(child, jit_file_pid);
	EXPECT_CONTAINS("harvesting /tmp/perf-", logbuf);
	mh_harvester_free(&h);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
}

DEF_TEST(map_growing_past_max_size_is_dropped)
{
	struct mh_harvester h;
	char staging[512], path[600];
	int go[2], ready[2];
	pid_t child;
	char c = 0;

	snprintf(staging, sizeof(staging), "%s/staging-big", tmpdir);
	if (mkdir(staging, 0755) < 0 || pipe(go) < 0 || pipe(ready) < 0) {
		TEST_FAIL("setup: %s", strerror(errno));
		return;
	}
	child = fork();
	if (child == 0) {
		char map[64];
		FILE *f;

		snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
		f = fopen(map, "w");
		if (!f)
			_exit(1);
		fputs("1000 10 small\n", f);
		fflush(f);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < 20; i++)
			fputs("2000 10 a_much_longer_line\n", f);
		fflush(f);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		fclose(f);
		unlink(map);
		_exit(0);
	}
	if (read(ready[0], &c, 1) != 1) {
		TEST_FAIL("child did not start");
		return;
	}
	logbuf[0] = '\0';
	EXPECT_EQ_INT(0, mh_harvester_init(&h, &fake_svc, NULL, staging, 256, 0));
	mh_harvest(&h, child);
	EXPECT_EQ_INT(1, h.n_files);
	if (write(go[1], &c, 1) != 1 || read(ready[0], &c, 1) != 1)
		TEST_FAIL("child stuck");
	mh_harvest_tick(&h);
	EXPECT_EQ_INT(0, h.n_files);
	EXPECT_EQ_INT(1, h.n_refused);
	EXPECT_EQ_INT(0, h.bytes);
	EXPECT_CONTAINS("more than max_size = 256", logbuf);
	snprintf(path, sizeof(path), "%s/perf-%d.map", staging, (int)child);
	EXPECT_TRUE(access(path, F_OK) != 0);
	if (write(go[1], &c, 1) != 1)
		TEST_FAIL("cannot release the child");
	waitpid(child, NULL, 0);
	mh_harvester_finish(&h);
	EXPECT_TRUE(access(path, F_OK) != 0);
	mh_harvester_free(&h);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
}

int main(void)
{
	char cmd[600];

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN_TEST(status_innermost_nstgid);
	RUN_TEST(dotnet_settings);
	RUN_TEST(node_flags);
	RUN_TEST(cwd_inside_root);
	RUN_TEST(copy_follows_appends);
	RUN_TEST(jitdump_pids_become_host_pids);
	RUN_TEST(jitdump_walk_crosses_read_windows);
	RUN_TEST(exited_process_keeps_its_whole_map);
	RUN_TEST(map_growing_past_max_size_is_dropped);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", tmpdir);
	TEST_MAIN_END();
}
