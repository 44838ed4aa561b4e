/* perf_events: CPU samples (and tracepoints, context switches) straight
 * from perf_event_open(2): no perf binary that must match the kernel.
 * Writes perf.data (stock perf report/script read it), perf.data.txt
 * (`perf script` text for PerfView/TraceEvent), cpu.folded and cpu.svg,
 * all symbolized on the collecting machine.  This file is the glue: keys,
 * the thread that remembers new processes' mappings, the vtable. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "tracerig-private/ext.h"

#include "lib/callchain.h"
#include "lib/keyerror.h"
#include "lib/pidqueue.h"

#include "collector.h"
#include "events.h"
#include "fpcheck.h"
#include "livescript.h"
#include "perfdata.h"
#include "script.h"
#include "tracingdata.h"
#include "unwind.h"
#include "unwindbg.h"
#include "window.h"

#define MAX_EVENTS 32

/* The profile's [perf_events] keys, bound by the core. */
struct perf_settings {
	struct tracerig_list events, optional_events;
	long long frequency, period, dwarf_stack_bytes, unwind_queue_bytes, ring_pages, max_stack;
	long long view_memory;
	int callchain, hardware_fallback; /* indexes of the choices */
	int kernel, context_switches, script, flamegraph, convert_while_collecting;
};
enum { HW_FAIL, HW_CPU_CLOCK, HW_SKIP };

struct perf {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct perf_settings keys;
	struct ev_spec events[MAX_EVENTS];
	struct pc_config cfg;
	int script, flamegraph;
	uint64_t flight_ns; /* mode = flight: the window; 0 when recording */
	/* Judging the keys: the services in validate, which says each wrong
	 * value; NULL in check and init, which only count them in `wrong`
	 * (validate said them, and a run with any stops before init). */
	const struct tracerig_services *say;
	int wrong;
	char data_path[PATH_MAX];
	struct pc_collector *pc;

	/* Processes first seen by the reader thread, remembered by another
	 * thread so that reading their objects never delays the rings. */
	struct tr_pid_queue *remember;
	/* callchain = dwarf: samples unwound while collecting. */
	struct uw_objects *objects;
	struct uw_bg *bg;
	/* Record mode: perf.data converted while collecting (livescript.h);
	 * what it writes to and builds, until the flush finishes it. */
	struct ls_conv *live;
	struct conv_out {
		FILE *txt;
		struct unwinder *uw; /* callchain = dwarf: its own unwinding */
		struct tracerig_stacks *sink; /* cpu.folded, .svg, .pb.gz; NULL: none */
		struct sc_stats st;
		struct sc_conv *cv;
	} out;
};

static int perf_snapshot(void *state, struct tracerig_archive *ar, uint64_t from_ns,
			 uint64_t to_ns);

static void log_cb(void *arg, int error, const char *fmt, ...)
{
	struct perf *p = arg;
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->svc->run->log(p->ctx, error ? TRACERIG_LOG_ERROR : TRACERIG_LOG_WARN, "%s", msg);
}

static void pid_cb(void *arg, pid_t pid, int exec)
{
	struct perf *p = arg;

	(void)exec;
	p->svc->procs->pid_observe(p->ctx, pid);
	tr_pid_queue_push(p->remember, pid);
}

static void remember(void *arg, pid_t pid)
{
	struct perf *p = arg;
	int ret;

	/* A process that exits before flush must still resolve. */
	ret = tracerig_internal(p->svc)->symbolizer_remember(p->ctx, pid);
	if (ret < 0 && ret != -ESRCH && ret != -ENOENT)
		p->svc->run->log(p->ctx, TRACERIG_LOG_DEBUG,
				 "cannot remember the mappings of %d: %s", (int)pid,
				 strerror(-ret));
}

/* Once a second, for the live status line. */
static void show_progress(void *arg)
{
	struct perf *p = arg;
	struct pc_counts c;

	if (!p->pc)
		return;
	pc_counts(p->pc, &c);
	p->svc->run->progress_set(p->ctx, "%llu samples%s", (unsigned long long)c.samples,
				  c.lost ? ", some lost" : "");
}

static void stop_remember_thread(struct perf *p)
{
	tr_pid_queue_stop(p->remember);
	p->remember = NULL;
}

/* ---- profile ---- */

/* Adds the events of a list; `optional` ones the kernel does not have are
 * logged and left out instead of failing. */
static int parse_events(struct perf *p, const struct tracerig_list *list, int optional,
			char *why, size_t why_len)
{
	size_t wrong = 0;

	for (size_t i = 0; i < list->n; i++) {
		const char *name = list->items[i];
		char hint[512];
		int ret;

		/* A profile's mistake like a wrong name: said with its line. */
		if (strlen(name) >= 160 || p->cfg.n_events == MAX_EVENTS) {
			if (strlen(name) >= 160)
				tr_key_error(p->say, p->ctx, &p->wrong, why, why_len,
					     optional ? "optional_events" : "events",
					     "'%.40s...' is longer than 159 characters", name);
			else
				tr_key_error(p->say, p->ctx, &p->wrong, why, why_len,
					     optional ? "optional_events" : "events",
					     "more than %d events with optional_events: leave "
					     "some out",
					     MAX_EVENTS);
			return -EINVAL;
		}
		ret = ev_parse(name, &p->events[p->cfg.n_events], hint, sizeof(hint));
		if (ret < 0 && optional) {
			/* What the run does, told by the run (and --check). */
			if (!p->say)
				p->svc->run->log(p->ctx, TRACERIG_LOG_INFO,
						 "optional event %s is not available "
						 "here (%s): left out",
						 name, hint);
			continue;
		}
		if (ret < 0) {
			/* Each said where it is; then the next. */
			tr_key_error(p->say, p->ctx, &p->wrong, why, why_len, "events",
				     "%s is not an event here: %s", name, hint);
			wrong++;
			continue;
		}
		p->cfg.n_events++;
	}
	if (wrong > 1)
		snprintf(why, why_len, "events: %zu names are not events here (each said above, "
			 "with its line)", wrong);
	return 0;
}

/* The events to open: the named ones, then the optional ones this kernel
 * has (wrong names are said, see p->say, and counted in p->wrong). */
static int configure_events(struct perf *p, char *why, size_t why_len)
{
	const struct perf_settings *k = &p->keys;
	int ret;

	p->cfg.events = p->events;
	ret = parse_events(p, &k->events, 0, why, why_len);
	if (ret == 0)
		ret = parse_events(p, &k->optional_events, 1, why, why_len);
	if (ret < 0)
		return ret;
	if (!p->cfg.n_events && !p->wrong)
		tr_key_error(p->say, p->ctx, &p->wrong, why, why_len, "events",
			     "none is left to sample: name at least one event (cpu-clock)");
	return 0;
}

