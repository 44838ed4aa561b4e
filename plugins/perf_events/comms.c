#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comms.h"
#include "lib/hash.h"
#include "lib/probe.h"
#include "lib/vec.h"
#include "lib/sanitize.h"

#define NAME_LEN 16

/* A COMM or FORK record as added, waiting for comms_finish. */
struct change {
	pid_t tid, parent; /* parent != 0: a fork, named after the parent then */
	uint64_t time;
	uint64_t seq;      /* file order, for changes at the same time */
	char name[NAME_LEN];
};

/* One name of a thread, from when it had it. */
struct name_at {
	uint64_t time, seq;
	char name[NAME_LEN];
};

/* A thread's names in time order.  Per thread, so that what each
 * comms_finish adds costs what was added (the conversion while
 * collecting calls it at every step), not what the session had. */
struct thread {
	pid_t tid;
	int used;
	struct name_at *v;
	size_t n, cap;
};

struct comms {
	struct thread *tab; /* open addressing by tid, a power of two */
	size_t tab_cap, tab_used;
	/* Added since the last finish, and forks whose parent had no name
	 * yet (a later finish, with more records read, may name them). */
	struct change *pend;
	size_t n_pend, cap_pend;
	uint64_t next_seq;
};

struct comms *comms_new(void)
{
	return calloc(1, sizeof(struct comms));
}

void comms_free(struct comms *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->tab_cap; i++)
		free(c->tab[i].v);
	free(c->tab);
	free(c->pend);
	free(c);
}

static struct change *push(struct comms *c)
{
	struct change *grown = tr_vec_grow(c->pend, &c->cap_pend, c->n_pend + 1, sizeof(*grown),
					   1024);

	if (!grown)
		return NULL;
	c->pend = grown;
	memset(&c->pend[c->n_pend], 0, sizeof(c->pend[0]));
	c->pend[c->n_pend].seq = c->next_seq++;
	return &c->pend[c->n_pend++];
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

static int thread_used(const void *slot)
{
	return ((const struct thread *)slot)->used;
}

static uint64_t thread_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return tr_pid_hash(((const struct thread *)slot)->tid);
}

static int thread_is(const void *slot, const void *key)
{
	return ((const struct thread *)slot)->tid == *(const pid_t *)key;
}

static const struct tr_probe_ops thread_ops = {
	.size = sizeof(struct thread),
	.first = 256,
	.used = thread_used,
	.hash = thread_hash,
};

/* The thread's entry; NULL when it has none (create = 0) or out of memory. */
static struct thread *thread_of(struct comms *c, pid_t tid, int create)
{
	struct thread *t;

	if (c->tab_cap) {
		t = &c->tab[tr_probe_find(c->tab, c->tab_cap, &thread_ops, tr_pid_hash(tid),
					  thread_is, &tid)];
		if (t->used)
			return t;
	}
	if (!create)
		return NULL;
	t = tr_probe_grow(c->tab, &c->tab_cap, c->tab_used + 1, &thread_ops, NULL);
	if (!t)
		return NULL;
	c->tab = t;
	t = &c->tab[tr_probe_find(c->tab, c->tab_cap, &thread_ops, tr_pid_hash(tid), NULL, NULL)];
	t->used = 1;
	t->tid = tid;
	c->tab_used++;
	return t;
}

static int before(uint64_t time, uint64_t seq, const struct name_at *n)
{
	return time < n->time || (time == n->time && seq < n->seq);
}

/* How many of t's names came before (time, seq). */
static size_t names_before(const struct thread *t, uint64_t time, uint64_t seq)
{
	size_t a = 0, b = t->n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (before(time, seq, &t->v[m]))
			b = m;
		else
			a = m + 1;
	}
	return a;
}

static int add_name(struct comms *c, pid_t tid, uint64_t time, uint64_t seq, const char *name)
{
	struct thread *t = thread_of(c, tid, 1);
	struct name_at *grown;
	size_t at;

	if (!t)
		return -ENOMEM;
	grown = tr_vec_grow(t->v, &t->cap, t->n + 1, sizeof(*grown), 2);
	if (!grown)
		return -ENOMEM;
	t->v = grown;
	/* Nearly always at the end: records come in time order, but for
	 * those of different CPUs. */
	at = names_before(t, time, seq);
	memmove(t->v + at + 1, t->v + at, (t->n - at) * sizeof(*t->v));
	t->v[at].time = time;
	t->v[at].seq = seq;
	memcpy(t->v[at].name, name, NAME_LEN);
	t->n++;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct change *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

int comms_finish(struct comms *c)
{
	size_t kept = 0;

	if (!c->n_pend)
		return 0;
	qsort(c->pend, c->n_pend, sizeof(*c->pend), by_time);
	for (size_t i = 0; i < c->n_pend; i++) {
		struct change ch = c->pend[i];
		int ret;

		/* A fork takes the parent's name at that moment. */
		if (ch.parent) {
			/* (-1 stands for a parent tid of 0: the swapper) */
			const struct thread *p = thread_of(c, ch.parent == -1 ? 0 : ch.parent, 0);
			size_t k = p ? names_before(p, ch.time, ch.seq) : 0;

			if (!k) {
				c->pend[kept++] = ch; /* its parent may be named later */
				continue;
			}
			memcpy(ch.name, p->v[k - 1].name, NAME_LEN);
		}
		ret = add_name(c, ch.tid, ch.time, ch.seq, ch.name);
		if (ret < 0) {
			/* What was not handled stays for the next call. */
			memmove(c->pend + kept, c->pend + i, (c->n_pend - i) * sizeof(*c->pend));
			c->n_pend = kept + c->n_pend - i;
			return ret;
		}
	}
	c->n_pend = kept;
	return 0;
}

const char *comms_at(struct comms *c, pid_t tid, uint64_t time)
{
	const struct thread *t = thread_of(c, tid, 0);
	size_t a = 0, b;

	if (!t || !t->n)
		return NULL;
	b = t->n;
	while (a < b) { /* first name later than `time` */
		size_t m = a + (b - a) / 2;

		if (t->v[m].time <= time)
			a = m + 1;
		else
			b = m;
	}
	return t->v[a ? a - 1 : 0].name;
}
