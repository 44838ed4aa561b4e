/* The .NET diagnostics IPC client: the one place tracerig talks to a
 * runtime's diagnostic server (perf maps on at run time for mapharvest, and
 * later EventPipe sessions).
 *
 * The protocol (dotnet/diagnostics documentation/design-docs/ipc-protocol.md,
 * dotnet/runtime src/native/eventpipe/ds-protocol.c, ds-types.h):
 * - a Unix socket $TMPDIR/dotnet-diagnostic-{pid}-{key}-socket, TMPDIR and
 *   pid as the runtime sees them (its mount and PID namespaces), key = its
 *   start time in clock ticks (field 22 of /proc/PID/stat);
 * - every message starts with a 20-byte header: the magic "DOTNET_IPC_V1\0"
 *   (14 bytes), uint16 total size (header included), uint8 command set,
 *   uint8 command id, uint16 reserved (0); all numbers little-endian;
 * - strings are uint32 length in UTF-16 code units, NUL included (0 for no
 *   string), then UTF-16LE;
 * - a reply has command set 0xFF: id 0x00 (OK) and a command's payload, or
 *   id 0xFF and an int32 HRESULT;
 * - one command per connection: the runtime closes it after the reply,
 *   except for commands (CollectTracing) whose reply starts a stream.
 *
 * What the traced process controls (its TMPDIR, the directory, the socket
 * file, every byte of a reply) is not trusted: the directory is resolved
 * inside the process's root without following a link (lib/untrusted.h),
 * the socket file must be a socket owned by the process's user or root,
 * every read and write has a deadline, and replies are parsed against their
 * declared size.
 *
 * Nothing here logs: functions return 0 (or an fd) or -errno, and fill a
 * struct that tr_dnipc_explain turns into the words of a log line.  The
 * encoders and decoders are pure functions over buffers. */
#ifndef TR_LIB_DOTNETIPC_H
#define TR_LIB_DOTNETIPC_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define TR_DNIPC_HEADER_SIZE 20
#define TR_DNIPC_MAX_MESSAGE 65535 /* the header's uint16 size */
#define TR_DNIPC_MAX_PAYLOAD (TR_DNIPC_MAX_MESSAGE - TR_DNIPC_HEADER_SIZE)

/* Command sets (ds-types.h DiagnosticsServerCommandSet). */
enum {
	TR_DNIPC_SET_DUMP = 0x01,
	TR_DNIPC_SET_EVENTPIPE = 0x02,
	TR_DNIPC_SET_PROFILER = 0x03,
	TR_DNIPC_SET_PROCESS = 0x04,
	TR_DNIPC_SET_SERVER = 0xFF, /* replies */
};

/* Commands of the Process set (ds-types.h DiagnosticsProcessCommandId). */
enum {
	TR_DNIPC_PROCESS_INFO = 0x00,
	TR_DNIPC_RESUME_RUNTIME = 0x01,
	TR_DNIPC_PROCESS_ENV = 0x02,
	TR_DNIPC_SET_ENV_VAR = 0x03,
	TR_DNIPC_PROCESS_INFO2 = 0x04,  /* .NET 6 */
	/* .NET 8.  The runtime does not check that its uint32 is there: sent
	 * without it, .NET 10.0.12 dies of SIGSEGV. */
	TR_DNIPC_ENABLE_PERFMAP = 0x05,
	TR_DNIPC_DISABLE_PERFMAP = 0x06,
	TR_DNIPC_APPLY_STARTUP_HOOK = 0x07,
	TR_DNIPC_PROCESS_INFO3 = 0x08,
};

/* Commands of the EventPipe set (ds-types.h EventPipeCommandId). */
enum {
	TR_DNIPC_STOP_TRACING = 0x01,
	TR_DNIPC_COLLECT_TRACING = 0x02,
	TR_DNIPC_COLLECT_TRACING2 = 0x03,
	TR_DNIPC_COLLECT_TRACING3 = 0x04,
};

/* Reply ids (command set 0xFF). */
enum {
	TR_DNIPC_REPLY_OK = 0x00,
	TR_DNIPC_REPLY_ERROR = 0xFF,
};

/* HRESULTs of error replies (ds-types.h), and the generic ones a runtime
 * hands through. */
