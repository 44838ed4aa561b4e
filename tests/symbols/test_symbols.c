/* The shared symbolizer against real processes: a PIE and a shared library
 * with known functions, JIT maps and jitdump files, the kernel's symbols,
 * a binary that exists only inside a PID+mount namespace, and processes
 * that have exited. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../core/log.h"
#include "../../core/symbols/demangle.h"
#include "../../core/symbols/elfsym.h"
#include "../../core/symbols/jit.h"
#include "../../core/symbols/symbolizer.h"
#include "../testing.h"

#define FIXTURE TR_ABS_BUILDDIR "/tests/symbols/fixture"
#define FIXTURE_LIB TR_ABS_BUILDDIR "/tests/symbols/.libs/libfixture.so"

struct child {
	pid_t pid;     /* the process we forked */
	pid_t hostpid; /* the fixture's host PID (differs under unshare --fork) */
	int in_fd;
	FILE *out;
	uint64_t alpha, local, spin, lib, liblocal, anon;
};

static int child_start(struct child *c, char *const argv[])
{
	int in[2], out[2];
	char line[256];

	memset(c, 0, sizeof(*c));
	if (pipe(in) < 0 || pipe(out) < 0)
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	c->out = fdopen(out[0], "r");
	if (!c->out)
		return -errno;
	while (fgets(line, sizeof(line), c->out)) {
		unsigned long v;
		char name[32];

		if (strcmp(line, "ready\n") == 0)
			return c->hostpid > 0 ? 0 : -ESRCH;
		if (sscanf(line, "%31[^=]=%li", name, &v) != 2)
			continue;
		if (strcmp(name, "pid") == 0)
			c->hostpid = (pid_t)v;
		else if (strcmp(name, "alpha") == 0)
			c->alpha = v;
		else if (strcmp(name, "local") == 0)
			c->local = v;
		else if (strcmp(name, "spin") == 0)
			c->spin = v;
		else if (strcmp(name, "lib") == 0)
			c->lib = v;
		else if (strcmp(name, "liblocal") == 0)
			c->liblocal = v;
		else if (strcmp(name, "anon") == 0)
			c->anon = v;
	}
	return -EPIPE;
}

/* Closing its stdin lets the fixture exit; returns its exit status. */
static int child_stop(struct child *c)
{
	int status = -1;

	if (c->in_fd > 0)
		close(c->in_fd);
	if (c->out)
		fclose(c->out);
	if (c->pid > 0 && waitpid(c->pid, &status, 0) < 0)
		status = -1;
	c->in_fd = 0;
	c->out = NULL;
	c->pid = 0;
	return status;
}

static int start_fixture(struct child *c)
{
	char *argv[] = { FIXTURE, FIXTURE_LIB, NULL };

	return child_start(c, argv);
}

/* Runs `tool file` and returns the value `parse` finds for `want` on the
 * last line of its output that has it; -1 when none has. */
static long long tool_value(const char *tool, const char *file,
			    int (*parse)(const char *line, const char *want, long long *value),
			    const char *want)
{
	char cmd[512], line[512];
	long long value = -1, v;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s %s 2>/dev/null", tool, file);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (parse(line, want, &v))
			value = v;
	pclose(p);
	return value;
}

static int nm_line(const char *line, const char *symbol, long long *value)
{
	unsigned long long v;
	char type, name[256];

	if (sscanf(line, "%llx %c %255s", &v, &type, name) != 3 || strcmp(name, symbol) != 0)
		return 0;
	*value = (long long)v;
	return 1;
}

/* The symbol's value as `nm` prints it: what perf shows as the dso offset. */
static long long nm_value(const char *file, const char *symbol)
{
	return tool_value("nm", file, nm_line, symbol);
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

DEF_TEST(functions_of_a_running_pie_resolve_with_perf_offsets)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tracerig_symbol s;
	struct child c;
	long long value;

	CHECK_NOT_NULL(sym);
	EXPECT_EQ_INT(0, start_fixture(&c));
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.alpha, 0, &s));
	EXPECT_EQ_STR("tr_fixture_alpha", s.name);
	EXPECT_TRUE(s.dso && same_file(FIXTURE, s.dso));
	EXPECT_EQ_INT(0, s.sym_offset);
	value = nm_value(FIXTURE, "tr_fixture_alpha");
	if (value >= 0)
		EXPECT_EQ_INT(value, s.dso_offset);

	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.alpha + 3, 0, &s));
	EXPECT_EQ_STR("tr_fixture_alpha", s.name);
	EXPECT_EQ_INT(3, s.sym_offset);
	if (value >= 0)
		EXPECT_EQ_INT(value + 3, s.dso_offset);

	/* A file-local function: only .symtab has it. */
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.local + 1, 0, &s));
	EXPECT_EQ_STR("fixture_local", s.name);
	EXPECT_EQ_INT(1, s.sym_offset);
	EXPECT_EQ_INT(0, child_stop(&c));
	tr_symbolizer_free(sym);
}

static int readelf_section_line(const char *line, const char *name, long long *addr)
{
	const char *at = strstr(line, "] ");
	char sec[64], type[64];
	unsigned long long a;

	if (!at || sscanf(at + 2, "%63s %63s %llx", sec, type, &a) != 3 || strcmp(sec, name) != 0)
		return 0;
	*addr = (long long)a;
	return 1;
}

/* The address of section `name` in `file`, as readelf shows it; -1 when
 * it has none. */
static long long section_addr(const char *file, const char *name)
{
	return tool_value("readelf -SW", file, readelf_section_line, name);
}

/* The PLT's header (the lazy-binding trampoline) has no symbol of its own:
 * perf names it after _init, the size-less symbol of .init before it,
 * extended to the next symbol ("_init+0x26"), and so does tracerig. */
DEF_TEST(plt_header_is_named_after_init_as_perf_names_it)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	long long alpha = nm_value(FIXTURE, "tr_fixture_alpha"), init = nm_value(FIXTURE, "_init");
	long long plt = section_addr(FIXTURE, ".plt");
	struct tracerig_symbol s;
	struct child c;

	CHECK_NOT_NULL(sym);
	if (alpha < 0 || init < 0 || plt <= init) {
		printf("# no _init before .plt in the fixture: nothing to check\n");
		tr_symbolizer_free(sym);
		return;
	}
	EXPECT_EQ_INT(0, start_fixture(&c));
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid,
					      c.alpha - (uint64_t)alpha + (uint64_t)plt + 6, 0, &s));
	EXPECT_EQ_STR("_init", s.name);
	EXPECT_EQ_INT(plt + 6 - init, s.sym_offset);
	EXPECT_EQ_INT(0, child_stop(&c));
	tr_symbolizer_free(sym);
}

