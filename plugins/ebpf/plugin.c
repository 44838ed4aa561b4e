/* ebpf: where threads wait — off-CPU time with kernel and user stacks,
 * measured at each context switch by a BPF program and aggregated in the
 * kernel (collector.c, offcpu.bpf.c), written as offcpu.folded/.svg and
 * offered to the core's wall-clock view (both through the core's stack
 * sink), which joins it with
 * an on-CPU source's samples.  In flight mode the cumulative totals are
 * read at every bucket boundary (buckets.c) and a snapshot writes the
 * totals now minus those before its window.  This file is the glue: keys,
 * the notification and bucket threads, the vtable. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracerig-private/ext.h"

#include "lib/callchain.h"
#include "lib/keyerror.h"
#include "lib/unwind.h"

#include "buckets.h"
#include "cfimaps.h"
#include "collector.h"
#include "fallback.h"
#include "frames.h"
#include "script.h"
#include "ustacks.h"

/* Flight mode: totals are read every window / BUCKETS_PER_WINDOW, at
 * least every BUCKET_MIN_NS. */
#define BUCKETS_PER_WINDOW 8
#define BUCKET_MIN_NS 250000000ull

/* The profile's [ebpf] keys, bound by the core. */
struct ebpf_settings {
	int hook, threads, callchain, cfi_fallback; /* indexes of the choices */
	struct tracerig_list states;
	long long min_block_us, max_block_us, sample_period_us, stack_storage_size, stack_depth,
		aggregation_size, max_threads, dwarf_stack_bytes, cfi_max_rows, cfi_max_processes,
		oncpu_frequency;
	int wall, oncpu, oncpu_script;
};

struct ebpf {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct ebpf_settings keys;
	struct oc_config cfg;
	struct oc_collector *oc;
	struct us_table *us; /* callchain = dwarf: intervals unwound in user space */
	struct sc_script *script; /* oncpu_script: the samples for perf.data.txt */
	struct cfi_maps *cfi;     /* callchain = cfi: the walker's tables, kept on the
	                       * notification thread */
	dev_t self_dev;           /* callchain = cfi: tracerig's own executable */
	ino_t self_ino;
	int wall;

	pthread_t thread;
	int thread_started;
	atomic_int stopping;
	int wake_fd; /* an eventfd: the notification thread's poll ends at once */
	uint64_t notified;
	uint64_t real; /* flush: the time measured (the sink sums the weights) */
	/* callchain = dwarf's table: filled on the notification thread, read
	 * by flight mode's bucket thread and snapshots. */
	pthread_mutex_t us_lock;

	/* Flight mode (flight_ns > 0): the bucket thread reads the totals
	 * every bucket_ns into `ring`; snapshots read the ring.  ring_lock
	 * guards the ring and, with tick, the thread's wait. */
	uint64_t flight_ns, bucket_ns, start_ns;
	struct bk_ring *ring;
	pthread_mutex_t ring_lock;
	pthread_cond_t tick;
	pthread_t bucket_thread;
	int bucket_started;
	int bucket_failed; /* the reading failed once: said in the log */
};

/* The totals (or a window's part of them) that offcpu.folded is written
 * from: the kernel's entries, callchain = dwarf's with their frames, and
 * the counters. */
struct totals {
	struct oc_entry *agg;
	size_t n_agg;
	struct oc_entry *us;
	const uint64_t **us_ips;
	size_t *us_n_ips;
	size_t n_us;
	uint64_t c[OFFCPU_CNT__MAX];
	struct us_stats st;
};

/* What a set of entries is written as: off-CPU intervals weighted by
 * their time, or on-CPU samples by their number. */
struct view {
	const char *name, *title; /* NAME.folded, .svg, .pb.gz */
	enum tracerig_time what;
};

static const struct view offcpu_view = { "offcpu", "Off-CPU time", TRACERIG_TIME_OFFCPU };
static const struct view oncpu_view = { "oncpu", "On-CPU samples", TRACERIG_TIME_ONCPU };

static void log_libbpf(void *arg, int level, const char *msg)
{
	struct ebpf *e = arg;

	e->svc->run->log(e->ctx, level == 1 ? TRACERIG_LOG_WARN : TRACERIG_LOG_DEBUG, "%s", msg);
}

/* The states key's items as a mask; the first word that is no state is
 * handed back in *wrong (NULL: the list is empty). */
static int parse_states(const struct tracerig_list *list, uint32_t *mask, const char **wrong)
{
	static const struct {
		const char *name;
		uint32_t bits;
	} names[] = {
		{ "all", OFFCPU_STATE_ALL },
		{ "preempted", OFFCPU_STATE_PREEMPTED },
		{ "running", OFFCPU_STATE_PREEMPTED },
		{ "interruptible", OFFCPU_STATE_INTERRUPTIBLE },
		{ "S", OFFCPU_STATE_INTERRUPTIBLE },
		{ "uninterruptible", OFFCPU_STATE_UNINTERRUPTIBLE },
		{ "D", OFFCPU_STATE_UNINTERRUPTIBLE },
		{ "idle", OFFCPU_STATE_IDLE },
		{ "other", OFFCPU_STATE_OTHER },
	};
	*mask = 0;
	for (size_t item = 0; item < list->n; item++) {
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (strcmp(list->items[item], names[i].name) == 0) {
				*mask |= names[i].bits;
				break;
			}
		}
		if (i == sizeof(names) / sizeof(names[0])) {
			*wrong = list->items[item];
			return -EINVAL;
		}
	}
	*wrong = NULL;
	return *mask ? 0 : -EINVAL;
}

/* The sampler's keys: a rate the kernel allows, stacks it can walk. */
static void judge_oncpu(const struct tracerig_services *say, struct tracerig_ctx *ctx,
			const struct ebpf_settings *k, int *wrong, char *first, size_t first_len)
{
	unsigned long long max_rate = 0;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");

	if (f) {
		if (fscanf(f, "%llu", &max_rate) != 1)
			max_rate = 0;
		fclose(f);
	}
	if (max_rate && (unsigned long long)k->oncpu_frequency > max_rate)
		tr_key_error(say, ctx, wrong, first, first_len, "oncpu_frequency",
			     "%lld is above kernel.perf_event_max_sample_rate = %llu: lower it, or "
			     "raise the limit (sysctl kernel.perf_event_max_sample_rate=%lld)",
			     k->oncpu_frequency, max_rate, k->oncpu_frequency);
	if (k->callchain == TR_CALLCHAIN_DWARF)
		tr_key_error(say, ctx, wrong, first, first_len, "callchain",
			     "oncpu samples walk user stacks in the kernel: use callchain = cfi "
			     "(or fp) with oncpu = yes");
}

/* What the key table cannot judge of the bound keys: how many values are
 * wrong, each said with its line when `say` is the services (validate),
 * only counted otherwise, the first kept in `first` ("key: message"). */
static int judge_keys(const struct tracerig_services *say, struct tracerig_ctx *ctx,
		      const struct ebpf_settings *k, uint32_t *state_mask, char *first,
		      size_t first_len)
{
	const char *word;
	int wrong = 0;

	/* An item that is no state the core said already, with its line (the
	 * key's choices): only counted here.  An empty list is said here. */
	if (parse_states(&k->states, state_mask, &word) < 0) {
		if (word)
			tr_key_error(NULL, ctx, &wrong, first, first_len, "states",
				     "'%s' is not a thread state", word);
		else
			tr_key_error(
				say, ctx, &wrong, first, first_len, "states",
				"no thread state given: use interruptible, uninterruptible, idle, "
				"preempted, other or all, separated by commas");
	}
	if (k->max_block_us && k->max_block_us < k->min_block_us)
		tr_key_error(say, ctx, &wrong, first, first_len, "max_block_us",
			     "%lld is below min_block_us = %lld: nothing would be recorded",
			     k->max_block_us, k->min_block_us);
	if (k->callchain == TR_CALLCHAIN_DWARF && !UW_AVAILABLE)
		tr_key_error(say, ctx, &wrong, first, first_len, "callchain", "%s",
			     TR_CALLCHAIN_DWARF_UNAVAILABLE);
	if (k->callchain == TR_CALLCHAIN_CFI && !UW_AVAILABLE)
		tr_key_error(say, ctx, &wrong, first, first_len, "callchain", "%s",
			     TR_CALLCHAIN_CFI_UNAVAILABLE);
	if (k->oncpu)
		judge_oncpu(say, ctx, k, &wrong, first, first_len);
	if (k->oncpu && k->callchain == TR_CALLCHAIN_CFI && k->cfi_fallback == CFI_FALLBACK_DWARF)
		tr_key_error(say, ctx, &wrong, first, first_len, "cfi_fallback",
			     "oncpu samples cannot fall back to dwarf (stacks are taken in the "
			     "kernel): use cfi_fallback = fp or refuse");
	return wrong;
}

