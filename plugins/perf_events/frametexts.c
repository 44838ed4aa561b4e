/* Frame texts kept per (process, generation, address) (see frametexts.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frametexts.h"
#include "lib/hash.h"
#include "lib/probe.h"
#include "lib/vec.h"
#include "textbuf.h"

/* Texts come from chunks of this size (a longer one gets a chunk of its
 * own) and never move: samples point at them. */
#define CHUNK (64 * 1024)

struct ft_slot {
	uint64_t addr;
	pid_t pid;     /* 0 for kernel frames: one entry for every process */
	uint32_t gen;  /* 0 for kernel frames */
	int kernel;
	int ret;          /* frame_name's return */
	/* frame_name's name and object: the core hands out one copy of
	 * each string, so the same pointers make the same text. */
	const char *fold, *dso;
	struct frame_text *text; /* NULL: a free slot */
};

/* A user frame's text of a followed process (ft_fork): its own
 * allocation, on its process's list, freed with it. */
struct ft_node {
	struct ft_node *next;
	uint64_t addr;
	pid_t pid;
	uint32_t gen;
	/* then its struct frame_text */
};

/* A process whose birth the replay saw: how many of its threads live. */
struct ft_proc {
	pid_t pid; /* 0: a free slot */
	uint32_t threads;
	int leader_gone, ended;
	uint32_t serial; /* which of the PID's processes */
	struct ft_node *texts;
};

/* Processes over, in the order they ended, until their grace is over. */
struct ft_ended {
	pid_t pid;
	uint32_t serial;
	uint64_t time_ns;
};

struct ft_chunk {
	struct ft_chunk *next;
	size_t used, size;
	_Alignas(struct frame_text) char data[];
};

struct frametexts {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct ft_slot *slots;
	size_t cap, n;
	struct ft_chunk *chunks; /* the newest first */
	/* The generation of the sample's process, read at its first user frame. */
	pid_t gen_pid;
	uint32_t gen;
	int gen_ok;
	size_t n_kernel; /* of n */
	struct ft_proc *procs; /* open addressing by pid */
	size_t procs_cap, n_procs;
	uint32_t serial;
	struct ft_ended *ended;
	size_t ended_head, n_ended, cap_ended;
};

struct frametexts *ft_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	struct frametexts *ft = calloc(1, sizeof(*ft));

	if (!ft)
		return NULL;
	ft->svc = svc;
	ft->ctx = ctx;
	ft->cap = 1 << 12;
	ft->slots = calloc(ft->cap, sizeof(*ft->slots));
	if (!ft->slots) {
		free(ft);
		return NULL;
	}
	return ft;
}

static void free_nodes(struct ft_node *n)
{
	while (n) {
		struct ft_node *next = n->next;

		free(n);
		n = next;
	}
}

void ft_free(struct frametexts *ft)
{
	if (!ft)
		return;
	for (size_t i = 0; i < ft->procs_cap; i++)
		if (ft->procs[i].pid)
			free_nodes(ft->procs[i].texts);
	free(ft->procs);
	free(ft->ended);
	while (ft->chunks) {
		struct ft_chunk *next = ft->chunks->next;

		free(ft->chunks);
		ft->chunks = next;
	}
	free(ft->slots);
	free(ft);
}

void ft_sample(struct frametexts *ft)
{
	ft->gen_ok = 0;
}

static int slot_used(const void *slot)
{
	return ((const struct ft_slot *)slot)->text != NULL;
}

static uint64_t slot_hash(const void *slot, const void *ctx)
{
	const struct ft_slot *s = slot;

	(void)ctx;
	return tr_frame_key_hash(s->pid, s->gen, s->addr);
}

/* Three quarters full at most, as the core's frame cache. */
static const struct tr_probe_ops slot_ops = {
	.size = sizeof(struct ft_slot),
	.first = 1 << 12,
	.quarters = 3,
	.used = slot_used,
	.hash = slot_hash,
};

static int slot_is(const void *slot, const void *key)
{
	const struct ft_slot *s = slot, *k = key;

	return s->addr == k->addr && s->pid == k->pid && s->gen == k->gen && s->kernel == k->kernel;
}