DEF_TEST(functions_of_a_shared_library_resolve)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tracerig_symbol s;
	struct child c;
	long long value;

	CHECK_NOT_NULL(sym);
	EXPECT_EQ_INT(0, start_fixture(&c));
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.lib + 2, 0, &s));
	EXPECT_EQ_STR("tr_fixture_lib_func", s.name);
	EXPECT_EQ_INT(2, s.sym_offset);
	EXPECT_TRUE(s.dso && same_file(FIXTURE_LIB, s.dso));
	value = nm_value(FIXTURE_LIB, "tr_fixture_lib_func");
	if (value >= 0)
		EXPECT_EQ_INT(value + 2, s.dso_offset);
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.liblocal, 0, &s));
	EXPECT_EQ_STR("fixture_lib_local", s.name);
	EXPECT_EQ_INT(0, child_stop(&c));
	tr_symbolizer_free(sym);
}

DEF_TEST(unknown_anonymous_code_names_its_object_only)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tracerig_symbol s;
	struct child c;
	char want[64];

	CHECK_NOT_NULL(sym);
	EXPECT_EQ_INT(0, start_fixture(&c));
	snprintf(want, sizeof(want), "/tmp/perf-%d.map", (int)c.hostpid);
	EXPECT_EQ_INT(-ENOENT, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x10, 0, &s));
	EXPECT_TRUE(s.name == NULL);
	EXPECT_EQ_STR(want, s.dso);
	/* An address in no mapping at all. */
	EXPECT_EQ_INT(-ENOENT, tr_symbolizer_lookup(sym, c.hostpid, 0x10, 0, &s));
	EXPECT_TRUE(s.name == NULL);
	EXPECT_EQ_INT(0, child_stop(&c));
	tr_symbolizer_free(sym);
}

static int write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, data, len) == (ssize_t)len;
	close(fd);
	return ok ? 0 : -EIO;
}

DEF_TEST(perf_map_file_names_jit_code)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	char dir[] = "/tmp/trsym-XXXXXX", path[128], text[256], want[64];
	struct tracerig_symbol s;
	struct child c;

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, start_fixture(&c));
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)c.hostpid);
	snprintf(text, sizeof(text), "%" PRIx64 " 20 jit_one\n%" PRIx64 " 10 LazyCompile:~hot /app/x.js:3\n",
		 c.anon + 0x100, c.anon + 0x140);
	EXPECT_EQ_INT(0, write_file(path, text, strlen(text)));
	EXPECT_EQ_INT(0, tr_symbolizer_add_jit_file(sym, c.hostpid, path));
	snprintf(want, sizeof(want), "/tmp/perf-%d.map", (int)c.hostpid);
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x105, 0, &s));
	EXPECT_EQ_STR("jit_one", s.name);
	EXPECT_EQ_INT(5, s.sym_offset);
	EXPECT_EQ_STR(want, s.dso);
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x14f, 0, &s));
	EXPECT_EQ_STR("LazyCompile:~hot /app/x.js:3", s.name);
	/* Past the end of the last entry. */
	EXPECT_EQ_INT(-ENOENT, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x150, 0, &s));
	/* Lines appended later (the runtime keeps compiling) are found too. */
	snprintf(text, sizeof(text), "%" PRIx64 " 8 jit_later\n", c.anon + 0x300);
	FILE *f = fopen(path, "a");
	CHECK_NOT_NULL(f);
	fputs(text, f);
	fclose(f);
	usleep(60 * 1000); /* the symbolizer rereads JIT files at most every 50 ms */
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x300, 0, &s));
	EXPECT_EQ_STR("jit_later", s.name);
	EXPECT_EQ_INT(0, child_stop(&c));
	unlink(path);
	rmdir(dir);
	tr_symbolizer_free(sym);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* issue 25: under load, a live conversion named a few samples in freshly
 * tiered-up methods "[unknown]": converted within 50 ms of the last read
 * of the perf map, in code the runtime logged after that read.  With the
 * sample's time, the map is read again at once when the sample is newer
 * than the last read, however soon after it. */
DEF_TEST(a_sample_newer_than_the_last_read_of_a_perf_map_reads_it_again)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	char dir[] = "/tmp/trsym-XXXXXX", path[128], text[256];
	uint64_t before, after;
	const char *name;
	struct child c;
	FILE *f;

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, start_fixture(&c));
	before = monotonic_ns(); /* a sample taken before the map is first read */
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)c.hostpid);
	snprintf(text, sizeof(text), "%" PRIx64 " 20 jit_one\n", c.anon + 0x100);
	EXPECT_EQ_INT(0, write_file(path, text, strlen(text)));
	EXPECT_EQ_INT(0, tr_symbolizer_add_jit_file(sym, c.hostpid, path));
	EXPECT_EQ_INT(0, tr_symbolizer_frame_name_at(sym, c.hostpid, c.anon + 0x105, 0, before,
						     &name, NULL));
	EXPECT_EQ_STR("jit_one", name);
	/* The runtime compiles another method after that read. */
	f = fopen(path, "a");
	CHECK_NOT_NULL(f);
	fprintf(f, "%" PRIx64 " 8 jit_later\n", c.anon + 0x300);
	fclose(f);
	/* A sample from after the read: read again at once, no 50 ms wait.
	 * (One from before it is looked up again only 50 ms after the read:
	 * how soon that is depends on this machine, so it is not asked.) */
	after = monotonic_ns();
	EXPECT_EQ_INT(0, tr_symbolizer_frame_name_at(sym, c.hostpid, c.anon + 0x300, 0, after,
						     &name, NULL));
	EXPECT_EQ_STR("jit_later", name);
	EXPECT_EQ_INT(0, child_stop(&c));
	unlink(path);
	rmdir(dir);
	tr_symbolizer_free(sym);
}

/* issue 27 (8): five processes of one user linking one 250 MB map under
 * their names drove tracerig to 3.3 GB.  Across the processes of a
 * session a file is read once, and live sources together at most the
 * shared budget. */
