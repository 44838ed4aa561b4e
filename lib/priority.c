/* Background threads' priority (see priority.h). */
#include "priority.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

pid_t tr_priority_background(int *session_nice)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	/* -1 is a valid nice value: only errno tells a failure. */
	errno = 0;
	*session_nice = getpriority(PRIO_PROCESS, (id_t)tid);
	if (*session_nice == -1 && errno)
		*session_nice = 0;
	(void)setpriority(PRIO_PROCESS, (id_t)tid, TR_BACKGROUND_NICE);
	return tid;
}

int tr_priority_restore(pid_t tid, int session_nice)
{
	return setpriority(PRIO_PROCESS, (id_t)tid, session_nice) < 0 ? -errno : 0;
}
