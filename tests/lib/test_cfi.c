/* lib/cfi: tables compiled from real objects (this program, built
 * -fomit-frame-pointer, and Debian's libc, built without frame pointers),
 * and a walk with them through a libc function that calls back into this
 * program (qsort): every return address equal to what glibc's own
 * backtrace() finds, with libgcc's unwinder reading the same .eh_frame.
 * Then the same code (tests/lib/cfi/frames.c) with its CFI in
 * .debug_frame alone, in .eh_frame without .eh_frame_hdr, in both, and
 * compressed: every address's row as libdw reads the rules there, and a
 * walk through the .debug_frame library, which libgcc cannot unwind. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#endif

#include "lib/cfi.h"
#include "testing.h"

#define MAX_OBJECTS 32
#define MAX_FRAMES 64

/* The objects of this process: where each is loaded and its table. */
struct object {
	char path[512];
	uint64_t bias, lo, hi; /* the executable segment, as loaded */
	struct tr_cfi_table table;
	int built;
};
static struct object objects[MAX_OBJECTS];
static size_t n_objects;

static int note_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	for (int i = 0; i < info->dlpi_phnum && n_objects < MAX_OBJECTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct object *o;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		o = &objects[n_objects++];
		snprintf(o->path, sizeof(o->path), "%s",
			 info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe");
		o->bias = info->dlpi_addr;
		o->lo = info->dlpi_addr + ph->p_vaddr;
		o->hi = o->lo + ph->p_memsz;
	}
	return 0;
}

static struct object *object_at(uint64_t pc)
{
	for (size_t i = 0; i < n_objects; i++)
		if (pc >= objects[i].lo && pc < objects[i].hi)
			return &objects[i];
	return NULL;
}

static int build_all(void)
{
	int built = 0;

	dl_iterate_phdr(note_object, NULL);
	for (size_t i = 0; i < n_objects; i++) {
		int fd = open(objects[i].path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue; /* the vDSO has no file */
		objects[i].built = tr_cfi_build(fd, &objects[i].table) == 0;
		built += objects[i].built;
		close(fd);
	}
	return built;
}

static int read_own(void *arg, uint64_t addr, uint64_t *value)
{
	(void)arg;
	memcpy(value, (const void *)(uintptr_t)addr, sizeof(*value));
	return 0;
}

/* The walk from the registers: PCs of the callers, as return addresses. */
static size_t walk(struct tr_cfi_regs regs, uint64_t *pcs, size_t max)
{
	size_t n = 0;

	while (n < max) {
		struct object *o = object_at(regs.pc);
		const struct tr_cfi_row *row;

		if (!o || !o->built)
			break;
		/* A return address points after its call: the row of the call
		 * itself is the one before it (the first PC is exact). */
		row = tr_cfi_find(&o->table, regs.pc - o->bias - (n ? 1 : 0));
		if (tr_cfi_step(row, &regs, read_own, NULL) < 0)
			break;
		pcs[n++] = regs.pc;
	}
	return n;
}

static uint64_t walked[MAX_FRAMES], traced[MAX_FRAMES];
static size_t n_walked, n_traced;

/* Captures this frame's registers and walks from them, and asks glibc for
 * the same stack. */
__attribute__((noinline)) static void capture(void)
{
	struct tr_cfi_regs regs;
	void *bt[MAX_FRAMES];
	int n;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(regs.pc), "=r"(regs.sp), "=r"(regs.bp));
	n_walked = walk(regs, walked, MAX_FRAMES);
	n = backtrace(bt, MAX_FRAMES);
	/* bt[0] is in capture, after its call of backtrace: the walk starts
	 * from capture's caller. */
	n_traced = 0;
	for (int i = 1; i < n; i++)
		traced[n_traced++] = (uint64_t)(uintptr_t)bt[i];
}

static volatile int depth_seen;

static int compare_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!depth_seen++)
		capture();
	return (x > y) - (x < y);
}

