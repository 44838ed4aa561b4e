/* Target processes for LTTng's virtual-PID tracker.  LTTng-UST identifies a
 * process by the PID it has in its own namespace, so host PIDs from -p are
 * translated through /proc/PID/status.  Descendants that exist when the
 * session starts are recorded with their parent (tracerig's -p promise:
 * "these processes, their threads and children"). */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/pidset.h"
#include "targets.h"

/* ppid from /proc/PID/stat; the comm field may contain spaces and ')'. */
static pid_t read_ppid(pid_t pid)
{
	char path[64], buf[512], *close_paren;
	size_t n;
	FILE *f;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	close_paren = strrchr(buf, ')');
	if (!close_paren || sscanf(close_paren + 1, " %*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

int pid_set_add_descendants(struct tr_pid_set *s)
{
	struct { pid_t pid, ppid; } *procs = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int added, ret = 0;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (n == cap) {
			void *grown;

			cap = cap ? cap * 2 : 256;
			grown = realloc(procs, cap * sizeof(*procs));
			if (!grown) {
				ret = -ENOMEM;
				goto out;
			}
			procs = grown;
		}
		procs[n].pid = (pid_t)atoi(de->d_name);
		procs[n].ppid = read_ppid(procs[n].pid);
		n++;
	}
	/* Repeat until no new child joins: grandchildren follow children. */
	do {
		added = 0;
		for (size_t i = 0; i < n; i++) {
			if (procs[i].ppid > 0 && !tr_pid_set_has(s, procs[i].pid) &&
			    tr_pid_set_has(s, procs[i].ppid)) {
				if ((ret = tr_pid_set_add(s, procs[i].pid)) < 0)
					goto out;
				ret = 0;
				added = 1;
			}
		}
	} while (added);
out:
	closedir(d);
	free(procs);
	return ret;
}

pid_t host_to_vpid(pid_t pid)
{
	char path[64], line[256];
	pid_t vpid = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *p = line + 6, *end;

			/* The last field is the PID in the process's own namespace. */
			for (;;) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				vpid = (pid_t)v;
				p = end;
			}
			break;
		}
	}
	fclose(f);
	return vpid;
}
