#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "pidset.h"
#include "probe.h"
#include "vec.h"

#define FIRST_SLOTS 64

static int slot_used(const void *slot)
{
	return *(const size_t *)slot != 0;
}

static uint64_t slot_hash(const void *slot, const void *pids)
{
	return tr_pid_hash(((const pid_t *)pids)[*(const size_t *)slot - 1]);
}

static const struct tr_probe_ops slot_ops = {
	.size = sizeof(size_t),
	.first = FIRST_SLOTS,
	.used = slot_used,
	.hash = slot_hash,
};

struct key {
	const pid_t *pids;
	pid_t pid;
};

static int slot_is(const void *slot, const void *key)
{
	const struct key *k = key;

	return k->pids[*(const size_t *)slot - 1] == k->pid;
}

/* The slot of `pid`, or the empty one where it would go. */
static size_t slot_of(const struct tr_pid_set *s, pid_t pid)
{
	struct key k = { s->pids, pid };

	return tr_probe_find(s->slots, s->n_slots, &slot_ops, tr_pid_hash(pid), slot_is, &k);
}

long tr_pid_set_find(const struct tr_pid_set *s, pid_t pid)
{
	size_t at;

	if (pid <= 0 || !s->n)
		return -1;
	at = s->slots[slot_of(s, pid)];
	return at ? (long)at - 1 : -1;
}

int tr_pid_set_has(const struct tr_pid_set *s, pid_t pid)
{
	return tr_pid_set_find(s, pid) >= 0;
}

int tr_pid_set_add(struct tr_pid_set *s, pid_t pid)
{
	size_t *slots;
	pid_t *pids;

	if (pid <= 0 || tr_pid_set_has(s, pid))
		return 0;
	slots = tr_probe_grow(s->slots, &s->n_slots, s->n + 1, &slot_ops, s->pids);
	if (!slots)
		return -ENOMEM;
	s->slots = slots;
	pids = tr_vec_grow(s->pids, &s->cap_pids, s->n + 1, sizeof(*pids), FIRST_SLOTS / 2);
	if (!pids)
		return -ENOMEM;
	s->pids = pids;
	s->pids[s->n] = pid;
	s->slots[slot_of(s, pid)] = ++s->n;
	return 1;
}

void tr_pid_set_free(struct tr_pid_set *s)
{
	free(s->slots);
	free(s->pids);
	memset(s, 0, sizeof(*s));
}
