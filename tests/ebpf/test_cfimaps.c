/* callchain = cfi's tables (plugins/ebpf/cfimaps.h) in real BPF maps
 * (root): /proc/PID/maps text parsed, hostile text included; load biases
 * against what the dynamic linker says; ranges of rows allocated,
 * shared by the processes mapping an object and quarantined once freed;
 * this process's libc row for qsort read back from the map as the walker
 * would find it, against tr_cfi_find on the same table.
 *
 * No process model is given: cfimaps opens the objects by the paths of
 * the maps it reads (inside the process's root, checked by inode). */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/types.h>

#include "cfimaps.h"
#include "lib/cfi.h"
#include "offcpu.h"
#include "testing.h"

#define ROWS_MAX (1u << 20)

/* ---- a stand-in of the core's services ---- */

static int n_warnings;
static char last_warning[512];

static void fake_log(struct tracerig_ctx *ctx, enum tracerig_log_level level, const char *fmt, ...)
{
	va_list ap;

	(void)ctx;
	if (level != TRACERIG_LOG_WARN)
		return;
	n_warnings++;
	va_start(ap, fmt);
	vsnprintf(last_warning, sizeof(last_warning), fmt, ap);
	va_end(ap);
}

/* The mapping of pid holding addr: its line's fields and path. */
static int find_mapping(pid_t pid, uint64_t addr, struct tracerig_object *out, char *path,
			size_t path_len)
{
	char name[64], line[4096];
	int found = -ENOENT;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return -errno;
	while (found && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		int at = 0;

		if (sscanf(line, "%llx-%llx %*4s %llx %*s %*u %n", &start, &end, &pgoff, &at) < 3 ||
		    !at || addr < start || addr >= end)
			continue;
		snprintf(path, path_len, "%s", line + at);
		path[strcspn(path, "\n")] = 0;
		*out = (struct tracerig_object){
			.fd = -1, .start = start, .end = end, .pgoff = pgoff, .path = path
		};
		found = 0;
	}
	fclose(f);
	return found;
}

static const struct tracerig_run_services run = { .size = sizeof(run), .log = fake_log };
/* No process model: objects are opened from the maps cfimaps reads. */
static const struct tracerig_services svc = { .size = sizeof(svc), .run = &run };

/* ---- maps text ---- */

DEF_TEST(parse)
{
	static const char text[] =
		"55e0a000-55e0b000 r--p 00000000 fd:01 1234    /usr/bin/x\n"
		"55e0b000-55e0c000 r-xp 00001000 fd:01 1234    /usr/bin/x\n"
		"7f00000000-7f00001000 rwxp 00000000 00:00 0 \n"
		"7f00001000-7f00002000 r-xp 00000000 00:00 0    [anon:dotnet-jit]\n"
		"7f00002000-7f00003000 r-xp 00002000 fd:01 99   /opt/my app/lib x.so (deleted)\n"
		"7f00003000-7f00004000 r-xs 00000000 00:01 77   /memfd:doublemapper (deleted)\n"
		"7f00004000-7f00005000 r-xp 00000000 00:00 0    //anon\n"
		"7fffd0000000-7fffd0002000 r-xp 00000000 00:00 0 [vdso]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]\n";
	struct cfi_exec_map out[16];
	uint64_t dropped = 0;
	size_t n;

	cfi_maps_parse(text, out, 16, &n, &dropped);
	EXPECT_EQ_INT(7, n);
	EXPECT_EQ_INT(0, dropped);
	if (n != 7)
		return;
	EXPECT_EQ_INT(0x55e0b000, out[0].start);
	EXPECT_EQ_INT(0x55e0c000, out[0].end);
	EXPECT_EQ_INT(0x1000, out[0].pgoff);
	EXPECT_EQ_INT(1234, out[0].ino);
	EXPECT_EQ_INT(CFI_MAP_FILE, out[0].kind);
	EXPECT_EQ_INT(CFI_MAP_ANON, out[1].kind);
	EXPECT_EQ_INT(CFI_MAP_ANON, out[2].kind);
	EXPECT_EQ_INT(CFI_MAP_FILE, out[3].kind); /* spaces, deleted: the symbolizer judges */
	EXPECT_EQ_INT(0x2000, out[3].pgoff);
	EXPECT_EQ_INT(CFI_MAP_ANON, out[4].kind); /* a memfd: JIT code, no file */
	EXPECT_EQ_INT(CFI_MAP_ANON, out[5].kind);
	EXPECT_EQ_INT(CFI_MAP_ANON, out[6].kind);
	EXPECT_EQ_INT(0x7fffd0000000, out[6].start);

	cfi_maps_parse(text, out, 3, &n, &dropped);
	EXPECT_EQ_INT(3, n);
	EXPECT_EQ_INT(4, dropped);
}