/* How often, what stacks and how large rings (wrong values are said, see
 * p->say, and counted in p->wrong). */
static void configure_sampling(struct perf *p, char *why, size_t why_len)
{
	const struct perf_settings *k = &p->keys;
	uint64_t max_rate;
	long long pages;

	p->cfg.frequency = (uint64_t)k->frequency;
	p->cfg.period = (uint64_t)k->period;
	max_rate = pc_max_sample_rate();
	if (!p->cfg.period && max_rate && p->cfg.frequency > max_rate)
		tr_key_error(p->say, p->ctx, &p->wrong, why, why_len, "frequency",
			     "%llu is above kernel.perf_event_max_sample_rate = %llu: lower it, or "
			     "raise the limit (sysctl kernel.perf_event_max_sample_rate=%llu)",
			     (unsigned long long)p->cfg.frequency, (unsigned long long)max_rate,
			     (unsigned long long)p->cfg.frequency);
	p->cfg.callchain = k->callchain == TR_CALLCHAIN_FP;
	if (k->callchain == TR_CALLCHAIN_DWARF && !UW_AVAILABLE)
		tr_key_error(p->say, p->ctx, &p->wrong, why, why_len, "callchain", "%s",
			     TR_CALLCHAIN_DWARF_UNAVAILABLE);
	if (k->callchain == TR_CALLCHAIN_CFI)
		tr_key_error(p->say, p->ctx, &p->wrong, why, why_len, "callchain",
			     "cfi walks stacks in a BPF program, which perf_events' samples do not "
			     "go through: use callchain = dwarf here (ebpf takes cfi)");
	if (k->callchain == TR_CALLCHAIN_DWARF)
		p->cfg.dwarf_stack_bytes =
			tr_dwarf_stack_bytes(k->dwarf_stack_bytes, PC_MAX_STACK_BYTES);
	p->cfg.kernel = k->kernel;
	p->cfg.max_stack = (uint16_t)k->max_stack;
	p->cfg.context_switches = k->context_switches;
	p->cfg.hw_fallback = k->hardware_fallback == HW_SKIP		? PC_HW_SKIP
			     : k->hardware_fallback == HW_CPU_CLOCK ? PC_HW_CPU_CLOCK
								    : PC_HW_FAIL;
	pages = k->ring_pages;
	if (pages & (pages - 1))
		tr_key_error(p->say, p->ctx, &p->wrong, why, why_len, "ring_pages",
			     "%lld is not a power of two (use 64, 128, 256, ...)", pages);
	p->cfg.ring_pages = (size_t)pages;
}

/* Everything init reads from the profile, judged as validate judges it
 * (shared with validate and --check).  On failure `why` says what is
 * wrong and what to do. */
static int configure(struct perf *p, char *why, size_t why_len)
{
	const struct tracerig_services *svc = p->svc;
	struct tracerig_ctx *ctx = p->ctx;
	const struct perf_settings *k = &p->keys;
	int ret;

	if ((ret = svc->run->config_bind(ctx, &p->keys)) < 0) {
		snprintf(why, why_len, "reading the profile: %s", strerror(-ret));
		return ret;
	}
	/* Every wrong value is said, each with its line, before init fails. */
	ret = configure_events(p, why, why_len);
	if (ret < 0)
		return ret;
	configure_sampling(p, why, why_len);
	p->script = k->script;
	p->flamegraph = k->flamegraph;
	/* Flight mode: perf.data in chunks of a quarter window (at least
	 * 500 ms: each begins by describing every process), as perf record
	 * --switch-output; a snapshot is cut from the chunks it overlaps. */
	if (svc->run->flight_window(ctx, &p->flight_ns) == 1) {
		p->cfg.chunk_ns = p->flight_ns / 4 > 500000000ull ? p->flight_ns / 4 : 500000000ull;
		p->cfg.keep_ns = p->flight_ns;
	} else {
		p->flight_ns = 0;
	}
	return p->wrong ? -EINVAL : 0;
}

/* What start would open, from the session's targets.  A launched command
 * does not exist yet at --check: tracerig's own process, whose
 * credentials the command inherits, stands in for it. */
static struct pc_target make_target(const struct tracerig_targets *t, pid_t command_stand_in)
{
	struct pc_target target = {
		.system_wide = t->system_wide,
		.pids = t->pids,
		.n_pids = t->n_pids,
		.command_pid = t->command_pid,
		.cgroup = t->cgroup,
	};

	if (!t->system_wide && !t->n_pids && t->command_pid <= 0 && !t->cgroup)
		target.command_pid = command_stand_in;
	return target;
}

/* The notes of a trial open (hardware fallbacks) for --check's note. */
struct check_notes {
	char *buf;
	size_t len;
};