/* Every wrong value said before any plugin starts (the core stops the
 * run), so that init and check need not say them. */
static int ebpf_validate(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	struct ebpf_settings keys;
	uint32_t state_mask;
	char first[512];
	int ret;

	if ((ret = svc->run->config_bind(ctx, &keys)) < 0)
		return ret;
	judge_keys(svc, ctx, &keys, &state_mask, first, sizeof(first));
	return 0;
}

/* ---- notification thread: remember processes while they are alive ---- */

/* callchain = cfi: the tables of a process first seen, exec'd, or whose
 * walks met code mapped since its tables were loaded. */
static void load_tables(struct ebpf *e, uint32_t tgid)
{
	uint64_t t0 = e->svc->run->clock_ns();
	char exe[64];
	struct stat st;
	int ret;

	/* The launched command before its exec is a copy of tracerig: the
	 * tables of our own libraries (a tenth of a second) would only delay
	 * those of the program, whose exec is announced next. */
	snprintf(exe, sizeof(exe), "/proc/%u/exe", tgid);
	if (stat(exe, &st) == 0 && st.st_dev == e->self_dev && st.st_ino == e->self_ino)
		return;
	ret = cfi_maps_load(e->cfi, (pid_t)tgid);
	e->svc->run->log(e->ctx, TRACERIG_LOG_DEBUG,
			 "callchain = cfi: tables of %u loaded in %.1f ms", tgid,
			 (e->svc->run->clock_ns() - t0) / 1e6);

	if (ret < 0 && ret != -ESRCH && ret != -ENOENT)
		e->svc->run->log(e->ctx, TRACERIG_LOG_DEBUG,
				 "callchain = cfi: cannot load the tables of %u: %s", tgid,
				 strerror(-ret));
}

static void on_event(void *arg, const struct offcpu_event *ev)
{
	struct ebpf *e = arg;
	int ret;

	e->notified++;
	if (ev->kind == OFFCPU_EV_CFI_STALE) {
		/* Remembered again: the tables' objects are opened through
		 * the process model, which must know the new mappings. */
		(void)tracerig_internal(e->svc)->symbolizer_remember(e->ctx, (pid_t)ev->tgid);
		load_tables(e, ev->tgid);
		return;
	}
	if (e->us && ev->kind == OFFCPU_EV_EXEC) {
		pthread_mutex_lock(&e->us_lock);
		us_exec(e->us, ev->tgid);
		pthread_mutex_unlock(&e->us_lock);
	}
	e->svc->procs->pid_observe(e->ctx, (pid_t)ev->tgid);
	/* A process that exits before flush must still resolve: snapshot its
	 * mappings now (again after an exec replaced them). */
	ret = tracerig_internal(e->svc)->symbolizer_remember(e->ctx, (pid_t)ev->tgid);
	if (ret < 0 && ret != -ESRCH && ret != -ENOENT && ret != -ENOSYS)
		e->svc->run->log(e->ctx, TRACERIG_LOG_DEBUG,
				 "cannot remember the mappings of %u: %s", ev->tgid,
				 strerror(-ret));
	if (e->cfi && ev->kind == OFFCPU_EV_EXEC)
		cfi_maps_forget(e->cfi, (pid_t)ev->tgid); /* its old image's */
	if (e->cfi)
		load_tables(e, ev->tgid);
}

/* callchain = dwarf: an interval unwound into the table, which flight
 * mode's threads read meanwhile. */
static void on_ustack(void *arg, const struct offcpu_ustack *u)
{
	struct ebpf *e = arg;

	pthread_mutex_lock(&e->us_lock);
	us_add(e->us, u);
	pthread_mutex_unlock(&e->us_lock);
}

static void *notify_thread(void *arg)
{
	struct ebpf *e = arg;
	uint64_t c[OFFCPU_CNT__MAX];
	/* callchain = dwarf: copies wake this thread only in batches (see
	 * offcpu.bpf.c), a short timeout takes the rest while their processes
	 * are likely still there. */
	int timeout_ms = e->us ? 20 : e->cfi ? 50 : 250;

	while (!atomic_load(&e->stopping)) {
		int ret = oc_poll(e->oc, timeout_ms, e->wake_fd, on_event, e);

		if (e->cfi)
			cfi_maps_retry(e->cfi);
		if (ret < 0) {
			e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
					 "reading process notifications failed: "
					 "%s (processes that exit may not resolve)",
					 strerror(-ret));
			break;
		}
		oc_counters(e->oc, c);
		if (e->cfg.oncpu_hz)
			e->svc->run->progress_set(e->ctx,
						  "%llu off-CPU intervals, %llu on-CPU samples",
						  (unsigned long long)c[OFFCPU_CNT_KEPT],
						  (unsigned long long)c[OFFCPU_CNT_ONCPU_SAMPLES]);
		else
			e->svc->run->progress_set(e->ctx, "%llu off-CPU intervals",
						  (unsigned long long)c[OFFCPU_CNT_KEPT]);
	}
	return NULL;
}

/* ---- the totals: now, and at bucket boundaries (flight mode) ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void totals_free(struct totals *t)
{
	free(t->agg);
	free(t->us);
	free(t->us_ips);
	free(t->us_n_ips);
	memset(t, 0, sizeof(*t));
}

/* Everything aggregated so far.  The user frames of callchain = dwarf's
 * entries stay the table's (its entries are never freed before fini). */