DEF_TEST(parse_hostile)
{
	size_t big = 1 << 20, len = 0, n;
	char *text = malloc(big + 4096);
	struct cfi_exec_map out[16];
	uint64_t dropped = 0;

	CHECK_NOT_NULL(text);
	len += (size_t)sprintf(text + len, "1000-2000 r-xp 00000000 fd:01 5 /a\n");
	len += (size_t)sprintf(text + len, "3000-4000 r-xp 00000000 fd:01 5 /");
	memset(text + len, 'a', big - 2048); /* a path of a MiB */
	len += big - 2048;
	text[len++] = '\n';
	len += (size_t)sprintf(text + len,
			       "10000000000000000-10000000000000001 r-xp 0 fd:01 5 /huge\n"
			       "5000-6000 r-xp 00000000 fd:01 99999999999999999999999 /huge\n"
			       "7000-6000 r-xp 00000000 fd:01 5 /backwards\n"
			       "8000-9000 r-xp\n"
			       "8000-9000 r-\n"
			       "8000-9000\n"
			       "-\n"
			       "\n"
			       "zzzz-9000 r-xp 00000000 fd:01 5 /junk\n"
			       "8000-9000 r-xp 00000000 fd:01 5x /junk\n"
			       "8000-9000 r-xp 00000000 fd 5 /junk\n"
			       "3800-3900 r-xp 00000000 fd:01 5 /overlaps\n"
			       "a000-b000 r-xp 00000000 fd:01 5 /last, cut");
	text[len] = 0;
	cfi_maps_parse(text, out, 16, &n, &dropped);
	EXPECT_EQ_INT(2, n);
	EXPECT_EQ_INT(0, dropped);
	if (n == 2) {
		EXPECT_EQ_INT(0x1000, out[0].start);
		EXPECT_EQ_INT(0x3000, out[1].start);
	}
	cfi_maps_parse("", out, 16, &n, &dropped);
	EXPECT_EQ_INT(0, n);
	free(text);
}

/* ---- load bias ---- */

DEF_TEST(bias)
{
	/* A shared library as GNU ld lays it out (vaddr == offset). */
	static const struct cfi_seg so[] = {
		{ 0, 0, 0x28000, PF_R },
		{ 0x28000, 0x28000, 0x195000, PF_R | PF_X },
		{ 0x1bd000, 0x1bd000, 0x4f000, PF_R },
	};
	/* lld: each segment a page on in memory from its file offset. */
	static const struct cfi_seg lld[] = {
		{ 0, 0, 0x1234, PF_R },
		{ 0x1234, 0x2234, 0x5000, PF_R | PF_X },
	};
	/* A non-PIE executable linked at 0x400000. */
	static const struct cfi_seg exec[] = {
		{ 0, 0x400000, 0x500, PF_R },
		{ 0x1000, 0x401000, 0x2000, PF_R | PF_X },
	};
	uint64_t bias = 1;

	EXPECT_EQ_INT(0, cfi_maps_bias(so, 3, 0x7f0000028000, 0x28000, &bias));
	EXPECT_EQ_INT(0x7f0000000000, bias);
	/* A mapping split by mprotect: its second piece, same bias. */
	EXPECT_EQ_INT(0, cfi_maps_bias(so, 3, 0x7f0000030000, 0x30000, &bias));
	EXPECT_EQ_INT(0x7f0000000000, bias);
	/* The executable segment mapped from its page-rounded offset, the
	 * page it shares with the one before: the executable one wins. */
	EXPECT_EQ_INT(0, cfi_maps_bias(lld, 2, 0x7f0000002000, 0x1000, &bias));
	EXPECT_EQ_INT(0x7f0000000000, bias);
	EXPECT_EQ_INT(0, cfi_maps_bias(exec, 2, 0x401000, 0x1000, &bias));
	EXPECT_EQ_INT(0, bias);
	EXPECT_EQ_INT(-ENOENT, cfi_maps_bias(exec, 2, 0x401000, 0x9000, &bias));
	EXPECT_EQ_INT(-ENOENT, cfi_maps_bias(NULL, 0, 0x401000, 0, &bias));
}

