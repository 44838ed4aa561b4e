/* Target processes for LTTng's virtual-PID tracker.  LTTng-UST identifies a
 * process by the PID it has in its own namespace, so host PIDs from -p are
 * translated through /proc/PID/status.  Descendants that exist when the
 * session starts are recorded with their parent (tracerig's -p promise:
 * "these processes, their threads and children"). */
#include "config.h"

#include <stdlib.h>

#include "lib/pidset.h"
#include "lib/procpid.h"
#include "targets.h"

/* More than any process tree -p could mean; LTTng's tracker takes a list. */
#define MAX_DESCENDANTS 65536

int targets_add_descendants(struct tr_pid_set *s)
{
	pid_t *found = NULL;
	size_t n = 0;
	int ret = 0;

	for (size_t i = 0; i < s->n && ret == 0; i++)
		ret = tr_proc_descendants(s->pids[i], &found, &n, MAX_DESCENDANTS);
	for (size_t i = 0; i < n && ret >= 0; i++)
		ret = tr_pid_set_add(s, found[i]);
	free(found);
	return ret < 0 ? ret : 0;
}

pid_t host_to_vpid(pid_t pid)
{
	pid_t vpid;

	return tr_proc_nspid(pid, &vpid) == 0 ? vpid : pid;
}
