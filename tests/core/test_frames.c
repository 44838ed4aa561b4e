/* The frame_name service (no root): one name per frame whoever asks, under
 * the one sanitize rule, cached per (process, address) and never served
 * from before the process model changed (mmap, exec, fork).
 *
 * The process model is fed as a recording's replay feeds it: a made-up
 * PID whose mappings are this test's own executable (read from our root)
 * or anonymous code named by a perf map this test writes. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/symbols/frames.h"
#include "../../core/symbols/symbolizer.h"
#include "../../core/views/stacks.h"
#include "../../lib/folded.h"
#include "../testing.h"

/* PIDs no process has (above the kernel's PID_MAX_LIMIT): nothing of them
 * is read from /proc, all comes from what the test records. */
#define P ((pid_t)0x7ffffff0)
#define CHILD ((pid_t)0x7ffffff1)
#define OTHER ((pid_t)0x7ffffff2)

/* A function of this executable whose name the symbol table has (global,
 * so it is there under that name). */
int frames_probe_fn(int x);
__attribute__((noinline, used)) int frames_probe_fn(int x)
{
	return x * 3 + 1;
}

/* The executable mapping of this program holding frames_probe_fn. */
struct exe_map {
	char path[PATH_MAX];
	uint64_t start, end, pgoff, dev, ino;
};

static int find_exe_map(struct exe_map *m)
{
	uint64_t addr = (uint64_t)(uintptr_t)&frames_probe_fn;
	char line[PATH_MAX + 128];
	struct stat st;
	FILE *f;
	int found = 0;

	if (!realpath("/proc/self/exe", m->path) || stat(m->path, &st) < 0)
		return -errno;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s %llx", &s, &e, perms, &off) == 4 &&
		    perms[2] == 'x' && addr >= s && addr < e) {
			m->start = s;
			m->end = e;
			m->pgoff = off;
			found = 1;
		}
	}
	fclose(f);
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	return found ? 0 : -ENOENT;
}

static struct tracerig_mapping exe_mapping(const struct exe_map *m, pid_t pid)
{
	return (struct tracerig_mapping){ .pid = pid, .start = m->start, .len = m->end - m->start,
					  .pgoff = m->pgoff, .dev = m->dev, .ino = m->ino,
					  .path = m->path };
}

static struct tracerig_mapping anon_mapping(const struct exe_map *m, pid_t pid)
{
	return (struct tracerig_mapping){ .pid = pid, .start = m->start, .len = m->end - m->start,
					  .path = "//anon" };
}

/* Writes a perf map for P in a directory of its own and hands it to the
 * symbolizer; the hostile names are at addresses in no mapping. */
static int add_perf_map(struct tr_symbolizer *sym, char *dir, const char *text)
{
	char path[PATH_MAX];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)P);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fputs(text, f);
	if (fclose(f) != 0)
		return -EIO;
	ret = tr_symbolizer_add_jit_file(sym, P, path);
	unlink(path);
	return ret;
}

static const char *name_of(struct tr_symbolizer *sym, pid_t pid, uint64_t addr, int kernel)
{
	const char *name = NULL;

	(void)tr_symbolizer_frame_name(sym, pid, addr, kernel, &name, NULL);
	return name;
}

/* ---- the naming rule ---- */

static const char *fmt(const char *name, const char *dso, uint64_t addr, int kernel)
{
	static char buf[256];
	struct tracerig_symbol s = { name, dso, 0, 0 };

	tr_frame_name_format(buf, sizeof(buf), &s, addr, kernel);
	return buf;
}