/* ---- ranges ---- */

DEF_TEST(extents)
{
	const uint64_t t0 = 1000000000ull, q = CFI_QUARANTINE_NS;
	struct cfi_extents x;
	uint32_t a, b, c;

	EXPECT_EQ_INT(0, cfi_ext_init(&x, 100));
	EXPECT_EQ_INT(0, cfi_ext_alloc(&x, 10, &a));
	EXPECT_EQ_INT(0, cfi_ext_alloc(&x, 20, &b));
	EXPECT_EQ_INT(0, a);
	EXPECT_EQ_INT(10, b);
	EXPECT_EQ_INT(-ENOSPC, cfi_ext_alloc(&x, 80, &c));
	EXPECT_EQ_INT(0, cfi_ext_free(&x, a, 10, t0));
	/* Freed but quarantined: not handed out. */
	EXPECT_EQ_INT(0, cfi_ext_alloc(&x, 10, &c));
	EXPECT_EQ_INT(30, c);
	cfi_ext_release(&x, t0 + q / 2);
	EXPECT_EQ_INT(0, x.released);
	cfi_ext_release(&x, t0 + q);
	EXPECT_EQ_INT(1, x.released);
	EXPECT_EQ_INT(0, cfi_ext_alloc(&x, 5, &a));
	EXPECT_EQ_INT(0, a); /* first fit */
	/* Everything back: one extent again, coalesced from pieces freed in
	 * any order. */
	EXPECT_EQ_INT(0, cfi_ext_free(&x, c, 10, t0 + q));
	EXPECT_EQ_INT(0, cfi_ext_free(&x, a, 5, t0 + q));
	EXPECT_EQ_INT(0, cfi_ext_free(&x, b, 20, t0 + q));
	cfi_ext_release(&x, t0 + 2 * q);
	EXPECT_EQ_INT(0, x.n_held);
	EXPECT_EQ_INT(1, x.n_free);
	EXPECT_EQ_INT(0, cfi_ext_alloc(&x, 100, &a));
	EXPECT_EQ_INT(0, a);
	EXPECT_EQ_INT(-EINVAL, cfi_ext_alloc(&x, 0, &a));
	cfi_ext_fini(&x);
}

/* ---- this process's objects ---- */

struct dl_find {
	const void *addr;
	uint64_t bias;
	char path[4096];
	int found;
};

static int dl_holds(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct dl_find *f = arg;
	uint64_t a = (uint64_t)(uintptr_t)f->addr;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz) {
			f->bias = info->dlpi_addr;
			snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
			f->found = 1;
			return 1;
		}
	}
	return 0;
}

/* The dynamic linker's bias of the object holding addr, and its path
 * (from /proc/self/maps: the main program's is "" to the linker). */
static int dl_find(const void *addr, struct dl_find *f)
{
	struct tracerig_object obj;

	memset(f, 0, sizeof(*f));
	f->addr = addr;
	dl_iterate_phdr(dl_holds, f);
	if (!f->found ||
	    find_mapping(getpid(), (uint64_t)(uintptr_t)addr, &obj, f->path, sizeof(f->path)) != 0)
		return -1;
	return 0;
}

static int create_maps(uint32_t rows, int *rows_fd, int *procs_fd)
{
	*rows_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cfi_rows", sizeof(__u32),
				  sizeof(struct offcpu_cfi_row), rows, NULL);
	if (*rows_fd < 0)
		return *rows_fd;
	*procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "cfi_procs", sizeof(__u32),
				   sizeof(struct offcpu_cfi_proc), 64, NULL);
	if (*procs_fd < 0) {
		close(*rows_fd);
		return *procs_fd;
	}
	return 0;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int build_table(const char *path, struct tr_cfi_table *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = tr_cfi_build(fd, t);
	close(fd);
	return ret;
}

static int rows_fd = -1, procs_fd = -1;
/* libc's qsort: in a program linked without -pie, qsort names its PLT entry. */
static const void *qsort_addr;