/* The slot of the key, or the free slot where it would go. */
static struct ft_slot *slot_of(const struct frametexts *ft, pid_t pid, uint32_t gen, uint64_t addr,
			       int kernel)
{
	struct ft_slot k = { .addr = addr, .pid = pid, .gen = gen, .kernel = kernel };

	return &ft->slots[tr_probe_find(ft->slots, ft->cap, &slot_ops,
					tr_frame_key_hash(pid, gen, addr), slot_is, &k)];
}

/* ---- processes followed from their birth ---- */

static int proc_used(const void *slot)
{
	return ((const struct ft_proc *)slot)->pid != 0;
}

static uint64_t proc_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return tr_u64_hash((uint32_t)((const struct ft_proc *)slot)->pid);
}

static int proc_is(const void *slot, const void *key)
{
	return ((const struct ft_proc *)slot)->pid == *(const pid_t *)key;
}

static const struct tr_probe_ops proc_ops = {
	.size = sizeof(struct ft_proc),
	.first = 256,
	.used = proc_used,
	.hash = proc_hash,
};

/* The process's slot, or the free slot where it would go (procs_cap > 0). */
static struct ft_proc *proc_slot(const struct frametexts *ft, pid_t pid)
{
	return &ft->procs[tr_probe_find(ft->procs, ft->procs_cap, &proc_ops,
					tr_u64_hash((uint32_t)pid), proc_is, &pid)];
}

static struct ft_proc *proc_find(const struct frametexts *ft, pid_t pid)
{
	struct ft_proc *p;

	if (!ft->n_procs || pid <= 0)
		return NULL;
	p = proc_slot(ft, pid);
	return p->pid ? p : NULL;
}

/* Frees the process's texts and its slot. */
static void proc_drop(struct frametexts *ft, struct ft_proc *p)
{
	struct ft_node *n = p->texts;

	while (n) {
		struct ft_node *next = n->next;
		struct ft_slot *slot = slot_of(ft, n->pid, n->gen, n->addr, 0);

		if (slot->text == (struct frame_text *)(n + 1)) {
			tr_probe_delete(ft->slots, ft->cap, (size_t)(slot - ft->slots), &slot_ops,
					NULL);
			ft->n--;
		}
		free(n);
		n = next;
	}
	if (ft->gen_pid == p->pid)
		ft->gen_ok = 0;
	tr_probe_delete(ft->procs, ft->procs_cap, (size_t)(p - ft->procs), &proc_ops, NULL);
	ft->n_procs--;
}

int ft_fork(struct frametexts *ft, pid_t pid, pid_t ppid, pid_t tid)
{
	struct ft_proc *p;
	int ended = 0;

	if (pid <= 0)
		return 0;
	if (pid == ppid) {
		/* A new thread of a process followed, or of one that is not. */
		p = proc_find(ft, pid);
		if (p && tid != pid && !p->ended)
			p->threads++;
		return 0;
	}
	p = proc_find(ft, pid);
	/* The PID's earlier process: one still in its grace, or one whose end
	 * the recording lost.  What it kept is under generations the new one
	 * never has, but it goes now all the same. */
	if (p) {
		ended = p->ended;
		proc_drop(ft, p);
	}
	p = tr_probe_grow(ft->procs, &ft->procs_cap, ft->n_procs + 1, &proc_ops, NULL);
	if (!p)
		return ended ? 1 : -ENOMEM;
	ft->procs = p;
	p = proc_slot(ft, pid);
	*p = (struct ft_proc){ .pid = pid, .threads = 1, .serial = ++ft->serial };
	ft->n_procs++;
	return ended;
}

