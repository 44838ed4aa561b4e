#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "pidset.h"

#define FIRST_SLOTS 64

static size_t slot_of(const pid_t *slots, size_t n_slots, pid_t pid)
{
	size_t s = tr_pid_hash(pid) & (n_slots - 1);

	while (slots[s] && slots[s] != pid)
		s = (s + 1) & (n_slots - 1);
	return s;
}

/* At most half the slots are used, so a probe always ends. */
static int grow(struct tr_pid_set *s)
{
	size_t n = s->n_slots ? s->n_slots * 2 : FIRST_SLOTS;
	pid_t *slots = calloc(n, sizeof(*slots));
	pid_t *pids = realloc(s->pids, n / 2 * sizeof(*pids));

	if (pids)
		s->pids = pids;
	if (!slots || !pids) {
		free(slots);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n; i++)
		slots[slot_of(slots, n, s->pids[i])] = s->pids[i];
	free(s->slots);
	s->slots = slots;
	s->n_slots = n;
	return 0;
}

int tr_pid_set_has(const struct tr_pid_set *s, pid_t pid)
{
	if (pid <= 0 || !s->n)
		return 0;
	return s->slots[slot_of(s->slots, s->n_slots, pid)] == pid;
}

int tr_pid_set_add(struct tr_pid_set *s, pid_t pid)
{
	size_t at;

	if (pid <= 0 || tr_pid_set_has(s, pid))
		return 0;
	if ((s->n + 1) * 2 > s->n_slots && grow(s) < 0)
		return -ENOMEM;
	at = slot_of(s->slots, s->n_slots, pid);
	s->slots[at] = pid;
	s->pids[s->n++] = pid;
	return 1;
}

void tr_pid_set_free(struct tr_pid_set *s)
{
	free(s->slots);
	free(s->pids);
	memset(s, 0, sizeof(*s));
}
