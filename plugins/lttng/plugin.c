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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lttng/lttng.h>
#include <tracerig/plugin.h>

#include "ctf.h"
#include "presets.h"
#include "sessiond.h"
#include "session.h"
#include "targets.h"

#define TRACE_ENTRY "lttngTrace"

struct lttng_state {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct sessiond daemon;
	struct lt_session session;
	struct lttng_event_list ust_events, kernel_events;
	struct lt_config cfg;
	char trace_dir[PATH_MAX];
	int stopped;
};

#define LOG(st, lvl, ...) (st)->svc->log((st)->ctx, (lvl), __VA_ARGS__)

static const char *const loglevel_names[] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug_system",
	"debug_program", "debug_process", "debug_module", "debug_unit", "debug_function",
	"debug_line", "debug", NULL,
};

static const struct tracerig_key lttng_keys[] = {
	{ "preset", TRACERIG_KEY_LIST, NULL, NULL, 0, 0,
	  "Named userspace event sets after perfcollect's: default, gccollectonly, gconly, "
	  "gcwithheap, threading, exceptions, jit, loader (each a fixed list of DotNETRuntime* "
	  "tracepoints). With neither preset nor events set, `default` is used." },
	{ "events", TRACERIG_KEY_LIST, NULL, NULL, 0, 0,
	  "Userspace tracepoints to record besides the preset's: full names or wildcards, "
	  "e.g. DotNETRuntime:GC*, lttng_ust_libc:*." },
	{ "loglevel", TRACERIG_KEY_ENUM, "any",
	  "any,emerg,alert,crit,err,warning,notice,info,debug_system,debug_program,"
	  "debug_process,debug_module,debug_unit,debug_function,debug_line,debug", 0, 0,
	  "Record only userspace events at this log level or more severe (`any`: no filter)." },
	{ "loglevel_only", TRACERIG_KEY_BOOL, "no", NULL, 0, 0,
	  "With loglevel: record exactly that level instead of that level and more severe." },
	{ "filter", TRACERIG_KEY_STRING, NULL, NULL, 0, 0,
	  "LTTng filter expression applied to every userspace event, e.g. "
	  "`seq < 100 && $ctx.procname == \"myapp\"`." },
	{ "kernel_events", TRACERIG_KEY_LIST, NULL, NULL, 0, 0,
	  "Kernel tracepoints (sched_switch, sched_process_*) or syscall:NAME; needs "
	  "lttng-modules. Without them: a warning, and userspace only unless lttng is required." },
	{ "subbuf_size", TRACERIG_KEY_SIZE, "1M", NULL, 4096, 1LL << 32,
	  "Size of one sub-buffer (a power of two); per CPU, per user (or per process)." },
	{ "subbuf_count", TRACERIG_KEY_INT, "4", NULL, 2, 4096,
	  "Sub-buffers per ring buffer (a power of two)." },
	{ "mode", TRACERIG_KEY_ENUM, "discard", "discard,overwrite", 0, 0,
	  "When the buffers are full: discard new events (counted as discarded_events) or "
	  "overwrite the oldest (flight recorder)." },
	{ "buffers", TRACERIG_KEY_ENUM, "per-uid", "per-uid,per-pid", 0, 0,
	  "Buffer ownership: per-uid (ust/uid/N/64-bit, what TraceEvent reads) or per-pid." },
	{ "switch_timer", TRACERIG_KEY_DURATION, "0", NULL, 0, 3600000,
	  "Flush sub-buffers at least this often (0 = only when full or at stop)." },
	{ "start_sessiond", TRACERIG_KEY_ENUM, "auto", "auto,yes,no", 0, 0,
	  "Start lttng-sessiond when none runs, and stop it afterwards (auto = yes for root)." },
	{ "sessiond_path", TRACERIG_KEY_STRING, "lttng-sessiond", NULL, 0, 0,
	  "The session daemon binary started by start_sessiond." },
	{ "dotnet_env", TRACERIG_KEY_BOOL, "yes", NULL, 0, 0,
	  "Give the launched command DOTNET_EnableEventLog=1 so the .NET runtime emits its "
	  "LTTng events." },
	{ "command_env", TRACERIG_KEY_LIST, NULL, NULL, 0, 0,
	  "More NAME=VALUE pairs for the launched command, e.g. "
	  "LD_PRELOAD=liblttng-ust-libc-wrapper.so." },
	{ NULL, 0, NULL, NULL, 0, 0, NULL },
};

