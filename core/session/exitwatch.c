/* Process exits from the process events connector (see exitwatch.h). */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "exitwatch.h"

int tr_exitwatch_open(void)
{
	struct sockaddr_nl self = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	struct {
		struct nlmsghdr nl;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) req;
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&self, sizeof(self)) < 0)
		goto fail;
	memset(&req, 0, sizeof(req));
	req.nl.nlmsg_len = sizeof(req);
	req.nl.nlmsg_type = NLMSG_DONE;
	req.nl.nlmsg_pid = (uint32_t)getpid();
	req.cn.id.idx = CN_IDX_PROC;
	req.cn.id.val = CN_VAL_PROC;
	req.cn.len = sizeof(req.op);
	req.op = PROC_CN_MCAST_LISTEN;
	if (send(fd, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
		goto fail;
	return fd;
fail:
	err = errno;
	close(fd);
	return -err;
}

int tr_exitwatch_read(int fd, void (*fn)(void *arg, pid_t pid, int status), void *arg)
{
	/* Aligned for the headers the messages are read through. */
	union {
		char bytes[8192];
		struct nlmsghdr align;
	} buf;
	int lost = 0;

	for (;;) {
		struct sockaddr_nl from;
		socklen_t from_len = sizeof(from);
		ssize_t len = recvfrom(fd, buf.bytes, sizeof(buf.bytes), 0, (struct sockaddr *)&from,
				       &from_len);
		struct nlmsghdr *nl;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) { /* the queue overflowed: go on */
				lost = 1;
				continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -errno;
		}
		/* Only the kernel speaks for process events: anything a local
		 * process sent is not believed. */
		if (from_len != sizeof(from) || from.nl_pid != 0)
			continue;
		for (nl = &buf.align; NLMSG_OK(nl, (size_t)len); nl = NLMSG_NEXT(nl, len)) {
			const struct cn_msg *cn;
			struct proc_event ev;

			if (nl->nlmsg_type == NLMSG_ERROR || nl->nlmsg_type == NLMSG_NOOP)
				continue;
			if (nl->nlmsg_len < NLMSG_LENGTH(sizeof(*cn) + sizeof(ev)))
				continue;
			cn = NLMSG_DATA(nl);
			if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC ||
			    cn->len < sizeof(ev))
				continue;
			/* The event follows a 20-byte header: copied out, as its
			 * 64-bit fields are not aligned where they arrive. */
			memcpy(&ev, cn->data, sizeof(ev));
			/* A thread's end is not its process's. */
			if (ev.what != PROC_EVENT_EXIT ||
			    ev.event_data.exit.process_pid != ev.event_data.exit.process_tgid)
				continue;
			fn(arg, (pid_t)ev.event_data.exit.process_tgid, (int)ev.event_data.exit.exit_code);
		}
	}
	return lost ? -ENOBUFS : 0;
}

int tr_exit_is_crash(int status)
{
	if (!WIFSIGNALED(status))
		return 0;
	switch (WTERMSIG(status)) {
	case SIGSEGV: case SIGABRT: case SIGBUS: case SIGFPE: case SIGILL:
	case SIGSYS: case SIGTRAP: case SIGQUIT: case SIGXCPU: case SIGXFSZ:
		return 1;
	}
	return 0;
}

void tr_exit_describe(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status)) {
		const char *name = sigabbrev_np(WTERMSIG(status));
		const char *core = WCOREDUMP(status) ? " (core dumped)" : "";

		if (name)
			snprintf(buf, len, "killed by SIG%s%s", name, core);
		else
			snprintf(buf, len, "killed by signal %d%s", WTERMSIG(status), core);
	} else {
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	}
}
