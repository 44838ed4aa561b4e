/* The EventPipe session protocol against a runtime played by this test over
 * a socket pair: CollectTracing's payload byte for byte (what ds-eventpipe-
 * protocol.c parses), the reply's session id, the stream copied whole into
 * the file, an error reply by its HRESULT, StopTracing on a connection of
 * its own, and tracerig's diagnostic port: a runtime's advertise, its PID
 * from the kernel, the DOTNET_DiagnosticPorts value. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "port.h"
#include "providers.h"
#include "session.h"
#include "testing.h"

static size_t put_header(uint8_t *out, uint16_t size, uint8_t set, uint8_t id)
{
	memcpy(out, "DOTNET_IPC_V1", 14);
	out[14] = (uint8_t)size;
	out[15] = (uint8_t)(size >> 8);
	out[16] = set;
	out[17] = id;
	out[18] = out[19] = 0;
	return 20;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

DEF_TEST(collect_payload_is_what_the_runtime_parses)
{
	struct ep_providers p = { 0 };
	struct ep_request req = { .providers = &p, .buffer_mb = 64, .rundown = 1 };
	struct tr_dnipc_buf b;
	char why[256];
	const uint8_t *d;

	EXPECT_EQ_INT(0, ep_providers_add(&p, "Microsoft-Windows-DotNETRuntime:0x8001:4", why,
					  sizeof(why)));
	tr_dnipc_buf_init(&b);
	EXPECT_EQ_INT(0, ep_collect_payload(&b, 2, &req));
	d = b.data;
	/* circularBufferMB, format (NetTrace), requestRundown, one provider */
	EXPECT_EQ_INT(64, le32(d));
	EXPECT_EQ_INT(1, le32(d + 4));
	EXPECT_EQ_INT(1, d[8]);
	EXPECT_EQ_INT(1, le32(d + 9));
	EXPECT_TRUE(le64(d + 13) == 0x8001);
	EXPECT_EQ_INT(4, le32(d + 21));
	/* the name: length in UTF-16 units with its NUL, then UTF-16LE */
	EXPECT_EQ_INT(strlen("Microsoft-Windows-DotNETRuntime") + 1, le32(d + 25));
	EXPECT_EQ_INT('M', d[29]);
	EXPECT_EQ_INT(0, d[30]);
	/* no filter data: a length-0 string, and nothing after it */
	EXPECT_EQ_INT(0, le32(d + 29 + 2 * 32));
	EXPECT_EQ_INT(29 + 2 * 32 + 4, b.len);
	tr_dnipc_buf_free(&b);

	/* CollectTracing (version 1) has no rundown byte. */
	tr_dnipc_buf_init(&b);
	EXPECT_EQ_INT(0, ep_collect_payload(&b, 1, &req));
	EXPECT_EQ_INT(1, le32(b.data + 8));
	EXPECT_EQ_INT(29 + 2 * 32 + 4 - 1, b.len);
	tr_dnipc_buf_free(&b);
	ep_providers_free(&p);
}

/* The runtime's side of one connection. */
struct fake_runtime {
	int fd;
	uint8_t command_id;      /* what it expects */
	int refuse;              /* answer with an error HRESULT instead */
	size_t stream_len;       /* bytes it streams after an OK, then closes */
	uint8_t got[4096];       /* the message it read */
	size_t got_len;
};

static void *runtime_side(void *arg)
{
	struct fake_runtime *f = arg;
	uint8_t reply[64];
	size_t n;
	ssize_t r;

	/* One message: its header says its size. */
	while (f->got_len < 20 || f->got_len < (size_t)(f->got[14] | f->got[15] << 8)) {
		r = read(f->fd, f->got + f->got_len, sizeof(f->got) - f->got_len);
		if (r <= 0)
			break;
		f->got_len += (size_t)r;
	}
	if (f->refuse) {
		n = put_header(reply, 24, 0xFF, 0xFF);
		reply[n++] = 0x85; /* DS_IPC_E_UNKNOWN_COMMAND, little-endian */
		reply[n++] = 0x13;
		reply[n++] = 0x13;
		reply[n++] = 0x80;
		(void)!write(f->fd, reply, n);
		close(f->fd);
		return NULL;
	}
	n = put_header(reply, 28, 0xFF, 0x00);
	for (int i = 0; i < 8; i++)
		reply[n++] = (uint8_t)(0x1122334455667788ull >> (8 * i));
	(void)!write(f->fd, reply, n);
	for (size_t sent = 0; sent < f->stream_len;) {
		uint8_t chunk[1000];
		size_t k = f->stream_len - sent < sizeof(chunk) ? f->stream_len - sent : sizeof(chunk);

		for (size_t i = 0; i < k; i++)
			chunk[i] = (uint8_t)(sent + i);
		r = write(f->fd, chunk, k);
		if (r <= 0)
			break;
		sent += (size_t)r;
	}
	close(f->fd);
	return NULL;
}

