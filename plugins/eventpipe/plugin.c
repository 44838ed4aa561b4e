/* eventpipe: .NET runtime events (GC, JIT, loader, exceptions, contention,
 * thread pool) from each traced .NET process over its diagnostics IPC,
 * without LTTng: one COMM.PID.nettrace per process in the archive, the
 * file dotnet-trace writes, which PerfView, TraceEvent and `dotnet-trace
 * convert` open as it is.
 *
 * Which processes: -p PIDs; the launched command's runtimes, which connect
 * to tracerig's own diagnostic port before they run managed code (port.h);
 * in a system-wide run, every .NET process alive at start; and, with
 * `observed`, every process another backend observed (a .NET process
 * started later, once perf_events samples it).  Processes in containers
 * are reached through their root, namespace PID and TMPDIR
 * (lib/dotnetipc).
 *
 * One reader thread copies every stream into its file as it comes (poll);
 * stop sends each runtime StopTracing and reads until the runtime closes
 * the stream after its rundown.  This file is the glue: keys, targets,
 * thread, vtable; the protocol is session.c and port.c. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracerig-private/ext.h"

#include "lib/dotnetipc.h"
#include "lib/keyerror.h"
#include "lib/pidset.h"
#include "lib/procpid.h"
#include "lib/vec.h"
#include "port.h"
#include "providers.h"
#include "segments.h"
#include "session.h"

/* How long a runtime has to say who it is once connected to the port. */
#define ADVERTISE_TIMEOUT_MS 2000
/* How often an observed process without a diagnostic socket is looked at
 * again (a runtime creates it moments after it starts), and how often. */
#define RELOOK_MS 500
#define RELOOKS 6

struct eventpipe_config {
	struct tracerig_list providers;
	long long buffer_size, max_size, connect_ms, stop_ms;
	int rundown, suspend, observed, sample_profiler;
};

/* One traced process. */
struct runtime {
	pid_t pid;            /* host PID */
	int via_port;         /* a launched command's runtime, connected to our port */
	int version;          /* the CollectTracing to send next: 2, else 1 */
	int collecting;       /* a session runs (s is valid) */
	int resumed;          /* via_port: ResumeRuntime answered (or sent after a failure) */
	int given_up;         /* refused or failed: said once in the log */
	int idle_fd;          /* via_port: a connection of the runtime's, kept for StopTracing */
	int relooks;          /* observed, no socket yet: looks left */
	int64_t relook_at_ms;
	struct ep_session s;
	/* Flight mode (segments.h): s began at seg_start_ns, the SEQth
	 * session of this process; `old`, rotated out, streams its rundown
	 * after StopTracing went on stop_fd. */
	uint64_t seg_start_ns;
	unsigned seq;
	struct ep_session old;
	uint64_t old_start_ns, old_end_ns;
	int stop_fd;
	uint64_t rotated_gen;  /* the last snapshot's rotation it took part in */
	int filed;             /* s ended and is a segment */
	struct ep_counts done; /* of its ended rotated-out sessions */
	int rotate_failed;     /* said once in the log */
	struct ep_segments segs;
};

struct eventpipe {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct eventpipe_config cfg;
	struct ep_providers providers;
	struct ep_request req;
	const char *staging;
	struct ep_port port;   /* fd -1 unless a command is launched */
	int port_cleanup;      /* the watchdog removes the port if we cannot */
	int subscribed;

	pthread_t thread;
	int thread_started;
	int wake[2];           /* the reader's poll wakes on a byte here */
	pthread_mutex_t lock;  /* runtimes, queue, stopping */
	pthread_cond_t changed; /* a session ended */
	struct runtime *rt;    /* rt[i] is the record of known.pids[i] */
	size_t n_rt, cap_rt;
	struct tr_pid_set known;
	pid_t *queue;          /* observed PIDs not looked at yet */
	size_t n_queue, cap_queue;
	int stopping, quit;
	uint64_t not_dotnet;   /* observed processes without a diagnostic socket */

	/* Flight mode: sessions rotate every rotate_ns; a snapshot bumps
	 * rotate_gen and waits (on `changed`) for every runtime to rotate. */
	uint64_t flight_ns, rotate_ns, rotate_gen, rotations;
	int stopped;           /* stop ended every session: segments are final */

	/* A recording ends its sessions on this thread from stop to flush. */
	pthread_t ending;
	int ending_started;
	int64_t stop_until_ms;
};

/* The session clock (CLOCK_MONOTONIC) in milliseconds. */
static int64_t now_ms(const struct eventpipe *e)
{
	return (int64_t)(e->svc->run->clock_ns() / 1000000);
}

static void wake(struct eventpipe *e)
{
	char c = 1;

	if (e->wake[1] >= 0 && write(e->wake[1], &c, 1) < 0) {
		/* A full pipe already wakes the reader. */
	}
}

static void comm_of(pid_t pid, char *out, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	n = tr_read_text(path, out, len);
	if (n <= 0)
		snprintf(out, len, "process");
	else if (out[n - 1] == '\n')
		out[n - 1] = '\0';
}

/* Under the lock. */
static struct runtime *runtime_of(struct eventpipe *e, pid_t pid, int create)
{
	struct runtime *grown;
	long i = tr_pid_set_find(&e->known, pid);

	/* A system-wide run observes every process: no walk over them all. */
	if (i >= 0)
		return &e->rt[i];
	if (!create)
		return NULL;
	grown = tr_vec_grow(e->rt, &e->cap_rt, e->n_rt + 1, sizeof(*grown), 8);
	if (!grown)
		return NULL;
	e->rt = grown;
	if (tr_pid_set_add(&e->known, pid) != 1)
		return NULL;
	e->rt[e->n_rt] = (struct runtime){ .pid = pid, .version = 2, .idle_fd = -1, .stop_fd = -1 };
	e->rt[e->n_rt].s.fd = e->rt[e->n_rt].s.out = -1;
	e->rt[e->n_rt].old.fd = e->rt[e->n_rt].old.out = -1;
	return &e->rt[e->n_rt++];
}

static void counters(struct eventpipe *e)
{
	uint64_t processes = 0, bytes = 0, refused = 0, broken = 0;
	struct ep_counts n = { 0 };

	for (size_t i = 0; i < e->n_rt; i++) {
		const struct runtime *r = &e->rt[i];

		if (r->collecting) {
			processes++;
			ep_counts_add(&n, &r->s.counts);
			ep_counts_add(&n, &r->done);
			if (r->old.state)
				ep_counts_add(&n, &r->old.counts);
			bytes += r->s.bytes;
			broken += r->s.state == EP_BROKEN;
		} else if (r->given_up) {
			refused++;
		}
	}
	e->svc->run->counter_set(e->ctx, "processes", processes);
	e->svc->run->counter_set(e->ctx, "events", n.events);
	e->svc->run->counter_set(e->ctx, "events_lost", n.lost);
	e->svc->run->counter_set(e->ctx, "bytes", bytes);
	e->svc->run->counter_set(e->ctx, "sessions_refused", refused);
	e->svc->run->counter_set(e->ctx, "sessions_broken", broken);
	for (int k = 0; k < EP_KINDS; k++)
		e->svc->run->counter_set(e->ctx, ep_kind_counters[k], n.kind[k]);
	if (e->flight_ns)
		e->svc->run->counter_set(e->ctx, "rotations", e->rotations);
	e->svc->run->progress_set(e->ctx, "%llu runtimes, %llu KiB", (unsigned long long)processes,
				  (unsigned long long)(bytes >> 10));
}

