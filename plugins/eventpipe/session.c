/* One EventPipe session: see session.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "session.h"

/* What one pump moves at most, so that one busy runtime does not keep the
 * reader from the others. */
#define PUMP_CHUNK (256 * 1024)

int ep_collect_payload(struct tr_dnipc_buf *b, int version, const struct ep_request *req)
{
	tr_dnipc_put_u32(b, req->buffer_mb);
	tr_dnipc_put_u32(b, EP_FORMAT_NETTRACE);
	if (version >= 2)
		tr_dnipc_put_u8(b, req->rundown ? 1 : 0);
	tr_dnipc_put_u32(b, (uint32_t)req->providers->n);
	for (size_t i = 0; i < req->providers->n; i++) {
		const struct ep_provider *p = &req->providers->v[i];

		tr_dnipc_put_u64(b, p->keywords);
		tr_dnipc_put_u32(b, p->level);
		tr_dnipc_put_string(b, p->name);
		tr_dnipc_put_string(b, p->filter);
	}
	return b->err;
}

int ep_collect(int fd, int version, const struct ep_request *req, int timeout_ms,
	       uint64_t *session_id, uint32_t *hresult)
{
	struct tr_dnipc_buf b;
	struct tr_dnipc_reply r;
	struct tr_dnipc_cursor c;
	int ret;

	*hresult = 0;
	tr_dnipc_buf_init(&b);
	ret = ep_collect_payload(&b, version, req);
	if (ret < 0) {
		tr_dnipc_buf_free(&b);
		return ret;
	}
	ret = tr_dnipc_command(fd, TR_DNIPC_SET_EVENTPIPE,
			       version >= 2 ? TR_DNIPC_COLLECT_TRACING2 : TR_DNIPC_COLLECT_TRACING,
			       &b, timeout_ms, &r);
	tr_dnipc_buf_free(&b);
	if (ret == -EREMOTEIO)
		*hresult = r.hresult;
	if (ret == 0) {
		c = (struct tr_dnipc_cursor){ .p = r.payload, .len = r.payload_len };
		if (tr_dnipc_get_u64(&c, session_id) < 0 || *session_id == 0)
			ret = -EBADMSG;
	}
	tr_dnipc_reply_free(&r);
	return ret;
}

int ep_stop_tracing_send(pid_t pid, int fd, uint64_t session_id, int timeout_ms,
			 struct tr_dnipc_status *st)
{
	struct tr_dnipc_buf b;
	int ret;

	if (fd < 0) {
		fd = tr_dnipc_connect(pid, timeout_ms, st);
		if (fd < 0)
			return fd;
	} else {
		memset(st, 0, sizeof(*st));
		st->pid = pid;
		st->timeout_ms = timeout_ms;
	}
	st->command = "StopTracing";
	tr_dnipc_buf_init(&b);
	tr_dnipc_put_u64(&b, session_id);
	ret = b.err ? b.err : tr_dnipc_send(fd, TR_DNIPC_SET_EVENTPIPE, TR_DNIPC_STOP_TRACING,
					    b.data, b.len, timeout_ms);
	tr_dnipc_buf_free(&b);
	if (ret < 0) {
		close(fd);
		/* Hung up at once: "closed before a byte of its reply", as
		 * tr_dnipc_command says it. */
		return ret == -EPIPE ? -ECONNRESET : ret;
	}
	return fd;
}

int ep_stop_tracing_answer(int fd, int timeout_ms, struct tr_dnipc_status *st)
{
	struct tr_dnipc_reply r = { 0 };
	int ret = tr_dnipc_recv_reply(fd, timeout_ms, &r);

	if (ret == -EREMOTEIO)
		st->hresult = r.hresult;
	else if (ret == -EBADMSG)
		st->step = r.why;
	tr_dnipc_reply_free(&r);
	close(fd);
	return ret;
}

int ep_stop_tracing(pid_t pid, int fd, uint64_t session_id, int timeout_ms,
		    struct tr_dnipc_status *st)
{
	fd = ep_stop_tracing_send(pid, fd, session_id, timeout_ms, st);
	return fd < 0 ? fd : ep_stop_tracing_answer(fd, timeout_ms, st);
}

