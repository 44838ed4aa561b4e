/* Control sockets of detached sessions: naming, the directory's checks,
 * listening and connecting.  What a session answers is in session.c;
 * the commands that ask are in detach.c. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "lib/sanitize.h"

#define NAME_MAX_LEN 64

const char *tr_control_dir(void)
{
	const char *dir = getenv("TRACERIG_RUNTIME_DIR");

	return dir && *dir ? dir : "/run/tracerig";
}

int tr_control_check_name(const char *name, char *why, size_t len)
{
	size_t n = strlen(name);

	/* A leading '-' would make `tracerig stop NAME` an option. */
	if (n == 0 || n > NAME_MAX_LEN || name[0] == '.' || name[0] == '-') {
		snprintf(why, len, "a session name has 1 to %d characters and does not start "
			 "with '.' or '-'", NAME_MAX_LEN);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-')) {
			snprintf(why, len, "'%c' cannot be in a session name (letters, digits, '.', "
				 "'_' and '-' can)", c);
			return -EINVAL;
		}
	}
	return 0;
}

int tr_control_check_dir(char *why, size_t len)
{
	const char *dir = tr_control_dir();
	struct stat st;

	/* Whoever could write there could plant a socket that answers `stop`
	 * with an archive path of their choosing or `status` with escape
	 * sequences, or read a session's log; a link could send the removal
	 * of a stale socket anywhere.  lstat: the link itself is refused. */
	if (lstat(dir, &st) < 0) {
		int err = -errno;

		snprintf(why, len, "cannot read %s: %s", dir, strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077)) {
		snprintf(why, len, "%s is not a directory of root's that only root can use "
			 "(%s, owner uid %u, mode %04o): remove it, and `tracerig start` creates it "
			 "again", dir, S_ISLNK(st.st_mode) ? "a symbolic link" :
			 S_ISDIR(st.st_mode) ? "a directory" : "not a directory",
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int tr_control_prepare_dir(char *why, size_t len)
{
	const char *dir = tr_control_dir();

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int err = -errno;

		snprintf(why, len, "cannot create %s: %s", dir, strerror(-err));
		return err;
	}
	return tr_control_check_dir(why, len);
}

int tr_control_file(const char *name, const char *suffix, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s%s", tr_control_dir(), name, suffix);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int socket_address(const char *name, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	return tr_control_file(name, ".sock", sa->sun_path, sizeof(sa->sun_path));
}

/* The session's side must be root or ourselves: a socket anyone else
 * listens on speaks for nobody we trust, whatever its name. */
static int peer_trusted(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	return cred.uid == 0 || cred.uid == geteuid() ? 0 : -EACCES;
}

int tr_control_connect(const char *name)
{
	struct sockaddr_un sa;
	struct stat st;
	char why[8];
	int fd, ret;

	if ((ret = tr_control_check_dir(why, sizeof(why))) < 0)
		return ret;
	if ((ret = socket_address(name, &sa)) < 0)
		return ret;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		close(fd);
		/* Refused is also what a file that is not a socket answers:
		 * only a socket is a dead session's. */
		if (ret == -ECONNREFUSED && lstat(sa.sun_path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(sa.sun_path);
		return ret;
	}
	if ((ret = peer_trusted(fd)) < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

int tr_control_listen(const char *name, char *why, size_t len)
{
	struct sockaddr_un sa;
	mode_t old_mask;
	int fd, ret;

	if ((ret = tr_control_prepare_dir(why, len)) < 0)
		return ret;
	if ((ret = socket_address(name, &sa)) < 0) {
		snprintf(why, len, "the socket path for '%s' is too long", name);
		return ret;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, len, "cannot create a socket: %s", strerror(-ret));
		return ret;
	}
	old_mask = umask(077);
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (ret < 0 && errno == EADDRINUSE) {
		int other = tr_control_connect(name);

		if (other >= 0) {
			close(other);
			errno = EADDRINUSE;
		} else if (other == -ECONNREFUSED || other == -ENOENT) {
			/* Left by a session that was killed: connect removed it. */
			ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
		} else {
			errno = -other;
		}
	}
	umask(old_mask);
	/* A socket's mode is what connect(2) checks; umask gave 0700. */
	if (ret == 0)
		ret = chmod(sa.sun_path, 0600);
	if (ret < 0 || listen(fd, 8) < 0) {
		ret = -errno;
		if (ret == -EADDRINUSE)
			snprintf(why, len, "a session named '%s' is already running (`tracerig "
				 "status` lists it; `tracerig stop %s` ends it, or start this one "
				 "with another --name)", name, name);
		else
			snprintf(why, len, "cannot listen on %s: %s", sa.sun_path, strerror(-ret));
		close(fd);
		return ret;
	}
	return fd;
}

int tr_control_send(int fd, const char *command)
{
	size_t len = strlen(command), done = 0;
	char line[4352];

	if (len + 2 > sizeof(line))
		return -EINVAL;
	memcpy(line, command, len);
	line[len++] = '\n';
	while (done < len) {
		ssize_t n = send(fd, line + done, len - done, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		done += (size_t)n;
	}
	return 0;
}

int tr_control_read_line(int fd, char *buf, size_t len, int timeout_ms)
{
	size_t n = 0;

	if (len == 0)
		return -EINVAL;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t got;
		int ready;

		if (n + 1 >= len)
			return -EMSGSIZE;
		ready = poll(&pfd, 1, timeout_ms);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			return -errno;
		if (ready == 0)
			return -ETIMEDOUT;
		got = read(fd, buf + n, 1);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got < 0)
			return -errno;
		if (got == 0 || buf[n] == '\n') {
			buf[n] = '\0';
			/* The other side may be anyone's: its line is printed on a
			 * terminal, so no escape sequence gets through. */
			tr_sanitize_text(buf, len, buf);
			/* a last line without its newline still counts */
			return got > 0 || n > 0;
		}
		n++;
	}
}

int tr_control_list(char ***names, size_t *n)
{
	struct dirent *de;
	char **list = NULL, why[8];
	size_t count = 0;
	int ret;
	DIR *dir;

	*names = NULL;
	*n = 0;
	ret = tr_control_check_dir(why, sizeof(why));
	if (ret < 0)
		return ret == -ENOENT ? 0 : ret;
	dir = opendir(tr_control_dir());
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dir))) {
		size_t len = strlen(de->d_name);
		char **grown;

		if (len <= 5 || strcmp(de->d_name + len - 5, ".sock") != 0)
			continue;
		grown = realloc(list, (count + 1) * sizeof(*list));
		if (!grown) {
			ret = -ENOMEM;
			break;
		}
		list = grown;
		if (!(list[count] = strndup(de->d_name, len - 5))) {
			ret = -ENOMEM;
			break;
		}
		count++;
	}
	closedir(dir);
	*names = list;
	*n = count;
	return ret;
}