#define TR_DS_IPC_E_BAD_ENCODING 0x80131384u
#define TR_DS_IPC_E_UNKNOWN_COMMAND 0x80131385u
#define TR_DS_IPC_E_UNKNOWN_MAGIC 0x80131386u
#define TR_DS_IPC_E_NOTSUPPORTED 0x80131515u
#define TR_DS_IPC_E_FAIL 0x80004005u
#define TR_DS_IPC_E_NOT_YET_AVAILABLE 0x8013135Bu
#define TR_DS_IPC_E_RUNTIME_UNINITIALIZED 0x80131371u
#define TR_DS_IPC_E_INVALIDARG 0x80070057u
#define TR_DS_IPC_E_INSUFFICIENT_BUFFER 0x8007007Au
#define TR_DS_IPC_E_ENVVAR_NOT_FOUND 0x800000CBu
#define TR_E_NOTIMPL 0x80004001u
#define TR_E_OUTOFMEMORY 0x8007000Eu

/* The payload of EnablePerfMap (the runtime's PerfMapType; what
 * DOTNET_PerfMapEnabled means). */
enum tr_dnipc_perfmap {
	TR_DNIPC_PERFMAP_ALL = 1,     /* /tmp/perf-PID.map and /tmp/jit-PID.dump */
	TR_DNIPC_PERFMAP_JITDUMP = 2, /* the jitdump only */
	TR_DNIPC_PERFMAP_MAP = 3,     /* the perf map only */
};

/* ---- pure encoders and decoders ---------------------------------------- */

struct tr_dnipc_header {
	uint16_t size; /* header and payload */
	uint8_t command_set, command_id;
	uint16_t reserved;
};

/* Writes the header of a message with `payload_len` bytes of payload into
 * out.  0, or -EMSGSIZE when the message would not fit the uint16 size. */
int tr_dnipc_header_encode(uint8_t out[TR_DNIPC_HEADER_SIZE], size_t payload_len,
			   uint8_t command_set, uint8_t command_id);

/* Reads a header: 0, or -EBADMSG when the magic is not DOTNET_IPC_V1 or
 * the size is below the header's own 20 bytes. */
int tr_dnipc_header_decode(const uint8_t in[TR_DNIPC_HEADER_SIZE], struct tr_dnipc_header *h);

/* A payload under construction (heap, grows to TR_DNIPC_MAX_PAYLOAD).  The
 * first failure sticks in `err` (-ENOMEM, -EMSGSIZE, -EILSEQ) and makes the
 * later appends do nothing, so a caller checks once, after the last. */
struct tr_dnipc_buf {
	uint8_t *data;
	size_t len, cap;
	int err;
};

void tr_dnipc_buf_init(struct tr_dnipc_buf *b);
void tr_dnipc_buf_free(struct tr_dnipc_buf *b);
void tr_dnipc_put_u8(struct tr_dnipc_buf *b, uint8_t v);
void tr_dnipc_put_u32(struct tr_dnipc_buf *b, uint32_t v);
void tr_dnipc_put_u64(struct tr_dnipc_buf *b, uint64_t v);
void tr_dnipc_put_bytes(struct tr_dnipc_buf *b, const void *p, size_t n);
/* A string from UTF-8 (NULL: the empty length-0 string).  Invalid UTF-8
 * (overlong forms, surrogates, past U+10FFFF) sets -EILSEQ. */
void tr_dnipc_put_string(struct tr_dnipc_buf *b, const char *utf8);

/* Reading a payload: `off` advances over what was read.  Each returns 0 or
 * -EBADMSG when the payload ends first (off is then left as it was). */
struct tr_dnipc_cursor {
	const uint8_t *p;
	size_t len, off;
};

int tr_dnipc_get_u32(struct tr_dnipc_cursor *c, uint32_t *v);
int tr_dnipc_get_u64(struct tr_dnipc_cursor *c, uint64_t *v);
int tr_dnipc_get_bytes(struct tr_dnipc_cursor *c, void *out, size_t n);
/* A string as UTF-8 in a new buffer (*out, free() it; "" for a length-0
 * string).  The declared length must fit in what is left and the last unit
 * must be the NUL; the text ends at the first NUL.  Unpaired surrogates
 * become U+FFFD, so the result is always valid UTF-8; control characters
 * are kept (sanitize before printing, lib/sanitize.h).  Its size is bounded
 * by the message: 3 bytes per unit at most.  0, -EBADMSG or -ENOMEM. */
int tr_dnipc_get_string(struct tr_dnipc_cursor *c, char **out);

/* One reply. */
struct tr_dnipc_reply {
	struct tr_dnipc_header h;
	uint32_t hresult;        /* error replies */
	const uint8_t *payload;  /* OK replies: what follows the header */
	size_t payload_len;
	const char *why;         /* what made it malformed (-EBADMSG) */
	uint8_t *msg;            /* what tr_dnipc_recv_reply read; NULL otherwise */
};