DEF_TEST(a_frame_is_its_symbol_its_object_or_its_address)
{
	EXPECT_EQ_STR("main", fmt("main", "/usr/bin/app", 0x1000, 0));
	EXPECT_EQ_STR("ns::run(int, char const*)", fmt("ns::run(int, char const*)", "/a", 1, 0));
	EXPECT_EQ_STR("[libfoo.so.1]", fmt(NULL, "/usr/lib/libfoo.so.1", 0x1000, 0));
	EXPECT_EQ_STR("[perf-42.map]", fmt(NULL, "/tmp/perf-42.map", 0x1000, 0));
	EXPECT_EQ_STR("[vdso]", fmt(NULL, "[vdso]", 0x1000, 0));
	EXPECT_EQ_STR("[unknown]", fmt(NULL, "[unknown]", 0x7f12ab34, 0));
	EXPECT_EQ_STR("[unknown]", fmt(NULL, NULL, 0x7f12ab34, 0));
	EXPECT_EQ_STR("[unknown]", fmt("", "", 0x10, 0)); /* no empty frame */
	EXPECT_EQ_STR("[/weird/]", fmt(NULL, "/weird/", 0x10, 0));
}

DEF_TEST(every_kernel_frame_ends_in_the_kernel_mark)
{
	EXPECT_EQ_STR("schedule_[k]", fmt("schedule", "[kernel.kallsyms]", 0xffffffff81000000ull, 1));
	EXPECT_EQ_STR("[kernel.kallsyms]_[k]", fmt(NULL, "[kernel.kallsyms]", 0xffffffff81000000ull, 1));
	EXPECT_EQ_STR("[nfs]_[k]", fmt(NULL, "[nfs]", 0xffffffffc0000000ull, 1));
	EXPECT_EQ_STR("[unknown]_[k]", fmt(NULL, "[unknown]", 0xffffffff81000000ull, 1));
}

DEF_TEST(hostile_names_are_made_safe_one_way)
{
	/* ';' would split a folded frame, a newline forge a line, ESC drive
	 * a terminal; spaces stay (C++ and .NET names have them). */
	EXPECT_EQ_STR("evil:frame", fmt("evil;frame", "/a", 1, 0));
	EXPECT_EQ_STR("new?line", fmt("new\nline", "/a", 1, 0));
	EXPECT_EQ_STR("?[31mred", fmt("\x1b[31mred", "/a", 1, 0));
	EXPECT_EQ_STR("tab?here x y", fmt("tab\there x y", "/a", 1, 0));
	EXPECT_EQ_STR("a:b_[k]", fmt("a;b", "[kernel.kallsyms]", 1, 1));
	EXPECT_EQ_STR("[evil:lib?.so]", fmt(NULL, "/tmp/evil;lib\n.so", 1, 0));
}

DEF_TEST(a_long_name_is_measured_like_snprintf)
{
	char big[600], small[16];
	struct tracerig_symbol s = { big, "/a", 0, 0 };

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	EXPECT_EQ_INT(sizeof(big) - 1 + 4, tr_frame_name_format(small, sizeof(small), &s, 1, 1));
	EXPECT_EQ_INT(15, strlen(small));
}

/* ---- the service, against a symbolizer ---- */

DEF_TEST(hostile_jit_names_come_out_sanitized_in_name_and_symbol)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	char dir[] = "/tmp/test_frames.XXXXXX";
	struct tracerig_symbol s;
	const char *name = NULL;
	char dso[64];

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, add_perf_map(sym, dir, "1000 100 evil;frame\n"
						 "2000 100 esc\x1b[31mred\n"
						 "3000 100 Ns.Type::Method(int, string)\n"));
	EXPECT_EQ_INT(0, tr_symbolizer_frame_name(sym, P, 0x1010, 0, &name, &s));
	EXPECT_EQ_STR("evil:frame", name);
	EXPECT_EQ_STR("evil:frame", s.name); /* what perf.data.txt writes */
	snprintf(dso, sizeof(dso), "/tmp/perf-%d.map", (int)P);
	EXPECT_EQ_STR(dso, s.dso);
	EXPECT_EQ_STR("esc?[31mred", name_of(sym, P, 0x2000, 0));
	EXPECT_EQ_STR("Ns.Type::Method(int, string)", name_of(sym, P, 0x3050, 0));
	/* No mapping and no JIT symbol: the address. */
	EXPECT_EQ_INT(-ENOENT, tr_symbolizer_frame_name(sym, P, 0x9000, 0, &name, &s));
	EXPECT_EQ_STR("[unknown]", name);
	EXPECT_EQ_STR("[unknown]", s.dso);
	EXPECT_EQ_INT(0, rmdir(dir));
	tr_symbolizer_free(sym);
}