static int totals_read(struct ebpf *e, struct totals *t)
{
	int ret;

	memset(t, 0, sizeof(*t));
	oc_counters(e->oc, t->c);
	ret = oc_read(e->oc, &t->agg, &t->n_agg);
	if (ret < 0)
		return ret;
	if (!e->us)
		return 0;
	pthread_mutex_lock(&e->us_lock);
	t->n_us = us_count(e->us);
	us_get_stats(e->us, &t->st);
	if (t->n_us) {
		t->us = malloc(t->n_us * sizeof(*t->us));
		t->us_ips = malloc(t->n_us * sizeof(*t->us_ips));
		t->us_n_ips = malloc(t->n_us * sizeof(*t->us_n_ips));
	}
	if (t->n_us && (!t->us || !t->us_ips || !t->us_n_ips)) {
		pthread_mutex_unlock(&e->us_lock);
		totals_free(t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n_us; i++)
		t->us[i] = *us_entry(e->us, i, &t->us_ips[i], &t->us_n_ips[i]);
	pthread_mutex_unlock(&e->us_lock);
	return 0;
}

/* One boundary into the ring: the totals as they are now. */
static int bucket_take(struct ebpf *e)
{
	struct bk_totals b = { 0 };
	struct totals t;
	int ret = totals_read(e, &t);

	if (ret < 0)
		return ret;
	ret = bk_totals_from(&b, t.agg, t.n_agg);
	if (ret == 0)
		ret = bk_totals_set_us(&b, t.us, t.n_us);
	if (ret == 0) {
		/* After the read: every interval in these totals ended by then. */
		b.t_ns = now_ns();
		memcpy(b.counters, t.c, sizeof(b.counters));
		b.us_unwound = t.st.unwound;
		b.us_cut_short = t.st.cut_short;
		b.us_unmapped = t.st.unmapped;
		b.us_lost = t.st.lost;
		pthread_mutex_lock(&e->ring_lock);
		bk_ring_push(e->ring, &b);
		pthread_mutex_unlock(&e->ring_lock);
	}
	bk_totals_free(&b);
	totals_free(&t);
	return ret;
}

static void *bucket_thread(void *arg)
{
	struct ebpf *e = arg;
	uint64_t next = e->start_ns + e->bucket_ns;

	pthread_mutex_lock(&e->ring_lock);
	while (!atomic_load(&e->stopping)) {
		struct timespec at = { .tv_sec = (time_t)(next / 1000000000ull),
				       .tv_nsec = (long)(next % 1000000000ull) };
		uint64_t now;
		int ret;

		if (pthread_cond_timedwait(&e->tick, &e->ring_lock, &at) != ETIMEDOUT)
			continue; /* woken to stop, or spuriously */
		pthread_mutex_unlock(&e->ring_lock);
		ret = bucket_take(e);
		if (ret < 0 && !e->bucket_failed) {
			e->bucket_failed = 1;
			e->svc->run->log(
				e->ctx, TRACERIG_LOG_WARN,
				"cannot read the aggregated intervals "
				"at a bucket boundary: %s (snapshots may cover more than the "
				"window)",
				strerror(-ret));
		}
		now = now_ns();
		next += e->bucket_ns;
		if (next <= now) /* late: boundaries stay at least a bucket apart */
			next = now + e->bucket_ns;
		pthread_mutex_lock(&e->ring_lock);
	}
	pthread_mutex_unlock(&e->ring_lock);
	return NULL;
}

static int flight_setup(struct ebpf *e)
{
	pthread_condattr_t attr;
	int ret;

	e->bucket_ns = e->flight_ns / BUCKETS_PER_WINDOW;
	if (e->bucket_ns < BUCKET_MIN_NS)
		e->bucket_ns = BUCKET_MIN_NS;
	e->ring = bk_ring_new(bk_ring_cap_for(e->flight_ns, e->bucket_ns));
	if (!e->ring)
		return -ENOMEM;
	ret = pthread_condattr_init(&attr);
	if (ret == 0) {
		ret = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		if (ret == 0)
			ret = pthread_cond_init(&e->tick, &attr);
		pthread_condattr_destroy(&attr);
	}
	if (ret) {
		bk_ring_free(e->ring);
		e->ring = NULL;
		return -ret;
	}
	return 0;
}

/* ---- vtable ---- */

static int ebpf_snapshot(void *state, struct tracerig_archive *ar, uint64_t from_ns,
			 uint64_t to_ns);

/* Whether BPF works here: no key changes that, and what is wrong in the
 * keys validate said (the core's line counts it). */
static int ebpf_check(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
		      char *advice, size_t advice_len)
{
	struct ebpf_settings keys;
	char why[512];
	int ret = oc_check(advice, advice_len);

	if (ret < 0 || svc->run->config_bind(ctx, &keys) < 0 || keys.callchain != TR_CALLCHAIN_CFI)
		return ret;
	/* What the run will do: walk, fall back (a note), or refuse. */
	ret = oc_check_cfi(why, sizeof(why));
	if (cfi_fallback_choose(ret, why, keys.cfi_fallback, keys.oncpu, advice, advice_len) < 0)
		return ret;
	return 0;
}

/* The collector's configuration from the [ebpf] keys (but the hook, the
 * threads and the states, which init sets) and the targets. */
static void config_from_keys(struct ebpf *e, const struct tracerig_targets *t)
{
	const struct ebpf_settings *k = &e->keys;

	e->cfg.min_block_ns = (uint64_t)k->min_block_us * 1000;
	e->cfg.max_block_ns = (uint64_t)k->max_block_us * 1000;
	e->cfg.sample_period_ns = (uint64_t)k->sample_period_us * 1000;
	e->cfg.stack_storage = (uint32_t)k->stack_storage_size;
	e->cfg.stack_depth = (uint32_t)k->stack_depth;
	e->cfg.agg_entries = (uint32_t)k->aggregation_size;
	e->cfg.thread_entries = (uint32_t)k->max_threads;
	e->cfg.cfi = k->callchain == TR_CALLCHAIN_CFI;
	e->cfg.cfi_rows = (uint32_t)k->cfi_max_rows;
	e->cfg.cfi_processes = (uint32_t)k->cfi_max_processes;
	e->cfg.oncpu_hz = k->oncpu ? (uint32_t)k->oncpu_frequency : 0;
	e->cfg.oncpu_script = k->oncpu && k->oncpu_script;
	/* Decided at start, when the launched command exists. */
	e->cfg.filter_tgids = 0;
	e->cfg.cgroup = t->cgroup;
	e->cfg.lru = e->flight_ns != 0;
}

/* callchain = cfi where this kernel cannot run the walker: said plainly,
 * before the verifier would say it its way, and what cfi_fallback says
 * done (the keys' callchain becomes the fallback's). */
static int walker_usable(struct ebpf *e)
{
	char why[512], msg[1024];
	int probe, chosen;

	if (e->keys.callchain != TR_CALLCHAIN_CFI)
		return 0;
	probe = oc_check_cfi(why, sizeof(why));
	chosen = cfi_fallback_choose(probe, why, e->keys.cfi_fallback, e->keys.oncpu, msg,
				     sizeof(msg));
	if (chosen < 0) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR, "%s", msg);
		return probe;
	}
	if (chosen != TR_CALLCHAIN_CFI) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN, "%s", msg);
		e->svc->run->counter_set(e->ctx, "cfi_fallback_used", 1);
		e->keys.callchain = chosen;
	}
	return 0;
}

/* callchain = dwarf: the table of intervals unwound in user space, and
 * how much of each stack the kernel copies for it. */
static int dwarf_setup(struct ebpf *e)
{
	const struct ebpf_settings *k = &e->keys;
	int ret = us_new(e->svc, e->ctx, (size_t)k->stack_depth, &e->us);

	if (ret < 0) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR, "callchain = dwarf: %s",
				 strerror(-ret));
		return ret;
	}
	e->cfg.dwarf_stack_bytes =
		tr_dwarf_stack_bytes(k->dwarf_stack_bytes, OFFCPU_MAX_STACK_BYTES);
	return 0;
}

/* Load now, so that a refusal (rights, BTF, verifier) is reported
 * before anything starts. */
static int load_collector(struct ebpf *e)
{
	const struct tracerig_services *svc = e->svc;
	struct tracerig_ctx *ctx = e->ctx;
	char why[1024];
	int ret;

	oc_set_log(log_libbpf, e);
	ret = oc_open(&e->cfg, &e->oc, why, sizeof(why));
	if (ret < 0) {
		svc->run->log(ctx, TRACERIG_LOG_ERROR, "%s", why);
		oc_set_log(NULL, NULL);
		return ret;
	}
	if (e->us)
		oc_on_ustack(e->oc, on_ustack, e);
	if (e->script)
		oc_on_sample(e->oc, sc_add, e->script);
	if (e->cfg.cfi) {
		struct stat self;

		if (stat("/proc/self/exe", &self) == 0) {
			e->self_dev = self.st_dev;
			e->self_ino = self.st_ino;
		}
		ret = cfi_maps_new(svc, ctx, oc_cfi_rows_fd(e->oc), e->cfg.cfi_rows,
				   oc_cfi_procs_fd(e->oc), &e->cfi);
		if (ret < 0) {
			svc->run->log(ctx, TRACERIG_LOG_ERROR,
				      "callchain = cfi: cannot set up the tables: %s",
				      strerror(-ret));
			oc_close(e->oc);
			e->oc = NULL;
			oc_set_log(NULL, NULL);
			return ret;
		}
	}
	/* Stacks are named at flush, when processes may be gone and may have
	 * loaded libraries after they were first seen.  Not in flight mode:
	 * the core replays its side-band only before a flush, and would keep
	 * recording it for the whole session (docs/flight.md). */
	if (!e->flight_ns)
		tracerig_internal(svc)->symbolizer_model(ctx, TRACERIG_MODEL_WANTED);
	return 0;
}