DEF_TEST(a_session_streams_into_its_file_to_the_end)
{
	struct ep_providers p = { 0 };
	struct ep_request req = { .providers = &p, .buffer_mb = 16, .rundown = 1 };
	struct fake_runtime f = { .stream_len = 300000 };
	struct ep_session s;
	char dir[] = "/tmp/test_eventpipe.XXXXXX", why[256], path[256];
	uint64_t id = 0;
	uint32_t hresult = 1;
	pthread_t t;
	int sv[2];
	struct stat st;
	FILE *in;
	int ok = 1;

	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, ep_providers_add(&p, "gc", why, sizeof(why)));
	EXPECT_EQ_INT(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	f.fd = sv[1];
	EXPECT_EQ_INT(0, pthread_create(&t, NULL, runtime_side, &f));
	EXPECT_EQ_INT(0, ep_collect(sv[0], 2, &req, 2000, &id, &hresult));
	EXPECT_TRUE(id == 0x1122334455667788ull);
	EXPECT_EQ_INT(0, hresult);
	EXPECT_EQ_INT(0, ep_session_open(&s, dir, 4242, "my app;x", sv[0], 2, id));
	EXPECT_EQ_STR("my_app_x.4242.nettrace", s.entry);
	while (s.state == EP_STREAMING)
		if (ep_session_pump(&s) == 0)
			usleep(1000);
	pthread_join(t, NULL);
	EXPECT_EQ_INT(EP_ENDED, s.state);
	EXPECT_TRUE(s.bytes == 300000);
	EXPECT_EQ_INT(0, ep_session_close(&s));
	/* CollectTracing2 in the EventPipe command set */
	EXPECT_EQ_INT(0x02, f.got[16]);
	EXPECT_EQ_INT(0x03, f.got[17]);
	snprintf(path, sizeof(path), "%s/%s", dir, s.entry);
	EXPECT_EQ_INT(0, stat(path, &st));
	EXPECT_EQ_INT(300000, st.st_size);
	in = fopen(path, "rb");
	CHECK_NOT_NULL(in);
	for (size_t i = 0; i < 300000 && ok; i++) {
		int c = fgetc(in);
		/* chunks of 1000 bytes, each counting up from its offset */
		ok = c == (int)(uint8_t)i;
	}
	EXPECT_TRUE(ok);
	fclose(in);
	unlink(path);
	rmdir(dir);
	ep_providers_free(&p);
}