__attribute__((noinline)) static int sort_some(int seed)
{
	int values[16];

	for (int i = 0; i < 16; i++)
		values[i] = (seed * 7919 + i * 104729) % 1000;
	qsort(values, 16, sizeof(values[0]), compare_ints);
	return values[0];
}

DEF_TEST(tables_of_this_process)
{
	size_t with_rows = 0;

	for (size_t i = 0; i < n_objects; i++) {
		const struct tr_cfi_table *t = &objects[i].table;

		if (!objects[i].built)
			continue;
		with_rows += t->n > 0;
		printf("# %s: %zu FDEs, %zu rows, %zu fallbacks\n", objects[i].path, t->stats.fdes,
		       t->n, t->stats.fallbacks);
		for (size_t r = 1; r < t->n; r++)
			if (t->rows[r].pc <= t->rows[r - 1].pc) {
				TEST_FAIL("%s: row %zu not after row %zu", objects[i].path, r,
					  r - 1);
				break;
			}
		/* Almost every row is one a walker can follow: a table full
		 * of fallbacks would be a reader that understands nothing. */
		if (t->stats.fallbacks * 20 > t->n)
			TEST_FAIL("%s: %zu of %zu rows are fallbacks", objects[i].path,
				  t->stats.fallbacks, t->n);
	}
	EXPECT_TRUE(with_rows >= 2); /* this program and libc at least */
}

DEF_TEST(find_returns_the_row_holding_a_pc)
{
	struct tr_cfi_row rows[] = { { .pc = 0x100, .kind = TR_CFI_RSP, .cfa_offset = 8 },
				     { .pc = 0x104, .kind = TR_CFI_RSP, .cfa_offset = 16 },
				     { .pc = 0x120, .kind = TR_CFI_NONE } };
	struct tr_cfi_table t = { .rows = rows, .n = 3 };

	EXPECT_TRUE(tr_cfi_find(&t, 0xff) == NULL);
	EXPECT_TRUE(tr_cfi_find(&t, 0x100) == &rows[0]);
	EXPECT_TRUE(tr_cfi_find(&t, 0x103) == &rows[0]);
	EXPECT_TRUE(tr_cfi_find(&t, 0x104) == &rows[1]);
	EXPECT_TRUE(tr_cfi_find(&t, 0x11f) == &rows[1]);
	EXPECT_TRUE(tr_cfi_find(&t, 0x5000) == &rows[2]);
}

DEF_TEST(walk_through_libc_matches_glibc_backtrace)
{
	size_t same = 0, skipped = 0;

	depth_seen = 0;
	(void)sort_some(3);
	if (n_walked < 4 || n_traced < 4) {
		TEST_FAIL("walked %zu frames, backtrace %zu", n_walked, n_traced);
		return;
	}
	/* A sanitizer build intercepts backtrace(): its own frame comes
	 * first, then capture's, so the lists may start one apart. */
	while (n_traced && n_walked && traced[0] != walked[0] && skipped < 2) {
		memmove(traced, traced + 1, --n_traced * sizeof(traced[0]));
		skipped++;
	}
	while (same < n_walked && same < n_traced && walked[same] == traced[same])
		same++;
	printf("# walked %zu frames, backtrace found %zu, the first %zu the same\n", n_walked,
	       n_traced, same);
	/* Up to main and beyond it into libc's start: every frame that
	 * backtrace found, the walk found the same. */
	if (same < n_traced) {
		TEST_FAIL("frame %zu differs: walked %#llx, backtrace %#llx (%zu walked, %zu "
			  "traced)",
			  same, same < n_walked ? (unsigned long long)walked[same] : 0ull,
			  (unsigned long long)traced[same], n_walked, n_traced);
	}
	/* The path went through libc (qsort's frames), not around it. */
	{
		struct object *libc = NULL;
		size_t in_libc = 0;

		for (size_t i = 0; i < n_objects; i++)
			if (strstr(objects[i].path, "libc.so"))
				libc = &objects[i];
		for (size_t i = 0; libc && i < same; i++)
			in_libc += walked[i] >= libc->lo && walked[i] < libc->hi;
		EXPECT_TRUE(libc != NULL);
		EXPECT_TRUE(in_libc >= 2); /* inside qsort, and __libc_start_call_main */
	}
}

