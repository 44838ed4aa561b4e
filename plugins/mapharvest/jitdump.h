/* Rewriting a harvested jitdump's PIDs from the container's to the host's. */
#ifndef MH_JITDUMP_H
#define MH_JITDUMP_H

#include <stdint.h>
#include <sys/types.h>

/* In the jitdump file open read-write as `fd` (`size` bytes), sets the
 * header's PID and every code-load/move record's PID and TID written by
 * `nspid` to `hostpid`.  Stops quietly at a truncated last record.  Returns
 * the number of records rewritten, or -EINVAL when it is not a jitdump this
 * host's byte order can read, or another negative errno. */
int64_t mh_jitdump_set_pid(int fd, uint64_t size, pid_t nspid, pid_t hostpid);

#endif