DEF_TEST(a_refusal_is_its_hresult)
{
	struct ep_providers p = { 0 };
	struct ep_request req = { .providers = &p, .buffer_mb = 16 };
	struct fake_runtime f = { .refuse = 1 };
	char why[256];
	uint64_t id = 0;
	uint32_t hresult = 0;
	pthread_t t;
	int sv[2];

	EXPECT_EQ_INT(0, ep_providers_add(&p, "exceptions", why, sizeof(why)));
	EXPECT_EQ_INT(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	f.fd = sv[1];
	EXPECT_EQ_INT(0, pthread_create(&t, NULL, runtime_side, &f));
	EXPECT_EQ_INT(-EREMOTEIO, ep_collect(sv[0], 2, &req, 2000, &id, &hresult));
	EXPECT_TRUE(hresult == TR_DS_IPC_E_UNKNOWN_COMMAND);
	pthread_join(t, NULL);
	close(sv[0]);
	ep_providers_free(&p);
}

DEF_TEST(stop_tracing_names_the_session)
{
	struct fake_runtime f = { 0 };
	struct tr_dnipc_status st;
	pthread_t t;
	int sv[2];

	EXPECT_EQ_INT(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	f.fd = sv[1];
	EXPECT_EQ_INT(0, pthread_create(&t, NULL, runtime_side, &f));
	/* ep_stop_tracing closes the connection it is given. */
	EXPECT_EQ_INT(0, ep_stop_tracing(1, sv[0], 0xabcdef, 2000, &st));
	pthread_join(t, NULL);
	EXPECT_EQ_INT(28, f.got_len);
	EXPECT_EQ_INT(0x02, f.got[16]);
	EXPECT_EQ_INT(0x01, f.got[17]);
	EXPECT_TRUE(le64(f.got + 20) == 0xabcdef);
}

DEF_TEST(the_port_knows_a_runtime_by_its_advertise_and_pid)
{
	struct ep_port port;
	struct ep_advertise a;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint8_t adv[EP_ADVERTISE_SIZE] = "ADVR_V1";
	char value[512];
	pid_t pid = 0;
	int c, fd;

	EXPECT_EQ_INT(0, ep_port_open(&port));
	EXPECT_EQ_INT(-EAGAIN, ep_port_accept(&port, 100, &pid, &a));
	/* A runtime: connects, says who it is. */
	for (int i = 0; i < 16; i++)
		adv[8 + i] = (uint8_t)(0xa0 + i);
	for (int i = 0; i < 8; i++)
		adv[24 + i] = (uint8_t)(1234567ull >> (8 * i));
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memcpy(sa.sun_path, port.path, strlen(port.path) + 1);
	EXPECT_EQ_INT(0, connect(c, (struct sockaddr *)&sa, sizeof(sa)));
	EXPECT_EQ_INT(EP_ADVERTISE_SIZE, write(c, adv, sizeof(adv)));
	fd = ep_port_accept(&port, 2000, &pid, &a);
	EXPECT_TRUE(fd >= 0);
	EXPECT_EQ_INT(getpid(), pid); /* from the kernel, not from what it says */
	EXPECT_EQ_INT(1234567, a.pid);
	EXPECT_EQ_INT(0xa5, a.cookie[5]);
	close(fd);
	close(c);

	/* Not a runtime: refused by its first bytes. */
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	EXPECT_EQ_INT(0, connect(c, (struct sockaddr *)&sa, sizeof(sa)));
	memcpy(adv, "GET / HT", 8);
	EXPECT_EQ_INT(EP_ADVERTISE_SIZE, write(c, adv, sizeof(adv)));
	EXPECT_EQ_INT(-EBADMSG, ep_port_accept(&port, 2000, &pid, &a));
	close(c);
	/* One that says nothing: given up at the deadline. */
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	EXPECT_EQ_INT(0, connect(c, (struct sockaddr *)&sa, sizeof(sa)));
	EXPECT_EQ_INT(-ETIMEDOUT, ep_port_accept(&port, 100, &pid, &a));
	close(c);

	EXPECT_EQ_INT(0, ep_port_env_value(&port, NULL, 1, value, sizeof(value)));
	EXPECT_TRUE(strstr(value, port.path) == value);
	EXPECT_TRUE(strcmp(value + strlen(port.path), ",suspend") == 0);
	EXPECT_EQ_INT(0, ep_port_env_value(&port, "/run/mine.sock", 0, value, sizeof(value)));
	EXPECT_TRUE(strncmp(value, "/run/mine.sock;", 15) == 0);
	EXPECT_TRUE(strstr(value, ",nosuspend") != NULL);
	{
		char dir[64];

		snprintf(dir, sizeof(dir), "%s", port.dir);
		ep_port_close(&port);
		EXPECT_TRUE(access(dir, F_OK) < 0); /* nothing left in /tmp */
	}
}

int main(void)
{
	RUN_TEST(collect_payload_is_what_the_runtime_parses);
	RUN_TEST(a_session_streams_into_its_file_to_the_end);
	RUN_TEST(a_refusal_is_its_hresult);
	RUN_TEST(stop_tracing_names_the_session);
	RUN_TEST(the_port_knows_a_runtime_by_its_advertise_and_pid);
	TEST_MAIN_END();
}