/* Both ways of writing libc's table, timed; what lands in the map is the table. */
DEF_TEST(write_rows)
{
	struct dl_find libc;
	struct tr_cfi_table t;
	uint64_t t0, t1, t2;

	if (dl_find(qsort_addr, &libc) != 0 || build_table(libc.path, &t) != 0) {
		TEST_FAIL("libc (%s) has no table", libc.path);
		return;
	}
	t0 = now_us();
	EXPECT_EQ_INT(0, cfi_maps_write_rows(rows_fd, 0, t.rows, t.n, 0));
	t1 = now_us();
	EXPECT_EQ_INT(0, cfi_maps_write_rows(rows_fd, 0, t.rows, t.n, 1));
	t2 = now_us();
	printf("# %s: %zu rows: one at a time %" PRIu64 " us, in batches %" PRIu64 " us\n",
	       libc.path, t.n, t1 - t0, t2 - t1);
	for (size_t i = 0; i < t.n; i += t.n / 97 + 1) {
		struct offcpu_cfi_row r;
		__u32 key = (__u32)i;

		EXPECT_EQ_INT(0, bpf_map_lookup_elem(rows_fd, &key, &r));
		EXPECT_TRUE(memcmp(&r, &t.rows[i], sizeof(r)) == 0);
	}
	EXPECT_EQ_INT(-EINVAL, cfi_maps_write_rows(rows_fd, UINT32_MAX, t.rows, 2, 1));
	tr_cfi_free(&t);
}

static int get_entry(pid_t tgid, struct offcpu_cfi_proc *e)
{
	__u32 key = (__u32)tgid;

	return bpf_map_lookup_elem(procs_fd, &key, e) == 0 ? 0 : -errno;
}

/* The mapping of e holding addr, by the walker's binary search. */
static const struct offcpu_cfi_mapping *mapping_of(const struct offcpu_cfi_proc *e, uint64_t addr)
{
	uint32_t lo = 0, hi = e->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (e->m[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < e->m[lo - 1].end ? &e->m[lo - 1] : NULL;
}

/* The row for addr, read from cfi_rows as the walker searches it. */
static int walker_row(const struct offcpu_cfi_mapping *x, uint64_t addr, struct offcpu_cfi_row *r)
{
	uint32_t lo = x->row_start, hi = x->row_start + x->row_count;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct offcpu_cfi_row mr;

		if (bpf_map_lookup_elem(rows_fd, &mid, &mr) != 0)
			return -1;
		if (mr.pc <= addr - x->bias)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == x->row_start)
		return -1;
	lo--;
	return bpf_map_lookup_elem(rows_fd, &lo, r);
}

static void expect_sorted(const struct offcpu_cfi_proc *e)
{
	EXPECT_TRUE(e->n > 0 && e->n <= OFFCPU_CFI_MAX_MAPPINGS);
	for (uint32_t i = 0; i < e->n; i++) {
		EXPECT_TRUE(e->m[i].start < e->m[i].end);
		if (i)
			EXPECT_TRUE(e->m[i - 1].end <= e->m[i].start);
	}
}

static struct offcpu_cfi_proc entry, entry2;

static void expect_own_qsort(const struct offcpu_cfi_proc *e, struct offcpu_cfi_mapping *out)
{
	const struct offcpu_cfi_mapping *x;
	uint64_t pc = (uint64_t)(uintptr_t)qsort_addr;
	const struct tr_cfi_row *want;
	struct offcpu_cfi_row r;
	struct tr_cfi_table t;
	struct dl_find libc;

	expect_sorted(e);
	x = mapping_of(e, pc);
	CHECK_NOT_NULL(x);
	*out = *x;
	EXPECT_TRUE(x->row_count > 0);
	if (dl_find(qsort_addr, &libc) != 0 || build_table(libc.path, &t) != 0) {
		TEST_FAIL("no libc table");
		return;
	}
	EXPECT_EQ_INT(libc.bias, x->bias);
	EXPECT_EQ_INT(t.n, x->row_count);
	EXPECT_EQ_INT(0, walker_row(x, pc, &r));
	want = tr_cfi_find(&t, pc - libc.bias);
	EXPECT_TRUE(want && memcmp(&r, want, sizeof(r)) == 0);
	EXPECT_EQ_INT(TR_CFI_RSP, r.kind); /* a function's entry: CFA = RSP + 8 */
	EXPECT_EQ_INT(8, r.cfa_offset);
	tr_cfi_free(&t);
}

/* A child that waits for a byte on fd (or its end), then exits. */
static pid_t child_waiting(int *wfd)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(fds[1]);
		(void)!read(fds[0], &c, 1);
		_exit(0);
	}
	close(fds[0]);
	*wfd = fds[1];
	return pid;
}