static int svc_frame_name(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
			  uint64_t time_ns, const char **name, struct tracerig_symbol *s)
{
	(void)time_ns;
	return tr_symbolizer_frame_name((struct tr_symbolizer *)ctx, pid, addr, kernel, name, s);
}

static const struct tracerig_symbol_services symbols = { .frame_name = svc_frame_name };

/* The folded line the stack sink made of `st`, in buf. */
static int first_line(void *arg, const char *line, uint64_t weight)
{
	(void)weight;
	snprintf(arg, 512, "%s", line);
	return 1;
}

static void sink_line(struct tracerig_services *svc, struct tr_symbolizer *sym,
		      const struct tracerig_stack *st, char *buf, uint64_t *unnamed)
{
	struct tracerig_stacks_spec spec = { .name = "t",
					     .title = "t",
					     .what = TRACERIG_TIME_OFFCPU };
	struct tracerig_stacks *s = tr_stacks_open(svc, (struct tracerig_ctx *)sym, &spec, 0, NULL);
	struct tracerig_stacks_stats stats;

	buf[0] = '\0';
	if (!s)
		return;
	EXPECT_EQ_INT(0, tr_stacks_add(s, st, 1));
	(void)tr_folded_each(tr_stacks_folded(s), first_line, buf);
	tr_stacks_stats(s, &stats);
	*unnamed = stats.unnamed;
	tr_stacks_close(s);
}

DEF_TEST(one_frame_has_one_name_for_every_caller)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tracerig_services svc = { .symbols = &symbols };
	char dir[] = "/tmp/test_frames.XXXXXX", buf[512], want[600];
	const char *first = NULL, *again = NULL;
	struct tracerig_symbol s;
	uint64_t k = 0xffffffff81000000ull, named = 0x1000, unknown = 0x9000, unnamed = 0;
	struct tracerig_stack st = { .pid = P, .tid = P, .comm = "p", .tcomm = "p", .ns = 1 };

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, add_perf_map(sym, dir, "1000 100 dup;name\n"));
	/* perf_events asks with the symbol (for perf.data.txt), the stack
	 * sink for folded stacks: the same text, from the same cache entry. */
	EXPECT_EQ_INT(0, tr_symbolizer_frame_name(sym, P, 0x1000, 0, &first, &s));
	st.user = &named;
	st.n_user = 1;
	sink_line(&svc, sym, &st, buf, &unnamed);
	snprintf(want, sizeof(want), "p-%d;p-%d;%s", (int)P, (int)P, first);
	EXPECT_EQ_STR(want, buf);
	EXPECT_EQ_INT(0, unnamed);
	EXPECT_EQ_INT(0, tr_symbolizer_frame_name(sym, P, 0x1000, 0, &again, NULL));
	EXPECT_TRUE(first == again);
	st.user = &unknown;
	sink_line(&svc, sym, &st, buf, &unnamed);
	snprintf(want, sizeof(want), "p-%d;p-%d;[unknown]", (int)P, (int)P);
	EXPECT_EQ_STR(want, buf);
	EXPECT_EQ_INT(1, unnamed);
	/* A kernel address: one entry whichever process it was sampled in. */
	first = name_of(sym, P, k, 1);
	again = name_of(sym, OTHER, k, 1);
	EXPECT_TRUE(first && first == again);
	EXPECT_TRUE(first && strlen(first) > 4 && strcmp(first + strlen(first) - 4, "_[k]") == 0);
	st = (struct tracerig_stack){ .pid = CHILD,
				      .tid = CHILD,
				      .comm = "c",
				      .tcomm = "c",
				      .kernel = &k,
				      .n_kernel = 1,
				      .ns = 1 };
	sink_line(&svc, sym, &st, buf, &unnamed);
	snprintf(want, sizeof(want), "c-%d;c-%d;%s", (int)CHILD, (int)CHILD, first ? first : "");
	EXPECT_EQ_STR(want, buf);
	EXPECT_EQ_INT(0, rmdir(dir));
	tr_symbolizer_free(sym);
}

