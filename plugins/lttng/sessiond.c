/* The session daemon: everything else in this plugin talks to it through
 * liblttng-ctl.  Starting the daemon binary is the one thing the library
 * cannot do for us. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include "lib/procpid.h"
#include "sessiond.h"

extern char **environ;

int sessiond_alive(void)
{
	return lttng_session_daemon_alive() == 1;
}

const char *sessiond_rundir(char *buf, size_t len)
{
	const char *home;

	/* lttng-tools: root's daemon lives in /var/run/lttng, a user's in
	 * $LTTNG_HOME/.lttng (LTTNG_HOME defaulting to HOME). */
	if (geteuid() == 0) {
		snprintf(buf, len, "/var/run/lttng");
		return buf;
	}
	home = getenv("LTTNG_HOME");
	if (!home || !*home)
		home = getenv("HOME");
	snprintf(buf, len, "%s/.lttng", home && *home ? home : "/tmp");
	return buf;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The process that answers on the client socket, from the socket's peer
 * credentials: the daemon itself, whatever its pid file says.  A daemon
 * killed with SIGKILL leaves a pid file naming a PID the kernel may have
 * handed to anyone since, and a daemon that ends cleanly removes the pid
 * file even when another one has started meanwhile. */
static pid_t answering_pid(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char dir[4096];
	pid_t pid;
	int fd;

	if (snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/client-lttng-sessiond",
		     sessiond_rundir(dir, sizeof(dir))) >= (int)sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		pid = -errno;
	else
		pid = cred.pid > 0 ? cred.pid : -ESRCH;
	close(fd);
	return pid;
}

static int run_daemonize(const char *binary, int kernel, char *err, size_t err_len)
{
	char *argv[] = { (char *)binary, "--daemonize", kernel ? NULL : "--no-kernel", NULL };
	posix_spawnattr_t attr;
	sigset_t none, deflt;
	pid_t child;
	int ret, status;

	/* The core blocks SIGINT/SIGTERM/SIGCHLD for its signalfd; a daemon
	 * inheriting that mask could never be stopped with SIGTERM. */
	sigemptyset(&none);
	sigemptyset(&deflt);
	sigaddset(&deflt, SIGINT);
	sigaddset(&deflt, SIGTERM);
	sigaddset(&deflt, SIGCHLD);
	sigaddset(&deflt, SIGPIPE);
	ret = posix_spawnattr_init(&attr);
	if (ret) {
		snprintf(err, err_len, "posix_spawnattr_init: %s", strerror(ret));
		return -ret;
	}
	ret = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!ret)
		ret = posix_spawnattr_setsigmask(&attr, &none);
	if (!ret)
		ret = posix_spawnattr_setsigdefault(&attr, &deflt);
	if (!ret)
		ret = posix_spawnp(&child, binary, NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	if (ret) {
		snprintf(err, err_len, "cannot run %s: %s (install lttng-tools, or set "
			 "sessiond_path)", binary, strerror(ret));
		return -ret;
	}
	/* With --daemonize the first process exits once the daemon accepts
	 * commands. */
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			ret = -errno;
			snprintf(err, err_len, "waiting for %s: %s", binary, strerror(errno));
			return ret;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, err_len, "%s --daemonize failed (%s %d)", binary,
			 WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return -EIO;
	}
	return 0;
}

/* Someone else's daemon: pinned only to notice if it dies, never stopped. */
static void use_running(struct sessiond *d)
{
	pid_t pid = answering_pid();

	if (pid > 0) {
		d->pid = pid;
		d->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	}
}

int sessiond_ensure(struct sessiond *d, const char *binary, int autostart, int kernel,
		    char *err, size_t err_len)
{
	char dir[4096];
	pid_t pid = -ENOENT;
	int ret;

	d->started = 0;
	d->pid = 0;
	d->pidfd = -1;
	d->n_kids = 0;
	if (sessiond_alive()) {
		use_running(d);
		return 0;
	}
	if (!autostart) {
		snprintf(err, err_len, "no LTTng session daemon is running (start one with "
			 "'lttng-sessiond --daemonize', or set start_sessiond = yes)");
		return -ENOENT;
	}
	ret = run_daemonize(binary, kernel, err, err_len);
	if (ret < 0) {
		/* Another tracer may have started one meanwhile: use it. */
		if (sessiond_alive()) {
			use_running(d);
			return 0;
		}
		return ret;
	}
	/* The daemon listens before it reports ready; give a slow machine a
	 * moment anyway. */
	for (int i = 0; i < 50; i++) {
		pid = answering_pid();
		if (pid > 0 && sessiond_alive())
			break;
		sleep_ms(20);
	}
	if (pid <= 0 || !sessiond_alive()) {
		snprintf(err, err_len, "%s --daemonize returned but no daemon answers on %s "
			 "(see 'lttng-sessiond -vvv' for why)", binary,
			 sessiond_rundir(dir, sizeof(dir)));
		return -EIO;
	}
	d->started = 1;
	d->pid = pid;
	/* A pidfd names this process and no later one that reuses its PID. */
	d->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	return 0;
}

