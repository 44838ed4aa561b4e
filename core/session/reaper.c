/* What is left when a session is over -- freeing the symbolizer's tables
 * and the plugins' state, closing the staged files (whose page cache the
 * kernel truncates on the last close, the staging being unlinked), the
 * address space's teardown -- took tens of milliseconds between the
 * archive being in place and tracerig's exit, which is what a script or
 * `timeout` waits for.  None of it is seen from outside, so it is done by
 * a reaper: a process made with clone(CLONE_VM) and without CLONE_FILES,
 * which shares tracerig's memory and holds its own references to every
 * open file.  tracerig exits at once (its exit drops its references, not
 * the last ones); the reaper waits for that exit, then frees through the
 * same memory and exits.  It is reparented to init (or the subreaper) and
 * killing it loses nothing: the kernel frees what it holds either way. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/log.h"
#include "lib/procpid.h"
#include "reaper.h"

#if defined(__SANITIZE_ADDRESS__)
#define TR_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TR_SANITIZED 1
#endif
#endif

#ifndef TR_SANITIZED
#define REAPER_STACK (1024 * 1024)

static struct {
	int wait_fd;  /* the read end: EOF once tracerig has exited */
	int write_fd; /* tracerig's end, the reaper's copy closed first */
	void (*cleanup)(void *);
	void *arg;
} reaper = { -1, -1, NULL, NULL };

/* Only the calling thread may exist: another would die with tracerig's
 * exit in the middle of whatever it did, and the reaper would then free
 * under it. */
static int single_threaded(void)
{
	char status[4096];
	pid_t threads = 0;

	return tr_read_text("/proc/self/status", status, sizeof(status)) > 0 &&
	       tr_status_field_innermost(status, "Threads", &threads) == 0 && threads == 1;
}

static int reaper_main(void *arg)
{
	char c;

	sigset_t alarm_only;

	(void)arg;
	close(reaper.write_fd);
	/* Killed between the clone and its exit (SIGKILL: nothing else gets
	 * through), tracerig may have held a lock the cleanup takes: the
	 * reaper then gives up rather than stay for ever (its dispositions
	 * and mask are its own copies). */
	signal(SIGALRM, SIG_DFL);
	sigemptyset(&alarm_only);
	sigaddset(&alarm_only, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alarm_only, NULL);
	alarm(30);
	/* tracerig's exit releases its memory (exit_mm) before its files
	 * (exit_files): at EOF it no longer runs on what we free. */
	while (read(reaper.wait_fd, &c, 1) < 0 && errno == EINTR)
		;
	close(reaper.wait_fd);
	reaper.cleanup(reaper.arg);
	return 0;
}

#endif

int tr_reaper_handoff(void (*cleanup)(void *), void *arg)
{
#ifdef TR_SANITIZED
	/* The leak check runs at exit, in the process that freed. */
	(void)cleanup;
	(void)arg;
	return -1;
#else
	int fds[2];
	char *stack;
	pid_t pid;

	if (getenv("TRACERIG_KEEP_PLUGINS_LOADED") || !single_threaded())
		return -1;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	stack = mmap(NULL, REAPER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		     MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	reaper.wait_fd = fds[0];
	reaper.write_fd = fds[1];
	reaper.cleanup = cleanup;
	reaper.arg = arg;
	/* Not CLONE_FILES: the reaper's table is a copy, so closing ours
	 * closes nothing for good.  SIGCHLD: init reaps it as any orphan. */
	pid = clone(reaper_main, stack + REAPER_STACK, CLONE_VM | SIGCHLD, NULL);
	if (pid < 0) {
		munmap(stack, REAPER_STACK);
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	close(fds[0]);
	tr_debug("the rest is freed by PID %d, after this exit", (int)pid);
	return 0;
#endif
}
