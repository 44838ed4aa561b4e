/* Opening a traced process's files in a helper process (see opener.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "opener.h"

#define ENV_NAME "TRACERIG_OPENER"
/* Directories remembered as stuck; past that, the oldest is forgotten
 * (it costs one more deadline). */
#define MAX_STUCK 64

struct request {
	int op, scope, pid;
	uint64_t max_size;
	uint64_t dev, ino; /* TR_OPENER_REMOVE: the file it may remove */
	char path[PATH_MAX];
};

struct reply {
	int ret;
	struct tr_untrusted u;
};

/* Sends `len` bytes and up to two fds (negative ones are left out). */
static int send_fds(int sock, const void *buf, size_t len, int fd1, int fd2)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} c;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fds[2], n = 0;

	if (fd1 >= 0)
		fds[n++] = fd1;
	if (fd2 >= 0)
		fds[n++] = fd2;
	if (n) {
		memset(&c, 0, sizeof(c));
		m.msg_control = c.buf;
		m.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
		c.h.cmsg_level = SOL_SOCKET;
		c.h.cmsg_type = SCM_RIGHTS;
		c.h.cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
		memcpy(CMSG_DATA(&c.h), fds, (size_t)n * sizeof(int));
	}
	for (;;) {
		ssize_t r = sendmsg(sock, &m, MSG_NOSIGNAL);

		if (r >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

/* Receives one message and up to two fds (-1 where none came).  Returns
 * the length, 0 at end of stream, or -errno. */
static ssize_t recv_fds(int sock, void *buf, size_t len, int fds[2])
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} c;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
			    .msg_controllen = sizeof(c.buf) };
	ssize_t r;

	fds[0] = fds[1] = -1;
	do
		r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
		size_t n;

		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
			if (i < 2)
				fds[i] = fd;
			else
				close(fd);
		}
	}
	return r;
}

static void close_fds(int fds[2])
{
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	fds[0] = fds[1] = -1;
}

/* ---- the worker ---- */

/* Whether an operation's answer carries an fd. */
static int gives_fd(int op)
{
	return op != TR_OPENER_REMOVE;
}

/* A sealed in-memory copy of fd (closed), of at most the size it was
 * opened with; returns the memfd or -errno (u filled). */
static int copy_to_memfd(int fd, struct tr_untrusted *u)
{
	uint64_t size = (uint64_t)u->st.st_size, done = 0;
	char buf[65536];
	int mfd, ret;

	if (size > TR_OPENER_COPY_MAX) {
		close(fd);
		u->refusal = TR_REFUSED_TOO_BIG;
		u->limit = TR_OPENER_COPY_MAX;
		return -EFBIG;
	}
	mfd = memfd_create("tracerig-remote-file", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0) {
		ret = -errno;
		u->step = "memfd_create for a copy of a file on a network file system";
		close(fd);
		return ret;
	}
	/* O_NONBLOCK from the reopen means nothing to a regular file. */
	while (done < size) {
		size_t want = size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf);
		ssize_t n = pread(fd, buf, want, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			u->step = "read a file on a network file system";
			goto fail;
		}
		if (n == 0)
			break; /* truncated meanwhile: a short copy */
		if ((ret = tr_write_all(mfd, buf, (size_t)n)) < 0) {
			u->step = "copy a file on a network file system";
			goto fail;
		}
		done += (uint64_t)n;
	}
	close(fd);
	if (lseek(mfd, 0, SEEK_SET) < 0 ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		ret = -errno;
		u->step = "seal the copy of a file on a network file system";
		close(mfd);
		return ret;
	}
	return mfd;

fail:
	close(fd);
	close(mfd);
	return ret;
}

