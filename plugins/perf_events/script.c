/* perf.data -> perf script text and folded stacks.
 *
 * The text has the shape of `perf script -F comm,pid,tid,cpu,time,period,
 * event,ip,sym,dso,trace` (what perfcollect runs and TraceEvent parses):
 *
 *   comm  pid/tid  [cpu] sec.usec:  period event: [tracepoint payload]
 *   \t    address symbol (object)
 *   ...
 *   (blank line)
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "comms.h"
#include "lib/sanitize.h"
#include "perffile.h"
#include "script.h"

#define FOLD_LINE_MAX (64 * 1024)

struct id_map {
	uint64_t id;
	size_t ev;
};

struct conv {
	const struct pc_opened *ev;
	size_t n_ev;
	struct id_map *ids;
	size_t n_ids;
	struct comms *comms;
	unsigned trailer_time_from_end; /* bytes from a record's end to its time */
	struct tep_handle *tep;
	struct trace_seq seq;
	char *line;
	size_t line_len;
	FILE *txt;
	struct fold *folded;
	struct symcache *syms;
	struct sc_stats *st;
};

/* ---- ids and comms ---- */

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct id_map *)a)->id, y = ((const struct id_map *)b)->id;

	return (x > y) - (x < y);
}

static int build_ids(struct conv *cv)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < cv->n_ev; i++)
		n += cv->ev[i].n_ids;
	cv->ids = calloc(n ? n : 1, sizeof(*cv->ids));
	if (!cv->ids)
		return -ENOMEM;
	for (size_t i = 0; i < cv->n_ev; i++)
		for (size_t j = 0; j < cv->ev[i].n_ids; j++)
			cv->ids[k++] = (struct id_map){ cv->ev[i].ids[j], i };
	qsort(cv->ids, k, sizeof(*cv->ids), cmp_id);
	cv->n_ids = k;
	return 0;
}

static const struct pc_opened *event_of(const struct conv *cv, uint64_t id)
{
	struct id_map key = { id, 0 }, *m;

	m = bsearch(&key, cv->ids, cv->n_ids, sizeof(*cv->ids), cmp_id);
	return m ? &cv->ev[m->ev] : NULL;
}

static const char *comm_of(struct conv *cv, pid_t tid, uint64_t time, char *buf, size_t len)
{
	const char *name = comms_at(cv->comms, tid, time);

	if (name)
		return name;
	if (tid == 0)
		return "swapper";
	snprintf(buf, len, ":%d", (int)tid);
	return buf;
}

/* ---- text output ----
 * perf.data.txt is the bulk of the flush: lines are formatted by hand
 * rather than by fprintf, which parses its format for every frame. */

static void put_str(FILE *out, const char *s)
{
	fputs_unlocked(s, out);
}

