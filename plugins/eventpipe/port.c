/* tracerig's diagnostic port: see port.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/dotnetipc.h"
#include "port.h"

static const uint8_t advertise_magic[8] = "ADVR_V1";

int ep_port_open(struct ep_port *p)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int ret;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	snprintf(p->dir, sizeof(p->dir), "/tmp/tracerig-eventpipe.XXXXXX");
	if (!mkdtemp(p->dir)) {
		p->dir[0] = '\0';
		return -errno;
	}
	snprintf(p->path, sizeof(p->path), "%s/port", p->dir);
	p->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		ret = -errno;
		goto fail;
	}
	memcpy(sa.sun_path, p->path, strlen(p->path) + 1);
	if (bind(p->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(p->fd, 16) < 0) {
		ret = -errno;
		goto fail;
	}
	return 0;
fail:
	ep_port_close(p);
	return ret;
}

void ep_port_close(struct ep_port *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	if (p->path[0])
		unlink(p->path);
	if (p->dir[0])
		rmdir(p->dir);
	p->path[0] = p->dir[0] = '\0';
}

int ep_advertise_parse(const uint8_t in[EP_ADVERTISE_SIZE], struct ep_advertise *a)
{
	if (memcmp(in, advertise_magic, sizeof(advertise_magic)) != 0)
		return -EBADMSG;
	memcpy(a->cookie, in + 8, sizeof(a->cookie));
	a->pid = 0;
	for (int i = 7; i >= 0; i--)
		a->pid = a->pid << 8 | in[24 + i];
	return 0;
}

int ep_port_accept(struct ep_port *p, int timeout_ms, pid_t *host_pid, struct ep_advertise *a)
{
	uint8_t buf[EP_ADVERTISE_SIZE];
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd, ret;

	fd = accept4(p->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		ret = -errno;
		goto fail;
	}
	*host_pid = cred.pid;
	ret = tr_dnipc_recv_exact(fd, buf, sizeof(buf), timeout_ms);
	if (ret == 0)
		ret = ep_advertise_parse(buf, a);
	if (ret == 0)
		return fd;
fail:
	close(fd);
	return ret;
}

int ep_port_env_value(const struct ep_port *p, const char *existing, int suspend, char *out,
		      size_t len)
{
	int n;

	if (existing && *existing)
		n = snprintf(out, len, "%s;%s,%s", existing, p->path,
			     suspend ? "suspend" : "nosuspend");
	else
		n = snprintf(out, len, "%s,%s", p->path, suspend ? "suspend" : "nosuspend");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