/* Starts the session on `fd` (a connection CollectTracing goes on), under
 * the lock.  0; or the error, logged, with fd closed. */
static int start_session(struct eventpipe *e, struct runtime *r, int fd)
{
	char comm[64], why[512];
	uint64_t id = 0;
	uint32_t hresult = 0;
	int ret;

	ret = ep_collect(fd, r->version, &e->req, (int)e->cfg.connect_ms, &id, &hresult);
	if (ret == -EREMOTEIO && hresult == TR_DS_IPC_E_UNKNOWN_COMMAND && r->version > 1) {
		/* .NET Core 3.x knows CollectTracing only: the next
		 * connection asks with it. */
		r->version = 1;
		close(fd);
		return -EAGAIN;
	}
	if (ret < 0) {
		close(fd);
		if (ret == -EREMOTEIO)
			snprintf(why, sizeof(why), "the runtime refused CollectTracing%s: %s",
				 r->version > 1 ? "2" : "",
				 tr_dnipc_hresult_str(hresult, comm, sizeof(comm)));
		else
			snprintf(why, sizeof(why), "CollectTracing%s: %s", r->version > 1 ? "2" : "",
				 ret == -ETIMEDOUT ? "no answer in time"
				 : ret == -EBADMSG ? "the answer is not a diagnostics IPC reply (refused)"
				 : ret == -ECONNRESET ? "the connection was closed before an answer"
				 : strerror(-ret));
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN, "pid %d: no runtime events: %s",
				 (int)r->pid, why);
		r->given_up = 1;
		return ret;
	}
	comm_of(r->pid, comm, sizeof(comm));
	if (e->flight_ns) {
		r->seg_start_ns = e->svc->run->clock_ns();
		/* It took part in every rotation asked before it began. */
		r->rotated_gen = e->rotate_gen;
	}
	ret = ep_session_open_seq(&r->s, e->staging, r->pid, comm, e->flight_ns ? ++r->seq : 0, fd,
				  r->version, id);
	if (ret < 0) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR,
				 "pid %d: cannot create %s in the staging directory: %s",
				 (int)r->pid, r->s.entry, strerror(-ret));
		ep_session_close(&r->s);
		r->given_up = 1;
		return ret;
	}
	r->s.max_bytes = (uint64_t)e->cfg.max_size;
	r->collecting = 1;
	/* The file is only appended to: the core deflates it while it grows,
	 * so that packaging has only its last bytes to compress, and may free
	 * what it deflated (nothing here reads the file again). */
	if (tracerig_internal(e->svc)->archive_append_only(e->ctx, r->s.entry, 0) == 0)
		tracerig_internal(e->svc)->archive_release(e->ctx, r->s.entry, UINT64_MAX);
	e->svc->run->log(e->ctx, TRACERIG_LOG_INFO,
			 "pid %d: EventPipe session %llu (CollectTracing%s) into %s", (int)r->pid,
			 (unsigned long long)id, r->version > 1 ? "2" : "", r->s.entry);
	wake(e);
	return 0;
}

/* How a process came to be traced. */
enum reach {
	REACH_TARGET,   /* -p: every failure is said */
	REACH_SCAN,     /* alive at the start of a system-wide run: one without a
			 * diagnostic socket is not .NET, only counted */
	REACH_OBSERVED, /* seen by another backend, maybe moments after it
			 * started: one without a socket is looked at again */
};

/* A process reached through its own diagnostic socket.  Under the lock. */
static void attach(struct eventpipe *e, pid_t pid, enum reach how)
{
	struct tr_dnipc_status st;
	struct runtime *r = runtime_of(e, pid, 1);
	char why[512];
	int fd, ret;

	if (!r || r->collecting || r->via_port || (r->given_up && !r->relooks))
		return;
	for (int tries = 0; tries < 2; tries++) {
		fd = tr_dnipc_connect(pid, (int)e->cfg.connect_ms, &st);
		if (fd < 0) {
			if (how != REACH_TARGET && (fd == -ENOENT || fd == -ESRCH)) {
				if (how == REACH_OBSERVED && fd == -ENOENT && !r->given_up)
					r->relooks = RELOOKS;
				if (r->relooks > 0)
					r->relooks--;
				if (r->relooks == 0)
					e->not_dotnet++;
				r->given_up = 1;
				r->relook_at_ms = now_ms(e) + RELOOK_MS;
				return;
			}
			e->svc->run->log(e->ctx, TRACERIG_LOG_WARN, "pid %d: no runtime events: %s",
					 (int)pid, tr_dnipc_explain(&st, fd, why, sizeof(why)));
			r->given_up = 1;
			r->relooks = 0;
			return;
		}
		r->given_up = 0;
		r->relooks = 0;
		ret = start_session(e, r, fd);
		if (ret != -EAGAIN)
			return;
	}
}

/* A connection to our port, under the lock: the first of a runtime starts
 * its session, the next resumes it, a later one is kept for StopTracing. */
static void on_port_connection(struct eventpipe *e, int fd, pid_t pid)
{
	struct runtime *r = runtime_of(e, pid, 1);
	uint32_t hresult;
	char words[160];
	int ret;

	if (!r) {
		close(fd);
		return;
	}
	r->via_port = 1;
	if (!r->collecting && !r->given_up && !e->stopping) {
		start_session(e, r, fd);
		return;
	}
	if (!r->resumed) {
		ret = ep_resume_runtime(fd, (int)e->cfg.connect_ms, &hresult);
		close(fd);
		if (ret < 0) {
			e->svc->run->log(e->ctx, TRACERIG_LOG_WARN, "pid %d: ResumeRuntime: %s",
					 (int)pid,
					 ret == -EREMOTEIO ? tr_dnipc_hresult_str(hresult, words,
										  sizeof(words))
							   : strerror(-ret));
			return;
		}
		r->resumed = 1;
		return;
	}
	if (r->idle_fd >= 0)
		close(r->idle_fd);
	r->idle_fd = fd;
}

static void accept_port(struct eventpipe *e)
{
	for (;;) {
		struct ep_advertise a;
		pid_t pid = 0;
		int fd = ep_port_accept(&e->port, ADVERTISE_TIMEOUT_MS, &pid, &a);

		if (fd == -EAGAIN)
			return;
		if (fd < 0) {
			e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
					 "a connection to the diagnostic port "
					 "%s: %s",
					 e->port.path,
					 fd == -EBADMSG ? "not a .NET runtime's advertise (refused)"
							: strerror(-fd));
			if (fd != -EBADMSG && fd != -ETIMEDOUT)
				return;
			continue;
		}
		pthread_mutex_lock(&e->lock);
		on_port_connection(e, fd, pid);
		pthread_mutex_unlock(&e->lock);
	}
}

/* A connection for one command: one the runtime opened to our port if it
 * left one, else its own diagnostic socket.  Under the lock. */
