/* mapharvest: JIT symbol maps (perf-PID.map, perfinfo-PID.map, jit-PID.dump)
 * from the traced processes, on the host or in containers, stored at the
 * archive root under their host PIDs and handed to the symbolizer.
 *
 * Which processes: -p PIDs, the launched command, their descendants, and
 * every process another backend observed (the core's PID registry).  A
 * harvester thread looks at new PIDs as soon as they are observed and polls
 * every poll_interval while the session runs, so that a process exiting
 * mid-session has had its files found and opened before it goes; stop takes
 * a last look and copies every file to its end.  This file is the glue:
 * keys, thread, vtable.  Finding and copying files is harvest.c, reading
 * /proc procinfo.c, opening container files lib/untrusted.c. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracerig-private/ext.h"

#include "dotnet.h"
#include "harvest.h"
#include "lib/procpid.h"
#include "lib/untrusted.h"
#include "lib/vec.h"

#define MAX_DESCENDANTS 4096


/* The profile's [mapharvest] keys, bound by the core. */
struct mapharvest_config {
	long long max_size, max_total, poll_ms;
	int cleanup, observed, dotnet_env, dotnet_enable;
};

struct mapharvest {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct mh_harvester h;
	struct mapharvest_config cfg;
	int subscribed;

	pthread_t thread;
	int thread_started;
	/* Held through each pass over the processes, which a flight
	 * snapshot makes from another thread. */
	pthread_mutex_t harvesting;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stopping;
	int stopped_in_flight; /* the final snapshot finishes the harvester */
	pid_t *queue; /* observed PIDs waiting for their first look */
	size_t n_queue, cap_queue;
};

static void on_observed(void *arg, pid_t pid)
{
	struct mapharvest *m = arg;

	pid_t *grown;

	pthread_mutex_lock(&m->lock);
	grown = tr_vec_grow(m->queue, &m->cap_queue, m->n_queue + 1, sizeof(*grown), 64);
	if (grown)
		m->queue = grown;
	/* Dropped only when out of memory; the next tick's pid_list round
	 * at stop still finds it. */
	if (m->n_queue < m->cap_queue) {
		m->queue[m->n_queue++] = pid;
		pthread_cond_signal(&m->cond);
	}
	pthread_mutex_unlock(&m->lock);
}

/* Before the state goes: the registry must not call into it any more. */
static void unsubscribe(struct mapharvest *m)
{
	if (m->subscribed)
		m->svc->procs->pid_unsubscribe(m->ctx, on_observed, m);
	m->subscribed = 0;
}

/* The explicit targets and their descendants. */
static void harvest_targets(struct mapharvest *m)
{
	const struct tracerig_targets *t = m->svc->procs->targets(m->ctx);
	pid_t *pids = NULL;
	size_t n = 0;

	for (size_t i = 0; i <= t->n_pids; i++) {
		pid_t root = i < t->n_pids ? t->pids[i] : t->command_pid;

		if (root <= 0)
			continue;
		mh_harvest(&m->h, root);
		if (tr_proc_descendants(root, &pids, &n, MAX_DESCENDANTS) < 0)
			break;
	}
	for (size_t i = 0; i < n; i++)
		mh_harvest(&m->h, pids[i]);
	free(pids);
}

static void harvest_queue(struct mapharvest *m)
{
	for (;;) {
		pid_t *batch;
		size_t n;

		pthread_mutex_lock(&m->lock);
		batch = m->queue;
		n = m->n_queue;
		m->queue = NULL;
		m->n_queue = m->cap_queue = 0;
		pthread_mutex_unlock(&m->lock);
		if (!n) {
			free(batch);
			return;
		}
		for (size_t i = 0; i < n; i++)
			mh_harvest(&m->h, batch[i]);
		free(batch);
	}
}

static void harvest_observed(struct mapharvest *m)
{
	size_t n = m->svc->procs->pid_list(m->ctx, NULL, 0);
	pid_t *pids;

	if (!n)
		return;
	pids = calloc(n, sizeof(*pids));
	if (!pids)
		return;
	n = m->svc->procs->pid_list(m->ctx, pids, n);
	for (size_t i = 0; i < n; i++)
		mh_harvest(&m->h, pids[i]);
	free(pids);
}