/* Parses a whole reply message of len bytes.  0 for an OK reply (payload
 * and payload_len point into msg), -EREMOTEIO for an error reply (hresult),
 * -EBADMSG when it is malformed (why): bad magic, a declared size that is
 * not len, a command set other than 0xFF, an unknown reply id, an error
 * reply shorter than its HRESULT. */
int tr_dnipc_reply_parse(const uint8_t *msg, size_t len, struct tr_dnipc_reply *r);
/* Frees what tr_dnipc_recv_reply allocated (harmless on a parsed reply). */
void tr_dnipc_reply_free(struct tr_dnipc_reply *r);

/* Words for an HRESULT: "DS_IPC_E_UNKNOWN_COMMAND (0x80131385: the runtime
 * does not know the command)", or "HRESULT 0x8000ABCD" for one we do not
 * know.  Writes into buf and returns it. */
const char *tr_dnipc_hresult_str(uint32_t hresult, char *buf, size_t len);
/* The bare name ("DS_IPC_E_UNKNOWN_COMMAND"), or NULL. */
const char *tr_dnipc_hresult_name(uint32_t hresult);

/* What ProcessInfo (version 1) or ProcessInfo2 (version 2) answered. */
struct tr_dnipc_process_info {
	int version;           /* 1 or 2: which command answered */
	uint64_t pid;          /* as the runtime sees it (its PID namespace) */
	uint8_t cookie[16];    /* the runtime instance's GUID */
	char *command_line, *os, *arch;
	char *entrypoint;      /* managed entry point assembly (2 only, else NULL) */
	char *clr_version;     /* "10.0.12" (2 only, else NULL) */
};

/* Decodes a ProcessInfo/ProcessInfo2 payload.  Bytes after the known
 * fields (a later version's) are ignored.  0, -EBADMSG or -ENOMEM; free
 * with tr_dnipc_process_info_free (also after a failure). */
int tr_dnipc_process_info_decode(const uint8_t *payload, size_t len, int version,
				 struct tr_dnipc_process_info *pi);
void tr_dnipc_process_info_free(struct tr_dnipc_process_info *pi);

/* From a NUL-separated environment block (/proc/PID/environ): the first
 * TMPDIR's value, or "/tmp" when it is absent or empty, into out (len
 * bytes).  0, -ENAMETOOLONG, or -EINVAL when it is not an absolute path
 * (the runtime would have resolved it against a working directory we do
 * not reproduce). */
int tr_dnipc_environ_tmpdir(const char *env, size_t env_len, char *out, size_t len);

/* 1 and the key when `name` is dotnet-diagnostic-{nspid}-{key}-socket for
 * this nspid, else 0. */
int tr_dnipc_socket_name_key(const char *name, pid_t nspid, unsigned long long *key);

/* ---- I/O ---------------------------------------------------------------- */

enum tr_dnipc_refusal {
	TR_DNIPC_REFUSED_NONE = 0,
	TR_DNIPC_REFUSED_SYMLINK,      /* the socket file is a symbolic link */
	TR_DNIPC_REFUSED_NOT_SOCKET,   /* a regular file, a FIFO, ... */
	TR_DNIPC_REFUSED_OWNER,        /* owned by neither the process's user nor root */
	TR_DNIPC_REFUSED_LINK_ON_PATH, /* a directory of TMPDIR is a link */
	TR_DNIPC_REFUSED_ESCAPES,      /* TMPDIR leaves the process's root */
	TR_DNIPC_REFUSED_NO_OPENAT2,   /* the kernel lacks openat2 */
};

/* What one call did, for its caller's log line (tr_dnipc_explain). */
struct tr_dnipc_status {
	pid_t pid;                     /* host PID asked for */
	pid_t nspid;                   /* the same in its own namespace */
	uid_t uid;                     /* its effective user */
	unsigned long long key;        /* its start time, the socket's key */
	char tmpdir[PATH_MAX];         /* its TMPDIR, inside its root */
	char name[64];                 /* the socket's file name, once found */
	int exact;                     /* 1: the key matched; 0: newest of its PID */
	enum tr_dnipc_refusal refusal; /* set with -EPERM */
	struct stat st;                /* the socket file's, once found */
	const char *command;           /* the command being sent ("EnablePerfMap") */
	const char *step;              /* for other errors: what failed */
	uint32_t hresult;              /* -EREMOTEIO: the runtime's error */
	int timeout_ms;                /* -ETIMEDOUT: the deadline that passed */
};