DEF_TEST(a_jit_file_linked_under_several_processes_is_read_once)
{
	char dir[] = "/tmp/trjit-XXXXXX", one[128], two[128], other[128];
	struct tr_jit_shared sh = { .max = TR_JIT_MAX_TOTAL };
	struct tr_jit a = { .shared = &sh, .pid = 100 }, b = { .shared = &sh, .pid = 200 },
		      c = { .shared = &sh, .pid = 300 };
	struct tr_arena arena = { 0 };
	const char *text = "7f0000001000 40 linked_fn\n";

	CHECK_NOT_NULL(mkdtemp(dir));
	snprintf(one, sizeof(one), "%s/perf-100.map", dir);
	snprintf(two, sizeof(two), "%s/perf-200.map", dir);
	snprintf(other, sizeof(other), "%s/perf-300.map", dir);
	EXPECT_EQ_INT(0, write_file(one, text, strlen(text)));
	EXPECT_EQ_INT(0, link(one, two));
	EXPECT_EQ_INT(0, tr_jit_add_source(&a, one, getpid()));
	EXPECT_EQ_INT(0, tr_jit_add_source(&b, two, getpid()));
	tr_jit_refresh(&a, &arena);
	tr_jit_refresh(&b, &arena);
	EXPECT_TRUE(tr_jit_find(&a, 0x7f0000001010) != NULL);
	EXPECT_TRUE(tr_jit_find(&b, 0x7f0000001010) == NULL);
	EXPECT_EQ_INT((long long)strlen(text), (long long)sh.read);
	/* Once the first reader is gone, the file is another's to read. */
	tr_jit_free(&a);
	EXPECT_EQ_INT(0, (long long)sh.n);
	/* The budget: what is read past it is refused. */
	sh.max = sh.read;
	EXPECT_EQ_INT(0, write_file(other, "7f0000002000 40 over_budget\n", 28));
	EXPECT_EQ_INT(0, tr_jit_add_source(&c, other, getpid()));
	tr_jit_refresh(&c, &arena);
	EXPECT_TRUE(tr_jit_find(&c, 0x7f0000002010) == NULL);
	tr_jit_free(&b);
	tr_jit_free(&c);
	tr_jit_shared_free(&sh);
	tr_arena_free(&arena);
	unlink(one);
	unlink(two);
	unlink(other);
	rmdir(dir);
}

/* Lines of `log` that contain `needle`. */
static int count_lines(const char *log, const char *needle)
{
	char line[4096];
	int n = 0;
	FILE *f = fopen(log, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* issue 9: a 1 GB sparse map with no newline was read again on every miss.
 * A refused perf map or jitdump is said once in the log and never opened
 * again, even once it became a valid file. */
DEF_TEST(refused_jit_files_are_said_once_and_never_reread)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	char dir[] = "/tmp/trsym-XXXXXX", big[128], noline[128], fifo[128], log[128];
	char want[256], text[128];
	struct tracerig_symbol s;
	struct child c;
	int fd;

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	snprintf(big, sizeof(big), "%s/perf-big.map", dir);
	snprintf(noline, sizeof(noline), "%s/perf-noline.map", dir);
	snprintf(fifo, sizeof(fifo), "%s/perf-fifo.map", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	fd = open(big, O_WRONLY | O_CREAT | O_EXCL, 0644);
	EXPECT_TRUE(fd >= 0 && ftruncate(fd, 300ll << 20) == 0);
	close(fd);
	fd = open(noline, O_WRONLY | O_CREAT | O_EXCL, 0644);
	EXPECT_TRUE(fd >= 0 && ftruncate(fd, 20ll << 20) == 0);
	close(fd);
	EXPECT_EQ_INT(0, mkfifo(fifo, 0644));
	tr_log_set_verbosity(TRACERIG_LOG_ERROR - 1);
	EXPECT_EQ_INT(0, tr_log_open_file(log));

	EXPECT_EQ_INT(0, start_fixture(&c));
	EXPECT_EQ_INT(0, tr_symbolizer_add_jit_file(sym, c.hostpid, big));
	EXPECT_EQ_INT(0, tr_symbolizer_add_jit_file(sym, c.hostpid, noline));
	EXPECT_EQ_INT(0, tr_symbolizer_add_jit_file(sym, c.hostpid, fifo));
	/* The big one becomes a valid map: refused is refused for good. */
	EXPECT_EQ_INT(0, truncate(big, 0));
	snprintf(text, sizeof(text), "%" PRIx64 " 20 jit_after_refusal\n", c.anon + 0x100);
	EXPECT_EQ_INT(0, write_file(big, text, strlen(text)));
	for (int i = 0; i < 3; i++) {
		usleep(60 * 1000); /* past the 50 ms between rereads */
		EXPECT_EQ_INT(-ENOENT, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x105, 0, &s));
	}
	EXPECT_EQ_INT(0, child_stop(&c));
	tr_log_close_file();
	tr_log_set_verbosity(TRACERIG_LOG_WARN);

	snprintf(want, sizeof(want), "refused %s: 314572800 bytes, larger than the 256 MiB limit "
		 "(its JIT frames stay unnamed; not read again)", big);
	EXPECT_EQ_INT(1, count_lines(log, want));
	snprintf(want, sizeof(want), "refused %s: no line ends in its first 16 MiB past offset 0",
		 noline);
	EXPECT_EQ_INT(1, count_lines(log, want));
	snprintf(want, sizeof(want), "refused %s: a FIFO", fifo);
	EXPECT_EQ_INT(1, count_lines(log, want));
	EXPECT_EQ_INT(3, count_lines(log, "refused"));
	unlink(big);
	unlink(noline);
	unlink(fifo);
	unlink(log);
	rmdir(dir);
	tr_symbolizer_free(sym);
}

static void put32(unsigned char **p, uint32_t v)
{
	memcpy(*p, &v, 4);
	*p += 4;
}

static void put64(unsigned char **p, uint64_t v)
{
	memcpy(*p, &v, 8);
	*p += 8;
}

/* A jitdump as perf's jitdump.h describes it: header, then records. */
static size_t make_jitdump(unsigned char *buf, pid_t pid, uint64_t addr, uint64_t size,
			   const char *name)
{
	unsigned char *p = buf;
	size_t name_len = strlen(name) + 1;

	put32(&p, 0x4A695444); /* magic "JiTD" */
	put32(&p, 1);          /* version */
	put32(&p, 40);         /* header size */
	put32(&p, 62);         /* EM_X86_64 */
	put32(&p, 0);
	put32(&p, (uint32_t)pid);
	put64(&p, 123456789);
	put64(&p, 0);
	/* JIT_CODE_LOAD */
	put32(&p, 0);
	put32(&p, (uint32_t)(16 + 40 + name_len + size));
	put64(&p, 123456790);
	put32(&p, (uint32_t)pid);
	put32(&p, (uint32_t)pid);
	put64(&p, addr); /* vma */
	put64(&p, addr); /* code_addr */
	put64(&p, size);
	put64(&p, 1); /* code_index */
	memcpy(p, name, name_len);
	p += name_len;
	memset(p, 0xcc, size);
	p += size;
	/* JIT_CODE_CLOSE */
	put32(&p, 3);
	put32(&p, 16);
	put64(&p, 123456791);
	return (size_t)(p - buf);
}

DEF_TEST(jitdump_file_names_jit_code)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	char dir[] = "/tmp/trsym-XXXXXX", path[128], want[64];
	unsigned char buf[1024];
	struct tracerig_symbol s;
	struct child c;
	size_t len;

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, start_fixture(&c));
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)c.hostpid);
	len = make_jitdump(buf, c.hostpid, c.anon + 0x400, 0x80, "Function:dumped_fn");
	EXPECT_EQ_INT(0, write_file(path, buf, len));
	EXPECT_EQ_INT(0, tr_symbolizer_add_jit_file(sym, c.hostpid, path));
	snprintf(want, sizeof(want), "/tmp/perf-%d.map", (int)c.hostpid);
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x47f, 0, &s));
	EXPECT_EQ_STR("Function:dumped_fn", s.name);
	EXPECT_EQ_INT(0x7f, s.sym_offset);
	EXPECT_EQ_STR(want, s.dso);
	EXPECT_EQ_INT(-ENOENT, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x480, 0, &s));
	EXPECT_EQ_INT(0, child_stop(&c));
	unlink(path);
	rmdir(dir);
	tr_symbolizer_free(sym);
}

