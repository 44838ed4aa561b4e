/* A set of PIDs that also keeps them in the order they were added, so
 * listings are stable: open addressing for "seen before?", an array for
 * walking them. */
#ifndef TR_LIB_PIDSET_H
#define TR_LIB_PIDSET_H

#include <stddef.h>
#include <sys/types.h>

/* Zero-initialised is empty and ready.  pids[0..n) are the members in the
 * order they were added, so a caller may keep its own records of them in
 * an array in the same order (tr_pid_set_find). */
struct tr_pid_set {
	size_t *slots; /* index into pids + 1; 0 = empty */
	size_t n_slots;
	pid_t *pids;
	size_t n, cap_pids;
};

/* 1 when `pid` is new, 0 when it was there already or is not a PID (<= 0),
 * -ENOMEM. */
int tr_pid_set_add(struct tr_pid_set *s, pid_t pid);
int tr_pid_set_has(const struct tr_pid_set *s, pid_t pid);
/* The index of `pid` in pids[], or -1. */
long tr_pid_set_find(const struct tr_pid_set *s, pid_t pid);
void tr_pid_set_free(struct tr_pid_set *s);

#endif