static int is_pow2(unsigned long long v)
{
	return v && !(v & (v - 1));
}

static int autostart_wanted(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	const char *v = svc->config_string(ctx, "start_sessiond");

	if (v && strcmp(v, "yes") == 0)
		return 1;
	if (v && strcmp(v, "no") == 0)
		return 0;
	return geteuid() == 0;
}

/* Is "lttng" in [tracerig] required?  Decides whether a missing kernel
 * tracer is fatal. */
static int backend_required(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	const char *req = svc->session_string(ctx, "required");
	const char *p = req;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len == 5 && strncmp(p, "lttng", 5) == 0)
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
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

static int check_unguarded(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			   char *advice, size_t advice_len)
{
	const char *binary = svc->config_string(ctx, "sessiond_path");
	int kernel = svc->config_is_set(ctx, "kernel_events");
	size_t used = 0;

	if (!sessiond_alive()) {
		if (!autostart_wanted(svc, ctx)) {
			snprintf(advice, advice_len, "no LTTng session daemon is running (start one "
				 "with 'lttng-sessiond --daemonize', or set start_sessiond = yes)");
			return -ENOENT;
		}
		if (!on_path(binary)) {
			snprintf(advice, advice_len, "no session daemon runs and %s is not "
				 "installed (apt-get install lttng-tools)", binary);
			return -ENOENT;
		}
		used = (size_t)snprintf(advice, advice_len, "no session daemon runs: tracerig "
					"will start %s and stop it afterwards", binary);
	}
	if (kernel && !lt_kernel_tracer_loaded()) {
		if (backend_required(svc, ctx)) {
			snprintf(advice, advice_len, "kernel tracer not available: kernel_events "
				 "needs lttng-modules (apt-get install lttng-modules-dkms)");
			return -ENOTSUP;
		}
		if (used < advice_len)
			snprintf(advice + used, advice_len - used, "%skernel tracer not available: "
				 "kernel_events will be skipped", used ? "; " : "");
	}
	return 0;
}

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

static int parse_loglevel(const char *v)
{
	if (!v || strcmp(v, "any") == 0)
		return -1;
	for (int i = 0; loglevel_names[i]; i++)
		if (strcmp(loglevel_names[i], v) == 0)
			return i; /* same order as enum lttng_loglevel */
	return -1;
}