/* A live jitdump read while its writer had grown the file but not yet
 * written the record into it: the zeros are not a record of an impossible
 * size that refuses the file for good; the record is read once there. */
DEF_TEST(a_jitdump_read_ahead_of_its_writer_is_read_again)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	char dir[] = "/tmp/trsym-XXXXXX", path[128], log[128];
	unsigned char first[1024], second[1024], buf[2048];
	struct tracerig_symbol s;
	struct child c;
	size_t len1, len2, rec2, len;

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	snprintf(log, sizeof(log), "%s/log", dir);
	tr_log_set_verbosity(TRACERIG_LOG_ERROR - 1);
	EXPECT_EQ_INT(0, tr_log_open_file(log));
	EXPECT_EQ_INT(0, start_fixture(&c));
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)c.hostpid);
	len1 = make_jitdump(first, c.hostpid, c.anon + 0x400, 0x80, "first_fn") - 16;
	len2 = make_jitdump(second, c.hostpid, c.anon + 0x600, 0x80, "second_fn") - 16;
	rec2 = len2 - 40; /* the second's record, without its header */
	/* Header, the first record, and room for the second still zeros. */
	memcpy(buf, first, len1);
	memset(buf + len1, 0, rec2);
	EXPECT_EQ_INT(0, write_file(path, buf, len1 + rec2));
	EXPECT_EQ_INT(0, tr_symbolizer_add_jit_file(sym, c.hostpid, path));
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x410, 0, &s));
	EXPECT_EQ_STR("first_fn", s.name);
	EXPECT_EQ_INT(-ENOENT, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x610, 0, &s));
	/* The record written, and the file grown by the next one's start. */
	memcpy(buf + len1, second + 40, rec2);
	len = len1 + rec2;
	memset(buf + len, 0, 16);
	EXPECT_EQ_INT(0, write_file(path, buf, len + 16));
	usleep(60 * 1000); /* past the 50 ms between rereads */
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x610, 0, &s));
	EXPECT_EQ_STR("second_fn", s.name);
	EXPECT_EQ_INT(0, child_stop(&c));
	tr_log_close_file();
	tr_log_set_verbosity(TRACERIG_LOG_WARN);
	EXPECT_EQ_INT(0, count_lines(log, "refused"));
	unlink(path);
	unlink(log);
	rmdir(dir);
	tr_symbolizer_free(sym);
}

/* A runtime's process (the fixture, with the jitdump it maps and writes
 * auto_dumped_fn into) and a lagging staged copy of its jitdump, which
 * names staged_fn only, handed to the symbolizer. */
struct lagging_copy {
	struct tr_symbolizer *sym;
	struct child c;
	char dir[32], staged[128], live[64];
};

/* l, or NULL (and the step that failed said) when it cannot be set up. */
static struct lagging_copy *lagging_copy_start(struct lagging_copy *l)
{
	char *argv[] = { "env", "TR_FIXTURE_JITDUMP=1", FIXTURE, NULL };
	unsigned char buf[1024];
	size_t len;

	snprintf(l->dir, sizeof(l->dir), "/tmp/trsym-XXXXXX");
	l->sym = tr_symbolizer_new();
	if (!l->sym || !mkdtemp(l->dir)) {
		TEST_FAIL("no symbolizer or no directory for the staged copy");
		return NULL;
	}
	EXPECT_EQ_INT(0, child_start(&l->c, argv));
	snprintf(l->live, sizeof(l->live), "/tmp/jit-%d.dump", (int)l->c.hostpid);
	snprintf(l->staged, sizeof(l->staged), "%s/jit-%d.dump", l->dir, (int)l->c.hostpid);
	len = make_jitdump(buf, l->c.hostpid, l->c.anon + 0x400, 0x80, "staged_fn");
	EXPECT_EQ_INT(0, write_file(l->staged, buf, len));
	EXPECT_EQ_INT(0, tr_symbolizer_add_jit_file(l->sym, l->c.hostpid, l->staged));
	return l;
}

/* Both the live jitdump's code and the copy's are named; then all goes. */
static void lagging_copy_check_and_stop(struct lagging_copy *l)
{
	struct tracerig_symbol s;

	EXPECT_EQ_INT(0, tr_symbolizer_lookup(l->sym, l->c.hostpid, l->c.anon + 0x610, 0, &s));
	EXPECT_EQ_STR("auto_dumped_fn", s.name);
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(l->sym, l->c.hostpid, l->c.anon + 0x410, 0, &s));
	EXPECT_EQ_STR("staged_fn", s.name);
	EXPECT_EQ_INT(0, child_stop(&l->c));
	unlink(l->live);
	unlink(l->staged);
	rmdir(l->dir);
	tr_symbolizer_free(l->sym);
}

/* A conversion made while collecting: mapharvest hands over its staged
 * copy of the jitdump, which lags behind the runtime, and moments later
 * the recording's mapping of the jitdump itself (./jit-PID.dump, as
 * perf_events renames it) is replayed.  Code newer than the copy must be
 * named by the samples that follow that mapping at once, not only once a
 * miss may reread the JIT sources (.NET with DOTNET_PerfMapEnabled=2 had
 * 2% of its samples unnamed that way). */
DEF_TEST(a_recorded_jitdump_mapping_is_read_at_once_past_a_lagging_copy)
{
	struct lagging_copy l;
	struct tracerig_mapping m = { 0 };
	char recorded[64];

	CHECK_NOT_NULL(lagging_copy_start(&l));
	m.pid = l.c.hostpid;
	m.start = l.c.anon;
	m.len = 65536;
	m.path = "//anon";
	EXPECT_EQ_INT(0, tr_symbolizer_record_mmap(l.sym, &m));
	snprintf(recorded, sizeof(recorded), "./jit-%d.dump", (int)l.c.hostpid);
	m.start = l.c.anon + 0x100000;
	m.len = 4096;
	m.ino = 1;
	m.path = recorded;
	EXPECT_EQ_INT(0, tr_symbolizer_record_mmap(l.sym, &m));
	lagging_copy_check_and_stop(&l);
}