int ep_resume_runtime(int fd, int timeout_ms, uint32_t *hresult)
{
	struct tr_dnipc_reply r;
	int ret;

	*hresult = 0;
	ret = tr_dnipc_command(fd, TR_DNIPC_SET_PROCESS, TR_DNIPC_RESUME_RUNTIME, NULL, timeout_ms,
			       &r);
	if (ret == -EREMOTEIO)
		*hresult = r.hresult;
	tr_dnipc_reply_free(&r);
	return ret;
}

/* A process name as a file name: what is not [A-Za-z0-9._-] becomes '_'. */
static void file_safe(char *out, size_t len, const char *comm)
{
	size_t i = 0;

	for (; comm && comm[i] && i + 1 < len; i++) {
		char c = comm[i];

		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
				 c == '.' || c == '_' || c == '-'
			 ? c : '_';
	}
	if (i == 0 && len > 8) {
		strcpy(out, "process");
		return;
	}
	out[i] = '\0';
}

int ep_session_open(struct ep_session *s, const char *dir, pid_t pid, const char *comm, int fd,
		    int version, uint64_t session_id)
{
	return ep_session_open_seq(s, dir, pid, comm, 0, fd, version, session_id);
}

int ep_session_open_seq(struct ep_session *s, const char *dir, pid_t pid, const char *comm,
			unsigned seq, int fd, int version, uint64_t session_id)
{
	char path[4096];
	int n;

	memset(s, 0, sizeof(*s));
	ep_counter_init(&s->counter);
	s->pid = pid;
	s->fd = fd;
	s->out = -1;
	s->version = version;
	s->session_id = session_id;
	s->state = EP_STREAMING;
	file_safe(s->comm, sizeof(s->comm), comm);
	if (seq)
		snprintf(s->entry, sizeof(s->entry), "%s.%d.%u.nettrace", s->comm, (int)pid, seq);
	else
		snprintf(s->entry, sizeof(s->entry), "%s.%d.nettrace", s->comm, (int)pid);
	n = snprintf(path, sizeof(path), "%s/%s", dir, s->entry);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	s->out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	return s->out < 0 ? -errno : 0;
}

static void broken(struct ep_session *s, int err, const char *what)
{
	s->state = EP_BROKEN;
	s->err = err;
	s->failed = what;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

long ep_session_pump(struct ep_session *s)
{
	static __thread char buf[64 * 1024];
	long moved = 0;

	if (s->state != EP_STREAMING)
		return -1;
	while (moved < PUMP_CHUNK) {
		size_t want = sizeof(buf);
		ssize_t r;
		int ret;

		if (s->max_bytes) {
			if (s->bytes >= s->max_bytes) {
				broken(s, -EFBIG, "the file reached max_size");
				return moved ? moved : -1;
			}
			if (s->max_bytes - s->bytes < want)
				want = (size_t)(s->max_bytes - s->bytes);
		}
		r = recv(s->fd, buf, want, MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return moved;
		if (r < 0) {
			/* A runtime killed mid-session resets the connection:
			 * what it sent before is the trace. */
			if (errno == ECONNRESET)
				break;
			broken(s, -errno, "reading the stream");
			return moved ? moved : -1;
		}
		if (r == 0)
			break;
		ret = tr_write_all(s->out, buf, (size_t)r);
		if (ret < 0) {
			broken(s, ret, "writing the .nettrace file");
			return moved ? moved : -1;
		}
		ep_counter_feed(&s->counter, buf, (size_t)r);
		ep_counter_get(&s->counter, &s->counts);
		s->bytes += (uint64_t)r;
		moved += r;
	}
	if (moved >= PUMP_CHUNK)
		return moved;
	s->state = EP_ENDED;
	close(s->fd);
	s->fd = -1;
	return moved ? moved : -1;
}

int ep_session_close(struct ep_session *s)
{
	int ret = 0;

	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (s->out >= 0 && close(s->out) < 0)
		ret = -errno;
	s->out = -1;
	/* s->counts stays: what the stream held. */
	ep_counter_free(&s->counter);
	return ret;
}