/* Unsigned decimal, right-aligned in `width` (left-aligned when left). */
static void put_dec(FILE *out, unsigned long long v, int width, int left, char pad)
{
	char buf[24];
	int n = 0;

	do {
		buf[sizeof(buf) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (!left)
		for (int i = n; i < width; i++)
			fputc_unlocked(pad, out);
	fwrite_unlocked(buf + sizeof(buf) - n, 1, (size_t)n, out);
	if (left)
		for (int i = n; i < width; i++)
			fputc_unlocked(' ', out);
}

static void put_int(FILE *out, int v, int width, int left)
{
	if (v < 0) {
		fputc_unlocked('-', out);
		put_dec(out, (unsigned long long)-(long long)v, width - 1, left, ' ');
	} else {
		put_dec(out, (unsigned long long)v, width, left, ' ');
	}
}

/* "%16llx" */
static void put_hex16(FILE *out, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char buf[16];
	int n = 0;

	do {
		buf[sizeof(buf) - 1 - n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	for (int i = n; i < 16; i++)
		fputc_unlocked(' ', out);
	fwrite_unlocked(buf + sizeof(buf) - n, 1, (size_t)n, out);
}

/* ---- tracepoint payloads, formatted by libtraceevent ---- */

static int setup_tep(struct conv *cv, char *why, size_t why_len)
{
	for (size_t i = 0; i < cv->n_ev; i++) {
		char *fmt = NULL;
		size_t len = 0;
		int ret;

		if (cv->ev[i].spec.kind != EV_TRACEPOINT)
			continue;
		if (!cv->tep) {
			cv->tep = tep_alloc();
			if (!cv->tep)
				return -ENOMEM;
			tep_set_long_size(cv->tep, (int)sizeof(long));
			tep_set_page_size(cv->tep, (int)sysconf(_SC_PAGESIZE));
		}
		ret = ev_tracepoint_format(&cv->ev[i].spec, &fmt, &len);
		if (ret < 0) {
			snprintf(why, why_len, "cannot read the format of %s: %s",
				 cv->ev[i].spec.name, strerror(-ret));
			return ret;
		}
		if (tep_parse_event(cv->tep, fmt, len, cv->ev[i].spec.sys) != 0) {
			/* Printed raw rather than not at all. */
			snprintf(why, why_len, "libtraceevent cannot parse the format of %s",
				 cv->ev[i].spec.name);
		}
		free(fmt);
	}
	return 0;
}

static void print_payload(struct conv *cv, const void *raw, uint32_t size, uint64_t time, int cpu)
{
	struct tep_record rec;

	if (!cv->tep || !raw)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.ts = time;
	rec.cpu = cpu;
	rec.size = (int)size;
	rec.data = (void *)raw;
	trace_seq_reset(&cv->seq);
	if (!tep_find_event_by_record(cv->tep, &rec))
		return;
	tep_print_event(cv->tep, &cv->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&cv->seq);
	tr_sanitize_fputs(cv->seq.buffer, cv->txt); /* strings the traced program wrote */
}

/* ---- folded lines ---- */

static int fold_append(struct conv *cv, size_t *pos, const char *s, const char *suffix)
{
	size_t need = strlen(s) + strlen(suffix) + 1;

	if (*pos + need + 1 >= FOLD_LINE_MAX)
		return -ENOSPC;
	if (*pos)
		cv->line[(*pos)++] = ';';
	/* Names come from the traced program: no ';' may split a frame, no
	 * newline start a line (the rule keeps the length). */
	*pos += tr_sanitize_name(cv->line + *pos, strlen(s) + 1, s);
	for (; *suffix; suffix++)
		cv->line[(*pos)++] = *suffix;
	return 0;
}

static const char *frame_name(const struct tracerig_symbol *sym, uint64_t addr, char *buf,
			      size_t len)
{
	const char *base;

	if (sym->name)
		return sym->name;
	if (sym->dso && strcmp(sym->dso, "[unknown]") != 0) {
		base = strrchr(sym->dso, '/');
		snprintf(buf, len, "[%s]", base ? base + 1 : sym->dso);
		return buf;
	}
	/* As perf: an address in no known object is "[unknown]", one frame
	 * for all of them, not a new bar per address. */
	(void)addr;
	snprintf(buf, len, "[unknown]");
	return buf;
}


/* ---- samples ---- */

struct frame {
	uint64_t addr;
	int kernel;
	const struct tracerig_symbol *sym;
};

static int in_no_object(const struct frame *f)
{
	return !f->sym->name && (!f->sym->dso || strcmp(f->sym->dso, "[unknown]") == 0);
}

static void convert_sample(struct conv *cv, const struct perf_event_header *h,
			   struct frame *frames, size_t max_frames)
{
	const uint64_t *p = (const uint64_t *)(h + 1), *end = (const uint64_t *)((const char *)h + h->size);
	const struct pc_opened *ev;
	uint64_t st, ip, time = 0, period = 1, nr = 0;
	const uint64_t *chain = NULL;
	const void *raw = NULL;
	uint32_t raw_size = 0;
	pid_t pid, tid;
	int cpu = 0, kernel_ctx;
	size_t n = 0, pos = 0;
	char cbuf[32], nbuf[64];
	const char *comm;

	if (p >= end)
		return;
	ev = event_of(cv, *p++);
	if (!ev)
		return;
	st = ev->attr.sample_type;
	ip = *p++;
	pid = (pid_t)((const uint32_t *)p)[0];
	tid = (pid_t)((const uint32_t *)p)[1];
	p++;
	if (st & PERF_SAMPLE_TIME)
		time = *p++;
	if (st & PERF_SAMPLE_CPU)
		cpu = (int)((const uint32_t *)p++)[0];
	if (st & PERF_SAMPLE_PERIOD)
		period = *p++;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (p >= end)
			return;
		nr = *p++;
		if (nr > (uint64_t)(end - p))
			return;
		chain = p;
		p += nr;
	}
	if (st & PERF_SAMPLE_RAW) {
		if ((const char *)p + 4 > (const char *)end)
			return;
		raw_size = *(const uint32_t *)p;
		raw = (const char *)p + 4;
		if ((const char *)raw + raw_size > (const char *)end)
			raw = NULL;
	}

	/* Context markers say whose frames follow; they are not frames. */
	kernel_ctx = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	if (chain) {
		for (uint64_t i = 0; i < nr && n < max_frames; i++) {
			if (chain[i] >= PERF_CONTEXT_MAX) {
				kernel_ctx = chain[i] == PERF_CONTEXT_KERNEL;
				continue;
			}
			frames[n++] = (struct frame){ chain[i], kernel_ctx, NULL };
		}
	} else {
		frames[n++] = (struct frame){ ip, kernel_ctx, NULL };
	}

	cv->st->samples++;
	comm = comm_of(cv, tid, time, cbuf, sizeof(cbuf));
	if (cv->txt) {
		/* "%s %5d/%-5d [%03d] %5llu.%06llu: %10llu %s: " */
		tr_sanitize_fputs(comm, cv->txt);
		fputc_unlocked(' ', cv->txt);
		put_int(cv->txt, (int)pid, 5, 0);
		fputc_unlocked('/', cv->txt);
		put_int(cv->txt, (int)tid, 5, 1);
		put_str(cv->txt, " [");
		put_dec(cv->txt, (unsigned)cpu, 3, 0, '0');
		put_str(cv->txt, "] ");
		put_dec(cv->txt, time / 1000000000ull, 5, 0, ' ');
		fputc_unlocked('.', cv->txt);
		put_dec(cv->txt, time % 1000000000ull / 1000ull, 6, 0, '0');
		put_str(cv->txt, ": ");
		put_dec(cv->txt, period, 10, 0, ' ');
		fputc_unlocked(' ', cv->txt);
		put_str(cv->txt, ev->spec.name);
		put_str(cv->txt, ": ");
		if (raw)
			print_payload(cv, raw, raw_size, time, cpu);
		fputc_unlocked('\n', cv->txt);
	}
	if (cv->folded && ev == &cv->ev[0]) {
		const char *pcomm = comm_of(cv, pid, time, cbuf, sizeof(cbuf));

		snprintf(nbuf, sizeof(nbuf), "%s-%d", pcomm, (int)pid);
		if (fold_append(cv, &pos, nbuf, "") < 0)
			pos = 0;
	}
	for (size_t i = 0; i < n; i++) {
		const struct tracerig_symbol *sym =
			symcache_lookup(cv->syms, pid, frames[i].addr, frames[i].kernel);

		frames[i].sym = sym; /* for the folded line below */
		cv->st->frames++;
		if (cv->txt) {
			fputc_unlocked('\t', cv->txt);
			put_hex16(cv->txt, frames[i].addr);
			fputc_unlocked(' ', cv->txt);
			/* Names and paths are the traced program's: one with a
			 * newline would add frame lines of its choosing. */
			tr_sanitize_fputs(sym->name ? sym->name : "[unknown]", cv->txt);
			put_str(cv->txt, " (");
			tr_sanitize_fputs(sym->dso, cv->txt);
			put_str(cv->txt, ")\n");
		}
	}
	if (cv->txt)
		fputc_unlocked('\n', cv->txt);
	if (!pos)
		return;
	/* Folded lines go outermost first: user frames, then kernel ones.  A
	 * run of frames in no known object is what a frame-pointer walk
	 * through code without frame pointers reads off the stack (clone3
	 * followed by 115 of them): one [unknown] stands for the run, so the
	 * flame graph keeps its height; perf.data.txt keeps every frame. */
	for (size_t i = n; i-- > 0;) {
		if (i + 1 < n && in_no_object(&frames[i]) && in_no_object(&frames[i + 1]) &&
		    frames[i].kernel == frames[i + 1].kernel) {
			cv->st->frames_folded_away++;
			continue;
		}
		if (fold_append(cv, &pos, frame_name(frames[i].sym, frames[i].addr, nbuf, sizeof(nbuf)),
				frames[i].kernel ? "_[k]" : "") < 0)
			break;
	}
	(void)fold_add(cv->folded, cv->line, pos, 1);
}

/* Non-sample records carry the sample_id trailer of the tracking event:
 * its time is that many bytes before the record's end. */
static unsigned time_from_end(uint64_t sample_type)
{
	unsigned off = 8;

	if (sample_type & PERF_SAMPLE_ID)
		off += 8;
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		off += 8;
	if (sample_type & PERF_SAMPLE_CPU)
		off += 8;
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		off += 8;
	return off;
}

static int note_comm(struct conv *cv, const struct perf_event_header *h)
{
	/* struct { header; u32 pid, tid; char comm[]; sample_id } */
	const uint32_t *u = (const uint32_t *)(h + 1);
	const char *name = (const char *)(u + 2);
	uint64_t time = 0;
	size_t max;

	/* The name ends where the trailer begins: pid/tid, then the time. */
	if (h->size < sizeof(*h) + 8 + 8 + cv->trailer_time_from_end)
		return 0;
	max = h->size - sizeof(*h) - 8 - 8 - cv->trailer_time_from_end;
	memcpy(&time, (const char *)h + h->size - cv->trailer_time_from_end, sizeof(time));
	return comms_add_comm(cv->comms, (pid_t)u[1], time, name, strnlen(name, max));
}

static int note_fork(struct conv *cv, const struct perf_event_header *h)
{
	/* struct { header; u32 pid, ppid, tid, ptid; u64 time; } */
	const uint32_t *u = (const uint32_t *)(h + 1);
	uint64_t time;

	if (h->size < sizeof(*h) + 24)
		return 0;
	memcpy(&time, u + 4, sizeof(time));
	return comms_add_fork(cv->comms, (pid_t)u[2], (pid_t)u[3], time);
}

/* A sample's place in time order. */
struct sample_ref {
	uint64_t time;
	uint64_t off;
};

static int cmp_sample_ref(const void *a, const void *b)
{
	const struct sample_ref *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* Equal times keep file order, as perf's ordered events do. */
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The records the replay needs, in the order they happened, across CPUs:
 * the per-CPU rings are drained in turn, so file order jumps back in time
 * at every switch from one CPU's batch to the next (speedscope refuses such
 * text, and perf script sorts too).  Samples interleave with the side-band
 * records that change an address space (MMAP2, COMM of an exec, FORK), so
 * each sample is named against the mappings live when it was taken.
 * Records without a time (the synthesized ones) come first. */
static int record_time(const struct conv *cv, const struct perf_event_header *h, uint64_t *time)
{
	const uint64_t *p = (const uint64_t *)(h + 1);
	const struct pc_opened *ev;

	*time = 0;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		/* IDENTIFIER, IP, TID, then TIME when the event has it. */
		if (h->size >= sizeof(*h) + 4 * sizeof(uint64_t) && (ev = event_of(cv, p[0])) &&
		    (ev->attr.sample_type & PERF_SAMPLE_TIME))
			*time = p[3];
		return 1;
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_FORK:
		break;
	case PERF_RECORD_COMM:
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC))
			return 0;
		break;
	default:
		return 0;
	}
	if (h->size >= sizeof(*h) + cv->trailer_time_from_end)
		memcpy(time, (const char *)h + h->size - cv->trailer_time_from_end, sizeof(*time));
	return 1;
}