/* The same without a recording (the ebpf backend's stacks): the jitdump
 * the process maps, found in /proc/PID/maps, is read live beside the
 * staged copy handed over before, not left out because a copy exists. */
DEF_TEST(a_mapped_jitdump_is_read_live_past_a_lagging_copy)
{
	struct lagging_copy l;

	CHECK_NOT_NULL(lagging_copy_start(&l));
	lagging_copy_check_and_stop(&l);
}

/* The address of `name` (and the module, if any) from /proc/kallsyms. */
static uint64_t kallsyms_addr(const char *name, char *module, size_t module_len)
{
	char line[512];
	uint64_t addr = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, sname[256], mod[128] = "";
		int n = sscanf(line, "%llx %c %255s %127s", &a, &type, sname, mod);

		if (n < 3 || (type != 't' && type != 'T'))
			continue;
		if (name ? strcmp(sname, name) == 0 : (n == 4 && mod[0] == '[')) {
			addr = a;
			if (module)
				snprintf(module, module_len, "%s", mod);
			if (!name)
				snprintf(module + module_len / 2, module_len / 2, "%.100s", sname);
			break;
		}
	}
	fclose(f);
	return addr;
}

DEF_TEST(kernel_addresses_resolve_from_kallsyms)
{
	struct tr_symbolizer *sym;
	struct tracerig_symbol s;
	uint64_t addr = kallsyms_addr("schedule", NULL, 0);
	char mod[256] = "";

	if (!addr) {
		printf("# kernel addresses are hidden (kptr_restrict) or schedule is missing\n");
		TEST_FAIL("no address for schedule in /proc/kallsyms (run as root)");
		return;
	}
	sym = tr_symbolizer_new();
	CHECK_NOT_NULL(sym);
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, 0, addr + 1, 1, &s));
	EXPECT_EQ_STR("schedule", s.name);
	EXPECT_EQ_STR("[kernel.kallsyms]", s.dso);
	EXPECT_EQ_INT(1, s.sym_offset);
	EXPECT_TRUE(s.dso_offset == addr + 1);
	/* A module's function, when a module is loaded. */
	addr = kallsyms_addr(NULL, mod, sizeof(mod));
	if (addr) {
		EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, 0, addr, 1, &s));
		EXPECT_EQ_STR(mod, s.dso);
		EXPECT_EQ_STR(mod + sizeof(mod) / 2, s.name);
	} else {
		printf("# no kernel module loaded: module lookup not exercised\n");
	}
	tr_symbolizer_free(sym);
}

DEF_TEST(mangled_names_are_demangled)
{
#ifdef HAVE_CPLUS_DEMANGLE
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tracerig_symbol s;
	struct child c;
	char *d;

	CHECK_NOT_NULL(sym);
	d = tr_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi");
	/* Without parameters, as `perf script` prints names. */
	EXPECT_EQ_STR("std::vector<int, std::allocator<int> >::push_back", d);
	free(d);
	/* Rust's legacy mangling goes through the same call. */
	d = tr_demangle("_ZN4core3fmt5write17h0123456789abcdefE");
	EXPECT_EQ_STR("core::fmt::write", d);
	free(d);
	EXPECT_TRUE(tr_demangle("main") == NULL);
	EXPECT_EQ_INT(0, start_fixture(&c));
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.spin, 0, &s));
	EXPECT_EQ_STR("tr::fixture::spin", s.name);
	EXPECT_EQ_INT(0, child_stop(&c));
	tr_symbolizer_free(sym);
#endif
}

static int unshare_works(void)
{
	return system("unshare --mount --pid --fork --propagation private true >/dev/null 2>&1") == 0;
}

DEF_TEST(binary_only_inside_a_namespace_resolves_by_host_pid)
{
	char dir[] = "/var/tmp/trsym-XXXXXX", script[2048], path[512], want[64];
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tracerig_symbol s;
	struct tracerig_object o;
	struct child c;

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	/* The fixture and its library are copied to a tmpfs mounted over an
	 * empty host directory, with a private /tmp: from the host, the path
	 * leads nowhere. */
	snprintf(script, sizeof(script),
		 "set -e; mount -t tmpfs tracerig-test %s; cp %s %s %s/; mkdir %s/tmp; "
		 "mount --bind %s/tmp /tmp; TR_FIXTURE_PERFMAP=1 TR_FIXTURE_JITDUMP=1 exec %s/fixture %s/libfixture.so",
		 dir, FIXTURE, FIXTURE_LIB, dir, dir, dir, dir, dir);
	char *argv[] = { "unshare", "--mount", "--pid", "--fork", "--propagation", "private",
			 "sh", "-c", script, NULL };
	EXPECT_EQ_INT(0, child_start(&c, argv));
	snprintf(path, sizeof(path), "%s/fixture", dir);
	EXPECT_TRUE(access(path, F_OK) < 0); /* not visible from here */
	EXPECT_TRUE(c.hostpid != c.pid);

	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.alpha + 4, 0, &s));
	EXPECT_EQ_STR("tr_fixture_alpha", s.name);
	EXPECT_EQ_STR(path, s.dso);
	EXPECT_EQ_INT(4, s.sym_offset);
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.lib, 0, &s));
	EXPECT_EQ_STR("tr_fixture_lib_func", s.name);
	/* Its object, and the root its debug files are in: its own. */
	EXPECT_EQ_INT(0, tr_symbolizer_object(sym, c.hostpid, c.lib, &o));
	EXPECT_TRUE(o.fd >= 0);
	EXPECT_EQ_INT((int)c.hostpid, (int)o.root_pid);
	if (o.fd >= 0)
		close(o.fd);
	/* Its own /tmp/perf-1.map, named by its namespace PID. */
	snprintf(want, sizeof(want), "/tmp/perf-%d.map", (int)c.hostpid);
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x201, 0, &s));
	EXPECT_EQ_STR("ns_jit_func", s.name);
	EXPECT_EQ_STR(want, s.dso);
	/* Its jitdump, found through its mappings. */
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x63f, 0, &s));
	EXPECT_EQ_STR("auto_dumped_fn", s.name);
	EXPECT_EQ_INT(0x3f, s.sym_offset);

	/* Remembered, it still resolves when the process and its namespace
	 * (and so its files) are gone. */
	EXPECT_EQ_INT(0, tr_symbolizer_remember(sym, c.hostpid));
	EXPECT_EQ_INT(0, child_stop(&c));
	EXPECT_TRUE(kill(c.hostpid, 0) < 0);
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.local, 0, &s));
	EXPECT_EQ_STR("fixture_local", s.name);
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.liblocal + 1, 0, &s));
	EXPECT_EQ_STR("fixture_lib_local", s.name);
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.anon + 0x210, 0, &s));
	EXPECT_EQ_STR("ns_jit_func", s.name);
	rmdir(dir);
	tr_symbolizer_free(sym);
}

