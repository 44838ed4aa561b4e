/* lib/cfi: tables compiled from real objects (this program, built
 * -fomit-frame-pointer, and Debian's libc, built without frame pointers),
 * and a walk with them through a libc function that calls back into this
 * program (qsort): every return address equal to what glibc's own
 * backtrace() finds, with libgcc's unwinder reading the same .eh_frame. */
#include "config.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int main(void)
{
#if !defined(HAVE_LIBDW) || !defined(__x86_64__)
	printf("1..0 # SKIP CFI tables need libdw on x86_64\n");
	return 0;
#else
	if (build_all() == 0) {
		printf("1..0 # SKIP no object of this process could be read\n");
		return 0;
	}
	RUN_TEST(tables_of_this_process);
	RUN_TEST(find_returns_the_row_holding_a_pc);
	RUN_TEST(walk_through_libc_matches_glibc_backtrace);
	RUN_TEST(objects_without_cfi_are_said_so);
	for (size_t i = 0; i < n_objects; i++)
		tr_cfi_free(&objects[i].table);
	TEST_MAIN_END();
#endif
}
