/* The .NET diagnostics IPC client (see dotnetipc.h for the protocol). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "dotnetipc.h"
#include "procpid.h"
#include "sanitize.h"
#include "untrusted.h"
#include "vec.h"

static const uint8_t magic[14] = "DOTNET_IPC_V1"; /* and its NUL */

/* ---- little-endian fields ----------------------------------------------- */

static void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- header -------------------------------------------------------------- */

int tr_dnipc_header_encode(uint8_t out[TR_DNIPC_HEADER_SIZE], size_t payload_len,
			   uint8_t command_set, uint8_t command_id)
{
	if (payload_len > TR_DNIPC_MAX_PAYLOAD)
		return -EMSGSIZE;
	memcpy(out, magic, sizeof(magic));
	le16(out + 14, (uint16_t)(TR_DNIPC_HEADER_SIZE + payload_len));
	out[16] = command_set;
	out[17] = command_id;
	le16(out + 18, 0);
	return 0;
}

int tr_dnipc_header_decode(const uint8_t in[TR_DNIPC_HEADER_SIZE], struct tr_dnipc_header *h)
{
	if (memcmp(in, magic, sizeof(magic)) != 0)
		return -EBADMSG;
	h->size = get_le16(in + 14);
	h->command_set = in[16];
	h->command_id = in[17];
	h->reserved = get_le16(in + 18);
	return h->size < TR_DNIPC_HEADER_SIZE ? -EBADMSG : 0;
}

/* ---- building a payload ------------------------------------------------- */

