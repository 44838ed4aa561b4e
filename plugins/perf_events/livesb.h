/* Flight mode: the side-band of what is alive, kept in memory from the
 * records the recording already has (the synthesized ones at its start,
 * then every COMM, MMAP, MMAP2, FORK and EXIT the kernel writes), as perf's
 * `machine` keeps its threads and maps.  A new chunk begins with a replay
 * of it instead of a rescan of every process in /proc.
 *
 * The rules (record times are the sample_id trailer's, FORK's and EXIT's
 * own; the rings of different CPUs are drained in turn, so records reach
 * the state a little out of time order, and the rules go by time, not by
 * arrival):
 *   - a thread keeps its latest COMM; a new thread (FORK, pid == ppid) and
 *     a new process's main thread take the name of the thread that made
 *     them, as the kernel names them; a thread goes at its EXIT;
 *   - a process keeps its mappings in time order; a COMM of an exec
 *     (PERF_RECORD_MISC_COMM_EXEC) drops those older than it and the other
 *     threads; a mapping that fully covers an older one of the same process
 *     supersedes it; a new process (FORK, pid != ppid) starts with a copy
 *     of its parent's mappings older than the fork; everything of a process
 *     goes at the EXIT of its main thread (pid == tid);
 *   - of pid -1, the kernel's map ([kernel.kallsyms]_text, which only a
 *     synthesized record describes) is kept: the latest one.  Reading it
 *     again means reading all of /proc/kallsyms (~70 ms of system time).
 *
 * The replay is the kernel's map, then, process by process, the COMM of
 * each thread then the mappings in time order, each record as it was written (build ids,
 * flags, jitdump names), but with the sample_id trailer's time set to 0,
 * as synthesized records have it: perf delivers them before any record of
 * the chunk, in file order.  A copy made for a fork or a new thread has
 * its pid and tid (in the body and the trailer) set to the new ones.
 *
 * Memory: one entry and one copy of the record per live thread and per
 * mapping of a live process.  munmap is not recorded: a mapping goes when
 * a newer one covers it, its process execs or exits.
 *
 * Not thread-safe: the collector calls it under its lock. */
#ifndef TR_PERF_LIVESB_H
#define TR_PERF_LIVESB_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct livesb;

struct lsb_stats {
	size_t processes, threads, mappings;
	size_t bytes; /* records and entries, not the table's slots */
};

/* `sample_type` is the tracking event's (its sample_id trailer). */
struct livesb *lsb_new(uint64_t sample_type);
void lsb_free(struct livesb *s);

/* Takes one record in: COMM, MMAP, MMAP2, FORK and EXIT change the state,
 * any other type is ignored.  0, or -ENOMEM: the state is then incomplete
 * and lsb_ok() says so until lsb_reset(). */
int lsb_record(struct livesb *s, const struct perf_event_header *h);

/* 1 while every record fed since the last reset was kept. */
int lsb_ok(const struct livesb *s);

/* Forgets everything (before a rescan feeds the state again). */
void lsb_reset(struct livesb *s);

typedef int (*lsb_emit_fn)(void *arg, const void *record, size_t len);
/* 1 when the state holds the kernel's map. */
int lsb_has_kernel(const struct livesb *s);

/* Writes the state through `emit`: the kernel's map, then per process each
 * thread's COMM and the mappings in time order.  Stops at the first non-zero return of
 * `emit`, and returns it. */
int lsb_replay(const struct livesb *s, lsb_emit_fn emit, void *arg);

void lsb_stats(const struct livesb *s, struct lsb_stats *out);

#endif
