/* Unwinding and aggregating callchain = dwarf's intervals in user space.
 *
 * Why while collecting rather than at flush: the copies are big (8 KiB by
 * default) and come at every kept context switch, so keeping them for the
 * flush would grow with the session's length, and a process that exits
 * before the flush can no longer be asked for its objects by address;
 * unwound, an interval is a few frames added to an existing entry. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/probe.h"
#include "lib/unwind.h"
#include "ustacks.h"
#include "lib/vec.h"

struct us_entry {
	struct oc_entry e;
	uint64_t hash;
	size_t n_ips;
	uint64_t *ips;
};

struct us_table {
	struct unwinder *uw;
	size_t depth;
	struct us_entry *v;
	size_t n, cap;
	size_t *slots; /* index + 1 into v, 0: empty; a power of two, at most half full */
	size_t n_slots;
	struct us_stats stats;
};

int us_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx, size_t depth,
	   struct us_table **out)
{
	struct us_table *t;

	*out = NULL;
	if (!UW_AVAILABLE)
		return -ENOTSUP;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->depth = depth;
	t->uw = uw_new(svc, ctx, NULL);
	if (!t->uw) {
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void us_free(struct us_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].ips);
	free(t->v);
	free(t->slots);
	uw_free(t->uw);
	free(t);
}

static int same(const struct us_entry *x, const struct offcpu_ustack *u, const uint64_t *ips,
		size_t n)
{
	return x->e.key.tgid == u->tgid && x->e.key.pid == u->pid && x->e.key.kstack == u->kstack &&
	       x->n_ips == n && memcmp(x->ips, ips, n * sizeof(*ips)) == 0;
}

static int slot_used(const void *slot)
{
	return *(const size_t *)slot != 0;
}

static uint64_t slot_hash(const void *slot, const void *v)
{
	return ((const struct us_entry *)v)[*(const size_t *)slot - 1].hash;
}

static const struct tr_probe_ops slot_ops = {
	.size = sizeof(size_t),
	.first = 1024,
	.used = slot_used,
	.hash = slot_hash,
};

struct key {
	const struct us_entry *v;
	const struct offcpu_ustack *u;
	const uint64_t *ips;
	size_t n;
};

static int slot_is(const void *slot, const void *key)
{
	const struct key *k = key;

	return same(&k->v[*(const size_t *)slot - 1], k->u, k->ips, k->n);
}

/* A new entry for the interval, its slot at `s`. */
static struct us_entry *insert(struct us_table *t, size_t s, uint64_t hash,
			       const struct offcpu_ustack *u, const uint64_t *ips, size_t n)
{
	struct us_entry *x, *grown = tr_vec_grow(t->v, &t->cap, t->n + 1, sizeof(*grown), 256);

	if (!grown)
		return NULL;
	t->v = grown;
	x = &t->v[t->n];
	memset(x, 0, sizeof(*x));
	x->ips = malloc(n * sizeof(*ips));
	if (!x->ips)
		return NULL;
	memcpy(x->ips, ips, n * sizeof(*ips));
	x->n_ips = n;
	x->hash = hash;
	x->e.key = (struct offcpu_key){ .tgid = u->tgid, .pid = u->pid, .kstack = u->kstack };
	memcpy(x->e.val.comm, u->comm, sizeof(x->e.val.comm));
	memcpy(x->e.val.tcomm, u->tcomm, sizeof(x->e.val.tcomm));
	t->slots[s] = ++t->n;
	return x;
}

void us_exec(struct us_table *t, uint32_t tgid)
{
	uw_exec(t->uw, (pid_t)tgid);
}

void us_add(void *table, const struct offcpu_ustack *u)
{
	struct us_table *t = table;
	struct uw_stats before, after;
	uint64_t regs[UW_N_REGS];
	const uint64_t *ips;
	struct us_entry *x = NULL;
	struct key key;
	uint64_t h;
	size_t n, s, *slots;

	_Static_assert(OFFCPU_N_REGS == UW_N_REGS, "the BPF program copies the unwinder's registers");
	for (size_t i = 0; i < UW_N_REGS; i++)
		regs[i] = u->regs[i];
	uw_get_stats(t->uw, &before);
	n = uw_unwind(t->uw, (pid_t)u->tgid, (pid_t)u->pid, regs, u->data, u->size, &ips);
	uw_get_stats(t->uw, &after);
	t->stats.unwound++;
	t->stats.cut_short += after.stack_end - before.stack_end;
	t->stats.unmapped += after.unmapped - before.unmapped;
	if (n > t->depth)
		n = t->depth;
	h = tr_fnv1a_more(tr_fnv1a(ips, n * sizeof(*ips)), &u->kstack, sizeof(u->kstack));
	h ^= tr_pid_hash((pid_t)u->pid);
	slots = tr_probe_grow(t->slots, &t->n_slots, t->n + 1, &slot_ops, t->v);
	if (!slots)
		goto lost;
	t->slots = slots;
	key = (struct key){ t->v, u, ips, n };
	s = tr_probe_find(t->slots, t->n_slots, &slot_ops, h, slot_is, &key);
	if (t->slots[s])
		x = &t->v[t->slots[s] - 1];
	else if (!(x = insert(t, s, h, u, ips, n)))
		goto lost;
	x->e.val.weighted_ns += u->weighted_ns;
	x->e.val.real_ns += u->real_ns;
	x->e.val.count++;
	return;
lost:
	t->stats.lost++;
}

size_t us_count(const struct us_table *t)
{
	return t ? t->n : 0;
}

const struct oc_entry *us_entry(const struct us_table *t, size_t i, const uint64_t **ips,
				size_t *n_ips)
{
	*ips = t->v[i].ips;
	*n_ips = t->v[i].n_ips;
	return &t->v[i].e;
}

void us_get_stats(const struct us_table *t, struct us_stats *out)
{
	if (t)
		*out = t->stats;
	else
		memset(out, 0, sizeof(*out));
}