DEF_TEST(mmap_exec_and_fork_are_never_answered_from_before)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	uint64_t addr = (uint64_t)(uintptr_t)&frames_probe_fn;
	char dir[] = "/tmp/test_frames.XXXXXX", map[64], child_jit[64];
	struct tracerig_mapping m;
	struct exe_map exe;

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, find_exe_map(&exe));
	/* JIT code at the very address of frames_probe_fn, for when an
	 * anonymous mapping replaces the executable there. */
	snprintf(map, sizeof(map), "%" PRIx64 " 40 jit;replacement\n", addr);
	EXPECT_EQ_INT(0, add_perf_map(sym, dir, map));

	m = exe_mapping(&exe, P);
	EXPECT_EQ_INT(0, tr_symbolizer_record_mmap(sym, &m));
	EXPECT_EQ_STR("frames_probe_fn", name_of(sym, P, addr, 0));
	EXPECT_EQ_STR("frames_probe_fn", name_of(sym, P, addr, 0)); /* from the cache */

	/* An mmap over it: the cached name is not served again. */
	m = anon_mapping(&exe, P);
	EXPECT_EQ_INT(0, tr_symbolizer_record_mmap(sym, &m));
	EXPECT_EQ_STR("jit:replacement", name_of(sym, P, addr, 0));

	/* exec, then the new image's mapping. */
	EXPECT_EQ_INT(0, tr_symbolizer_record_exec(sym, P));
	m = exe_mapping(&exe, P);
	EXPECT_EQ_INT(0, tr_symbolizer_record_mmap(sym, &m));
	EXPECT_EQ_STR("frames_probe_fn", name_of(sym, P, addr, 0));

	/* A fork: the child starts as its parent, then goes its own way; the
	 * parent's entries stay its own. */
	EXPECT_EQ_INT(0, tr_symbolizer_record_fork(sym, P, CHILD));
	EXPECT_EQ_STR("frames_probe_fn", name_of(sym, CHILD, addr, 0));
	m = anon_mapping(&exe, CHILD);
	EXPECT_EQ_INT(0, tr_symbolizer_record_mmap(sym, &m));
	snprintf(child_jit, sizeof(child_jit), "[perf-%d.map]", (int)CHILD);
	EXPECT_EQ_STR(child_jit, name_of(sym, CHILD, addr, 0));
	EXPECT_EQ_STR("frames_probe_fn", name_of(sym, P, addr, 0));
	EXPECT_EQ_INT(0, rmdir(dir));
	tr_symbolizer_free(sym);
}

static uint32_t gen_of(struct tr_symbolizer *sym, pid_t pid)
{
	uint32_t gen = UINT32_MAX;

	EXPECT_EQ_INT(0, tr_symbolizer_frame_generation(sym, pid, &gen));
	return gen;
}

/* What lets a caller keep frame_name's answers (perf_events' frame
 * texts): the generation stays while they hold and moves with every
 * change of the mappings, the process's own only. */