static int take_connection(struct eventpipe *e, struct runtime *r, struct tr_dnipc_status *st)
{
	int fd = r->idle_fd;

	memset(st, 0, sizeof(*st));
	if (fd >= 0) {
		r->idle_fd = -1;
		return fd;
	}
	return tr_dnipc_connect(r->pid, (int)e->cfg.connect_ms, st);
}

static void rotate_failed(struct eventpipe *e, struct runtime *r, const char *what,
			  const char *why)
{
	if (!r->rotate_failed)
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "pid %d: rotating its EventPipe session: "
				 "%s: %s (its current file grows on; snapshots until a rotation "
				 "succeeds lack its newest events)",
				 (int)r->pid, what, why);
	r->rotate_failed = 1;
}

/* Flight mode: a new session of r begins, then the current one is asked
 * to stop; the reader copies its rundown and files it as a segment
 * (old_ended).  StopTracing is only sent here: the runtime answers once
 * the rundown is written, which the reader, this thread, must read
 * meanwhile.  Under the lock. */
static void rotate(struct eventpipe *e, struct runtime *r)
{
	struct ep_session next;
	struct tr_dnipc_status st;
	struct tr_dnipc_buf b;
	uint64_t id = 0;
	uint32_t hresult = 0;
	char comm[64], why[512];
	int fd, ret;

	fd = take_connection(e, r, &st);
	if (fd < 0) {
		rotate_failed(e, r, "connecting", tr_dnipc_explain(&st, fd, why, sizeof(why)));
		return;
	}
	ret = ep_collect(fd, r->version, &e->req, (int)e->cfg.connect_ms, &id, &hresult);
	if (ret < 0) {
		close(fd);
		rotate_failed(e, r, "CollectTracing", ret == -EREMOTEIO
			      ? tr_dnipc_hresult_str(hresult, why, sizeof(why)) : strerror(-ret));
		return;
	}
	comm_of(r->pid, comm, sizeof(comm));
	ret = ep_session_open_seq(&next, e->staging, r->pid, comm, r->seq + 1, fd, r->version, id);
	if (ret < 0) {
		ep_session_close(&next);
		rotate_failed(e, r, "creating its next file", strerror(-ret));
		/* The session just begun ends with its connection. */
		return;
	}
	next.max_bytes = r->s.max_bytes;
	r->seq++;
	r->old = r->s;
	r->old_start_ns = r->seg_start_ns;
	r->old_end_ns = r->seg_start_ns = e->svc->run->clock_ns();
	r->s = next;
	e->rotations++;
	tr_dnipc_buf_init(&b);
	tr_dnipc_put_u64(&b, r->old.session_id);
	fd = b.err ? b.err : take_connection(e, r, &st);
	ret = fd < 0 ? fd : tr_dnipc_send(fd, TR_DNIPC_SET_EVENTPIPE, TR_DNIPC_STOP_TRACING, b.data,
					   b.len, (int)e->cfg.connect_ms);
	tr_dnipc_buf_free(&b);
	if (ret < 0) {
		if (fd >= 0)
			close(fd);
		/* stop sends it again, and the stream is read until then. */
		rotate_failed(e, r, "StopTracing", fd < 0 ? tr_dnipc_explain(&st, fd, why, sizeof(why))
							  : strerror(-ret));
		return;
	}
	/* Kept open until the stream ends: the reply is not needed, but a
	 * runtime must not see the command's connection go first. */
	r->stop_fd = fd;
	r->rotate_failed = 0;
	wake(e);
}

/* What reading a stream found amiss, said before its session is closed
 * (the reader's words go with it): a stream whose events could not be
 * counted, and the events the runtime dropped. */
static void not_counted(struct eventpipe *e, const struct ep_session *s)
{
	if (!s->counter.counting && s->counter.nt.why[0])
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "pid %d: %s: its events are not counted, its "
				 "stream could not be read: %s (the file is kept as it came)",
				 (int)s->pid, s->entry, s->counter.nt.why);
	if (s->counts.lost)
		e->svc->run->log(
			e->ctx, TRACERIG_LOG_WARN,
			"pid %d: %s: the runtime dropped %llu events "
			"(gaps in its threads' sequence numbers): its session buffer ([eventpipe] "
			"buffer_size, %u MiB) was full before tracerig read it; raise buffer_size, "
			"or enable fewer providers or keywords",
			(int)s->pid, s->entry, (unsigned long long)s->counts.lost,
			e->req.buffer_mb);
}

/* The rotated-out session ended (or broke): it becomes a segment.  Under
 * the lock. */
static void old_ended(struct eventpipe *e, struct runtime *r)
{
	int complete = r->old.state == EP_ENDED;

	not_counted(e, &r->old);
	if (ep_session_close(&r->old) < 0)
		complete = 0;
	ep_counts_add(&r->done, &r->old.counts);
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	r->stop_fd = -1;
	if (!complete)
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "pid %d: %s ended early (%s): snapshots "
				 "hold what came of it",
				 (int)r->pid, r->old.entry,
				 r->old.failed ? r->old.failed : "cut short");
	if (ep_segments_add(&r->segs, r->old.entry, r->old_start_ns, r->old_end_ns, complete) < 0)
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "pid %d: out of memory: %s is in no snapshot", (int)r->pid,
				 r->old.entry);
	r->old.state = 0;
	/* A segment older than any snapshot's window and the rotation
	 * that may still be taking it. */
	ep_segments_prune(&r->segs, e->staging,
			  e->svc->run->clock_ns() - e->flight_ns - e->rotate_ns);
	pthread_cond_broadcast(&e->changed);
}

/* The current session of a flight runtime that ended (the process exited,
 * or stop ended them all) becomes its last segment.  Under the lock. */
static void file_current(struct eventpipe *e, struct runtime *r)
{
	int complete = r->s.state == EP_ENDED;

	if (!e->flight_ns || !r->collecting || r->filed || r->s.state == EP_STREAMING)
		return;
	not_counted(e, &r->s);
	if (ep_session_close(&r->s) < 0)
		complete = 0;
	if (ep_segments_add(&r->segs, r->s.entry, r->seg_start_ns, e->svc->run->clock_ns(),
			    complete) < 0)
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "pid %d: out of memory: %s is in no snapshot", (int)r->pid,
				 r->s.entry);
	r->filed = 1;
}

/* Once per reader round, flight mode: each runtime rotates after half a
 * window, or when a snapshot asks. */
static void rotate_due(struct eventpipe *e)
{
	uint64_t now = e->svc->run->clock_ns();

	for (size_t i = 0; i < e->n_rt && !e->stopping; i++) {
		struct runtime *r = &e->rt[i];

		file_current(e, r);
		if (!r->collecting || r->s.state != EP_STREAMING || r->old.state == EP_STREAMING)
			continue;
		if (r->rotated_gen >= e->rotate_gen && now - r->seg_start_ns < e->rotate_ns)
			continue;
		rotate(e, r);
		/* Failed or not, it had its turn: a snapshot waits for no
		 * runtime twice. */
		r->rotated_gen = e->rotate_gen;
		pthread_cond_broadcast(&e->changed);
	}
}

