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

/* Where a jitdump stops making sense: the records that fit whole in its
 * first `size` bytes are counted into *records, and the offset just past
 * the last of them is returned (`size` itself for a file that ends on a
 * record boundary).  A smaller value means the runtime stopped in the
 * middle of a record -- .NET 10's writer gives up for good when writev(2)
 * of a record's code bytes fails, which it does on a 64 KiB stub block
 * with pages not yet committed.  -EINVAL when it is not a jitdump this
 * host's byte order can read, or another negative errno. */
int64_t mh_jitdump_whole(int fd, uint64_t size, uint64_t *records);

#endif
