/* What the symbolizer reads from /proc: mappings, namespace PIDs, and files
 * as a process sees them (through its root, never out of it). */
#ifndef TR_SYMBOLS_PROCFS_H
#define TR_SYMBOLS_PROCFS_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "lib/procpid.h" /* tr_proc_nspid */

struct tr_maps_line {
	uint64_t start, end, pgoff;
	dev_t dev;
	uint64_t inode;
	int exec;
	int deleted;      /* the path ended in " (deleted)" (stripped) */
	const char *path; /* "" for anonymous memory; valid during the callback */
};

typedef int (*tr_maps_cb)(void *arg, const struct tr_maps_line *line);

/* Calls cb for every line of /proc/PID/maps; stops at the first non-zero
 * return of cb and returns it.  -ENOENT/-ESRCH when the process is gone. */
int tr_proc_read_maps(pid_t pid, tr_maps_cb cb, void *arg);

/* Opens /proc/PID/map_files/START-END: works for deleted files too.
 * Regular files of at most TR_OBJECT_MAX bytes only.  *st (if not NULL)
 * gets the file's stat: the fd may be a copy of it (lib/opener.h). */
int tr_open_map_file(pid_t pid, uint64_t start, uint64_t end, struct stat *st);

/* Monotonic nanoseconds (coarse clock: cheap, used to rate-limit rereads). */
uint64_t tr_now_ns(void);
/* CLOCK_MONOTONIC in nanoseconds, exact: what a sample's time (perf_events
 * with use_clockid) is compared with. */
uint64_t tr_now_exact_ns(void);

#endif