static void deadline_after(struct timespec *ts, long long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

static void *harvester_thread(void *arg)
{
	struct mapharvest *m = arg;
	struct timespec next;

	/* The first round at once: a short-lived target may not wait. */
	deadline_after(&next, 0);
	for (;;) {
		struct timespec now;
		int stopping;

		pthread_mutex_lock(&m->harvesting);
		harvest_queue(m);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((m->cfg.poll_ms > 0 || !m->h.tick) && (now.tv_sec > next.tv_sec ||
				       (now.tv_sec == next.tv_sec && now.tv_nsec >= next.tv_nsec))) {
			harvest_targets(m);
			mh_harvest_tick(&m->h);
			deadline_after(&next, m->cfg.poll_ms > 0 ? m->cfg.poll_ms : 1000);
		}
		pthread_mutex_unlock(&m->harvesting);
		pthread_mutex_lock(&m->lock);
		if (!m->stopping && m->n_queue == 0) {
			if (m->cfg.poll_ms > 0)
				pthread_cond_timedwait(&m->cond, &m->lock, &next);
			else
				pthread_cond_wait(&m->cond, &m->lock);
		}
		stopping = m->stopping;
		pthread_mutex_unlock(&m->lock);
		if (stopping)
			return NULL;
	}
}

/* What a launched .NET command is given, unless its environment (ours)
 * says otherwise: perf map and jitdump, and stubs reported one by one
 * within their blocks -- .NET 10's jitdump writer copies a whole 64 KiB
 * stub block's code, fails on its uncommitted pages and then writes no
 * more records, ReadyToRun methods included. */
static void dotnet_env(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	static const char *const settings[][2] = {
		{ "PerfMapEnabled", "1" },
		{ "PerfMapStubGranularity", "2" },
	};

	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		char dotnet[64], complus[64];
		int ret;

		snprintf(dotnet, sizeof(dotnet), "DOTNET_%s", settings[i][0]);
		snprintf(complus, sizeof(complus), "COMPlus_%s", settings[i][0]);
		if (getenv(dotnet) || getenv(complus))
			continue;
		/* Only a launched command can be given it; -EPERM outside init. */
		ret = svc->procs->target_setenv(ctx, dotnet, settings[i][1]);
		if (ret < 0)
			svc->run->log(ctx, TRACERIG_LOG_DEBUG, "cannot set %s: %s", dotnet,
				      strerror(-ret));
	}
}

/* ---- vtable ---- */

static int mapharvest_snapshot(void *state, struct tracerig_archive *ar, uint64_t from_ns,
			       uint64_t to_ns);

/* --check -p PID: for each .NET target, its runtime, whether its maps are
 * on, and what the session will do about it. */
static void check_dotnet_targets(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
				 char *advice, size_t advice_len)
{
	const struct tracerig_targets *t = svc->procs->targets(ctx);
	struct mapharvest_config cfg;
	size_t used = strlen(advice);

	if (!t || !t->n_pids || svc->run->config_bind(ctx, &cfg) < 0)
		return;
	for (size_t i = 0; i < t->n_pids && used + 1 < advice_len; i++) {
		struct mh_procinfo pi;
		char path[64], line[1024];
		int procfd;

		if (!mh_maps_contain(t->pids[i], "libcoreclr.so"))
			continue;
		snprintf(path, sizeof(path), "/proc/%d", (int)t->pids[i]);
		procfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (procfd < 0 || mh_procinfo_read(procfd, &pi, 1) < 0) {
			if (procfd >= 0)
				close(procfd);
			continue;
		}
		close(procfd);
		mh_dotnet_describe(t->pids[i], strstr(pi.rt.why, "PerfMapEnabled=") ? pi.rt.why : "",
				   cfg.dotnet_enable, line, sizeof(line));
		mh_procinfo_free(&pi);
		used += (size_t)snprintf(advice + used, advice_len - used, "%s%s", used ? "; " : "",
					 line);
	}
}

static int mapharvest_check(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			    char *advice, size_t advice_len)
{
	unsigned long long caps = 0;
	char line[256];
	FILE *f;

	if (!tr_untrusted_usable()) {
		snprintf(advice, advice_len, "openat2(2) with RESOLVE_IN_ROOT is unavailable (%s): "
			 "needs Linux 5.6 or later", strerror(errno));
		return -ENOSYS;
	}
	/* Reading another process's environment and root needs
	 * CAP_SYS_PTRACE; its files, CAP_DAC_READ_SEARCH. */
	f = fopen("/proc/self/status", "re");
	if (!f) {
		snprintf(advice, advice_len, "cannot read /proc/self/status (%s): is /proc mounted?",
			 strerror(errno));
		return -ENOENT;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	if (!(caps & (1ull << 19)) || !(caps & (1ull << 2))) {
		snprintf(advice, advice_len, "cannot read other processes' /proc/PID/root and "
			 "environ: run as root (needs CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH)");
		return -EPERM;
	}
	check_dotnet_targets(svc, ctx, advice, advice_len);
	return 0;
}

static int mapharvest_init(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			   void **state)
{
	struct mapharvest *m = calloc(1, sizeof(*m));
	const char *staging = svc->archive->staging_dir(ctx);
	pthread_condattr_t attr;
	int ret;

	if (!m)
		return -ENOMEM;
	m->svc = svc;
	m->ctx = ctx;
	if ((ret = svc->run->config_bind(ctx, &m->cfg)) < 0) {
		free(m);
		return ret;
	}
	if (!staging) {
		svc->run->log(ctx, TRACERIG_LOG_ERROR, "no staging directory from the core");
		free(m);
		return -EINVAL;
	}
	ret = mh_harvester_init(&m->h, svc, ctx, staging, (uint64_t)m->cfg.max_size,
				m->cfg.cleanup);
	if (ret < 0) {
		svc->run->log(ctx, TRACERIG_LOG_ERROR, "cannot open the staging directory %s: %s",
			      staging, strerror(-ret));
		free(m);
		return ret;
	}
	m->h.max_total = (uint64_t)m->cfg.max_total;
	m->h.dotnet_enable = m->cfg.dotnet_enable;
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->harvesting, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &attr);
	pthread_condattr_destroy(&attr);

	if (m->cfg.dotnet_env)
		dotnet_env(svc, ctx);
	*state = m;
	return 0;
}