int ft_exit(struct frametexts *ft, pid_t pid, pid_t tid, uint64_t time_ns)
{
	struct ft_proc *p = proc_find(ft, pid);

	if (!p || p->ended)
		return 0;
	if (p->threads)
		p->threads--;
	if (tid == pid)
		p->leader_gone = 1;
	/* Threads of an exit_group() may exit after their leader: the
	 * process is over with the last of them. */
	if (p->threads || !p->leader_gone)
		return 0;
	if (ft->ended_head + ft->n_ended == ft->cap_ended) {
		if (ft->ended_head) {
			memmove(ft->ended, ft->ended + ft->ended_head,
				ft->n_ended * sizeof(*ft->ended));
			ft->ended_head = 0;
		} else {
			struct ft_ended *grown = tr_vec_grow(ft->ended, &ft->cap_ended,
							     ft->n_ended + 1, sizeof(*grown), 256);

			/* Not queued: the process stays, as one never followed. */
			if (!grown)
				return 0;
			ft->ended = grown;
		}
	}
	ft->ended[ft->ended_head + ft->n_ended++] =
		(struct ft_ended){ .pid = pid, .serial = p->serial, .time_ns = time_ns };
	p->ended = 1;
	return 1;
}

pid_t ft_expire(struct frametexts *ft, uint64_t now_ns)
{
	while (ft->n_ended) {
		const struct ft_ended *e = &ft->ended[ft->ended_head];
		struct ft_proc *p;
		pid_t pid = e->pid;

		if (now_ns < FT_GRACE_NS || e->time_ns > now_ns - FT_GRACE_NS)
			return 0;
		p = proc_find(ft, pid);
		ft->ended_head++;
		ft->n_ended--;
		if (!ft->n_ended)
			ft->ended_head = 0;
		/* Not a later process of the PID (ft_fork dropped this one). */
		if (p && p->ended && p->serial == e->serial) {
			proc_drop(ft, p);
			return pid;
		}
	}
	return 0;
}

void ft_counts(const struct frametexts *ft, size_t *processes, size_t *user, size_t *kernel)
{
	*processes = ft->n_procs;
	*user = ft->n - ft->n_kernel;
	*kernel = ft->n_kernel;
}

static struct frame_text *take(struct frametexts *ft, size_t size)
{
	const size_t align = _Alignof(struct frame_text);
	struct ft_chunk *c = ft->chunks;

	size = (size + align - 1) & ~(align - 1);
	if (!c || c->used + size > c->size) {
		size_t room = size > CHUNK ? size : CHUNK;

		c = malloc(sizeof(*c) + room);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = room;
		c->next = ft->chunks;
		ft->chunks = c;
	}
	c->used += size;
	return (struct frame_text *)(c->data + c->used - size);
}

/* Room for a text: a followed process's user frame gets its own, on the
 * process's list; the others come from the chunks. */
static struct frame_text *text_room(struct frametexts *ft, pid_t pid, uint32_t gen,
				    uint64_t addr, int kernel, size_t size)
{
	struct ft_proc *p = kernel ? NULL : proc_find(ft, pid);
	struct ft_node *n;

	if (!p)
		return take(ft, size);
	n = malloc(sizeof(*n) + size);
	if (!n)
		return NULL;
	*n = (struct ft_node){ .next = p->texts, .addr = addr, .pid = pid, .gen = gen };
	p->texts = n;
	return (struct frame_text *)(n + 1);
}

/* "\t%16llx name (object)\n" and the name, NUL-terminated; NULL when out
 * of memory. */
static struct frame_text *make_text(struct frametexts *ft, pid_t pid, uint32_t gen,
				    uint64_t addr, int kernel, const char *fold,
				    const struct tracerig_symbol *sym)
{
	const char *name = sym->name ? sym->name : "[unknown]";
	size_t name_len = strlen(name), dso_len = strlen(sym->dso), fold_len = strlen(fold);
	size_t line_len = 1 + 16 + 1 + name_len + 2 + dso_len + 2;
	struct frame_text *t;
	char *p;

	if (line_len + fold_len + 1 > UINT32_MAX)
		return NULL;
	t = text_room(ft, pid, gen, addr, kernel, sizeof(*t) + line_len + fold_len + 1);
	if (!t)
		return NULL;
	p = t->s;
	*p++ = '\t';
	p = fmt_hex16(p, addr);
	*p++ = ' ';
	memcpy(p, name, name_len);
	p += name_len;
	*p++ = ' ';
	*p++ = '(';
	memcpy(p, sym->dso, dso_len);
	p += dso_len;
	*p++ = ')';
	*p++ = '\n';
	memcpy(p, fold, fold_len + 1);
	t->line_len = (uint32_t)line_len;
	t->fold_len = (uint32_t)fold_len;
	return t;
}

