/* perf.data -> perf script text, and stacks for the core's sink.
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
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "comms.h"
#include "frametexts.h"
#include "lib/sideband.h"
#include "perffile.h"
#include "sample.h"
#include "script.h"
#include "textbuf.h"
#include "timesort.h"
#include "lib/vec.h"

/* perf.data.txt goes to its FILE in blocks of this size. */
#define TEXT_BLOCK (1 << 20)

struct sc_conv {
	const struct pc_opened *ev;
	size_t n_ev;
	unsigned sysctl_max_stack; /* kernel.perf_event_max_stack, 0 if unknown */
	struct sample_ids ids;
	struct comms *comms;
	unsigned trailer_time_from_end; /* bytes from a record's end to its time */
	struct tep_handle *tep;
	struct trace_seq seq;
	struct textbuf txt;
	int with_txt;
	/* cpu.folded, cpu.svg and cpu.pb.gz: the core's stack sink (NULL:
	 * none), and room for one sample's frames as it takes them. */
	struct tracerig_stacks *sink;
	uint64_t *stack_ips;
	const char **stack_names;
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	/* Every frame's text, made once per (process, generation, address)
	 * from what the core's frame_name answered (frametexts.h). */
	struct frametexts *texts;
	struct unwinder *uw; /* NULL: no user stacks to unwind */
	struct uw_bg *bg; /* NULL: none unwound while collecting */
	const char *data; /* perf.data's data section, mapped */
	struct sc_stats *st;
	struct frame *frames; /* one sample's, innermost first */
	int txt_open;         /* txt is set up */
	/* Fed in steps (sc_feed): the records read but not replayed yet,
	 * sorted by time at each step; how far the data has been read. */
	struct time_ref *held;
	size_t n_held, cap_held;
	uint64_t scanned;
	/* The core may drop what it keeps for a process once the replay is
	 * past its end (not in flight mode: each snapshot replays a window
	 * the last one may have replayed). */
	int forget_exited;
	uint64_t processes_ended;
};

static const struct pc_opened *event_of(const struct sc_conv *cv, uint64_t id)
{
	return sample_event(&cv->ids, cv->ev, id);
}

/* ---- tracepoint payloads, formatted by libtraceevent ---- */

static int setup_tep(struct sc_conv *cv, char *why, size_t why_len)
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

static void print_payload(struct sc_conv *cv, const void *raw, uint32_t size, uint64_t time, int cpu)
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
	textbuf_put_sanitized(&cv->txt, cv->seq.buffer); /* strings the traced program wrote */
}

/* ---- frames ---- */

/* A frame's text (struct frame_text, frametexts.h): its perf.data.txt
 * line and its name in folded stacks, both from the core's frame_name,
 * which names a frame once for every output (perf.data.txt, cpu.folded,
 * offcpu.folded, the flame graphs) against the process model as this
 * replay feeds it. */
static const struct frame_text *add_text(struct sc_conv *cv, pid_t pid, uint64_t addr, int kernel,
					 uint64_t time_ns)
{
	int ret;
	const struct frame_text *t = ft_text(cv->texts, pid, addr, kernel, time_ns, &ret);

	if (t && ret < 0) /* -ENOENT, or -ENOSYS without a symbolizer: "[unknown]" */
		cv->st->unresolved++;
	return t;
}

/* ---- samples ---- */

struct frame {
	uint64_t addr;
	int kernel;
	const struct frame_text *text;
};

static const char *comm_of(struct sc_conv *cv, pid_t tid, uint64_t time, char *buf, size_t len)
{
	const char *name = comms_at(cv->comms, tid, time);

	if (name)
		return name;
	if (tid == 0)
		return "swapper";
	snprintf(buf, len, ":%d", (int)tid);
	return buf;
}

/* "comm  pid/tid  [cpu] sec.usec:  period event: payload", as
 * "%s %5d/%-5d [%03d] %5llu.%06llu: %10llu %s: " */