/* The file descriptor is the very inode mapped. */
static int is_file(int fd, const char *path)
{
	char link[64];

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	return same_file(link, path);
}

/* Its symbols resolve, and its objects open for unwinding (symbolizer_object). */
DEF_TEST(remembered_process_resolves_after_exit)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tracerig_symbol s;
	struct tracerig_object o;
	struct child c;

	CHECK_NOT_NULL(sym);
	EXPECT_EQ_INT(0, start_fixture(&c));
	EXPECT_EQ_INT(0, tr_symbolizer_remember(sym, c.hostpid));
	EXPECT_EQ_INT(0, child_stop(&c));
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.alpha, 0, &s));
	EXPECT_EQ_STR("tr_fixture_alpha", s.name);
	EXPECT_TRUE(s.dso && same_file(FIXTURE, s.dso));
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.lib, 0, &s));
	EXPECT_EQ_STR("tr_fixture_lib_func", s.name);
	/* Not remembered and gone: nothing to resolve against. */
	EXPECT_EQ_INT(-ESRCH, tr_symbolizer_remember(sym, c.pid + 1000000));

	EXPECT_EQ_INT(0, tr_symbolizer_object(sym, c.hostpid, c.lib, &o));
	EXPECT_TRUE(is_file(o.fd, FIXTURE_LIB));
	EXPECT_TRUE(o.start <= c.lib && c.lib < o.end);
	EXPECT_TRUE(same_file(FIXTURE_LIB, o.path));
	/* Gone, its file found at the same path in our root: its debug
	 * files are ours. */
	EXPECT_EQ_INT(0, o.root_pid);
	close(o.fd);
	EXPECT_EQ_INT(0, tr_symbolizer_object(sym, c.hostpid, c.alpha, &o));
	EXPECT_TRUE(is_file(o.fd, FIXTURE));
	close(o.fd);
	/* JIT code has no file; the vDSO is the kernel's image, no file either. */
	EXPECT_EQ_INT(-ENOENT, tr_symbolizer_object(sym, c.hostpid, c.anon, &o));
	EXPECT_EQ_INT(0, tr_symbolizer_object(sym, getpid(), getauxval(AT_SYSINFO_EHDR), &o));
	EXPECT_EQ_INT(-1, o.fd);
	EXPECT_EQ_STR("[vdso]", o.path);
	tr_symbolizer_free(sym);
}

/* Issue 27: a session beside a compile loop sees thousands of processes a
 * minute; what is kept for one (mappings, frame names) goes when the
 * replay says it ended, and a PID used again starts afresh. */
DEF_TEST(a_process_forgotten_at_its_end_keeps_nothing)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tracerig_symbol s;
	const char *name;
	size_t frames, frames_before, procs_before;
	uint32_t gen, old_gen;
	struct child c;
	const pid_t first = 4000000, n = 3000;

	CHECK_NOT_NULL(sym);
	EXPECT_EQ_INT(0, start_fixture(&c));
	EXPECT_EQ_INT(0, tr_symbolizer_remember(sym, c.hostpid));
	EXPECT_EQ_INT(0, tr_symbolizer_frame_name(sym, c.hostpid, c.alpha, 0, &name, &s));
	procs_before = tr_symbolizer_processes(sym, &frames_before);
	/* Children of the fixture, as a recording describes them: each is
	 * named, then ends. */
	for (pid_t pid = first; pid < first + n; pid++) {
		EXPECT_EQ_INT(0, tr_symbolizer_record_fork(sym, c.hostpid, pid));
		EXPECT_EQ_INT(0, tr_symbolizer_frame_name(sym, pid, c.alpha, 0, &name, &s));
		EXPECT_EQ_STR("tr_fixture_alpha", name);
		EXPECT_TRUE(tr_symbolizer_frame_name(sym, pid, c.anon, 0, &name, &s) < 0);
		if (pid == first)
			EXPECT_EQ_INT(0, tr_symbolizer_frame_generation(sym, pid, &old_gen));
		EXPECT_EQ_INT(0, tr_symbolizer_forget(sym, pid));
	}
	EXPECT_EQ_INT((int)procs_before, (int)tr_symbolizer_processes(sym, &frames));
	EXPECT_EQ_INT((int)frames_before, (int)frames);
	EXPECT_EQ_INT(-ENOENT, tr_symbolizer_forget(sym, first));

	/* The PID again: a new process, under a generation the old one never
	 * had, so that a caller's kept answers for the old one never serve. */
	EXPECT_EQ_INT(0, tr_symbolizer_record_fork(sym, c.hostpid, first));
	EXPECT_EQ_INT(0, tr_symbolizer_frame_generation(sym, first, &gen));
	EXPECT_TRUE(gen != old_gen);
	EXPECT_EQ_INT(0, tr_symbolizer_frame_name(sym, first, c.lib, 0, &name, &s));
	EXPECT_EQ_STR("tr_fixture_lib_func", name);
	/* The parent, never forgotten, still resolves. */
	EXPECT_EQ_INT(0, tr_symbolizer_frame_name(sym, c.hostpid, c.alpha, 0, &name, &s));
	EXPECT_EQ_STR("tr_fixture_alpha", name);
	EXPECT_EQ_INT(0, child_stop(&c));
	tr_symbolizer_free(sym);
}

/* Thousands of processes alive at once, as a busy host's recording has
 * them, under PIDs that share their low bits so that many want the same
 * slots of the process table: the table grows many times over, and ending
 * every third process leaves each of the others found, as the process it
 * was (one made anew would have a new generation) and still resolving. */
DEF_TEST(processes_stay_found_as_others_among_thousands_are_forgotten)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tracerig_symbol s;
	const char *name;
	const pid_t first = 5000000, stride = 64;
	const int n = 4000;
	uint32_t *gens = calloc(n, sizeof(*gens)), gen = 0;
	int failed = 0, still_there = 0, made_anew = 0;
	size_t procs_before;
	struct child c;

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(gens);
	EXPECT_EQ_INT(0, start_fixture(&c));
	EXPECT_EQ_INT(0, tr_symbolizer_remember(sym, c.hostpid));
	procs_before = tr_symbolizer_processes(sym, NULL);
	for (int i = 0; i < n; i++)
		failed += tr_symbolizer_record_fork(sym, c.hostpid, first + i * stride) != 0 ||
			  tr_symbolizer_frame_generation(sym, first + i * stride, &gens[i]) != 0;
	EXPECT_EQ_INT(0, failed);
	EXPECT_EQ_INT((int)procs_before + n, (int)tr_symbolizer_processes(sym, NULL));
	for (int i = 0; i < n; i += 3)
		failed += tr_symbolizer_forget(sym, first + i * stride) != 0;
	EXPECT_EQ_INT(0, failed);
	for (int i = 0; i < n; i++) {
		if (i % 3 == 0) {
			still_there += tr_symbolizer_forget(sym, first + i * stride) != -ENOENT;
			continue;
		}
		failed += tr_symbolizer_frame_generation(sym, first + i * stride, &gen) != 0;
		made_anew += gen != gens[i];
	}
	EXPECT_EQ_INT(0, failed);
	EXPECT_EQ_INT(0, still_there);
	EXPECT_EQ_INT(0, made_anew);
	EXPECT_EQ_INT((int)procs_before + n - (n + 2) / 3, (int)tr_symbolizer_processes(sym, NULL));
	EXPECT_EQ_INT(
		0, tr_symbolizer_frame_name(sym, first + (n - 2) * stride, c.alpha, 0, &name, &s));
	EXPECT_EQ_STR("tr_fixture_alpha", name);
	EXPECT_EQ_INT(0, tr_symbolizer_frame_name(sym, c.hostpid, c.lib, 0, &name, &s));
	EXPECT_EQ_STR("tr_fixture_lib_func", name);
	EXPECT_EQ_INT(0, child_stop(&c));
	free(gens);
	tr_symbolizer_free(sym);
}

