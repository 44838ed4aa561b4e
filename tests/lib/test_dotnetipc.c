/* The .NET diagnostics IPC client without a runtime: the wire format over
 * hand-built buffers (headers, UTF-16 strings with hostile lengths, replies
 * that lie about their size, a ProcessInfo2 payload), then the whole client
 * against fake servers on this process's own socket name, in a TMPDIR of
 * its own (it re-executes itself with TMPDIR set, since /proc/PID/environ
 * holds the environment a process started with).  No root needed, but as
 * root it also checks the owner rule. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/dotnetipc.h"
#include "lib/procpid.h"
#include "lib/untrusted.h"
#include "../testing.h"

static const uint8_t magic[14] = "DOTNET_IPC_V1";

/* A whole message: header (with the size it declares) and payload. */
static size_t message(uint8_t *out, uint16_t declared, uint8_t set, uint8_t id, const void *payload,
		      size_t len)
{
	memcpy(out, magic, 14);
	out[14] = (uint8_t)declared;
	out[15] = (uint8_t)(declared >> 8);
	out[16] = set;
	out[17] = id;
	out[18] = out[19] = 0;
	if (len)
		memcpy(out + 20, payload, len);
	return 20 + len;
}

DEF_TEST(header_is_magic_size_command_reserved)
{
	static const uint8_t expect[20] = { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C',
					    '_', 'V', '1', 0,   24,  0,   4,   5,   0,   0 };
	uint8_t h[20];
	struct tr_dnipc_header d;

	EXPECT_EQ_INT(0, tr_dnipc_header_encode(h, 4, TR_DNIPC_SET_PROCESS, TR_DNIPC_ENABLE_PERFMAP));
	EXPECT_TRUE(memcmp(h, expect, sizeof(h)) == 0);
	EXPECT_EQ_INT(0, tr_dnipc_header_decode(h, &d));
	EXPECT_EQ_INT(24, d.size);
	EXPECT_EQ_INT(4, d.command_set);
	EXPECT_EQ_INT(5, d.command_id);
	/* The size is a uint16 of the whole message. */
	EXPECT_EQ_INT(0, tr_dnipc_header_encode(h, 65515, 2, 3));
	EXPECT_EQ_INT(0xFF, h[14]);
	EXPECT_EQ_INT(0xFF, h[15]);
	EXPECT_EQ_INT(-EMSGSIZE, tr_dnipc_header_encode(h, 65516, 2, 3));
	/* A wrong magic, a size below the header's own. */
	memcpy(h, expect, sizeof(h));
	h[12] = '2';
	EXPECT_EQ_INT(-EBADMSG, tr_dnipc_header_decode(h, &d));
	memcpy(h, expect, sizeof(h));
	h[14] = 19;
	EXPECT_EQ_INT(-EBADMSG, tr_dnipc_header_decode(h, &d));
}

