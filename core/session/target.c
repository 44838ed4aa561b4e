#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "target.h"

/* The open-files limit tracerig was started with, for a launched command
 * (valid once tr_raise_open_files raised ours). */
static struct rlimit original_nofile;
static int nofile_raised;

int tr_raise_open_files(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if (rl.rlim_cur >= rl.rlim_max)
		return 0;
	original_nofile = rl;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	nofile_raised = 1;
	return 0;
}

static void child_run(int release_rd, int err_wr, char *const argv[], char *const env[])
{
	sigset_t none;
	char byte;
	ssize_t n;
	int err;

	/* The parent blocks these for its signalfd; the command must not
	 * inherit that. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	/* select(2) users break past 1024 descriptors: the command keeps the
	 * limit it would have had without us. */
	if (nofile_raised)
		(void)setrlimit(RLIMIT_NOFILE, &original_nofile);
	for (size_t i = 0; env && env[i]; i++)
		putenv(env[i]);

	do
		n = read(release_rd, &byte, 1);
	while (n < 0 && errno == EINTR);
	/* EOF without the go byte: tracerig gave up before starting. */
	if (n != 1)
		_exit(125);
	close(release_rd);
	execvp(argv[0], argv);
	err = errno;
	if (write(err_wr, &err, sizeof(err)) < 0) {
		/* Nothing more can be said from here. */
	}
	_exit(err == ENOENT ? 127 : 126);
}

int tr_command_spawn(struct tr_command *c, char *const argv[], char *const env[])
{
	int release[2], err[2];

	memset(c, 0, sizeof(*c));
	c->release_fd = c->exec_err_fd = -1;
	if (pipe2(release, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		int e = -errno;

		close(release[0]);
		close(release[1]);
		return e;
	}
	c->pid = fork();
	if (c->pid < 0) {
		int e = -errno;

		close(release[0]);
		close(release[1]);
		close(err[0]);
		close(err[1]);
		return e;
	}
	if (c->pid == 0) {
		close(release[1]);
		close(err[0]);
		child_run(release[0], err[1], argv, env);
	}
	close(release[0]);
	close(err[1]);
	c->release_fd = release[1];
	c->exec_err_fd = err[0];
	return 0;
}

int tr_command_release(struct tr_command *c)
{
	char go = 'g';
	ssize_t n;

	if (write(c->release_fd, &go, 1) != 1)
		return -errno;
	close(c->release_fd);
	c->release_fd = -1;
	do
		n = read(c->exec_err_fd, &c->exec_errno, sizeof(c->exec_errno));
	while (n < 0 && errno == EINTR);
	close(c->exec_err_fd);
	c->exec_err_fd = -1;
	if (n == sizeof(c->exec_errno))
		return -c->exec_errno;
	c->exec_errno = 0;
	return 0;
}

void tr_command_abort(struct tr_command *c)
{
	if (c->pid > 0 && !c->reaped) {
		kill(c->pid, SIGKILL);
		if (waitpid(c->pid, &c->status, 0) == c->pid)
			c->reaped = 1;
	}
}

int tr_command_poll(struct tr_command *c)
{
	pid_t r;

	if (c->pid <= 0 || c->reaped)
		return c->reaped;
	r = waitpid(c->pid, &c->status, WNOHANG);
	if (r == c->pid)
		c->reaped = 1;
	return c->reaped;
}

void tr_command_close(struct tr_command *c)
{
	if (c->release_fd >= 0)
		close(c->release_fd);
	if (c->exec_err_fd >= 0)
		close(c->exec_err_fd);
	c->release_fd = c->exec_err_fd = -1;
}

int tr_pid_alive(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	/* A zombie still has /proc/PID; it is as good as gone for tracing. */
	FILE *f = fopen(path, "re");
	char state = '?';

	if (!f)
		return 0;
	if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = '?';
	fclose(f);
	return state != 'Z' && state != 'X';
}

int tr_pid_check(pid_t pid)
{
	if (pid <= 0 || !tr_pid_alive(pid)) {
		tr_err("-p %d: no such process (check the PID with ps; a process in a container "
		       "needs its host PID, see NSpid in /proc/PID/status)", (int)pid);
		return -ESRCH;
	}
	return 0;
}
