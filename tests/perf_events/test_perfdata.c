/* The perf.data writer, synthesized records and build ids, checked against
 * the real thing: samples from the kernel written to a file that stock
 * `perf script` / `perf report` must open, symbolize and not complain about. */
#include "config.h"

#include "testing.h"
#include "lib/buildid.h"
#include "lib/untrusted.h"
#include "perfdata.h"
#include "synth.h"
#include "tracefs.h"
#include "tracingdata.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |      \
		     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |          \
		     PERF_SAMPLE_CALLCHAIN)
/* Trailer of SAMPLE_TYPE: tid, time, cpu, identifier. */
#define TRAILER_SIZE 32
#define RING_PAGES 64

static int main_argc;
static char **main_argv;
static char tmpdir[64];

/* ---- helpers */

struct rec_list {
	uint8_t **recs;
	size_t n;
	int fail_after;           /* emit fails with -ENOSPC after this many; 0: never */
};

static int collect(void *arg, const void *record, size_t len)
{
	struct rec_list *l = arg;
	uint8_t **v;

	if (l->fail_after && l->n >= (size_t)l->fail_after)
		return -ENOSPC;
	v = realloc(l->recs, (l->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->recs = v;
	l->recs[l->n] = malloc(len);
	if (!l->recs[l->n])
		return -ENOMEM;
	memcpy(l->recs[l->n], record, len);
	l->n++;
	return 0;
}

static void rec_list_free(struct rec_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->recs[i]);
	free(l->recs);
	memset(l, 0, sizeof(*l));
}

static struct perf_event_header rec_hdr(const uint8_t *r)
{
	struct perf_event_header h;

	memcpy(&h, r, sizeof(h));
	return h;
}

static uint32_t rec_u32(const uint8_t *r, size_t off)
{
	uint32_t v;

	memcpy(&v, r + off, sizeof(v));
	return v;
}

static uint64_t rec_u64(const uint8_t *r, size_t off)
{
	uint64_t v;

	memcpy(&v, r + off, sizeof(v));
	return v;
}

/* Runs `cmd` through the shell; its stdout, NUL-terminated, in *out. */
static int run_capture(const char *cmd, char **out)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	FILE *p;
	size_t n;
	int st;

	if (!buf)
		return -ENOMEM;
	p = popen(cmd, "r");
	if (!p) {
		free(buf);
		return -errno;
	}
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	st = pclose(p);
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *read_file(const char *path)
{
	char cmd[256], *out = NULL;

	snprintf(cmd, sizeof(cmd), "cat '%s' 2>/dev/null", path);
	run_capture(cmd, &out);
	return out;
}

/* Prints `text` as TAP diagnostics, at most `max` lines. */
static void diag(const char *what, const char *text, int max)
{
	const char *p = text;
	int n = 0;

	printf("# %s:\n", what);
	while (p && *p && n++ < max) {
		const char *e = strchr(p, '\n');
		int len = e ? (int)(e - p) : (int)strlen(p);

		printf("#   %.*s\n", len, p);
		p = e ? e + 1 : NULL;
	}
}

/* What perf says when it mistrusts a file. */
static const char *complaint(const char *err)
{
	static const char *const words[] = {
		"warning", "failed to", "corrupt", "invalid", "unsupported",
		"non matching", "out of order", "can't", "cannot", "error",
	};
	static char lower[65536];
	size_t i;

	for (i = 0; err[i] && i < sizeof(lower) - 1; i++)
		lower[i] = (char)tolower((unsigned char)err[i]);
	lower[i] = '\0';
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(lower, words[i]))
			return words[i];
	return NULL;
}

static int have_perf(void)
{
	char *out = NULL;
	int ok = run_capture("perf version 2>/dev/null", &out) == 0 && out &&
		 strstr(out, "perf version");

	free(out);
	return ok;
}

/* ---- build ids */