static void check_log_cb(void *arg, int error, const char *fmt, ...)
{
	struct check_notes *n = arg;
	size_t used = strlen(n->buf);
	va_list ap;

	(void)error;
	if (used && used + 2 < n->len) {
		snprintf(n->buf + used, n->len - used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(n->buf + used, n->len - used, fmt, ap);
	va_end(ap);
}

/* The plugin's state, configured from its keys (what init and --check
 * share).  *out is NULL only when out of memory; otherwise the caller frees
 * it, also when configuring failed (a negative errno, `why` filled in). */
static int perf_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
		    const struct tracerig_services *say, struct perf **out, char *why,
		    size_t why_len)
{
	struct perf *p = calloc(1, sizeof(*p));

	*out = p;
	if (!p)
		return -ENOMEM;
	p->svc = svc;
	p->ctx = ctx;
	p->say = say;
	return configure(p, why, why_len);
}

/* Every wrong value said before any plugin starts: the event names are
 * judged against this kernel's tracefs, which needs nothing opened. */
static int perf_validate(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	char why[1024] = "";
	struct perf *p;
	int ret = perf_new(svc, ctx, svc, &p, why, sizeof(why));

	if (!p)
		return ret;
	free(p);
	if (ret < 0 && ret != -EINVAL)
		svc->run->log(ctx, TRACERIG_LOG_ERROR, "%s", why);
	/* -EINVAL: the wrong values were said (a run with any stops here). */
	return ret == -EINVAL ? 0 : ret;
}

/* --check: the preparation of init, then the very perf_event_open calls of
 * start (every event on every CPU or target thread, the rings, the
 * hardware fallbacks, the targets' /proc), closed again. */
static int perf_check(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
		      char *advice, size_t advice_len)
{
	struct pc_collector *pc = NULL;
	struct check_notes notes = { advice, advice_len };
	struct pc_target target;
	char why[1024] = "";
	struct perf *p;
	int ret;

	advice[0] = '\0';
	/* A value validate said is wrong is not tried: the first is the
	 * advice. */
	ret = perf_new(svc, ctx, NULL, &p, why, sizeof(why));
	if (!p)
		return ret;
	if (ret == 0) {
		target = make_target(svc->procs->targets(ctx), getpid());
		ret = pc_open(&p->cfg, &target, NULL, NULL, check_log_cb, &notes, &pc, why,
			      sizeof(why));
	}
	if (ret == 0 && p->cfg.callchain)
		fp_check_targets(svc->procs->targets(ctx), advice, advice_len);
	if (ret < 0) {
		if (why[0])
			snprintf(advice, advice_len, "%s", why);
		else if (ret == -ENOSYS)
			snprintf(advice, advice_len, "this kernel has no perf_events "
				 "(CONFIG_PERF_EVENTS)");
	}
	pc_close(pc);
	free(p);
	return ret;
}

static int perf_init(const struct tracerig_services *svc, struct tracerig_ctx *ctx, void **state)
{
	const char *dir;
	char why[1024] = "";
	struct perf *p;
	int ret;

	ret = perf_new(svc, ctx, NULL, &p, why, sizeof(why));
	if (!p)
		return ret;
	if (ret < 0) {
		/* Not a value validate said: a run with one never gets here. */
		svc->run->log(ctx, TRACERIG_LOG_ERROR, "%s", why);
		goto fail;
	}
	/* Converting replays perf.data's own side-band into the model. */
	if (p->script || p->flamegraph)
		tracerig_internal(svc)->symbolizer_model(ctx, TRACERIG_MODEL_RECORDED);
	dir = svc->archive->staging_dir(ctx);
	/* Flight mode: the chunks' prefix (flight-perf.data.000001, ...). */
	if (!dir || snprintf(p->data_path, sizeof(p->data_path), "%s/%s", dir,
			     p->flight_ns ? "flight-perf.data" : "perf.data") >=
			    (int)sizeof(p->data_path)) {
		ret = -ENAMETOOLONG;
		goto fail;
	}
	*state = p;
	return 0;
fail:
	free(p);
	return ret;
}

/* callchain = dwarf: the thread that unwinds samples as they come (none:
 * the conversion unwinds them all, as it does the ones this leaves). */
static void start_unwinding(struct perf *p)
{
	long long queue_bytes = p->keys.unwind_queue_bytes;
	int ret;

	/* Flight mode: what it finds is keyed by offsets in one perf.data,
	 * which the chunks are not; each snapshot unwinds its samples. */
	if (!p->cfg.dwarf_stack_bytes || !queue_bytes || p->flight_ns)
		return;
	p->objects = uw_objects_new();
	ret = p->objects ? uw_bg_new(p->svc, p->ctx, p->objects, (size_t)queue_bytes, &p->bg)
			 : -ENOMEM;
	if (ret < 0) {
		p->svc->run->log(p->ctx, TRACERIG_LOG_WARN,
				 "cannot unwind while collecting (%s): the "
				 "conversion unwinds every sample",
				 strerror(-ret));
		return;
	}
	p->cfg.observer = (struct pc_observer){ uw_bg_record, uw_bg_pass, p->bg };
}

static void unwind_events(struct perf *p)
{
	size_t n_ev;
	const struct pc_opened *ev = pc_events(p->pc, &n_ev);
	int ret = uw_bg_start(p->bg, ev, n_ev);

	if (ret < 0)
		p->svc->run->log(p->ctx, TRACERIG_LOG_WARN,
				 "cannot unwind while collecting (%s): the "
				 "conversion unwinds every sample",
				 strerror(-ret));
}

/* perf.data only grows past its attrs (perfdata.h): the core deflates it
 * while collecting, so packaging has only the end of it left to do. */
static void stream_perf_data(struct perf *p)
{
	uint64_t from;
	int ret = pd_append_only_from(p->data_path, &from);

	if (ret == 0)
		ret = tracerig_internal(p->svc)->archive_append_only(p->ctx, "perf.data", from);
	if (ret < 0 && ret != -ENOTSUP)
		p->svc->run->log(p->ctx, TRACERIG_LOG_DEBUG,
				 "perf.data is deflated when packaged, "
				 "not while collecting: %s",
				 strerror(-ret));
}

static struct tracerig_stacks *open_sink(struct perf *p, const struct pc_opened *ev);

/* A staged entry the conversion only appends to, as `f`; `never_read`:
 * nothing here reads it back (perf.data.txt; the flame graph reads
 * cpu.folded), so the core may free what it deflated of it. */
static FILE *appended_entry(struct perf *p, FILE *f, const char *name, int never_read)
{
	/* Written in one pass; a big buffer saves syscalls. */
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	/* The core deflates it on another CPU as it grows (-ENOTSUP:
	 * streaming is off). */
	if (tracerig_internal(p->svc)->archive_append_only(p->ctx, name, 0) == 0 && never_read)
		(void)tracerig_internal(p->svc)->archive_release(p->ctx, name, UINT64_MAX);
	return f;
}

static void free_outputs(struct perf *p, struct conv_out *o)
{
	(void)sc_close(o->cv, 0, NULL, 0);
	if (o->txt)
		fclose(o->txt);
	tracerig_internal(p->svc)->stacks_close(o->sink);
	uw_free(o->uw);
	memset(o, 0, sizeof(*o));
}

/* Where the views' lines and samples waited: said, since a spill that
 * failed means memory grew as view_memory was set to prevent. */
static void report_spill(struct perf *p, const struct tracerig_stacks_stats *st)
{
	if (st->spill_err < 0)
		p->svc->run->log(p->ctx, TRACERIG_LOG_WARN,
				 "cpu.folded's lines or cpu.pb.gz's samples could not be written "
				 "to the staging directory (%s): kept in memory beyond view_memory",
				 strerror(-st->spill_err));
	if (st->folded_runs)
		p->svc->run->log(p->ctx, TRACERIG_LOG_DEBUG,
				 "cpu.folded: merged from %zu sorted runs "
				 "written beyond view_memory (%lld bytes)",
				 st->folded_runs, p->keys.view_memory);
	if (st->pprof_spills)
		p->svc->run->log(p->ctx, TRACERIG_LOG_DEBUG,
				 "cpu.pb.gz: %zu spills of samples beyond "
				 "view_memory (%llu bytes) appended",
				 st->pprof_spills, (unsigned long long)st->pprof_spill_bytes);
}

/* perf.data.txt, the stack sink of cpu.folded and cpu.pb.gz, and the
 * conversion that fills them, for the flush or to convert while
 * collecting.  `txt` is opened by the caller (NULL: script = no), and
 * `uw` made by it (NULL: no user stacks to unwind): both are o's from here
 * on.  0 or -errno with `why`; on failure o is freed. */
static int open_outputs(struct perf *p, FILE *txt, struct unwinder *uw, struct conv_out *o,
			char *why, size_t why_len)
{
	size_t n_ev;
	const struct pc_opened *ev = pc_events(p->pc, &n_ev);
	int ret;

	*o = (struct conv_out){ .txt = txt, .uw = uw };
	if (p->flamegraph || tracerig_internal(p->svc)->pprof_wanted(p->ctx)) {
		o->sink = open_sink(p, &ev[0]);
		if (!o->sink) {
			snprintf(why, why_len, "cannot keep the stacks: %s", strerror(errno));
			free_outputs(p, o);
			return -ENOMEM;
		}
	}
	ret = sc_open(ev, n_ev, txt, o->sink, p->svc, p->ctx, uw, p->bg, &o->st, &o->cv, why,
		      why_len);
	if (ret < 0)
		free_outputs(p, o);
	return ret;
}

/* The conversion thread's: what it has replayed of perf.data is read
 * again by nothing here (the flush converts what it has not). */
static void release_perf_data(void *arg, uint64_t offset)
{
	struct perf *p = arg;

	(void)tracerig_internal(p->svc)->archive_release(p->ctx, "perf.data", offset);
}

/* Record mode: a thread converts perf.data as it grows.  With callchain
 * = dwarf it goes as far as the thread unwinding samples as they come has
 * got (their frames are adopted, the ones it left unwound here).  Not
 * fatal: the flush converts everything when this cannot start. */
static void convert_while_collecting(struct perf *p)
{
	char path[PATH_MAX], why[512];
	struct unwinder *uw = NULL;
	FILE *txt = NULL;
	int created = 0, ret;

	if (!p->keys.convert_while_collecting ||
	    (!p->script && !p->flamegraph && !tracerig_internal(p->svc)->pprof_wanted(p->ctx)))
		return;
	if (p->cfg.dwarf_stack_bytes) {
		uw = uw_new(p->svc, p->ctx, p->objects);
		if (!uw) {
			snprintf(why, sizeof(why), "out of memory");
			goto fail;
		}
	}
	if (p->script) {
		int fd = -1;

		if (snprintf(path, sizeof(path), "%s/perf.data.txt",
			     p->svc->archive->staging_dir(p->ctx)) < (int)sizeof(path))
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		else
			errno = ENAMETOOLONG;
		created = fd >= 0;
		txt = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!txt) {
			snprintf(why, sizeof(why), "cannot create perf.data.txt in the staging "
				 "directory: %s", strerror(errno));
			if (fd >= 0)
				close(fd);
			goto fail;
		}
		appended_entry(p, txt, "perf.data.txt", 1);
	}
	/* txt and uw are p->out's from here on, freed with it. */
	ret = open_outputs(p, txt, uw, &p->out, why, sizeof(why));
	uw = NULL;
	if (ret < 0)
		goto fail;
	ret = ls_start(p->pc, p->data_path, p->out.cv, p->bg, release_perf_data, p, &p->live);
	if (ret == 0)
		return;
	snprintf(why, sizeof(why), "cannot start a thread: %s", strerror(-ret));
fail:
	free_outputs(p, &p->out);
	uw_free(uw);
	if (created)
		(void)unlink(path);
	p->svc->run->log(p->ctx, TRACERIG_LOG_WARN,
			 "perf.data is converted once collection ends, not "
			 "while collecting: %s",
			 why);
}