static void print_header(struct sc_conv *cv, const struct pc_opened *ev, const char *comm, pid_t pid,
			 pid_t tid, int cpu, uint64_t time, uint64_t period, const void *raw,
			 uint32_t raw_size)
{
	size_t comm_len = strlen(comm), name_len = strlen(ev->spec.name);
	/* Numbers take at most 20 digits and a sign each. */
	char *start = textbuf_room(&cv->txt, comm_len + name_len + 6 * 21 + 16), *p = start;

	if (!p)
		return;
	memcpy(p, comm, comm_len); /* under the rule already (comms.h) */
	p += comm_len;
	*p++ = ' ';
	p = fmt_int(p, (int)pid, 5, 0);
	*p++ = '/';
	p = fmt_int(p, (int)tid, 5, 1);
	memcpy(p, " [", 2);
	p = fmt_dec(p + 2, (unsigned)cpu, 3, 0, '0');
	memcpy(p, "] ", 2);
	p = fmt_dec(p + 2, time / 1000000000ull, 5, 0, ' ');
	*p++ = '.';
	p = fmt_dec(p, time % 1000000000ull / 1000ull, 6, 0, '0');
	memcpy(p, ": ", 2);
	p = fmt_dec(p + 2, period, 10, 0, ' ');
	*p++ = ' ';
	memcpy(p, ev->spec.name, name_len);
	p += name_len;
	memcpy(p, ": ", 2);
	cv->txt.len += (size_t)(p + 2 - start);
	if (raw)
		print_payload(cv, raw, raw_size, time, cpu);
	textbuf_putc(&cv->txt, '\n');
}

/* The user frames of a sample with user registers: those the unwinding
 * while collecting found, when they hold for the model at this point of
 * the replay, else unwound now. */
static size_t user_frames(struct sc_conv *cv, const struct perf_event_header *h,
			  const struct pc_opened *ev, const struct sample *s, const uint64_t **ips)
{
	struct uw_frames f;

	if (cv->bg && uw_bg_frames(cv->bg, (uint64_t)((const char *)h - cv->data), &f) &&
	    uw_adopt(cv->uw, s->pid, &f)) {
		*ips = f.ips;
		return f.n_ips;
	}
	return uw_sample(cv->uw, &ev->attr, s->pid, s->tid, s->regs, s->end, ips);
}

/* The sample's frames, innermost first: the kernel's callchain (user part
 * included), then the user frames unwound from the copied stack, else the
 * sampled address alone.  Returns how many. */
static size_t sample_frames(struct sc_conv *cv, const struct perf_event_header *h,
			    const struct pc_opened *ev, const struct sample *s, struct frame *frames,
			    size_t max_frames, int *cut)
{
	/* Context markers say whose frames follow; they are not frames. */
	int kernel_ctx = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	size_t n = 0, chain_frames = 0;
	unsigned limit = ev->attr.sample_max_stack ? ev->attr.sample_max_stack : cv->sysctl_max_stack;

	for (uint64_t i = 0; i < s->nr && n < max_frames; i++) {
		if (s->chain[i] >= PERF_CONTEXT_MAX) {
			kernel_ctx = s->chain[i] == PERF_CONTEXT_KERNEL;
			continue;
		}
		frames[n++] = (struct frame){ .addr = s->chain[i], .kernel = kernel_ctx };
		chain_frames++;
	}
	/* The kernel stops storing frames (markers apart) at the limit. */
	*cut = limit && chain_frames >= limit;
	if (cv->uw && (ev->attr.sample_type & PERF_SAMPLE_REGS_USER)) {
		const uint64_t *ips;
		size_t n_ips = user_frames(cv, h, ev, s, &ips);

		for (size_t i = 0; i < n_ips && n < max_frames; i++)
			frames[n++] = (struct frame){ .addr = ips[i], .kernel = 0 };
	}
	if (!n)
		frames[n++] = (struct frame){ .addr = s->ip, .kernel = kernel_ctx };
	return n;
}

/* The sample's time for the core's lookups (frame_name's time_ns): only when it
 * is on the session clock, and of this boot (not past now), else 0. */