static void end_child(pid_t pid, int wfd)
{
	close(wfd);
	waitpid(pid, NULL, 0);
}

/* New maps with this process loaded: its entry in `entry`, its libc's
 * mapping (checked) in *libc; NULL when the maps cannot be made. */
static struct cfi_maps *maps_with_own_process(struct offcpu_cfi_mapping *libc)
{
	struct cfi_maps *m = NULL;

	EXPECT_EQ_INT(0, cfi_maps_new(&svc, NULL, rows_fd, ROWS_MAX, procs_fd, &m));
	if (!m)
		return NULL;
	EXPECT_EQ_INT(0, cfi_maps_load(m, getpid()));
	EXPECT_EQ_INT(0, get_entry(getpid(), &entry));
	expect_own_qsort(&entry, libc);
	return m;
}

DEF_TEST(own_process)
{
	struct offcpu_cfi_mapping first, again, child_libc;
	struct cfi_maps_stats st, st2;
	struct cfi_maps *m;
	struct dl_find main_prog;
	pid_t child;
	int wfd;

	m = maps_with_own_process(&first);
	CHECK_NOT_NULL(m);
	/* The program's own bias, PIE or not. */
	if (dl_find((const void *)expect_sorted, &main_prog) == 0 &&
	    mapping_of(&entry, (uint64_t)(uintptr_t)expect_sorted))
		EXPECT_EQ_INT(main_prog.bias,
			      mapping_of(&entry, (uint64_t)(uintptr_t)expect_sorted)->bias);
	cfi_maps_get_stats(m, &st);
	EXPECT_EQ_INT(1, st.processes);
	EXPECT_EQ_INT(1, st.loads);
	EXPECT_TRUE(st.objects >= 2 && st.rows_used >= first.row_count);
	EXPECT_EQ_INT(ROWS_MAX, st.rows_max);

	/* Again, and a child mapping the same libc: one range. */
	EXPECT_EQ_INT(0, cfi_maps_load(m, getpid()));
	EXPECT_EQ_INT(0, get_entry(getpid(), &entry));
	expect_own_qsort(&entry, &again);
	EXPECT_EQ_INT(first.row_start, again.row_start);
	child = child_waiting(&wfd);
	EXPECT_TRUE(child > 0);
	EXPECT_EQ_INT(0, cfi_maps_load(m, child));
	EXPECT_EQ_INT(0, get_entry(child, &entry2));
	expect_own_qsort(&entry2, &child_libc);
	EXPECT_EQ_INT(first.row_start, child_libc.row_start);
	cfi_maps_get_stats(m, &st2);
	EXPECT_EQ_INT(st.rows_used, st2.rows_used);
	EXPECT_EQ_INT(st.objects, st2.objects);
	EXPECT_EQ_INT(2, st2.processes);

	/* Gone: its load says so, its entry goes, the shared rows stay. */
	end_child(child, wfd);
	EXPECT_EQ_INT(-ESRCH, cfi_maps_load(m, child));
	EXPECT_EQ_INT(-ENOENT, get_entry(child, &entry2));
	cfi_maps_get_stats(m, &st2);
	EXPECT_EQ_INT(1, st2.processes);
	EXPECT_EQ_INT(st.rows_used, st2.rows_used);
	cfi_maps_free(m);
}

/* Ranges given back wait before they are handed out again; processes gone
 * are found by the next load's sweep. */