static int perf_start(void *state)
{
	struct perf *p = state;
	const struct tracerig_targets *t = p->svc->procs->targets(p->ctx);
	struct pc_target target = make_target(t, 0);
	char why[1024];
	int ret;

	if (t->cgroup && (t->n_pids || t->command_pid > 0))
		p->svc->run->log(p->ctx, TRACERIG_LOG_WARN,
				 "cgroup %s is not used: -p or a launched "
				 "command narrows the targets already",
				 t->cgroup);
	/* The kernel's symbols (read on the first kernel frame looked up)
	 * before the targets run, as perf record reads /proc/kallsyms at its
	 * start: not in the flush, and not while collecting either, where
	 * they cost ~75 ms of CPU the traced workload competes with.  The
	 * same read gives the kernel map perf.data starts with. */
	if (p->cfg.kernel && (p->script || p->flamegraph)) {
		uint64_t text = 0, etext = 0;

		if (tracerig_internal(p->svc)->kernel_text(p->ctx, &text, &etext) == 0) {
			p->cfg.kernel_text = text;
			p->cfg.kernel_etext = etext;
		}
	}
	ret = tr_pid_queue_start(&p->remember, remember, show_progress, 1000, p);
	if (ret < 0) {
		p->svc->run->log(p->ctx, TRACERIG_LOG_ERROR, "cannot start a thread: %s",
				 strerror(-ret));
		return ret;
	}
	why[0] = '\0';
	start_unwinding(p);
	ret = pc_open(&p->cfg, &target, p->data_path, pid_cb, log_cb, p, &p->pc, why, sizeof(why));
	if (ret == 0 && p->bg)
		unwind_events(p);
	if (ret == 0)
		ret = pc_start(p->pc, why, sizeof(why));
	if (ret < 0) {
		p->svc->run->log(p->ctx, TRACERIG_LOG_ERROR, "%s", why);
		pc_close(p->pc);
		p->pc = NULL;
		stop_remember_thread(p);
		return ret;
	}
	for (size_t i = 0; i < p->cfg.n_events; i++)
		p->svc->run->log(p->ctx, TRACERIG_LOG_DEBUG, "sampling %s", p->events[i].name);
	if (!p->flight_ns) {
		stream_perf_data(p);
		convert_while_collecting(p);
	}
	return 0;
}

