#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "procpid.h"
#include "vec.h"

int tr_status_innermost(const char *p, pid_t *id)
{
	long long last = -1;

	for (;;) {
		long long v = 0;
		int digits = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		/* By hand, not strtol: that would skip the newline into the next line. */
		for (; *p >= '0' && *p <= '9'; p++, digits++)
			if (v <= INT_MAX)
				v = v * 10 + (*p - '0');
		if (!digits)
			break;
		last = v;
	}
	if (last <= 0 || last > INT_MAX)
		return -EINVAL;
	*id = (pid_t)last;
	return 0;
}

int tr_status_field_innermost(const char *status, const char *field, pid_t *id)
{
	size_t len = strlen(field);

	for (const char *line = status; line && *line;) {
		if (strncmp(line, field, len) == 0 && line[len] == ':')
			return tr_status_innermost(line + len + 1, id);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

ssize_t tr_read_text(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd, err;

	if (size < 2)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	return n ? n : -ENOENT;
}

int tr_stat_field(const char *stat, int n, unsigned long long *out)
{
	const char *p = strrchr(stat, ')');
	char *end;

	if (!p || n < 4)
		return -EINVAL;
	/* p is at the end of field 2; each space starts the next field. */
	for (int field = 2; field < n && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || p[1] < '0' || p[1] > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(p + 1, &end, 10);
	if (errno || (*end && *end != ' ' && *end != '\n'))
		return -EINVAL;
	return 0;
}

int tr_proc_stat_field(pid_t pid, int n, unsigned long long *out)
{
	/* A comm is at most 16 bytes: 1024 holds the line up to field 52. */
	char path[64], buf[1024];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	len = tr_read_text(path, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	return tr_stat_field(buf, n, out);
}

int tr_proc_nspid(pid_t pid, pid_t *nspid)
{
	char fname[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int ret = -ENOENT;

	snprintf(fname, sizeof(fname), "/proc/%d/status", (int)pid);
	f = fopen(fname, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			ret = tr_status_innermost(line + 6, nspid);
			break;
		}
	}
	free(line);
	fclose(f);
	return ret;
}

static int push(pid_t **out, size_t *n, size_t *cap, pid_t pid)
{
	pid_t *grown;

	for (size_t i = 0; i < *n; i++)
		if ((*out)[i] == pid)
			return 0;
	grown = tr_vec_grow(*out, cap, *n + 1, sizeof(*grown), 16);
	if (!grown)
		return -ENOMEM;
	*out = grown;
	(*out)[(*n)++] = pid;
	return 1;
}

/* Appends the children of every thread of `pid`. */
static int add_children(pid_t pid, pid_t **out, size_t *n, size_t *cap, size_t max)
{
	char path[64];
	DIR *tasks;
	struct dirent *de;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	tasks = opendir(path);
	if (!tasks)
		return 0; /* exited meanwhile */
	while (ret >= 0 && *n < max && (de = readdir(tasks))) {
		char cpath[352], buf[4096];
		ssize_t len;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "%s/%s/children", path, de->d_name);
		fd = open(cpath, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (char *p = buf, *end; *p && *n < max && ret >= 0; p = end) {
			long child = strtol(p, &end, 10);

			if (end == p)
				break;
			if (child > 0)
				ret = push(out, n, cap, (pid_t)child);
		}
	}
	closedir(tasks);
	return ret < 0 ? ret : 0;
}

int tr_proc_descendants(pid_t pid, pid_t **out, size_t *n, size_t max)
{
	size_t cap = *n, first = *n;
	int ret;

	/* Breadth first over the growing array itself. */
	ret = add_children(pid, out, n, &cap, max);
	for (size_t i = first; ret == 0 && i < *n && *n < max; i++)
		ret = add_children((*out)[i], out, n, &cap, max);
	return ret;
}

/* The path of a "hierarchy-ID:controllers:path" line starting at `line`,
 * its length in *n; NULL when the line is not of that form. */
static const char *cgroup_line_path(const char *line, size_t *n)
{
	const char *end = strchr(line, '\n'), *c1 = strchr(line, ':'), *c2;

	if (!end)
		end = line + strlen(line);
	if (!c1 || c1 > end || !(c2 = strchr(c1 + 1, ':')) || c2 > end || c2[1] != '/')
		return NULL;
	*n = (size_t)(end - (c2 + 1));
	return c2 + 1;
}

static int is_root(const char *path, size_t n)
{
	return n == 1 && path[0] == '/';
}

int tr_cgroup_path(const char *text, char *out, size_t len)
{
	const char *found = NULL, *unified = NULL;
	size_t found_len = 0, unified_len = 0;

	for (const char *line = text; line && *line;) {
		size_t n;
		const char *path = cgroup_line_path(line, &n);

		if (path && strncmp(line, "0::", 3) == 0) {
			unified = path;
			unified_len = n;
		} else if (path && (!found || (is_root(found, found_len) && !is_root(path, n)))) {
			found = path;
			found_len = n;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	/* The unified hierarchy's, unless a hybrid host left it at the root
	 * and put the process somewhere in a v1 hierarchy. */
	if (unified && (!found || !is_root(unified, unified_len) || is_root(found, found_len))) {
		found = unified;
		found_len = unified_len;
	}
	if (!found || !len)
		return -ENOENT;
	if (found_len >= len)
		found_len = len - 1;
	memcpy(out, found, found_len);
	out[found_len] = '\0';
	return 0;
}

int tr_proc_cgroup(pid_t pid, char *out, size_t len)
{
	char path[64], buf[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	n = tr_read_text(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return tr_cgroup_path(buf, out, len);
}

int tr_read_proc_file(int dirfd, const char *name, size_t max, char **out, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC), ret;

	*out = NULL;
	*len = 0;
	if (fd < 0)
		return -errno;
	ret = tr_read_fd(fd, max, out, len);
	close(fd);
	return ret;
}