DEF_TEST(deleted_binary_resolves_through_map_files)
{
	char dir[] = "/tmp/trsym-XXXXXX", path[128], cmd[512];
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tracerig_symbol s;
	struct child c;

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fixture-copy", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", FIXTURE, path);
	EXPECT_EQ_INT(0, system(cmd));
	char *argv[] = { path, NULL };
	EXPECT_EQ_INT(0, child_start(&c, argv));
	EXPECT_EQ_INT(0, unlink(path)); /* as a package upgrade would */
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.local + 2, 0, &s));
	EXPECT_EQ_STR("fixture_local", s.name);
	EXPECT_EQ_STR(path, s.dso); /* without " (deleted)" */
	EXPECT_EQ_INT(0, child_stop(&c));
	rmdir(dir);
	tr_symbolizer_free(sym);
}

DEF_TEST(stripped_binary_uses_its_debuglink_file)
{
	char dir[] = "/tmp/trsym-XXXXXX", path[128], cmd[1024];
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tracerig_symbol s;
	struct child c;

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fixture-stripped", dir);
	/* The debug file next to the binary, named by .gnu_debuglink. */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && objcopy --only-keep-debug %s fixture.debug && strip -s -o fixture-stripped %s"
		 " && objcopy --add-gnu-debuglink=fixture.debug fixture-stripped",
		 dir, FIXTURE, FIXTURE);
	EXPECT_EQ_INT(0, system(cmd));
	snprintf(cmd, sizeof(cmd), "nm %s 2>&1 | grep -q fixture_local", path);
	EXPECT_TRUE(system(cmd) != 0); /* really stripped */
	char *argv[] = { path, NULL };
	EXPECT_EQ_INT(0, child_start(&c, argv));
	/* A file-local function: only in the debug file's .symtab. */
	EXPECT_EQ_INT(0, tr_symbolizer_lookup(sym, c.hostpid, c.local + 1, 0, &s));
	EXPECT_EQ_STR("fixture_local", s.name);
	EXPECT_EQ_STR(path, s.dso);
	EXPECT_EQ_INT(0, child_stop(&c));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	EXPECT_EQ_INT(0, system(cmd));
	tr_symbolizer_free(sym);
}

/* In dir: fixture-nobid, the fixture stripped of its symbols and of its
 * build id, whose .gnu_debuglink names fixture.debug (made and stored
 * there, CRC and all); and other.debug, a debug file of the same name and
 * layout whose fixture_local is called host_secret_fn. */
static int make_nobid_fixture(const char *dir)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "cd %s && { objcopy --remove-section .note.gnu.build-id %s nobid &&"
		 " objcopy --only-keep-debug nobid fixture.debug && strip -s -o fixture-nobid nobid &&"
		 " objcopy --add-gnu-debuglink=fixture.debug fixture-nobid &&"
		 " objcopy --redefine-sym fixture_local=host_secret_fn fixture.debug other.debug;"
		 " } 2>/dev/null && rm nobid && ! readelf -n fixture-nobid | grep -q 'Build ID' &&"
		 " ! nm fixture-nobid 2>&1 | grep -q fixture_local",
		 dir, FIXTURE);
	return system(cmd) == 0 ? 0 : -1;
}

/* The name `addr` gets in a fresh symbolizer ("" for none). */
static void name_of(pid_t pid, uint64_t addr, char *out, size_t len)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tracerig_symbol s;

	out[0] = '\0';
	if (sym && tr_symbolizer_lookup(sym, pid, addr, 0, &s) == 0 && s.name)
		snprintf(out, len, "%s", s.name);
	tr_symbolizer_free(sym);
}

/* An object whose process is gone before its debug file is looked for in
 * its root: not settled with .dynsym as if it had none (a recording's
 * object is then read from our root by its build id, with its debug file;
 * tests/perf_events/spill.sh saw libc named without its debug file for a
 * whole session, from one short-lived process). */
DEF_TEST(a_debug_file_not_looked_for_is_not_settled_without_it)
{
	char dir[] = "/tmp/trsym-XXXXXX", path[128], cmd[512];
	struct tr_arena arena = { 0 };
	struct tr_elf e = { 0 };
	pid_t gone = fork();
	int fd, status;

	if (gone == 0)
		_exit(0);
	EXPECT_TRUE(gone > 0 && waitpid(gone, &status, 0) == gone);
	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, make_nobid_fixture(dir));
	snprintf(path, sizeof(path), "%s/fixture-nobid", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	EXPECT_TRUE(fd >= 0);
	EXPECT_EQ_INT(-ESRCH, tr_elf_read(&e, fd, gone, path, &arena));
	tr_elf_free(&e);
	memset(&e, 0, sizeof(e));
	/* In our root, its debug file (the CRC its link holds) is found. */
	EXPECT_EQ_INT(0, tr_elf_read(&e, fd, 0, path, &arena));
	EXPECT_EQ_STR("debug file", e.symbols_from);
	tr_elf_free(&e);
	close(fd);
	tr_arena_free(&arena);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	EXPECT_EQ_INT(0, system(cmd));
}

DEF_TEST(a_debuglink_file_without_build_id_needs_its_crc)
{
	char dir[] = "/tmp/trsym-XXXXXX", path[128], cmd[512], name[256];
	struct child c;

	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, make_nobid_fixture(dir));
	snprintf(path, sizeof(path), "%s/fixture-nobid", dir);
	char *argv[] = { path, NULL };
	/* Its own debug file: the CRC matches. */
	EXPECT_EQ_INT(0, child_start(&c, argv));
	name_of(c.hostpid, c.local + 1, name, sizeof(name));
	EXPECT_EQ_STR("fixture_local", name);
	EXPECT_EQ_INT(0, child_stop(&c));
	/* Another file of that name: not its debug file, its names unused. */
	snprintf(cmd, sizeof(cmd), "cd %s && mv other.debug fixture.debug", dir);
	EXPECT_EQ_INT(0, system(cmd));
	EXPECT_EQ_INT(0, child_start(&c, argv));
	name_of(c.hostpid, c.local + 1, name, sizeof(name));
	if (strcmp(name, "host_secret_fn") == 0)
		TEST_FAIL("named after a debug file whose CRC is not the debuglink's");
	EXPECT_EQ_INT(0, child_stop(&c));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	EXPECT_EQ_INT(0, system(cmd));
}