int sessiond_other_sessions(void)
{
	struct lttng_session *sessions = NULL;
	int n = lttng_list_sessions(&sessions);

	free(sessions);
	return n > 0 ? n : 0;
}

static void close_kids(struct sessiond *d)
{
	for (size_t i = 0; i < d->n_kids; i++)
		close(d->kids[i]);
	d->n_kids = 0;
}

void sessiond_forget(struct sessiond *d)
{
	if (d->pidfd >= 0)
		close(d->pidfd);
	d->pidfd = -1;
	d->started = 0;
	close_kids(d);
}

static pid_t stat_ppid(const char *pid)
{
	unsigned long long ppid;

	return tr_proc_stat_field((pid_t)atoi(pid), 4, &ppid) == 0 ? (pid_t)ppid : 0;
}

void sessiond_note_children(struct sessiond *d)
{
	struct dirent *de;
	DIR *dir;

	if (!d->started || d->pid <= 0)
		return;
	dir = opendir("/proc");
	if (!dir)
		return;
	while ((de = readdir(dir)) != NULL && d->n_kids < SESSIOND_MAX_KIDS) {
		pid_t pid;
		int fd, known = 0;

		if (!isdigit((unsigned char)de->d_name[0]) || stat_ppid(de->d_name) != d->pid)
			continue;
		pid = (pid_t)atoi(de->d_name);
		for (size_t i = 0; i < d->n_kids; i++)
			known |= d->kid_pids[i] == pid;
		if (known)
			continue;
		fd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (fd >= 0) {
			d->kid_pids[d->n_kids] = pid;
			d->kids[d->n_kids++] = fd;
		}
	}
	closedir(dir);
}

int sessiond_gone(const struct sessiond *d)
{
	if (d->pidfd >= 0) {
		struct pollfd p = { .fd = d->pidfd, .events = POLLIN };

		if (poll(&p, 1, 0) > 0)
			return 1;
	}
	return !sessiond_alive();
}

static int wait_exit(struct sessiond *d, int timeout_ms)
{
	if (d->pidfd >= 0) {
		struct pollfd p = { .fd = d->pidfd, .events = POLLIN };
		int ret;

		do
			ret = poll(&p, 1, timeout_ms);
		while (ret < 0 && errno == EINTR);
		return ret > 0 ? 0 : -ETIMEDOUT;
	}
	/* No pidfd (old kernel): the daemon is gone once it stops answering. */
	for (int waited = 0; waited < timeout_ms; waited += 20) {
		if (kill(d->pid, 0) < 0 || !sessiond_alive())
			return 0;
		sleep_ms(20);
	}
	return -ETIMEDOUT;
}

static int send_signal(struct sessiond *d, int sig)
{
	if (d->pidfd >= 0)
		return syscall(SYS_pidfd_send_signal, d->pidfd, sig, NULL, 0) < 0 ? -errno : 0;
	return kill(d->pid, sig) < 0 ? -errno : 0;
}

int sessiond_stop(struct sessiond *d, int timeout_ms)
{
	int ret = 0;

	if (!d->started) {
		sessiond_forget(d);
		return 0;
	}
	sessiond_note_children(d);
	if (send_signal(d, SIGTERM) == 0 && wait_exit(d, timeout_ms) < 0) {
		ret = -ETIMEDOUT;
		if (send_signal(d, SIGKILL) == 0)
			wait_exit(d, 1000);
	}
	/* A daemon stopped by SIGTERM stops its consumers; one that was killed
	 * (or died) leaves them orphaned, writing nowhere. */
	for (size_t i = 0; i < d->n_kids; i++) {
		struct pollfd p = { .fd = d->kids[i], .events = POLLIN };

		if (poll(&p, 1, 2000) <= 0) {
			syscall(SYS_pidfd_send_signal, d->kids[i], SIGKILL, NULL, 0);
			poll(&p, 1, 2000);
		}
	}
	sessiond_forget(d);
	return ret;
}