DEF_TEST(objects_without_cfi_are_said_so)
{
	struct tr_cfi_table t;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		TEST_FAIL("cannot open /proc/self/cmdline: %s", strerror(errno));
		return;
	}
	EXPECT_EQ_INT(-EINVAL, tr_cfi_build(fd, &t));
	EXPECT_EQ_INT(0, (long long)t.n);
	close(fd);
}

#ifdef HAVE_LIBDW
/* tests/lib/cfi/frames.c, built by tests/local.mk: the same code with its
 * CFI in .debug_frame alone, in .eh_frame with and without .eh_frame_hdr,
 * and an executable with .debug_frame beside crt1's .eh_frame. */
#define FRAMES_DIR TR_ABS_BUILDDIR "/tests/lib/cfi"
#define FRAMES_DEBUG FRAMES_DIR "/.libs/libframes_debug.so"
#define FRAMES_EH FRAMES_DIR "/.libs/libframes_eh.so"
#define FRAMES_NOHDR FRAMES_DIR "/.libs/libframes_nohdr.so"
#define FRAMES_EXE FRAMES_DIR "/frames_debug"

static int build_file(const char *path, struct tr_cfi_table *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	memset(t, 0, sizeof(*t));
	if (fd < 0)
		return -errno;
	ret = tr_cfi_build(fd, t);
	close(fd);
	return ret;
}

/* The flags of the section `name` of the ELF at `path`, or -1 when it has
 * none of that name. */
static long long section_flags(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	long long flags = -1;
	Elf_Scn *scn = NULL;
	size_t strndx;
	Elf *elf;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && elf_getshdrstrndx(elf, &strndx) == 0 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *n;

		if (gelf_getshdr(scn, &shdr) && (n = elf_strptr(elf, strndx, shdr.sh_name)) &&
		    strcmp(n, name) == 0)
			flags = (long long)shdr.sh_flags;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return flags;
}

/* libdw's CFA rule at `pc` as a row: RSP or RBP and an offset, FALLBACK
 * for any other rule or where no return address is saved (_start's
 * frame, the outermost), NONE where no FDE of `cfi` covers `pc`. */
static struct tr_cfi_row libdw_row(Dwarf_CFI *cfi, uint64_t pc)
{
	struct tr_cfi_row row = { .pc = pc, .kind = TR_CFI_NONE };
	Dwarf_Op ops_mem[3], *ops, *ra;
	Dwarf_Frame *frame;
	size_t nops, nra;

	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
		return row;
	row.kind = TR_CFI_FALLBACK;
	/* libdw gives DW_CFA_def_cfa as DW_OP_bregx REG OFFSET */
	if (dwarf_frame_register(frame, 16, ops_mem, &ra, &nra) == 0 && nra > 0 &&
	    dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1 && ops[0].atom == DW_OP_bregx &&
	    (ops[0].number == 6 || ops[0].number == 7)) {
		row.kind = ops[0].number == 7 ? TR_CFI_RSP : TR_CFI_RBP;
		row.cfa_offset = (int32_t)ops[0].number2;
	}
	free(frame);
	return row;
}

struct agreement {
	size_t described, gaps, differ;
};

static void compare_at(const struct tr_cfi_table *t, Dwarf_CFI *eh, Dwarf_CFI *debug, uint64_t pc,
		       struct agreement *a)
{
	struct tr_cfi_row want = libdw_row(eh, pc);
	const struct tr_cfi_row *got = tr_cfi_find(t, pc);
	int same;