static void attach_queued(struct eventpipe *e)
{
	int64_t now = now_ms(e);

	pthread_mutex_lock(&e->lock);
	while (e->n_queue && !e->stopping) {
		pid_t pid = e->queue[--e->n_queue];

		attach(e, pid, REACH_OBSERVED);
	}
	for (size_t i = 0; i < e->n_rt && !e->stopping; i++)
		if (e->rt[i].relooks > 0 && e->rt[i].relook_at_ms <= now)
			attach(e, e->rt[i].pid, REACH_OBSERVED);
	if (e->flight_ns)
		rotate_due(e);
	/* Once per round of the reader: what its pumps and the port did. */
	counters(e);
	pthread_mutex_unlock(&e->lock);
}

/* What the reader polls: the wake pipe, the port, every stream. */
struct poll_set {
	struct pollfd *pfd;
	size_t *which; /* the runtime each pfd entry reads */
	size_t cap, cap_which;
};

/* The poll set of this round: its number of entries, 0 when out of
 * memory.  Under the lock. */
static size_t fill_poll_set(struct eventpipe *e, struct poll_set *ps)
{
	struct pollfd *grown = tr_vec_grow(ps->pfd, &ps->cap, 2 * e->n_rt + 2, sizeof(*grown), 16);
	size_t *grown_which =
		tr_vec_grow(ps->which, &ps->cap_which, 2 * e->n_rt + 2, sizeof(*grown_which), 16);
	size_t n = 0;

	if (grown)
		ps->pfd = grown;
	if (grown_which)
		ps->which = grown_which;
	if (!ps->pfd || !ps->which || ps->cap < 2 * e->n_rt + 2 || ps->cap_which < 2 * e->n_rt + 2)
		return 0;
	ps->pfd[n++] = (struct pollfd){ .fd = e->wake[0], .events = POLLIN };
	if (e->port.fd >= 0)
		ps->pfd[n++] = (struct pollfd){ .fd = e->port.fd, .events = POLLIN };
	/* which: the runtime's index times 2, plus 1 for its rotated-out
	 * session. */
	for (size_t i = 0; i < e->n_rt; i++) {
		if (e->rt[i].collecting && e->rt[i].s.state == EP_STREAMING) {
			ps->which[n] = 2 * i;
			ps->pfd[n++] = (struct pollfd){ .fd = e->rt[i].s.fd, .events = POLLIN };
		}
		if (e->rt[i].old.state == EP_STREAMING) {
			ps->which[n] = 2 * i + 1;
			ps->pfd[n++] = (struct pollfd){ .fd = e->rt[i].old.fd, .events = POLLIN };
		}
	}
	return n;
}

/* The stream `which` (fill_poll_set's) copied on as far as it came. */
static void pump_stream(struct eventpipe *e, size_t which)
{
	pthread_mutex_lock(&e->lock);
	/* The index holds: runtimes are only appended, by this thread or
	 * under the lock, never moved out of order. */
	if (which / 2 < e->n_rt && which % 2) {
		struct runtime *r = &e->rt[which / 2];

		ep_session_pump(&r->old);
		if (r->old.state != EP_STREAMING)
			old_ended(e, r);
	} else if (which / 2 < e->n_rt) {
		struct runtime *r = &e->rt[which / 2];

		ep_session_pump(&r->s);
		if (r->s.state != EP_STREAMING)
			pthread_cond_broadcast(&e->changed);
	}
	pthread_mutex_unlock(&e->lock);
}

static void *reader_thread(void *arg)
{
	struct eventpipe *e = arg;
	struct poll_set ps = { 0 };

	for (;;) {
		size_t n;
		int quit;

		pthread_mutex_lock(&e->lock);
		quit = e->quit;
		n = fill_poll_set(e, &ps);
		pthread_mutex_unlock(&e->lock);
		if (quit)
			break;
		if (!n) {
			/* Out of memory: look again soon. */
			usleep(100 * 1000);
			continue;
		}
		if (poll(ps.pfd, n, RELOOK_MS / 2) < 0 && errno != EINTR) {
			usleep(10 * 1000);
			continue;
		}
		for (size_t k = 0; k < n; k++) {
			if (!ps.pfd[k].revents)
				continue;
			if (ps.pfd[k].fd == e->wake[0]) {
				char buf[64];

				while (read(e->wake[0], buf, sizeof(buf)) > 0)
					;
			} else if (ps.pfd[k].fd == e->port.fd) {
				accept_port(e);
			} else {
				pump_stream(e, ps.which[k]);
			}
		}
		attach_queued(e);
	}
	free(ps.pfd);
	free(ps.which);
	return NULL;
}

static void on_observed(void *arg, pid_t pid)
{
	struct eventpipe *e = arg;
	pid_t *grown;

	pthread_mutex_lock(&e->lock);
	grown = tr_vec_grow(e->queue, &e->cap_queue, e->n_queue + 1, sizeof(*grown), 64);
	if (grown) {
		e->queue = grown;
		e->queue[e->n_queue++] = pid;
	}
	pthread_mutex_unlock(&e->lock);
	wake(e);
}

/* Every process of the machine that serves a diagnostic socket. */
static void attach_all(struct eventpipe *e)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self)
			continue;
		pthread_mutex_lock(&e->lock);
		attach(e, (pid_t)pid, REACH_SCAN);
		pthread_mutex_unlock(&e->lock);
	}
	closedir(d);
}

/* Flight mode: every runtime rotates, so that its newest events are in
 * a segment with its rundown, then the segments that overlap the window
 * are linked into the snapshot. */
static int eventpipe_snapshot(void *state, struct tracerig_archive *ar, uint64_t from_ns,
			      uint64_t to_ns)
{
	struct eventpipe *e = state;
	const char *dir = e ? tracerig_internal(e->svc)->archive_dir(ar) : NULL;
	size_t files = 0;
	int ret = 0;

	if (!dir)
		return -EINVAL;
	pthread_mutex_lock(&e->lock);
	if (!e->stopped && !e->stopping) {
		int64_t until = now_ms(e) + e->cfg.stop_ms;
		struct timespec deadline = { .tv_sec = until / 1000,
					     .tv_nsec = (until % 1000) * 1000000 };
		uint64_t gen = ++e->rotate_gen;

		wake(e);
		for (;;) {
			size_t waiting = 0;

			for (size_t i = 0; i < e->n_rt; i++) {
				const struct runtime *r = &e->rt[i];

				waiting += (r->collecting && r->s.state == EP_STREAMING &&
					    r->rotated_gen < gen) ||
					   (r->old.state == EP_STREAMING && r->stop_fd >= 0);
			}
			if (!waiting || e->stopping || now_ms(e) >= until)
				break;
			pthread_cond_timedwait(&e->changed, &e->lock, &deadline);
		}
	}
	for (size_t i = 0; i < e->n_rt && ret == 0; i++) {
		struct runtime *r = &e->rt[i];
		size_t n = 0;

		file_current(e, r);
		ret = ep_segments_snapshot(&r->segs, e->staging, dir, from_ns, to_ns, &n);
		if (ret < 0)
			e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR,
					 "pid %d: putting its .nettrace files "
					 "into the snapshot failed: %s",
					 (int)r->pid, strerror(-ret));
		files += n;
	}
	pthread_mutex_unlock(&e->lock);
	e->svc->run->log(e->ctx, TRACERIG_LOG_INFO, "snapshot: %zu .nettrace file(s)", files);
	return ret;
}