static void report_counts(struct perf *p)
{
	struct pc_counts c;

	pc_counts(p->pc, &c);
	p->svc->run->counter_set(p->ctx, "samples", c.samples);
	p->svc->run->counter_set(p->ctx, "lost_samples", c.lost);
	p->svc->run->counter_set(p->ctx, "lost_records", c.lost_records);
	p->svc->run->counter_set(p->ctx, "throttled", c.throttles);
	p->svc->run->counter_set(p->ctx, "records", c.records);
	p->svc->run->counter_set(p->ctx, "bytes", c.bytes);
	/* The window perf_events really covered (CLOCK_MONOTONIC ns), for
	 * the manifest: events enabled, disabled, first and last sample. */
	if (c.enabled_ns)
		p->svc->run->counter_set(p->ctx, "window_start_ns", c.enabled_ns);
	if (c.disabled_ns)
		p->svc->run->counter_set(p->ctx, "window_end_ns", c.disabled_ns);
	if (c.samples) {
		p->svc->run->counter_set(p->ctx, "first_sample_ns", c.first_sample_ns);
		p->svc->run->counter_set(p->ctx, "last_sample_ns", c.last_sample_ns);
	}
	if (c.lost)
		p->svc->run->log(p->ctx, TRACERIG_LOG_WARN,
				 "%llu samples lost: the ring buffers were "
				 "full (raise ring_pages or lower frequency)",
				 (unsigned long long)c.lost);
	if (c.throttles)
		p->svc->run->log(p->ctx, TRACERIG_LOG_WARN,
				 "the kernel throttled sampling %llu times "
				 "(kernel.perf_cpu_time_max_percent): lower frequency",
				 (unsigned long long)c.throttles);
}

static int perf_stop(void *state)
{
	struct perf *p = state;
	int ret;

	if (!p->pc)
		return 0;
	ret = pc_stop(p->pc);
	if (p->bg)
		uw_bg_stop(p->bg); /* it ends once the tail is unwound */
	stop_remember_thread(p);
	report_counts(p);
	return ret;
}

/* ---- flush ---- */

/* The model name, and the cpuid string perf writes on x86
 * ("vendor,family,model,stepping"), from the first CPU in /proc/cpuinfo. */
static void cpu_model(char *desc, size_t desc_len, char *cpuid, size_t cpuid_len)
{
	char line[512], vendor[64] = "", family[16] = "", model[16] = "", stepping[16] = "";
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(desc, desc_len, "unknown");
	cpuid[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		if (line[0] == '\n')
			break; /* end of the first CPU */
		colon += 2;
		colon[strcspn(colon, "\n")] = '\0';
		if (strncmp(line, "model name", 10) == 0)
			snprintf(desc, desc_len, "%s", colon);
		else if (strncmp(line, "vendor_id", 9) == 0)
			snprintf(vendor, sizeof(vendor), "%s", colon);
		else if (strncmp(line, "cpu family", 10) == 0)
			snprintf(family, sizeof(family), "%s", colon);
		else if (strncmp(line, "model\t", 6) == 0)
			snprintf(model, sizeof(model), "%s", colon);
		else if (strncmp(line, "stepping", 8) == 0)
			snprintf(stepping, sizeof(stepping), "%s", colon);
	}
	fclose(f);
	if (vendor[0] && family[0] && model[0])
		snprintf(cpuid, cpuid_len, "%s,%s,%s,%s", vendor, family, model,
			 stepping[0] ? stepping : "0");
}

/* HEADER_TRACING_DATA: the tracepoints' formats, without which perf
 * cannot decode their payloads.  Not fatal: the file stays readable. */
static char *tracing_data(struct perf *p, size_t *len)
{
	const char *sys[MAX_EVENTS], *name[MAX_EVENTS];
	const struct pc_opened *ev = pc_events(p->pc, len);
	size_t n_ev = *len, n = 0;
	char *blob = NULL;
	int ret;

	*len = 0;
	for (size_t i = 0; i < n_ev && n < MAX_EVENTS; i++) {
		if (ev[i].spec.kind != EV_TRACEPOINT)
			continue;
		sys[n] = ev[i].spec.sys;
		name[n++] = ev[i].spec.tp;
	}
	if (!n)
		return NULL;
	ret = td_build(sys, name, n, &blob, len);
	if (ret < 0) {
		p->svc->run->log(p->ctx, TRACERIG_LOG_WARN,
				 "cannot describe the tracepoints' formats "
				 "in perf.data (%s): perf script will not decode their payloads "
				 "(perf.data.txt has them)",
				 strerror(-ret));
		*len = 0;
		return NULL;
	}
	return blob;
}

/* What the header features point into. */
struct feature_text {
	struct utsname u;
	char cpudesc[256], cpuid[128], version[64], cmdline[4096];
	const char *argv[64];
};

/* The header features of a perf.data of this machine (and the
 * tracepoints' formats: free f->tracing_data). */
static void fill_features(struct perf *p, struct feature_text *t, struct pd_features *f)
{
	struct timespec mono, real;
	int argc = 0;
	FILE *cf;
	size_t n;

	memset(f, 0, sizeof(*f));
	if (uname(&t->u) == 0) {
		f->hostname = t->u.nodename;
		f->osrelease = t->u.release;
		f->arch = t->u.machine;
	}
	snprintf(t->version, sizeof(t->version), "tracerig %s", PACKAGE_VERSION);
	f->version = t->version;
	cpu_model(t->cpudesc, sizeof(t->cpudesc), t->cpuid, sizeof(t->cpuid));
	f->cpudesc = t->cpudesc;
	f->cpuid = t->cpuid[0] ? t->cpuid : NULL;
	f->nr_cpus_avail = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	f->nr_cpus_online = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	f->total_mem_kb = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
	/* tracerig's own command line, as perf records its own. */
	cf = fopen("/proc/self/cmdline", "re");
	n = cf ? fread(t->cmdline, 1, sizeof(t->cmdline) - 1, cf) : 0;
	if (cf)
		fclose(cf);
	t->cmdline[n] = '\0';
	for (size_t i = 0; i < n && argc < 64; i += strlen(t->cmdline + i) + 1)
		t->argv[argc++] = t->cmdline + i;
	f->argc = argc;
	f->argv = t->argv;
	f->clockid = CLOCK_MONOTONIC;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	f->clock_ref_tod_ns = (uint64_t)real.tv_sec * 1000000000ull + (uint64_t)real.tv_nsec;
	f->clock_ref_clk_ns = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
	f->tracing_data = tracing_data(p, &f->tracing_data_len);
}

static int finish_perf_data(struct perf *p)
{
	struct feature_text t;
	struct pd_features f;
	int ret;

	fill_features(p, &t, &f);
	ret = pc_finish(p->pc, &f);
	free((void *)f.tracing_data);
	return ret;
}

static FILE *create_entry(struct perf *p, struct tracerig_archive *ar, const char *name,
			  int never_read)
{
	FILE *f = p->svc->archive->fopen(ar, name);

	if (!f) {
		p->svc->run->log(p->ctx, TRACERIG_LOG_ERROR, "cannot create %s: %s", name,
				 strerror(errno));
		return NULL;
	}
	return appended_entry(p, f, name, never_read);
}

static int close_entry(struct perf *p, FILE *f, const char *name)
{
	if (f && fclose(f) != 0) {
		p->svc->run->log(p->ctx, TRACERIG_LOG_ERROR, "cannot write %s: %s", name,
				 strerror(errno));
		return -EIO;
	}
	return 0;
}

