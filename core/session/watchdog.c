#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/exitcodes.h"
#include "core/log.h"
#include "lib/vec.h"
#include "watchdog.h"

#define CLEANUP_ARG_MAX 200

static int record_fd = -1; /* the collecting process's end of the pipe */
static pid_t watchdog_pid, collector_pid;
static struct tr_watchdog_ops ops; /* the watchdog's copy */

/* The collector's thread that notices the watchdog's death. */
static struct {
	pthread_t thread;
	int pidfd, stop_fd; /* the watchdog's pidfd; an eventfd that ends the thread */
	int running;
} minder = { .pidfd = -1, .stop_fd = -1 };

/* Signals whose default action ends the process and that a handler can
 * see: the collector names them to the watchdog before it dies of one, so
 * the salvaged archive says which it was (SIGKILL alone cannot be seen).
 * Faults are supervise.c's; SIGINT, SIGTERM (and SIGUSR1 in flight mode)
 * are blocked for the session's signalfd once it runs, and until then
 * end it as they did.  A signal the caller ignores (nohup) stays ignored. */
static const int deadly_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
	SIGPROF, SIGXCPU, SIGXFSZ, SIGSYS, SIGTRAP, SIGSTKFLT, SIGPWR, SIGIO,
};

/* What a plugin asked the watchdog to clean up (see watchdog_cleanup). */
struct cleanup {
	char plugin[64], key[64], arg[CLEANUP_ARG_MAX + 1];
	tracerig_cleanup_fn fn;
};

struct heard {
	pid_t command_pid;
	int command_pidfd;
	int collecting;
	int packaged;
	uint64_t start_mono_ns, start_real_ns;
	char fault[128];
	char killed[32]; /* "SIGQUIT": the signal the collector said it died of */
	struct cleanup *cleanups; /* in the order registered */
	size_t n_cleanups, cap_cleanups;
};

static void send_record(const char *line, size_t len)
{
	if (record_fd >= 0 && write(record_fd, line, len) < 0) {
		/* The watchdog is gone: nothing to tell. */
	}
}

static void sendf(const char *fmt, ...) TRACERIG_PRINTF(1, 2);
static void sendf(const char *fmt, ...)
{
	char line[512]; /* under PIPE_BUF: one write, never interleaved */
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (len > 0 && (size_t)len < sizeof(line))
		send_record(line, (size_t)len);
}

void tr_watchdog_command(pid_t pid)
{
	sendf("command %d\n", (int)pid);
}

void tr_watchdog_collecting(uint64_t start_mono_ns, uint64_t start_real_ns)
{
	sendf("collecting %" PRIu64 " %" PRIu64 "\n", start_mono_ns, start_real_ns);
}

void tr_watchdog_plugin(const char *name, const char *phase)
{
	sendf("plugin %s %s\n", name, phase);
}

/* "WORD SIGxxx[ in WHO]\n", async-signal-safe. */
static void send_signal_record(const char *word, int sig, const char *who)
{
	char line[128];
	size_t len = 0;
	const char *parts[] = { word, " SIG", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
				who ? " in " : "", who ? who : "", "\n" };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		size_t n = strlen(parts[i]);

		if (len + n >= sizeof(line))
			return;
		memcpy(line + len, parts[i], n);
		len += n;
	}
	send_record(line, len);
}

void tr_watchdog_fault(const char *who, int sig)
{
	send_signal_record("fault", sig, who);
}

static void on_deadly_signal(int sig)
{
	int saved = errno;

	/* A launched command between fork and exec runs this too: only the
	 * collector speaks for the session. */
	if (getpid() == collector_pid)
		send_signal_record("killed", sig, NULL);
	errno = saved;
	/* SA_RESETHAND put the default back: it ends the process as it would
	 * have, with the same wait status for whoever waits for it. */
	raise(sig);
}