DEF_TEST(strings_are_utf16_with_their_nul_counted)
{
	static const uint8_t hot[] = { 4, 0, 0, 0, 'H', 0, 'o', 0, 't', 0, 0, 0 };
	/* é, €, U+1F600 (a surrogate pair), then the NUL: 5 units. */
	static const uint8_t wide[] = { 5, 0, 0, 0, 0xE9, 0, 0xAC, 0x20, 0x3D, 0xD8, 0x00, 0xDE, 0, 0 };
	struct tr_dnipc_buf b;

	tr_dnipc_buf_init(&b);
	tr_dnipc_put_string(&b, "Hot");
	EXPECT_EQ_INT(0, b.err);
	EXPECT_EQ_INT(sizeof(hot), b.len);
	EXPECT_TRUE(b.len == sizeof(hot) && memcmp(b.data, hot, sizeof(hot)) == 0);
	tr_dnipc_buf_free(&b);

	tr_dnipc_put_string(&b, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
	EXPECT_EQ_INT(0, b.err);
	EXPECT_TRUE(b.len == sizeof(wide) && memcmp(b.data, wide, sizeof(wide)) == 0);
	tr_dnipc_buf_free(&b);

	/* No string at all is length 0, with no NUL. */
	tr_dnipc_put_string(&b, NULL);
	EXPECT_EQ_INT(4, b.len);
	EXPECT_TRUE(b.len == 4 && b.data[0] == 0 && b.data[3] == 0);
	tr_dnipc_buf_free(&b);
}

DEF_TEST(invalid_utf8_is_not_sent_and_the_error_sticks)
{
	static const char *const bad[] = {
		"\xC0\x80",         /* overlong NUL */
		"\xE0\x80\xAF",     /* overlong '/' */
		"\xED\xA0\x80",     /* a surrogate */
		"\xF4\x90\x80\x80", /* past U+10FFFF */
		"\x80",             /* a lone continuation byte */
		"abc\xE2\x82",      /* cut in the middle */
		"\xFF",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tr_dnipc_buf b;

		tr_dnipc_buf_init(&b);
		tr_dnipc_put_string(&b, bad[i]);
		if (b.err != -EILSEQ)
			TEST_FAIL("string %zu: err %d, expected -EILSEQ", i, b.err);
		/* Later appends do nothing. */
		tr_dnipc_put_u32(&b, 7);
		EXPECT_EQ_INT(-EILSEQ, b.err);
		EXPECT_EQ_INT(0, b.len);
		tr_dnipc_buf_free(&b);
	}
}

DEF_TEST(payload_is_bounded_by_the_uint16_size)
{
	static uint8_t big[TR_DNIPC_MAX_PAYLOAD];
	struct tr_dnipc_buf b;

	tr_dnipc_buf_init(&b);
	tr_dnipc_put_bytes(&b, big, sizeof(big));
	EXPECT_EQ_INT(0, b.err);
	EXPECT_EQ_INT(TR_DNIPC_MAX_PAYLOAD, b.len);
	tr_dnipc_put_u8(&b, 1);
	EXPECT_EQ_INT(-EMSGSIZE, b.err);
	EXPECT_EQ_INT(TR_DNIPC_MAX_PAYLOAD, b.len);
	tr_dnipc_buf_free(&b);

	tr_dnipc_put_u64(&b, 0x0102030405060708ull);
	EXPECT_TRUE(b.len == 8 && b.data[0] == 8 && b.data[7] == 1);
	tr_dnipc_buf_free(&b);
}

static int decode(const uint8_t *p, size_t len, char **out, size_t *off)
{
	struct tr_dnipc_cursor c = { .p = p, .len = len };
	int ret = tr_dnipc_get_string(&c, out);

	*off = c.off;
	return ret;
}

DEF_TEST(strings_decode_to_valid_utf8)
{
	static const uint8_t wide[] = { 5, 0, 0, 0, 0xE9, 0, 0xAC, 0x20, 0x3D, 0xD8, 0x00, 0xDE, 0, 0 };
	/* A high surrogate with no low one, and a low one alone. */
	static const uint8_t unpaired[] = { 4, 0, 0, 0, 0x3D, 0xD8, 'x', 0, 0x00, 0xDE, 0, 0 };
	/* Text after an early NUL is not part of the C string. */
	static const uint8_t inner_nul[] = { 4, 0, 0, 0, 'a', 0, 0, 0, 'b', 0, 0, 0, 0xAA };
	static const uint8_t empty[] = { 0, 0, 0, 0, 0xAA };
	char *s;
	size_t off;

	EXPECT_EQ_INT(0, decode(wide, sizeof(wide), &s, &off));
	EXPECT_EQ_STR("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", s);
	EXPECT_EQ_INT(sizeof(wide), off);
	free(s);

	EXPECT_EQ_INT(0, decode(unpaired, sizeof(unpaired), &s, &off));
	EXPECT_EQ_STR("\xEF\xBF\xBDx\xEF\xBF\xBD", s);
	free(s);

	EXPECT_EQ_INT(0, decode(inner_nul, sizeof(inner_nul), &s, &off));
	EXPECT_EQ_STR("a", s);
	EXPECT_EQ_INT(12, off); /* over the whole declared string */
	free(s);

	EXPECT_EQ_INT(0, decode(empty, sizeof(empty), &s, &off));
	EXPECT_EQ_STR("", s);
	EXPECT_EQ_INT(4, off);
	free(s);
}

DEF_TEST(hostile_string_lengths_are_refused_before_allocating)
{
	static const uint8_t longer[] = { 5, 0, 0, 0, 'a', 0, 'b', 0, 0, 0 };
	static const uint8_t huge[] = { 0xFF, 0xFF, 0xFF, 0xFF, 'a', 0, 0, 0 };
	static const uint8_t half[] = { 0, 0, 0, 0x80, 'a', 0, 0, 0 };
	static const uint8_t no_nul[] = { 2, 0, 0, 0, 'a', 0, 'b', 0 };
	static const uint8_t odd[] = { 2, 0, 0, 0, 'a', 0, 0 };
	static const uint8_t cut_length[] = { 2, 0, 0 };
	const struct {
		const uint8_t *p;
		size_t len;
	} cases[] = {
		{ longer, sizeof(longer) }, { huge, sizeof(huge) },   { half, sizeof(half) },
		{ no_nul, sizeof(no_nul) }, { odd, sizeof(odd) },     { cut_length, sizeof(cut_length) },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = (char *)1;
		size_t off = 99;
		int ret = decode(cases[i].p, cases[i].len, &s, &off);

		if (ret != -EBADMSG || s != NULL || off != 0)
			TEST_FAIL("case %zu: ret %d, s %p, off %zu", i, ret, (void *)s, off);
	}
}

DEF_TEST(replies_are_parsed_against_their_declared_size)
{
	static const uint8_t hr[4] = { 0x85, 0x13, 0x13, 0x80 };
	static const uint8_t ok_payload[4] = { 0, 0, 0, 0 };
	uint8_t m[64];
	struct tr_dnipc_reply r = { 0 };
	size_t n;

	n = message(m, 24, 0xFF, 0x00, ok_payload, 4);
	EXPECT_EQ_INT(0, tr_dnipc_reply_parse(m, n, &r));
	EXPECT_EQ_INT(4, r.payload_len);
	EXPECT_TRUE(r.payload == m + 20);

	n = message(m, 24, 0xFF, 0xFF, hr, 4);
	EXPECT_EQ_INT(-EREMOTEIO, tr_dnipc_reply_parse(m, n, &r));
	EXPECT_EQ_INT(TR_DS_IPC_E_UNKNOWN_COMMAND, r.hresult);

	/* The generic OK has no payload at all. */
	n = message(m, 20, 0xFF, 0x00, NULL, 0);
	EXPECT_EQ_INT(0, tr_dnipc_reply_parse(m, n, &r));
	EXPECT_EQ_INT(0, r.payload_len);

	/* Sizes that lie: more than there is, less than there is, less than a header. */
	n = message(m, 40, 0xFF, 0x00, ok_payload, 4);
	EXPECT_EQ_INT(-EBADMSG, tr_dnipc_reply_parse(m, n, &r));
	EXPECT_CONTAINS("size", r.why);
	n = message(m, 22, 0xFF, 0x00, ok_payload, 4);
	EXPECT_EQ_INT(-EBADMSG, tr_dnipc_reply_parse(m, n, &r));
	n = message(m, 10, 0xFF, 0x00, NULL, 0);
	EXPECT_EQ_INT(-EBADMSG, tr_dnipc_reply_parse(m, n, &r));
	EXPECT_CONTAINS("below the header", r.why);
	EXPECT_EQ_INT(-EBADMSG, tr_dnipc_reply_parse(m, 19, &r));

	/* Not a reply, an unknown reply id, an error without its HRESULT. */
	n = message(m, 20, 0x04, 0x00, NULL, 0);
	EXPECT_EQ_INT(-EBADMSG, tr_dnipc_reply_parse(m, n, &r));
	n = message(m, 20, 0xFF, 0x01, NULL, 0);
	EXPECT_EQ_INT(-EBADMSG, tr_dnipc_reply_parse(m, n, &r));
	n = message(m, 22, 0xFF, 0xFF, hr, 2);
	EXPECT_EQ_INT(-EBADMSG, tr_dnipc_reply_parse(m, n, &r));
	EXPECT_CONTAINS("HRESULT", r.why);
	n = message(m, 24, 0xFF, 0xFF, hr, 4);
	m[0] = 'd';
	EXPECT_EQ_INT(-EBADMSG, tr_dnipc_reply_parse(m, n, &r));
	EXPECT_CONTAINS("magic", r.why);
}

DEF_TEST(hresults_have_names_and_words)
{
	char buf[160];

	EXPECT_EQ_STR("DS_IPC_E_UNKNOWN_COMMAND", tr_dnipc_hresult_name(0x80131385u));
	EXPECT_EQ_STR("DS_IPC_E_BAD_ENCODING", tr_dnipc_hresult_name(0x80131384u));
	EXPECT_EQ_STR("DS_IPC_E_UNKNOWN_MAGIC", tr_dnipc_hresult_name(0x80131386u));
	EXPECT_EQ_STR("DS_IPC_E_NOTSUPPORTED", tr_dnipc_hresult_name(0x80131515u));
	EXPECT_EQ_STR("E_NOTIMPL", tr_dnipc_hresult_name(0x80004001u));
	EXPECT_TRUE(tr_dnipc_hresult_name(0x12345678u) == NULL);
	EXPECT_CONTAINS("DS_IPC_E_UNKNOWN_COMMAND (0x80131385: ",
			tr_dnipc_hresult_str(0x80131385u, buf, sizeof(buf)));
	EXPECT_EQ_STR("HRESULT 0x12345678", tr_dnipc_hresult_str(0x12345678u, buf, sizeof(buf)));
}

/* The payload of ProcessInfo2 as the runtime writes it. */
static void process_info2(struct tr_dnipc_buf *b, int version)
{
	static const uint8_t cookie[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

	tr_dnipc_buf_init(b);
	tr_dnipc_put_u64(b, 4242);
	tr_dnipc_put_bytes(b, cookie, sizeof(cookie));
	tr_dnipc_put_string(b, "/usr/share/dotnet/dotnet /app/H\xC3\xB6t.dll 60");
	tr_dnipc_put_string(b, "Linux");
	tr_dnipc_put_string(b, "x64");
	if (version >= 2) {
		tr_dnipc_put_string(b, "Hot");
		tr_dnipc_put_string(b, "10.0.12");
	}
}

DEF_TEST(process_info2_decodes_and_every_cut_is_refused)
{
	struct tr_dnipc_process_info pi;
	struct tr_dnipc_buf b;

	process_info2(&b, 2);
	CHECK_NOT_NULL(b.data);
	EXPECT_EQ_INT(0, tr_dnipc_process_info_decode(b.data, b.len, 2, &pi));
	EXPECT_EQ_INT(4242, pi.pid);
	EXPECT_EQ_INT(16, pi.cookie[15]);
	EXPECT_EQ_STR("/usr/share/dotnet/dotnet /app/H\xC3\xB6t.dll 60", pi.command_line);
	EXPECT_EQ_STR("Linux", pi.os);
	EXPECT_EQ_STR("x64", pi.arch);
	EXPECT_EQ_STR("Hot", pi.entrypoint);
	EXPECT_EQ_STR("10.0.12", pi.clr_version);
	tr_dnipc_process_info_free(&pi);

	/* ProcessInfo (1) has no entry point nor version; bytes of a later
	 * version after the known fields are ignored. */
	EXPECT_EQ_INT(0, tr_dnipc_process_info_decode(b.data, b.len, 1, &pi));
	EXPECT_EQ_STR("x64", pi.arch);
	EXPECT_TRUE(pi.entrypoint == NULL && pi.clr_version == NULL);
	tr_dnipc_process_info_free(&pi);

	for (size_t cut = 0; cut < b.len; cut++) {
		int ret = tr_dnipc_process_info_decode(b.data, cut, 2, &pi);

		if (ret != -EBADMSG)
			TEST_FAIL("cut at %zu of %zu: %d", cut, b.len, ret);
		tr_dnipc_process_info_free(&pi);
	}
	tr_dnipc_buf_free(&b);
}

DEF_TEST(tmpdir_comes_from_the_environment_block)
{
	static const char env[] = "HOME=/root\0TMPDIR=/var/tmp/x\0TMPDIR=/second\0";
	static const char none[] = "HOME=/root\0TMPDIRX=/no\0";
	static const char empty[] = "TMPDIR=\0";
	static const char relative[] = "TMPDIR=tmp\0";
	static const char unterminated[] = { 'T', 'M', 'P', 'D', 'I', 'R', '=', '/', 'a' };
	char out[16];

	EXPECT_EQ_INT(0, tr_dnipc_environ_tmpdir(env, sizeof(env) - 1, out, sizeof(out)));
	EXPECT_EQ_STR("/var/tmp/x", out);
	EXPECT_EQ_INT(0, tr_dnipc_environ_tmpdir(none, sizeof(none) - 1, out, sizeof(out)));
	EXPECT_EQ_STR("/tmp", out);
	EXPECT_EQ_INT(0, tr_dnipc_environ_tmpdir(empty, sizeof(empty) - 1, out, sizeof(out)));
	EXPECT_EQ_STR("/tmp", out);
	EXPECT_EQ_INT(0, tr_dnipc_environ_tmpdir("", 0, out, sizeof(out)));
	EXPECT_EQ_STR("/tmp", out);
	EXPECT_EQ_INT(-EINVAL, tr_dnipc_environ_tmpdir(relative, sizeof(relative) - 1, out, sizeof(out)));
	EXPECT_EQ_INT(0, tr_dnipc_environ_tmpdir(unterminated, sizeof(unterminated), out, sizeof(out)));
	EXPECT_EQ_STR("/a", out);
	EXPECT_EQ_INT(-ENAMETOOLONG, tr_dnipc_environ_tmpdir(env, sizeof(env) - 1, out, 10));
}

DEF_TEST(socket_names_are_matched_whole)
{
	unsigned long long key = 0;

	EXPECT_EQ_INT(1, tr_dnipc_socket_name_key("dotnet-diagnostic-12-38402-socket", 12, &key));
	EXPECT_EQ_INT(38402, key);
	EXPECT_EQ_INT(0, tr_dnipc_socket_name_key("dotnet-diagnostic-123-38402-socket", 12, &key));
	EXPECT_EQ_INT(0, tr_dnipc_socket_name_key("dotnet-diagnostic-12-38402-socket", 1, &key));
	EXPECT_EQ_INT(0, tr_dnipc_socket_name_key("dotnet-diagnostic-12--socket", 12, &key));
	EXPECT_EQ_INT(0, tr_dnipc_socket_name_key("dotnet-diagnostic-12-1-socket.bak", 12, &key));
	EXPECT_EQ_INT(0, tr_dnipc_socket_name_key("dotnet-diagnostic-12-1x-socket", 12, &key));
	EXPECT_EQ_INT(0, tr_dnipc_socket_name_key("dotnet-diagnostic-12-99999999999999999999999-socket",
						   12, &key));
}

/* ---- the client against fake servers -------------------------------------- */

static char tmpdir[PATH_MAX];
static char sockpath[PATH_MAX + 80];

enum mode {
	SERVE_INFO2,    /* ProcessInfo2 answered */
	SERVE_INFO1,    /* ProcessInfo2 unknown, ProcessInfo answered (two connections) */
	SERVE_ENABLE,   /* EnablePerfMap with a uint32 3 expected */
	SERVE_MUTE,     /* accepts, never answers */
	SERVE_LIAR,     /* a header whose size is below 20 */
	SERVE_SHORT,    /* a header announcing more than is sent, then closed */
	SERVE_HANGUP,   /* accepts and closes */
	SERVE_NOTHING,  /* the listener is closed: nobody listens */
};

static int read_all(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Reads one request; its command id, or -1. */
static int request(int c, uint8_t *payload, size_t *len)
{
	uint8_t h[20];
	size_t size;

	if (read_all(c, h, 20) < 0 || memcmp(h, magic, 14) != 0 || h[16] != TR_DNIPC_SET_PROCESS)
		return -1;
	size = (size_t)(h[14] | h[15] << 8);
	if (size < 20 || size - 20 > 64 || read_all(c, payload, size - 20) < 0)
		return -1;
	*len = size - 20;
	return h[17];
}

static void reply(int c, uint8_t id, const void *payload, size_t len)
{
	uint8_t m[1024];
	size_t n = message(m, (uint16_t)(20 + len), 0xFF, id, payload, len);

	if (write(c, m, n) != (ssize_t)n)
		_exit(3);
}

static void serve_child(int l, enum mode mode)
{
	static const uint8_t unknown[4] = { 0x85, 0x13, 0x13, 0x80 };
	static const uint8_t zero[4] = { 0, 0, 0, 0 };
	struct tr_dnipc_buf b;
	uint8_t payload[64], m[64];
	size_t len;
	int c = accept(l, NULL, NULL), id;

	if (c < 0)
		_exit(2);
	switch (mode) {
	case SERVE_INFO2:
		if (request(c, payload, &len) != TR_DNIPC_PROCESS_INFO2 || len)
			_exit(4);
		process_info2(&b, 2);
		reply(c, 0x00, b.data, b.len);
		break;
	case SERVE_INFO1:
		if (request(c, payload, &len) != TR_DNIPC_PROCESS_INFO2)
			_exit(4);
		reply(c, 0xFF, unknown, 4);
		close(c);
		c = accept(l, NULL, NULL);
		if (c < 0 || request(c, payload, &len) != TR_DNIPC_PROCESS_INFO)
			_exit(5);
		process_info2(&b, 1);
		reply(c, 0x00, b.data, b.len);
		break;
	case SERVE_ENABLE:
		id = request(c, payload, &len);
		if (id != TR_DNIPC_ENABLE_PERFMAP || len != 4 || memcmp(payload, "\3\0\0\0", 4) != 0)
			_exit(4);
		reply(c, 0x00, zero, 4);
		break;
	case SERVE_MUTE:
		pause();
		break;
	case SERVE_LIAR:
		if (request(c, payload, &len) < 0)
			_exit(4);
		len = message(m, 10, 0xFF, 0x00, NULL, 0);
		if (write(c, m, len) != (ssize_t)len)
			_exit(3);
		pause(); /* the client must not wait for more */
		break;
	case SERVE_SHORT:
		if (request(c, payload, &len) < 0)
			_exit(4);
		len = message(m, 200, 0xFF, 0x00, zero, 4);
		if (write(c, m, len) != (ssize_t)len)
			_exit(3);
		break;
	default:
		break;
	}
	close(c);
	_exit(0);
}

/* A fake runtime on this process's socket name; its pid (0 for
 * SERVE_NOTHING, whose socket file has no listener). */
static pid_t serve(enum mode mode)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(sockpath);
	pid_t child;
	int l;

	if (n >= sizeof(sa.sun_path))
		return -1;
	unlink(sockpath);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return -1;
	memcpy(sa.sun_path, sockpath, n + 1);
	if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 4) < 0) {
		close(l);
		return -1;
	}
	if (mode == SERVE_NOTHING) {
		close(l);
		return 0;
	}
	fflush(stdout);
	child = fork();
	if (child == 0)
		serve_child(l, mode);
	close(l);
	return child;
}