/* The profile's providers (default when none): how many items are wrong,
 * each said with the profile's line when `say` is the services
 * (validate), only counted otherwise (check and init: validate said them,
 * and a run with any stops before init).  `why`: the first, as
 * "providers: ...".  A negative errno when it cannot tell. */
static int add_providers(const struct tracerig_services *say, struct tracerig_ctx *ctx,
			 const struct eventpipe_config *cfg, struct ep_providers *p, char *why,
			 size_t why_len)
{
	int ret, wrong = 0;

	if (cfg->providers.n == 0) {
		char item_why[512];

		/* A preset of ours: only out of memory can refuse it. */
		ret = ep_providers_add(p, "default", item_why, sizeof(item_why));
		if (ret < 0)
			snprintf(why, why_len, "providers: %s", strerror(-ret));
		return ret;
	}
	for (size_t i = 0; i < cfg->providers.n; i++) {
		char item_why[512];

		ret = ep_providers_add(p, cfg->providers.items[i], item_why, sizeof(item_why));
		if (ret == -EINVAL) {
			tr_key_error(say, ctx, &wrong, why, why_len, "providers", "%s", item_why);
		} else if (ret < 0) {
			snprintf(why, why_len, "providers: %s", strerror(-ret));
			return ret;
		}
	}
	return wrong;
}

/* No provider left once sample_profiler = no took the sample profiler out:
 * the profile's error, said with its line by validate (`say`), counted by
 * check and init.  1 when so. */
static int none_left(const struct tracerig_services *say, struct tracerig_ctx *ctx,
		     const struct ep_providers *p, char *why, size_t why_len)
{
	int wrong = 0;

	if (!p->n)
		tr_key_error(say, ctx, &wrong, why, why_len, "providers",
			     "nothing is left to enable once sample_profiler = no "
			     "leaves out %s: name another provider, or set sample_profiler = yes",
			     EP_SAMPLE_PROFILER);
	return wrong;
}

/* Every wrong value said before any plugin starts: the providers string
 * needs no runtime to judge. */
static int eventpipe_validate(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	struct eventpipe_config cfg;
	struct ep_providers p = { 0 };
	char why[512];
	int ret;

	if ((ret = svc->run->config_bind(ctx, &cfg)) < 0)
		return ret;
	ret = add_providers(svc, ctx, &cfg, &p, why, sizeof(why));
	if (ret == 0) {
		if (!cfg.sample_profiler)
			ep_providers_remove(&p, EP_SAMPLE_PROFILER);
		none_left(svc, ctx, &p, why, sizeof(why));
	}
	ep_providers_free(&p);
	if (ret < 0)
		svc->run->log(ctx, TRACERIG_LOG_ERROR, "%s", why);
	return ret < 0 ? ret : 0;
}

static int build_request(struct eventpipe *e)
{
	char why[512];
	int ret;

	/* What validate said is not said again; a run with a wrong value
	 * never gets here, and none is ever used. */
	ret = add_providers(NULL, e->ctx, &e->cfg, &e->providers, why, sizeof(why));
	if (ret > 0)
		ret = -EINVAL;
	if (ret == 0 && !e->cfg.sample_profiler &&
	    ep_providers_remove(&e->providers, EP_SAMPLE_PROFILER))
		e->svc->run->log(
			e->ctx, TRACERIG_LOG_INFO,
			"%s left out (sample_profiler = no): it samples "
			"managed stacks only, every thread every millisecond, inside the process; "
			"perf_events samples every frame from outside",
			EP_SAMPLE_PROFILER);
	if (ret == 0 && none_left(NULL, e->ctx, &e->providers, why, sizeof(why)))
		ret = -EINVAL;
	if (ret < 0) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR, "%s", why);
		return ret;
	}
	e->req = (struct ep_request){ .providers = &e->providers,
				      .buffer_mb = (uint32_t)((e->cfg.buffer_size + (1 << 20) - 1) >> 20),
				      .rundown = e->cfg.rundown };
	return 0;
}

/* The watchdog's, when tracerig dies without stopping: the port's socket
 * and directory are not left in /tmp.  A runtime still connected to it
 * goes on (it only retries a port it cannot reach). */
static void cleanup_port(const char *key, const char *dir, char *said, size_t said_len)
{
	char path[128];

	(void)key;
	if (!dir || strncmp(dir, "/tmp/tracerig-eventpipe.", 24) != 0 || strchr(dir + 24, '/'))
		return;
	snprintf(path, sizeof(path), "%s/port", dir);
	unlink(path);
	if (rmdir(dir) == 0)
		snprintf(said, said_len, "removed the diagnostic port %s", path);
}

static void eventpipe_free(struct eventpipe *e)
{
	if (e->subscribed)
		e->svc->procs->pid_unsubscribe(e->ctx, on_observed, e);
	for (size_t i = 0; i < e->n_rt; i++) {
		ep_session_close(&e->rt[i].s);
		ep_session_close(&e->rt[i].old);
		if (e->rt[i].idle_fd >= 0)
			close(e->rt[i].idle_fd);
		if (e->rt[i].stop_fd >= 0)
			close(e->rt[i].stop_fd);
		ep_segments_free(&e->rt[i].segs);
	}
	free(e->rt);
	tr_pid_set_free(&e->known);
	free(e->queue);
	ep_port_close(&e->port);
	if (e->port_cleanup)
		e->svc->run->watchdog_cleanup(e->ctx, "port", NULL);
	ep_providers_free(&e->providers);
	if (e->wake[0] >= 0)
		close(e->wake[0]);
	if (e->wake[1] >= 0)
		close(e->wake[1]);
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->changed);
	free(e);
}

#define BIND(field) TRACERIG_BIND(struct eventpipe_config, field)

/* --check's notes, one after the other. */
static void note(char *advice, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(char *advice, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(advice, len);
	va_list ap;

	if (used && used + 2 < len) {
		strcpy(advice + used, "; ");
		used += 2;
	}
	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(advice + used, len - used, fmt, ap);
	va_end(ap);
}

/* What a system-wide run finds now: the processes serving a diagnostic
 * socket (located only: nothing is sent to them). */
static void check_system_wide(const struct eventpipe_config *cfg, char *advice, size_t len)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char list[256] = "";
	size_t found = 0, used = 0;

	(void)cfg;
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct tr_dnipc_status st;
		char *end, comm[64];
		long pid = strtol(de->d_name, &end, 10);
		int fd;

		if (*end || pid <= 0 || pid == getpid())
			continue;
		fd = tr_dnipc_locate((pid_t)pid, &st);
		if (fd < 0)
			continue;
		close(fd);
		if (found++ < 6) {
			comm_of((pid_t)pid, comm, sizeof(comm));
			used += (size_t)snprintf(list + used, used < sizeof(list) ? sizeof(list) - used : 0,
						 "%s%ld %s", found > 1 ? ", " : "", pid, comm);
			if (used >= sizeof(list))
				used = sizeof(list) - 1;
		}
	}
	closedir(d);
	if (found)
		note(advice, len, "system-wide: %zu .NET process(es) serve a diagnostic socket now "
		     "(%s%s): runtime events over EventPipe from each; one started later is traced "
		     "once another backend observes it", found, list, found > 6 ? ", ..." : "");
	else
		note(advice, len, "system-wide: no .NET process serves a diagnostic socket now; one "
		     "started later is traced once another backend observes it");
}