static void log_loaded(struct ebpf *e)
{
	e->svc->run->log(
		e->ctx, TRACERIG_LOG_INFO, "context switches hooked with %s%s%s",
		oc_hook_name(e->oc),
		e->cfg.sample_period_ns ? ", sampling intervals in proportion to blocked time" : "",
		e->us    ? ", user stacks copied and unwound by CFI (callchain = dwarf)"
		: e->cfi ? ", user stacks walked in the kernel by CFI tables (callchain = cfi)"
			 : "");
	if (e->cfg.oncpu_hz)
		e->svc->run->log(e->ctx, TRACERIG_LOG_INFO,
				 "on-CPU samples: cpu-clock at %u Hz per CPU into a BPF program",
				 e->cfg.oncpu_hz);
	if (e->flight_ns)
		e->svc->run->log(e->ctx, TRACERIG_LOG_INFO,
				 "flight mode: totals read every %.3f s, %zu "
				 "boundaries kept",
				 e->bucket_ns / 1e9, bk_ring_cap(e->ring));
}

/* The states as a mask.  validate said every wrong value, and a run with
 * one never gets here: nothing is said twice, and none is ever used. */
static int keys_usable(struct ebpf *e)
{
	char why[512];

	if (!judge_keys(NULL, e->ctx, &e->keys, &e->cfg.state_mask, why, sizeof(why)))
		return 0;
	e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR, "%s", why);
	return -EINVAL;
}

/* The sampler's keys where validate cannot judge them: in flight mode,
 * whose snapshots hold off-CPU time only, it is refused. */
static int oncpu_usable(struct ebpf *e)
{
	/* Profiles once set it for the wall-clock view, which now weighs the
	 * on-CPU samples by what their source declares. */
	if (!e->keys.oncpu && e->svc->run->config_is_set(e->ctx, "oncpu_frequency"))
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "oncpu_frequency is no longer needed and is "
				 "ignored without oncpu = yes: the on-CPU source says what its "
				 "samples are worth (remove the key from the profile)");
	if (e->keys.oncpu && e->flight_ns) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR,
				 "oncpu = yes is not available in flight mode: snapshots hold "
				 "off-CPU time only (use perf_events for on-CPU samples)");
		return -EINVAL;
	}
	return 0;
}

/* oncpu_script: where the samples wait for flush, beside the staging
 * directory's entries but never one of them. */
static int script_setup(struct ebpf *e)
{
	const char *dir = e->svc->archive->staging_dir(e->ctx);
	int ret;

	if (!e->cfg.oncpu_script)
		return 0;
	ret = sc_new(dir, &e->script);
	if (ret < 0)
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR,
				 "oncpu_script: cannot make a file for the samples in %s: %s "
				 "(or set oncpu_script = no)",
				 dir, strerror(-ret));
	return ret;
}

static int ebpf_init(const struct tracerig_services *svc, struct tracerig_ctx *ctx, void **state)
{
	/* In the order of the hook and threads keys' choices. */
	static const enum oc_hook hooks[] = { OC_HOOK_AUTO, OC_HOOK_BTF, OC_HOOK_RAW };
	static const uint32_t threads[] = { OFFCPU_THREADS_ALL, OFFCPU_THREADS_USER,
					    OFFCPU_THREADS_KERNEL };
	const struct tracerig_targets *t = svc->procs->targets(ctx);
	struct ebpf *e = calloc(1, sizeof(*e));
	const struct ebpf_settings *k;
	int ret;

	if (!e)
		return -ENOMEM;
	e->svc = svc;
	e->ctx = ctx;
	k = &e->keys;
	atomic_init(&e->stopping, 0);
	e->wake_fd = -1;
	pthread_mutex_init(&e->us_lock, NULL);
	pthread_mutex_init(&e->ring_lock, NULL);
	if ((ret = svc->run->config_bind(ctx, &e->keys)) < 0) {
		free(e);
		return ret;
	}
	if (svc->run->flight_window(ctx, &e->flight_ns) != 1)
		e->flight_ns = 0;
	if (e->flight_ns && (ret = flight_setup(e)) < 0) {
		svc->run->log(ctx, TRACERIG_LOG_ERROR, "flight mode: cannot set up the buckets: %s",
			      strerror(-ret));
		free(e);
		return ret;
	}
	e->cfg.hook = hooks[k->hook];
	e->cfg.threads = threads[k->threads];
	if ((ret = keys_usable(e)) < 0 || (ret = walker_usable(e)) < 0)
		goto fail;
	config_from_keys(e, t);
	if (k->callchain == TR_CALLCHAIN_DWARF && (ret = dwarf_setup(e)) < 0)
		goto fail;
	e->wall = k->wall;
	if ((ret = oncpu_usable(e)) < 0 || (ret = script_setup(e)) < 0)
		goto fail;

	if ((ret = load_collector(e)) < 0)
		goto fail;
	log_loaded(e);
	*state = e;
	return 0;
fail:
	us_free(e->us);
	sc_free(e->script);
	bk_ring_free(e->ring);
	if (e->ring)
		pthread_cond_destroy(&e->tick);
	free(e);
	return ret;
}

/* -p and a launched command select processes; a cgroup alone does not. */
static int select_processes(struct ebpf *e, const struct tracerig_targets *t)
{
	int ret;

	e->cfg.filter_tgids = t->n_pids > 0 || t->command_pid > 0;
	oc_filter_tgids(e->oc, e->cfg.filter_tgids);
	if (!e->cfg.filter_tgids)
		return 0;
	for (size_t i = 0; i <= t->n_pids; i++) {
		pid_t pid = i < t->n_pids ? t->pids[i] : t->command_pid;

		if (pid <= 0)
			continue;
		ret = oc_add_tgid(e->oc, (uint32_t)pid);
		if (ret < 0) {
			e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR,
					 "cannot add process %d to the filter: %s", (int)pid,
					 strerror(-ret));
			return ret;
		}
		/* -p's processes walk whole from their first switch (the
		 * command is not exec'd yet: its tables come by event). */
		if (e->cfi && i < t->n_pids)
			load_tables(e, (uint32_t)pid);
	}
	return 0;
}

static int ebpf_start(void *state)
{
	struct ebpf *e = state;
	const struct tracerig_targets *t = e->svc->procs->targets(e->ctx);
	char why[512];
	int ret;

	if ((ret = select_processes(e, t)) < 0)
		return ret;
	ret = oc_attach(e->oc, why, sizeof(why));
	if (ret < 0) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR, "%s", why);
		return ret;
	}
	/* Without it the stop would wait for the poll's timeout, up to 250 ms. */
	e->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (e->wake_fd < 0) {
		ret = -errno;
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR, "cannot make an eventfd: %s",
				 strerror(-ret));
		oc_detach(e->oc);
		return ret;
	}
	ret = pthread_create(&e->thread, NULL, notify_thread, e);
	if (ret) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR,
				 "cannot start the notification thread: %s", strerror(ret));
		oc_detach(e->oc);
		return -ret;
	}
	(void)pthread_setname_np(e->thread, "tr-ebpf-notify");
	e->thread_started = 1;
	if (e->flight_ns) {
		e->start_ns = now_ns();
		ret = pthread_create(&e->bucket_thread, NULL, bucket_thread, e);
		if (ret) {
			e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR,
					 "cannot start the bucket thread: %s", strerror(ret));
			oc_detach(e->oc);
			return -ret;
		}
		(void)pthread_setname_np(e->bucket_thread, "tr-ebpf-bucket");
		e->bucket_started = 1;
	}
	return 0;
}

