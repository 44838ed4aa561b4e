/* The cleanup process (see watchdog.h).  tracerig tells it, over the pipe,
 * one line at a time: "S<session>" (destroy this session if I die), "s"
 * (no session any more), "D<pid>" (stop this daemon if I die), "d" (no
 * daemon any more), "Q" (I cleaned up myself: exit). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include "session.h"
#include "sessiond.h"
#include "watchdog.h"

static void cleanup(pid_t parent, const char *session, struct sessiond *daemon)
{
	char what[512] = "";
	size_t used = 0;

	if (session[0]) {
		int ret = lt_destroy_session_wait(session, 10000);

		/* Not found: it was never created, or died with its daemon. */
		if (ret != -LTTNG_ERR_SESS_NOT_FOUND && ret != -LTTNG_ERR_NO_SESSIOND)
			used += (size_t)snprintf(what + used, sizeof(what) - used, ret == 0
						 ? "destroyed LTTng session %s"
						 : "destroying LTTng session %s failed (remove it "
						   "with 'lttng destroy %s')", session, session);
	}
	if (daemon->started && used < sizeof(what)) {
		pid_t pid = daemon->pid;

		sessiond_stop(daemon, 10000);
		snprintf(what + used, sizeof(what) - used, "%sstopped the lttng-sessiond it "
			 "started (pid %d)", used ? "; " : "", (int)pid);
	}
	if (what[0])
		fprintf(stderr, "tracerig: lttng: tracerig (pid %d) ended without cleaning up: "
			"%s\n", (int)parent, what);
}

static void __attribute__((noreturn)) watchdog_main(int rfd, pid_t parent)
{
	char session[512] = "", line[512];
	struct sessiond daemon = { .pidfd = -1 };
	int quit = 0;
	size_t have = 0;
	sigset_t none;
	int devnull;

	/* Ctrl-C and the SIGTERM of a supervisor are tracerig's to handle; the
	 * watchdog acts on the pipe alone. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, "tracerig-wd", 0, 0, 0);
	/* Keep nothing of tracerig's open (archive files, the command's
	 * pipes, stdout a caller waits on) but the pipe and stderr. */
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
	}
	if (rfd > 3)
		close_range(3, (unsigned)rfd - 1, 0);
	close_range((unsigned)rfd + 1, ~0U, 0);

	for (;;) {
		ssize_t n = read(rfd, line + have, sizeof(line) - 1 - have);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		line[have] = '\0';
		while ((nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			switch (line[0]) {
			case 'S':
				snprintf(session, sizeof(session), "%s", line + 1);
				break;
			case 's':
				session[0] = '\0';
				break;
			case 'D':
				sessiond_forget(&daemon);
				daemon.pid = (pid_t)atoi(line + 1);
				/* Pinned now, while it is surely the daemon. */
				daemon.pidfd = daemon.pid > 0
					? (int)syscall(SYS_pidfd_open, daemon.pid, 0) : -1;
				daemon.started = daemon.pidfd >= 0;
				break;
			case 'd':
				sessiond_forget(&daemon);
				break;
			case 'Q':
				quit = 1;
				break;
			}
			have -= (size_t)(nl + 1 - line);
			memmove(line, nl + 1, have + 1);
		}
		if (have == sizeof(line) - 1)
			have = 0; /* not a line of ours */
	}
	if (!quit)
		cleanup(parent, session, &daemon);
	_exit(0);
}

int lt_watchdog_start(struct lt_watchdog *w)
{
	pid_t parent = getpid();
	int p[2];

	w->pid = 0;
	w->fd = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	w->pid = fork();
	if (w->pid < 0) {
		int ret = -errno;

		close(p[0]);
		close(p[1]);
		w->pid = 0;
		return ret;
	}
	if (w->pid == 0) {
		close(p[1]);
		/* Its own session: a terminal's Ctrl-C or hangup does not reach it. */
		setsid();
		watchdog_main(p[0], parent);
	}
	close(p[0]);
	w->fd = p[1];
	return 0;
}

static int say(struct lt_watchdog *w, const char *line)
{
	size_t len = strlen(line);
	ssize_t n;

	if (w->fd < 0)
		return -EBADF;
	do
		n = write(w->fd, line, len);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

int lt_watchdog_session(struct lt_watchdog *w, const char *name)
{
	char line[300];

	if (!name)
		return say(w, "s\n");
	snprintf(line, sizeof(line), "S%s\n", name);
	return say(w, line);
}

int lt_watchdog_daemon(struct lt_watchdog *w, pid_t pid)
{
	char line[32];

	if (pid <= 0)
		return say(w, "d\n");
	snprintf(line, sizeof(line), "D%d\n", (int)pid);
	return say(w, line);
}

void lt_watchdog_disarm(struct lt_watchdog *w)
{
	if (w->fd >= 0) {
		say(w, "Q\n");
		close(w->fd);
		w->fd = -1;
	}
	if (w->pid > 0)
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	w->pid = 0;
}