static int eventpipe_check(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			   char *advice, size_t advice_len)
{
	struct eventpipe_config cfg;
	struct ep_providers p = { 0 };
	const struct tracerig_targets *t = svc->procs->targets(ctx);
	char why[512], buf[1024];
	size_t usable = 0;
	int ret = 0;

	advice[0] = '\0';
	if (svc->run->config_bind(ctx, &cfg) < 0)
		return -ENOMEM;
	/* validate said the wrong items with their lines: not tried on any
	 * runtime, the first named here. */
	ret = add_providers(NULL, ctx, &cfg, &p, why, sizeof(why));
	if (ret != 0) {
		snprintf(advice, advice_len, "[eventpipe] %s", why);
		ep_providers_free(&p);
		return ret < 0 ? ret : -EINVAL;
	}
	if (!cfg.sample_profiler)
		ep_providers_remove(&p, EP_SAMPLE_PROFILER);
	if (none_left(NULL, ctx, &p, why, sizeof(why))) {
		snprintf(advice, advice_len,
			 "[eventpipe] providers: nothing is left to enable (said "
			 "above, with its line)");
		ep_providers_free(&p);
		return -EINVAL;
	}
	svc->run->log(ctx, TRACERIG_LOG_INFO, "providers %s",
		      ep_providers_str(&p, buf, sizeof(buf)));
	ep_providers_free(&p);
	for (size_t i = 0; i < t->n_pids; i++) {
		struct tr_dnipc_process_info pi;
		struct tr_dnipc_status st;

		ret = tr_dnipc_process_info(t->pids[i], (int)cfg.connect_ms, &pi, &st);
		if (ret == 0) {
			usable++;
			note(advice, advice_len, "pid %d: .NET %s: runtime events over EventPipe",
			     (int)t->pids[i], pi.clr_version ? pi.clr_version : "5 or earlier");
		} else {
			note(advice, advice_len, "pid %d: no runtime events: %s", (int)t->pids[i],
			     tr_dnipc_explain(&st, ret, why, sizeof(why)));
		}
		tr_dnipc_process_info_free(&pi);
	}
	if (t->command)
		note(advice, advice_len, "%s: its .NET runtimes connect to tracerig's diagnostic "
		     "port (DOTNET_DiagnosticPorts)%s", t->command,
		     cfg.suspend ? ", suspended until their session runs" : "");
	else if (t->system_wide)
		check_system_wide(&cfg, advice, advice_len);
	/* As start: not one -p process would give a session. */
	return t->n_pids && !usable && !t->command ? -ESRCH : 0;
}

/* The diagnostic port the launched command's runtimes connect to, named
 * to them in DOTNET_DiagnosticPorts. */
static int open_port(struct eventpipe *e)
{
	const struct tracerig_services *svc = e->svc;
	struct tracerig_ctx *ctx = e->ctx;
	const char *existing = getenv("DOTNET_DiagnosticPorts");
	const char *off = getenv("DOTNET_EnableDiagnostics");
	char value[4096];
	int ret;

	if (off && strcmp(off, "0") == 0)
		svc->run->log(
			ctx, TRACERIG_LOG_WARN,
			"DOTNET_EnableDiagnostics=0 in the environment: "
			"the launched command's runtimes will not connect (no runtime events)");
	ret = ep_port_open(&e->port);
	if (ret < 0)
		svc->run->log(ctx, TRACERIG_LOG_ERROR,
			      "cannot create a diagnostic port under /tmp: %s", strerror(-ret));
	else if (svc->run->watchdog_cleanup(ctx, "port", e->port.dir) == 0)
		e->port_cleanup = 1;
	if (ret == 0)
		ret = ep_port_env_value(&e->port, existing, e->cfg.suspend, value, sizeof(value));
	if (ret == 0)
		ret = svc->procs->target_setenv(ctx, "DOTNET_DiagnosticPorts", value);
	if (ret == 0)
		svc->run->log(ctx, TRACERIG_LOG_DEBUG,
			      "the launched command gets DOTNET_DiagnosticPorts=%s", value);
	return ret;
}

static int eventpipe_init(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			  void **state)
{
	struct eventpipe *e = calloc(1, sizeof(*e));
	const struct tracerig_targets *t = svc->procs->targets(ctx);
	pthread_condattr_t attr;
	int ret;

	if (!e)
		return -ENOMEM;
	e->svc = svc;
	e->ctx = ctx;
	e->port.fd = -1;
	e->wake[0] = e->wake[1] = -1;
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&e->changed, &attr);
	pthread_condattr_destroy(&attr);
	ret = svc->run->config_bind(ctx, &e->cfg);
	if (ret == 0)
		ret = build_request(e);
	e->staging = svc->archive->staging_dir(ctx);
	if (ret == 0 && !e->staging)
		ret = -EINVAL;
	if (ret == 0 && svc->run->flight_window(ctx, &e->flight_ns) == 1) {
		/* Half a window: a snapshot holds two or three segments of a
		 * process, and each rotation costs the runtime a rundown. */
		e->rotate_ns = e->flight_ns / 2;
	} else {
		e->flight_ns = 0;
	}
	if (ret == 0 && pipe2(e->wake, O_NONBLOCK | O_CLOEXEC) < 0)
		ret = -errno;
	if (ret == 0 && t->command)
		ret = open_port(e);
	if (ret < 0) {
		eventpipe_free(e);
		return ret;
	}
	{
		char buf[2048];

		svc->run->log(ctx, TRACERIG_LOG_INFO, "providers %s",
			      ep_providers_str(&e->providers, buf, sizeof(buf)));
	}
	*state = e;
	return 0;
}

static int eventpipe_start(void *state)
{
	struct eventpipe *e = state;
	const struct tracerig_targets *t = e->svc->procs->targets(e->ctx);
	size_t started = 0;
	int ret;

	for (size_t i = 0; i < t->n_pids; i++) {
		pthread_mutex_lock(&e->lock);
		attach(e, t->pids[i], REACH_TARGET);
		pthread_mutex_unlock(&e->lock);
	}
	if (t->system_wide)
		attach_all(e);
	pthread_mutex_lock(&e->lock);
	for (size_t i = 0; i < e->n_rt; i++)
		started += e->rt[i].collecting;
	counters(e);
	pthread_mutex_unlock(&e->lock);
	if (t->n_pids && !started && !t->command) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_ERROR,
				 "none of the -p processes gave an EventPipe "
				 "session (see above)");
		return -ESRCH;
	}
	if (e->cfg.observed || t->system_wide) {
		if (e->svc->procs->pid_subscribe(e->ctx, on_observed, e) == 0)
			e->subscribed = 1;
	}
	ret = pthread_create(&e->thread, NULL, reader_thread, e);
	if (ret != 0)
		return -ret;
	e->thread_started = 1;
	return 0;
}

