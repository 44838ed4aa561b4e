#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "pidset.h"

#define FIRST_SLOTS 64

/* The slot of `pid`, or the empty one where it would go. */
static size_t slot_of(const size_t *slots, size_t n_slots, const pid_t *pids, pid_t pid)
{
	size_t s = tr_pid_hash(pid) & (n_slots - 1);

	while (slots[s] && pids[slots[s] - 1] != pid)
		s = (s + 1) & (n_slots - 1);
	return s;
}

/* At most half the slots are used, so a probe always ends. */
static int grow(struct tr_pid_set *s)
{
	size_t n = s->n_slots ? s->n_slots * 2 : FIRST_SLOTS;
	size_t *slots = calloc(n, sizeof(*slots));
	pid_t *pids = realloc(s->pids, n / 2 * sizeof(*pids));

	if (pids)
		s->pids = pids;
	if (!slots || !pids) {
		free(slots);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n; i++)
		slots[slot_of(slots, n, s->pids, s->pids[i])] = i + 1;
	free(s->slots);
	s->slots = slots;
	s->n_slots = n;
	return 0;
}

long tr_pid_set_find(const struct tr_pid_set *s, pid_t pid)
{
	size_t at;

	if (pid <= 0 || !s->n)
		return -1;
	at = s->slots[slot_of(s->slots, s->n_slots, s->pids, pid)];
	return at ? (long)at - 1 : -1;
}

int tr_pid_set_has(const struct tr_pid_set *s, pid_t pid)
{
	return tr_pid_set_find(s, pid) >= 0;
}

int tr_pid_set_add(struct tr_pid_set *s, pid_t pid)
{
	if (pid <= 0 || tr_pid_set_has(s, pid))
		return 0;
	if ((s->n + 1) * 2 > s->n_slots && grow(s) < 0)
		return -ENOMEM;
	s->pids[s->n] = pid;
	s->slots[slot_of(s->slots, s->n_slots, s->pids, pid)] = ++s->n;
	return 1;
}

void tr_pid_set_free(struct tr_pid_set *s)
{
	free(s->slots);
	free(s->pids);
	memset(s, 0, sizeof(*s));
}