static int perform(const struct request *rq, int fd, struct tr_untrusted *u)
{
	struct statfs sfs;
	int ret;

	memset(u, 0, sizeof(*u));
	switch (rq->op) {
	case TR_OPENER_OPEN:
		ret = tr_untrusted_open(rq->pid, rq->path, rq->max_size, u);
		break;
	case TR_OPENER_OPENAT:
		ret = tr_untrusted_openat(fd, rq->path, (enum tr_scope)rq->scope, rq->max_size, u);
		break;
	case TR_OPENER_REOPEN:
		ret = tr_untrusted_reopen(fd, rq->max_size, u);
		fd = -1; /* taken over */
		break;
	case TR_OPENER_OPEN_DIR:
		/* A directory cannot be copied: it goes as it is. */
		return tr_untrusted_open_dir(fd, rq->path, (enum tr_scope)rq->scope);
	case TR_OPENER_OPEN_LOCAL_DIR:
		return tr_untrusted_open_local_dir(fd, rq->path, (enum tr_scope)rq->scope);
	case TR_OPENER_REMOVE:
		return tr_untrusted_remove(fd, rq->path, (dev_t)rq->dev, (ino_t)rq->ino);
	default:
		return -EINVAL;
	}
	/* fstatfs itself asks a FUSE server: it is done here, under the
	 * deadline, like everything else that touches the file.  A server
	 * may not implement it (ENOSYS): a file system that does not say
	 * what it is counts as remote. */
	if (ret >= 0 && (fstatfs(ret, &sfs) < 0 || tr_remote_fs((long)sfs.f_type)))
		ret = copy_to_memfd(ret, u);
	return ret;
}

static void worker_main(int sock)
{
	struct request rq;
	struct reply rp;
	int fds[2];

	for (;;) {
		ssize_t n = recv_fds(sock, &rq, sizeof(rq), fds);

		if (n <= 0)
			_exit(0);
		if ((size_t)n != sizeof(rq)) {
			close_fds(fds);
			continue;
		}
		rq.path[sizeof(rq.path) - 1] = '\0';
		rp.ret = perform(&rq, fds[0], &rp.u);
		if (rq.op != TR_OPENER_REOPEN && fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
		if (send_fds(sock, &rp, sizeof(rp), gives_fd(rq.op) ? rp.ret : -1, -1) < 0)
			_exit(0);
		if (rp.ret >= 0 && gives_fd(rq.op))
			close(rp.ret);
	}
}

/* ---- the supervisor ---- */

static struct {
	int ctl;      /* requests from every thread of tracerig */
	int notice;   /* stuck files, one line each, to tr_opener_start's thread */
	unsigned int timeout_ms;
	pid_t worker;
	int wsock;
	int abandoned; /* workers killed and not reaped yet */
	char *stuck[MAX_STUCK];
	size_t n_stuck, next_stuck;
} sv = { .worker = -1, .wsock = -1 };

static void reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		if (sv.abandoned > 0)
			sv.abandoned--;
}

static int start_worker(void)
{
	int sp[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(sp[0]);
		close(sp[1]);
		return -errno;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sp[0]);
		close(sv.ctl);
		close(sv.notice);
		worker_main(sp[1]);
	}
	close(sp[1]);
	sv.worker = pid;
	sv.wsock = sp[0];
	return 0;
}

/* Where the file of a request is, as a path in our mount namespace: the
 * name of the directory fd (readlink of a magic link asks no file system)
 * or of the process's root, joined with the path. */
static void request_file(const struct request *rq, int fd, char *out, size_t len)
{
	char link[64], base[PATH_MAX];
	ssize_t n = -1;

	if (rq->op == TR_OPENER_OPEN) {
		snprintf(link, sizeof(link), "/proc/%d/root", rq->pid > 0 ? rq->pid : getpid());
		n = readlink(link, base, sizeof(base) - 1);
	} else if (fd >= 0) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, base, sizeof(base) - 1);
	}
	base[n > 0 ? n : 0] = '\0';
	if (n > 0 && strcmp(base, "/") == 0)
		base[0] = '\0';
	if (rq->op == TR_OPENER_REOPEN)
		snprintf(out, len, "%s", base);
	else
		snprintf(out, len, "%s%s%s", base, rq->path[0] == '/' ? "" : "/", rq->path);
}

