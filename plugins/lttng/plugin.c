/* The lttng backend: runtime events (the .NET runtime's GC, JIT, exception,
 * contention and thread-pool events, any LTTng-UST tracepoint) recorded by
 * an LTTng session that writes its CTF trace straight into the staging
 * area as lttngTrace/, the layout PerfView/TraceEvent and babeltrace2 read.
 *
 * This file is the descriptor and the vtable glue.  One concern per file:
 * the session daemon (sessiond.c), the presets (presets.c), the session
 * itself (session.c), the target processes (targets.c) and reading the
 * trace back (ctf.c). */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lttng/lttng.h>
#include "tracerig-private/ext.h"

#include "cleanup.h"
#include "ctf.h"
#include "dotnet.h"
#include "lib/keyerror.h"
#include "lib/pidset.h"
#include "presets.h"
#include "session.h"
#include "sessiond.h"
#include "targets.h"

#define TRACE_ENTRY "lttngTrace"

/* The profile's [lttng] keys, bound by the core. */
struct lttng_settings {
	struct tracerig_list preset, events, kernel_events, command_env;
	int loglevel; /* 0 = any, then enum lttng_loglevel + 1 (the choices' order) */
	int loglevel_only, dotnet_env;
	const char *filter, *sessiond_path;
	long long subbuf_size, subbuf_count, switch_timer_ms, flight_rate;
	int mode, buffers, start_sessiond; /* indexes of the choices below */
};
enum { MODE_DISCARD, MODE_OVERWRITE };
enum { BUFFERS_PER_UID, BUFFERS_PER_PID };
enum { SESSIOND_AUTO, SESSIOND_YES, SESSIOND_NO };

struct lttng_state {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct sessiond daemon;
	struct lt_session session;
	struct lttng_event_list ust_events, kernel_events;
	struct lttng_settings keys;
	struct lt_config cfg;
	char trace_dir[PATH_MAX];
	int stopped;
	int daemon_died;         /* found at stop: the trace is incomplete */
	int stop_error;          /* stop's failure, repeated by flush */
	uint64_t flight_ns;      /* mode = flight: the window; 0 when recording */
	/* Judging the keys: the services in validate, which says each wrong
	 * value; NULL in check and init, which only count them (validate
	 * said them, and a run with any stops before init). */
	const struct tracerig_services *say;
	int wrong;
	char first[512]; /* the first wrong value, "key: message" */
};

#define LOG(st, lvl, ...) (st)->svc->run->log((st)->ctx, (lvl), __VA_ARGS__)

#define BIND(field) TRACERIG_BIND(struct lttng_settings, field)
/* One key per paragraph, as the reference lists them. */
/* clang-format off */
static const struct tracerig_key lttng_keys[] = {
	{ .name = "preset", .type = TRACERIG_KEY_LIST, BIND(preset), .choices = LTTNG_PRESET_NAMES,
	  .description = "Named userspace event sets after perfcollect's: default, gccollectonly, gconly, "
	  "gcwithheap, threading, exceptions, jit, loader (each a fixed list of DotNETRuntime* "
	  "tracepoints). With neither preset nor events set, `default` is used." },
	{ .name = "events", .type = TRACERIG_KEY_LIST, BIND(events),
	  .description = "Userspace tracepoints to record besides the preset's: full names or wildcards, "
	  "e.g. DotNETRuntime:GC*, lttng_ust_libc:*." },
	{ .name = "loglevel", .type = TRACERIG_KEY_ENUM, .default_value = "any",
	  .choices = "any,emerg,alert,crit,err,warning,notice,info,debug_system,debug_program," "debug_process,debug_module,debug_unit,debug_function,debug_line,debug",
	  BIND(loglevel),
	  .description = "Record only userspace events at this log level or more severe (`any`: no filter)." },
	{ .name = "loglevel_only", .type = TRACERIG_KEY_BOOL, .default_value = "no",
	  BIND(loglevel_only),
	  .description = "With loglevel: record exactly that level instead of that level and more severe." },
	{ .name = "filter", .type = TRACERIG_KEY_STRING, BIND(filter),
	  .description = "LTTng filter expression applied to every userspace event, e.g. "
	  "`seq < 100 && $ctx.procname == \"myapp\"`." },
	{ .name = "kernel_events", .type = TRACERIG_KEY_LIST, BIND(kernel_events),
	  .description = "Kernel tracepoints (sched_switch, sched_process_*) or syscall:NAME; needs "
	  "lttng-modules. Without them: a warning, and userspace only unless lttng is required." },
	{ .name = "subbuf_size", .type = TRACERIG_KEY_SIZE, .default_value = "1M", .min = 4096,
	  .max = 1LL << 32, BIND(subbuf_size),
	  .description = "Size of one sub-buffer (a power of two); per CPU, per user (or per process)." },
	{ .name = "subbuf_count", .type = TRACERIG_KEY_INT, .default_value = "4", .min = 2,
	  .max = 4096, BIND(subbuf_count),
	  .description = "Sub-buffers per ring buffer (a power of two)." },
	{ .name = "mode", .type = TRACERIG_KEY_ENUM, .default_value = "discard",
	  .choices = "discard,overwrite", BIND(mode),
	  .description = "When the buffers are full: discard new events (counted as discarded_events) or "
	  "overwrite the oldest (flight recorder). [tracerig] mode = flight always overwrites (discard "
	  "is refused there)." },
	{ .name = "buffers", .type = TRACERIG_KEY_ENUM, .default_value = "per-uid",
	  .choices = "per-uid,per-pid", BIND(buffers),
	  .description = "Buffer ownership: per-uid (ust/uid/N/64-bit, what TraceEvent reads) or per-pid." },
	{ .name = "switch_timer", .type = TRACERIG_KEY_DURATION, .default_value = "0",
	  .max = 3600000, BIND(switch_timer_ms),
	  .description = "Flush sub-buffers at least this often (0 = only when full or at stop)." },
	{ .name = "flight_rate", .type = TRACERIG_KEY_SIZE, .default_value = "64K", .min = 1024,
	  .max = 1LL << 30, BIND(flight_rate),
	  .description = "mode = flight: the event data per second one ring buffer (one CPU) is sized "
	  "for; each ring holds flight_rate x window, rounded up to a power of two (64K to 64M), in "
	  "8 sub-buffers, unless subbuf_size or subbuf_count is set. LTTng's rings are bounded by "
	  "size, not time: at a higher rate a snapshot covers less than the window." },
	{ .name = "start_sessiond", .type = TRACERIG_KEY_ENUM, .default_value = "auto",
	  .choices = "auto,yes,no", BIND(start_sessiond),
	  .description = "Start lttng-sessiond when none runs, and stop it afterwards (auto = yes for root)." },
	{ .name = "sessiond_path", .type = TRACERIG_KEY_STRING, .default_value = "lttng-sessiond",
	  BIND(sessiond_path),
	  .description = "The session daemon binary started by start_sessiond." },
	{ .name = "dotnet_env", .type = TRACERIG_KEY_BOOL, .default_value = "yes",
	  BIND(dotnet_env),
	  .description = "Give the launched command DOTNET_EnableEventLog=1 so the .NET runtime emits its "
	  "LTTng events, unless the runtimes installed here cannot load their LTTng provider (the variable "
	  "then only costs the application)." },
	{ .name = "command_env", .type = TRACERIG_KEY_LIST, BIND(command_env),
	  .description = "More NAME=VALUE pairs for the launched command, e.g. "
	  "LD_PRELOAD=liblttng-ust-libc-wrapper.so." },
	{ .name = NULL },
};
/* clang-format on */

