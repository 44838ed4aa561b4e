/* Prints the PID of the LTTng session daemon that answers root's client
 * socket, from the socket's peer credentials; exits 1 when none answers.
 * The tests ask the daemon itself rather than its pid file: a daemon that
 * ends removes that file even when another has started meanwhile, and one
 * killed with SIGKILL leaves it naming a PID that may be anyone's since. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	const char *path = argc > 1 ? argv[1] : "/var/run/lttng/client-lttng-sessiond";
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd, ok;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "sessiond-pid: %s: path too long\n", path);
		return 2;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "sessiond-pid: socket: %s\n", strerror(errno));
		return 2;
	}
	ok = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
	     getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0;
	close(fd);
	if (!ok)
		return 1;
	printf("%d\n", (int)cred.pid);
	return 0;
}