/* Which mount namespace, or which mount, a request's path is resolved
 * from: its words alone do not say (a container's /tmp and ours are both
 * "/tmp"), and a directory stuck in one must not stop opens in another.
 * Read from /proc (readlink of ns/mnt, fdinfo's mnt_id), which asks no
 * file system. */
static void request_origin(const struct request *rq, int fd, char *out, size_t len)
{
	char path[64], line[128];
	ssize_t n = -1;
	FILE *f;

	out[0] = '\0';
	if (rq->op == TR_OPENER_OPEN) {
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", rq->pid > 0 ? rq->pid : getpid());
		n = readlink(path, out, len - 1);
		out[n > 0 ? n : 0] = '\0';
		return;
	}
	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long id;

		if (sscanf(line, "mnt_id: %lu", &id) == 1) {
			snprintf(out, len, "mnt:%lu", id);
			break;
		}
	}
	fclose(f);
}

/* A stuck directory's entry: where it is resolved from, then the
 * directory that holds `file` (from request_file). */
static char *stuck_key(const char *origin, const char *file)
{
	const char *slash = strrchr(file, '/');
	int dir = slash ? (int)(slash - file) + 1 : 0;
	char *key;

	if (asprintf(&key, "%s %.*s", origin, dir, file) < 0)
		return NULL;
	return key;
}

static int is_stuck(const char *origin, const char *file)
{
	char *key = stuck_key(origin, file);
	int found = 0;

	for (size_t i = 0; key && i < sv.n_stuck && !found; i++)
		found = strcmp(sv.stuck[i], key) == 0;
	free(key);
	return found;
}

static void remember_stuck(const char *origin, const char *file)
{
	char *key = stuck_key(origin, file);
	char line[2 * PATH_MAX + 4];
	int n;

	if (!key)
		return;
	if (sv.n_stuck < MAX_STUCK) {
		sv.stuck[sv.n_stuck++] = key;
	} else {
		free(sv.stuck[sv.next_stuck]);
		sv.stuck[sv.next_stuck] = key;
		sv.next_stuck = (sv.next_stuck + 1) % MAX_STUCK;
	}
	/* Once per directory: later opens under it fail without asking. */
	n = snprintf(line, sizeof(line), "%s\n", file);
	if (n > 0 && write(sv.notice, line, (size_t)n) < 0) {
		/* The notifying thread is gone: nobody to tell. */
	}
}

static void abandon_worker(void)
{
	kill(sv.worker, SIGKILL);
	close(sv.wsock);
	sv.worker = -1;
	sv.wsock = -1;
	sv.abandoned++;
}

/* Whether a worker may take the request of `file` (from `origin`): not
 * when its directory is stuck or too many workers were given up on; one
 * is started if none runs.  0, or the refusal, also in rp. */
static int worker_ready(const char *origin, const char *file, struct reply *rp)
{
	int ret;

	if (sv.n_stuck && is_stuck(origin, file)) {
		rp->ret = -ETIMEDOUT;
		rp->u.step = "its file system did not answer before";
		return rp->ret;
	}
	if (sv.worker < 0 && sv.abandoned >= TR_OPENER_MAX_ABANDONED) {
		rp->ret = -ETIMEDOUT;
		rp->u.step = "too many file systems did not answer before";
		return rp->ret;
	}
	if (sv.worker < 0 && (ret = start_worker()) < 0) {
		rp->ret = ret;
		rp->u.step = "start a process for opening files";
		return rp->ret;
	}
	return 0;
}

/* The worker's answer to rq, which it answered in time, in rp; the fd it
 * sent in *rfd. */