static void report_unwinding(struct perf *p, const struct unwinder *uw)
{
	struct uw_bg_stats bs = { 0 };
	struct uw_stats us;

	uw_get_stats(uw, &us);
	if (p->bg)
		uw_bg_get_stats(p->bg, &bs);
	p->svc->run->counter_set(p->ctx, "unwound_samples", us.samples);
	/* Of them, those whose frames were found while collecting (the rest
	 * were unwound by the conversion). */
	p->svc->run->counter_set(p->ctx, "unwound_while_collecting", us.adopted);
	p->svc->run->counter_set(p->ctx, "unwind_queue_full", bs.queue_full);
	p->svc->run->log(
		p->ctx, TRACERIG_LOG_INFO,
		"%llu of %llu samples unwound while collecting "
		"(%llu left to the conversion by a full queue, %llu not adoptable, %llu whose "
		"objects had changed; %llu ms of CPU)",
		(unsigned long long)us.adopted, (unsigned long long)us.samples,
		(unsigned long long)bs.queue_full,
		(unsigned long long)bs.uncheckable + bs.results_full,
		(unsigned long long)(bs.kept - us.adopted),
		(unsigned long long)(bs.cpu_ns / 1000000));
	p->svc->run->counter_set(p->ctx, "unwound_frames", us.frames);
	p->svc->run->counter_set(p->ctx, "stacks_cut_by_copy_size", us.stack_end);
	p->svc->run->counter_set(p->ctx, "stacks_ended_unmapped", us.unmapped);
	if (us.samples && us.stack_end * 10 > us.samples)
		p->svc->run->log(p->ctx, TRACERIG_LOG_WARN,
				 "%llu of %llu stacks needed more than the "
				 "%u bytes of stack copied per sample: raise dwarf_stack_bytes",
				 (unsigned long long)us.stack_end, (unsigned long long)us.samples,
				 (unsigned)p->cfg.dwarf_stack_bytes);
}

