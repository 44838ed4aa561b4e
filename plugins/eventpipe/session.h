/* One EventPipe session with one runtime: CollectTracing on a diagnostics
 * connection, the stream that follows copied as it comes into a .nettrace
 * file (the bytes dotnet-trace writes: the runtime's NetTrace stream, as
 * it is), StopTracing on a second connection, the stream read to its end
 * (the rundown that names methods comes last).
 *
 * The protocol is dotnet/diagnostics documentation/design-docs/
 * ipc-protocol.md; the runtime's side dotnet/runtime src/native/eventpipe/
 * ds-eventpipe-protocol.c.  Messages go through lib/dotnetipc. */
#ifndef TR_EVENTPIPE_SESSION_H
#define TR_EVENTPIPE_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "counts.h"
#include "lib/dotnetipc.h"
#include "providers.h"

/* The NetTrace format (EventPipeSerializationFormat 1): what TraceEvent's
 * EventPipeEventSource and dotnet-trace read; 0 is the older NetPerf. */
#define EP_FORMAT_NETTRACE 1

struct ep_request {
	const struct ep_providers *providers;
	uint32_t buffer_mb; /* the runtime's session buffer */
	int rundown;        /* method and module names at the stop */
};

/* The payload of CollectTracing (version 1: .NET Core 3) or CollectTracing2
 * (version 2: .NET 5, adds the rundown switch).  0, or the buffer's error. */
int ep_collect_payload(struct tr_dnipc_buf *b, int version, const struct ep_request *req);

/* Sends CollectTracing (version 1 or 2) on a connection and reads the
 * reply: 0 and *session_id, after which the connection carries the
 * stream.  -EREMOTEIO (*hresult: the runtime refused; it closed the
 * connection), -EBADMSG, -ETIMEDOUT, -ECONNRESET, -errno. */
int ep_collect(int fd, int version, const struct ep_request *req, int timeout_ms,
	       uint64_t *session_id, uint32_t *hresult);

/* StopTracing of session_id on a connection of its own (fd >= 0: one the
 * runtime opened to our diagnostic port; else connected to pid's
 * diagnostic socket).  The runtime answers once it wrote the rundown into
 * the stream, so the stream must be read meanwhile.  0, or as
 * tr_dnipc_command and tr_dnipc_connect return (st says). */
int ep_stop_tracing(pid_t pid, int fd, uint64_t session_id, int timeout_ms,
		    struct tr_dnipc_status *st);

/* Its two halves, so that every runtime is asked before any answer is
 * waited for: the connection the command went on (closed on failure), or
 * -errno; then 0 or -errno once the answer came (fd closed). */
int ep_stop_tracing_send(pid_t pid, int fd, uint64_t session_id, int timeout_ms,
			 struct tr_dnipc_status *st);
int ep_stop_tracing_answer(int fd, int timeout_ms, struct tr_dnipc_status *st);

/* ResumeRuntime on a connection: a runtime started with a suspending
 * diagnostic port waits for it before it runs Main. */
int ep_resume_runtime(int fd, int timeout_ms, uint32_t *hresult);

enum ep_session_state {
	EP_STREAMING = 1, /* the stream is read as it comes */
	EP_ENDED,         /* the runtime closed it: all is in the file */
	EP_BROKEN,        /* reading or writing failed: what came is kept */
};

struct ep_session {
	pid_t pid;               /* host PID */
	char comm[64];           /* the process's name, for the file name */
	int version;             /* the CollectTracing the runtime took */
	uint64_t session_id;
	int fd;                  /* the stream; -1 once ended */
	int out;                 /* the .nettrace file; -1 once closed */
	char entry[128];         /* its archive entry: COMM.PID.nettrace */
	uint64_t bytes;
	uint64_t max_bytes;      /* the file's cap: a process controls what it sends */
	enum ep_session_state state;
	int err;                 /* EP_BROKEN: -errno of what failed */
	const char *failed;      /* EP_BROKEN: "reading the stream", "writing ..." */
	/* The stream read as it is copied, for the manifest's counts;
	 * counter.counting 0 once it could not be read (counter.nt.why). */
	struct ep_counter counter;
	struct ep_counts counts; /* so far; kept by ep_session_close */
};

/* Opens DIR/ENTRY for the stream that fd carries (entry COMM.PID.nettrace).
 * 0 or -errno; the session owns fd from then on. */
int ep_session_open(struct ep_session *s, const char *dir, pid_t pid, const char *comm, int fd,
		    int version, uint64_t session_id);

/* The same with entry COMM.PID.SEQ.nettrace (SEQ > 0): flight mode's
 * consecutive sessions of one process. */
int ep_session_open_seq(struct ep_session *s, const char *dir, pid_t pid, const char *comm,
			unsigned seq, int fd, int version, uint64_t session_id);

/* Copies what the stream has now into the file, without blocking, up to
 * s->max_bytes (0: no cap); past it the session is EP_BROKEN with -EFBIG.
 * Returns the bytes copied (0: nothing yet), or -1 once the session left
 * EP_STREAMING (ended or broken: s->state says). */
long ep_session_pump(struct ep_session *s);

/* Closes the stream and the file (idempotent).  0, or the -errno of
 * closing the file (a full disk seen only then). */
int ep_session_close(struct ep_session *s);

#endif