static void report_deadly_signals(void)
{
	struct sigaction sa = { .sa_handler = on_deadly_signal, .sa_flags = SA_RESETHAND };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(deadly_signals) / sizeof(deadly_signals[0]); i++) {
		struct sigaction old;

		if (sigaction(deadly_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			(void)sigaction(deadly_signals[i], &sa, NULL);
	}
}

/* The watchdog is the collector's child: its death is seen without
 * reaping it (finish() does), and said at once, in the run log that goes
 * into the archive.  The session itself goes on as if unwatched. */
static void *mind_watchdog(void *arg)
{
	struct pollfd pfd[2] = { { .fd = minder.pidfd, .events = POLLIN },
				 { .fd = minder.stop_fd, .events = POLLIN } };
	siginfo_t info = { .si_pid = 0 };

	(void)arg;
	while (poll(pfd, 2, -1) < 0 && errno == EINTR)
		;
	if (pfd[1].revents || !pfd[0].revents)
		return NULL;
	if (waitid(P_PID, (id_t)watchdog_pid, &info, WEXITED | WNOWAIT) < 0 || !info.si_pid)
		return NULL;
	if (info.si_code == CLD_EXITED)
		tr_warn("the watchdog (PID %d) ended with status %d before the session did: if "
			"tracerig dies now, nothing packages what it collected; the session goes on "
			"and packages it itself", (int)watchdog_pid, info.si_status);
	else
		tr_warn("the watchdog (PID %d) was killed by SIG%s: if tracerig dies now, "
			"nothing packages what it collected; the session goes on and packages it "
			"itself", (int)watchdog_pid,
			sigabbrev_np(info.si_status) ? sigabbrev_np(info.si_status) : "?");
	return NULL;
}

static void start_minder(void)
{
	sigset_t all, old;

	minder.pidfd = (int)syscall(SYS_pidfd_open, watchdog_pid, 0);
	minder.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (minder.pidfd < 0 || minder.stop_fd < 0)
		goto fail;
	/* Signals are the session's main thread's, never this one's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	minder.running = pthread_create(&minder.thread, NULL, mind_watchdog, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (minder.running) {
		(void)pthread_setname_np(minder.thread, "tr-watchdog");
		return;
	}
fail:
	/* Only the warning of its death is lost; the watchdog still runs. */
	if (minder.pidfd >= 0)
		close(minder.pidfd);
	if (minder.stop_fd >= 0)
		close(minder.stop_fd);
	minder.pidfd = minder.stop_fd = -1;
}

static void stop_minder(void)
{
	uint64_t one = 1;

	if (minder.running) {
		if (write(minder.stop_fd, &one, sizeof(one)) != sizeof(one)) {
			/* an eventfd below its maximum takes it */
		}
		pthread_join(minder.thread, NULL);
		minder.running = 0;
	}
	if (minder.pidfd >= 0)
		close(minder.pidfd);
	if (minder.stop_fd >= 0)
		close(minder.stop_fd);
	minder.pidfd = minder.stop_fd = -1;
}

static void finish(const char *word)
{
	if (record_fd < 0)
		return;
	/* It is about to leave: that is no news. */
	stop_minder();
	send_record(word, strlen(word));
	close(record_fd);
	record_fd = -1;
	/* It leaves once it read the word and ran the cleanups still
	 * registered: when tracerig is gone, so is what it started. */
	while (waitpid(watchdog_pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* A key or arg is one word or one line of a record. */
static int fits(const char *s, size_t max, const char *refused)
{
	return s && s[0] && strlen(s) <= max && !strpbrk(s, refused);
}

int tr_watchdog_cleanup(const char *plugin, const char *key, tracerig_cleanup_fn fn,
			const char *arg)
{
	if (!fits(plugin, 63, " \t\n") || !fits(key, 63, " \t\n") ||
	    (arg && (!fn || strlen(arg) > CLEANUP_ARG_MAX || strchr(arg, '\n'))))
		return -EINVAL;
	if (record_fd < 0)
		return -ENOTCONN;
	/* The watchdog is a fork made after the plugins were loaded: the
	 * function is at the same address there. */
	if (arg)
		sendf("cleanup %s %s %p %s\n", plugin, key, (void *)fn, arg);
	else
		sendf("uncleanup %s %s\n", plugin, key);
	return 0;
}

void tr_watchdog_packaged(void)
{
	send_record("packaged\n", 9);
}

void tr_watchdog_done(void)
{
	finish("done\n");
}

void tr_watchdog_abort(void)
{
	finish("abort\n");
}

/* ---- the watchdog's side ---- */

static void forget_cleanup(struct heard *h, const char *plugin, const char *key)
{
	for (size_t i = 0; i < h->n_cleanups; i++) {
		if (strcmp(h->cleanups[i].plugin, plugin) == 0 &&
		    strcmp(h->cleanups[i].key, key) == 0) {
			memmove(&h->cleanups[i], &h->cleanups[i + 1],
				(h->n_cleanups - i - 1) * sizeof(h->cleanups[0]));
			h->n_cleanups--;
			return;
		}
	}
}

/* "cleanup PLUGIN KEY FN ARG": registered anew, last in order. */
static void hear_cleanup(struct heard *h, const char *line)
{
	struct cleanup c = { .fn = NULL };
	struct cleanup *grown;
	void *fn;
	int arg_at = 0;

	if (sscanf(line, "cleanup %63s %63s %p %n", c.plugin, c.key, &fn, &arg_at) != 3 ||
	    !arg_at)
		return;
	snprintf(c.arg, sizeof(c.arg), "%s", line + arg_at);
	/* Between the two kinds of pointer, as dlsym's users do. */
	memcpy(&c.fn, &fn, sizeof(c.fn));
	forget_cleanup(h, c.plugin, c.key);
	grown = tr_vec_grow(h->cleanups, &h->cap_cleanups, h->n_cleanups + 1, sizeof(*grown), 8);
	if (!grown) {
		fprintf(stderr, "tracerig: watchdog: out of memory: cannot keep %s's cleanup %s\n",
			c.plugin, c.key);
		return;
	}
	h->cleanups = grown;
	h->cleanups[h->n_cleanups++] = c;
}

/* Runs every cleanup still registered, the last registered first, and
 * says per plugin what was done. */
static void run_cleanups(struct heard *h, pid_t collector)
{
	while (h->n_cleanups) {
		char plugin[sizeof(h->cleanups[0].plugin)], what[1024] = "", said[512];
		size_t used = 0;

		memcpy(plugin, h->cleanups[h->n_cleanups - 1].plugin, sizeof(plugin));
		/* This plugin's, then the next one's. */
		for (size_t i = h->n_cleanups; i-- > 0;) {
			struct cleanup *c = &h->cleanups[i];

			if (strcmp(c->plugin, plugin) != 0)
				continue;
			said[0] = '\0';
			c->fn(c->key, c->arg, said, sizeof(said));
			if (said[0] && used < sizeof(what))
				used += (size_t)snprintf(what + used, sizeof(what) - used, "%s%s",
							 used ? "; " : "", said);
			c->plugin[0] = '\0'; /* done */
		}
		if (what[0])
			fprintf(stderr, "tracerig: %s: tracerig (pid %d) ended without cleaning up: "
				"%s\n", plugin, (int)collector, what);
		used = 0;
		for (size_t i = 0; i < h->n_cleanups; i++)
			if (h->cleanups[i].plugin[0])
				h->cleanups[used++] = h->cleanups[i];
		h->n_cleanups = used;
	}
}

static void hear(struct heard *h, char *line)
{
	char name[64], phase[32], key[64];
	int pid;

	if (sscanf(line, "command %d", &pid) == 1) {
		h->command_pid = pid;
		/* Taken while the command is still the collector's child, so the
		 * PID cannot have been reused when it is signalled later. */
		h->command_pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	} else if (sscanf(line, "collecting %" SCNu64 " %" SCNu64, &h->start_mono_ns,
			  &h->start_real_ns) == 2) {
		h->collecting = 1;
	} else if (sscanf(line, "plugin %63s %31s", name, phase) == 2) {
		if (ops.note_phase)
			ops.note_phase(ops.arg, name, phase);
	} else if (strncmp(line, "fault ", 6) == 0) {
		snprintf(h->fault, sizeof(h->fault), "%.120s", line + 6);
	} else if (strncmp(line, "killed ", 7) == 0) {
		snprintf(h->killed, sizeof(h->killed), "%.31s", line + 7);
	} else if (strncmp(line, "cleanup ", 8) == 0) {
		hear_cleanup(h, line);
	} else if (sscanf(line, "uncleanup %63s %63s", name, key) == 2) {
		forget_cleanup(h, name, key);
	} else if (strcmp(line, "packaged") == 0) {
		h->packaged = 1;
	}
}

static void stop_command(struct heard *h)
{
	struct pollfd pfd = { .fd = h->command_pidfd, .events = POLLIN };

	if (h->command_pidfd < 0)
		return;
	if (syscall(SYS_pidfd_send_signal, h->command_pidfd, SIGTERM, NULL, 0) < 0)
		return;
	if (poll(&pfd, 1, 2000) == 0)
		syscall(SYS_pidfd_send_signal, h->command_pidfd, SIGKILL, NULL, 0);
}

static void watch(int fd, pid_t collector)
{
	struct heard h = { .command_pidfd = -1 };
	char buf[4096], why[256];
	size_t used = 0;

	for (;;) {
		ssize_t n = read(fd, buf + used, sizeof(buf) - 1 - used);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
		buf[used] = '\0';
		while ((nl = strchr(buf, '\n'))) {
			*nl = '\0';
			if (strcmp(buf, "done") == 0 || strcmp(buf, "abort") == 0) {
				run_cleanups(&h, collector);
				_exit(0);
			}
			hear(&h, buf);
			used -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, used + 1);
		}
		if (used == sizeof(buf) - 1)
			used = 0; /* a line that long is not ours */
	}
	/* EOF without a last word: the collector died. */
	if (h.fault[0]) {
		h.fault[strcspn(h.fault, "\n")] = '\0';
		snprintf(why, sizeof(why), "it died of %s", h.fault);
	} else if (h.killed[0]) {
		snprintf(why, sizeof(why), "it was killed by %s", h.killed);
	} else {
		snprintf(why, sizeof(why), "it was killed (SIGKILL, or the kernel's OOM killer)");
	}
	stop_command(&h);
	/* Before salvaging: a tracer's session flushes its trace into the
	 * staging directory as it is destroyed. */
	run_cleanups(&h, collector);
	if (h.packaged)
		_exit(TR_EXIT_OK);
	if (!ops.salvage || !ops.discard)
		_exit(TR_EXIT_FAILURE); /* --check: no session, only the cleanups */
	if (!h.collecting) {
		fprintf(stderr, "tracerig: the collecting process (PID %d) ended before collection "
			"began: %s; nothing was collected\n", (int)collector, why);
		ops.discard(ops.arg);
		_exit(TR_EXIT_FAILURE);
	}
	_exit(ops.salvage(ops.arg, collector, why, h.start_mono_ns, h.start_real_ns) < 0
		      ? TR_EXIT_FAILURE : TR_EXIT_OK);
}

int tr_watchdog_start(const struct tr_watchdog_ops *given)
{
	pid_t collector = getpid();
	int fds[2];

	ops = *given;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	watchdog_pid = fork();
	if (watchdog_pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (watchdog_pid == 0) {
		sigset_t none;

		close(fds[1]);
		/* `tracerig start` takes the end of this pipe for "the session
		 * failed": the watchdog must not hold it open. */
		if (ops.close_fd >= 0)
			close(ops.close_fd);
		/* The terminal's Ctrl-C and a supervisor's SIGTERM are for the
		 * collector; the watchdog acts only when that one is gone. */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		/* A flight recorder's trigger sent to every tracerig process
		 * (`pkill -USR1 tracerig`) must not end its watchdog. */
		signal(SIGUSR1, SIG_IGN);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		prctl(PR_SET_NAME, "tracerig-watch", 0, 0, 0);
		watch(fds[0], collector);
		_exit(0);
	}
	close(fds[0]);
	record_fd = fds[1];
	collector_pid = collector;
	report_deadly_signals();
	start_minder();
	return 0;
}