static void worker_reply(const struct request *rq, struct reply *rp, int *rfd)
{
	int fds[2];
	ssize_t n = recv_fds(sv.wsock, rp, sizeof(*rp), fds);

	if (n != (ssize_t)sizeof(*rp)) {
		close_fds(fds);
		abandon_worker();
		memset(rp, 0, sizeof(*rp));
		rp->ret = -EIO;
		rp->u.step = "the process for opening files is gone";
		return;
	}
	if (rp->ret >= 0 && gives_fd(rq->op)) {
		if (fds[0] < 0) {
			rp->ret = -EIO;
			rp->u.step = "the process for opening files sent no file";
		}
		*rfd = fds[0];
		fds[0] = -1;
	}
	close_fds(fds);
}

/* Runs one request in the worker, within the deadline. */
static void serve(const struct request *rq, int fd, struct reply *rp, int *rfd)
{
	char file[2 * PATH_MAX + 2], origin[64];
	struct pollfd p;
	int ret;

	*rfd = -1;
	request_file(rq, fd, file, sizeof(file));
	/* Read from /proc only once something is stuck: an open costs the
	 * lookups of everyone waiting behind it. */
	origin[0] = '\0';
	if (sv.n_stuck)
		request_origin(rq, fd, origin, sizeof(origin));
	if (worker_ready(origin, file, rp) < 0)
		return;
	if (send_fds(sv.wsock, rq, sizeof(*rq), fd, -1) < 0) {
		abandon_worker();
		rp->ret = -EIO;
		rp->u.step = "the process for opening files is gone";
		return;
	}
	p.fd = sv.wsock;
	p.events = POLLIN;
	do
		ret = poll(&p, 1, (int)sv.timeout_ms);
	while (ret < 0 && errno == EINTR);
	if (ret <= 0) {
		abandon_worker();
		if (!origin[0])
			request_origin(rq, fd, origin, sizeof(origin));
		remember_stuck(origin, file);
		rp->ret = -ETIMEDOUT;
		rp->u.step = "its file system did not answer";
		return;
	}
	worker_reply(rq, rp, rfd);
}

static void supervisor_main(void)
{
	struct request rq;
	struct reply rp;
	int fds[2], rfd;

	/* The first worker now, not at the first request: that comes while
	 * a system-wide recording describes the processes it found, and a
	 * process forked just then is one the recording cannot describe
	 * (tests/perf_events/live.sh saw its samples named live, unnamed
	 * offline).  If it fails, the first request tries again. */
	(void)start_worker();
	for (;;) {
		ssize_t n = recv_fds(sv.ctl, &rq, sizeof(rq), fds);

		if (n <= 0)
			_exit(0);
		reap();
		if ((size_t)n != sizeof(rq) || fds[0] < 0) {
			close_fds(fds);
			continue;
		}
		rq.path[sizeof(rq.path) - 1] = '\0';
		memset(&rp, 0, sizeof(rp));
		/* fds[0]: where to answer; fds[1]: the request's own fd. */
		serve(&rq, fds[1], &rp, &rfd);
		if (send_fds(fds[0], &rp, sizeof(rp), rp.ret >= 0 ? rfd : -1, -1) < 0) {
			/* The caller gave up waiting: the fd is closed below. */
		}
		if (rfd >= 0)
			close(rfd);
		close_fds(fds);
	}
}

/* ---- tracerig's side ---- */

static struct {
	pid_t supervisor;
	int ctl, notice_rd, stop_wr;
	unsigned int timeout_ms;
	tr_opener_stuck_fn stuck;
	void *arg;
	pthread_t thread;
	int thread_running;
} me = { .supervisor = -1, .ctl = -1, .notice_rd = -1, .stop_wr = -1 };

static void *notify_main(void *arg)
{
	int stop_rd = (int)(intptr_t)arg;
	char buf[2 * PATH_MAX + 4];
	size_t have = 0;

	for (;;) {
		struct pollfd p[2] = { { .fd = me.notice_rd, .events = POLLIN },
				       { .fd = stop_rd, .events = POLLIN } };
		ssize_t n;
		char *nl;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		n = read(me.notice_rd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = strchr(buf, '\n'))) {
			*nl = '\0';
			if (me.stuck)
				me.stuck(buf, me.timeout_ms, me.arg);
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have + 1);
		}
		if (have == sizeof(buf) - 1)
			have = 0; /* no line that long comes */
	}
	close(stop_rd);
	return NULL;
}

