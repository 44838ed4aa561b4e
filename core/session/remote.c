/* A detached session's control socket, served from the session's main
 * loop: no thread, so a request never races the lifecycle.  Requests that
 * arrive while the session stops or packages wait in the backlog; `stop`
 * keeps its connection open until the archive is written. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "core/exitcodes.h"
#include "core/log.h"
#include "flight.h"
#include "lib/vec.h"
#include "core/archive/output.h"
#include "mode.h"
#include "options.h"
#include "remote.h"
#include "session.h"

struct tr_remote {
	int listen_fd;
	int ready_fd; /* `tracerig start` waits on it */
	char socket_path[4096];
	char log_path[4096];
	int *stoppers; /* connections that asked to stop */
	size_t n_stoppers, cap_stoppers;
	/* --foreground under systemd (Type=notify): $NOTIFY_SOCKET, told
	 * READY=1 once collection runs, so `systemctl start` returns when
	 * `tracerig snapshot` can be answered and fails if the session does. */
	char notify_socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* A foreground session's log is its stderr: the journal under systemd. */
#define FOREGROUND_LOG "standard error (the journal when systemd runs it)"

int tr_remote_open(struct tr_session *s)
{
	const char *name = s->opts->session_name;
	struct tr_remote *r;
	char why[512];

	if (!name)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r) {
		tr_err("cannot set up the control socket: %s", strerror(ENOMEM));
		return -1;
	}
	r->listen_fd = tr_control_listen(name, why, sizeof(why));
	if (r->listen_fd < 0) {
		tr_err("cannot open the session's control socket: %s", why);
		free(r);
		return -1;
	}
	r->ready_fd = s->opts->ready_fd;
	tr_control_file(name, ".sock", r->socket_path, sizeof(r->socket_path));
	if (s->opts->foreground) {
		const char *notify = getenv("NOTIFY_SOCKET");

		snprintf(r->log_path, sizeof(r->log_path), "%s", FOREGROUND_LOG);
		if (notify && strlen(notify) < sizeof(r->notify_socket))
			snprintf(r->notify_socket, sizeof(r->notify_socket), "%s", notify);
		/* Ours alone: a launched command must not speak for the service. */
		unsetenv("NOTIFY_SOCKET");
	} else {
		tr_control_file(name, ".log", r->log_path, sizeof(r->log_path));
	}
	s->remote = r;
	return 0;
}

int tr_remote_fd(const struct tr_session *s)
{
	return s->remote ? s->remote->listen_fd : -1;
}

static void reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(int fd, const char *fmt, ...)
{
	char line[4352];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* A reader that went away loses its answer, nothing more. */
	if (tr_control_send(fd, line) < 0)
		tr_log(TRACERIG_LOG_DEBUG, NULL, "a control client left before its answer");
}

/* The caller of `tracerig stop` is in another directory. */
static void describe_targets(const struct tr_session *s, char *buf, size_t len)
{
	size_t pos;

	if (s->opts->command) {
		snprintf(buf, len, "command %s (PID %d)", s->opts->command[0],
			 (int)s->targets.command_pid);
		return;
	}
	if (!s->opts->n_pids) {
		snprintf(buf, len, "the whole machine");
		return;
	}
	pos = (size_t)snprintf(buf, len, "PIDs");
	for (size_t i = 0; i < s->opts->n_pids && pos < len; i++)
		pos += (size_t)snprintf(buf + pos, len - pos, " %d", (int)s->opts->pids[i]);
}

static void answer_status(const struct tr_session *s, int fd)
{
	char started[32] = "?", targets[256];
	time_t t = (time_t)(s->start_real_ns / 1000000000ull);
	struct timespec now;
	struct tm tm;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (gmtime_r(&t, &tm))
		strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);
	describe_targets(s, targets, sizeof(targets));
	reply(fd, "name: %s", s->opts->session_name);
	reply(fd, "pid: %d", (int)getpid());
	reply(fd, "state: collecting");
	if (s->mode->window_ns(s))
		reply(fd, "mode: %s (window %.1f s; `tracerig snapshot %s` writes one)",
		      s->mode->name, s->mode->window_ns(s) / 1e9, s->opts->session_name);
	reply(fd, "profile: %s", s->profile_path);
	reply(fd, "targets: %s", targets);
	reply(fd, "started: %s", started);
	reply(fd, "collecting for: %.1f s",
	      ((uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec - s->window_start_ns) /
		      1e9);
	/* A flight recorder writes its snapshots into a directory. */
	reply(fd, "output: %s", s->mode->destination(s));
	reply(fd, "log: %s", s->remote->log_path);
}

/* `tracerig snapshot`: the connection waits for the archive's path,
 * which the session sends once the snapshot is written (flight.c). */
static void answer_snapshot(const struct tr_session *s, int fd)
{
	char why[512];

	if (s->mode->takes_snapshots(s, why, sizeof(why)) < 0) {
		reply(fd, "error: %s", why);
		close(fd);
		return;
	}
	reply(fd, "snapshot: %d", (int)getpid());
	tr_info("snapshot requested through the control socket");
	tr_flight_request(s->flight, TR_TRIGGER_CONTROL, fd);
}

/* Only root may steer a session; the socket's mode says so already, and
 * this holds even if someone loosened it. */