static void join_thread(struct ebpf *e)
{
	if (e->bucket_started) {
		pthread_mutex_lock(&e->ring_lock);
		atomic_store(&e->stopping, 1);
		pthread_cond_signal(&e->tick);
		pthread_mutex_unlock(&e->ring_lock);
		pthread_join(e->bucket_thread, NULL);
		e->bucket_started = 0;
	}
	if (!e->thread_started)
		return;
	atomic_store(&e->stopping, 1);
	if (eventfd_write(e->wake_fd, 1) < 0)
		e->svc->run->log(e->ctx, TRACERIG_LOG_DEBUG,
				 "cannot wake the notification thread: %s "
				 "(it ends at its poll's timeout)",
				 strerror(errno));
	pthread_join(e->thread, NULL);
	e->thread_started = 0;
}

static int ebpf_stop(void *state)
{
	struct ebpf *e = state;

	/* Detached, the maps hold everything recorded; flush reads them. */
	oc_detach(e->oc);
	join_thread(e);
	/* Notifications still queued: remember those processes too. */
	(void)oc_poll(e->oc, 0, -1, on_event, e);
	return 0;
}

/* Entry `name` of `ar` to write, or NULL with *ret set and said. */
static FILE *create_entry(struct ebpf *e, struct tracerig_archive *ar, const char *name, int *ret)
{
	FILE *f = e->svc->archive->fopen(ar, name);

	if (!f) {
		*ret = -errno;
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR, "cannot create %s: %s", name,
				 strerror(-*ret));
	}
	return f;
}

/* One aggregated entry as a stack: the user frames `uips` (from the
 * kernel's stack map or unwound in user space), the kernel's from its
 * stack map.  An off-CPU stack is taken inside our probe: its innermost
 * frames, the tracing machinery's, are left out.  An on-CPU sample's
 * stack starts where the timer interrupted: a probe there (ours, at a
 * context switch) was running, and keeps its frames, as in perf.data.txt. */
static int add_entry(struct ebpf *e, struct tracerig_stacks *sink, const struct oc_entry *en,
		     const uint64_t *uips, size_t nu, int ulost, uint64_t *kips, int oncpu)
{
	size_t nk = oc_stack(e->oc, en->key.kstack, kips, oc_stack_depth(e->oc));
	/* Flight mode's stack map evicts: a stack gone since is lost too. */
	int klost = en->key.kstack == OFFCPU_STACK_LOST ||
		    (en->key.kstack >= OFFCPU_STACK_FIRST_ID && nk == 0);
	pid_t pid = (pid_t)en->key.tgid;
	size_t kstart = oncpu ? 0 : fr_tracing_frames(e->svc, e->ctx, pid, kips, nk);
	char comm[OFFCPU_COMM_LEN + 1], tcomm[OFFCPU_COMM_LEN + 1];
	struct tracerig_stack st = {
		.pid = pid,
		.tid = (pid_t)en->key.pid,
		.comm = comm,
		.tcomm = tcomm,
		.user = uips,
		.n_user = nu,
		.kernel = kips + kstart,
		.n_kernel = nk - kstart,
		.flags = (ulost ? TRACERIG_STACK_USER_LOST : 0) |
			 (klost ? TRACERIG_STACK_KERNEL_LOST : 0),
		.count = en->val.count,
		.ns = en->val.weighted_ns,
	};

	memcpy(comm, en->val.comm, OFFCPU_COMM_LEN);
	comm[OFFCPU_COMM_LEN] = '\0';
	memcpy(tcomm, en->val.tcomm, OFFCPU_COMM_LEN);
	tcomm[OFFCPU_COMM_LEN] = '\0';
	e->real += en->val.real_ns;
	return tracerig_internal(e->svc)->stacks_add(sink, &st, 1);
}

/* callchain = dwarf's manifest counters: how many stacks were unwound,
 * how many the copy's size cut short (raise dwarf_stack_bytes), how many
 * were lost on the way (the kernel's counters say where). */
static void count_dwarf(struct ebpf *e, const struct us_stats *st)
{
	e->svc->run->counter_set(e->ctx, "dwarf_stack_bytes", oc_stack_bytes(e->oc));
	e->svc->run->counter_set(e->ctx, "dwarf_stacks_unwound", st->unwound);
	e->svc->run->counter_set(e->ctx, "dwarf_stacks_cut_short", st->cut_short);
	e->svc->run->counter_set(e->ctx, "dwarf_stacks_ended_unmapped", st->unmapped);
	e->svc->run->counter_set(e->ctx, "dwarf_stacks_lost_no_memory", st->lost);
	if (st->cut_short)
		e->svc->run->log(e->ctx, TRACERIG_LOG_INFO,
				 "%llu of %llu user stacks were cut short "
				 "by the copy's size (dwarf_stack_bytes = %u)",
				 (unsigned long long)st->cut_short, (unsigned long long)st->unwound,
				 oc_stack_bytes(e->oc));
}

/* The BPF program's counters (callchain = cfi's only when it walks, the
 * sampler's only when it samples; cfi's count the sampler's walks too). */
static void count_kernel(struct ebpf *e, const uint64_t *c)
{
	for (int i = 0; i < OFFCPU_CNT__MAX; i++) {
		if (!e->cfi && i >= OFFCPU_CNT_CFI_WALKS && i <= OFFCPU_CNT_CFI_READ_FAILED)
			continue;
		if (!e->cfg.oncpu_hz && i >= OFFCPU_CNT_ONCPU_SAMPLES &&
		    i <= OFFCPU_CNT_ONCPU_RING_FULL)
			continue;
		e->svc->run->counter_set(e->ctx, oc_counter_names[i], c[i]);
	}
	if (e->cfg.sample_period_ns)
		e->svc->run->counter_set(e->ctx, "sample_period_us",
					 e->cfg.sample_period_ns / 1000);
}

/* callchain = cfi's manifest counters: what the tables hold and what
 * found no room (raise cfi_max_rows), beside the walks' own counters. */
static void count_cfi(struct ebpf *e)
{
	struct cfi_maps_stats st;

	cfi_maps_get_stats(e->cfi, &st);
	e->svc->run->counter_set(e->ctx, "cfi_objects", st.objects);
	e->svc->run->counter_set(e->ctx, "cfi_objects_without_cfi", st.objects_no_cfi);
	e->svc->run->counter_set(e->ctx, "cfi_objects_no_room", st.rows_full);
	e->svc->run->counter_set(e->ctx, "cfi_rows_used", st.rows_used);
	e->svc->run->counter_set(e->ctx, "cfi_processes", st.processes);
	e->svc->run->counter_set(e->ctx, "cfi_table_loads", st.loads);
	e->svc->run->counter_set(e->ctx, "cfi_mappings_dropped", st.mappings_dropped);
	e->svc->run->counter_set(e->ctx, "cfi_table_loads_incomplete", st.incomplete_loads);
}

/* The entries of `t`, the kernel's and callchain = dwarf's, as stacks of
 * `sink` (an on-CPU view's when `oncpu`). */