/* The child tr_opener_start forked, made the supervisor: never returns. */
static void supervisor_child(const int ctl[2], const int notice[2], const int stop[2],
			     unsigned int timeout_ms)
{
	/* Ours only: a supervisor outliving tracerig would serve nobody. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close(ctl[0]);
	close(notice[0]);
	close(stop[0]);
	close(stop[1]);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sv.ctl = ctl[1];
	sv.notice = notice[1];
	sv.timeout_ms = timeout_ms ? timeout_ms : 1;
	fcntl(sv.notice, F_SETFL, O_NONBLOCK);
	supervisor_main();
}

/* The thread that tells of stuck files, reading stop_rd (its own, or
 * closed when it cannot start) for when to end. */
static void start_notify_thread(int stop_rd)
{
	sigset_t all, old;

	/* Started before the session blocks SIGINT and SIGTERM for its
	 * signalfd: with them open, this thread would take a SIGTERM meant
	 * for the session and die of it, the whole process with it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	me.thread_running =
		pthread_create(&me.thread, NULL, notify_main, (void *)(intptr_t)stop_rd) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!me.thread_running)
		close(stop_rd);
}

int tr_opener_start(unsigned int timeout_ms, tr_opener_stuck_fn stuck, void *arg)
{
	int ctl[2] = { -1, -1 }, notice[2] = { -1, -1 }, stop[2] = { -1, -1 }, ret;
	char env[64];
	pid_t pid;

	if (me.supervisor > 0)
		return -EBUSY;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0 ||
	    pipe2(notice, O_CLOEXEC) < 0 || pipe2(stop, O_CLOEXEC) < 0) {
		ret = -errno;
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto fail;
	}
	if (pid == 0)
		supervisor_child(ctl, notice, stop, timeout_ms);
	close(ctl[1]);
	close(notice[1]);
	me.supervisor = pid;
	me.ctl = ctl[0];
	me.notice_rd = notice[0];
	me.stop_wr = stop[1];
	me.timeout_ms = timeout_ms;
	me.stuck = stuck;
	me.arg = arg;
	start_notify_thread(stop[0]);
	snprintf(env, sizeof(env), "%d:%d", (int)getpid(), me.ctl);
	setenv(ENV_NAME, env, 1);
	return 0;

fail:
	for (int i = 0; i < 2; i++) {
		if (ctl[i] >= 0)
			close(ctl[i]);
		if (notice[i] >= 0)
			close(notice[i]);
		if (stop[i] >= 0)
			close(stop[i]);
	}
	return ret;
}

void tr_opener_stop(void)
{
	if (me.supervisor <= 0)
		return;
	unsetenv(ENV_NAME);
	if (me.thread_running) {
		if (write(me.stop_wr, "x", 1) < 0) {
			/* The thread still sees the pipe's end when it is closed. */
		}
		pthread_join(me.thread, NULL);
		me.thread_running = 0;
	}
	close(me.stop_wr);
	close(me.ctl);
	/* The supervisor never waits on a file system: it can be waited
	 * for.  Its workers are not (one may be in D state). */
	kill(me.supervisor, SIGKILL);
	waitpid(me.supervisor, NULL, 0);
	close(me.notice_rd);
	me.supervisor = -1;
	me.ctl = me.notice_rd = me.stop_wr = -1;
}

/* The supervisor's socket, when this process started it.  Each copy of
 * this library (the core's, each plugin's) has its own `me`: the
 * environment is what they share. */
static int opener_fd(void)
{
	const char *env = getenv(ENV_NAME);
	int pid, fd;
	char end;

	if (!env || sscanf(env, "%d:%d%c", &pid, &fd, &end) != 2 || pid != (int)getpid() ||
	    fd < 0)
		return -1;
	return fd;
}

int tr_opener_active(void)
{
	return opener_fd() >= 0;
}