void tr_dnipc_buf_init(struct tr_dnipc_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void tr_dnipc_buf_free(struct tr_dnipc_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* Room for n more bytes, or the sticky error. */
static uint8_t *buf_room(struct tr_dnipc_buf *b, size_t n)
{
	uint8_t *grown;

	if (b->err)
		return NULL;
	if (n > TR_DNIPC_MAX_PAYLOAD - b->len) {
		b->err = -EMSGSIZE;
		return NULL;
	}
	if (b->len + n > b->cap) {
		grown = tr_vec_grow_max(b->data, &b->cap, b->len + n, 1, 256, TR_DNIPC_MAX_PAYLOAD);
		if (!grown) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->data = grown;
	}
	b->len += n;
	return b->data + b->len - n;
}

void tr_dnipc_put_u8(struct tr_dnipc_buf *b, uint8_t v)
{
	uint8_t *p = buf_room(b, 1);

	if (p)
		*p = v;
}

void tr_dnipc_put_u32(struct tr_dnipc_buf *b, uint32_t v)
{
	uint8_t *p = buf_room(b, 4);

	for (int i = 0; p && i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void tr_dnipc_put_u64(struct tr_dnipc_buf *b, uint64_t v)
{
	uint8_t *p = buf_room(b, 8);

	for (int i = 0; p && i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void tr_dnipc_put_bytes(struct tr_dnipc_buf *b, const void *src, size_t n)
{
	uint8_t *p = buf_room(b, n);

	if (p && n)
		memcpy(p, src, n);
}

/* The code point at *s, advancing over it: 0 at the end, -EILSEQ for what
 * is not well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF). */
static int utf8_next(const unsigned char **s, uint32_t *cp)
{
	const unsigned char *p = *s;
	uint32_t c = p[0], min;
	int n;

	if (c < 0x80) {
		n = 0, min = 0;
	} else if ((c & 0xE0) == 0xC0) {
		n = 1, min = 0x80, c &= 0x1F;
	} else if ((c & 0xF0) == 0xE0) {
		n = 2, min = 0x800, c &= 0x0F;
	} else if ((c & 0xF8) == 0xF0) {
		n = 3, min = 0x10000, c &= 0x07;
	} else {
		return -EILSEQ;
	}
	for (int i = 1; i <= n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return -EILSEQ; /* the NUL that ends the string included */
		c = c << 6 | (p[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return -EILSEQ;
	*cp = c;
	*s = p + n + 1;
	return 0;
}

void tr_dnipc_put_string(struct tr_dnipc_buf *b, const char *utf8)
{
	const unsigned char *s;
	uint32_t cp, units = 0;
	uint8_t *p;

	if (b->err)
		return;
	if (!utf8) {
		tr_dnipc_put_u32(b, 0);
		return;
	}
	/* Counted first: the length comes before the text. */
	for (s = (const unsigned char *)utf8; *s;) {
		if (utf8_next(&s, &cp) < 0) {
			b->err = -EILSEQ;
			return;
		}
		units += cp >= 0x10000 ? 2 : 1;
		if (units > TR_DNIPC_MAX_PAYLOAD / 2) {
			b->err = -EMSGSIZE;
			return;
		}
	}
	tr_dnipc_put_u32(b, units + 1);
	p = buf_room(b, (size_t)(units + 1) * 2);
	if (!p)
		return;
	for (s = (const unsigned char *)utf8; *s;) {
		if (utf8_next(&s, &cp) < 0)
			break; /* validated above */
		if (cp >= 0x10000) {
			cp -= 0x10000;
			le16(p, (uint16_t)(0xD800 | cp >> 10));
			le16(p + 2, (uint16_t)(0xDC00 | (cp & 0x3FF)));
			p += 4;
		} else {
			le16(p, (uint16_t)cp);
			p += 2;
		}
	}
	le16(p, 0);
}

/* ---- reading a payload -------------------------------------------------- */

int tr_dnipc_get_bytes(struct tr_dnipc_cursor *c, void *out, size_t n)
{
	if (c->off > c->len || n > c->len - c->off)
		return -EBADMSG;
	if (n)
		memcpy(out, c->p + c->off, n);
	c->off += n;
	return 0;
}

int tr_dnipc_get_u32(struct tr_dnipc_cursor *c, uint32_t *v)
{
	uint8_t b[4];
	int ret = tr_dnipc_get_bytes(c, b, sizeof(b));

	if (ret == 0)
		*v = get_le32(b);
	return ret;
}

int tr_dnipc_get_u64(struct tr_dnipc_cursor *c, uint64_t *v)
{
	uint8_t b[8];
	int ret = tr_dnipc_get_bytes(c, b, sizeof(b));

	if (ret == 0)
		*v = (uint64_t)get_le32(b) | (uint64_t)get_le32(b + 4) << 32;
	return ret;
}

static char *put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xC0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xE0 | cp >> 12);
		*o++ = (char)(0x80 | (cp >> 6 & 0x3F));
		*o++ = (char)(0x80 | (cp & 0x3F));
	} else {
		*o++ = (char)(0xF0 | cp >> 18);
		*o++ = (char)(0x80 | (cp >> 12 & 0x3F));
		*o++ = (char)(0x80 | (cp >> 6 & 0x3F));
		*o++ = (char)(0x80 | (cp & 0x3F));
	}
	return o;
}

int tr_dnipc_get_string(struct tr_dnipc_cursor *c, char **out)
{
	size_t start = c->off, left;
	const uint8_t *u;
	uint32_t n;
	char *s, *o;

	*out = NULL;
	if (tr_dnipc_get_u32(c, &n) < 0)
		return -EBADMSG;
	left = c->len - c->off;
	/* Checked before anything is allocated: a hostile length costs nothing. */
	if (n > left / 2 || (n && get_le16(c->p + c->off + 2 * ((size_t)n - 1)) != 0)) {
		c->off = start;
		return -EBADMSG;
	}
	u = c->p + c->off;
	/* A unit gives at most 3 bytes (a surrogate pair, 2 units, gives 4). */
	s = malloc(3 * (size_t)n + 1);
	if (!s) {
		c->off = start;
		return -ENOMEM;
	}
	o = s;
	for (size_t i = 0; i < n; i++) {
		uint32_t cp = get_le16(u + 2 * i);

		if (cp == 0)
			break;
		if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < n) {
			uint32_t lo = get_le16(u + 2 * (i + 1));

			if (lo >= 0xDC00 && lo <= 0xDFFF) {
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				i++;
			}
		}
		if (cp >= 0xD800 && cp <= 0xDFFF)
			cp = 0xFFFD; /* unpaired: no UTF-8 for it */
		o = put_utf8(o, cp);
	}
	*o = '\0';
	c->off += 2 * (size_t)n;
	*out = s;
	return 0;
}

/* ---- replies ------------------------------------------------------------- */

int tr_dnipc_reply_parse(const uint8_t *msg, size_t len, struct tr_dnipc_reply *r)
{
	memset(r, 0, sizeof(*r));
	if (len < TR_DNIPC_HEADER_SIZE) {
		r->why = "shorter than a header";
		return -EBADMSG;
	}
	if (memcmp(msg, magic, sizeof(magic)) != 0) {
		r->why = "not a DOTNET_IPC_V1 message (bad magic)";
		return -EBADMSG;
	}
	if (tr_dnipc_header_decode(msg, &r->h) < 0) {
		r->why = "its header declares a size below the header's own 20 bytes";
		return -EBADMSG;
	}
	if (r->h.size != len) {
		r->why = "its header declares another size than the message has";
		return -EBADMSG;
	}
	if (r->h.command_set != TR_DNIPC_SET_SERVER) {
		r->why = "not a reply (command set other than 0xFF)";
		return -EBADMSG;
	}
	r->payload = msg + TR_DNIPC_HEADER_SIZE;
	r->payload_len = len - TR_DNIPC_HEADER_SIZE;
	switch (r->h.command_id) {
	case TR_DNIPC_REPLY_OK:
		return 0;
	case TR_DNIPC_REPLY_ERROR:
		if (r->payload_len < 4) {
			r->why = "an error reply without its HRESULT";
			return -EBADMSG;
		}
		r->hresult = get_le32(r->payload);
		return -EREMOTEIO;
	default:
		r->why = "an unknown reply id";
		return -EBADMSG;
	}
}

void tr_dnipc_reply_free(struct tr_dnipc_reply *r)
{
	free(r->msg);
	memset(r, 0, sizeof(*r));
}

static const struct {
	uint32_t hresult;
	const char *name, *words;
} hresults[] = {
	{ TR_DS_IPC_E_BAD_ENCODING, "DS_IPC_E_BAD_ENCODING", "the runtime could not parse the request" },
	{ TR_DS_IPC_E_UNKNOWN_COMMAND, "DS_IPC_E_UNKNOWN_COMMAND",
	  "the runtime does not know the command (an older runtime)" },
	{ TR_DS_IPC_E_UNKNOWN_MAGIC, "DS_IPC_E_UNKNOWN_MAGIC", "the runtime does not speak this protocol version" },
	{ TR_DS_IPC_E_NOTSUPPORTED, "DS_IPC_E_NOTSUPPORTED", "not supported by this runtime" },
	{ TR_DS_IPC_E_FAIL, "DS_IPC_E_FAIL", "the command failed inside the runtime" },
	{ TR_DS_IPC_E_NOT_YET_AVAILABLE, "DS_IPC_E_NOT_YET_AVAILABLE", "not available yet (the runtime is starting)" },
	{ TR_DS_IPC_E_RUNTIME_UNINITIALIZED, "DS_IPC_E_RUNTIME_UNINITIALIZED", "the runtime is not initialized yet" },
	{ TR_DS_IPC_E_INVALIDARG, "DS_IPC_E_INVALIDARG", "the runtime refused an argument" },
	{ TR_DS_IPC_E_INSUFFICIENT_BUFFER, "DS_IPC_E_INSUFFICIENT_BUFFER", "a buffer was too small" },
	{ TR_DS_IPC_E_ENVVAR_NOT_FOUND, "DS_IPC_E_ENVVAR_NOT_FOUND", "no such environment variable" },
	{ TR_E_NOTIMPL, "E_NOTIMPL", "not implemented by this runtime" },
	{ TR_E_OUTOFMEMORY, "E_OUTOFMEMORY", "the runtime is out of memory" },
};

const char *tr_dnipc_hresult_name(uint32_t hresult)
{
	for (size_t i = 0; i < sizeof(hresults) / sizeof(hresults[0]); i++)
		if (hresults[i].hresult == hresult)
			return hresults[i].name;
	return NULL;
}

const char *tr_dnipc_hresult_str(uint32_t hresult, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(hresults) / sizeof(hresults[0]); i++) {
		if (hresults[i].hresult == hresult) {
			snprintf(buf, len, "%s (0x%08X: %s)", hresults[i].name, (unsigned)hresult,
				 hresults[i].words);
			return buf;
		}
	}
	snprintf(buf, len, "HRESULT 0x%08X", (unsigned)hresult);
	return buf;
}

/* ---- ProcessInfo --------------------------------------------------------- */

int tr_dnipc_process_info_decode(const uint8_t *payload, size_t len, int version,
				 struct tr_dnipc_process_info *pi)
{
	struct tr_dnipc_cursor c = { .p = payload, .len = len };
	int ret;

	memset(pi, 0, sizeof(*pi));
	pi->version = version;
	if ((ret = tr_dnipc_get_u64(&c, &pi->pid)) < 0 ||
	    (ret = tr_dnipc_get_bytes(&c, pi->cookie, sizeof(pi->cookie))) < 0 ||
	    (ret = tr_dnipc_get_string(&c, &pi->command_line)) < 0 ||
	    (ret = tr_dnipc_get_string(&c, &pi->os)) < 0 ||
	    (ret = tr_dnipc_get_string(&c, &pi->arch)) < 0)
		return ret;
	if (version >= 2 && ((ret = tr_dnipc_get_string(&c, &pi->entrypoint)) < 0 ||
			     (ret = tr_dnipc_get_string(&c, &pi->clr_version)) < 0))
		return ret;
	return 0;
}

void tr_dnipc_process_info_free(struct tr_dnipc_process_info *pi)
{
	free(pi->command_line);
	free(pi->os);
	free(pi->arch);
	free(pi->entrypoint);
	free(pi->clr_version);
	memset(pi, 0, sizeof(*pi));
}

/* ---- where the socket is ------------------------------------------------- */

int tr_dnipc_environ_tmpdir(const char *env, size_t env_len, char *out, size_t len)
{
	static const char key[] = "TMPDIR=";
	const char *value = "/tmp";
	size_t vlen = 4;

	for (size_t off = 0; off < env_len;) {
		const char *entry = env + off, *end = memchr(entry, '\0', env_len - off);
		size_t elen = end ? (size_t)(end - entry) : env_len - off;

		/* getenv(3), which the runtime calls, takes the first. */
		if (elen >= sizeof(key) - 1 && memcmp(entry, key, sizeof(key) - 1) == 0) {
			if (elen > sizeof(key) - 1) {
				value = entry + sizeof(key) - 1;
				vlen = elen - (sizeof(key) - 1);
			}
			break;
		}
		off += elen + 1;
	}
	if (vlen + 1 > len)
		return -ENAMETOOLONG;
	if (value[0] != '/')
		return -EINVAL;
	memcpy(out, value, vlen);
	out[vlen] = '\0';
	return 0;
}

/* Reads a decimal number of at least one digit at *s, advancing over it. */
static int parse_ull(const char **s, unsigned long long *v)
{
	const char *p = *s;
	unsigned long long n = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (~0ull - 9) / 10)
			return -EINVAL;
		n = n * 10 + (unsigned)(*p - '0');
	}
	*v = n;
	*s = p;
	return 0;
}

int tr_dnipc_socket_name_key(const char *name, pid_t nspid, unsigned long long *key)
{
	char prefix[40];
	const char *p;
	int n = snprintf(prefix, sizeof(prefix), "dotnet-diagnostic-%d-", (int)nspid);

	if (n < 0 || (size_t)n >= sizeof(prefix) || strncmp(name, prefix, (size_t)n) != 0)
		return 0;
	p = name + n;
	if (parse_ull(&p, key) < 0)
		return 0;
	return strcmp(p, "-socket") == 0;
}

/* A /proc/PID file read whole (at most max bytes, NUL-terminated). */
static int read_proc(int procfd, const char *name, size_t max, char **out, size_t *out_len)
{
	int ret = tr_read_proc_file(procfd, name, max, out, out_len);

	/* A process that exits meanwhile: its /proc entries are gone. */
	return ret == -ENOENT ? -ESRCH : ret;
}

/* The four IDs of the status line "Uid:" (real, effective, saved, fs). */
static int parse_uids(const char *status, uid_t uids[4])
{
	const char *p = strstr(status, "\nUid:");

	if (!p)
		return -ENOENT;
	p += 5;
	for (int i = 0; i < 4; i++) {
		unsigned long long v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (parse_ull(&p, &v) < 0 || v > (uid_t)-1)
			return -EINVAL;
		uids[i] = (uid_t)v;
	}
	return 0;
}

static int refuse(struct tr_dnipc_status *st, enum tr_dnipc_refusal why)
{
	st->refusal = why;
	return -EPERM;
}

static void status_reset(struct tr_dnipc_status *st, pid_t pid)
{
	memset(st, 0, sizeof(*st));
	st->pid = pid;
	st->nspid = pid;
}

/* What /proc says of the process: its namespace PID, user, start time and
 * TMPDIR.  The /proc/PID directory is opened once: a PID reused meanwhile
 * answers ESRCH rather than another process's data. */
static int read_process(int procfd, struct tr_dnipc_status *st, uid_t uids[4])
{
	char *text = NULL;
	size_t len;
	int ret;

	st->step = "read /proc/PID/status";
	/* Its Groups line can be long: 1 MiB bounds it. */
	ret = read_proc(procfd, "status", 1 << 20, &text, &len);
	if (ret < 0)
		return ret;
	ret = tr_status_field_innermost(text, "NSpid", &st->nspid);
	if (ret == -ENOENT)
		st->nspid = st->pid; /* before Linux 4.1: no PID namespaces shown */
	else if (ret < 0)
		goto out;
	ret = parse_uids(text, uids);
	if (ret < 0)
		goto out;
	st->uid = uids[1];
	free(text);
	text = NULL;

	st->step = "read /proc/PID/stat";
	ret = read_proc(procfd, "stat", 4096, &text, &len);
	if (ret < 0)
		return ret;
	ret = tr_stat_field(text, 22, &st->key);
	if (ret < 0)
		goto out;
	free(text);
	text = NULL;

	/* The kernel bounds one string to 128 KiB and the block to a quarter of
	 * the stack limit (2 MiB by default): 8 MiB is plenty. */
	st->step = "read /proc/PID/environ";
	ret = read_proc(procfd, "environ", 8 << 20, &text, &len);
	if (ret < 0)
		return ret;
	ret = tr_dnipc_environ_tmpdir(text, len, st->tmpdir, sizeof(st->tmpdir));
	if (ret == -EINVAL) {
		st->step = "its TMPDIR is not an absolute path";
		ret = -ENOENT;
	} else if (ret == -ENAMETOOLONG) {
		st->step = "its TMPDIR is longer than PATH_MAX";
	}
out:
	free(text);
	if (ret == 0)
		st->step = NULL;
	return ret;
}

/* The name of the newest dotnet-diagnostic-{nspid}-*-socket in the
 * directory (st->name), by modification time and then key. */
static int newest_socket(int dir, struct tr_dnipc_status *st)
{
	struct timespec best = { 0, 0 };
	unsigned long long best_key = 0, key;
	struct dirent *de;
	struct stat sb;
	int listfd, found = 0;
	DIR *d;

	listfd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (listfd < 0) {
		st->step = "open TMPDIR to list it";
		return -errno;
	}
	d = fdopendir(listfd);
	if (!d) {
		int err = -errno;

		close(listfd);
		st->step = "list TMPDIR";
		return err;
	}
	while ((de = readdir(d))) {
		size_t nlen = strlen(de->d_name);

		/* Ours are at most 56 bytes: a longer name is someone else's. */
		if (nlen >= sizeof(st->name) ||
		    !tr_dnipc_socket_name_key(de->d_name, st->nspid, &key))
			continue;
		/* Not following a link: the link itself is what is judged below. */
		if (fstatat(listfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (found && (sb.st_mtim.tv_sec < best.tv_sec ||
			      (sb.st_mtim.tv_sec == best.tv_sec &&
			       (sb.st_mtim.tv_nsec < best.tv_nsec ||
				(sb.st_mtim.tv_nsec == best.tv_nsec && key < best_key)))))
			continue;
		found = 1;
		best = sb.st_mtim;
		best_key = key;
		memcpy(st->name, de->d_name, nlen + 1);
	}
	closedir(d);
	return found ? 0 : -ENOENT;
}

/* The checks on the socket file, once opened O_PATH | O_NOFOLLOW. */
static int judge_socket(int sfd, struct tr_dnipc_status *st, const uid_t uids[4])
{
	if (fstat(sfd, &st->st) < 0) {
		st->step = "fstat the socket";
		return -errno;
	}
	if (S_ISLNK(st->st.st_mode))
		return refuse(st, TR_DNIPC_REFUSED_SYMLINK);
	if (!S_ISSOCK(st->st.st_mode))
		return refuse(st, TR_DNIPC_REFUSED_NOT_SOCKET);
	/* Another user of a shared /tmp could plant a socket under the
	 * runtime's name, to be sent our commands and to answer them. */
	if (st->st.st_uid != 0) {
		int mine = 0;

		for (int i = 0; i < 4; i++)
			mine |= st->st.st_uid == uids[i];
		if (!mine)
			return refuse(st, TR_DNIPC_REFUSED_OWNER);
	}
	return 0;
}

/* The process's TMPDIR, opened inside its root; what refused it said in
 * st. */
static int open_tmpdir(int rootfd, struct tr_dnipc_status *st)
{
	/* The process controls every directory of its TMPDIR: resolved inside
	 * its root, no link followed (the rules of lib/untrusted.h). */
	int ret = tr_untrusted_open_local_dir(rootfd, st->tmpdir, TR_IN_ROOT);

	if (ret >= 0)
		return ret;
	if (ret == -ENOENT || ret == -ENOTDIR) {
		ret = -ENOENT;
		st->step = "no such directory in the process's root";
	} else if (ret == -ELOOP) {
		ret = refuse(st, TR_DNIPC_REFUSED_LINK_ON_PATH);
	} else if (ret == -EXDEV) {
		ret = refuse(st, TR_DNIPC_REFUSED_ESCAPES);
	} else if (ret == -ENOSYS) {
		st->refusal = TR_DNIPC_REFUSED_NO_OPENAT2;
	} else if (ret == -EREMOTE) {
		/* Its server could hold the lookups below for good. */
		ret = -ENOENT;
		st->step = "on FUSE or a network file system, not looked into (a server "
			   "that stops answering would hold tracerig)";
	} else if (ret == -ETIMEDOUT) {
		ret = -ENOENT;
		st->step = "its file system did not answer, not looked into";
	} else {
		st->step = "open TMPDIR in the process's root";
	}
	return ret;
}

/* The socket file in TMPDIR, O_PATH: the one keyed by the process's start
 * time, else the newest of its PID (st->exact says which). */
static int open_socket(int dir, struct tr_dnipc_status *st)
{
	int sfd, ret;

	snprintf(st->name, sizeof(st->name), "dotnet-diagnostic-%d-%llu-socket", (int)st->nspid,
		 st->key);
	st->exact = 1;
	/* One name, no '/': O_NOFOLLOW alone keeps a link from being followed. */
	sfd = openat(dir, st->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 && errno == ENOENT) {
		st->exact = 0;
		ret = newest_socket(dir, st);
		if (ret < 0) {
			st->name[0] = '\0';
			return ret;
		}
		sfd = openat(dir, st->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	if (sfd < 0) {
		ret = -errno;
		st->step = "open the socket file";
		return ret;
	}
	return sfd;
}

static int locate_in(pid_t pid, struct tr_dnipc_status *st)
{
	char path[64];
	uid_t uids[4];
	int procfd, rootfd = -1, dir = -1, sfd = -1, ret;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	procfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	ret = read_process(procfd, st, uids);
	if (ret < 0)
		goto out;

	rootfd = openat(procfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		ret = errno == ENOENT ? -ESRCH : -errno;
		st->step = "open /proc/PID/root";
		goto out;
	}
	dir = open_tmpdir(rootfd, st);
	if (dir < 0) {
		ret = dir;
		goto out;
	}
	sfd = open_socket(dir, st);
	if (sfd < 0) {
		ret = sfd;
		goto out;
	}
	ret = judge_socket(sfd, st, uids);
	if (ret == 0) {
		ret = sfd;
		sfd = -1;
	}
out:
	if (sfd >= 0)
		close(sfd);
	if (dir >= 0)
		close(dir);
	if (rootfd >= 0)
		close(rootfd);
	close(procfd);
	return ret;
}

int tr_dnipc_locate(pid_t pid, struct tr_dnipc_status *st)
{
	status_reset(st, pid);
	return locate_in(pid, st);
}

/* ---- deadlines ------------------------------------------------------------ */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t deadline_in(int timeout_ms)
{
	return now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
}

static int ms_left(int64_t deadline)
{
	int64_t left = deadline - now_ms();

	return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* Until fd is ready for `events`: 0, or -ETIMEDOUT once the deadline passed. */
static int wait_for(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int n = poll(&p, 1, ms_left(deadline));

		if (n > 0)
			return 0; /* readable, writable, or hung up: the call says which */
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int connect_in(pid_t pid, int64_t deadline, struct tr_dnipc_status *st)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { 0, 0 };
	int pfd, fd, ret, left, flags;

	pfd = locate_in(pid, st);
	if (pfd < 0)
		return pfd;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		st->step = "socket";
		goto close_path;
	}
	/* Through our own fd of the checked inode: no lookup of a path the
	 * process controls, and no 108-byte sun_path limit on a deep TMPDIR. */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
	for (;;) {
		/* A blocking connect(2) on a Unix socket waits while the listener's
		 * backlog is full, for at most SO_SNDTIMEO (0 would be forever). */
		left = ms_left(deadline);
		if (left == 0) {
			ret = -ETIMEDOUT;
			goto fail;
		}
		tv.tv_sec = left / 1000;
		tv.tv_usec = (left % 1000) * 1000;
		if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
			ret = -errno;
			st->step = "setsockopt SO_SNDTIMEO";
			goto fail;
		}
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		if (errno == EINTR)
			continue;
		ret = errno == EAGAIN || errno == EINPROGRESS ? -ETIMEDOUT : -errno;
		st->step = "connect";
		goto fail;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		ret = -errno;
		st->step = "fcntl O_NONBLOCK";
		goto fail;
	}
	close(pfd);
	return fd;

fail:
	close(fd);
close_path:
	close(pfd);
	return ret;
}

int tr_dnipc_connect(pid_t pid, int timeout_ms, struct tr_dnipc_status *st)
{
	status_reset(st, pid);
	st->timeout_ms = timeout_ms;
	return connect_in(pid, deadline_in(timeout_ms), st);
}

/* ---- messages on a connection --------------------------------------------- */

static int write_all(int fd, const uint8_t *p, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		int ret;

		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return errno == ECONNRESET ? -EPIPE : -errno;
		ret = wait_for(fd, POLLOUT, deadline);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Reads exactly n bytes: 0, or -ECONNRESET at the end of the stream (*got
 * says how far it came), -ETIMEDOUT, -errno. */
static int read_exact(int fd, uint8_t *p, size_t n, int64_t deadline, size_t *got)
{
	*got = 0;
	while (*got < n) {
		ssize_t r = recv(fd, p + *got, n - *got, MSG_DONTWAIT);
		int ret;

		if (r > 0) {
			*got += (size_t)r;
			continue;
		}
		if (r == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		ret = wait_for(fd, POLLIN, deadline);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int tr_dnipc_recv_exact(int fd, void *buf, size_t n, int timeout_ms)
{
	size_t got;
	int ret = read_exact(fd, buf, n, deadline_in(timeout_ms), &got);

	return ret == -ECONNRESET ? -EBADMSG : ret;
}

static int send_until(int fd, uint8_t command_set, uint8_t command_id, const void *payload,
		      size_t len, int64_t deadline)
{
	uint8_t *msg;
	int ret;

	if (len > TR_DNIPC_MAX_PAYLOAD)
		return -EMSGSIZE;
	/* One buffer, one send: the runtime reads the header and the payload
	 * as they come, but a single write is what its own client does. */
	msg = malloc(TR_DNIPC_HEADER_SIZE + len);
	if (!msg)
		return -ENOMEM;
	ret = tr_dnipc_header_encode(msg, len, command_set, command_id);
	if (ret == 0) {
		if (len)
			memcpy(msg + TR_DNIPC_HEADER_SIZE, payload, len);
		ret = write_all(fd, msg, TR_DNIPC_HEADER_SIZE + len, deadline);
	}
	free(msg);
	return ret;
}

static int recv_until(int fd, int64_t deadline, struct tr_dnipc_reply *r)
{
	uint8_t head[TR_DNIPC_HEADER_SIZE], *msg;
	struct tr_dnipc_header h;
	size_t got;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = read_exact(fd, head, sizeof(head), deadline, &got);
	if (ret == -ECONNRESET && got > 0) {
		r->why = "the connection closed in the middle of a header";
		return -EBADMSG;
	}
	if (ret < 0)
		return ret;
	/* Judged before reading on: a size below the header's is refused, and
	 * one above what follows times out rather than reading past it. */
	if (tr_dnipc_header_decode(head, &h) < 0)
		return tr_dnipc_reply_parse(head, sizeof(head), r);
	msg = malloc(h.size);
	if (!msg)
		return -ENOMEM;
	memcpy(msg, head, sizeof(head));
	ret = read_exact(fd, msg + sizeof(head), h.size - sizeof(head), deadline, &got);
	if (ret == 0)
		ret = tr_dnipc_reply_parse(msg, h.size, r);
	else if (ret == -ECONNRESET) {
		r->why = "the connection closed before the end of the reply its header announced";
		ret = -EBADMSG;
	}
	r->msg = msg; /* r->payload points into it */
	return ret;
}

int tr_dnipc_send(int fd, uint8_t command_set, uint8_t command_id, const void *payload,
		  size_t len, int timeout_ms)
{
	return send_until(fd, command_set, command_id, payload, len, deadline_in(timeout_ms));
}

int tr_dnipc_recv_reply(int fd, int timeout_ms, struct tr_dnipc_reply *r)
{
	return recv_until(fd, deadline_in(timeout_ms), r);
}

static int command_until(int fd, uint8_t command_set, uint8_t command_id,
			 const struct tr_dnipc_buf *payload, int64_t deadline, struct tr_dnipc_reply *r)
{
	int ret;

	memset(r, 0, sizeof(*r));
	if (payload && payload->err)
		return payload->err;
	ret = send_until(fd, command_set, command_id, payload ? payload->data : NULL,
			 payload ? payload->len : 0, deadline);
	/* A peer that hangs up at once fails our write (EPIPE) or our read
	 * (ECONNRESET), whichever comes first: one answer for both, "closed
	 * before a byte of its reply". */
	if (ret == -EPIPE || ret == -ECONNRESET)
		return -ECONNRESET;
	if (ret < 0)
		return ret;
	return recv_until(fd, deadline, r);
}

int tr_dnipc_command(int fd, uint8_t command_set, uint8_t command_id,
		     const struct tr_dnipc_buf *payload, int timeout_ms, struct tr_dnipc_reply *r)
{
	return command_until(fd, command_set, command_id, payload, deadline_in(timeout_ms), r);
}

/* ---- Process commands ----------------------------------------------------- */

/* One command on a connection of its own (the runtime closes it after the
 * reply). */
static int run(pid_t pid, int64_t deadline, uint8_t command_set, uint8_t command_id,
	       const struct tr_dnipc_buf *payload, struct tr_dnipc_reply *r,
	       struct tr_dnipc_status *st)
{
	int fd, ret;

	memset(r, 0, sizeof(*r));
	fd = connect_in(pid, deadline, st);
	if (fd < 0)
		return fd;
	ret = command_until(fd, command_set, command_id, payload, deadline, r);
	close(fd);
	if (ret == -EREMOTEIO)
		st->hresult = r->hresult;
	else if (ret == -EBADMSG)
		st->step = r->why;
	return ret;
}

static void begin(struct tr_dnipc_status *st, pid_t pid, const char *command, int timeout_ms)
{
	status_reset(st, pid);
	st->command = command;
	st->timeout_ms = timeout_ms;
}

int tr_dnipc_process_info(pid_t pid, int timeout_ms, struct tr_dnipc_process_info *pi,
			  struct tr_dnipc_status *st)
{
	int64_t deadline = deadline_in(timeout_ms);
	struct tr_dnipc_reply r;
	int ret, version = 2;

	memset(pi, 0, sizeof(*pi));
	begin(st, pid, "ProcessInfo2", timeout_ms);
	ret = run(pid, deadline, TR_DNIPC_SET_PROCESS, TR_DNIPC_PROCESS_INFO2, NULL, &r, st);
	if (ret == -EREMOTEIO && r.hresult == TR_DS_IPC_E_UNKNOWN_COMMAND) {
		/* .NET 5 and before know ProcessInfo only. */
		tr_dnipc_reply_free(&r);
		st->command = "ProcessInfo";
		st->hresult = 0;
		version = 1;
		ret = run(pid, deadline, TR_DNIPC_SET_PROCESS, TR_DNIPC_PROCESS_INFO, NULL, &r, st);
	}
	if (ret == 0) {
		ret = tr_dnipc_process_info_decode(r.payload, r.payload_len, version, pi);
		if (ret == -EBADMSG)
			st->step = "its payload does not hold the fields of the command";
	}
	tr_dnipc_reply_free(&r);
	return ret;
}

int tr_dnipc_enable_perfmap(pid_t pid, enum tr_dnipc_perfmap type, int timeout_ms,
			    struct tr_dnipc_status *st)
{
	struct tr_dnipc_reply r;
	struct tr_dnipc_buf b;
	int ret;

	begin(st, pid, "EnablePerfMap", timeout_ms);
	if (type < TR_DNIPC_PERFMAP_ALL || type > TR_DNIPC_PERFMAP_MAP) {
		st->step = "the perf map type must be 1 (all), 2 (jitdump) or 3 (perf map)";
		return -EINVAL;
	}
	tr_dnipc_buf_init(&b);
	tr_dnipc_put_u32(&b, (uint32_t)type);
	ret = run(pid, deadline_in(timeout_ms), TR_DNIPC_SET_PROCESS, TR_DNIPC_ENABLE_PERFMAP, &b,
		  &r, st);
	tr_dnipc_reply_free(&r);
	tr_dnipc_buf_free(&b);
	return ret;
}

int tr_dnipc_disable_perfmap(pid_t pid, int timeout_ms, struct tr_dnipc_status *st)
{
	struct tr_dnipc_reply r;
	int ret;

	begin(st, pid, "DisablePerfMap", timeout_ms);
	ret = run(pid, deadline_in(timeout_ms), TR_DNIPC_SET_PROCESS, TR_DNIPC_DISABLE_PERFMAP, NULL,
		  &r, st);
	tr_dnipc_reply_free(&r);
	return ret;
}

/* ---- words ---------------------------------------------------------------- */

static const char *type_words(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFIFO: return "a FIFO";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	default: return "not a socket";
	}
}

/* -ENOENT: where the socket was looked for, or why it was not. */
static void explain_no_socket(const struct tr_dnipc_status *st, const char *dir, char *buf,
			      size_t len)
{
	if (st->step && st->tmpdir[0])
		snprintf(buf, len, "no diagnostic socket: TMPDIR %s: %s", dir, st->step);
	else if (st->step)
		snprintf(buf, len, "no diagnostic socket: %s", st->step);
	else
		snprintf(buf, len,
			 "no diagnostic socket dotnet-diagnostic-%d-*-socket in %s (not a .NET "
			 "process, or one started with DOTNET_EnableDiagnostics=0)",
			 (int)st->nspid, dir);
}

/* -EPERM: which check refused the socket or its directory. */
static void explain_refusal(const struct tr_dnipc_status *st, const char *dir, const char *sock,
			    char *buf, size_t len)
{
	switch (st->refusal) {
	case TR_DNIPC_REFUSED_SYMLINK:
		snprintf(buf, len,
			 "%s is a symbolic link (links are not followed inside a process's root)",
			 sock);
		break;
	case TR_DNIPC_REFUSED_NOT_SOCKET:
		snprintf(buf, len, "%s is %s, not a socket", sock, type_words(st->st.st_mode));
		break;
	case TR_DNIPC_REFUSED_OWNER:
		snprintf(buf, len, "%s belongs to uid %u, neither the process's user (%u) nor root",
			 sock, (unsigned)st->st.st_uid, (unsigned)st->uid);
		break;
	case TR_DNIPC_REFUSED_LINK_ON_PATH:
		snprintf(buf, len,
			 "a directory of TMPDIR %s is a symbolic link (links are not followed "
			 "inside a process's root)",
			 dir);
		break;
	case TR_DNIPC_REFUSED_ESCAPES:
		snprintf(buf, len, "TMPDIR %s leaves the process's root", dir);
		break;
	default:
		snprintf(buf, len, "%s: %s", st->step ? st->step : "refused", strerror(EPERM));
		break;
	}
}

const char *tr_dnipc_explain(const struct tr_dnipc_status *st, int ret, char *buf, size_t len)
{
	char dir[PATH_MAX], sock[PATH_MAX + 80], hr[160];
	const char *command = st->command ? st->command : "the command";
	size_t n;

	if (!len)
		return buf;
	/* TMPDIR is the process's to choose: no control character of it
	 * reaches a log line. */
	tr_sanitize_text(dir, sizeof(dir), st->tmpdir);
	n = strlen(dir);
	snprintf(sock, sizeof(sock), "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/",
		 st->name[0] ? st->name : "?");

	switch (ret) {
	case -ESRCH:
		snprintf(buf, len, "no process %d", (int)st->pid);
		break;
	case -ENOENT: explain_no_socket(st, dir, buf, len); break;
	case -EPERM: explain_refusal(st, dir, sock, buf, len); break;
	case -ENOSYS:
		snprintf(buf, len, "openat2(2) with RESOLVE_IN_ROOT is unavailable (needs Linux 5.6 "
				   "or later; a process's TMPDIR is never opened following links)");
		break;
	case -ECONNREFUSED:
		snprintf(buf, len, "nobody listens on %s (left behind by a runtime that exited?)",
			 sock);
		break;
	case -ETIMEDOUT:
		if (st->step && strcmp(st->step, "connect") == 0)
			snprintf(buf, len, "%s did not take a connection within %d ms (its backlog "
					   "stayed full)",
				 sock, st->timeout_ms);
		else
			snprintf(buf, len, "no answer to %s within %d ms from %s", command,
				 st->timeout_ms, sock);
		break;
	case -EREMOTEIO:
		snprintf(buf, len, "the runtime answered %s with %s", command,
			 tr_dnipc_hresult_str(st->hresult, hr, sizeof(hr)));
		break;
	case -EBADMSG:
		snprintf(buf, len, "a malformed reply to %s from %s: %s", command, sock,
			 st->step ? st->step : "?");
		break;
	case -ECONNRESET:
		snprintf(buf, len, "the runtime closed the connection without answering %s", command);
		break;
	case -EPIPE:
		snprintf(buf, len, "the runtime closed the connection while %s was sent", command);
		break;
	default:
		snprintf(buf, len, "%s%s%s", st->step ? st->step : "", st->step ? ": " : "",
			 strerror(ret < 0 ? -ret : ret));
		break;
	}
	return buf;
}
