/* Background threads: nice 19 while the traced work runs, back to the
 * session's priority once what they have left is on the way to the
 * archive (core/archive/stream.c, perf_events' conversion while collecting). */
#ifndef TR_PRIORITY_H
#define TR_PRIORITY_H

#include <sys/types.h>

#define TR_BACKGROUND_NICE 19

/* Puts the calling thread at nice 19 (Linux: a TID is a PRIO_PROCESS
 * target) and returns its TID; *session_nice gets the nice value it had
 * (0 when unreadable).  A thread that may not be lowered stays as it is. */
pid_t tr_priority_background(int *session_nice);
/* Puts thread `tid` back to `session_nice`: allowed with CAP_SYS_NICE or
 * RLIMIT_NICE, otherwise it stays at 19.  0 or -errno. */
int tr_priority_restore(pid_t tid, int session_nice);

#endif
