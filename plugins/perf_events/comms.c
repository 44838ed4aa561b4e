#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comms.h"
#include "lib/vec.h"
#include "lib/sanitize.h"

#define NAME_LEN 16

struct change {
	pid_t tid, parent; /* parent != 0: a fork, named after the parent then */
	uint64_t time;
	size_t seq;        /* file order, for changes at the same time */
	char name[NAME_LEN];
};

/* Where a thread's entries are, remembered: a sample asks for its thread
 * and its process, and the threads of a busy program come back often. */
#define RANGES 64

struct range {
	pid_t tid;
	int known;
	size_t lo, hi;
};

struct comms {
	/* After finish: names by (tid, time, seq), then the forks whose
	 * parent had no name yet (a later finish may name them). */
	struct change *v;
	size_t n, cap;
	size_t n_named; /* what comms_at looks in */
	size_t next_seq;
	struct range ranges[RANGES]; /* by tid % RANGES */
};

struct comms *comms_new(void)
{
	return calloc(1, sizeof(struct comms));
}

void comms_free(struct comms *c)
{
	if (!c)
		return;
	free(c->v);
	free(c);
}

static struct change *push(struct comms *c)
{
	struct change *grown = tr_vec_grow(c->v, &c->cap, c->n + 1, sizeof(*grown), 1024);

	if (!grown)
		return NULL;
	c->v = grown;
	memset(&c->v[c->n], 0, sizeof(c->v[0]));
	c->v[c->n].seq = c->next_seq++;
	return &c->v[c->n++];
}

int comms_add_comm(struct comms *c, pid_t tid, uint64_t time, const char *name, size_t len)
{
	struct change *ch = push(c);

	if (!ch)
		return -ENOMEM;
	ch->tid = tid;
	ch->time = time;
	if (len >= NAME_LEN)
		len = NAME_LEN - 1;
	memcpy(ch->name, name, len);
	/* Once here rather than at every sample that prints it. */
	tr_sanitize_name(ch->name, NAME_LEN, ch->name);
	return 0;
}

int comms_add_fork(struct comms *c, pid_t tid, pid_t parent_tid, uint64_t time)
{
	struct change *ch = push(c);

	if (!ch)
		return -ENOMEM;
	ch->tid = tid;
	ch->parent = parent_tid ? parent_tid : -1;
	ch->time = time;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct change *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int by_tid_time(const void *a, const void *b)
{
	const struct change *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return by_time(a, b);
}

/* The entries of `tid` in v[0..n), sorted by (tid, time): [*lo, *hi). */
static void range_of(const struct change *v, size_t n, pid_t tid, size_t *lo, size_t *hi)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (v[m].tid < tid)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (v[m].tid <= tid)
			a = m + 1;
		else
			b = m;
	}
	*hi = a;
}

const char *comms_at(struct comms *c, pid_t tid, uint64_t time)
{
	const struct change *v = c->v;
	struct range *r = &c->ranges[(uint32_t)tid % RANGES];
	size_t lo, hi, a, b;

	if (!r->known || r->tid != tid) {
		range_of(v, c->n_named, tid, &r->lo, &r->hi);
		r->tid = tid;
		r->known = 1;
	}
	lo = r->lo;
	hi = r->hi;
	if (lo == hi)
		return NULL;
	a = lo;
	b = hi;
	while (a < b) { /* first entry later than `time` */
		size_t m = a + (b - a) / 2;

		if (v[m].time <= time)
			a = m + 1;
		else
			b = m;
	}
	return v[a > lo ? a - 1 : lo].name;
}

struct current {
	pid_t tid; /* 0 = empty; tid 0 (swapper) is kept as -1 */
	char name[NAME_LEN];
};

/* The latest name of each thread while changes are replayed in time order. */
static struct current *current_slot(struct current *t, size_t cap, pid_t tid)
{
	size_t i;

	if (tid == 0)
		tid = -1;
	i = (size_t)(uint32_t)tid * 2654435761u & (cap - 1);
	while (t[i].tid && t[i].tid != tid)
		i = (i + 1) & (cap - 1);
	t[i].tid = tid;
	return &t[i];
}

int comms_finish(struct comms *c)
{
	struct current *cur;
	struct change *unnamed = NULL;
	size_t cap = 64, n_named = 0, n_unnamed = 0;

	if (!c->n)
		return 0;
	while (cap < c->n * 2)
		cap *= 2;
	cur = calloc(cap, sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	qsort(c->v, c->n, sizeof(*c->v), by_time);
	/* A fork takes the parent's name at that moment. */
	for (size_t i = 0; i < c->n; i++) {
		struct change ch = c->v[i];

		if (ch.parent) {
			struct current *p = current_slot(cur, cap, ch.parent);

			if (!p->name[0]) {
				/* Kept aside: the parent's name may be in
				 * records not read yet (sc_feed). */
				if (!unnamed && !(unnamed = malloc(c->n * sizeof(*unnamed)))) {
					free(cur);
					return -ENOMEM;
				}
				unnamed[n_unnamed++] = ch;
				continue;
			}
			memcpy(ch.name, p->name, NAME_LEN);
			ch.parent = 0;
		}
		memcpy(current_slot(cur, cap, ch.tid)->name, ch.name, NAME_LEN);
		c->v[n_named++] = ch;
	}
	free(cur);
	qsort(c->v, n_named, sizeof(*c->v), by_tid_time);
	if (n_unnamed)
		memcpy(c->v + n_named, unnamed, n_unnamed * sizeof(*unnamed));
	free(unnamed);
	c->n_named = n_named;
	c->n = n_named + n_unnamed;
	memset(c->ranges, 0, sizeof(c->ranges));
	return 0;
}