static int add_totals(struct ebpf *e, struct tracerig_stacks *sink, const struct totals *t,
		      uint64_t *uips, uint64_t *kips, int oncpu)
{
	size_t depth = oc_stack_depth(e->oc);
	int ret;

	for (size_t i = 0; i < t->n_agg; i++) {
		const struct oc_entry *en = &t->agg[i];
		size_t nu = oc_stack(e->oc, en->key.ustack, uips, depth);

		ret = add_entry(e, sink, en, uips, nu,
				en->key.ustack == OFFCPU_STACK_LOST ||
					(en->key.ustack >= OFFCPU_STACK_FIRST_ID && nu == 0),
				kips, oncpu);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; i < t->n_us; i++) {
		ret = add_entry(e, sink, &t->us[i], t->us_ips[i], t->us_n_ips[i], 0, kips, oncpu);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* What was written and what was lost on the way (the counters `c`), with
 * the profile keys that would have kept it. */
static void log_written(struct ebpf *e, const uint64_t *c, const struct tracerig_stacks_stats *st,
			int flight)
{
	e->svc->run->log(e->ctx, TRACERIG_LOG_INFO,
			 "offcpu.folded: %zu stacks, %.3f s off-CPU in %llu "
			 "of %llu intervals (%llu below min_block_us)%s",
			 (size_t)st->stacks, st->ns / 1e9, (unsigned long long)c[OFFCPU_CNT_KEPT],
			 (unsigned long long)c[OFFCPU_CNT_INTERVALS],
			 (unsigned long long)c[OFFCPU_CNT_SHORT], flight ? " in the snapshot" : "");
	if (e->cfg.sample_period_ns)
		e->svc->run->log(
			e->ctx, TRACERIG_LOG_INFO,
			"sampled: %llu intervals recorded, %llu skipped; "
			"weights are blocked time / capture probability (%.3f s as measured, "
			"%.3f s estimated total)",
			(unsigned long long)c[OFFCPU_CNT_KEPT],
			(unsigned long long)c[OFFCPU_CNT_SAMPLED_OUT], e->real / 1e9, st->ns / 1e9);
	if (c[OFFCPU_CNT_KSTACK_DROPPED] || c[OFFCPU_CNT_USTACK_DROPPED])
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "%llu kernel and %llu user stacks did not fit "
				 "the stack map (shown as lost): raise stack_storage_size",
				 (unsigned long long)c[OFFCPU_CNT_KSTACK_DROPPED],
				 (unsigned long long)c[OFFCPU_CNT_USTACK_DROPPED]);
	if (c[OFFCPU_CNT_AGG_FULL] || c[OFFCPU_CNT_THREAD_FULL])
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "%llu intervals lost to full maps: raise "
				 "aggregation_size / max_threads",
				 (unsigned long long)c[OFFCPU_CNT_AGG_FULL] +
					 c[OFFCPU_CNT_THREAD_FULL]);
	if (c[OFFCPU_CNT_RETURN_UNSEEN])
		e->svc->run->log(
			e->ctx, TRACERIG_LOG_WARN,
			"%llu intervals lost: a thread got its CPU back "
			"from a task this kernel does not trace (no sched_switch event for it "
			"reaches any tracer), so when its wait ended is unknown; the manifest "
			"counts them as intervals_lost_return_unseen",
			(unsigned long long)c[OFFCPU_CNT_RETURN_UNSEEN]);
	if (st->unnamed)
		e->svc->run->log(e->ctx, TRACERIG_LOG_DEBUG, "%llu frame lookups found no symbol",
				 (unsigned long long)st->unnamed);
}

/* offcpu.folded's counters: what its weights add up to, and what was
 * actually measured (equal unless sample_period_us weighted the sampled
 * intervals). */
static void count_offcpu(struct ebpf *e, const struct totals *t,
			 const struct tracerig_stacks_stats *st)
{
	e->svc->run->counter_set(e->ctx, "blocked_us", st->ns / 1000);
	e->svc->run->counter_set(e->ctx, "blocked_us_measured", e->real / 1000);
	e->svc->run->counter_set(e->ctx, "unknown_frames_folded", st->folded_away);
	if (e->us)
		count_dwarf(e, &t->st);
	if (e->cfi)
		count_cfi(e);
}

static void count_oncpu(struct ebpf *e, const struct tracerig_stacks_stats *st)
{
	/* Without samples, what one would have stood for. */
	uint64_t period = st->ns_per_sample ? st->ns_per_sample : 1000000000ull / e->cfg.oncpu_hz;

	e->svc->run->counter_set(e->ctx, "oncpu_ns_per_sample", period);
	e->svc->run->counter_set(e->ctx, "oncpu_unknown_frames_folded", st->folded_away);
	e->svc->run->log(e->ctx, TRACERIG_LOG_INFO,
			 "oncpu.folded: %llu stacks, %llu samples of %.3f ms (%.3f s on-CPU)",
			 (unsigned long long)st->stacks, (unsigned long long)st->count,
			 period / 1e6, e->real / 1e9);
}

/* The view `v` of `t` (the whole session's totals at flush, a window's at
 * a snapshot; `flight`: a snapshot's) into `ar` through the core's stack
 * sink: its folded entry, flame graph and pprof profile, offered to the
 * core's wall-clock view of that archive, with its counters and log
 * lines. */
static int write_view(struct ebpf *e, struct tracerig_archive *ar, const struct view *v,
		      const struct totals *t, int flight)
{
	const struct tracerig_internal_services *in = tracerig_internal(e->svc);
	size_t depth = oc_stack_depth(e->oc);
	uint64_t *uips = calloc(depth, sizeof(*uips)), *kips = calloc(depth, sizeof(*kips));
	struct tracerig_stacks_spec spec = {
		.name = v->name,
		.title = v->title,
		.what = v->what,
		.flags = (e->wall ? TRACERIG_STACKS_WALL : 0) |
			 (v->what == TRACERIG_TIME_ONCPU ? TRACERIG_STACKS_MEAN_PERIOD : 0),
	};
	struct tracerig_stacks *sink = in->stacks_open(e->ctx, &spec);
	struct tracerig_stacks_stats st;
	int ret = -ENOMEM;

	e->real = 0;
	if (!uips || !kips || !sink)
		goto out;
	ret = add_totals(e, sink, t, uips, kips, v->what == TRACERIG_TIME_ONCPU);
	if (ret < 0)
		goto out;
	ret = in->stacks_write(sink, ar, &st);
	if (ret < 0)
		goto out;
	if (v->what == TRACERIG_TIME_ONCPU) {
		count_oncpu(e, &st);
	} else {
		count_offcpu(e, t, &st);
		log_written(e, t->c, &st, flight);
	}
out:
	if (ret == -ENOMEM)
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR, "out of memory writing %s.folded",
				 v->name);
	in->stacks_close(sink);
	free(kips);
	free(uips);
	return ret;
}

/* offcpu.folded, .svg and .pb.gz of `t`, with the program's counters. */
static int write_offcpu(struct ebpf *e, struct tracerig_archive *ar, const struct totals *t,
			int flight)
{
	count_kernel(e, t->c);
	return write_view(e, ar, &offcpu_view, t, flight);
}

/* Staged entry `name`'s path into path (len bytes); 0, or -1 when too
 * long. */
static int staged_path(struct ebpf *e, const char *name, char *path, size_t len)
{
	int n = snprintf(path, len, "%s/%s", e->svc->archive->staging_dir(e->ctx), name);

	return n >= 0 && (size_t)n < len ? 0 : -1;
}

/* perf.data.txt's name, unless another backend (perf_events) staged one:
 * then the samples go beside it. */
static const char *script_name(struct ebpf *e)
{
	char path[4096];
	struct stat st;

	if (staged_path(e, "perf.data.txt", path, sizeof(path)) == 0 && lstat(path, &st) == 0) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_INFO,
				 "perf.data.txt is another backend's: the on-CPU BPF samples "
				 "are in oncpu.data.txt");
		return "oncpu.data.txt";
	}
	return "perf.data.txt";
}

/* A perf.data.txt cut by a full disk is no record of the run (its last
 * sample half written, the rest missing): gone, and said, while
 * oncpu.folded keeps every sample. */
static void drop_partial(struct ebpf *e, const char *name, int err)
{
	char path[4096];
	int gone = staged_path(e, name, path, sizeof(path)) == 0 && unlink(path) == 0;

	e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR,
			 "cannot write %s: %s (%s; oncpu.folded has every sample)", name,
			 strerror(-err),
			 gone ? "left out of the archive" : "what was written is kept");
}