	if (want.kind == TR_CFI_NONE)
		want = libdw_row(debug, pc);
	if (want.kind == TR_CFI_NONE) {
		a->gaps++;
		same = !got || got->kind == TR_CFI_NONE;
	} else {
		a->described++;
		same = got && got->kind == want.kind &&
		       (want.kind == TR_CFI_FALLBACK || got->cfa_offset == want.cfa_offset);
	}
	if (!same && a->differ++ < 5)
		printf("# %#llx: libdw says kind %d CFA offset %d, the table kind %d offset %d\n",
		       (unsigned long long)pc, want.kind, want.cfa_offset, got ? got->kind : -1,
		       got ? got->cfa_offset : 0);
}

/* Every address of the object's .text, the table's row against what
 * libdw reads there: .eh_frame's rules, else .debug_frame's, else none
 * (between functions, or code no FDE describes). */
static int agree_with_libdw(const char *path, const struct tr_cfi_table *t, struct agreement *a)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwarf_CFI *eh = NULL, *debug = NULL;
	Dwarf *dw = NULL;
	GElf_Shdr shdr = { 0 };
	Elf_Scn *scn = NULL;
	size_t strndx;
	Elf *elf;

	memset(a, 0, sizeof(*a));
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && elf_getshdrstrndx(elf, &strndx) == 0 && (scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, &shdr) && (n = elf_strptr(elf, strndx, shdr.sh_name)) &&
		    strcmp(n, ".text") == 0)
			break;
	}
	if (scn) {
		eh = dwarf_getcfi_elf(elf);
		dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		debug = dw ? dwarf_getcfi(dw) : NULL;
		for (uint64_t pc = shdr.sh_addr; pc < shdr.sh_addr + shdr.sh_size; pc++)
			compare_at(t, eh, debug, pc, a);
	}
	if (eh)
		dwarf_cfi_end(eh);
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	close(fd);
	return scn ? 0 : -1;
}

static void expect_agreement(const char *path, const struct tr_cfi_table *t, int with_gaps)
{
	struct agreement a;

	if (agree_with_libdw(path, t, &a) < 0) {
		TEST_FAIL("%s: no .text to compare", path);
		return;
	}
	printf("# %s: %zu addresses described, %zu not, %zu rows differ from libdw's rules\n", path,
	       a.described, a.gaps, a.differ);
	EXPECT_EQ_INT(0, a.differ);
	EXPECT_TRUE(a.described >= 100);
	/* The functions are 64-byte aligned: the padding between them is no
	 * FDE's, and must not take the rules of the function before. */
	if (with_gaps)
		EXPECT_TRUE(a.gaps >= 16);
}

static int same_rows(const struct tr_cfi_table *a, const struct tr_cfi_table *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->rows[i].pc != b->rows[i].pc || a->rows[i].kind != b->rows[i].kind ||
		    a->rows[i].cfa_offset != b->rows[i].cfa_offset ||
		    a->rows[i].rbp_offset != b->rows[i].rbp_offset)
			return 0;
	return 1;
}

DEF_TEST(debug_frame_alone_is_compiled)
{
	struct tr_cfi_table t;
	size_t on_rbp = 0;

	/* What the build made: no .eh_frame_hdr, rules in .debug_frame */
	EXPECT_TRUE(section_flags(FRAMES_DEBUG, ".eh_frame_hdr") < 0);
	EXPECT_TRUE(section_flags(FRAMES_DEBUG, ".debug_frame") >= 0);
	EXPECT_EQ_INT(0, build_file(FRAMES_DEBUG, &t));
	EXPECT_EQ_INT(TR_CFI_FROM_DEBUG_FRAME, t.stats.sources);
	EXPECT_EQ_INT(3, t.stats.fdes);
	for (size_t i = 0; i < t.n; i++)
		on_rbp += t.rows[i].kind == TR_CFI_RBP && t.rows[i].rbp_offset == -16;
	EXPECT_TRUE(on_rbp >= 1); /* frames_middle's, with its array */
	EXPECT_EQ_INT(0, t.stats.fallbacks);
	expect_agreement(FRAMES_DEBUG, &t, 1);
	tr_cfi_free(&t);
}

