/* Thread names over time, from COMM and FORK records.  Records of
 * different CPUs reach perf.data out of time order (a thread's first
 * samples can precede the FORK that named it), so names are resolved in
 * time order once every record has been seen, as perf report does. */
#ifndef TR_PERF_COMMS_H
#define TR_PERF_COMMS_H

#include <stdint.h>
#include <sys/types.h>

struct comms;

struct comms *comms_new(void);
void comms_free(struct comms *c);
int comms_add_comm(struct comms *c, pid_t tid, uint64_t time, const char *name, size_t len);
int comms_add_fork(struct comms *c, pid_t tid, pid_t parent_tid, uint64_t time);
/* Call after adding, before comms_at: resolves what was added since the
 * last call (a fork takes its parent's name then), at a cost that does
 * not grow with what was added before.  0 or -ENOMEM. */
int comms_finish(struct comms *c);
/* The name `tid` had at `time` (its first name when it only got one
 * later), or NULL when nothing named it.  Names are the traced program's
 * and come back under the sanitize rule (lib/sanitize.h). */
const char *comms_at(struct comms *c, pid_t tid, uint64_t time);

#endif