/* One runtime's StopTracing between its sending and its answer. */
struct stopping {
	pid_t pid;
	uint64_t id;
	int current;   /* the runtime's session, not a rotated-out one */
	int kept;      /* the runtime's connection it went on first, or -1 */
	int fd;        /* awaiting the answer on it, or -1 */
	int ret;
	int64_t at_ms;
	struct tr_dnipc_status st;
};

/* The sessions to end: each runtime's current one, and a rotated-out one
 * whose StopTracing failed at the rotation.  Called locked. */
static size_t sessions_to_end(struct eventpipe *e, struct stopping *asked)
{
	size_t n = 0;

	for (size_t i = 0; i < e->n_rt; i++) {
		struct runtime *r = &e->rt[i];

		if (r->old.state == EP_STREAMING && r->stop_fd < 0)
			asked[n++] = (struct stopping){ .pid = r->pid, .id = r->old.session_id,
							.kept = -1, .fd = -1 };
		if (r->collecting && r->s.state == EP_STREAMING) {
			asked[n++] = (struct stopping){ .pid = r->pid, .id = r->s.session_id,
							.current = 1, .kept = r->idle_fd, .fd = -1 };
			r->idle_fd = -1;
		}
	}
	return n;
}

/* StopTracing sent to every runtime asked, then each one's answer awaited
 * until `until`.  Not locked: the reader copies the rundowns meanwhile. */
static void stop_tracing_all(struct eventpipe *e, struct stopping *asked, size_t n_asked,
			     int64_t until)
{
	for (size_t i = 0; i < n_asked; i++) {
		struct stopping *a = &asked[i];

		a->at_ms = now_ms(e);
		a->fd = ep_stop_tracing_send(a->pid, a->kept, a->id, (int)e->cfg.stop_ms, &a->st);
		a->ret = a->fd < 0 ? a->fd : 0;
	}
	for (size_t i = 0; i < n_asked; i++) {
		struct stopping *a = &asked[i];
		int64_t left = until - now_ms(e);

		if (a->fd >= 0)
			a->ret = ep_stop_tracing_answer(a->fd, left > 0 ? (int)left : 0, &a->st);
		/* A kept connection gone stale refuses the command or takes it
		 * and hangs up: the runtime's own socket then. */
		if (a->ret < 0 && a->kept >= 0 && a->ret != -ETIMEDOUT) {
			left = until - now_ms(e);
			a->ret = ep_stop_tracing(a->pid, -1, a->id, left > 0 ? (int)left : 0, &a->st);
		}
		if (a->ret == 0 && a->current)
			e->svc->run->log(e->ctx, TRACERIG_LOG_DEBUG,
					 "pid %d: the runtime answered "
					 "StopTracing after %lld ms (its rundown written)",
					 (int)a->pid, (long long)(now_ms(e) - a->at_ms));
	}
}

/* A StopTracing that failed for a session still streaming.  Under the
 * lock. */
static void say_stop_failures(struct eventpipe *e, const struct stopping *asked, size_t n_asked)
{
	for (size_t i = 0; i < n_asked; i++) {
		struct runtime *r = runtime_of(e, asked[i].pid, 0);
		char why[512];

		if (asked[i].ret < 0 && asked[i].current && r && r->s.state == EP_STREAMING)
			e->svc->run->log(
				e->ctx, TRACERIG_LOG_WARN, "pid %d: StopTracing: %s",
				(int)asked[i].pid,
				tr_dnipc_explain(&asked[i].st, asked[i].ret, why, sizeof(why)));
	}
}

/* Until no stream is left (the reader signals `changed` as each ends), or
 * `until`.  Under the lock. */
static void wait_streams_ended(struct eventpipe *e, int64_t until)
{
	struct timespec deadline;

	deadline.tv_sec = until / 1000;
	deadline.tv_nsec = (until % 1000) * 1000000;
	for (;;) {
		size_t streaming = 0;

		for (size_t i = 0; i < e->n_rt; i++)
			streaming += (e->rt[i].collecting && e->rt[i].s.state == EP_STREAMING) +
				     (e->rt[i].old.state == EP_STREAMING);
		if (!streaming || now_ms(e) >= until)
			break;
		pthread_cond_timedwait(&e->changed, &e->lock, &deadline);
	}
}

/* Once the reader is gone: r's sessions closed (or filed as segments),
 * what did not end in time said. */
/* The rest of a stream the runtime was asked to end: one more pump,
 * then a word when it still did not end. */
static void finish_stream(struct eventpipe *e, const struct runtime *r, struct ep_session *sess)
{
	ep_session_pump(sess);
	if (sess->state == EP_STREAMING)
		e->svc->run->log(
			e->ctx, TRACERIG_LOG_WARN,
			"pid %d: the runtime did not end its stream within stop_timeout (%lld "
			"ms): %s may lack the rundown that names methods",
			(int)r->pid, e->cfg.stop_ms, sess->entry);
}

static void close_sessions(struct eventpipe *e, struct runtime *r)
{
	if (r->old.state == EP_STREAMING)
		finish_stream(e, r, &r->old);
	if (r->old.state)
		old_ended(e, r);
	if (r->collecting && r->s.state == EP_STREAMING)
		finish_stream(e, r, &r->s);
	if (r->collecting && r->s.state == EP_BROKEN)
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "pid %d: %s failed (%s): %s keeps what came before", (int)r->pid,
				 r->s.failed, strerror(-r->s.err), r->s.entry);
	if (e->flight_ns) {
		/* Even one still streaming: what came is kept. */
		if (r->collecting && r->s.state == EP_STREAMING)
			r->s.state = EP_BROKEN;
		file_current(e, r);
	} else if (not_counted(e, &r->s), ep_session_close(&r->s) < 0) {
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "pid %d: closing %s failed: the file may be incomplete",
				 (int)r->pid, r->s.entry);
	}
	if (r->idle_fd >= 0)
		close(r->idle_fd);
	r->idle_fd = -1;
}

/* The launched command's port, closed at the stop: said when no runtime
 * ever connected to it. */
static void close_port(struct eventpipe *e)
{
	int connected = 0;

	for (size_t i = 0; i < e->n_rt; i++)
		connected += e->rt[i].via_port;
	if (!connected)
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "no .NET runtime of the launched command "
				 "connected to the diagnostic port: not a .NET program, or one "
				 "started with DOTNET_EnableDiagnostics=0 (no runtime events)");
	ep_port_close(&e->port);
	if (e->port_cleanup)
		e->svc->run->watchdog_cleanup(e->ctx, "port", NULL);
	e->port_cleanup = 0;
}

/* StopTracing to every runtime, then the rest of each stream (the
 * runtime's rundown, which names the methods) until it ends or
 * stop_timeout runs out.  The runtime answers StopTracing only once its
 * rundown is written and its streaming thread has noticed (100 ms and
 * more after the command): a recording does this on a thread of its own
 * from stop to flush, so that the other backends' flushes go on
 * meanwhile. */