DEF_TEST(the_generation_moves_with_the_mappings_and_only_then)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	uint64_t addr = (uint64_t)(uintptr_t)&frames_probe_fn;
	struct tracerig_mapping m;
	struct exe_map exe;
	uint32_t g, child;

	CHECK_NOT_NULL(sym);
	EXPECT_EQ_INT(0, find_exe_map(&exe));
	m = exe_mapping(&exe, P);
	EXPECT_EQ_INT(0, tr_symbolizer_record_mmap(sym, &m));
	g = gen_of(sym, P);
	EXPECT_EQ_STR("frames_probe_fn", name_of(sym, P, addr, 0));
	EXPECT_EQ_STR("frames_probe_fn", name_of(sym, P, addr, 0));
	EXPECT_EQ_INT(g, gen_of(sym, P)); /* naming changes nothing */

	m = anon_mapping(&exe, P);
	EXPECT_EQ_INT(0, tr_symbolizer_record_mmap(sym, &m));
	EXPECT_TRUE(gen_of(sym, P) != g);
	g = gen_of(sym, P);
	EXPECT_EQ_INT(0, tr_symbolizer_record_exec(sym, P));
	EXPECT_TRUE(gen_of(sym, P) != g);
	g = gen_of(sym, P);

	/* A fork and the child's own mmap move the child's, not the parent's. */
	child = gen_of(sym, CHILD);
	EXPECT_EQ_INT(0, tr_symbolizer_record_fork(sym, P, CHILD));
	EXPECT_TRUE(gen_of(sym, CHILD) != child);
	child = gen_of(sym, CHILD);
	m = exe_mapping(&exe, CHILD);
	EXPECT_EQ_INT(0, tr_symbolizer_record_mmap(sym, &m));
	EXPECT_TRUE(gen_of(sym, CHILD) != child);
	EXPECT_EQ_INT(g, gen_of(sym, P));
	tr_symbolizer_free(sym);
}

DEF_TEST(an_unnamed_frame_is_looked_up_again_later)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	char dir[] = "/tmp/test_frames.XXXXXX", path[PATH_MAX];
	const char *first, *again;
	FILE *f;

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)P);
	f = fopen(path, "we");
	CHECK_NOT_NULL(f);
	fputs("1000 100 early\n", f);
	fflush(f);
	EXPECT_EQ_INT(0, tr_symbolizer_add_jit_file(sym, P, path));
	EXPECT_EQ_STR("[unknown]", name_of(sym, P, 0x5000, 0));
	/* Looked up again, still nothing: the same entry, strings and all
	 * (perf_events keeps its text by the name's address). */
	EXPECT_EQ_INT(-ENOENT, tr_symbolizer_frame_name(sym, P, 0x5000, 0, &first, NULL));
	usleep(120 * 1000);
	EXPECT_EQ_INT(-ENOENT, tr_symbolizer_frame_name(sym, P, 0x5000, 0, &again, NULL));
	EXPECT_TRUE(first == again);
	/* The runtime writes its perf map as it compiles. */
	fputs("5000 100 compiled_late\n", f);
	EXPECT_EQ_INT(0, fclose(f));
	usleep(120 * 1000); /* past the symbolizer's reread interval */
	EXPECT_EQ_STR("compiled_late", name_of(sym, P, 0x5000, 0));
	EXPECT_EQ_INT(0, unlink(path));
	EXPECT_EQ_INT(0, rmdir(dir));
	tr_symbolizer_free(sym);
}

/* A process known only from the recording, with no perf map: nothing a
 * lookup reads can change, so an unnamed frame is final (-ENODATA) and a
 * caller may keep it as it keeps a name; a perf map handed over later
 * moves the generation, so the kept answer is never served under it. */