DEF_TEST(release_and_quarantine)
{
	struct offcpu_cfi_mapping first, second, third;
	struct cfi_maps_stats st;
	struct cfi_maps *m;
	pid_t child;
	int wfd;

	m = maps_with_own_process(&first);
	CHECK_NOT_NULL(m);
	cfi_maps_forget(m, getpid());
	EXPECT_EQ_INT(-ENOENT, get_entry(getpid(), &entry));
	cfi_maps_get_stats(m, &st);
	EXPECT_EQ_INT(0, st.rows_used);
	EXPECT_EQ_INT(0, st.objects);
	EXPECT_EQ_INT(0, st.processes);

	/* At once: libc lands elsewhere, its old range in quarantine. */
	EXPECT_EQ_INT(0, cfi_maps_load(m, getpid()));
	EXPECT_EQ_INT(0, get_entry(getpid(), &entry));
	expect_own_qsort(&entry, &second);
	EXPECT_TRUE(second.row_start >= first.row_start + first.row_count ||
		    second.row_start + second.row_count <= first.row_start);
	cfi_maps_get_stats(m, &st);
	cfi_maps_forget(m, getpid());

	/* Later: the front of the array is free again, first fit uses it. */
	usleep(CFI_QUARANTINE_NS / 1000 + 20000);
	child = child_waiting(&wfd);
	EXPECT_TRUE(child > 0);
	EXPECT_EQ_INT(0, cfi_maps_load(m, child));
	EXPECT_EQ_INT(0, get_entry(child, &entry));
	expect_own_qsort(&entry, &third);
	EXPECT_TRUE(third.row_start + third.row_count <= st.rows_used);

	/* The child ends; a second on, another process's load sweeps it out. */
	end_child(child, wfd);
	sleep(1);
	usleep(50000);
	EXPECT_EQ_INT(0, cfi_maps_load(m, getpid()));
	EXPECT_EQ_INT(-ENOENT, get_entry(child, &entry));
	cfi_maps_get_stats(m, &st);
	EXPECT_EQ_INT(1, st.processes);
	cfi_maps_free(m);
	EXPECT_EQ_INT(0, bpf_map_delete_elem(procs_fd, &(__u32){ (__u32)getpid() }));
}

DEF_TEST(rows_full)
{
	struct offcpu_cfi_mapping x;
	struct cfi_maps_stats st;
	struct cfi_maps *m;
	int small_rows, small_procs;

	if (create_maps(64, &small_rows, &small_procs) != 0) {
		TEST_FAIL("cannot create maps");
		return;
	}
	n_warnings = 0;
	EXPECT_EQ_INT(0, cfi_maps_new(&svc, NULL, small_rows, 64, small_procs, &m));
	CHECK_NOT_NULL(m);
	EXPECT_EQ_INT(0, cfi_maps_load(m, getpid()));
	EXPECT_EQ_INT(0, cfi_maps_load(m, getpid()));
	cfi_maps_get_stats(m, &st);
	EXPECT_TRUE(st.rows_full >= 1);
	EXPECT_EQ_INT(1, n_warnings);
	EXPECT_CONTAINS("raise ebpf.cfi_max_rows", last_warning);
	EXPECT_EQ_INT(0, bpf_map_lookup_elem(small_procs, &(__u32){ (__u32)getpid() }, &entry));
	x = *mapping_of(&entry, (uint64_t)(uintptr_t)qsort_addr);
	EXPECT_EQ_INT(0, x.row_count); /* libc: frame pointers */
	cfi_maps_free(m);
	close(small_rows);
	close(small_procs);
}

/* Where nothing of this process is (valgrind loads programs low). */
#define NOWHERE 0x100000000000ull

/* Made-up maps text: what does not parse is left out, what parses but
 * names no object is walked by frame pointers, beyond the walker's bound
 * is counted. */