/* The generation of pid's mappings, read once per sample (ft_sample) into
 * ft->gen. */
static int sample_generation(struct frametexts *ft, pid_t pid)
{
	if (!ft->gen_ok || ft->gen_pid != pid) {
		if (tracerig_internal(ft->svc)->frame_generation(ft->ctx, pid, &ft->gen) < 0)
			return -1;
		ft->gen_pid = pid;
		ft->gen_ok = 1;
	}
	return 0;
}

static int reread_generation(struct frametexts *ft, pid_t pid)
{
	uint32_t after;

	if (tracerig_internal(ft->svc)->frame_generation(ft->ctx, pid, &after) < 0)
		return -1;
	ft->gen = after;
	return 0;
}

/* The key's slot (`slot`, or where it is after growing the table) for a
 * new text; NULL when out of memory. */
static struct ft_slot *slot_for_text(struct frametexts *ft, struct ft_slot *slot, pid_t pid,
				     uint32_t gen, uint64_t addr, int kernel)
{
	if (!slot->text) {
		struct ft_slot *grown =
			tr_probe_grow(ft->slots, &ft->cap, ft->n + 1, &slot_ops, NULL);

		if (!grown)
			return NULL;
		/* A new table (the old one was alive still): the entries moved. */
		if (grown != ft->slots) {
			ft->slots = grown;
			slot = slot_of(ft, pid, gen, addr, kernel);
		}
	}
	if (!slot->text) {
		ft->n++;
		ft->n_kernel += kernel != 0;
	}
	slot->addr = addr;
	slot->pid = pid;
	slot->gen = gen;
	slot->kernel = kernel;
	return slot;
}

const struct frame_text *ft_text(struct frametexts *ft, pid_t pid, uint64_t addr, int kernel,
				 uint64_t time_ns, int *ret)
{
	struct tracerig_symbol sym;
	struct ft_slot *slot;
	struct frame_text *text;
	const char *fold;
	uint32_t gen = 0;
	int r;

	if (kernel) {
		pid = 0;
	} else {
		if (sample_generation(ft, pid) < 0)
			return NULL;
		gen = ft->gen;
	}
	slot = slot_of(ft, pid, gen, addr, kernel);
	/* The core's answer holds for the generation, but a user frame it
	 * did not name it may look up again after a while (-ENOENT): those
	 * are asked every time, as without this cache. */
	if (slot->text && (slot->ret == 0 || slot->ret == -ENODATA || kernel)) {
		*ret = slot->ret;
		return slot->text;
	}
	r = ft->svc->symbols->frame_name(ft->ctx, pid, addr, kernel, time_ns, &fold, &sym);
	if (r == -ENOMEM)
		return NULL;
	*ret = r;
	/* The lookup may have moved the generation (mappings reread, new JIT
	 * symbols).  The rest of the sample asks under the new one; what is
	 * kept under the old one is never served again, as later samples
	 * read the new one. */
	if (!kernel && reread_generation(ft, pid) < 0)
		return NULL;
	/* An unnamed frame answered with the same strings as when this text
	 * was made: the same text (the core keeps one copy of each string,
	 * so equal pointers are equal strings). */
	if (slot->text && slot->fold == fold && slot->dso == sym.dso && sym.name == NULL)
		return slot->text;
	text = make_text(ft, pid, gen, addr, kernel, fold, &sym);
	if (!text)
		return NULL;
	slot = slot_for_text(ft, slot, pid, gen, addr, kernel);
	if (!slot)
		return NULL;
	slot->text = text;
	slot->ret = r;
	slot->fold = fold;
	slot->dso = sym.dso;
	return slot->text;
}