/* DOTNET_EnableEventLog=1 plus command_env's NAME=VALUE pairs. */
static int set_command_env(struct lttng_state *st)
{
	const char *list = st->svc->config_string(st->ctx, "command_env");
	const char *p = list;
	int ret;

	if (st->svc->config_bool(st->ctx, "dotnet_env")) {
		ret = st->svc->target_setenv(st->ctx, "DOTNET_EnableEventLog", "1");
		if (ret < 0) {
			LOG(st, TRACERIG_LOG_ERROR, "setting DOTNET_EnableEventLog for the command "
			    "failed: %s", strerror(-ret));
			return ret;
		}
	}
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char item[4096], *eq;

		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len) {
			snprintf(item, sizeof(item), "%.*s", (int)len, p);
			eq = strchr(item, '=');
			if (!eq || eq == item) {
				LOG(st, TRACERIG_LOG_ERROR, "command_env entry '%s' is not NAME=VALUE",
				    item);
				return -EINVAL;
			}
			*eq = '\0';
			ret = st->svc->target_setenv(st->ctx, item, eq + 1);
			if (ret < 0) {
				LOG(st, TRACERIG_LOG_ERROR, "setting %s for the command failed: %s",
				    item, strerror(-ret));
				return ret;
			}
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static int read_config(struct lttng_state *st)
{
	const struct tracerig_services *svc = st->svc;
	struct tracerig_ctx *ctx = st->ctx;
	const char *preset = svc->config_string(ctx, "preset");
	const char *events = svc->config_string(ctx, "events");
	struct lt_config *cfg = &st->cfg;
	char err[1024] = "";
	long long size = svc->config_int(ctx, "subbuf_size");
	long long count = svc->config_int(ctx, "subbuf_count");
	const char *staging = svc->staging_dir(ctx);
	int ret;

	if ((!preset || !*preset) && (!events || !*events))
		preset = "default";
	ret = lttng_event_list_build(&st->ust_events, preset, events, err, sizeof(err));
	if (ret < 0) {
		LOG(st, TRACERIG_LOG_ERROR, "invalid preset/events: %s", err);
		return ret;
	}
	ret = lttng_event_list_build(&st->kernel_events, NULL,
				     svc->config_string(ctx, "kernel_events"), err, sizeof(err));
	if (ret < 0) {
		LOG(st, TRACERIG_LOG_ERROR, "invalid kernel_events: %s", err);
		return ret;
	}
	if (!is_pow2((unsigned long long)size) || !is_pow2((unsigned long long)count)) {
		LOG(st, TRACERIG_LOG_ERROR, "subbuf_size (%lld) and subbuf_count (%lld) must be "
		    "powers of two (e.g. 1M and 4)", size, count);
		return -EINVAL;
	}
	if (!staging) {
		LOG(st, TRACERIG_LOG_ERROR, "the core gave no staging directory");
		return -EINVAL;
	}
	if (snprintf(st->trace_dir, sizeof(st->trace_dir), "%s/%s", staging, TRACE_ENTRY) >=
	    (int)sizeof(st->trace_dir))
		return -ENAMETOOLONG;

	cfg->output_dir = st->trace_dir;
	cfg->channel.subbuf_size = (uint64_t)size;
	cfg->channel.subbuf_count = (uint64_t)count;
	cfg->channel.overwrite = strcmp(svc->config_string(ctx, "mode"), "overwrite") == 0;
	cfg->channel.per_pid = strcmp(svc->config_string(ctx, "buffers"), "per-pid") == 0;
	cfg->channel.switch_timer_us = (unsigned)svc->config_int(ctx, "switch_timer") * 1000u;
	cfg->ust_events = &st->ust_events;
	cfg->kernel_events = &st->kernel_events;
	cfg->filter = svc->config_string(ctx, "filter");
	cfg->loglevel = parse_loglevel(svc->config_string(ctx, "loglevel"));
	cfg->loglevel_only = svc->config_bool(ctx, "loglevel_only");
	cfg->kernel_required = backend_required(svc, ctx);
	return 0;
}

static void lttng_fini(void *state);

static int init_unguarded(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			  void **state)
{
	struct lttng_state *st = calloc(1, sizeof(*st));
	char err[1024] = "";
	int ret;

	if (!st)
		return -ENOMEM;
	st->svc = svc;
	st->ctx = ctx;
	st->daemon.pidfd = -1;
	ret = read_config(st);
	if (ret == 0)
		ret = set_command_env(st);
	if (ret < 0)
		goto fail;

	ret = sessiond_ensure(&st->daemon, svc->config_string(ctx, "sessiond_path"),
			      autostart_wanted(svc, ctx), st->kernel_events.n > 0, err, sizeof(err));
	if (ret < 0) {
		LOG(st, TRACERIG_LOG_ERROR, "%s", err);
		goto fail;
	}
	if (st->daemon.started)
		LOG(st, TRACERIG_LOG_INFO, "started lttng-sessiond (pid %d); it is stopped at the end",
		    (int)st->daemon.pid);

	ret = lt_session_create(&st->session, svc, ctx, &st->cfg);
	if (ret < 0)
		goto fail;
	LOG(st, TRACERIG_LOG_INFO, "session %s: %zu userspace event rule(s)%s, channel %llu x %llu "
	    "bytes %s, %s buffers, trace in %s", st->session.name, st->ust_events.n,
	    st->session.kernel ? " + kernel events" : "",
	    (unsigned long long)st->cfg.channel.subbuf_count,
	    (unsigned long long)st->cfg.channel.subbuf_size,
	    st->cfg.channel.overwrite ? "overwrite" : "discard",
	    st->cfg.channel.per_pid ? "per-PID" : "per-UID", TRACE_ENTRY);
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
	const struct tracerig_targets *t = st->svc->targets(st->ctx);
	struct pid_set hosts = { 0 };
	pid_t *vpids = NULL;
	size_t n_pids;
	int ret = 0;

	if (t->system_wide)
		return 0;
	for (size_t i = 0; i < t->n_pids && ret == 0; i++)
		ret = pid_set_add(&hosts, t->pids[i]);
	n_pids = hosts.n;
	if (ret == 0 && hosts.n)
		ret = pid_set_add_descendants(&hosts);
	if (ret == 0 && t->command_pid > 0)
		ret = pid_set_add(&hosts, t->command_pid);
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
	pid_set_free(&hosts);
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
		st->svc->progress_set(st->ctx, "recording %zu event rules", st->ust_events.n);
	lt_sigpipe_restore(&g);
	return ret;
}

static int lttng_stop(void *state)
{
	struct lttng_state *st = state;
	struct lt_sigpipe g;
	int ret;

	if (st->stopped)
		return 0;
	st->stopped = 1;
	lt_sigpipe_block(&g);
	ret = lt_session_stop(&st->session);
	lt_sigpipe_restore(&g);
	st->svc->counter_set(st->ctx, "discarded_events", st->session.discarded_events);
	st->svc->counter_set(st->ctx, "lost_packets", st->session.lost_packets);
	if (st->session.discarded_events || st->session.lost_packets)
		LOG(st, TRACERIG_LOG_WARN, "%llu event(s) discarded and %llu packet(s) lost: the "
		    "buffers filled faster than they were written out (raise subbuf_size or "
		    "subbuf_count, or record fewer events)",
		    (unsigned long long)st->session.discarded_events,
		    (unsigned long long)st->session.lost_packets);
	return ret;
}

static int lttng_flush(void *state, struct tracerig_archive *ar)
{
	struct lttng_state *st = state;
	struct ctf_summary sum;
	int ret;

	(void)ar; /* the session wrote straight into the staging directory */
	ret = ctf_summarize(st->trace_dir, &sum);
	if (ret < 0) {
		LOG(st, TRACERIG_LOG_ERROR, "cannot read the trace in %s: %s", st->trace_dir,
		    strerror(-ret));
		return ret;
	}
	st->svc->counter_set(st->ctx, "trace_bytes", sum.bytes);
	st->svc->counter_set(st->ctx, "streams", sum.n_streams);
	if (!sum.n_metadata) {
		LOG(st, TRACERIG_LOG_WARN, "the session recorded nothing: no traced process "
		    "registered with the session daemon (a .NET app needs DOTNET_LTTng unset or 1 "
		    "and libcoreclrtraceptprovider.so; other apps must link liblttng-ust)");
		return 0;
	}
	if (sum.have_clock) {
		/* CTF timestamps count from the trace clock's offset (ns since the
		 * Epoch at clock value 0); for "monotonic" that is realtime -
		 * monotonic, the same pair the manifest's clock section records. */
		st->svc->counter_set(st->ctx, "clock_offset_ns", (uint64_t)sum.clock_offset_ns);
		LOG(st, strcmp(sum.clock_name, "monotonic") == 0 ? TRACERIG_LOG_INFO
								  : TRACERIG_LOG_WARN,
		    "trace clock '%s', offset %lld ns from the Epoch%s", sum.clock_name,
		    (long long)sum.clock_offset_ns,
		    strcmp(sum.clock_name, "monotonic") == 0 ? ""
			    : " (not CLOCK_MONOTONIC: LTTng events will not line up with perf samples)");
	}
	LOG(st, TRACERIG_LOG_INFO, "%s: %llu files, %llu bytes, %zu stream(s)", TRACE_ENTRY,
	    (unsigned long long)sum.files, (unsigned long long)sum.bytes, sum.n_streams);
	return 0;
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
	.check = lttng_check,
	.init = lttng_init,
	.start = lttng_start,
	.stop = lttng_stop,
	.flush = lttng_flush,
	.fini = lttng_fini,
};