DEF_TEST(eh_frame_without_its_hdr_is_read_through)
{
	struct tr_cfi_table with, without;

	EXPECT_TRUE(section_flags(FRAMES_EH, ".eh_frame_hdr") >= 0);
	EXPECT_TRUE(section_flags(FRAMES_NOHDR, ".eh_frame_hdr") < 0);
	EXPECT_EQ_INT(0, build_file(FRAMES_EH, &with));
	EXPECT_EQ_INT(0, build_file(FRAMES_NOHDR, &without));
	EXPECT_EQ_INT(TR_CFI_FROM_EH_FRAME_HDR, with.stats.sources);
	EXPECT_EQ_INT(TR_CFI_FROM_EH_FRAME, without.stats.sources);
	EXPECT_TRUE(with.n >= 6);
	EXPECT_EQ_INT(with.stats.fdes, without.stats.fdes);
	if (!same_rows(&with, &without))
		TEST_FAIL("%zu rows by .eh_frame_hdr, %zu without it, not the same", with.n,
			  without.n);
	expect_agreement(FRAMES_NOHDR, &without, 1);
	tr_cfi_free(&with);
	tr_cfi_free(&without);
}

DEF_TEST(debug_frame_beside_eh_frame_hdr)
{
	struct tr_cfi_table t;
	unsigned both = TR_CFI_FROM_EH_FRAME_HDR | TR_CFI_FROM_DEBUG_FRAME;

	EXPECT_TRUE(section_flags(FRAMES_EXE, ".eh_frame_hdr") >= 0);
	EXPECT_EQ_INT(0, build_file(FRAMES_EXE, &t));
	/* crt1's _start by .eh_frame, main and frames.c's by .debug_frame */
	EXPECT_EQ_INT(both, t.stats.sources);
	EXPECT_TRUE(t.stats.fdes >= 5);
	expect_agreement(FRAMES_EXE, &t, 1);
	tr_cfi_free(&t);
}

/* `objcopy --compress-debug-sections=HOW in out`: 0, or -1 where objcopy
 * cannot (none installed, a format it does not know). */