/* The samples, every one, as perf script text (script.h). */
static int write_script(struct ebpf *e, struct tracerig_archive *ar)
{
	const char *name = script_name(e);
	struct sc_stats st;
	int ret;
	FILE *f = create_entry(e, ar, name, &ret);

	if (!f)
		return ret;
	/* Written once, front to back, and never read back: the core
	 * deflates it on another CPU as it grows (-ENOTSUP: streaming is
	 * off) and frees what it has deflated, so packaging has little left
	 * to do and the staging directory holds little of it at a time. */
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	if (tracerig_internal(e->svc)->archive_append_only(e->ctx, name, 0) == 0)
		(void)tracerig_internal(e->svc)->archive_release(e->ctx, name, UINT64_MAX);
	ret = sc_write(e->script, e->oc, e->svc, e->ctx, f, &st);
	if (fclose(f) != 0 && !ret)
		ret = -errno;
	/* The samples' file is done with: its room goes back before the
	 * manifest and the log are written. */
	sc_free(e->script);
	e->script = NULL;
	if (ret < 0) {
		drop_partial(e, name, ret);
		return ret;
	}
	e->svc->run->counter_set(e->ctx, "oncpu_script_samples", st.samples);
	e->svc->run->counter_set(e->ctx, "oncpu_script_samples_not_kept", st.not_kept);
	if (st.not_kept)
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "%s: %llu samples not kept while collecting (%s); "
				 "oncpu.folded has them",
				 name, (unsigned long long)st.not_kept, strerror(st.keep_errno));
	if (st.stacks_gone)
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "%s: %llu samples' stacks were no longer in the kernel's table",
				 name, (unsigned long long)st.stacks_gone);
	e->svc->run->log(e->ctx, TRACERIG_LOG_INFO, "%s: %llu samples", name,
			 (unsigned long long)st.samples);
	return 0;
}

/* oncpu.folded, .svg and .pb.gz: the on-CPU samples of the session. */
static int write_oncpu(struct ebpf *e, struct tracerig_archive *ar)
{
	struct totals t;
	int ret;

	memset(&t, 0, sizeof(t));
	ret = oc_read_oncpu(e->oc, &t.agg, &t.n_agg);
	if (ret < 0) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR, "cannot read the on-CPU samples: %s",
				 strerror(-ret));
		return ret;
	}
	ret = write_view(e, ar, &oncpu_view, &t, 0);
	totals_free(&t);
	if (ret == 0 && e->script)
		ret = write_script(e, ar);
	return ret;
}

static int ebpf_flush(void *state, struct tracerig_archive *ar)
{
	struct ebpf *e = state;
	struct totals t;
	int ret = totals_read(e, &t);

	if (ret < 0) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR,
				 "cannot read the aggregated intervals: %s", strerror(-ret));
		return ret;
	}
	ret = write_offcpu(e, ar, &t, 0);
	totals_free(&t);
	if (ret == 0 && e->cfg.oncpu_hz)
		ret = write_oncpu(e, ar);
	return ret;
}

/* `t` (the totals now) minus the boundary `b` (NULL: zero), entries that
 * did not grow left out. */
static void totals_minus(struct totals *t, const struct bk_totals *b)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n_agg; i++)
		if (bk_delta_agg(b, &t->agg[i], &t->agg[n]))
			n++;
	t->n_agg = n;
	n = 0;
	for (size_t i = 0; i < t->n_us; i++) {
		if (bk_delta_us(b, i, &t->us[i], &t->us[n])) {
			t->us_ips[n] = t->us_ips[i];
			t->us_n_ips[n] = t->us_n_ips[i];
			n++;
		}
	}
	t->n_us = n;
	if (!b)
		return;
	for (int i = 0; i < OFFCPU_CNT__MAX; i++)
		t->c[i] = t->c[i] >= b->counters[i] ? t->c[i] - b->counters[i] : 0;
	t->st.unwound -= b->us_unwound <= t->st.unwound ? b->us_unwound : t->st.unwound;
	t->st.cut_short -= b->us_cut_short <= t->st.cut_short ? b->us_cut_short : t->st.cut_short;
	t->st.unmapped -= b->us_unmapped <= t->st.unmapped ? b->us_unmapped : t->st.unmapped;
	t->st.lost -= b->us_lost <= t->st.lost ? b->us_lost : t->st.lost;
}

/* Flight mode: what ended in [from_ns, to_ns] — the totals now minus the
 * newest boundary at or before from_ns, so at least the window and at
 * most a bucket (and one reading of the map) more; the counters too. */
static int ebpf_snapshot(void *state, struct tracerig_archive *ar, uint64_t from_ns,
			 uint64_t to_ns)
{
	struct ebpf *e = state;
	const struct bk_totals *b;
	struct totals t;
	uint64_t since, short_by;
	int ret;

	if (!e)
		return 0;
	ret = totals_read(e, &t);
	if (ret < 0) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR,
				 "snapshot: cannot read the aggregated "
				 "intervals: %s",
				 strerror(-ret));
		return ret;
	}
	pthread_mutex_lock(&e->ring_lock);
	b = bk_ring_base(e->ring, from_ns, &short_by);
	since = b ? b->t_ns : e->start_ns;
	totals_minus(&t, b);
	pthread_mutex_unlock(&e->ring_lock);
	if (short_by)
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "snapshot: its callback came late, the "
				 "oldest bucket kept starts %.3f s into the window: offcpu.folded "
				 "covers that much less",
				 short_by / 1e9);
	e->svc->run->counter_set(e->ctx, "snapshot_covers_ms",
				 to_ns > since ? (to_ns - since) / 1000000 : 0);
	e->svc->run->log(e->ctx, TRACERIG_LOG_INFO,
			 "snapshot: the intervals that ended in the last "
			 "%.3f s (window %.3f s, buckets of %.3f s)",
			 to_ns > since ? (to_ns - since) / 1e9 : 0.0, (to_ns - from_ns) / 1e9,
			 e->bucket_ns / 1e9);
	ret = write_offcpu(e, ar, &t, 1);
	totals_free(&t);
	return ret;
}

static void ebpf_fini(void *state)
{
	struct ebpf *e = state;

	join_thread(e);
	if (e->wake_fd >= 0)
		close(e->wake_fd);
	cfi_maps_free(e->cfi); /* before the maps it writes go */
	oc_close(e->oc);
	us_free(e->us);
	sc_free(e->script);
	oc_set_log(NULL, NULL);
	if (e->ring) {
		bk_ring_free(e->ring);
		pthread_cond_destroy(&e->tick);
	}
	pthread_mutex_destroy(&e->ring_lock);
	pthread_mutex_destroy(&e->us_lock);
	free(e);
}