static int is_pow2(unsigned long long v)
{
	return v && !(v & (v - 1));
}

static int autostart_wanted(const struct lttng_settings *k)
{
	if (k->start_sessiond == SESSIOND_YES)
		return 1;
	if (k->start_sessiond == SESSIOND_NO)
		return 0;
	return geteuid() == 0;
}

/* With neither preset nor events set, the default preset. */
static const struct tracerig_list *presets_of(const struct lttng_settings *k)
{
	static const char *const fallback[] = { "default" };
	static const struct tracerig_list default_preset = { 1, fallback };

	return k->preset.n || k->events.n ? &k->preset : &default_preset;
}

static int on_path(const char *binary)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(binary, '/'))
		return access(binary, X_OK) == 0;
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, path, binary);
		if (access(buf, X_OK) == 0)
			return 1;
		if (!end)
			break;
		path = end + 1;
	}
	return 0;
}

/* LTTng wants an absolute output directory; the staging directory sits
 * next to the archive, so it is relative whenever -o is (or is left at its
 * default).  realpath() also proves that the directory exists. */
static int absolute_dir(const char *dir, char *out, size_t out_len)
{
	char *abs = realpath(dir, NULL);
	int ret = 0;

	if (!abs)
		return -errno;
	if (snprintf(out, out_len, "%s", abs) >= (int)out_len)
		ret = -ENAMETOOLONG;
	free(abs);
	return ret;
}