DEF_TEST(a_debuglink_is_looked_up_in_the_objects_root_only)
{
	char dir[] = "/var/tmp/trsym-XXXXXX", script[2048], cmd[512], name[256];
	struct child c;

	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, make_nobid_fixture(dir));
	/* The container gets the binary in a tmpfs over dir, without its
	 * debug file; the host keeps its own dir/fixture.debug, CRC and all:
	 * a root-only host file of that name must not name its frames. */
	snprintf(script, sizeof(script),
		 "set -e; cp %s/fixture-nobid /run/trsym-nobid-$$; mount -t tmpfs tracerig-test %s;"
		 " mv /run/trsym-nobid-$$ %s/fixture-nobid; exec %s/fixture-nobid",
		 dir, dir, dir, dir);
	char *argv[] = { "unshare", "--mount", "--pid", "--fork", "--propagation", "private",
			 "sh", "-c", script, NULL };
	snprintf(cmd, sizeof(cmd), "chmod 600 %s/fixture.debug", dir);
	EXPECT_EQ_INT(0, system(cmd));
	EXPECT_EQ_INT(0, child_start(&c, argv));
	name_of(c.hostpid, c.local + 1, name, sizeof(name));
	if (strcmp(name, "fixture_local") == 0)
		TEST_FAIL("named from the host's %s/fixture.debug, outside the object's root", dir);
	EXPECT_EQ_INT(0, child_stop(&c));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	EXPECT_EQ_INT(0, system(cmd));
}

struct worker {
	struct tr_symbolizer *sym;
	struct child *c;
	int errors;
};

static void *lookups(void *arg)
{
	struct worker *w = arg;
	struct tracerig_symbol s;

	for (int i = 0; i < 20000; i++) {
		uint64_t addr = i % 2 ? w->c->alpha + (uint64_t)(i % 4) : w->c->lib;
		const char *want = i % 2 ? "tr_fixture_alpha" : "tr_fixture_lib_func";

		if (tr_symbolizer_lookup(w->sym, w->c->hostpid, addr, 0, &s) != 0 || !s.name ||
		    strcmp(s.name, want) != 0)
			w->errors++;
	}
	return NULL;
}

DEF_TEST(lookups_from_many_threads_agree)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct worker w[4];
	pthread_t t[4];
	struct child c;

	CHECK_NOT_NULL(sym);
	EXPECT_EQ_INT(0, start_fixture(&c));
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ .sym = sym, .c = &c };
		EXPECT_EQ_INT(0, pthread_create(&t[i], NULL, lookups, &w[i]));
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ_INT(0, w[i].errors);
	}
	EXPECT_EQ_INT(0, child_stop(&c));
	tr_symbolizer_free(sym);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN_TEST(functions_of_a_running_pie_resolve_with_perf_offsets);
	RUN_TEST(functions_of_a_shared_library_resolve);
	RUN_TEST(plt_header_is_named_after_init_as_perf_names_it);
	RUN_TEST(unknown_anonymous_code_names_its_object_only);
	RUN_TEST(perf_map_file_names_jit_code);
	RUN_TEST(a_sample_newer_than_the_last_read_of_a_perf_map_reads_it_again);
	RUN_TEST(jitdump_file_names_jit_code);
	RUN_TEST(a_jitdump_read_ahead_of_its_writer_is_read_again);
	RUN_TEST(a_recorded_jitdump_mapping_is_read_at_once_past_a_lagging_copy);
	RUN_TEST(a_mapped_jitdump_is_read_live_past_a_lagging_copy);
	RUN_TEST(refused_jit_files_are_said_once_and_never_reread);
	if (geteuid() == 0)
		RUN_TEST(kernel_addresses_resolve_from_kallsyms);
	else
		SKIP_TEST(kernel_addresses_resolve_from_kallsyms, "needs root to read kernel addresses");
#ifdef HAVE_CPLUS_DEMANGLE
	RUN_TEST(mangled_names_are_demangled);
#else
	SKIP_TEST(mangled_names_are_demangled, "built without libiberty (libiberty-dev)");
#endif
	if (geteuid() == 0 && unshare_works())
		RUN_TEST(binary_only_inside_a_namespace_resolves_by_host_pid);
	else
		SKIP_TEST(binary_only_inside_a_namespace_resolves_by_host_pid,
			  "needs root and unshare(1) with mount and PID namespaces");
	RUN_TEST(remembered_process_resolves_after_exit);
	RUN_TEST(a_process_forgotten_at_its_end_keeps_nothing);
	RUN_TEST(processes_stay_found_as_others_among_thousands_are_forgotten);
	/* /proc/PID/map_files needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE). */
	if (geteuid() == 0)
		RUN_TEST(deleted_binary_resolves_through_map_files);
	else
		SKIP_TEST(deleted_binary_resolves_through_map_files,
			  "needs root to open /proc/PID/map_files");
	if (system("command -v objcopy >/dev/null && command -v strip >/dev/null") == 0)
		RUN_TEST(stripped_binary_uses_its_debuglink_file);
	else
		SKIP_TEST(stripped_binary_uses_its_debuglink_file, "objcopy/strip (binutils) missing");
	if (system("command -v objcopy >/dev/null && command -v strip >/dev/null") == 0) {
		RUN_TEST(a_debug_file_not_looked_for_is_not_settled_without_it);
		RUN_TEST(a_debuglink_file_without_build_id_needs_its_crc);
	} else {
		SKIP_TEST(a_debug_file_not_looked_for_is_not_settled_without_it,
			  "objcopy/strip (binutils) missing");
		SKIP_TEST(a_debuglink_file_without_build_id_needs_its_crc,
			  "objcopy/strip (binutils) missing");
	}
	if (geteuid() == 0 && unshare_works() &&
	    system("command -v objcopy >/dev/null && command -v strip >/dev/null") == 0)
		RUN_TEST(a_debuglink_is_looked_up_in_the_objects_root_only);
	else
		SKIP_TEST(a_debuglink_is_looked_up_in_the_objects_root_only,
			  "needs root, unshare(1) with mount and PID namespaces, and binutils");
	RUN_TEST(a_jit_file_linked_under_several_processes_is_read_once);
	RUN_TEST(lookups_from_many_threads_agree);
	TEST_MAIN_END();
}