/* rq and fd sent to the supervisor on ctl, with a socket for its answer:
 * our end of that socket, or -errno (u->step said). */
static int send_request(int ctl, const struct request *rq, int fd, struct tr_untrusted *u)
{
	int sp[2], ret;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		ret = -errno;
		u->step = "socketpair";
		return ret;
	}
	ret = send_fds(ctl, rq, sizeof(*rq), sp[1], fd);
	close(sp[1]);
	if (ret < 0) {
		close(sp[0]);
		u->step = "the process for opening files is gone";
		return ret;
	}
	return sp[0];
}

/* The supervisor's answer on sock (closed): for an operation that gives
 * an fd, the fd it sent, else what it returned; or -errno (u said). */
static int await_reply(int sock, enum tr_opener_op op, struct tr_untrusted *u)
{
	struct reply rp;
	struct pollfd p;
	int fds[2], ret;
	ssize_t n;

	/* The supervisor answers each request within its deadline; this one
	 * may wait behind others'.  Unbounded only if the supervisor hangs,
	 * and it makes no call that can. */
	p.fd = sock;
	p.events = POLLIN;
	do
		ret = poll(&p, 1, -1);
	while (ret < 0 && errno == EINTR);
	n = recv_fds(sock, &rp, sizeof(rp), fds);
	close(sock);
	if (n != (ssize_t)sizeof(rp)) {
		close_fds(fds);
		u->step = "the process for opening files is gone";
		return -EIO;
	}
	*u = rp.u;
	ret = rp.ret;
	if (ret >= 0 && gives_fd(op)) {
		ret = fds[0];
		fds[0] = -1;
		if (ret < 0) {
			ret = -EIO;
			u->step = "the process for opening files sent no file";
		}
	}
	close_fds(fds);
	return ret;
}

/* One request; dev and ino name the file for TR_OPENER_REMOVE. */
static int request(enum tr_opener_op op, int fd, pid_t pid, const char *path, enum tr_scope scope,
		   uint64_t max_size, dev_t dev, ino_t ino, struct tr_untrusted *u)
{
	struct tr_untrusted spare;
	struct request *rq;
	int ctl = opener_fd(), sock, ret;

	if (!u) {
		u = &spare;
		memset(u, 0, sizeof(*u));
	}
	rq = calloc(1, sizeof(*rq));
	if (rq) {
		rq->dev = (uint64_t)dev;
		rq->ino = (uint64_t)ino;
	}
	memset(u, 0, sizeof(*u));
	u->limit = max_size;
	if (ctl < 0) {
		free(rq);
		ret = -ENOTCONN;
		u->step = "the process for opening files";
		goto out;
	}
	if (!rq) {
		ret = -ENOMEM;
		u->step = "a request to the process for opening files";
		goto out;
	}
	rq->op = (int)op;
	rq->scope = (int)scope;
	rq->pid = (int)pid;
	rq->max_size = max_size;
	if (path && strlen(path) >= sizeof(rq->path)) {
		free(rq);
		ret = -ENAMETOOLONG;
		u->step = "a request to the process for opening files";
		goto out;
	}
	if (path)
		strcpy(rq->path, path);
	sock = send_request(ctl, rq, fd, u);
	free(rq);
	if (sock < 0) {
		ret = sock;
		goto out;
	}
	ret = await_reply(sock, op, u);
out:
	if (op == TR_OPENER_REOPEN && fd >= 0)
		close(fd);
	return ret;
}

int tr_opener_call(enum tr_opener_op op, int fd, pid_t pid, const char *path, enum tr_scope scope,
		   uint64_t max_size, struct tr_untrusted *u)
{
	return request(op, fd, pid, path, scope, max_size, 0, 0, u);
}

int tr_opener_remove(int dirfd, const char *name, dev_t dev, ino_t ino)
{
	return request(TR_OPENER_REMOVE, dirfd, 0, name, TR_BENEATH, 0, dev, ino, NULL);
}