static int is_clock(const struct pc_opened *ev)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE &&
	       (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
		ev->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

/* cpu.folded as on-CPU time, for the core's wall-clock view: a sample of
 * a clock event stands for its period, nanoseconds the thread ran (in
 * frequency mode the kernel moves the period to keep the rate, so the mean
 * of what was recorded is what it sampled at, throttling included: *ns
 * 0); other events sampled at a frequency stand for 1/frequency s each;
 * tracepoints and events sampled every N occurrences say nothing about
 * time (0 returned). */
static int wall_worth(const struct perf *p, const struct pc_opened *ev, uint64_t *ns)
{
	*ns = 0;
	if (is_clock(ev))
		return 1;
	if (ev->spec.kind != EV_TRACEPOINT && !p->cfg.period && p->cfg.frequency) {
		*ns = 1000000000ull / p->cfg.frequency;
		return 1;
	}
	return 0;
}

/* cpu.folded, cpu.svg and cpu.pb.gz: one sample and its period per
 * sample.  A clock event's period is nanoseconds on the CPU, and one
 * sample stands for 1e9 / frequency of them (or the fixed period);
 * another event's period counts its occurrences.  Every process's stacks
 * are rooted at its PID and every sample labelled with it: in a long
 * session they grow with each process it sees, up to view_memory. */
static struct tracerig_stacks *open_sink(struct perf *p, const struct pc_opened *ev)
{
	int clock = is_clock(ev);
	struct tracerig_stacks_spec spec = {
		.name = "cpu",
		.title = "CPU samples",
		.what = TRACERIG_TIME_ONCPU,
		.flags = p->flamegraph ? 0 : TRACERIG_STACKS_NO_FOLDED,
		.value_type = clock ? "cpu" : ev->spec.name,
		.value_unit = clock ? "nanoseconds" : "count",
		.period = p->cfg.period               ? p->cfg.period
			  : clock && p->cfg.frequency ? 1000000000ull / p->cfg.frequency
						      : 0,
		.memory_limit = p->keys.view_memory > 0 ? (size_t)p->keys.view_memory : 0,
	};

	if (p->flamegraph && wall_worth(p, ev, &spec.ns_per_sample))
		spec.flags |= TRACERIG_STACKS_WALL;

	return tracerig_internal(p->svc)->stacks_open(p->ctx, &spec);
}

/* cpu.folded, cpu.svg (offered to the core's wall-clock view of that
 * archive) and cpu.pb.gz, from the stack sink. */
static int write_stacks(struct perf *p, struct tracerig_archive *ar, struct conv_out *o)
{
	size_t n_ev;
	const struct pc_opened *ev = pc_events(p->pc, &n_ev);
	struct tracerig_stacks_stats st;
	uint64_t ns;
	int ret = tracerig_internal(p->svc)->stacks_write(o->sink, ar, &st);

	if (ret < 0)
		return ret;
	p->svc->run->counter_set(p->ctx, "unknown_frames_folded", st.folded_away);
	report_spill(p, &st);
	if (!p->flamegraph || !st.count)
		return 0;
	if (!wall_worth(p, &ev[0], &ns))
		p->svc->run->log(p->ctx, TRACERIG_LOG_INFO,
				 "%s is sampled by occurrences, not time: "
				 "cpu.folded stays out of the wall-clock view",
				 ev[0].spec.name);
	else
		p->svc->run->counter_set(p->ctx, "ns_per_sample", ns ? ns : st.ns_per_sample);
	return 0;
}

/* What a conversion made, into `ar`: its counters, perf.data.txt closed,
 * cpu.folded and cpu.svg (offered to the core's wall-clock view of that
 * archive), cpu.pb.gz.  Frees o. */
static int write_outputs(struct perf *p, struct tracerig_archive *ar, struct conv_out *o)
{
	const struct sc_stats *st = &o->st;
	int ret = close_entry(p, o->txt, "perf.data.txt");

	o->txt = NULL;
	if (ret < 0)
		goto out;
	p->svc->run->counter_set(p->ctx, "frames", st->frames);
	p->svc->run->counter_set(p->ctx, "unresolved_frames", st->unresolved);
	p->svc->run->counter_set(p->ctx, "mappings_replayed", st->mappings);
	p->svc->run->counter_set(p->ctx, "stacks_cut", st->stacks_cut);
	if (st->stacks_cut)
		p->svc->run->log(p->ctx, TRACERIG_LOG_WARN,
				 "%llu sample(s) reached the callchain limit "
				 "of %u frames: their outermost frames are missing, and cpu.folded "
				 "roots them at [cut at max_stack] (raise sysctl "
				 "kernel.perf_event_max_stack, or [perf_events] max_stack)",
				 (unsigned long long)st->stacks_cut, st->max_stack);
	if (o->uw)
		report_unwinding(p, o->uw);
	p->svc->run->log(p->ctx, TRACERIG_LOG_INFO,
			 "%llu samples, %llu frames (%llu without a "
			 "symbol)",
			 (unsigned long long)st->samples, (unsigned long long)st->frames,
			 (unsigned long long)st->unresolved);
	if (o->sink) {
		ret = write_stacks(p, ar, o);
		if (ret < 0)
			goto out;
	}
out:
	free_outputs(p, o);
	return ret;
}

/* The conversion made while collecting, finished: what the thread had
 * not reached, then the outputs. */
static int finish_live(struct perf *p, struct tracerig_archive *ar)
{
	struct ls_stats ls;
	char why[1024];
	int ret;

	/* The last samples' frames: the unwinding thread's tail first. */
	if (p->bg)
		uw_bg_join(p->bg);
	ret = ls_finish(p->live, why, sizeof(why));

	ls_get_stats(p->live, &ls);
	ls_free(p->live);
	p->live = NULL;
	ret = sc_close(p->out.cv, ret, why, sizeof(why));
	p->out.cv = NULL;
	if (ret < 0) {
		p->svc->run->log(p->ctx, TRACERIG_LOG_ERROR, "%s", why);
		free_outputs(p, &p->out);
		return ret;
	}
	p->svc->run->counter_set(p->ctx, "converted_while_collecting_bytes", ls.bytes);
	p->svc->run->log(p->ctx, TRACERIG_LOG_INFO,
			 "converted %llu KiB of perf.data while collecting "
			 "(%llu steps, %llu ms of CPU at nice 19, finished at nice %d)",
			 (unsigned long long)(ls.bytes >> 10), (unsigned long long)ls.steps,
			 (unsigned long long)(ls.cpu_ns / 1000000), ls.final_nice);
	return write_outputs(p, ar, &p->out);
}

/* perf.data.txt, cpu.folded and cpu.svg, cpu.pb.gz of the recording at
 * `data_path` (the session's, or a flight snapshot's window), into `ar`;
 * cpu.folded is offered to the core's wall-clock view of that archive. */
static int convert(struct perf *p, struct tracerig_archive *ar, const char *data_path)
{
	struct conv_out o = { 0 };
	struct unwinder *uw = NULL;
	FILE *txt = NULL;
	char why[1024];
	int ret;

	if (!p->script && !p->flamegraph && !tracerig_internal(p->svc)->pprof_wanted(p->ctx))
		return 0;
	if (p->bg)
		uw_bg_join(p->bg);
	uw = p->cfg.dwarf_stack_bytes ? uw_new(p->svc, p->ctx, p->objects) : NULL;
	if (p->cfg.dwarf_stack_bytes && !uw) {
		p->svc->run->log(p->ctx, TRACERIG_LOG_ERROR, "out of memory");
		return -ENOMEM;
	}
	if (p->script) {
		txt = create_entry(p, ar, "perf.data.txt", 1);
		if (!txt) {
			uw_free(uw);
			return -EIO;
		}
	}
	/* txt and uw are o's from here on, freed with it. */
	ret = open_outputs(p, txt, uw, &o, why, sizeof(why));
	if (ret == 0) {
		ret = sc_close(o.cv, sc_feed_file(o.cv, data_path, why, sizeof(why)), why,
			       sizeof(why));
		o.cv = NULL;
	}
	if (ret < 0) {
		p->svc->run->log(p->ctx, TRACERIG_LOG_ERROR, "%s", why);
		free_outputs(p, &o);
	} else {
		ret = write_outputs(p, ar, &o);
	}
	return ret;
}

static int perf_flush(void *state, struct tracerig_archive *ar)
{
	struct perf *p = state;
	int ret;

	if (!p->pc)
		return 0;
	ret = finish_perf_data(p);
	if (ret < 0) {
		p->svc->run->log(p->ctx, TRACERIG_LOG_ERROR, "cannot finish perf.data: %s",
				 strerror(-ret));
		return ret;
	}
	if (p->live)
		return finish_live(p, ar);
	return convert(p, ar, p->data_path);
}

/* Flight mode: perf.data of the last window, cut from the chunks with
 * their side-band (window.c), then converted as a whole recording is. */
static int perf_snapshot(void *state, struct tracerig_archive *ar, uint64_t from_ns,
			 uint64_t to_ns)
{
	struct perf *p = state;
	const struct pc_opened *ev;
	struct feature_text t;
	struct pd_features f;
	struct pc_window win;
	struct pd_writer *w = NULL;
	char path[PATH_MAX], why[1024];
	uint64_t kept = 0;
	size_t n_ev;
	int ret;

	if (!p || !p->pc)
		return 0;
	if (snprintf(path, sizeof(path), "%s/perf.data",
		     tracerig_internal(p->svc)->archive_dir(ar)) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	ret = pc_window_open(p->pc, from_ns, &win);
	if (ret < 0) {
		p->svc->run->log(p->ctx, TRACERIG_LOG_ERROR,
				 "snapshot: cannot read the recording's "
				 "chunks: %s",
				 strerror(-ret));
		return ret;
	}
	ev = pc_events(p->pc, &n_ev);
	fill_features(p, &t, &f);
	ret = pw_cut(&win, ev, n_ev, f.tracing_data, f.tracing_data_len, from_ns, to_ns, path, &w,
		     &kept, why, sizeof(why));
	if (ret < 0)
		p->svc->run->log(p->ctx, TRACERIG_LOG_ERROR, "snapshot: %s", why);
	else if ((ret = pc_window_finish(&win, w, &f)) < 0)
		p->svc->run->log(p->ctx, TRACERIG_LOG_ERROR,
				 "snapshot: cannot finish perf.data: %s", strerror(-ret));
	free((void *)f.tracing_data);
	pc_window_close(&win);
	if (ret < 0)
		return ret;
	p->svc->run->counter_set(p->ctx, "snapshot_samples", kept);
	p->svc->run->log(p->ctx, TRACERIG_LOG_INFO, "snapshot: %llu samples in the window",
			 (unsigned long long)kept);
	return convert(p, ar, path);
}

static void perf_fini(void *state)
{
	struct perf *p = state;

	stop_remember_thread(p);
	ls_free(p->live); /* before the collector it reads goes */
	free_outputs(p, &p->out);
	if (p->bg)
		uw_bg_join(p->bg); /* before the events it reads go */
	pc_close(p->pc);
	uw_bg_free(p->bg);
	uw_objects_free(p->objects);
	free(p);
}

#define BIND(field) TRACERIG_BIND(struct perf_settings, field)
/* One key per paragraph, as the reference lists them. */
/* clang-format off */
static const struct tracerig_key perf_keys[] = {
	{ .name = "events", .type = TRACERIG_KEY_LIST, .default_value = "cpu-clock",
	  BIND(events),
	  .description = "Events to sample, as perf list names them: cpu-clock, task-clock, hardware events "
	  "(cycles, instructions, cache-misses, branch-misses, ...) and tracepoints "
	  "subsystem:event (sched:sched_switch); tracepoints are recorded at every occurrence "
	  "with their payload." },
	{ .name = "optional_events", .type = TRACERIG_KEY_LIST, .default_value = "",
	  BIND(optional_events),
	  .description = "Events sampled where this kernel has them and left out (with a log line) where it "
	  "does not, e.g. sched:sched_stat_sleep, which needs CONFIG_SCHEDSTATS." },
	{ .name = "frequency", .type = TRACERIG_KEY_INT, .default_value = "999", .min = 1,
	  .max = 1000000, BIND(frequency),
	  .description = "Samples per second per CPU for cpu-clock, task-clock and hardware events; at most "
	  "kernel.perf_event_max_sample_rate." },
	{ .name = "period", .type = TRACERIG_KEY_INT, .default_value = "0", .max = 1LL << 40,
	  BIND(period),
	  .description = "Sample every N events instead of at a frequency (0 = use frequency)." },
	TR_CALLCHAIN_KEY(TR_CALLCHAIN_CHOICES, BIND(callchain), "with every sample",
			 "  Samples the unwind queue cannot hold are unwound when converting (see "
			 "unwind_queue_bytes); none records the sampled address only."),
	TR_DWARF_STACK_BYTES_KEY(PC_MAX_STACK_BYTES, BIND(dwarf_stack_bytes), "sample",
				 ", bigger copies cost more per sample and more perf.data."),
	{ .name = "unwind_queue_bytes", .type = TRACERIG_KEY_INT, .default_value = "16777216",
	  .min = 0, .max = 1LL << 30, BIND(unwind_queue_bytes),
	  .description = "callchain = dwarf: samples are unwound while collecting, from a queue of at most "
	  "this many bytes of samples (16 MiB: about 2000 samples of 8 KiB of stack); those "
	  "that find it full, and all of them with 0, are unwound when converting instead." },
	{ .name = "max_stack", .type = TRACERIG_KEY_INT, .default_value = "0", .min = 0,
	  .max = 65535, BIND(max_stack),
	  .description = "Deepest callchain the kernel records per sample, frames from the innermost "
	  "(perf record --max-stack); 0: the kernel's kernel.perf_event_max_stack (127 by default), "
	  "which also bounds this one.  A stack cut there lacks its outermost frames: cpu.folded "
	  "roots it at [cut at max_stack] and the manifest counts stacks_cut." },
	{ .name = "kernel", .type = TRACERIG_KEY_BOOL, .default_value = "yes", BIND(kernel),
	  .description = "Sample kernel code and keep kernel frames (no = user space only)." },
	{ .name = "context_switches", .type = TRACERIG_KEY_BOOL, .default_value = "no",
	  BIND(context_switches),
	  .description = "Record every context switch (PERF_RECORD_SWITCH, perf record --switch-events)." },
	{ .name = "hardware_fallback", .type = TRACERIG_KEY_ENUM, .default_value = "fail",
	  .choices = "fail,cpu-clock,skip", BIND(hardware_fallback),
	  .description = "When a hardware event is not available (VMs have no PMU): fail the backend, sample "
	  "cpu-clock instead, or leave the event out." },
	{ .name = "ring_pages", .type = TRACERIG_KEY_INT, .default_value = "256", .min = 8,
	  .max = 65536, BIND(ring_pages),
	  .description = "Ring buffer pages per CPU (a power of two); raise it when lost_samples is not 0." },
	{ .name = "script", .type = TRACERIG_KEY_BOOL, .default_value = "yes", BIND(script),
	  .description = "Write perf.data.txt (perf script text, read by PerfView and TraceEvent)." },
	{ .name = "convert_while_collecting", .type = TRACERIG_KEY_BOOL, .default_value = "yes",
	  BIND(convert_while_collecting),
	  .description = "Record mode: perf.data.txt, cpu.folded and cpu.pb.gz are made while "
	  "collecting, by a thread at nice 19 that follows perf.data (with callchain = dwarf, as "
	  "far as the samples are unwound while collecting), so that the archive is ready "
	  "moments after collection ends however long it ran; no converts everything once "
	  "collection ends." },
	{ .name = "flamegraph", .type = TRACERIG_KEY_BOOL, .default_value = "yes",
	  BIND(flamegraph),
	  .description = "Write cpu.folded (stacks rooted comm-PID;tcomm-TID, weights in samples) and the "
	  "flame graph cpu.svg of the first event; it is the on-CPU side of the wall-clock view, "
	  "each sample worth the period it was taken at." },
	{ .name = "view_memory", .type = TRACERIG_KEY_INT, .default_value = "67108864",
	  .min = 0, .max = 1LL << 40, BIND(view_memory),
	  .description = "Bytes that cpu.folded's distinct lines, and cpu.pb.gz's samples, may each hold "
	  "in memory (64 MiB); beyond, they go to unlinked files in the staging directory "
	  "(the lines sorted, merged back into cpu.folded at the end; the samples encoded, "
	  "appended to cpu.pb.gz, where a stack on both sides of a spill is two samples that "
	  "pprof sums).  Every stack is rooted at, and every sample labelled with, its PID, so "
	  "a long system-wide session's views grow with every process it sees; 0: all in "
	  "memory.  Below about 1 MiB, the tables' own first sizes exceed the bound and "
	  "cpu.pb.gz spills at nearly every sample: right, but slow." },
	{ .name = NULL },
};
/* clang-format on */

TRACERIG_PLUGIN = {
	.abi_version = TRACERIG_ABI_VERSION,
	.name = "perf_events",
	.version = PACKAGE_VERSION,
	.kind = TRACERIG_PLUGIN_SOURCE,
	.description = "CPU samples, hardware events and tracepoints via perf_event_open, "
		       "written as perf.data, perf.data.txt and cpu.svg",
	.package = "tracerig-perf-events",
	.keys = perf_keys,
	.caps = TRACERIG_CAP_FLIGHT,
	.internal_version = TRACERIG_INTERNAL_VERSION,
	.validate = perf_validate,
	.check = perf_check,
	.init = perf_init,
	.start = perf_start,
	.stop = perf_stop,
	.flush = perf_flush,
	.fini = perf_fini,
	.snapshot = perf_snapshot,
};
