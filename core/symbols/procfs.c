/* /proc readers for the symbolizer. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "lib/untrusted.h"
#include "procfs.h"

static int parse_maps_line(char *line, struct tr_maps_line *out)
{
	unsigned long long start, end, pgoff, inode;
	unsigned major, minor;
	char perms[8];
	int used = 0;
	char *path;
	size_t len;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &major,
		   &minor, &inode, &used) < 7 || !used)
		return -EINVAL;
	path = line + used;
	len = strcspn(path, "\n");
	path[len] = '\0';
	out->start = start;
	out->end = end;
	out->pgoff = pgoff;
	out->dev = makedev(major, minor);
	out->inode = inode;
	out->exec = perms[2] == 'x';
	out->deleted = 0;
	if (len > 10 && strcmp(path + len - 10, " (deleted)") == 0) {
		path[len - 10] = '\0';
		out->deleted = 1;
	}
	out->path = path;
	return 0;
}

int tr_proc_read_maps(pid_t pid, tr_maps_cb cb, void *arg)
{
	char fname[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int ret = 0;

	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		struct tr_maps_line ml;

		if (parse_maps_line(line, &ml) < 0)
			continue;
		ret = cb(arg, &ml);
		if (ret)
			break;
	}
	/* A process that exits while we read leaves an empty or short file;
	 * ESRCH from the read is reported like a vanished process. */
	if (!ret && ferror(f))
		ret = -ESRCH;
	free(line);
	fclose(f);
	return ret;
}

int tr_open_map_file(pid_t pid, uint64_t start, uint64_t end, struct stat *st)
{
	struct tr_untrusted u;
	char fname[96];
	int pfd;

	snprintf(fname, sizeof(fname), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start,
		 end);
	/* The kernel resolves this link to the mapped file itself; O_PATH so
	 * that a mapped device is checked before any driver's open runs. */
	pfd = open(fname, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	pfd = tr_untrusted_reopen(pfd, TR_OBJECT_MAX, &u);
	if (pfd >= 0 && st)
		*st = u.st;
	return pfd;
}

uint64_t tr_now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) < 0)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t tr_now_exact_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