static int order_records(struct conv *cv, const void *map, uint64_t start, uint64_t end,
			 struct sample_ref **out, size_t *n_out)
{
	struct sample_ref *refs = NULL;
	size_t n = 0, cap = 0;

	for (uint64_t off = start; off + sizeof(struct perf_event_header) <= end;) {
		const struct perf_event_header *h = (const void *)((const char *)map + off);
		uint64_t time;

		if (h->size < sizeof(*h) || off + h->size > end)
			break;
		if (record_time(cv, h, &time)) {
			if (n == cap) {
				size_t grown_cap = cap ? cap * 2 : 4096;
				struct sample_ref *grown = realloc(refs, grown_cap * sizeof(*grown));

				if (!grown) {
					free(refs);
					return -ENOMEM;
				}
				refs = grown;
				cap = grown_cap;
			}
			refs[n].time = time;
			refs[n].off = off;
			n++;
		}
		off += h->size;
	}
	if (n)
		qsort(refs, n, sizeof(*refs), cmp_sample_ref);
	*out = refs;
	*n_out = n;
	return 0;
}

/* MMAP2: header; u32 pid, tid; u64 addr, len, pgoff; then either u32 maj,
 * min; u64 ino, ino_generation, or (PERF_RECORD_MISC_MMAP_BUILD_ID) u8
 * build_id_size, 3 bytes reserved, u8 build_id[20]; u32 prot, flags; char
 * filename[]; the sample_id trailer. */