static int compressed_copy(const char *how, const char *in, const char *out)
{
	char opt[64];
	int status;
	pid_t pid;

	snprintf(opt, sizeof(opt), "--compress-debug-sections=%s", how);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDERR_FILENO);
		execlp("objcopy", "objcopy", opt, in, out, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* zlib: SHF_COMPRESSED; zlib-gnu: .zdebug_frame, as Go linked before 1.19. */
static void compare_compressed(const char *how, const char *section, const char *dir,
			       const struct tr_cfi_table *plain)
{
	char path[512];
	struct tr_cfi_table t;
	long long flags;

	snprintf(path, sizeof(path), "%s/%s.so", dir, how);
	if (compressed_copy(how, FRAMES_DEBUG, path) < 0) {
		printf("# objcopy --compress-debug-sections=%s failed: not compared\n", how);
		return;
	}
	flags = section_flags(path, section);
	if (flags < 0 || (strcmp(how, "zlib") == 0 && !(flags & SHF_COMPRESSED)))
		TEST_FAIL("%s: no compressed %s", path, section);
	EXPECT_EQ_INT(0, build_file(path, &t));
	EXPECT_EQ_INT(TR_CFI_FROM_DEBUG_FRAME, t.stats.sources);
	if (!same_rows(plain, &t))
		TEST_FAIL("%s: %zu rows, %zu uncompressed, not the same", path, t.n, plain->n);
	tr_cfi_free(&t);
	unlink(path);
}

DEF_TEST(compressed_debug_frame_is_inflated)
{
	char dir[] = "/tmp/test_cfi.XXXXXX";
	struct tr_cfi_table plain;

	if (!mkdtemp(dir)) {
		TEST_FAIL("mkdtemp: %s", strerror(errno));
		return;
	}
	EXPECT_EQ_INT(0, build_file(FRAMES_DEBUG, &plain));
	EXPECT_TRUE(plain.n > 0);
	compare_compressed("zlib", ".debug_frame", dir, &plain);
	compare_compressed("zlib-gnu", ".zdebug_frame", dir, &plain);
	tr_cfi_free(&plain);
	rmdir(dir);
}

/* frames.c's functions, from the .debug_frame library, loaded before the
 * tables of this process are built. */
static int (*frames_top)(int (*cb)(int), int x);
static void **frames_returns;
static void *call_lib_returns_to;
static void *before_lib[MAX_FRAMES];
static int n_before_lib;
static volatile int lib_result;

static void load_frames(void)
{
	void *lib = dlopen(FRAMES_DEBUG, RTLD_NOW);

	if (!lib) {
		printf("# dlopen: %s\n", dlerror());
		return;
	}
	*(void **)&frames_top = dlsym(lib, "frames_top");
	frames_returns = dlsym(lib, "frames_returns");
}

__attribute__((noinline)) static int from_lib(int x)
{
	if (!depth_seen++)
		capture();
	return x + 1;
}

/* The store after the call keeps it a call, not a jump to frames_top
 * (frames_top returning straight to call_lib's caller). */
__attribute__((noinline)) static void call_lib(int x)
{
	call_lib_returns_to = __builtin_return_address(0);
	n_before_lib = backtrace(before_lib, MAX_FRAMES);
	lib_result = frames_top(from_lib, x);
}

DEF_TEST(walk_through_debug_frame_code)
{
	int from = 0;

	if (!frames_top || !frames_returns) {
		TEST_FAIL("%s not loaded", FRAMES_DEBUG);
		return;
	}
	depth_seen = 0;
	call_lib(5);
	if (n_walked < 7) {
		TEST_FAIL("walked %zu frames only", n_walked);
		return;
	}
	/* from_lib, then frames_bottom, middle (on RBP), top, call_lib */
	for (int i = 0; i < 3; i++)
		EXPECT_EQ_INT((uintptr_t)frames_returns[i], walked[2 + i]);
	EXPECT_EQ_INT((uintptr_t)call_lib_returns_to, walked[5]);
	/* From call_lib on, what backtrace() found there (after its own
	 * frame and, in a sanitizer build, the interceptor's). */
	while (from < 3 && from < n_before_lib && before_lib[from] != call_lib_returns_to)
		from++;
	for (int i = from; i < n_before_lib; i++)
		if (5 + (size_t)(i - from) >= n_walked ||
		    walked[5 + i - from] != (uint64_t)(uintptr_t)before_lib[i]) {
			TEST_FAIL("frame %d of backtrace's from call_lib (%p) not walked", i - from,
				  before_lib[i]);
			break;
		}
	printf("# walked %zu frames, the last %d as backtrace found them from call_lib\n", n_walked,
	       n_before_lib - from);
	EXPECT_TRUE(n_before_lib - from >= 3); /* call_lib's caller, main, libc's start */
}
#endif

int main(void)
{
#if !defined(HAVE_LIBDW) || !defined(__x86_64__)
	printf("1..0 # SKIP CFI tables need libdw on x86_64\n");
	return 0;
#else
	load_frames();
	if (build_all() == 0) {
		printf("1..0 # SKIP no object of this process could be read\n");
		return 0;
	}
	RUN_TEST(tables_of_this_process);
	RUN_TEST(find_returns_the_row_holding_a_pc);
	RUN_TEST(walk_through_libc_matches_glibc_backtrace);
	RUN_TEST(objects_without_cfi_are_said_so);
	RUN_TEST(debug_frame_alone_is_compiled);
	RUN_TEST(eh_frame_without_its_hdr_is_read_through);
	RUN_TEST(debug_frame_beside_eh_frame_hdr);
	RUN_TEST(compressed_debug_frame_is_inflated);
	RUN_TEST(walk_through_debug_frame_code);
	for (size_t i = 0; i < n_objects; i++)
		tr_cfi_free(&objects[i].table);
	TEST_MAIN_END();
#endif
}