#define BIND(field) TRACERIG_BIND(struct ebpf_settings, field)
/* One key per paragraph, as the reference lists them. */
/* clang-format off */
static const struct tracerig_key ebpf_keys[] = {
	{ .name = "hook", .type = TRACERIG_KEY_ENUM, .default_value = "auto",
	  .choices = "auto,tp_btf,raw_tp", BIND(hook),
	  .description = "How to hook the context switch: tp_btf where the kernel supports it (probed), "
	  "else the raw tracepoint." },
	{ .name = "threads", .type = TRACERIG_KEY_ENUM, .default_value = "all",
	  .choices = "all,user,kernel", BIND(threads),
	  .description = "Trace user threads only, kernel threads only, or both." },
	{ .name = "states", .type = TRACERIG_KEY_LIST, .default_value = "all", BIND(states),
	  .choices = "all,interruptible,S,uninterruptible,D,idle,preempted,running,other",
	  .description = "Thread states counted as off-CPU: interruptible (S: sleeps, pipes, locks), "
	  "uninterruptible (D: disk I/O, page faults), idle (idle kernel threads), "
	  "preempted (still runnable), other, or all." },
	{ .name = "min_block_us", .type = TRACERIG_KEY_INT, .default_value = "1",
	  .max = 3600000000LL, BIND(min_block_us),
	  .description = "Shortest off-CPU interval recorded, in microseconds." },
	{ .name = "max_block_us", .type = TRACERIG_KEY_INT, .default_value = "0",
	  .max = 3600000000LL, BIND(max_block_us),
	  .description = "Longest off-CPU interval recorded, in microseconds; 0 = no limit." },
	{ .name = "sample_period_us", .type = TRACERIG_KEY_INT, .default_value = "0",
	  .max = 3600000000LL, BIND(sample_period_us),
	  .description = "Low-overhead mode for busy machines: a thread's stacks are taken with probability "
	  "min(1, its recent mean blocked time / this period) and each recorded interval is "
	  "weighted by 1/probability, so totals stay unbiased; 0 = record every interval." },
	TR_CALLCHAIN_KEY(TR_CALLCHAIN_CHOICES_WITH_STACK, BIND(callchain),
			 "at switch-out (with dwarf, only for the intervals the sampler captures)", ""),
	TR_DWARF_STACK_BYTES_KEY(OFFCPU_MAX_STACK_BYTES, BIND(dwarf_stack_bytes), "captured interval",
				 " (counted: dwarf_stacks_cut_short), bigger copies cost more per context "
				 "switch.  Each thread holds its copy in kernel memory while it is off-CPU (at "
				 "most max_threads copies: 8 KiB x 1000 sleeping threads = 8 MiB)."),
	{ .name = "cfi_max_rows", .type = TRACERIG_KEY_INT, .default_value = "1048576",
	  .min = 4096, .max = 16777216, BIND(cfi_max_rows),
	  .description = "callchain = cfi: rows of compiled CFI the kernel holds at once, 16 bytes "
	  "each, allocated when the program loads (the default takes 16 MiB).  Every object "
	  "mapped by a traced process is compiled once and shared (Debian's libc: about "
	  "10,000 rows); an object that finds no room is walked by frame pointers, counted "
	  "(cfi_objects_no_room) and said once." },
	{ .name = "cfi_max_processes", .type = TRACERIG_KEY_INT, .default_value = "1024",
	  .min = 16, .max = 65536, BIND(cfi_max_processes),
	  .description = "callchain = cfi: processes whose mappings the kernel knows at once "
	  "(about 16 KiB each, taken as processes are seen); the stacks of processes beyond "
	  "keep their innermost frame only (cfi_stacks_no_table)." },
	{ .name = "stack_storage_size", .type = TRACERIG_KEY_INT, .default_value = "16384",
	  .min = 64, .max = 4194304, BIND(stack_storage_size),
	  .description = "Distinct stacks the kernel keeps; stacks that do not fit are counted "
	  "(kernel_stacks_dropped, user_stacks_dropped) and shown as lost.  In flight mode the "
	  "stacks used least recently make room instead (docs/flight.md)." },
	{ .name = "stack_depth", .type = TRACERIG_KEY_INT, .default_value = "127", .min = 1,
	  .max = 127, BIND(stack_depth),
	  .description = "Frames kept per kernel or user stack." },
	{ .name = "aggregation_size", .type = TRACERIG_KEY_INT, .default_value = "65536",
	  .min = 256, .max = 16777216, BIND(aggregation_size),
	  .description = "Distinct (thread, kernel stack, user stack) entries kept in the kernel; "
	  "intervals of new ones that do not fit are counted (intervals_lost_map_full).  In flight "
	  "mode the entries used least recently make room instead (docs/flight.md)." },
	{ .name = "max_threads", .type = TRACERIG_KEY_INT, .default_value = "32768", .min = 256,
	  .max = 4194304, BIND(max_threads),
	  .description = "Threads tracked at once (raw_tp hook only; tp_btf uses per-task storage); with "
	  "callchain = dwarf also the stack copies held at once (one per thread off-CPU)." },
	{ .name = "wall", .type = TRACERIG_KEY_BOOL, .default_value = "yes", BIND(wall),
	  .description = "Offer offcpu.folded to the wall-clock view: when an on-CPU source (perf_events) "
	  "runs in the same session, in any order, tracerig writes wall.folded and wall.svg, on- "
	  "and off-CPU time of the traced threads in one flame graph, leaves marked [on-cpu] / "
	  "[off-cpu]." },
	{ .name = "cfi_fallback", .type = TRACERIG_KEY_ENUM, .default_value = "refuse",
	  .choices = CFI_FALLBACK_CHOICES, BIND(cfi_fallback),
	  .description = "With callchain = cfi, on a kernel whose BPF programs cannot run the walker "
	  "(no bpf_loop or bpf_task_pt_regs: before Linux 5.17): refuse to start (said at --check "
	  "too), or record anyway with fp (user stacks stop at the first frame without frame "
	  "pointers) or dwarf (stack copies unwound in user space; not with oncpu = yes).  A "
	  "fallback is said at --check, in the log and in the manifest (cfi_fallback_used)." },
	{ .name = "oncpu", .type = TRACERIG_KEY_BOOL, .default_value = "no", BIND(oncpu),
	  .description = "Also sample where the traced threads run: a cpu-clock perf event per CPU "
	  "feeds a BPF program that takes each sample's stacks as the off-CPU ones are taken (with "
	  "callchain = cfi, user stacks of code without frame pointers walked whole in the kernel, "
	  "no stack copy leaving it), aggregated in the kernel and written as oncpu.folded, "
	  "oncpu.svg and oncpu.pb.gz (weights: samples), offered to the wall-clock view as its "
	  "on-CPU source.  Off-CPU time is still recorded.  Not with callchain = dwarf, nor in "
	  "flight mode." },
	{ .name = "oncpu_script", .type = TRACERIG_KEY_BOOL, .default_value = "yes",
	  BIND(oncpu_script),
	  .description = "With oncpu = yes: also write every sample, with its time, thread and "
	  "CPU, as perf script prints it, into perf.data.txt (oncpu.data.txt when another "
	  "backend wrote perf.data.txt), so that PerfView and perf script readers open the run.  "
	  "The kernel sends 64 bytes per sample for it, no stack, kept in an unnamed file under "
	  "TMPDIR; frames are named at the end of collection, and the text (0.7 to 3 KiB a sample, "
	  "deflated to 15 to 180 bytes as it is written, or kept whole until packaging with "
	  "[tracerig] stream = no) is staged there too: system-wide on many CPUs for long, mind "
	  "TMPDIR's room.  no: the aggregation only." },
	{ .name = "oncpu_frequency", .type = TRACERIG_KEY_INT, .default_value = "999", .min = 1,
	  .max = 20000, BIND(oncpu_frequency),
	  .description = "With oncpu = yes: samples per second and CPU (at most "
	  "kernel.perf_event_max_sample_rate).  Without it ignored, with a warning (profiles once set "
	  "it for the wall-clock view, which now weighs on-CPU samples by their source's period)." },
	{ .name = NULL },
};
/* clang-format on */

TRACERIG_PLUGIN = {
	.abi_version = TRACERIG_ABI_VERSION,
	.name = "ebpf",
	.version = PACKAGE_VERSION,
	.kind = TRACERIG_PLUGIN_SOURCE,
	.description = "off-CPU time (where threads wait) with kernel and user stacks, via eBPF",
	.package = "tracerig-ebpf",
	.keys = ebpf_keys,
	.caps = TRACERIG_CAP_FLIGHT,
	.internal_version = TRACERIG_INTERNAL_VERSION,
	.validate = ebpf_validate,
	.check = ebpf_check,
	.init = ebpf_init,
	.start = ebpf_start,
	.stop = ebpf_stop,
	.flush = ebpf_flush,
	.fini = ebpf_fini,
	.snapshot = ebpf_snapshot,
};