static int self_exe(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* ---- synthesized records */

/* Every record: 8-byte aligned, header.size is its length, and it ends
 * with the trailer of SAMPLE_TYPE naming `id` and the record's pid. */
static void check_shape(const uint8_t *r, size_t len, uint64_t id, uint32_t pid)
{
	struct perf_event_header h = rec_hdr(r);

	EXPECT_EQ_INT(len, h.size);
	EXPECT_EQ_INT(0, h.size % 8);
	EXPECT_EQ_INT(id, rec_u64(r, h.size - 8));              /* IDENTIFIER */
	EXPECT_EQ_INT(0, rec_u32(r, h.size - 16));              /* cpu */
	EXPECT_EQ_INT(0, rec_u64(r, h.size - 24));              /* time */
	EXPECT_EQ_INT(pid, rec_u32(r, h.size - TRAILER_SIZE));   /* pid */
}

DEF_TEST(synth_process_shapes)
{
	struct synth_id sid = { .sample_type = SAMPLE_TYPE, .id = 0x1234 };
	struct rec_list l = { 0 };
	uint8_t exe_id[TR_BUILDID_PERF_MAX];
	size_t exe_size = 0;
	int n_comm = 0, n_exe = 0, n_vdso = 0, n_bid = 0;
	char exe[4096];
	size_t i;

	EXPECT_EQ_INT(0, self_exe(exe, sizeof(exe)));
	EXPECT_EQ_INT(0, tr_buildid_read(exe, exe_id, sizeof(exe_id), &exe_size));
	EXPECT_EQ_INT(0, synth_process(getpid(), &sid, collect, &l));
	EXPECT_TRUE(l.n > 2);
	for (i = 0; i < l.n; i++) {
		const uint8_t *r = l.recs[i];
		struct perf_event_header h = rec_hdr(r);

		check_shape(r, h.size, sid.id, (uint32_t)getpid());
		EXPECT_EQ_INT(getpid(), rec_u32(r, 8));
		if (h.type == PERF_RECORD_COMM) {
			n_comm++;
			EXPECT_EQ_INT(gettid(), rec_u32(r, 12));
			EXPECT_EQ_STR("test_perfdata", (const char *)r + 16);
			EXPECT_EQ_INT(gettid(), rec_u32(r, h.size - 28));
		} else if (h.type == PERF_RECORD_MMAP2) {
			const char *name = (const char *)r + 72;

			EXPECT_EQ_INT(PERF_RECORD_MISC_USER, h.misc & PERF_RECORD_MISC_CPUMODE_MASK);
			EXPECT_TRUE(rec_u32(r, 64) & PROT_EXEC);
			EXPECT_TRUE(strlen(name) < (size_t)(h.size - 72 - TRAILER_SIZE));
			if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
				n_bid++;
			if (strcmp(name, exe) == 0) {
				n_exe++;
				EXPECT_TRUE(h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
				EXPECT_EQ_INT(exe_size, r[40]);
				EXPECT_TRUE(memcmp(r + 44, exe_id, exe_size) == 0);
			}
			if (strcmp(name, "[vdso]") == 0) {
				n_vdso++;
				EXPECT_TRUE(!(h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID));
			}
		} else {
			TEST_FAIL("unexpected record type %u", h.type);
		}
	}
	EXPECT_EQ_INT(1, n_comm);
	EXPECT_EQ_INT(1, n_exe);
	EXPECT_EQ_INT(1, n_vdso);
	EXPECT_TRUE(n_bid >= 2);   /* the test and libc at least */
	rec_list_free(&l);
}

DEF_TEST(synth_kernel_mmap_shape)
{
	struct synth_id sid = { .sample_type = SAMPLE_TYPE, .id = 7 };
	struct rec_list l = { 0 };
	unsigned long long text = 0, etext = 0;
	char *out = NULL;
	struct perf_event_header h;
	unsigned char bid[20];
	size_t bid_len = 0;

	EXPECT_EQ_INT(0, run_capture("awk '$3 == \"_text\" { print $1; exit }' /proc/kallsyms", &out));
	CHECK_NOT_NULL(out);
	text = strtoull(out, NULL, 16);
	free(out);
	out = NULL;
	EXPECT_EQ_INT(0, run_capture("awk '$3 == \"_etext\" { print $1; exit }' /proc/kallsyms", &out));
	if (out)
		etext = strtoull(out, NULL, 16);
	free(out);
	if (!text) {
		printf("# /proc/kallsyms hides addresses (kptr_restrict)\n");
		EXPECT_EQ_INT(-EACCES, synth_kernel_mmap(&sid, NULL, collect, &l));
		return;
	}
	EXPECT_EQ_INT(0, synth_kernel_mmap(&sid, NULL, collect, &l));
	EXPECT_EQ_INT(1, l.n);
	if (l.n != 1)
		return;
	h = rec_hdr(l.recs[0]);
	check_shape(l.recs[0], h.size, 7, 0);
	EXPECT_EQ_INT(0xffffffffu, rec_u32(l.recs[0], 8));
	EXPECT_EQ_INT(text, rec_u64(l.recs[0], 16));
	/* Up to _etext, as perf 6.1 does; to the top without one. */
	EXPECT_TRUE(rec_u64(l.recs[0], 24) == (etext > text ? etext - text : ~0ULL - text));
	EXPECT_EQ_INT(text, rec_u64(l.recs[0], 32));
	if (synth_kernel_build_id(bid, &bid_len) == 0) {
		/* With the running kernel's build id, as perf record
		 * --buildid-mmap writes it: an MMAP2 whose build id stands in
		 * for the device and inode. */
		EXPECT_EQ_INT(PERF_RECORD_MMAP2, h.type);
		EXPECT_EQ_INT(PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_MMAP_BUILD_ID, h.misc);
		EXPECT_EQ_INT(bid_len, ((const unsigned char *)l.recs[0])[40]);
		EXPECT_TRUE(memcmp((const unsigned char *)l.recs[0] + 44, bid, bid_len) == 0);
		EXPECT_EQ_STR("[kernel.kallsyms]_text", (const char *)l.recs[0] + 72);
	} else {
		printf("# /sys/kernel/notes is unreadable: the kernel map has no build id\n");
		EXPECT_EQ_INT(PERF_RECORD_MMAP, h.type);
		EXPECT_EQ_INT(PERF_RECORD_MISC_KERNEL, h.misc);
		EXPECT_EQ_STR("[kernel.kallsyms]_text", (const char *)l.recs[0] + 40);
	}
	rec_list_free(&l);

	/* Read once a session: what was read is kept in `known`, and what is
	 * known is not read again (the values below are not this kernel's). */
	{
		struct synth_kernel_text known = { 0 };
		struct rec_list l2 = { 0 };

		EXPECT_EQ_INT(0, synth_kernel_mmap(&sid, &known, collect, &l2));
		EXPECT_EQ_INT(text, known.text);
		EXPECT_EQ_INT(etext, known.etext);
		rec_list_free(&l2);
		memset(&l2, 0, sizeof(l2));
		known = (struct synth_kernel_text){ 0xffffffff90000000ull, 0xffffffff90400000ull };
		EXPECT_EQ_INT(0, synth_kernel_mmap(&sid, &known, collect, &l2));
		EXPECT_EQ_INT(1, l2.n);
		if (l2.n == 1) {
			EXPECT_EQ_INT(0xffffffff90000000ull, rec_u64(l2.recs[0], 16));
			EXPECT_EQ_INT(0x400000, rec_u64(l2.recs[0], 24));
			EXPECT_EQ_INT(0xffffffff90000000ull, rec_u64(l2.recs[0], 32));
		}
		rec_list_free(&l2);
	}
}

DEF_TEST(synth_process_gone_is_esrch)
{
	struct synth_id sid = { .sample_type = SAMPLE_TYPE, .id = 1 };
	struct rec_list l = { 0 };
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	EXPECT_TRUE(child > 0);
	waitpid(child, NULL, 0);
	EXPECT_EQ_INT(-ESRCH, synth_process(child, &sid, collect, &l));
	EXPECT_EQ_INT(0, l.n);
	rec_list_free(&l);
}

DEF_TEST(synth_all_processes_covers_init_and_self)
{
	struct synth_id sid = { .sample_type = SAMPLE_TYPE, .id = 9 };
	struct rec_list l = { 0 };
	int init_comm = 0, self_comm = 0, kthread_comm = 0, mmaps = 0;
	size_t i;

	EXPECT_EQ_INT(0, synth_all_processes(&sid, collect, &l));
	for (i = 0; i < l.n; i++) {
		struct perf_event_header h = rec_hdr(l.recs[i]);
		uint32_t pid = rec_u32(l.recs[i], 8);

		EXPECT_EQ_INT(0, h.size % 8);
		if (h.type == PERF_RECORD_MMAP2)
			mmaps++;
		if (h.type != PERF_RECORD_COMM)
			continue;
		if (pid == 1)
			init_comm++;
		if (pid == (uint32_t)getpid())
			self_comm++;
		if (pid == 2)   /* kthreadd: no maps, still named */
			kthread_comm++;
	}
	EXPECT_TRUE(init_comm >= 1);    /* one per thread */
	EXPECT_EQ_INT(1, self_comm);
	EXPECT_TRUE(mmaps > 2);
	if (!kthread_comm)
		printf("# no kthreadd visible (pid namespace?)\n");
	rec_list_free(&l);

	/* A failing sink stops the walk with its error. */
	l.fail_after = 3;
	EXPECT_EQ_INT(-ENOSPC, synth_all_processes(&sid, collect, &l));
	EXPECT_EQ_INT(3, l.n);
	rec_list_free(&l);
}

/* ---- the writer */

DEF_TEST(pd_write_rejects_partial_records)
{
	char path[128];
	struct pd_writer *w;
	uint64_t rec[4] = { 0 };
	struct perf_event_header h = { .type = PD_RECORD_FINISHED_ROUND, .size = 8 };

	snprintf(path, sizeof(path), "%s/bad.data", tmpdir);
	EXPECT_EQ_INT(0, pd_create(path, &w));
	CHECK_NOT_NULL(w);
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 1, &h, sizeof(h));
	EXPECT_EQ_INT(0, pd_write(w, rec, 8));
	EXPECT_EQ_INT(0, pd_write(w, rec, 16)); /* two whole records */
	EXPECT_EQ_INT(-EINVAL, pd_write(w, rec, 12));
	h.size = 12;
	memcpy(rec, &h, sizeof(h));
	EXPECT_EQ_INT(-EINVAL, pd_write(w, rec, 16));
	h.size = 32;
	memcpy(rec, &h, sizeof(h));
	EXPECT_EQ_INT(-EINVAL, pd_write(w, rec, 16));
	EXPECT_EQ_INT(24, pd_data_size(w));
	pd_abort(w);
	unlink(path);
}

/* ---- tracing data */

/* Walks a td_build() blob as perf's trace_report() does; returns the
 * number of event formats in it, or -1 (with a failure) if malformed. */
static int td_walk(const char *p, size_t len)
{
	size_t off = 0;
	uint32_t n_sys, i, j, cnt, n_events = 0;
	uint64_t sz;

#define NEED(n)                                                                 \
	do {                                                                    \
		if (len - off < (size_t)(n)) {                                  \
			TEST_FAIL("blob truncated at %zu (need %zu)", off,      \
				  (size_t)(n));                                 \
			return -1;                                              \
		}                                                               \
	} while (0)
	NEED(10);
	if (memcmp(p, "\027\010\104tracing", 10) != 0) {
		TEST_FAIL("bad magic");
		return -1;
	}
	off = 10;
	NEED(4);
	EXPECT_EQ_STR("0.6", p + off);
	off += 4;
	NEED(6);
	EXPECT_EQ_INT(0, p[off]);  /* little endian host assumed by the test */
	EXPECT_EQ_INT(sizeof(long), p[off + 1]);
	EXPECT_EQ_INT(sysconf(_SC_PAGESIZE), rec_u32((const uint8_t *)p, off + 2));
	off += 6;
	NEED(12 + 8);
	EXPECT_EQ_STR("header_page", p + off);
	off += 12;
	sz = rec_u64((const uint8_t *)p, off);
	off += 8;
	NEED(sz);
	if (sz < 10 || !memmem(p + off, sz, "commit", 6))
		TEST_FAIL("header_page content looks wrong");
	off += sz;
	NEED(13 + 8);
	EXPECT_EQ_STR("header_event", p + off);
	off += 13;
	sz = rec_u64((const uint8_t *)p, off);
	off += 8 + sz;
	NEED(4);
	EXPECT_EQ_INT(0, rec_u32((const uint8_t *)p, off));  /* ftrace formats */
	off += 4;
	NEED(4);
	n_sys = rec_u32((const uint8_t *)p, off);
	off += 4;
	for (i = 0; i < n_sys; i++) {
		size_t sl = strnlen(p + off, len - off);

		NEED(sl + 1 + 4);
		off += sl + 1;
		cnt = rec_u32((const uint8_t *)p, off);
		off += 4;
		for (j = 0; j < cnt; j++) {
			NEED(8);
			sz = rec_u64((const uint8_t *)p, off);
			off += 8;
			NEED(sz);
			if (!memmem(p + off, sz, "\nID: ", 5))
				TEST_FAIL("event format without ID");
			off += sz;
			n_events++;
		}
	}
	NEED(4);
	EXPECT_EQ_INT(0, rec_u32((const uint8_t *)p, off));  /* kallsyms */
	off += 4;
	NEED(4);
	sz = rec_u32((const uint8_t *)p, off);
	off += 4;
	NEED(sz);
	off += sz;
	NEED(8);
	sz = rec_u64((const uint8_t *)p, off);
	off += 8;
	NEED(sz);
	off += sz;
	EXPECT_EQ_INT(len, off);
#undef NEED
	return (int)n_events;
}

DEF_TEST(td_build_blob)
{
	static const char *const sys[] = { "sched", "irq", "sched", "sched" };
	static const char *const name[] = { "sched_switch", "irq_handler_entry", "sched_wakeup",
					    "sched_switch" };
	static const char *const bad_sys[] = { ".." };
	static const char *const bad_name[] = { "sched" };
	static const char *const no_sys[] = { "sched" };
	static const char *const no_name[] = { "no_such_event_tracerig" };
	char *blob = NULL;
	size_t len = 0;

	if (!tracefs_root()) {
		printf("# no tracefs: skipping the real-files part\n");
		EXPECT_EQ_INT(-ENOENT, td_build(sys, name, 1, &blob, &len));
		return;
	}
	EXPECT_EQ_INT(-EINVAL, td_build(bad_sys, bad_name, 1, &blob, &len));
	EXPECT_EQ_INT(-ENOENT, td_build(no_sys, no_name, 1, &blob, &len));
	EXPECT_EQ_INT(0, td_build(sys, name, 4, &blob, &len));
	CHECK_NOT_NULL(blob);
	/* Three distinct events in two systems; the duplicate once. */
	EXPECT_EQ_INT(3, td_walk(blob, len));
	EXPECT_TRUE(memmem(blob, len, "sched\0\2\0\0\0", 10) != NULL);
	EXPECT_TRUE(memmem(blob, len, "irq\0\1\0\0\0", 8) != NULL);
	free(blob);
	blob = NULL;
	EXPECT_EQ_INT(0, td_build(NULL, NULL, 0, &blob, &len));
	CHECK_NOT_NULL(blob);
	EXPECT_EQ_INT(0, td_walk(blob, len));
	free(blob);
}

/* ---- the real thing */

static volatile uint64_t spin_sink;

/* noipa: no clone or inlining may rename the symbol perf must show. */
/* `ms` of this thread's CPU time, not of the clock: the samples counted
 * below come at 999 Hz of CPU time, however loaded the machine is. */
__attribute__((noipa)) static uint64_t perfdata_test_spin(unsigned int ms)
{
	struct timespec start, now;
	uint64_t x = 1;
	int i;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	do {
		for (i = 0; i < 200000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		spin_sink = x;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 <
		 (long)ms);
	return x;
}

/* Time in the kernel (copying zeroes out of /dev/zero), so that samples
 * exercise the synthesized kernel map. */
__attribute__((noipa)) static void perfdata_test_kernel_work(unsigned int ms)
{
	static char buf[1 << 20];
	struct timespec start, now;
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	do {
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 <
		 (long)ms);
	close(fd);
}

/* A callchain line of `perf script` with a kernel address and a symbol. */
static int has_kernel_symbol(const char *out)
{
	const char *p = out;

	while (p && (p = strstr(p, "ffffffff")) != NULL) {
		const char *e = strchr(p, '\n'), *sp = strchr(p, ' ');

		if (sp && (!e || sp < e) && sp[1] && sp[1] != '[')
			return 1;
		p = e;
	}
	return 0;
}

static int pd_emit(void *arg, const void *record, size_t len)
{
	return pd_write(arg, record, len);
}

/* Copies every record between data_tail and data_head into the file,
 * reassembling the ones that wrap around the end of the ring. */
static int drain_ring(struct perf_event_mmap_page *meta, struct pd_writer *w, int *n_samples,
		      int *n_lost)
{
	uint8_t *data = (uint8_t *)meta + meta->data_offset;
	uint64_t size = meta->data_size, tail = meta->data_tail;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint8_t rec[65536];
	int err = 0;

	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail % size, first;

		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			return -EBADMSG;
		first = size - off < h.size ? size - off : h.size;
		memcpy(rec, data + off, first);
		memcpy(rec + first, data, h.size - first);
		if (h.type == PERF_RECORD_SAMPLE)
			(*n_samples)++;
		if (h.type == PERF_RECORD_LOST)
			(*n_lost)++;
		err = pd_write(w, rec, h.size);
		if (err)
			break;
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}

static char *cpuinfo_field(const char *cpuinfo, const char *key)
{
	const char *p = cpuinfo;
	size_t klen = strlen(key);

	while (p && *p) {
		if (strncmp(p, key, klen) == 0 && (p[klen] == ' ' || p[klen] == '\t')) {
			const char *v = strchr(p, ':');

			if (v) {
				v += 1 + (v[1] == ' ');
				return strndup(v, strcspn(v, "\n"));
			}
		}
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return NULL;
}

struct features_store {
	struct utsname uts;
	char *cpuinfo, *cpudesc, *cpuid;
	struct pd_build_id bids[2];
	char exe[4096];
};

static void fill_features(struct pd_features *f, struct features_store *s)
{
	char *vendor, *family, *model, *stepping, *meminfo;
	struct timespec tod, clk;
	size_t n = 0;

	memset(f, 0, sizeof(*f));
	uname(&s->uts);
	f->hostname = s->uts.nodename;
	f->osrelease = s->uts.release;
	f->arch = s->uts.machine;
	f->version = "tracerig test_perfdata";
	s->cpuinfo = read_file("/proc/cpuinfo");
	s->cpudesc = cpuinfo_field(s->cpuinfo, "model name");
	f->cpudesc = s->cpudesc;
	/* perf's x86 cpuid string: vendor,family,model,stepping. */
	vendor = cpuinfo_field(s->cpuinfo, "vendor_id");
	family = cpuinfo_field(s->cpuinfo, "cpu family");
	model = cpuinfo_field(s->cpuinfo, "model");
	stepping = cpuinfo_field(s->cpuinfo, "stepping");
	if (vendor && family && model && stepping &&
	    asprintf(&s->cpuid, "%s,%s,%s,%s", vendor, family, model, stepping) > 0)
		f->cpuid = s->cpuid;
	free(vendor);
	free(family);
	free(model);
	free(stepping);
	f->nr_cpus_avail = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	f->nr_cpus_online = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	meminfo = read_file("/proc/meminfo");
	if (meminfo)
		sscanf(meminfo, "MemTotal: %" SCNu64, &f->total_mem_kb);
	free(meminfo);
	f->argc = main_argc;
	f->argv = (const char *const *)main_argv;
	f->clockid = CLOCK_MONOTONIC;
	clock_gettime(CLOCK_REALTIME, &tod);
	clock_gettime(CLOCK_MONOTONIC, &clk);
	f->clock_ref_tod_ns = (uint64_t)tod.tv_sec * 1000000000ULL + (uint64_t)tod.tv_nsec;
	f->clock_ref_clk_ns = (uint64_t)clk.tv_sec * 1000000000ULL + (uint64_t)clk.tv_nsec;

	size_t len;

	if (tr_buildid_read_kernel(s->bids[n].id, sizeof(s->bids[n].id), &len) == 0) {
		s->bids[n].size = (uint8_t)len;
		s->bids[n].pid = -1;
		s->bids[n].filename = "[kernel.kallsyms]";
		n++;
	}
	if (self_exe(s->exe, sizeof(s->exe)) == 0 &&
	    tr_buildid_read(s->exe, s->bids[n].id, sizeof(s->bids[n].id), &len) == 0) {
		s->bids[n].size = (uint8_t)len;
		s->bids[n].pid = getpid();
		s->bids[n].filename = s->exe;
		n++;
	}
	f->build_ids = s->bids;
	f->n_build_ids = n;
}

static void features_store_free(struct features_store *s)
{
	free(s->cpuinfo);
	free(s->cpudesc);
	free(s->cpuid);
}

/* Runs perf with a private HOME and no user config, so neither ~/.debug
 * nor ~/.perfconfig of whoever runs the tests changes the outcome. */
static int run_perf(const char *args, char **out, char **err)
{
	char cmd[1024], errpath[128];
	int rc;

	snprintf(errpath, sizeof(errpath), "%s/perf.stderr", tmpdir);
	snprintf(cmd, sizeof(cmd), "HOME='%s' PERF_CONFIG=/dev/null PAGER=cat perf %s 2>'%s'",
		 tmpdir, args, errpath);
	rc = run_capture(cmd, out);
	*err = read_file(errpath);
	return rc;
}

static void expect_quiet(const char *what, const char *err)
{
	const char *word = err ? complaint(err) : NULL;

	if (word) {
		TEST_FAIL("%s complained (\"%s\")", what, word);
		diag(what, err, 20);
	}
}

static void check_with_perf(const char *path, const struct pd_features *f)
{
	char args[512], needle[64], *out = NULL, *err = NULL;
	int rc;

	snprintf(args, sizeof(args), "script -i '%s' -F comm,pid,tid,ip,sym", path);
	rc = run_perf(args, &out, &err);
	EXPECT_EQ_INT(0, rc);
	EXPECT_CONTAINS("perfdata_test_spin", out);
	snprintf(needle, sizeof(needle), "test_perfdata %d/%d", getpid(), getpid());
	if (!out || !strstr(out, needle)) {
		/* perf pads the comm column: match the pid/tid on its own. */
		snprintf(needle, sizeof(needle), " %d/%d", getpid(), getpid());
		EXPECT_CONTAINS(needle, out);
		EXPECT_CONTAINS("test_perfdata", out);
	}
	if (!has_kernel_symbol(out))
		TEST_FAIL("no kernel frame symbolized by perf script");
	expect_quiet("perf script", err);
	if (tr_test_failed_now)
		diag("perf script stdout", out, 15);
	else
		diag("perf script (first lines)", out, 8);
	free(out);
	free(err);

	snprintf(args, sizeof(args), "report -i '%s' --stdio --no-children --sort sym", path);
	rc = run_perf(args, &out, &err);
	EXPECT_EQ_INT(0, rc);
	EXPECT_CONTAINS("perfdata_test_spin", out);
	EXPECT_CONTAINS("of event 'cpu-clock'", out);
	EXPECT_CONTAINS("of event 'task-clock'", out);
	expect_quiet("perf report", err);
	diag("perf report --stdio (first lines)", out, 14);
	free(out);
	free(err);

	snprintf(args, sizeof(args), "report -i '%s' --header-only", path);
	rc = run_perf(args, &out, &err);
	EXPECT_EQ_INT(0, rc);
	snprintf(needle, sizeof(needle), "# hostname : %s", f->hostname);
	EXPECT_CONTAINS(needle, out);
	snprintf(needle, sizeof(needle), "# os release : %s", f->osrelease);
	EXPECT_CONTAINS(needle, out);
	snprintf(needle, sizeof(needle), "# nrcpus online : %u", f->nr_cpus_online);
	EXPECT_CONTAINS(needle, out);
	EXPECT_CONTAINS("# cmdline : ", out);
	EXPECT_CONTAINS("test_perfdata", out);
	EXPECT_CONTAINS("# event : name = cpu-clock", out);
	EXPECT_CONTAINS("# event : name = task-clock", out);
	EXPECT_CONTAINS("clockid", out);
	EXPECT_CONTAINS("monotonic", out);
	expect_quiet("perf report --header-only", err);
	if (tr_test_failed_now)
		diag("perf report --header-only", out, 60);
	free(out);
	free(err);
}

static void perf_roundtrip(void)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *meta = MAP_FAILED;
	struct features_store store = { 0 };
	struct pd_features f;
	struct pd_writer *w = NULL;
	struct synth_id sid;
	size_t map_len = (size_t)(RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr2;
	int fd, fd2 = -1, n_samples = 0, n_lost = 0;
	char path[128], why[256];
	uint64_t id = 0, id2 = 0;

	tr_test_failed_now = 0;
	if (!have_perf()) {
		SKIP_TEST(perf_reads_our_file, "no working perf binary in PATH");
		return;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = 999;
	attr.sample_type = SAMPLE_TYPE;
	attr.sample_id_all = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.task = 1;
	attr.build_id = 1;
	attr.exclude_guest = 1;
	attr.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		snprintf(why, sizeof(why), "perf_event_open(cpu-clock): %s (perf_event_paranoid, "
			 "root or CAP_PERFMON needed)", strerror(errno));
		SKIP_TEST(perf_reads_our_file, why);
		return;
	}
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0)
		TEST_FAIL("PERF_EVENT_IOC_ID: %s", strerror(errno));
	/* A second event with another sample_type (no CPU, no CALLCHAIN, as
	 * a collector's extra events may differ): PERF_SAMPLE_IDENTIFIER in
	 * both is what lets perf tell their records apart.  Only the first
	 * event tracks mmap/comm/task, as perf record does. */
	attr2 = attr;
	attr2.config = PERF_COUNT_SW_TASK_CLOCK;
	attr2.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			    PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	attr2.mmap = attr2.mmap2 = attr2.comm = attr2.task = attr2.build_id = 0;
	fd2 = (int)syscall(SYS_perf_event_open, &attr2, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd2 < 0 || ioctl(fd2, PERF_EVENT_IOC_ID, &id2) != 0)
		TEST_FAIL("task-clock event: %s", strerror(errno));
	meta = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (meta == MAP_FAILED) {
		TEST_FAIL("mmap ring: %s", strerror(errno));
		goto out;
	}

	snprintf(path, sizeof(path), "%s/perf.data", tmpdir);
	EXPECT_EQ_INT(0, pd_create(path, &w));
	if (!w)
		goto out;
	/* One ring for both events: their records interleave in time. */
	if (fd2 >= 0 && ioctl(fd2, PERF_EVENT_IOC_SET_OUTPUT, fd) != 0)
		TEST_FAIL("PERF_EVENT_IOC_SET_OUTPUT: %s", strerror(errno));
	sid.sample_type = attr.sample_type;
	sid.id = id;
	/* Synthesized first, as perf record does: they describe the past. */
	EXPECT_EQ_INT(0, synth_kernel_mmap(&sid, NULL, pd_emit, w));
	EXPECT_EQ_INT(0, synth_process(getpid(), &sid, pd_emit, w));

	EXPECT_EQ_INT(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	if (fd2 >= 0)
		EXPECT_EQ_INT(0, ioctl(fd2, PERF_EVENT_IOC_ENABLE, 0));
	perfdata_test_spin(300);
	perfdata_test_kernel_work(100);
	EXPECT_EQ_INT(0, ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
	if (fd2 >= 0)
		EXPECT_EQ_INT(0, ioctl(fd2, PERF_EVENT_IOC_DISABLE, 0));
	EXPECT_EQ_INT(0, drain_ring(meta, w, &n_samples, &n_lost));
	EXPECT_EQ_INT(0, pd_write_finished_round(w));
	printf("# %d samples, %d lost records, %" PRIu64 " bytes of data\n", n_samples, n_lost,
	       pd_data_size(w));
	EXPECT_TRUE(n_samples > 200);

	EXPECT_EQ_INT(0, pd_add_event(w, &attr, "cpu-clock", &id, 1));
	EXPECT_EQ_INT(0, pd_add_event(w, &attr2, "task-clock", &id2, 1));
	fill_features(&f, &store);
	EXPECT_EQ_INT(0, pd_finish(w, &f));
	w = NULL;
	check_with_perf(path, &f);
	if (tr_test_failed_now)
		printf("# file kept: %s\n", path);

out:
	if (w)
		pd_abort(w);
	features_store_free(&store);
	if (meta != MAP_FAILED)
		munmap(meta, map_len);
	if (fd2 >= 0)
		close(fd2);
	close(fd);
	tr_test_count++;
	if (tr_test_failed_now)
		tr_test_failures++;
	printf("%s %d - perf_reads_our_file\n", tr_test_failed_now ? "not ok" : "ok",
	       tr_test_count);
	fflush(stdout);
}

/* Drops perf's "'trace' not valid for software events. Ignoring." lines
 * from `err` (in place): -F without an event type prints them for every
 * type, whatever the file, perf record's own included. */
static char *strip_field_notes(char *err)
{
	char *in = err, *out = err;

	while (*in) {
		char *e = strchr(in, '\n');
		size_t len = e ? (size_t)(e - in) + 1 : strlen(in);

		if (!(in[0] == '\'' && strstr(in, "' not valid for ") &&
		      strstr(in, " events. Ignoring.") &&
		      (size_t)(strstr(in, " events. Ignoring.") - in) < len)) {
			memmove(out, in, len);
			out += len;
		}
		in += len;
	}
	*out = '\0';
	return err;
}

/* A tracepoint event's samples (PERF_SAMPLE_RAW) with the tracing data
 * feature: perf script must decode the payload with the format files. */
static void perf_tracepoint_roundtrip(void)
{
	static const char *const sys[] = { "sched" };
	static const char *const name[] = { "sched_switch" };
	struct perf_event_attr attr;
	struct perf_event_mmap_page *meta = MAP_FAILED;
	struct pd_features f;
	struct pd_writer *w = NULL;
	size_t map_len = (size_t)(RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
	char path[128], args[256], idpath[256], why[256], *idtxt, *out = NULL, *err = NULL;
	char *blob = NULL;
	size_t blob_len = 0;
	int fd = -1, i, n_samples = 0, n_lost = 0, rc;
	uint64_t id = 0;
	const char *root = tracefs_root();

	tr_test_failed_now = 0;
	if (!have_perf()) {
		SKIP_TEST(perf_decodes_tracepoints, "no working perf binary in PATH");
		return;
	}
	if (!root) {
		SKIP_TEST(perf_decodes_tracepoints, "no tracefs mounted");
		return;
	}
	snprintf(idpath, sizeof(idpath), "%s/events/sched/sched_switch/id", root);
	idtxt = read_file(idpath);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = idtxt ? strtoull(idtxt, NULL, 10) : 0;
	free(idtxt);
	if (!attr.config) {
		SKIP_TEST(perf_decodes_tracepoints, "cannot read the sched_switch id");
		return;
	}
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW;
	attr.sample_id_all = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.comm = 1;
	attr.task = 1;
	attr.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		snprintf(why, sizeof(why), "perf_event_open(sched:sched_switch): %s",
			 strerror(errno));
		SKIP_TEST(perf_decodes_tracepoints, why);
		return;
	}
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0)
		TEST_FAIL("PERF_EVENT_IOC_ID: %s", strerror(errno));
	meta = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (meta == MAP_FAILED) {
		TEST_FAIL("mmap ring: %s", strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/tp.data", tmpdir);
	EXPECT_EQ_INT(0, pd_create(path, &w));
	if (!w)
		goto out;
	EXPECT_EQ_INT(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	for (i = 0; i < 20; i++)
		usleep(1000);
	EXPECT_EQ_INT(0, ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
	EXPECT_EQ_INT(0, drain_ring(meta, w, &n_samples, &n_lost));
	EXPECT_EQ_INT(0, pd_write_finished_round(w));
	printf("# %d sched_switch samples, %d lost records\n", n_samples, n_lost);
	EXPECT_TRUE(n_samples >= 10);
	EXPECT_EQ_INT(0, pd_add_event(w, &attr, "sched:sched_switch", &id, 1));
	EXPECT_EQ_INT(0, td_build(sys, name, 1, &blob, &blob_len));
	memset(&f, 0, sizeof(f));
	f.version = "tracerig test_perfdata";
	f.tracing_data = blob;
	f.tracing_data_len = blob_len;
	EXPECT_EQ_INT(0, pd_finish(w, &f));
	w = NULL;
	free(blob);

	snprintf(args, sizeof(args), "script -i '%s' -F event,trace", path);
	rc = run_perf(args, &out, &err);
	EXPECT_EQ_INT(0, rc);
	EXPECT_CONTAINS("sched:sched_switch", out);
	EXPECT_CONTAINS("prev_comm=", out);
	EXPECT_CONTAINS("next_comm=", out);
	EXPECT_CONTAINS("prev_comm=test_perfdata", out);
	expect_quiet("perf script -F event,trace", err);
	if (err && *strip_field_notes(err)) {
		TEST_FAIL("perf script wrote to stderr");
		diag("perf script stderr", err, 20);
	}
	diag("perf script -F event,trace (first lines)", out, tr_test_failed_now ? 15 : 4);
	free(out);
	free(err);
	if (tr_test_failed_now)
		printf("# file kept: %s\n", path);

out:
	if (w)
		pd_abort(w);
	if (meta != MAP_FAILED)
		munmap(meta, map_len);
	close(fd);
	tr_test_count++;
	if (tr_test_failed_now)
		tr_test_failures++;
	printf("%s %d - perf_decodes_tracepoints\n", tr_test_failed_now ? "not ok" : "ok",
	       tr_test_count);
	fflush(stdout);
}

/* Lines of `out` that contain `needle`. */
static int count_lines(const char *out, const char *needle)
{
	int n = 0;

	for (const char *p = out; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* A file whose writer dies (pd_abort, or nothing at all after a kill):
 * with the events and the tracing data given before the first record,
 * perf reads it after every sync, with exactly the samples synced so far,
 * tracepoint payloads decoded, and without a complaint. */
static void perf_unfinished_roundtrip(void)
{
	static const char *const sys[] = { "sched" };
	static const char *const name[] = { "sched_switch" };
	struct perf_event_attr attr;
	struct perf_event_mmap_page *meta = MAP_FAILED;
	struct pd_writer *w = NULL;
	size_t map_len = (size_t)(RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
	char path[128], args[256], idpath[256], *idtxt, *blob = NULL;
	size_t blob_len = 0;
	int fd = -1, n_samples = 0, n_lost = 0;
	uint64_t id = 0;
	const char *root = tracefs_root();

	tr_test_failed_now = 0;
	if (!have_perf() || !root) {
		SKIP_TEST(perf_reads_an_unfinished_file, "no perf binary or no tracefs");
		return;
	}
	snprintf(idpath, sizeof(idpath), "%s/events/sched/sched_switch/id", root);
	idtxt = read_file(idpath);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = idtxt ? strtoull(idtxt, NULL, 10) : 0;
	free(idtxt);
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW;
	attr.sample_id_all = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.comm = 1;
	attr.task = 1;
	attr.disabled = 1;
	fd = attr.config ? (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
					PERF_FLAG_FD_CLOEXEC) : -1;
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
		SKIP_TEST(perf_reads_an_unfinished_file, "cannot open sched:sched_switch");
		if (fd >= 0)
			close(fd);
		return;
	}
	meta = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (meta == MAP_FAILED) {
		TEST_FAIL("mmap ring: %s", strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/unfinished.data", tmpdir);
	snprintf(args, sizeof(args), "script -i '%s' -F event,trace", path);
	EXPECT_EQ_INT(0, pd_create(path, &w));
	if (!w)
		goto out;
	EXPECT_EQ_INT(0, pd_add_event(w, &attr, "sched:sched_switch", &id, 1));
	EXPECT_EQ_INT(0, td_build(sys, name, 1, &blob, &blob_len));
	EXPECT_EQ_INT(0, pd_set_tracing_data(w, blob, blob_len));
	free(blob);
	/* Three rounds, perf reading the file after each as it is on disk;
	 * the last is followed by records never synced, then the writer dies. */
	for (int round = 0; round < 3; round++) {
		char *out = NULL, *err = NULL;
		int n;

		EXPECT_EQ_INT(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
		for (int i = 0; i < 10; i++)
			usleep(1000);
		EXPECT_EQ_INT(0, ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
		EXPECT_EQ_INT(0, drain_ring(meta, w, &n_samples, &n_lost));
		EXPECT_EQ_INT(0, pd_write_finished_round(w));
		EXPECT_EQ_INT(0, run_perf(args, &out, &err));
		n = count_lines(out, "sched:sched_switch: prev_comm=");
		if (n != n_samples)
			TEST_FAIL("round %d: perf script printed %d of the %d samples synced", round,
				  n, n_samples);
		expect_quiet("perf script of an unfinished file", err);
		if (err && *strip_field_notes(err)) {
			TEST_FAIL("round %d: perf script wrote to stderr", round);
			diag("perf script stderr", err, 10);
		}
		free(out);
		free(err);
	}
	printf("# %d sched_switch samples in 3 rounds, %d lost records\n", n_samples, n_lost);
	EXPECT_TRUE(n_samples >= 3);
	if (tr_test_failed_now)
		printf("# file kept: %s\n", path);

out:
	if (w)
		pd_abort(w);
	if (meta != MAP_FAILED)
		munmap(meta, map_len);
	close(fd);
	tr_test_count++;
	if (tr_test_failed_now)
		tr_test_failures++;
	printf("%s %d - perf_reads_an_unfinished_file\n", tr_test_failed_now ? "not ok" : "ok",
	       tr_test_count);
	fflush(stdout);
}

/* ---- the file's layout does not move */

/* A perf.data from fixed input, every feature set: events described before
 * the data (events_first) or after it, their clock (use_clockid), the
 * tracing data while collecting (td_early, with events_first) or among the
 * final features. */
static int write_fixed(const char *path, int events_first, int use_clockid, int td_early)
{
	static const char blob[] = "\027\010\104tracing0.5 fake blob";
	static const char *const argv[] = { "tracerig", "-c", "x.ini", NULL };
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(a), .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000, .sample_id_all = 1, .use_clockid = use_clockid,
		.clockid = CLOCK_MONOTONIC,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME,
	};
	struct perf_event_attr b = a;
	static const uint64_t ids[] = { 11, 12, 13 }, ids2[] = { 21 };
	struct pd_build_id bids[2] = {
		{ .pid = -1, .filename = "[kernel.kallsyms]", .size = 20,
		  .id = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 } },
		{ .pid = 42, .size = 8, .id = { 9, 9, 9, 9, 8, 8, 8, 8 },
		  .filename = "/usr/bin/some-longer-name-than-sixty-four-characters-to-pad-over-"
			      "the-alignment" },
	};
	struct pd_features f = {
		.hostname = "host", .osrelease = "6.1.0", .arch = "x86_64",
		.version = "tracerig 0.1.0", .cpudesc = "cpu desc", .cpuid = "GenuineIntel,6,1,1",
		.nr_cpus_avail = 4, .nr_cpus_online = 2, .total_mem_kb = 123456,
		.argc = 3, .argv = argv, .clockid = CLOCK_MONOTONIC,
		.clock_ref_tod_ns = 1700000000000000000ull, .clock_ref_clk_ns = 12345,
		.build_ids = bids, .n_build_ids = 2,
	};
	unsigned char rec[40] = { 0 };
	struct perf_event_header *h = (struct perf_event_header *)rec;
	struct pd_writer *w;
	int err;

	b.config = PERF_COUNT_SW_TASK_CLOCK;
	if ((err = pd_create(path, &w)) < 0)
		return err;
	if (events_first &&
	    ((err = pd_add_event(w, &a, "cpu-clock", ids, 3)) < 0 ||
	     (err = pd_add_event(w, &b, "task-clock", ids2, 1)) < 0 ||
	     (td_early && (err = pd_set_tracing_data(w, blob, sizeof(blob))) < 0)))
		goto fail;
	h->type = PERF_RECORD_SAMPLE;
	h->size = sizeof(rec);
	for (int i = 0; i < 100; i++) {
		rec[8] = (unsigned char)i;
		if ((err = pd_write(w, rec, sizeof(rec))) < 0 ||
		    (i % 10 == 0 && (err = pd_write_finished_round(w)) < 0))
			goto fail;
	}
	if (!events_first &&
	    ((err = pd_add_event(w, &a, "cpu-clock", ids, 3)) < 0 ||
	     (err = pd_add_event(w, &b, "task-clock", ids2, 1)) < 0))
		goto fail;
	if (!td_early) {
		f.tracing_data = blob;
		f.tracing_data_len = sizeof(blob);
	}
	return pd_finish(w, &f);
fail:
	pd_abort(w);
	return err;
}

static int read_whole(const char *path, unsigned char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = tr_read_at_most(fd, 0, 1 << 20, buf, len);
	close(fd);
	return ret;
}

/* tests/perf_events/golden/ holds what the writer wrote from the same input
 * before its feature sections came from one table: the refactoring, and
 * any later one, must leave every byte where perf found it. */
DEF_TEST(files_from_fixed_input_are_byte_identical_to_the_golden_ones)
{
	static const struct { const char *name; int events_first, use_clockid, td_early; } v[] = {
		{ "features-000.data", 0, 0, 0 },
		{ "features-101.data", 1, 0, 1 },
		{ "features-110.data", 1, 1, 0 },
	};
	struct timespec res;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char path[128], golden[512];
		unsigned char *want = NULL, *got = NULL;
		size_t want_len = 0, got_len = 0;

		/* HEADER_CLOCKID holds the clock's resolution: the golden file's is 1 ns. */
		if (v[i].use_clockid && (clock_getres(CLOCK_MONOTONIC, &res) != 0 ||
					 res.tv_sec || res.tv_nsec != 1)) {
			printf("# %s not compared: CLOCK_MONOTONIC's resolution is not 1 ns here\n",
			       v[i].name);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", tmpdir, v[i].name);
		snprintf(golden, sizeof(golden), "%s/tests/perf_events/golden/%s", TR_ABS_SRCDIR,
			 v[i].name);
		EXPECT_EQ_INT(0, write_fixed(path, v[i].events_first, v[i].use_clockid,
					     v[i].td_early));
		EXPECT_EQ_INT(0, read_whole(golden, &want, &want_len));
		EXPECT_EQ_INT(0, read_whole(path, &got, &got_len));
		EXPECT_EQ_INT(want_len, got_len);
		if (want && got && want_len == got_len && memcmp(want, got, want_len) != 0) {
			size_t at = 0;

			while (want[at] == got[at])
				at++;
			TEST_FAIL("%s differs from the golden file first at byte %zu", v[i].name, at);
		}
		free(want);
		free(got);
	}
}

int main(int argc, char **argv)
{
	char cmd[128];
	int keep;

	main_argc = argc;
	main_argv = argv;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tr-perfdata-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}

	RUN_TEST(synth_process_shapes);
	RUN_TEST(synth_kernel_mmap_shape);
	RUN_TEST(synth_process_gone_is_esrch);
	RUN_TEST(synth_all_processes_covers_init_and_self);
	RUN_TEST(pd_write_rejects_partial_records);
	RUN_TEST(files_from_fixed_input_are_byte_identical_to_the_golden_ones);
	RUN_TEST(td_build_blob);
	perf_roundtrip();
	perf_tracepoint_roundtrip();
	perf_unfinished_roundtrip();

	/* TR_KEEP_TMP=1 keeps perf.data for a look with perf by hand. */
	keep = tr_test_failures != 0 || getenv("TR_KEEP_TMP");
	if (keep)
		printf("# files kept in %s\n", tmpdir);
	if (!keep) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	TEST_MAIN_END();
}