static void replay_mmap(struct conv *cv, const struct perf_event_header *h)
{
	const size_t name_off = sizeof(*h) + 8 + 24 + 24 + 8;
	const unsigned char *b = (const unsigned char *)h;
	struct tracerig_mapping m = { 0 };
	uint32_t u32[2], prot;
	size_t name_max;

	if (h->size < name_off + cv->trailer_time_from_end + 8)
		return;
	name_max = h->size - name_off - cv->trailer_time_from_end;
	if (strnlen((const char *)b + name_off, name_max) == name_max)
		return;
	memcpy(&prot, b + sizeof(*h) + 8 + 24 + 24, sizeof(prot));
	if (!(prot & PROT_EXEC))
		return;
	memcpy(u32, b + sizeof(*h), sizeof(u32));
	m.pid = (pid_t)u32[0];
	memcpy(&m.start, b + sizeof(*h) + 8, 8);
	memcpy(&m.len, b + sizeof(*h) + 16, 8);
	memcpy(&m.pgoff, b + sizeof(*h) + 24, 8);
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		m.build_id_len = b[sizeof(*h) + 32];
		if (m.build_id_len > 20)
			m.build_id_len = 20;
		m.build_id = b + sizeof(*h) + 36;
	} else {
		memcpy(u32, b + sizeof(*h) + 32, sizeof(u32));
		m.dev = makedev(u32[0], u32[1]);
		memcpy(&m.ino, b + sizeof(*h) + 40, 8);
	}
	m.path = (const char *)b + name_off;
	if (m.pid > 0 && symcache_mmap(cv->syms, &m) == 0)
		cv->st->mappings++;
}