/* The child's exit status (it checked what it was sent), killed first when
 * it still waits. */
static int reap(pid_t child)
{
	int status = 0;

	if (child <= 0)
		return child;
	kill(child, SIGKILL);
	if (waitpid(child, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

static int64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

DEF_TEST(locate_uses_the_process_tmpdir_and_start_time)
{
	struct tr_dnipc_status st;
	pid_t child = serve(SERVE_NOTHING);
	int fd;

	CHECK_NOT_NULL(child == 0 ? sockpath : NULL);
	fd = tr_dnipc_locate(getpid(), &st);
	EXPECT_TRUE(fd >= 0);
	if (fd >= 0)
		close(fd);
	EXPECT_EQ_STR(tmpdir, st.tmpdir);
	EXPECT_EQ_INT(1, st.exact);
	EXPECT_EQ_INT(getpid(), st.nspid);
	EXPECT_TRUE(S_ISSOCK(st.st.st_mode));
	unlink(sockpath);
}

DEF_TEST(process_info2_through_a_socket)
{
	struct tr_dnipc_process_info pi;
	struct tr_dnipc_status st;
	pid_t child = serve(SERVE_INFO2);

	CHECK_NOT_NULL(child > 0 ? sockpath : NULL);
	EXPECT_EQ_INT(0, tr_dnipc_process_info(getpid(), 5000, &pi, &st));
	EXPECT_EQ_INT(2, pi.version);
	EXPECT_EQ_STR("ProcessInfo2", st.command);
	EXPECT_EQ_STR("10.0.12", pi.clr_version);
	EXPECT_EQ_STR("Hot", pi.entrypoint);
	tr_dnipc_process_info_free(&pi);
	EXPECT_EQ_INT(0, reap(child));
	unlink(sockpath);
}

DEF_TEST(process_info_when_process_info2_is_unknown)
{
	struct tr_dnipc_process_info pi;
	struct tr_dnipc_status st;
	pid_t child = serve(SERVE_INFO1);

	CHECK_NOT_NULL(child > 0 ? sockpath : NULL);
	EXPECT_EQ_INT(0, tr_dnipc_process_info(getpid(), 5000, &pi, &st));
	EXPECT_EQ_INT(1, pi.version);
	EXPECT_EQ_STR("ProcessInfo", st.command);
	EXPECT_EQ_STR("Linux", pi.os);
	EXPECT_TRUE(pi.clr_version == NULL);
	tr_dnipc_process_info_free(&pi);
	EXPECT_EQ_INT(0, reap(child));
	unlink(sockpath);
}

DEF_TEST(enable_perfmap_sends_its_type)
{
	struct tr_dnipc_status st;
	pid_t child = serve(SERVE_ENABLE);

	CHECK_NOT_NULL(child > 0 ? sockpath : NULL);
	EXPECT_EQ_INT(0, tr_dnipc_enable_perfmap(getpid(), TR_DNIPC_PERFMAP_MAP, 5000, &st));
	EXPECT_EQ_INT(0, reap(child));
	EXPECT_EQ_INT(-EINVAL, tr_dnipc_enable_perfmap(getpid(), (enum tr_dnipc_perfmap)0, 5000, &st));
	EXPECT_EQ_INT(-EINVAL, tr_dnipc_enable_perfmap(getpid(), (enum tr_dnipc_perfmap)4, 5000, &st));
	unlink(sockpath);
}

DEF_TEST(a_server_that_never_answers_times_out)
{
	struct tr_dnipc_status st;
	pid_t child = serve(SERVE_MUTE);
	char words[PATH_MAX + 400];
	int64_t t0 = ms_now(), took;

	CHECK_NOT_NULL(child > 0 ? sockpath : NULL);
	EXPECT_EQ_INT(-ETIMEDOUT, tr_dnipc_disable_perfmap(getpid(), 300, &st));
	took = ms_now() - t0;
	if (took < 250 || took > 3000)
		TEST_FAIL("took %lld ms for a 300 ms deadline", (long long)took);
	EXPECT_CONTAINS("no answer to DisablePerfMap within 300 ms",
			tr_dnipc_explain(&st, -ETIMEDOUT, words, sizeof(words)));
	reap(child);
	unlink(sockpath);
}

DEF_TEST(lying_short_and_silent_replies_are_errors)
{
	struct tr_dnipc_status st;
	char words[PATH_MAX + 400];
	pid_t child;

	child = serve(SERVE_LIAR);
	CHECK_NOT_NULL(child > 0 ? sockpath : NULL);
	EXPECT_EQ_INT(-EBADMSG, tr_dnipc_disable_perfmap(getpid(), 3000, &st));
	EXPECT_CONTAINS("below the header", tr_dnipc_explain(&st, -EBADMSG, words, sizeof(words)));
	reap(child);

	child = serve(SERVE_SHORT);
	CHECK_NOT_NULL(child > 0 ? sockpath : NULL);
	EXPECT_EQ_INT(-EBADMSG, tr_dnipc_disable_perfmap(getpid(), 3000, &st));
	EXPECT_CONTAINS("before the end", tr_dnipc_explain(&st, -EBADMSG, words, sizeof(words)));
	reap(child);

	child = serve(SERVE_HANGUP);
	CHECK_NOT_NULL(child > 0 ? sockpath : NULL);
	EXPECT_EQ_INT(-ECONNRESET, tr_dnipc_disable_perfmap(getpid(), 3000, &st));
	reap(child);

	EXPECT_EQ_INT(0, serve(SERVE_NOTHING));
	EXPECT_EQ_INT(-ECONNREFUSED, tr_dnipc_disable_perfmap(getpid(), 3000, &st));
	EXPECT_CONTAINS("nobody listens", tr_dnipc_explain(&st, -ECONNREFUSED, words, sizeof(words)));
	unlink(sockpath);
}

DEF_TEST(links_files_and_strangers_are_refused)
{
	struct tr_dnipc_status st;
	char other[PATH_MAX + 80], words[PATH_MAX + 400];
	int fd;

	/* A link to a real socket of the same directory. */
	snprintf(other, sizeof(other), "%s/elsewhere", tmpdir);
	EXPECT_EQ_INT(0, serve(SERVE_NOTHING));
	EXPECT_EQ_INT(0, rename(sockpath, other));
	EXPECT_EQ_INT(0, symlink(other, sockpath));
	EXPECT_EQ_INT(-EPERM, tr_dnipc_locate(getpid(), &st));
	EXPECT_EQ_INT(TR_DNIPC_REFUSED_SYMLINK, st.refusal);
	EXPECT_CONTAINS("is a symbolic link", tr_dnipc_explain(&st, -EPERM, words, sizeof(words)));
	unlink(sockpath);

	fd = open(sockpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	EXPECT_TRUE(fd >= 0);
	if (fd >= 0)
		close(fd);
	EXPECT_EQ_INT(-EPERM, tr_dnipc_locate(getpid(), &st));
	EXPECT_EQ_INT(TR_DNIPC_REFUSED_NOT_SOCKET, st.refusal);
	EXPECT_CONTAINS("is a regular file, not a socket",
			tr_dnipc_explain(&st, -EPERM, words, sizeof(words)));
	unlink(sockpath);

	/* Owned by another user: only root can make one. */
	if (geteuid() == 0) {
		EXPECT_EQ_INT(0, serve(SERVE_NOTHING));
		EXPECT_EQ_INT(0, lchown(sockpath, 4242, 4242));
		EXPECT_EQ_INT(-EPERM, tr_dnipc_locate(getpid(), &st));
		EXPECT_EQ_INT(TR_DNIPC_REFUSED_OWNER, st.refusal);
		EXPECT_CONTAINS("belongs to uid 4242",
				tr_dnipc_explain(&st, -EPERM, words, sizeof(words)));
		unlink(sockpath);
	}
	unlink(other);
}

DEF_TEST(without_the_exact_name_the_newest_of_the_pid_is_taken)
{
	struct tr_dnipc_status st;
	char older[PATH_MAX + 80], newer[PATH_MAX + 80], words[PATH_MAX + 400];
	struct timespec times[2] = { { 1000, 0 }, { 1000, 0 } };
	int fd;

	fd = tr_dnipc_locate(getpid(), &st);
	EXPECT_EQ_INT(-ENOENT, fd);
	EXPECT_CONTAINS("no diagnostic socket dotnet-diagnostic-",
			tr_dnipc_explain(&st, -ENOENT, words, sizeof(words)));

	/* Key 1 is older by its name and newer by its time: time wins. */
	snprintf(older, sizeof(older), "%s/dotnet-diagnostic-%d-2-socket", tmpdir, (int)getpid());
	snprintf(newer, sizeof(newer), "%s/dotnet-diagnostic-%d-1-socket", tmpdir, (int)getpid());
	EXPECT_EQ_INT(0, serve(SERVE_NOTHING));
	EXPECT_EQ_INT(0, rename(sockpath, older));
	EXPECT_EQ_INT(0, serve(SERVE_NOTHING));
	EXPECT_EQ_INT(0, rename(sockpath, newer));
	EXPECT_EQ_INT(0, utimensat(AT_FDCWD, older, times, AT_SYMLINK_NOFOLLOW));
	fd = tr_dnipc_locate(getpid(), &st);
	EXPECT_TRUE(fd >= 0);
	if (fd >= 0)
		close(fd);
	EXPECT_EQ_INT(0, st.exact);
	EXPECT_CONTAINS("-1-socket", st.name);
	unlink(older);
	unlink(newer);
}

DEF_TEST(no_such_process)
{
	struct tr_dnipc_status st;
	char words[128];
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	CHECK_NOT_NULL(child > 0 ? "forked" : NULL);
	waitpid(child, NULL, 0);
	EXPECT_EQ_INT(-ESRCH, tr_dnipc_locate(child, &st));
	EXPECT_CONTAINS("no process", tr_dnipc_explain(&st, -ESRCH, words, sizeof(words)));
}

/* Runs again with TMPDIR naming a fresh directory, which the runtime side
 * (this very process, seen through /proc) must be found in. */
static int with_own_tmpdir(char **argv)
{
	const char *dir = getenv("TEST_DNIPC_TMPDIR");
	char tmpl[] = "/tmp/test_dotnetipc.XXXXXX";
	unsigned long long key;

	if (!dir) {
		if (!mkdtemp(tmpl))
			return -1;
		if (setenv("TMPDIR", tmpl, 1) < 0 || setenv("TEST_DNIPC_TMPDIR", tmpl, 1) < 0)
			return -1;
		execv("/proc/self/exe", argv);
		rmdir(tmpl);
		return -1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", dir);
	if (tr_proc_stat_field(getpid(), 22, &key) < 0)
		return -1;
	snprintf(sockpath, sizeof(sockpath), "%s/dotnet-diagnostic-%d-%llu-socket", tmpdir,
		 (int)getpid(), key);
	return 0;
}

int main(int argc, char **argv)
{
	int live;

	(void)argc;
	live = with_own_tmpdir(argv) == 0;

	RUN_TEST(header_is_magic_size_command_reserved);
	RUN_TEST(strings_are_utf16_with_their_nul_counted);
	RUN_TEST(invalid_utf8_is_not_sent_and_the_error_sticks);
	RUN_TEST(payload_is_bounded_by_the_uint16_size);
	RUN_TEST(strings_decode_to_valid_utf8);
	RUN_TEST(hostile_string_lengths_are_refused_before_allocating);
	RUN_TEST(replies_are_parsed_against_their_declared_size);
	RUN_TEST(hresults_have_names_and_words);
	RUN_TEST(process_info2_decodes_and_every_cut_is_refused);
	RUN_TEST(tmpdir_comes_from_the_environment_block);
	RUN_TEST(socket_names_are_matched_whole);
	if (live && tr_untrusted_usable()) {
		RUN_TEST(locate_uses_the_process_tmpdir_and_start_time);
		RUN_TEST(process_info2_through_a_socket);
		RUN_TEST(process_info_when_process_info2_is_unknown);
		RUN_TEST(enable_perfmap_sends_its_type);
		RUN_TEST(a_server_that_never_answers_times_out);
		RUN_TEST(lying_short_and_silent_replies_are_errors);
		RUN_TEST(links_files_and_strangers_are_refused);
		RUN_TEST(without_the_exact_name_the_newest_of_the_pid_is_taken);
		RUN_TEST(no_such_process);
	} else {
		SKIP_TEST(fake_servers, "no TMPDIR of our own or no openat2(2) (Linux < 5.6)");
	}
	if (live)
		rmdir(tmpdir);
	TEST_MAIN_END();
}