static void end_sessions(struct eventpipe *e, int64_t until)
{
	struct stopping *asked;
	size_t n_asked = 0;

	pthread_mutex_lock(&e->lock);
	e->stopping = 1;
	/* StopTracing to every runtime first, then their answers: each
	 * answers only once its rundown is written (the reader copies it
	 * meanwhile), so runtimes asked one after the other would add up. */
	asked = calloc(2 * e->n_rt + 1, sizeof(*asked));
	if (asked)
		n_asked = sessions_to_end(e, asked);
	else
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "out of memory at the stop: the runtimes' "
				 "sessions end at stop_timeout, without their rundown");
	pthread_mutex_unlock(&e->lock);
	stop_tracing_all(e, asked, n_asked, until);
	pthread_mutex_lock(&e->lock);
	say_stop_failures(e, asked, n_asked);
	free(asked);
	wait_streams_ended(e, until);
	e->quit = 1;
	pthread_mutex_unlock(&e->lock);
	wake(e);
	if (e->thread_started)
		pthread_join(e->thread, NULL);
	e->thread_started = 0;
	/* What is still streaming, the reader copied to this moment. */
	for (size_t i = 0; i < e->n_rt; i++)
		close_sessions(e, &e->rt[i]);
	if (e->port.fd >= 0)
		close_port(e);
	counters(e);
	pthread_mutex_lock(&e->lock);
	e->stopped = 1;
	pthread_mutex_unlock(&e->lock);
}

static void *ending_thread(void *arg)
{
	struct eventpipe *e = arg;

	end_sessions(e, e->stop_until_ms);
	return NULL;
}

static int eventpipe_stop(void *state)
{
	struct eventpipe *e = state;
	int64_t until = now_ms(e) + e->cfg.stop_ms;

	if (e->subscribed) {
		e->svc->procs->pid_unsubscribe(e->ctx, on_observed, e);
		e->subscribed = 0;
	}
	/* A flight recorder's final snapshot, taken right after stop, needs
	 * the sessions ended. */
	if (!e->flight_ns) {
		e->stop_until_ms = until;
		if (pthread_create(&e->ending, NULL, ending_thread, e) == 0) {
			e->ending_started = 1;
			return 0;
		}
	}
	end_sessions(e, until);
	return 0;
}

static void join_ending(struct eventpipe *e)
{
	if (e->ending_started)
		pthread_join(e->ending, NULL);
	e->ending_started = 0;
}

static int eventpipe_flush(void *state, struct tracerig_archive *ar)
{
	struct eventpipe *e = state;
	uint64_t files = 0;

	(void)ar; /* the files are in the staging directory already */
	join_ending(e);
	for (size_t i = 0; i < e->n_rt; i++) {
		const struct runtime *r = &e->rt[i];

		if (!r->collecting)
			continue;
		files++;
		e->svc->run->log(e->ctx, TRACERIG_LOG_INFO, "pid %d: %s, %llu bytes%s", (int)r->pid,
				 r->s.entry, (unsigned long long)r->s.bytes,
				 r->s.state == EP_ENDED ? "" : " (cut short)");
	}
	if (!files)
		e->svc->run->log(e->ctx, TRACERIG_LOG_WARN,
				 "no .NET process gave runtime events (%llu "
				 "observed processes without a diagnostic socket)",
				 (unsigned long long)e->not_dotnet);
	e->svc->run->counter_set(e->ctx, "files", files);
	return 0;
}

static void eventpipe_fini(void *state)
{
	struct eventpipe *e = state;

	join_ending(e);
	if (e->thread_started) {
		pthread_mutex_lock(&e->lock);
		e->quit = 1;
		pthread_mutex_unlock(&e->lock);
		wake(e);
		pthread_join(e->thread, NULL);
	}
	eventpipe_free(e);
}

/* One key per paragraph, as the reference lists them. */
/* clang-format off */
static const struct tracerig_key eventpipe_keys[] = {
	{ .name = "providers", .type = TRACERIG_KEY_LIST, BIND(providers),
	  .description = "What to enable, in dotnet-trace's --providers syntax "
	  "(Name[:Keywords[:Level[:FilterData]]], keywords in hex) and/or preset names: gc, "
	  "gc-verbose, gc-collect, jit, loader, exceptions, contention, threading, cpu-sampling, "
	  "perfcollect, default.  Unset: default (what perfcollect enables)." },
	{ .name = "buffer_size", .type = TRACERIG_KEY_SIZE, .default_value = "256M",
	  .min = 1 << 20, .max = 4LL << 30, BIND(buffer_size),
	  .description = "The runtime's buffer for the session (dotnet-trace's --buffersize); events "
	  "that do not fit while tracerig reads are dropped by the runtime." },
	{ .name = "max_size", .type = TRACERIG_KEY_SIZE, .default_value = "2G", .min = 4096,
	  .max = 1LL << 40, BIND(max_size),
	  .description = "Largest .nettrace kept of one process: a process decides what it sends, "
	  "so past this its stream is no longer copied (logged); what came before is kept." },
	{ .name = "rundown", .type = TRACERIG_KEY_BOOL, .default_value = "yes", BIND(rundown),
	  .description = "Ask for the rundown at the stop: every loaded method and module named, "
	  "so that methods compiled before the session are known." },
	{ .name = "suspend", .type = TRACERIG_KEY_BOOL, .default_value = "yes", BIND(suspend),
	  .description = "Hold a launched command's runtimes before Main until their session runs, "
	  "so that startup events are in (as dotnet-trace does)." },
	{ .name = "observed", .type = TRACERIG_KEY_BOOL, .default_value = "yes", BIND(observed),
	  .description = "Also trace every .NET process the other backends observed (a process "
	  "started during a system-wide run, once perf_events samples it)." },
	{ .name = "sample_profiler", .type = TRACERIG_KEY_BOOL, .default_value = "no",
	  BIND(sample_profiler),
	  .description = "Keep Microsoft-DotNETCore-SampleProfiler when a preset (cpu-sampling) "
	  "names it: managed stacks of every thread every millisecond, from inside the process.  "
	  "perf_events samples all frames from outside at a lower cost." },
	{ .name = "connect_timeout", .type = TRACERIG_KEY_DURATION, .default_value = "3s",
	  .min = 10, .max = 600000, BIND(connect_ms),
	  .description = "How long a runtime has to answer a command before it is given up on "
	  "(named in the log and the manifest)." },
	{ .name = "stop_timeout", .type = TRACERIG_KEY_DURATION, .default_value = "30s",
	  .min = 10, .max = 3600000, BIND(stop_ms),
	  .description = "How long the runtimes have to write their rundown and end their streams "
	  "after StopTracing; a stream cut there keeps its events but may lack method names." },
	{ .name = NULL },
};
/* clang-format on */

TRACERIG_PLUGIN = {
	.abi_version = TRACERIG_ABI_VERSION,
	.name = "eventpipe",
	.version = PACKAGE_VERSION,
	.kind = TRACERIG_PLUGIN_SOURCE,
	.description =
		".NET runtime events over the diagnostics IPC (EventPipe), into .nettrace files",
	.package = "tracerig-eventpipe",
	.keys = eventpipe_keys,
	.caps = TRACERIG_CAP_FLIGHT,
	.internal_version = TRACERIG_INTERNAL_VERSION,
	.validate = eventpipe_validate,
	.check = eventpipe_check,
	.init = eventpipe_init,
	.start = eventpipe_start,
	.stop = eventpipe_stop,
	.flush = eventpipe_flush,
	.fini = eventpipe_fini,
	.snapshot = eventpipe_snapshot,
	.cleanup = cleanup_port,
};