static void replay(struct conv *cv, const struct perf_event_header *h, struct frame *frames)
{
	const uint32_t *u = (const uint32_t *)(h + 1);

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		convert_sample(cv, h, frames, PERF_MAX_STACK_DEPTH * 2);
		break;
	case PERF_RECORD_MMAP2:
		replay_mmap(cv, h);
		break;
	case PERF_RECORD_COMM:
		/* struct { header; u32 pid, tid; ... }: an exec replaces the image. */
		if (h->size >= sizeof(*h) + 8 && u[0] == u[1])
			symcache_exec(cv->syms, (pid_t)u[0]);
		break;
	case PERF_RECORD_FORK:
		/* struct { header; u32 pid, ppid, tid, ptid; ... }: a new process,
		 * not a new thread of one. */
		if (h->size >= sizeof(*h) + 16 && u[0] != u[1] && u[0] == u[2])
			symcache_fork(cv->syms, (pid_t)u[1], (pid_t)u[0]);
		break;
	default:
		break;
	}
}

int sc_convert(const char *perf_data, const struct pc_opened *ev, size_t n_ev, FILE *txt,
	       struct fold *folded, struct symcache *syms, struct sc_stats *st, char *why,
	       size_t why_len)
{
	struct conv cv = { .ev = ev, .n_ev = n_ev, .txt = txt, .folded = folded, .syms = syms,
			   .st = st };
	const struct pd_file_header *fh;
	struct frame *frames = NULL;
	struct sample_ref *order = NULL;
	size_t n_order = 0;
	struct stat sb;
	void *map = MAP_FAILED;
	uint64_t off, end;
	int fd, ret;

	memset(st, 0, sizeof(*st));
	trace_seq_init(&cv.seq);
	fd = open(perf_data, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, why_len, "cannot open %s: %s", perf_data, strerror(-ret));
		goto out;
	}
	if (fstat(fd, &sb) < 0 || (size_t)sb.st_size < sizeof(*fh)) {
		ret = -EINVAL;
		snprintf(why, why_len, "%s is too short to be perf.data", perf_data);
		goto out;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		snprintf(why, why_len, "cannot map %s: %s", perf_data, strerror(-ret));
		goto out;
	}
	(void)madvise(map, (size_t)sb.st_size, MADV_SEQUENTIAL);
	fh = map;
	if (fh->magic != PD_MAGIC || fh->data.offset + fh->data.size >
	    (uint64_t)sb.st_size) {
		ret = -EINVAL;
		snprintf(why, why_len, "%s is not a finished perf.data file", perf_data);
		goto out;
	}
	ret = build_ids(&cv);
	if (ret < 0)
		goto nomem;
	frames = malloc(PERF_MAX_STACK_DEPTH * 2 * sizeof(*frames));
	cv.line = malloc(FOLD_LINE_MAX);
	if (!frames || !cv.line) {
		ret = -ENOMEM;
		goto nomem;
	}
	ret = setup_tep(&cv, why, why_len);
	if (ret < 0)
		goto out;

	/* Names first, in time order; then the samples. */
	cv.comms = comms_new();
	if (!cv.comms) {
		ret = -ENOMEM;
		goto nomem;
	}
	cv.trailer_time_from_end = time_from_end(ev[0].attr.sample_type);
	end = fh->data.offset + fh->data.size;
	for (off = fh->data.offset; off + sizeof(struct perf_event_header) <= end;) {
		const struct perf_event_header *h = (const void *)((const char *)map + off);

		if (h->size < sizeof(*h) || off + h->size > end)
			break;
		if (h->type == PERF_RECORD_COMM)
			ret = note_comm(&cv, h);
		else if (h->type == PERF_RECORD_FORK)
			ret = note_fork(&cv, h);
		if (ret < 0)
			goto nomem;
		off += h->size;
	}
	ret = comms_finish(cv.comms);
	if (ret < 0)
		goto nomem;
	ret = order_records(&cv, map, fh->data.offset, end, &order, &n_order);
	if (ret < 0)
		goto nomem;
	(void)madvise(map, (size_t)sb.st_size, MADV_NORMAL);
	for (size_t i = 0; i < n_order; i++)
		replay(&cv, (const void *)((const char *)map + order[i].off), frames);
	ret = 0;
	if (txt && (fflush(txt) != 0 || ferror(txt))) {
		ret = -EIO;
		snprintf(why, why_len, "cannot write perf.data.txt: %s", strerror(errno));
	}
	goto out;
nomem:
	snprintf(why, why_len, "out of memory reading %s", perf_data);
out:
	trace_seq_destroy(&cv.seq);
	if (cv.tep)
		tep_free(cv.tep);
	if (map != MAP_FAILED)
		munmap(map, (size_t)sb.st_size);
	if (fd >= 0)
		close(fd);
	free(cv.line);
	free(frames);
	free(order);
	comms_free(cv.comms);
	free(cv.ids);
	return ret;
}
