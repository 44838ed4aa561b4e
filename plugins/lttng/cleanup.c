/* lttng's cleanups (see cleanup.h).  They run in the core's watchdog, a
 * process forked from tracerig before init: this file's code is there, none
 * of the plugin's state, so each cleanup's arg says all it needs. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include "cleanup.h"
#include "session.h"
#include "sessiond.h"

#define SALVAGE_PREFIX "tracerig-salvage"

/* A flight session's rings are on no disk: their content is recorded into
 * the staging directory's trace dir, which the watchdog packages next.
 * What it did, for `said`. */
static const char *salvage_snapshot(const char *name, const char *dir)
{
	int ret;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return "; its last snapshot failed: cannot create the trace directory";
	ret = lt_snapshot_record_local(name, dir, SALVAGE_PREFIX);
	if (ret == -LTTNG_ERR_SESS_NOT_FOUND || ret == -LTTNG_ERR_NO_SESSIOND) {
		rmdir(dir);
		return "";
	}
	if (ret < 0) {
		rmdir(dir);
		return "; its last snapshot failed";
	}
	if (lt_snapshot_hoist(dir, SALVAGE_PREFIX) < 0)
		return "; its last snapshot is in lttngTrace/" SALVAGE_PREFIX "-*";
	/* Before any traced process registered: empty directories only. */
	lt_remove_empty_dirs(dir);
	return "; its last snapshot is in lttngTrace/";
}

/* arg: "NAME", or "NAME DIR" for a flight session (DIR: where to record
 * the rings' content before destroying it). */
static void destroy_session(const char *arg, char *said, size_t said_len)
{
	char name[128];
	const char *dir = strchr(arg, ' '), *salvaged = "";
	int ret;

	snprintf(name, sizeof(name), "%.*s", dir ? (int)(dir - arg) : (int)strlen(arg), arg);
	if (dir && dir[1] == '/')
		salvaged = salvage_snapshot(name, dir + 1);
	ret = lt_destroy_session_wait(name, 10000);
	/* Not found: it was never created, or died with its daemon. */
	if (ret == -LTTNG_ERR_SESS_NOT_FOUND || ret == -LTTNG_ERR_NO_SESSIOND)
		return;
	snprintf(said, said_len, ret == 0 ? "destroyed LTTng session %s%s"
			 : "destroying LTTng session %s failed (remove it with 'lttng destroy %s')",
		 name, ret == 0 ? salvaged : name);
}

/* arg: "PID STARTTIME", so that a PID reused since is never signalled. */
static void stop_daemon(const char *arg, char *said, size_t said_len)
{
	struct sessiond d = { .pidfd = -1 };
	unsigned long long starttime;
	int pid;

	if (sscanf(arg, "%d %llu", &pid, &starttime) != 2 || pid <= 0)
		return;
	d.pid = (pid_t)pid;
	/* Pinned first, then checked to be the daemon still: from here on
	 * the pidfd names it and no later process. */
	d.pidfd = (int)syscall(SYS_pidfd_open, d.pid, 0);
	if (d.pidfd < 0 || !lt_owner_alive(d.pid, starttime)) {
		sessiond_forget(&d);
		return; /* gone already */
	}
	d.started = 1;
	sessiond_stop(&d, 10000);
	snprintf(said, said_len, "stopped the lttng-sessiond it started (pid %d)", pid);
}

void lt_cleanup(const char *key, const char *arg, char *said, size_t said_len)
{
	if (strcmp(key, "session") == 0)
		destroy_session(arg, said, said_len);
	else if (strcmp(key, "daemon") == 0)
		stop_daemon(arg, said, said_len);
}

int lt_cleanup_session(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
		       const char *name, const char *salvage_dir)
{
	char arg[201];

	/* The arg is one line of at most 200 bytes: a longer staging path
	 * only loses the last snapshot, never the destruction. */
	if (name && salvage_dir && !strchr(salvage_dir, '\n') &&
	    snprintf(arg, sizeof(arg), "%s %s", name, salvage_dir) < (int)sizeof(arg))
		return svc->run->watchdog_cleanup(ctx, "session", arg);
	return svc->run->watchdog_cleanup(ctx, "session", name);
}

int lt_cleanup_daemon(const struct tracerig_services *svc, struct tracerig_ctx *ctx, pid_t pid)
{
	unsigned long long starttime;
	char arg[64];
	int ret;

	if (pid <= 0)
		return svc->run->watchdog_cleanup(ctx, "daemon", NULL);
	ret = lt_proc_starttime(pid, &starttime);
	if (ret < 0)
		return ret;
	snprintf(arg, sizeof(arg), "%d %llu", (int)pid, starttime);
	return svc->run->watchdog_cleanup(ctx, "daemon", arg);
}