/* Finds the diagnostic socket of host process `pid` (also in another mount
 * and PID namespace) and opens the socket file itself O_PATH: the exact
 * name for its namespace PID and start time, else the newest
 * dotnet-diagnostic-{nspid}-*-socket there (Microsoft's client does the
 * same; a time namespace shifts the start time the runtime saw).
 * Returns the O_PATH fd, or
 *   -ESRCH   no such process,
 *   -ENOENT  no diagnostic socket (not .NET, DOTNET_EnableDiagnostics=0,
 *            TMPDIR not absolute, or on FUSE or a network file system,
 *            which is not looked into: st->step says),
 *   -EPERM   refused (st->refusal),
 *   -ENOSYS  openat2 unavailable,
 *   other    -errno of st->step. */
int tr_dnipc_locate(pid_t pid, struct tr_dnipc_status *st);

/* Locates and connects, within timeout_ms.  Returns a connected stream
 * socket (O_NONBLOCK | O_CLOEXEC; close it), or what tr_dnipc_locate
 * returns, -ECONNREFUSED (a socket file nobody listens on: a runtime that
 * is gone), -ETIMEDOUT (its backlog stayed full). */
int tr_dnipc_connect(pid_t pid, int timeout_ms, struct tr_dnipc_status *st);

/* Sends one message on a connected socket within timeout_ms.  0, -ETIMEDOUT,
 * -EMSGSIZE, -EPIPE (the runtime closed it), -errno. */
int tr_dnipc_send(int fd, uint8_t command_set, uint8_t command_id, const void *payload,
		  size_t len, int timeout_ms);

/* Reads exactly n bytes within timeout_ms (what a runtime sends unasked:
 * its advertise on a diagnostic port).  0, -EBADMSG when it closed first,
 * -ETIMEDOUT, -errno. */
int tr_dnipc_recv_exact(int fd, void *buf, size_t n, int timeout_ms);

/* Reads one reply within timeout_ms: exactly the bytes its header declares,
 * nothing after (a stream that follows stays in the socket).  Returns like
 * tr_dnipc_reply_parse, or -ETIMEDOUT, -ECONNRESET (closed before a byte of
 * it), -EBADMSG (closed in the middle: why), -errno.  Free r with
 * tr_dnipc_reply_free whatever it returned. */
int tr_dnipc_recv_reply(int fd, int timeout_ms, struct tr_dnipc_reply *r);

/* Both, with one deadline: the generic "send a command, get its reply".
 * payload may be NULL for none.  A runtime that hangs up before replying
 * gives -ECONNRESET, whether our write or our read noticed it first. */
int tr_dnipc_command(int fd, uint8_t command_set, uint8_t command_id,
		     const struct tr_dnipc_buf *payload, int timeout_ms, struct tr_dnipc_reply *r);

/* ---- Process commands on a process, each within timeout_ms in all --------
 * Each returns 0, what tr_dnipc_connect returns, -EREMOTEIO (the runtime's
 * error reply: st->hresult), -EBADMSG (st->step says what was malformed),
 * -ETIMEDOUT, -ECONNRESET. */

/* ProcessInfo2, or ProcessInfo when the runtime does not know it (.NET 5
 * and before).  Free pi with tr_dnipc_process_info_free (also on failure). */
int tr_dnipc_process_info(pid_t pid, int timeout_ms, struct tr_dnipc_process_info *pi,
			  struct tr_dnipc_status *st);

/* EnablePerfMap (.NET 8 and later): the runtime opens its perf map and/or
 * jitdump and, before it answers, writes what it already compiled (JIT code
 * to both; ReadyToRun code to the jitdump only), then what it compiles.
 * After DisablePerfMap, enabling again truncates the perf map and writes it
 * all anew.  .NET 10 before dotnet/runtime#133048 (10.0.12 included) may end
 * its jitdump early, its last record cut, unless DOTNET_PerfMapStubGranularity
 * is 2 or 4 (#120419). */
int tr_dnipc_enable_perfmap(pid_t pid, enum tr_dnipc_perfmap type, int timeout_ms,
			    struct tr_dnipc_status *st);

/* DisablePerfMap: the runtime closes both files. */
int tr_dnipc_disable_perfmap(pid_t pid, int timeout_ms, struct tr_dnipc_status *st);

/* Words for a log line about the result `ret` of a call above: "no
 * diagnostic socket dotnet-diagnostic-4242-*-socket in /tmp (not a .NET
 * process, or one started with DOTNET_EnableDiagnostics=0)", "/tmp/dotnet-
 * diagnostic-...-socket is a symbolic link (links are not followed inside a
 * process's root)", "the runtime answered EnablePerfMap with
 * DS_IPC_E_UNKNOWN_COMMAND (...)", "no answer within 2000 ms".  Writes into
 * buf and returns it. */
const char *tr_dnipc_explain(const struct tr_dnipc_status *st, int ret, char *buf, size_t len);

#endif