DEF_TEST(hostile_load)
{
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap);
	struct cfi_maps_stats st;
	struct cfi_maps *m;

	CHECK_NOT_NULL(text);
	EXPECT_EQ_INT(0, cfi_maps_new(&svc, NULL, rows_fd, ROWS_MAX, procs_fd, &m));
	if (!m) {
		free(text);
		return;
	}
	/* More mappings than the walker takes (not adjacent: none merges). */
	for (int i = 0; i < OFFCPU_CFI_MAX_MAPPINGS + 88; i++)
		len += (size_t)snprintf(text + len, cap - len, "%llx-%llx r-xp 00000000 00:00 0\n",
					NOWHERE + i * 0x2000ull, NOWHERE + 0x1000 + i * 0x2000ull);
	snprintf(text + len, cap - len, "ffffffffffffffffff-1 r-xp 0 0:0 0 /x\n1000-");
	EXPECT_EQ_INT(0, cfi_maps_load_text(m, getpid(), text));
	EXPECT_EQ_INT(0, get_entry(getpid(), &entry));
	EXPECT_EQ_INT(OFFCPU_CFI_MAX_MAPPINGS, entry.n);
	expect_sorted(&entry);
	EXPECT_EQ_INT(0, entry.m[7].row_count);
	cfi_maps_get_stats(m, &st);
	EXPECT_EQ_INT(88, st.mappings_dropped);
	EXPECT_EQ_INT(0, st.rows_used);

	/* Files that do not open (gone, replaced since): walked by frame
	 * pointers, the mappings kept as for anonymous code. */
	len = 0;
	for (int i = 0; i < OFFCPU_CFI_MAX_MAPPINGS + 88; i++)
		len += (size_t)snprintf(
			text + len, cap - len, "%llx-%llx r-xp 00000000 fd:01 %d /nowhere/%d\n",
			NOWHERE + i * 0x2000ull, NOWHERE + 0x1000 + i * 0x2000ull, i + 1, i);
	EXPECT_EQ_INT(0, cfi_maps_load_text(m, getpid(), text));
	EXPECT_EQ_INT(0, get_entry(getpid(), &entry));
	EXPECT_EQ_INT(OFFCPU_CFI_MAX_MAPPINGS, entry.n);
	EXPECT_EQ_INT(0, entry.m[7].row_count);
	cfi_maps_get_stats(m, &st);
	EXPECT_EQ_INT(0, st.incomplete_loads);
	EXPECT_EQ_INT(2 * 88, st.mappings_dropped);
	EXPECT_EQ_INT(0, st.rows_used);
	EXPECT_EQ_INT(-EINVAL, cfi_maps_load_text(m, 0, text));

	/* A JIT heap of many adjacent pieces takes one of the walker's entries. */
	len = 0;
	for (int i = 0; i < 2000; i++)
		len += (size_t)snprintf(text + len, cap - len, "%llx-%llx r-xp 00000000 00:00 0\n",
					NOWHERE + i * 0x1000ull, NOWHERE + 0x1000 + i * 0x1000ull);
	EXPECT_EQ_INT(0, cfi_maps_load_text(m, getpid(), text));
	EXPECT_EQ_INT(0, get_entry(getpid(), &entry));
	EXPECT_EQ_INT(1, entry.n);
	EXPECT_EQ_INT(NOWHERE + 2000 * 0x1000ull, entry.m[0].end);
	cfi_maps_get_stats(m, &st);
	EXPECT_EQ_INT(2 * 88, st.mappings_dropped);
	cfi_maps_forget(m, getpid());
	cfi_maps_free(m);
	free(text);
}

/* Why the tests on BPF maps cannot run, or NULL. */
static const char *cannot_run(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	struct cfi_maps *m;
	int ret;

	qsort_addr = libc ? dlsym(libc, "qsort") : NULL;
	if (libc)
		dlclose(libc);
	if (!qsort_addr)
		return "no libc.so.6";
	ret = create_maps(ROWS_MAX, &rows_fd, &procs_fd);
	if (ret == -EPERM)
		return "needs root (CAP_BPF)";
	if (ret < 0)
		return "cannot create BPF maps";
	ret = cfi_maps_new(&svc, NULL, rows_fd, ROWS_MAX, procs_fd, &m);
	cfi_maps_free(m);
	return ret == -ENOTSUP ? "built without libdw" : NULL;
}

int main(void)
{
	const char *why;

	RUN_TEST(parse);
	RUN_TEST(parse_hostile);
	RUN_TEST(bias);
	RUN_TEST(extents);
	why = cannot_run();
	if (why) {
		SKIP_TEST(write_rows, why);
		SKIP_TEST(own_process, why);
		SKIP_TEST(release_and_quarantine, why);
		SKIP_TEST(rows_full, why);
		SKIP_TEST(hostile_load, why);
		TEST_MAIN_END();
	}
	RUN_TEST(write_rows);
	RUN_TEST(own_process);
	RUN_TEST(release_and_quarantine);
	RUN_TEST(rows_full);
	RUN_TEST(hostile_load);
	close(rows_fd);
	close(procs_fd);
	TEST_MAIN_END();
}