DEF_TEST(an_unnamed_frame_of_a_recorded_process_without_jit_is_final)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	uint64_t addr = (uint64_t)(uintptr_t)&frames_probe_fn;
	char dir[] = "/tmp/test_frames.XXXXXX", map[64], jit[64];
	struct tracerig_mapping m;
	struct exe_map exe;
	const char *name;
	uint32_t gen;

	CHECK_NOT_NULL(sym);
	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, find_exe_map(&exe));
	m = anon_mapping(&exe, P);
	EXPECT_EQ_INT(0, tr_symbolizer_record_mmap(sym, &m));
	EXPECT_EQ_INT(-ENODATA, tr_symbolizer_frame_name(sym, P, addr, 0, &name, NULL));
	snprintf(jit, sizeof(jit), "[perf-%d.map]", (int)P);
	EXPECT_EQ_STR(jit, name);
	EXPECT_EQ_INT(-ENODATA, tr_symbolizer_frame_name(sym, P, addr, 0, &name, NULL));
	gen = gen_of(sym, P);
	snprintf(map, sizeof(map), "%" PRIx64 " 40 compiled_later\n", addr);
	EXPECT_EQ_INT(0, add_perf_map(sym, dir, map));
	EXPECT_TRUE(gen_of(sym, P) != gen);
	EXPECT_EQ_STR("compiled_later", name_of(sym, P, addr, 0));
	/* With a perf map, what it does not name may yet be written there. */
	EXPECT_EQ_INT(-ENOENT, tr_symbolizer_frame_name(sym, P, addr + 0x1000, 0, &name, NULL));
	EXPECT_EQ_INT(0, rmdir(dir));
	tr_symbolizer_free(sym);
}

DEF_TEST(a_live_process_that_maps_code_later_has_it_named)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	/* Far from where anything is mapped, sanitizers' shadow included. */
	char *at = (char *)(uintptr_t)0x200000000000ull;
	uint64_t off = (uint64_t)(uintptr_t)&frames_probe_fn;
	struct exe_map exe;
	void *p;
	int fd;

	CHECK_NOT_NULL(sym);
	EXPECT_EQ_INT(0, find_exe_map(&exe));
	off -= exe.start;
	/* Nothing there yet: this process's /proc/PID/maps says so. */
	EXPECT_EQ_STR("[unknown]", name_of(sym, getpid(), (uint64_t)(uintptr_t)at + off, 0));
	/* Then the process maps its executable there, as a loader would. */
	fd = open(exe.path, O_RDONLY | O_CLOEXEC);
	EXPECT_TRUE(fd >= 0);
	p = mmap(at, exe.end - exe.start, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED_NOREPLACE,
		 fd, (off_t)exe.pgoff);
	if (fd >= 0)
		close(fd);
	if (p != at) {
		TEST_FAIL("cannot map %s at %p: %s", exe.path, (void *)at, strerror(errno));
		if (p != MAP_FAILED)
			munmap(p, exe.end - exe.start);
		tr_symbolizer_free(sym);
		return;
	}
	usleep(120 * 1000); /* past the symbolizer's reread interval */
	EXPECT_EQ_STR("frames_probe_fn", name_of(sym, getpid(), (uint64_t)(uintptr_t)at + off, 0));
	munmap(p, exe.end - exe.start);
	tr_symbolizer_free(sym);
}

int main(void)
{
	RUN_TEST(a_frame_is_its_symbol_its_object_or_its_address);
	RUN_TEST(every_kernel_frame_ends_in_the_kernel_mark);
	RUN_TEST(hostile_names_are_made_safe_one_way);
	RUN_TEST(a_long_name_is_measured_like_snprintf);
	RUN_TEST(hostile_jit_names_come_out_sanitized_in_name_and_symbol);
	RUN_TEST(one_frame_has_one_name_for_every_caller);
	RUN_TEST(mmap_exec_and_fork_are_never_answered_from_before);
	RUN_TEST(the_generation_moves_with_the_mappings_and_only_then);
	RUN_TEST(an_unnamed_frame_is_looked_up_again_later);
	RUN_TEST(an_unnamed_frame_of_a_recorded_process_without_jit_is_final);
	RUN_TEST(a_live_process_that_maps_code_later_has_it_named);
	TEST_MAIN_END();
}