static int mapharvest_start(void *state)
{
	struct mapharvest *m = state;
	int ret;

	if (m->cfg.observed) {
		ret = m->svc->procs->pid_subscribe(m->ctx, on_observed, m);
		m->subscribed = ret == 0;
		if (ret < 0)
			m->svc->run->log(m->ctx, TRACERIG_LOG_WARN,
					 "cannot follow observed processes: %s "
					 "(their maps are taken at stop only)",
					 strerror(-ret));
	}
	ret = pthread_create(&m->thread, NULL, harvester_thread, m);
	if (ret != 0) {
		m->svc->run->log(m->ctx, TRACERIG_LOG_ERROR,
				 "cannot start the harvester thread: %s", strerror(ret));
		return -ret;
	}
	(void)pthread_setname_np(m->thread, "tr-mapharvest");
	m->thread_started = 1;
	/* PIDs observed before the subscription (the launched command). */
	if (m->cfg.observed) {
		size_t n = m->svc->procs->pid_list(m->ctx, NULL, 0);
		pid_t *pids = n ? calloc(n, sizeof(*pids)) : NULL;

		if (pids) {
			n = m->svc->procs->pid_list(m->ctx, pids, n);
			for (size_t i = 0; i < n; i++)
				on_observed(m, pids[i]);
			free(pids);
		}
	}
	pthread_mutex_lock(&m->lock);
	pthread_cond_signal(&m->cond); /* first look at the targets now */
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* Ends the harvesting thread, if it runs, and waits for it. */
static void stop_thread(struct mapharvest *m)
{
	if (!m->thread_started)
		return;
	pthread_mutex_lock(&m->lock);
	m->stopping = 1;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	m->thread_started = 0;
}

static int mapharvest_stop(void *state)
{
	struct mapharvest *m = state;
	const struct tracerig_targets *t = m->svc->procs->targets(m->ctx);
	uint64_t window_ns;

	/* What is observed from here on is found by the pid_list round
	 * below. */
	unsubscribe(m);
	stop_thread(m);
	/* Stop runs in reverse profile order, before any flush: whatever the
	 * profile order, the maps reach the symbolizer before perf_events
	 * resolves its samples. */
	harvest_queue(m);
	harvest_targets(m);
	if (m->cfg.observed)
		harvest_observed(m);
	/* A flight recorder's final snapshot still copies the files. */
	if (m->svc->run->flight_window(m->ctx, &window_ns) == 1)
		m->stopped_in_flight = 1;
	else
		mh_harvester_finish(&m->h);
	if (t->system_wide && m->cfg.observed && m->svc->procs->pid_list(m->ctx, NULL, 0) == 0)
		m->svc->run->log(m->ctx, TRACERIG_LOG_INFO,
				 "system-wide run, but no backend reported "
				 "the processes it saw: no map was looked for (add [perf_events])");
	m->svc->run->log(m->ctx, TRACERIG_LOG_INFO,
			 "%llu file%s harvested (%llu bytes), %llu refused",
			 (unsigned long long)m->h.n_files, m->h.n_files == 1 ? "" : "s",
			 (unsigned long long)m->h.bytes, (unsigned long long)m->h.n_refused);
	return 0;
}

/* Flight mode: the maps as they are now go into each snapshot (JIT code
 * in the window may have been compiled at any time before it), and
 * harvesting goes on. */
static int mapharvest_snapshot(void *state, struct tracerig_archive *ar, uint64_t from_ns,
			       uint64_t to_ns)
{
	struct mapharvest *m = state;
	const char *dir = tracerig_internal(m->svc)->archive_dir(ar);
	int ret;

	(void)from_ns;
	(void)to_ns;
	if (!dir)
		return -EINVAL;
	pthread_mutex_lock(&m->harvesting);
	harvest_queue(m);
	harvest_targets(m);
	if (m->cfg.observed)
		harvest_observed(m);
	ret = mh_harvester_snapshot(&m->h, dir);
	/* After stop: the session's last snapshot.  What finish does at the
	 * end of a recording (cleanup, counters, closing) happens now. */
	if (m->stopped_in_flight) {
		mh_harvester_finish(&m->h);
		m->stopped_in_flight = 0;
	}
	pthread_mutex_unlock(&m->harvesting);
	return ret;
}

static int mapharvest_flush(void *state, struct tracerig_archive *ar)
{
	struct mapharvest *m = state;

	(void)ar;
	/* The files were written into the staging directory as they were
	 * harvested and completed at stop: nothing is left to write, but the
	 * maps the session switched on are switched off here, not at stop,
	 * where a runtime busy ending its EventPipe session would hold up
	 * every other backend's flush. */
	mh_harvester_switch_off(&m->h);
	return 0;
}

static void mapharvest_fini(void *state)
{
	struct mapharvest *m = state;

	unsubscribe(m);
	stop_thread(m);
	mh_harvester_switch_off(&m->h);
	mh_harvester_free(&m->h);
	free(m->queue);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	pthread_mutex_destroy(&m->harvesting);
	free(m);
}

#define BIND(field) TRACERIG_BIND(struct mapharvest_config, field)
/* One key per paragraph, as the reference lists them. */
/* clang-format off */
static const struct tracerig_key mapharvest_keys[] = {
	{ .name = "max_total", .type = TRACERIG_KEY_SIZE, .default_value = "1G", .min = 1,
	  .max = 1LL << 42, BIND(max_total),
	  .description = "Largest total of all processes' files taken in a session: a file found "
	  "past it is refused, one growing past it keeps what was copied (logged).  The same file "
	  "under several processes' names (hard links) is taken once whatever the total." },
	{ .name = "max_size", .type = TRACERIG_KEY_SIZE, .default_value = "256M", .min = 1,
	  .max = 1LL << 40, BIND(max_size),
	  .description = "Largest map or jitdump file taken from a process; a larger one is refused "
	  "(logged) rather than truncated." },
	{ .name = "cleanup", .type = TRACERIG_KEY_BOOL, .default_value = "no", BIND(cleanup),
	  .description = "Delete the harvested files of processes that exited during the session from "
	  "their /tmp (runtimes leave them behind).  Files of running processes are kept." },
	{ .name = "poll_interval", .type = TRACERIG_KEY_DURATION, .default_value = "500ms",
	  .max = 60000, BIND(poll_ms),
	  .description = "How often the target processes are looked at during the session (files found, "
	  "appended lines copied); 0 = only when a process is first observed and at stop." },
	{ .name = "observed", .type = TRACERIG_KEY_BOOL, .default_value = "yes", BIND(observed),
	  .description = "Also harvest every process the other backends observed (all sampled processes "
	  "in a system-wide run)." },
	{ .name = "dotnet_env", .type = TRACERIG_KEY_BOOL, .default_value = "yes",
	  BIND(dotnet_env),
	  .description = "Give a launched command DOTNET_PerfMapEnabled=1 and DOTNET_PerfMapStubGranularity=2 "
	  "(without which .NET 10 stops writing its jitdump early), each unless the environment already "
	  "sets it as DOTNET_ or COMPlus_." },
	{ .name = "dotnet_enable", .type = TRACERIG_KEY_BOOL, .default_value = "yes",
	  BIND(dotnet_enable),
	  .description = "Switch on the perf map and jitdump of a running .NET process (8 or later) "
	  "that was started without DOTNET_PerfMapEnabled, through its diagnostics socket, for the "
	  "session; they are switched off and their files removed at the end.  The runtime then "
	  "reports the methods it compiled before, not the stubs it generated before: those "
	  "frames stay unnamed (its copy of the GC write barriers, made at startup, is the "
	  "hottest: about 1.5% of a busy ASP.NET server's samples).  A process started with "
	  "DOTNET_PerfMapEnabled=1, or launched by tracerig, has them named." },
	{ .name = NULL },
};
/* clang-format on */

TRACERIG_PLUGIN = {
	.abi_version = TRACERIG_ABI_VERSION,
	.name = "mapharvest",
	.version = PACKAGE_VERSION,
	.kind = TRACERIG_PLUGIN_SOURCE,
	.description = "JIT symbol maps (perf-PID.map, jit-PID.dump) from hosts and containers",
	.package = "tracerig-mapharvest",
	.keys = mapharvest_keys,
	.caps = TRACERIG_CAP_FLIGHT,
	.internal_version = TRACERIG_INTERNAL_VERSION,
	.check = mapharvest_check,
	.init = mapharvest_init,
	.start = mapharvest_start,
	.stop = mapharvest_stop,
	.flush = mapharvest_flush,
	.fini = mapharvest_fini,
	.snapshot = mapharvest_snapshot,
};