static int peer_is_root(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == 0;
}

/* A connection that asked to stop waits for the archive's path.  0, or -1
 * when it cannot be kept (it was told so and closed). */
static int add_stopper(struct tr_remote *r, int fd)
{
	int *grown = tr_vec_grow(r->stoppers, &r->cap_stoppers, r->n_stoppers + 1,
				 sizeof(*grown), 8);

	if (!grown) {
		reply(fd, "failed: the session is out of memory; see %s", r->log_path);
		close(fd);
		return -1;
	}
	r->stoppers = grown;
	r->stoppers[r->n_stoppers++] = fd;
	return 0;
}

/* Reads and answers the request of a connection just accepted; 1 when it
 * asked to stop.  `ended`: the session no longer collects (it packaged),
 * so a stop is only told where the archive is, and a snapshot that it
 * comes too late. */
static int handle(struct tr_session *s, int fd, int ended)
{
	struct tr_remote *r = s->remote;
	char line[64];

	if (!peer_is_root(fd)) {
		reply(fd, "error: only root controls tracerig sessions");
		close(fd);
		return 0;
	}
	/* The client writes its one line right after connecting. */
	if (tr_control_read_line(fd, line, sizeof(line), 1000) <= 0) {
		close(fd);
		return 0;
	}
	if (strcmp(line, "status") == 0 && !ended) {
		answer_status(s, fd);
		close(fd);
	} else if (strcmp(line, "status") == 0) {
		reply(fd, "name: %s", s->opts->session_name);
		reply(fd, "pid: %d", (int)getpid());
		reply(fd, "state: ended");
		close(fd);
	} else if (strcmp(line, "snapshot") == 0 && !ended) {
		answer_snapshot(s, fd);
	} else if (strcmp(line, "snapshot") == 0) {
		reply(fd, "failed: the session ended before the snapshot was taken");
		close(fd);
	} else if (strcmp(line, "stop") == 0) {
		/* Every stop is told what became of the session, the ones that
		 * came while it was already stopping too. */
		reply(fd, "stopping: %d", (int)getpid());
		return add_stopper(r, fd) == 0;
	} else {
		reply(fd, "error: unknown request '%s' (status, snapshot, stop)", line);
		close(fd);
	}
	return 0;
}

int tr_remote_serve(struct tr_session *s)
{
	struct tr_remote *r = s->remote;
	int stop = 0;

	if (!r)
		return 0;
	for (;;) {
		int fd = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			break; /* EAGAIN: none left */
		if (handle(s, fd, 0))
			stop = 1;
	}
	if (stop)
		tr_info("stop requested through the control socket");
	return stop;
}

/* sd_notify(3)'s protocol without libsystemd: one datagram to the
 * service manager's socket, a path or, after '@', an abstract name. */
static void notify_service_manager(const char *socket_path, const char *message)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	size_t len = strlen(socket_path);
	int fd;

	if ((socket_path[0] != '/' && socket_path[0] != '@') || len >= sizeof(addr.sun_path)) {
		tr_warn("NOTIFY_SOCKET=%s: not a socket path; the service manager is not told "
			"that collection runs", socket_path);
		return;
	}
	memcpy(addr.sun_path, socket_path, len);
	if (addr.sun_path[0] == '@')
		addr.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || sendto(fd, message, strlen(message), MSG_NOSIGNAL,
			     (struct sockaddr *)&addr,
			     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		tr_warn("cannot tell the service manager (NOTIFY_SOCKET=%s) that collection "
			"runs: %s", socket_path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

void tr_remote_ready(struct tr_session *s)
{
	struct tr_remote *r = s->remote;

	if (r && r->notify_socket[0]) {
		char message[64];

		snprintf(message, sizeof(message), "READY=1\nMAINPID=%d", (int)getpid());
		notify_service_manager(r->notify_socket, message);
		r->notify_socket[0] = '\0';
	}
	if (!r || r->ready_fd < 0)
		return;
	if (write(r->ready_fd, "ready\n", 6) != 6)
		tr_warn("cannot tell `tracerig start` that collection runs: %s", strerror(errno));
	close(r->ready_fd);
	r->ready_fd = -1;
}

void tr_remote_finish(struct tr_session *s, int exit_status)
{
	struct tr_remote *r = s->remote;
	const char *archive = tr_output_absolute(s->output);
	int packaged = exit_status != TR_EXIT_FAILURE && archive && !access(archive, F_OK);
	int fd;

	if (!r)
		return;
	/* Gone first: `tracerig status` must not list a session that ended. */
	if (r->ready_fd >= 0)
		close(r->ready_fd);
	unlink(r->socket_path);
	/* Requests that came while the session stopped and packaged wait in
	 * the backlog: closing it unanswered would leave a second `tracerig
	 * stop` with a reset connection and nothing to say. */
	while ((fd = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		handle(s, fd, 1);
	close(r->listen_fd);
	for (size_t i = 0; i < r->n_stoppers; i++) {
		if (packaged)
			reply(r->stoppers[i], "archive: %s", archive);
		else
			reply(r->stoppers[i], "failed: exit status %d, see %s", exit_status,
			      r->log_path);
		close(r->stoppers[i]);
	}
	free(r->stoppers);
	free(r);
	s->remote = NULL;
}