static uint64_t lookup_time(const struct pc_opened *ev, const struct sample *s)
{
	struct timespec now;

	if (!ev->attr.use_clockid || ev->attr.clockid != CLOCK_MONOTONIC ||
	    clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return 0;
	return s->time <= (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec ? s->time
										       : 0;
}

/* Names every frame (through the cache) and writes the sample's text
 * block: the header, one line per frame, a blank line.  0 or -ENOMEM. */
static int symbolize_and_print(struct sc_conv *cv, const struct pc_opened *ev,
			       const struct sample *s, const char *comm, struct frame *frames,
			       size_t n)
{
	uint64_t time_ns = lookup_time(ev, s);

	if (cv->with_txt)
		print_header(cv, ev, comm, s->pid, s->tid, s->cpu, s->time, s->period, s->raw,
			     s->raw_size);
	ft_sample(cv->texts);
	for (size_t i = 0; i < n; i++) {
		const struct frame_text *t =
			add_text(cv, s->pid, frames[i].addr, frames[i].kernel, time_ns);

		if (!t)
			return -ENOMEM;
		frames[i].text = t;
		cv->st->frames++;
		if (cv->with_txt)
			textbuf_put(&cv->txt, t->s, t->line_len);
	}
	if (cv->with_txt)
		textbuf_putc(&cv->txt, '\n');
	return 0;
}

/* Hands the sample to the stack sink (the first event's samples only:
 * the flame graph is of one event): its kernel frames, then its user
 * frames, named as perf.data.txt names them, one sample worth its period. */
static int stack_sample(struct sc_conv *cv, const struct sample *s, const char *comm,
			const struct frame *frames, size_t n, int cut)
{
	char pbuf[32];
	const char *process = s->tid == s->pid ? comm : comm_of(cv, s->pid, s->time, pbuf,
								 sizeof(pbuf));
	size_t nk = 0;
	struct tracerig_stack st = {
		.pid = s->pid,
		.tid = s->tid,
		.comm = process,
		.tcomm = comm,
		.flags = cut ? TRACERIG_STACK_CUT : 0,
		.count = 1,
		.ns = s->period,
	};

	/* The kernel's callchain comes first, innermost first. */
	while (nk < n && frames[nk].kernel)
		nk++;
	for (size_t i = 0; i < n; i++) {
		const struct frame_text *t = frames[i].text;

		cv->stack_ips[i] = frames[i].addr;
		cv->stack_names[i] = t->s + t->line_len;
	}
	st.kernel = cv->stack_ips;
	st.kernel_names = cv->stack_names;
	st.n_kernel = nk;
	st.user = cv->stack_ips + nk;
	st.user_names = cv->stack_names + nk;
	st.n_user = n - nk;
	return tracerig_internal(cv->svc)->stacks_add(cv->sink, &st, 1);
}

/* One PERF_RECORD_SAMPLE: its frames, its text block, its stack.
 * 0, or -ENOMEM. */
static int convert_sample(struct sc_conv *cv, const struct perf_event_header *h,
			  struct frame *frames, size_t max_frames)
{
	const struct pc_opened *ev;
	struct sample s;
	size_t n;
	char cbuf[32];
	const char *comm;
	int ret, cut;

	if (h->size < sizeof(*h) + 8)
		return 0;
	ev = event_of(cv, *(const uint64_t *)(h + 1));
	if (!ev || sample_parse(h, ev->attr.sample_type, &s) < 0)
		return 0;
	n = sample_frames(cv, h, ev, &s, frames, max_frames, &cut);
	cv->st->samples++;
	cv->st->stacks_cut += cut && ev == &cv->ev[0];
	comm = comm_of(cv, s.tid, s.time, cbuf, sizeof(cbuf));
	ret = symbolize_and_print(cv, ev, &s, comm, frames, n);
	if (ret < 0)
		return ret;
	if (cv->sink && ev == &cv->ev[0])
		return stack_sample(cv, &s, comm, frames, n, cut);
	return 0;
}

static int note_comm(struct sc_conv *cv, const struct perf_event_header *h)
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

static int note_fork(struct sc_conv *cv, const struct perf_event_header *h)
{
	/* struct { header; u32 pid, ppid, tid, ptid; u64 time; } */
	const uint32_t *u = (const uint32_t *)(h + 1);
	uint64_t time;

	if (h->size < sizeof(*h) + 24)
		return 0;
	memcpy(&time, u + 4, sizeof(time));
	return comms_add_fork(cv->comms, (pid_t)u[2], (pid_t)u[3], time);
}

/* The records the replay needs, in the order they happened, across CPUs:
 * the per-CPU rings are drained in turn, so file order jumps back in time
 * at every switch from one CPU's batch to the next (speedscope refuses such
 * text, and perf script sorts too).  Samples interleave with the side-band
 * records that change an address space (MMAP2, COMM of an exec, FORK), so
 * each sample is named against the mappings live when it was taken.
 * Records without a time (the synthesized ones) come first. */
static int record_time(const struct sc_conv *cv, const struct perf_event_header *h, uint64_t *time)
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
	case PERF_RECORD_EXIT: /* what is kept for a process goes at its end */
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

/* Reads the records from cv->scanned to `end` of the data section: the
 * thread names (every COMM and FORK), and the records the replay needs,
 * held until their time comes (sc_feed).  0 or -ENOMEM. */
static int scan_records(struct sc_conv *cv, uint64_t end)
{
	uint64_t off = cv->scanned;

	while (off + sizeof(struct perf_event_header) <= end) {
		const struct perf_event_header *h = (const void *)(cv->data + off);
		uint64_t time;
		int ret = 0;

		if (h->size < sizeof(*h) || off + h->size > end)
			break;
		if (h->type == PERF_RECORD_COMM)
			ret = note_comm(cv, h);
		else if (h->type == PERF_RECORD_FORK)
			ret = note_fork(cv, h);
		if (ret < 0)
			return ret;
		if (record_time(cv, h, &time)) {
			struct time_ref *grown = tr_vec_grow(cv->held, &cv->cap_held, cv->n_held + 1,
							     sizeof(*grown), 4096);

			if (!grown)
				return -ENOMEM;
			cv->held = grown;
			cv->held[cv->n_held].time = time;
			cv->held[cv->n_held].off = off;
			cv->n_held++;
		}
		off += h->size;
	}
	cv->scanned = off;
	return 0;
}

/* A FORK or an EXIT: which processes begin and end (ft_fork, ft_exit).
 * Every sample of a process comes before its end in time order, so once
 * the replay is past it nothing asks about the process again; the core
 * drops what it keeps for it too.  Returns 1 for an EXIT. */
static int note_task(struct sc_conv *cv, const struct perf_event_header *h, uint64_t time)
{
	/* struct { header; u32 pid, ppid, tid, ptid; u64 time; } */
	uint32_t u[4];

	if (h->size < sizeof(*h) + 16)
		return h->type == PERF_RECORD_EXIT;
	memcpy(u, h + 1, sizeof(u));
	if (h->type == PERF_RECORD_FORK) {
		/* The PID's earlier process goes before the new one begins. */
		if (ft_fork(cv->texts, (pid_t)u[0], (pid_t)u[1], (pid_t)u[2]) == 1 &&
		    cv->forget_exited)
			(void)tracerig_internal(cv->svc)->symbolizer_exit(cv->ctx, (pid_t)u[0]);
		return 0;
	}
	if (ft_exit(cv->texts, (pid_t)u[0], (pid_t)u[2], time) == 1)
		cv->processes_ended++;
	return 1;
}

/* Processes that ended a while before `time` (ft_expire) go, here and in
 * the core. */
static void forget_ended(struct sc_conv *cv, uint64_t time)
{
	pid_t pid;

	while ((pid = ft_expire(cv->texts, time)) > 0)
		if (cv->forget_exited)
			(void)tracerig_internal(cv->svc)->symbolizer_exit(cv->ctx, pid);
}

/* 0, or -ENOMEM. */
static int replay(struct sc_conv *cv, const struct perf_event_header *h, uint64_t time,
		  struct frame *frames)
{
	struct tr_sideband_event ev;

	forget_ended(cv, time);
	if (h->type == PERF_RECORD_SAMPLE)
		return convert_sample(cv, h, frames, PERF_MAX_STACK_DEPTH * 2);
	if ((h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT) &&
	    note_task(cv, h, time))
		return 0;
	switch (tr_sideband_decode(h, cv->trailer_time_from_end, &ev)) {
	case TR_SIDEBAND_MMAP:
		if (cv->uw)
			uw_mmap(cv->uw, ev.map.pid, ev.map.start, ev.map.len);
		if (tracerig_internal(cv->svc)->symbolizer_mmap(cv->ctx, &ev.map) == 0)
			cv->st->mappings++;
		break;
	case TR_SIDEBAND_EXEC:
		if (cv->uw)
			uw_exec(cv->uw, ev.pid);
		(void)tracerig_internal(cv->svc)->symbolizer_exec(cv->ctx, ev.pid);
		break;
	case TR_SIDEBAND_FORK:
		(void)tracerig_internal(cv->svc)->symbolizer_fork(cv->ctx, ev.parent, ev.pid);
		break;
	default:
		break;
	}
	return 0;
}

/* perf.data mapped whole (every page is read: in one go, not a page fault
 * at a time), its header checked.  0 or -errno with `why` filled. */
static int map_perf_data(const char *perf_data, int *fd, void **map, size_t *size, char *why,
			 size_t why_len)
{
	const struct pd_file_header *fh;
	struct stat sb;

	*map = MAP_FAILED;
	*fd = open(perf_data, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		int err = errno;

		snprintf(why, why_len, "cannot open %s: %s", perf_data, strerror(err));
		return -err;
	}
	if (fstat(*fd, &sb) < 0 || (size_t)sb.st_size < sizeof(*fh)) {
		snprintf(why, why_len, "%s is too short to be perf.data", perf_data);
		return -EINVAL;
	}
	*size = (size_t)sb.st_size;
	*map = mmap(NULL, *size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, *fd, 0);
	if (*map == MAP_FAILED) {
		int err = errno;

		snprintf(why, why_len, "cannot map %s: %s", perf_data, strerror(err));
		return -err;
	}
	fh = *map;
	if (fh->magic != PD_MAGIC || fh->data.offset + fh->data.size > (uint64_t)*size) {
		snprintf(why, why_len, "%s is not a finished perf.data file", perf_data);
		return -EINVAL;
	}
	return 0;
}

/* What the conversion works with: sample ids, frame texts, a sample's
 * stack, perf.data.txt's buffer, the comms.  0 or -ENOMEM (conv_free
 * frees what was made). */
static int conv_alloc(struct sc_conv *cv, FILE *txt)
{
	if (sample_ids_build(&cv->ids, cv->ev, cv->n_ev) < 0)
		return -ENOMEM;
	cv->frames = malloc(PERF_MAX_STACK_DEPTH * 2 * sizeof(*cv->frames));
	cv->texts = ft_new(cv->svc, cv->ctx);
	cv->comms = comms_new();
	if (!cv->frames || !cv->texts || !cv->comms)
		return -ENOMEM;
	if (cv->sink) {
		cv->stack_ips = malloc(PERF_MAX_STACK_DEPTH * 2 * sizeof(*cv->stack_ips));
		cv->stack_names = malloc(PERF_MAX_STACK_DEPTH * 2 * sizeof(*cv->stack_names));
		if (!cv->stack_ips || !cv->stack_names)
			return -ENOMEM;
	}
	if (txt) {
		if (textbuf_init(&cv->txt, txt, TEXT_BLOCK) < 0)
			return -ENOMEM;
		cv->txt_open = 1;
	}
	return 0;
}

static void conv_free(struct sc_conv *cv)
{
	trace_seq_destroy(&cv->seq);
	if (cv->tep)
		tep_free(cv->tep);
	if (cv->txt_open)
		(void)textbuf_fini(&cv->txt);
	free(cv->stack_names);
	free(cv->stack_ips);
	ft_free(cv->texts);
	free(cv->frames);
	comms_free(cv->comms);
	sample_ids_free(&cv->ids);
}

/* The kernel's callchain limit for events that set none.  Read where the
 * recording is converted: tracerig converts where it recorded. */
static unsigned read_max_stack(void)
{
	char buf[32] = "";
	unsigned v = 0;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%u", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

int sc_open(const struct pc_opened *ev, size_t n_ev, FILE *txt, struct tracerig_stacks *sink,
	    const struct tracerig_services *svc, struct tracerig_ctx *ctx, struct unwinder *uw,
	    struct uw_bg *bg, struct sc_stats *st, struct sc_conv **out, char *why, size_t why_len)
{
	struct sc_conv *cv = calloc(1, sizeof(*cv));
	int ret;

	*out = NULL;
	memset(st, 0, sizeof(*st));
	if (!cv) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	*cv = (struct sc_conv){ .ev = ev,
				.n_ev = n_ev,
				.with_txt = txt != NULL,
				.sink = sink,
				.svc = svc,
				.ctx = ctx,
				.uw = uw,
				.bg = bg,
				.st = st };
	trace_seq_init(&cv->seq);
	ret = conv_alloc(cv, txt);
	if (ret < 0) {
		snprintf(why, why_len, "out of memory");
		goto fail;
	}
	ret = setup_tep(cv, why, why_len);
	if (ret < 0)
		goto fail;
	cv->trailer_time_from_end = sample_time_from_end(ev[0].attr.sample_type);
	{
		uint64_t window_ns;

		cv->forget_exited =
			tracerig_internal(svc)->symbolizer_exit &&
			(!svc->run->flight_window || svc->run->flight_window(ctx, &window_ns) != 1);
	}
	cv->sysctl_max_stack = read_max_stack();
	st->max_stack = ev[0].attr.sample_max_stack ? ev[0].attr.sample_max_stack
						    : cv->sysctl_max_stack;
	*out = cv;
	return 0;
fail:
	conv_free(cv);
	free(cv);
	return ret;
}

int sc_feed(struct sc_conv *cv, const void *data, uint64_t len, uint64_t until_ns, char *why,
	    size_t why_len)
{
	size_t n = 0;
	int ret;

	cv->data = data;
	ret = scan_records(cv, len);
	/* The thread names of the COMM and FORK records just read. */
	if (!ret)
		ret = comms_finish(cv->comms);
	if (!ret)
		ret = timesort(cv->held, cv->n_held);
	while (!ret && n < cv->n_held && cv->held[n].time < until_ns) {
		ret = replay(cv, (const void *)(cv->data + cv->held[n].off), cv->held[n].time,
			     cv->frames);
		n++;
	}
	if (ret < 0) {
		snprintf(why, why_len, "out of memory converting perf.data");
		return ret;
	}
	memmove(cv->held, cv->held + n, (cv->n_held - n) * sizeof(*cv->held));
	cv->n_held -= n;
	return 0;
}

uint64_t sc_replayed_below(const struct sc_conv *cv)
{
	uint64_t below = cv->scanned;

	for (size_t i = 0; i < cv->n_held; i++)
		if (cv->held[i].off < below)
			below = cv->held[i].off;
	return below;
}

int sc_sync(struct sc_conv *cv, char *why, size_t why_len)
{
	if (!cv->txt_open)
		return 0;
	if (textbuf_flush(&cv->txt) < 0 || fflush(cv->txt.out) != 0 || ferror(cv->txt.out)) {
		snprintf(why, why_len, "cannot write perf.data.txt: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}

int sc_close(struct sc_conv *cv, int ret, char *why, size_t why_len)
{
	int written;

	if (!cv)
		return ret;
	if (cv->svc->run->log) {
		size_t procs, user, kernel;

		ft_counts(cv->texts, &procs, &user, &kernel);
		cv->svc->run->log(cv->ctx, TRACERIG_LOG_DEBUG,
				  "conversion: %llu processes ended, %zu "
				  "followed still kept (running, or ended within a second); frame "
				  "texts kept: %zu user, %zu kernel",
				  (unsigned long long)cv->processes_ended, procs, user, kernel);
	}
	/* After a failure `why` says that one: the text is still handed to
	 * its FILE, but what writing it says is not. */
	written = sc_sync(cv, ret < 0 ? NULL : why, ret < 0 ? 0 : why_len);
	conv_free(cv);
	free(cv->held);
	free(cv);
	return ret < 0 ? ret : written;
}

int sc_feed_file(struct sc_conv *cv, const char *perf_data, char *why, size_t why_len)
{
	const struct pd_file_header *fh;
	size_t size = 0;
	void *map;
	int fd, ret;

	ret = map_perf_data(perf_data, &fd, &map, &size, why, why_len);
	if (ret == 0) {
		fh = map;
		ret = sc_feed(cv, (const char *)map + fh->data.offset, fh->data.size, UINT64_MAX,
			      why, why_len);
		cv->data = NULL;
	}
	if (map != MAP_FAILED)
		munmap(map, size);
	if (fd >= 0)
		close(fd);
	return ret;
}

int sc_convert(const char *perf_data, const struct pc_opened *ev, size_t n_ev, FILE *txt,
	       struct tracerig_stacks *sink, const struct tracerig_services *svc,
	       struct tracerig_ctx *ctx, struct unwinder *uw, struct uw_bg *bg, struct sc_stats *st,
	       char *why, size_t why_len)
{
	struct sc_conv *cv;
	int ret = sc_open(ev, n_ev, txt, sink, svc, ctx, uw, bg, st, &cv, why, why_len);

	if (ret < 0)
		return ret;
	return sc_close(cv, sc_feed_file(cv, perf_data, why, why_len), why, why_len);
}