/* Appends "; text" to the advice. */
static void advise(char *advice, size_t len, const char *fmt, ...) TRACERIG_PRINTF(3, 4);
static void advise(char *advice, size_t len, const char *fmt, ...)
{
	size_t used = strlen(advice);
	va_list ap;

	if (used && used + 2 < len) {
		memcpy(advice + used, "; ", 3);
		used += 2;
	}
	if (used >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(advice + used, len - used, fmt, ap);
	va_end(ap);
}

static int read_config(struct lttng_state *st, const char *base_dir);
static int judge_config(struct lttng_state *st);

/* The directory the staging area (and so the trace) will be created in:
 * the archive's. */
static int output_parent(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			 char *out, size_t len)
{
	const char *output = tracerig_internal(svc)->session_string(ctx, "output");
	const char *slash = output ? strrchr(output, '/') : NULL;

	if (!output || !slash)
		return snprintf(out, len, ".") >= (int)len ? -ENAMETOOLONG : 0;
	if (slash == output)
		return snprintf(out, len, "/") >= (int)len ? -ENAMETOOLONG : 0;
	return snprintf(out, len, "%.*s", (int)(slash - output), output) >= (int)len
		       ? -ENAMETOOLONG : 0;
}

/* What init would do, without recording: the same settings, a session
 * created in the daemon and destroyed again.  Catches what only the daemon
 * can refuse (a filter it cannot compile, a channel size, an output
 * directory). */
static int dry_run(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
		   const char *dir, char *advice, size_t advice_len)
{
	struct lttng_state *st = calloc(1, sizeof(*st));
	char scratch[PATH_MAX];
	int ret;

	if (!st)
		return -ENOMEM;
	st->svc = svc;
	st->ctx = ctx;
	ret = read_config(st, dir);
	if (ret < 0) {
		advise(advice, advice_len, "the profile's [lttng] settings are refused (said "
		       "above, with their lines)");
		goto out;
	}
	/* Created next to where the real trace goes; LTTng makes the directory
	 * only when recording starts, so nothing is left behind. */
	if (snprintf(scratch, sizeof(scratch), "%s.check-%d", st->trace_dir, (int)getpid()) >=
	    (int)sizeof(scratch)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	st->cfg.output_dir = scratch;
	st->cfg.name_suffix = "check";
	ret = lt_session_create(&st->session, svc, ctx, &st->cfg);
	if (ret < 0) {
		advise(advice, advice_len, "a test session with this profile's settings failed: "
		       "%s (the lttng: error message says why)", strerror(-ret));
		goto out;
	}
	lt_session_destroy(&st->session);
	rmdir(scratch);
out:
	lttng_event_list_free(&st->ust_events);
	lttng_event_list_free(&st->kernel_events);
	free(st);
	return ret;
}

/* No daemon runs and the real run would start one: so does --check, for
 * the dry run, with the same cleanup by the watchdog, and stops it again. */
static int dry_run_own_daemon(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			      const struct lttng_settings *k, const char *dir, char *advice,
			      size_t advice_len)
{
	struct sessiond daemon = { .pidfd = -1 };
	char err[1024] = "";
	int ret;

	ret = sessiond_ensure(&daemon, k->sessiond_path, 1, k->kernel_events.n > 0, err,
			      sizeof(err));
	if (ret < 0) {
		snprintf(advice, advice_len, "%s", err);
		return ret;
	}
	if (daemon.started && (ret = lt_cleanup_daemon(svc, ctx, daemon.pid)) < 0)
		advise(advice, advice_len, "handing the watchdog the daemon to stop if tracerig is "
		       "killed failed: %s", strerror(-ret));
	ret = dry_run(svc, ctx, dir, advice, advice_len);
	if (sessiond_stop(&daemon, 10000) < 0)
		advise(advice, advice_len, "the session daemon started for the check (pid %d) did "
		       "not exit on SIGTERM", (int)daemon.pid);
	lt_cleanup_daemon(svc, ctx, 0);
	return ret;
}

static int wants_dotnet(const struct lttng_event_list *events)
{
	for (size_t i = 0; i < events->n; i++)
		if (strncmp(events->names[i], "DotNETRuntime", 13) == 0)
			return 1;
	return 0;
}

/* -p PIDs of a .NET profile: is the runtime's provider loaded, and why not. */
static int check_dotnet(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			const struct lttng_settings *k, char *advice, size_t advice_len)
{
	const struct tracerig_targets *t = svc->procs->targets(ctx);
	struct lttng_event_list events = { 0 };
	char err[256], line[1024];
	int loaded = 0, ret;

	if (!t || t->n_pids == 0)
		return 0;
	if (lttng_event_list_build(&events, presets_of(k), &k->events, err, sizeof(err)) < 0 ||
	    !wants_dotnet(&events)) {
		lttng_event_list_free(&events);
		return 0;
	}
	lttng_event_list_free(&events);
	for (size_t i = 0; i < t->n_pids; i++) {
		struct dotnet_status ds;

		ret = dotnet_inspect(t->pids[i], &ds);
		if (ret < 0) {
			advise(advice, advice_len, "pid %d: reading /proc/%d failed: %s",
			       (int)t->pids[i], (int)t->pids[i], strerror(-ret));
			continue;
		}
		loaded += dotnet_describe(t->pids[i], &ds, line, sizeof(line));
		advise(advice, advice_len, "%s", line);
	}
	/* Not one target will emit the runtime's events: the backend would
	 * record nothing of what this profile is for. */
	return loaded ? 0 : -ENOENT;
}

/* The keys judged as validate judges them: saying each wrong value
 * (`say`, validate) or only finding whether one is (check).  0, -EINVAL
 * or -ENOMEM. */
static int judge_keys(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
		      const struct tracerig_services *say)
{
	struct lttng_state *st = calloc(1, sizeof(*st));
	int ret;

	if (!st)
		return -ENOMEM;
	st->svc = svc;
	st->ctx = ctx;
	st->say = say;
	ret = judge_config(st);
	lttng_event_list_free(&st->ust_events);
	lttng_event_list_free(&st->kernel_events);
	free(st);
	return ret;
}

/* Every wrong value said before any plugin starts, the daemon included:
 * none of them needs it. */
static int lttng_validate(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	int ret = judge_keys(svc, ctx, svc);

	return ret == -EINVAL ? 0 : ret;
}

static int check_unguarded(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			   char *advice, size_t advice_len)
{
	struct lttng_settings k;
	const char *binary;
	int kernel;
	char dir[PATH_MAX], abs[PATH_MAX];
	int ret, alive = sessiond_alive(), failed = 0;

	advice[0] = '\0';
	if ((ret = svc->run->config_bind(ctx, &k)) < 0)
		return ret;
	/* Values validate said are wrong are not tried on the daemon. */
	if ((ret = judge_keys(svc, ctx, NULL)) < 0) {
		snprintf(advice, advice_len,
			 "the profile's [lttng] settings are refused (said "
			 "above, with their lines)");
		return ret;
	}
	binary = k.sessiond_path;
	kernel = k.kernel_events.n > 0;
	if (!alive) {
		if (!autostart_wanted(&k)) {
			snprintf(advice, advice_len, "no LTTng session daemon is running (start one "
				 "with 'lttng-sessiond --daemonize', or set start_sessiond = yes)");
			return -ENOENT;
		}
		if (!on_path(binary)) {
			snprintf(advice, advice_len, "no session daemon runs and %s is not "
				 "installed (apt-get install lttng-tools)", binary);
			return -ENOENT;
		}
		advise(advice, advice_len, "no session daemon runs: tracerig will start %s and "
		       "stop it afterwards", binary);
	}
	ret = output_parent(svc, ctx, dir, sizeof(dir));
	if (ret == 0)
		ret = absolute_dir(dir, abs, sizeof(abs));
	if (ret == 0 && access(abs, W_OK | X_OK) < 0)
		ret = -errno;
	if (ret < 0) {
		snprintf(advice, advice_len, "the trace is written next to the archive, in %s: %s "
			 "(choose an existing, writable directory with -o)", dir, strerror(-ret));
		return ret;
	}
	ret = alive ? dry_run(svc, ctx, abs, advice, advice_len)
		    : dry_run_own_daemon(svc, ctx, &k, abs, advice, advice_len);
	if (ret < 0)
		return ret;
	if (kernel && !lt_kernel_tracer_loaded()) {
		if (svc->run->required(ctx)) {
			snprintf(advice, advice_len, "kernel tracer not available: kernel_events "
				 "needs lttng-modules (apt-get install lttng-modules-dkms)");
			return -ENOTSUP;
		}
		advise(advice, advice_len, "kernel tracer not available: kernel_events will be "
		       "skipped");
	}
	ret = check_dotnet(svc, ctx, &k, advice, advice_len);
	if (ret < 0)
		failed = ret;
	return failed;
}

static int lttng_snapshot(void *state, struct tracerig_archive *ar, uint64_t from_ns,
			  uint64_t to_ns);

static int lttng_check(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
		       char *advice, size_t advice_len)
{
	struct lt_sigpipe g;
	int ret;

	lt_sigpipe_block(&g);
	ret = check_unguarded(svc, ctx, advice, advice_len);
	lt_sigpipe_restore(&g);
	return ret;
}

/* DOTNET_EnableEventLog=1 plus command_env's NAME=VALUE pairs. */
static int set_command_env(struct lttng_state *st)
{
	const struct tracerig_list *pairs = &st->keys.command_env;
	const struct tracerig_targets *t = st->svc->procs->targets(st->ctx);
	char why[PATH_MAX + 128];
	int ret;

	if (!st->keys.dotnet_env || !t || !t->command) {
		/* nothing launched, or not asked: no runtime setting */
	} else if (!getenv("DOTNET_EnableEventLog") && !getenv("COMPlus_EnableEventLog") &&
		   dotnet_host_provider_loadable(why, sizeof(why)) == 0) {
		LOG(st, TRACERIG_LOG_WARN, "the launched command is not given DOTNET_EnableEventLog=1: "
		    "%s, so no runtime event can reach LTTng, and the variable would still route "
		    "every EventSource event through the runtime's event logger (an ASP.NET service "
		    "lost 94%% of its throughput to it); record runtime events over EventPipe instead",
		    why);
	} else {
		ret = st->svc->procs->target_setenv(st->ctx, "DOTNET_EnableEventLog", "1");
		if (ret < 0) {
			LOG(st, TRACERIG_LOG_ERROR, "setting DOTNET_EnableEventLog for the command "
			    "failed: %s", strerror(-ret));
			return ret;
		}
	}
	for (size_t i = 0; i < pairs->n; i++) {
		char item[4096], *eq;

		snprintf(item, sizeof(item), "%s", pairs->items[i]);
		eq = strchr(item, '=');
		if (!eq || eq == item)
			continue; /* refused by validate, with its line */
		*eq = '\0';
		ret = st->svc->procs->target_setenv(st->ctx, item, eq + 1);
		if (ret < 0) {
			LOG(st, TRACERIG_LOG_ERROR, "setting %s for the command failed: %s", item,
			    strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Bounds of a flight ring buffer sized from the window (flight_sizes). */
#define FLIGHT_RING_MIN (64ull << 10)
#define FLIGHT_RING_MAX (64ull << 20)
#define FLIGHT_SUBBUFS 8ull

/* mode = flight: LTTng's rings are bounded by bytes, the window by time,
 * so the window is turned into bytes at flight_rate: each ring (one per
 * CPU and per user, or per process) holds flight_rate x window, rounded
 * up to a power of two and kept within [64 KiB, 64 MiB] (the rings are
 * memory, times the CPUs).  8 sub-buffers: overwriting drops the oldest
 * sub-buffer whole, so at least 7/8 of the ring is history at any time.
 * A profile that sets subbuf_size or subbuf_count sizes the rings itself. */
static void flight_sizes(struct lttng_state *st, long long *size, long long *count)
{
	const struct lttng_settings *k = &st->keys;
	unsigned long long want, ring = FLIGHT_RING_MIN;

	if (st->svc->run->config_is_set(st->ctx, "subbuf_size") ||
	    st->svc->run->config_is_set(st->ctx, "subbuf_count"))
		return;
	want = (unsigned long long)k->flight_rate * (st->flight_ns / 1000000ull) / 1000ull;
	while (ring < want && ring < FLIGHT_RING_MAX)
		ring <<= 1;
	*count = (long long)FLIGHT_SUBBUFS;
	*size = (long long)(ring / FLIGHT_SUBBUFS);
	if (want > FLIGHT_RING_MAX)
		LOG(st, TRACERIG_LOG_WARN, "mode = flight: window x flight_rate is %llu MiB per ring "
		    "buffer, more than the %llu MiB tracerig sizes one for: a snapshot holds about "
		    "the last %.1f s at that rate (set subbuf_size and subbuf_count for larger rings)",
		    want >> 20, FLIGHT_RING_MAX >> 20,
		    (double)FLIGHT_RING_MAX / (double)k->flight_rate);
}

/* Every wrong item of events_key's list, each with the profile's line
 * (the list builder stops at the first).  A preset that does not exist
 * the core said (the key's choices): only counted. */
static void say_wrong_items(struct lttng_state *st, const struct tracerig_list *presets,
			    const struct tracerig_list *events, const char *events_key,
			    const char *whole_err)
{
	int before = st->wrong;

	for (int which = 0; which < 2; which++) {
		const struct tracerig_list *l = which ? events : presets;

		for (size_t i = 0; l && i < l->n; i++) {
			const struct tracerig_list one = { 1, &l->items[i] };
			struct lttng_event_list scratch;
			char err[512];

			if (lttng_event_list_build(&scratch, which ? NULL : &one, which ? &one : NULL,
						   err, sizeof(err)) == 0)
				lttng_event_list_free(&scratch);
			else
				tr_key_error(which ? st->say : NULL, st->ctx, &st->wrong, st->first,
					     sizeof(st->first), which ? events_key : "preset", "%s",
					     err);
		}
	}
	/* Wrong only together: said of the list. */
	if (st->wrong == before)
		tr_key_error(st->say, st->ctx, &st->wrong, st->first, sizeof(st->first), events_key,
			     "%s", whole_err);
}

/* mode = flight: what a flight recorder cannot do, said with its line. */
static void judge_flight(struct lttng_state *st)
{
	/* Discarding keeps the oldest events: the opposite of a window. */
	if (st->svc->run->config_is_set(st->ctx, "mode") && st->keys.mode == MODE_DISCARD)
		tr_key_error(st->say, st->ctx, &st->wrong, st->first, sizeof(st->first), "mode",
			     "discard keeps the oldest events, but a "
			     "flight recorder ([tracerig] mode = flight) keeps the newest: "
			     "remove [lttng] mode (flight always overwrites)");
}

/* The sub-buffer sizes and command_env's pairs, each wrong one said with
 * its line.  The keys' own sizes: flight mode sizes the rings itself only
 * when neither is set, and their defaults are powers of two. */
static void judge_sizes_and_env(struct lttng_state *st)
{
	const struct lttng_settings *k = &st->keys;
	const struct tracerig_list *env = &k->command_env;

	if (!is_pow2((unsigned long long)k->subbuf_size))
		tr_key_error(st->say, st->ctx, &st->wrong, st->first, sizeof(st->first),
			     "subbuf_size", "%lld is not a power of two (e.g. 1M)", k->subbuf_size);
	if (!is_pow2((unsigned long long)k->subbuf_count))
		tr_key_error(st->say, st->ctx, &st->wrong, st->first, sizeof(st->first),
			     "subbuf_count", "%lld is not a power of two (e.g. 4)",
			     k->subbuf_count);
	for (size_t i = 0; i < env->n; i++) {
		const char *item = env->items[i], *eq = strchr(item, '=');

		if (!eq || eq == item)
			tr_key_error(st->say, st->ctx, &st->wrong, st->first, sizeof(st->first),
				     "command_env", "'%s' is not NAME=VALUE", item);
	}
}

/* The keys, bound and judged beyond what the table can (see st->say),
 * the event lists built.  0, -EINVAL when a value is wrong, or -ENOMEM. */
static int judge_config(struct lttng_state *st)
{
	const struct tracerig_services *svc = st->svc;
	struct tracerig_ctx *ctx = st->ctx;
	const struct lttng_settings *k = &st->keys;
	char err[1024] = "";
	int ret;

	if ((ret = svc->run->config_bind(ctx, &st->keys)) < 0)
		return ret;
	if (svc->run->flight_window(ctx, &st->flight_ns) != 1)
		st->flight_ns = 0;
	if (st->flight_ns)
		judge_flight(st);
	ret = lttng_event_list_build(&st->ust_events, presets_of(k), &k->events, err, sizeof(err));
	if (ret == -ENOMEM) {
		LOG(st, TRACERIG_LOG_ERROR, "reading preset and events: %s", err);
		return ret;
	}
	if (ret < 0)
		say_wrong_items(st, &k->preset, &k->events, "events", err);
	ret = lttng_event_list_build(&st->kernel_events, NULL, &k->kernel_events, err, sizeof(err));
	if (ret == -ENOMEM) {
		LOG(st, TRACERIG_LOG_ERROR, "reading kernel_events: %s", err);
		return ret;
	}
	if (ret < 0)
		say_wrong_items(st, NULL, &k->kernel_events, "kernel_events", err);
	judge_sizes_and_env(st);
	return st->wrong ? -EINVAL : 0;
}

static int read_config(struct lttng_state *st, const char *base_dir)
{
	const struct lttng_settings *k = &st->keys;
	struct lt_config *cfg = &st->cfg;
	long long size, count;
	char base[PATH_MAX];
	int ret;

	/* Wrong values validate said, and a run with any never gets here:
	 * none is said twice, and none is ever used. */
	if ((ret = judge_config(st)) == -EINVAL)
		LOG(st, TRACERIG_LOG_ERROR, "%s", st->first);
	if (ret < 0)
		return ret;
	size = k->subbuf_size;
	count = k->subbuf_count;
	if (st->flight_ns)
		flight_sizes(st, &size, &count);
	if (!base_dir) {
		LOG(st, TRACERIG_LOG_ERROR, "the core gave no staging directory");
		return -EINVAL;
	}
	ret = absolute_dir(base_dir, base, sizeof(base));
	if (ret < 0) {
		LOG(st, TRACERIG_LOG_ERROR, "resolving the output directory %s to an absolute "
		    "path (LTTng needs one) failed: %s", base_dir, strerror(-ret));
		return ret;
	}
	if (snprintf(st->trace_dir, sizeof(st->trace_dir), "%s/%s", base, TRACE_ENTRY) >=
	    (int)sizeof(st->trace_dir)) {
		LOG(st, TRACERIG_LOG_ERROR, "the trace directory %s/%s is longer than PATH_MAX",
		    base, TRACE_ENTRY);
		return -ENAMETOOLONG;
	}

	cfg->output_dir = st->trace_dir;
	cfg->channel.subbuf_size = (uint64_t)size;
	cfg->channel.subbuf_count = (uint64_t)count;
	cfg->channel.overwrite = k->mode == MODE_OVERWRITE || st->flight_ns;
	cfg->snapshot = st->flight_ns != 0;
	cfg->channel.per_pid = k->buffers == BUFFERS_PER_PID;
	cfg->channel.switch_timer_us = (unsigned)k->switch_timer_ms * 1000u;
	cfg->ust_events = &st->ust_events;
	cfg->kernel_events = &st->kernel_events;
	cfg->filter = k->filter;
	cfg->loglevel = k->loglevel - 1; /* "any" is -1: no filter */
	cfg->loglevel_only = k->loglevel_only;
	cfg->kernel_required = st->svc->run->required(st->ctx);
	return 0;
}

static void lttng_fini(void *state);

/* Every userspace rule is one of the runtime's providers, and nothing else
 * (no kernel event) is asked for. */
static int runtime_events_only(const struct lttng_state *st)
{
	if (st->kernel_events.n || !st->ust_events.n)
		return 0;
	for (size_t i = 0; i < st->ust_events.n; i++)
		if (strncmp(st->ust_events.names[i], "DotNETRuntime", 13) != 0)
			return 0;
	return 1;
}

/* -p PIDs of running .NET processes, none with the runtime's provider
 * mapped (the runtime loads it while starting or never), or a launched
 * command while the runtimes installed here cannot load it: a session
 * would record nothing, and starting a daemon and a session for that cost
 * 0.4 s at the stop (bench/eventpipe).  Each reason is logged.  1 when
 * there is nothing to record. */
static int nothing_to_record(struct lttng_state *st)
{
	const struct tracerig_targets *t = st->svc->procs->targets(st->ctx);
	char line[1024], why[PATH_MAX + 128];
	struct dotnet_status *statuses;

	if (!t || t->system_wide || !runtime_events_only(st))
		return 0;
	if (t->command) {
		if (t->n_pids || dotnet_host_provider_loadable(why, sizeof(why)) != 0)
			return 0;
		LOG(st, TRACERIG_LOG_WARN, "%s: %s, so no runtime event it starts can reach LTTng (a "
		    "command that runs the .NET of another root, a container image's, is not looked "
		    "into)", t->command, why);
		return 1;
	}
	if (t->n_pids == 0)
		return 0;
	/* Each process looked at once: what decides is what is said. */
	statuses = calloc(t->n_pids, sizeof(*statuses));
	if (!statuses)
		return 0;
	for (size_t i = 0; i < t->n_pids; i++) {
		if (dotnet_inspect(t->pids[i], &statuses[i]) < 0 || !statuses[i].is_dotnet ||
		    statuses[i].provider_mapped) {
			free(statuses);
			return 0;
		}
	}
	for (size_t i = 0; i < t->n_pids; i++) {
		dotnet_describe(t->pids[i], &statuses[i], line, sizeof(line));
		LOG(st, TRACERIG_LOG_WARN, "%s", line);
	}
	free(statuses);
	return 1;
}

/* A session daemon to talk to, ours stopped by the watchdog should
 * tracerig be killed. */
static int ensure_daemon(struct lttng_state *st)
{
	char err[1024] = "";
	int ret;

	ret = sessiond_ensure(&st->daemon, st->keys.sessiond_path, autostart_wanted(&st->keys),
			      st->kernel_events.n > 0, err, sizeof(err));
	if (ret < 0) {
		LOG(st, TRACERIG_LOG_ERROR, "%s", err);
		return ret;
	}
	if (st->daemon.started) {
		LOG(st, TRACERIG_LOG_INFO,
		    "started lttng-sessiond (pid %d); it is stopped at the end",
		    (int)st->daemon.pid);
		ret = lt_cleanup_daemon(st->svc, st->ctx, st->daemon.pid);
		if (ret < 0) {
			LOG(st, TRACERIG_LOG_ERROR,
			    "handing the watchdog the daemon to stop if "
			    "tracerig is killed failed: %s",
			    strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* The watchdog learns the name before the session exists: no moment
 * where a kill leaves it unknown. */
static int name_session_to_watchdog(struct lttng_state *st)
{
	int ret = lt_session_name_self(st->svc, st->ctx, st->session.name, sizeof(st->session.name),
				       NULL);

	if (ret < 0)
		return ret;
	/* In flight mode the watchdog also records a last snapshot into the
	 * staging directory (what the rings hold is on no disk). */
	ret = lt_cleanup_session(st->svc, st->ctx, st->session.name,
				 st->flight_ns ? st->trace_dir : NULL);
	if (ret < 0) {
		LOG(st, TRACERIG_LOG_ERROR,
		    "handing the watchdog session %s to destroy if "
		    "tracerig is killed failed: %s",
		    st->session.name, strerror(-ret));
		return ret;
	}
	return 0;
}

static void log_session(const struct lttng_state *st)
{
	LOG(st, TRACERIG_LOG_INFO,
	    "%ssession %s: %zu userspace event rule(s)%s, channel %llu x %llu "
	    "bytes %s, %s buffers, trace in %s%s",
	    st->flight_ns ? "snapshot " : "", st->session.name, st->ust_events.n,
	    st->session.kernel ? " + kernel events" : "",
	    (unsigned long long)st->cfg.channel.subbuf_count,
	    (unsigned long long)st->cfg.channel.subbuf_size,
	    st->cfg.channel.overwrite ? "overwrite" : "discard",
	    st->cfg.channel.per_pid ? "per-PID" : "per-UID", TRACE_ENTRY,
	    st->flight_ns ? " of each snapshot" : "");
}

static int init_unguarded(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			  void **state)
{
	struct lttng_state *st = calloc(1, sizeof(*st));
	int ret;

	if (!st)
		return -ENOMEM;
	st->svc = svc;
	st->ctx = ctx;
	st->daemon.pidfd = -1;
	ret = read_config(st, svc->archive->staging_dir(ctx));
	if (ret == 0)
		ret = set_command_env(st);
	if (ret < 0)
		goto fail;
	if (nothing_to_record(st)) {
		LOG(st, TRACERIG_LOG_WARN, "no traced process can register the runtime's LTTng "
		    "providers, so no session is started: the runtime's events come over "
		    "EventPipe instead (an [eventpipe] section; dotnet.ini has one)");
		ret = -ENODATA;
		goto fail;
	}

	ret = ensure_daemon(st);
	if (ret < 0)
		goto fail;
	/* A tracerig killed with SIGKILL left its session recording into a
	 * directory nobody will package: end those first. */
	lt_reap_orphans(svc, ctx);

	ret = name_session_to_watchdog(st);
	if (ret < 0)
		goto fail;
	ret = lt_session_create(&st->session, svc, ctx, &st->cfg);
	if (ret < 0)
		goto fail;
	/* The consumer daemon exists once the first channel does. */
	sessiond_note_children(&st->daemon);
	log_session(st);
	*state = st;
	return 0;

fail:
	lttng_fini(st);
	return ret;
}

static int lttng_init(const struct tracerig_services *svc, struct tracerig_ctx *ctx, void **state)
{
	struct lt_sigpipe g;
	int ret;

	lt_sigpipe_block(&g);
	ret = init_unguarded(svc, ctx, state);
	lt_sigpipe_restore(&g);
	return ret;
}

/* -p PIDs with their descendants and the launched command, as the
 * processes see their own PIDs (LTTng's VPID tracker; a process in a
 * container has another PID there). */
static int track_targets(struct lttng_state *st)
{
	const struct tracerig_targets *t = st->svc->procs->targets(st->ctx);
	struct tr_pid_set hosts = { 0 };
	pid_t *vpids = NULL;
	size_t n_pids;
	int ret = 0;

	if (t->system_wide)
		return 0;
	for (size_t i = 0; i < t->n_pids && ret >= 0; i++)
		ret = tr_pid_set_add(&hosts, t->pids[i]);
	n_pids = hosts.n;
	if (ret >= 0 && hosts.n)
		ret = targets_add_descendants(&hosts);
	if (ret >= 0 && t->command_pid > 0)
		ret = tr_pid_set_add(&hosts, t->command_pid);
	if (ret < 0)
		goto out;
	if (hosts.n == 0) {
		LOG(st, TRACERIG_LOG_WARN, "the lttng backend cannot narrow tracing to a cgroup: "
		    "recording every process that registers with the session daemon");
		goto out;
	}
	if (hosts.n > n_pids + (t->command_pid > 0))
		LOG(st, TRACERIG_LOG_INFO, "also recording %zu descendant process(es) of -p",
		    hosts.n - n_pids - (t->command_pid > 0));
	vpids = calloc(hosts.n, sizeof(*vpids));
	if (!vpids) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < hosts.n; i++) {
		vpids[i] = host_to_vpid(hosts.pids[i]);
		LOG(st, TRACERIG_LOG_DEBUG, "tracking pid %d (virtual pid %d)", (int)hosts.pids[i],
		    (int)vpids[i]);
	}
	ret = lt_session_track_vpids(&st->session, vpids, hosts.n);
out:
	free(vpids);
	tr_pid_set_free(&hosts);
	return ret;
}

static int lttng_start(void *state)
{
	struct lttng_state *st = state;
	struct lt_sigpipe g;
	int ret;

	lt_sigpipe_block(&g);
	ret = track_targets(st);
	if (ret == 0)
		ret = lt_session_start(&st->session);
	if (ret == 0)
		st->svc->run->progress_set(st->ctx, "recording %zu event rules", st->ust_events.n);
	lt_sigpipe_restore(&g);
	return ret;
}

/* The daemon died (or was replaced) while we recorded: nothing it had in
 * its buffers reached the trace, and the metadata may be missing. */
static int daemon_died(struct lttng_state *st, const char *when)
{
	char pid[32] = "";

	if (st->daemon.pid > 0)
		snprintf(pid, sizeof(pid), " (pid %d)", (int)st->daemon.pid);
	st->daemon_died = 1;
	LOG(st, TRACERIG_LOG_ERROR, "%s session %s failed: the session daemon died during the "
	    "session: lttng-sessiond%s is gone, so the trace in %s is incomplete or empty (find "
	    "why it died in the system log, or run 'lttng-sessiond -vvv' in a terminal, then "
	    "record again)", when, st->session.name, pid, TRACE_ENTRY);
	return -ESRCH;
}

static int session_lost(int code)
{
	return code == LTTNG_ERR_SESS_NOT_FOUND || code == LTTNG_ERR_SESSION_NOT_EXIST ||
	       code == LTTNG_ERR_NO_SESSION;
}

static int lttng_stop(void *state)
{
	struct lttng_state *st = state;
	struct lt_sigpipe g;
	int ret;

	if (st->stopped)
		return st->daemon_died ? -ESRCH : st->stop_error;
	st->stopped = 1;
	if (sessiond_gone(&st->daemon)) {
		/* Asking a dead daemon would only add "no session daemon"
		 * errors; the session is gone with it. */
		st->session.created = 0;
		lt_session_destroy(&st->session);
		lt_cleanup_session(st->svc, st->ctx, NULL, NULL);
		return daemon_died(st, "stopping");
	}
	lt_sigpipe_block(&g);
	ret = lt_session_stop(&st->session);
	lt_sigpipe_restore(&g);
	/* A snapshot session lives on until fini, for the final snapshot:
	 * the watchdog still destroys it if tracerig dies before. */
	if (!st->flight_ns)
		lt_cleanup_session(st->svc, st->ctx, NULL, NULL);
	if (ret < 0 && (sessiond_gone(&st->daemon) ||
			st->session.last_error == LTTNG_ERR_NO_SESSIOND))
		return daemon_died(st, "stopping");
	if (ret < 0 && session_lost(st->session.last_error)) {
		st->session.created = 0; /* nothing left to destroy */
		LOG(st, TRACERIG_LOG_ERROR, "stopping session %s failed: the session daemon no "
		    "longer knows it (someone ran 'lttng destroy' on it, or the daemon was "
		    "restarted), so the trace in %s is incomplete (record again)",
		    st->session.name, TRACE_ENTRY);
		ret = -ENOENT;
	}
	st->stop_error = ret;
	st->svc->run->counter_set(st->ctx, "discarded_events", st->session.discarded_events);
	st->svc->run->counter_set(st->ctx, "lost_packets", st->session.lost_packets);
	/* Overwriting the oldest events is what a flight recorder's rings do. */
	if (!st->flight_ns && (st->session.discarded_events || st->session.lost_packets))
		LOG(st, TRACERIG_LOG_WARN, "%llu event(s) discarded and %llu packet(s) lost: the "
		    "buffers filled faster than they were written out (raise subbuf_size or "
		    "subbuf_count, or record fewer events)",
		    (unsigned long long)st->session.discarded_events,
		    (unsigned long long)st->session.lost_packets);
	return ret;
}

/* Which enabled providers some traced process registered, from the event
 * classes the trace's metadata declares. */
struct provider_seen {
	const struct lttng_event_list *rules;
	unsigned char *seen;  /* per rule */
};

static void rule_match(void *arg, const char *event)
{
	struct provider_seen *ps = arg;

	for (size_t i = 0; i < ps->rules->n; i++)
		if (!ps->seen[i] && fnmatch(ps->rules->names[i], event, 0) == 0)
			ps->seen[i] = 1;
}

static size_t provider_len(const char *rule)
{
	const char *colon = strchr(rule, ':');

	return colon ? (size_t)(colon - rule) : strlen(rule);
}


/* Why each target still running sent the runtime no events, in the log and
 * the manifest: the archive must say it, not only a later --check. */
static void explain_dotnet_targets(struct lttng_state *st)
{
	const struct tracerig_targets *t = st->svc->procs->targets(st->ctx);
	char line[1024];

	for (size_t i = 0; t && i <= t->n_pids; i++) {
		pid_t pid = i < t->n_pids ? t->pids[i] : t->command_pid;
		struct dotnet_status ds;

		if (pid <= 0 || dotnet_inspect(pid, &ds) < 0 || !ds.is_dotnet)
			continue;
		if (!dotnet_describe(pid, &ds, line, sizeof(line)))
			LOG(st, TRACERIG_LOG_WARN, "%s", line);
	}
}

/* Whether rule i's provider is an earlier rule's (counted with it). */
static int provider_counted(const struct lttng_event_list *rules, size_t i, size_t len)
{
	for (size_t j = 0; j < i; j++)
		if (provider_len(rules->names[j]) == len &&
		    strncmp(rules->names[j], rules->names[i], len) == 0)
			return 1;
	return 0;
}

/* How many rules from i on are of rule i's provider (`len` long); *seen
 * set when one of them matched an event class of the trace. */
static size_t rules_of_provider(const struct provider_seen *ps, size_t i, size_t len, int *seen)
{
	const struct lttng_event_list *rules = ps->rules;
	size_t n_rules = 0;

	for (size_t j = i; j < rules->n; j++) {
		if (provider_len(rules->names[j]) != len ||
		    strncmp(rules->names[j], rules->names[i], len) != 0)
			continue;
		n_rules++;
		*seen |= ps->seen[j];
	}
	return n_rules;
}

/* The providers `names` that no traced process registered, with what
 * registers them: the runtime's (`dotnet`), or any other's (`other`). */
static void warn_missing_providers(struct lttng_state *st, const char *names, size_t n_missing,
				   size_t missing_rules, int dotnet, int other)
{
	LOG(st, TRACERIG_LOG_WARN,
	    "userspace provider%s %s %s registered by no traced process: "
	    "%zu enabled event rule(s) recorded nothing (%s%s%s)",
	    n_missing > 1 ? "s" : "", names, n_missing > 1 ? "were" : "was", missing_rules,
	    dotnet ? "a .NET process registers the runtime's providers when it loads "
		     "libcoreclrtraceptprovider.so, which needs liblttng-ust in its root and "
		     "DOTNET_LTTng unset or 1: 'tracerig --check -c PROFILE -p PID' tells which is "
		     "missing"
		   : "",
	    dotnet && other ? "; " : "",
	    other ? "a traced process must link or preload the library that defines the "
		    "tracepoints"
		  : "");
	if (dotnet)
		explain_dotnet_targets(st);
}

static void report_providers(struct lttng_state *st, const char *trace_dir)
{
	const struct lttng_event_list *rules = &st->ust_events;
	struct provider_seen ps = { rules, calloc(rules->n ? rules->n : 1, 1) };
	size_t n_providers = 0, n_seen = 0, missing_rules = 0, used = 0;
	int dotnet = 0, other = 0;
	char names[512] = "";

	if (!ps.seen) {
		LOG(st, TRACERIG_LOG_WARN, "telling which providers registered failed: %s",
		    strerror(ENOMEM));
		return;
	}
	ctf_event_names(trace_dir, rule_match, &ps);
	for (size_t i = 0; i < rules->n; i++) {
		size_t len = provider_len(rules->names[i]), n_rules;
		int seen = 0;

		if (provider_counted(rules, i, len))
			continue;
		n_rules = rules_of_provider(&ps, i, len, &seen);
		n_providers++;
		if (seen) {
			n_seen++;
			continue;
		}
		missing_rules += n_rules;
		if (strncmp(rules->names[i], "DotNETRuntime", 13) == 0)
			dotnet = 1;
		else
			other = 1;
		if (used < sizeof(names))
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s'%.*s'",
						 used ? ", " : "", (int)len, rules->names[i]);
	}
	free(ps.seen);
	st->svc->run->counter_set(st->ctx, "ust_providers", n_providers);
	st->svc->run->counter_set(st->ctx, "ust_providers_seen", n_seen);
	st->svc->run->counter_set(st->ctx, "ust_providers_missing", n_providers - n_seen);
	if (n_seen == n_providers)
		return;
	warn_missing_providers(st, names, n_providers - n_seen, missing_rules, dotnet, other);
}

static int report_trace(struct lttng_state *st, const struct ctf_summary *s);

static int lttng_flush(void *state, struct tracerig_archive *ar)
{
	struct lttng_state *st = state;
	struct ctf_summary sum;
	int ret;

	(void)ar; /* the session wrote straight into the staging directory */
	if (st->daemon_died) {
		/* Said at stop; flushing what was left would call it fine. */
		return -ESRCH;
	}
	if (st->stop_error < 0) {
		/* The files stay in the archive, but an unfinished trace is not "ok". */
		return st->stop_error;
	}
	ret = ctf_summarize(st->trace_dir, &sum);
	if (ret < 0) {
		LOG(st, TRACERIG_LOG_ERROR, "reading the trace in %s failed: %s", st->trace_dir,
		    strerror(-ret));
		return ret;
	}
	st->svc->run->counter_set(st->ctx, "trace_bytes", sum.bytes);
	st->svc->run->counter_set(st->ctx, "streams", sum.n_streams);
	report_providers(st, st->trace_dir);
	return report_trace(st, &sum);
}

/* The trace's clock and size, logged; -EBADMSG when no reader could place
 * its events. */
static int report_trace(struct lttng_state *st, const struct ctf_summary *s)
{
	const struct ctf_summary sum = *s;

	if (!sum.n_metadata)
		return 0;
	if (!sum.have_clock) {
		LOG(st, TRACERIG_LOG_ERROR, "reading the trace failed: %s/%s declares no clock, so "
		    "no reader can place its events (the session daemon or its consumer stopped "
		    "writing it; record again)", TRACE_ENTRY, sum.first_metadata);
		return -EBADMSG;
	}
	/* CTF timestamps count from the trace clock's offset (ns since the
	 * Epoch at clock value 0); for "monotonic" that is realtime -
	 * monotonic, the same pair the manifest's clock section records. */
	st->svc->run->counter_set(st->ctx, "clock_offset_ns", (uint64_t)sum.clock_offset_ns);
	LOG(st, strcmp(sum.clock_name, "monotonic") == 0 ? TRACERIG_LOG_INFO : TRACERIG_LOG_WARN,
	    "trace clock '%s', offset %lld ns from the Epoch%s", sum.clock_name,
	    (long long)sum.clock_offset_ns,
	    strcmp(sum.clock_name, "monotonic") == 0 ? ""
		    : " (not CLOCK_MONOTONIC: LTTng events will not line up with perf samples)");
	LOG(st, TRACERIG_LOG_INFO, "%s: %llu files, %llu bytes, %zu stream(s)", TRACE_ENTRY,
	    (unsigned long long)sum.files, (unsigned long long)sum.bytes, sum.n_streams);
	return 0;
}

/* lttngTrace/ in the snapshot's staging directory `staged`, its absolute
 * path in `trace`. */
static int make_trace_dir(struct lttng_state *st, const char *staged, char *trace, size_t trace_len)
{
	char base[PATH_MAX];
	int ret;

	ret = absolute_dir(staged, base, sizeof(base));
	if (ret == 0 && snprintf(trace, trace_len, "%s/%s", base, TRACE_ENTRY) >= (int)trace_len)
		ret = -ENAMETOOLONG;
	if (ret == 0 && mkdir(trace, 0755) < 0 && errno != EEXIST)
		ret = -errno;
	if (ret < 0)
		LOG(st, TRACERIG_LOG_ERROR,
		    "creating %s in the snapshot's staging directory %s "
		    "failed: %s",
		    TRACE_ENTRY, staged, strerror(-ret));
	return ret;
}

/* LTTng's snapshot of the rings into `trace`, in a directory named
 * `prefix`-*; a lost daemon or session said and told apart. */
static int record_snapshot(struct lttng_state *st, const char *trace, char *prefix,
			   size_t prefix_len)
{
	struct lt_sigpipe g;
	int ret;

	lt_sigpipe_block(&g);
	ret = lt_session_snapshot(&st->session, trace, prefix, prefix_len);
	lt_sigpipe_restore(&g);
	if (ret < 0) {
		rmdir(trace);
		if (sessiond_gone(&st->daemon) || st->session.last_error == LTTNG_ERR_NO_SESSIOND)
			return daemon_died(st, "recording a snapshot of");
		if (session_lost(st->session.last_error)) {
			st->session.created = 0; /* nothing left to destroy */
			LOG(st, TRACERIG_LOG_ERROR,
			    "recording a snapshot of session %s failed: the "
			    "session daemon no longer knows it (someone ran 'lttng destroy' on it, or "
			    "the daemon was restarted): no LTTng events in this or later snapshots",
			    st->session.name);
			return -ENOENT;
		}
		return ret;
	}
	return 0;
}

/* Flight mode: LTTng records what the session's ring buffers hold now
 * into the snapshot's staging area, as lttngTrace/.  The rings are
 * bounded by size, not time: events older than from_ns may be in it
 * (and the oldest of the window gone when the rings filled faster than
 * flight_rate); the manifest records the range asked for.  Called on the
 * core's flight thread, never while start or stop runs. */
static int lttng_snapshot(void *state, struct tracerig_archive *ar, uint64_t from_ns,
			  uint64_t to_ns)
{
	struct lttng_state *st = state;
	const char *staged = tracerig_internal(st->svc)->archive_dir(ar);
	char trace[PATH_MAX], prefix[64] = "";
	struct ctf_summary sum;
	int ret;

	(void)from_ns;
	(void)to_ns;
	if (!staged)
		return -EINVAL;
	if (st->daemon_died)
		return -ESRCH; /* said when it was found */
	if (!st->session.created)
		return -ENOENT; /* lost, and said so, at an earlier snapshot or stop */
	if (sessiond_gone(&st->daemon))
		return daemon_died(st, "recording a snapshot of");
	ret = make_trace_dir(st, staged, trace, sizeof(trace));
	if (ret < 0)
		return ret;
	ret = record_snapshot(st, trace, prefix, sizeof(prefix));
	if (ret < 0)
		return ret;
	ret = lt_snapshot_hoist(trace, prefix);
	if (ret < 0 && ret != -ENOENT) {
		LOG(st, TRACERIG_LOG_ERROR, "moving LTTng's snapshot %s-* up into %s failed: %s",
		    prefix, trace, strerror(-ret));
		return ret;
	}
	ret = ctf_summarize(trace, &sum);
	if (ret < 0) {
		LOG(st, TRACERIG_LOG_ERROR, "reading the snapshot's trace in %s failed: %s", trace,
		    strerror(-ret));
		return ret;
	}
	if (!sum.n_metadata) {
		/* Rings exist once a traced process registered with the session;
		 * before, LTTng writes at most empty directories. */
		LOG(st, TRACERIG_LOG_INFO, "snapshot: no ring buffer exists yet (no traced process "
		    "registered an enabled provider): no %s in this snapshot", TRACE_ENTRY);
		lt_remove_empty_dirs(trace);
		return 0;
	}
	st->svc->run->counter_set(st->ctx, "trace_bytes", sum.bytes);
	st->svc->run->counter_set(st->ctx, "streams", sum.n_streams);
	/* Which providers never registered is the session's story: told once,
	 * with the final snapshot. */
	if (st->stopped)
		report_providers(st, trace);
	return report_trace(st, &sum);
}

static void lttng_fini(void *state)
{
	struct lttng_state *st = state;
	struct lt_sigpipe g;
	int ret, busy;

	if (!st)
		return;
	lt_sigpipe_block(&g);
	lt_session_destroy(&st->session);
	busy = st->daemon.started ? sessiond_other_sessions() : 0;
	lt_sigpipe_restore(&g);
	if (busy > 0) {
		/* Someone else started recording with the daemon we started:
		 * stopping it would destroy their session. */
		LOG(st, TRACERIG_LOG_WARN, "leaving lttng-sessiond (pid %d) running: %d other "
		    "session(s) use it (stop it with 'kill %d' when they are done)",
		    (int)st->daemon.pid, busy, (int)st->daemon.pid);
		sessiond_forget(&st->daemon);
	}
	ret = sessiond_stop(&st->daemon, 10000);
	if (ret < 0)
		LOG(st, TRACERIG_LOG_WARN, "the session daemon we started (pid %d) did not exit on "
		    "SIGTERM: %s", (int)st->daemon.pid, strerror(-ret));
	/* Everything is cleaned up: the watchdog has nothing left to do. */
	lt_cleanup_session(st->svc, st->ctx, NULL, NULL);
	lt_cleanup_daemon(st->svc, st->ctx, 0);
	lttng_event_list_free(&st->ust_events);
	lttng_event_list_free(&st->kernel_events);
	free(st);
}

TRACERIG_PLUGIN = {
	.abi_version = TRACERIG_ABI_VERSION,
	.name = "lttng",
	.version = PACKAGE_VERSION,
	.kind = TRACERIG_PLUGIN_SOURCE,
	.description = "LTTng userspace (and kernel) events via liblttng-ctl, CTF in lttngTrace/",
	.package = "tracerig-lttng",
	.keys = lttng_keys,
	.caps = TRACERIG_CAP_FLIGHT,
	.internal_version = TRACERIG_INTERNAL_VERSION,
	.validate = lttng_validate,
	.check = lttng_check,
	.init = lttng_init,
	.start = lttng_start,
	.stop = lttng_stop,
	.flush = lttng_flush,
	.fini = lttng_fini,
	.snapshot = lttng_snapshot,
	.cleanup = lt_cleanup,
};
