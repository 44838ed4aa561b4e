#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "symcache.h"

/* Frames live in blocks that never move (callers hold them across later
 * lookups); the table points into them. */
#define FRAMES_PER_BLOCK 1024
/* What callers keep with frames comes from chunks of this size (bigger
 * requests get a chunk of their own). */
#define KEPT_CHUNK (64 * 1024)

struct slot {
	uint64_t addr;
	uint32_t space; /* whose address space: see space_of */
	struct symcache_frame *frame; /* NULL: free */
};

struct block {
	struct block *next;
	size_t used;
	_Alignas(max_align_t) unsigned char data[];
};

/* A process whose mappings changed during the replay (exec, mmap, fork)
 * gets a new address-space number, so what was cached for its old
 * mappings is never served again. */
struct space {
	pid_t pid;
	uint32_t space;
};

struct symcache {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct slot *slots;
	size_t cap, n;
	struct block *frames; /* the newest first, FRAMES_PER_BLOCK frames each */
	struct block *kept;   /* the newest first */
	/* Served when memory runs out: never cached, nothing kept with it. */
	struct symcache_frame fallback;
	uint64_t unresolved;
	struct space *spaces; /* open addressing, pid 0 = free */
	size_t spaces_cap, n_spaces;
	uint32_t next_space;
	/* The last process looked up and its space: a sample's frames share it. */
	pid_t last_pid;
	uint32_t last_space;
};

struct symcache *symcache_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	struct symcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->svc = svc;
	c->ctx = ctx;
	/* Above every PID: a process keeps its PID as its first space. */
	c->next_space = 1u << 31;
	c->last_pid = -1;
	c->fallback.sym = (struct tracerig_symbol){ NULL, "[unknown]", 0, 0 };
	c->cap = 1 << 14;
	c->slots = calloc(c->cap, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return NULL;
	}
	return c;
}

static void free_blocks(struct block *b)
{
	while (b) {
		struct block *next = b->next;

		free(b);
		b = next;
	}
}

void symcache_free(struct symcache *c)
{
	if (!c)
		return;
	free(c->slots);
	free_blocks(c->frames);
	free_blocks(c->kept);
	free(c->spaces);
	free(c);
}

/* `size` bytes from the newest block of `*list`, or from a new block of
 * `block_size` (or of `size`, when bigger). */
static void *take(struct block **list, size_t size, size_t block_size)
{
	const size_t align = _Alignof(max_align_t);
	struct block *b = *list;
	void *p;

	size = (size + align - 1) & ~(align - 1);
	if (!b || b->used + size > block_size) {
		b = malloc(sizeof(*b) + (size > block_size ? size : block_size));
		if (!b)
			return NULL;
		b->used = 0;
		if (size >= block_size && *list) {
			/* A block of its own, full at once: behind the newest,
			 * whose room stays in use. */
			b->next = (*list)->next;
			(*list)->next = b;
		} else {
			b->next = *list;
			*list = b;
		}
	}
	p = b->data + b->used;
	b->used += size;
	return p;
}

void *symcache_keep(struct symcache *c, struct symcache_frame *f, size_t size)
{
	if (f == &c->fallback)
		return NULL;
	f->kept = take(&c->kept, size, KEPT_CHUNK);
	return f->kept;
}

static size_t hash(uint64_t addr, uint32_t space)
{
	uint64_t h = addr * 0x9E3779B97F4A7C15ull ^ (uint64_t)space * 0xC2B2AE3D27D4EB4Full;

	return (size_t)(h ^ (h >> 29));
}

static int grow(struct symcache *c)
{
	size_t ncap = c->cap * 2;
	struct slot *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++) {
		size_t j;

		if (!c->slots[i].frame)
			continue;
		j = hash(c->slots[i].addr, c->slots[i].space) & (ncap - 1);
		while (n[j].frame)
			j = (j + 1) & (ncap - 1);
		n[j] = c->slots[i];
	}
	free(c->slots);
	c->slots = n;
	c->cap = ncap;
	return 0;
}

static struct space *space_slot(struct symcache *c, pid_t pid)
{
	size_t i;

	if (!c->spaces_cap)
		return NULL;
	for (i = ((uint32_t)pid * 2654435761u) & (c->spaces_cap - 1); c->spaces[i].pid;
	     i = (i + 1) & (c->spaces_cap - 1))
		if (c->spaces[i].pid == pid)
			return &c->spaces[i];
	return &c->spaces[i];
}

static uint32_t space_of(struct symcache *c, pid_t pid)
{
	struct space *sp;

	if (pid == c->last_pid)
		return c->last_space;
	sp = space_slot(c, pid);
	c->last_pid = pid;
	c->last_space = sp && sp->pid == pid ? sp->space : (uint32_t)pid;
	return c->last_space;
}

static int grow_spaces(struct symcache *c)
{
	struct space *old = c->spaces;
	size_t old_cap = c->spaces_cap;

	c->spaces_cap = old_cap ? old_cap * 2 : 256;
	c->spaces = calloc(c->spaces_cap, sizeof(*c->spaces));
	if (!c->spaces) {
		c->spaces = old;
		c->spaces_cap = old_cap;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].pid)
			*space_slot(c, old[i].pid) = old[i];
	free(old);
	return 0;
}

static int forget(struct symcache *c, pid_t pid)
{
	struct space *sp;

	if ((c->n_spaces + 1) * 2 > c->spaces_cap && grow_spaces(c) < 0)
		return -ENOMEM;
	sp = space_slot(c, pid);
	if (sp->pid != pid) {
		sp->pid = pid;
		c->n_spaces++;
	}
	sp->space = c->next_space++;
	c->last_pid = -1;
	return 0;
}

int symcache_mmap(struct symcache *c, const struct tracerig_mapping *m)
{
	int ret = forget(c, m->pid);

	return ret < 0 ? ret : c->svc->symbolizer_mmap(c->ctx, m);
}

int symcache_exec(struct symcache *c, pid_t pid)
{
	int ret = forget(c, pid);

	return ret < 0 ? ret : c->svc->symbolizer_exec(c->ctx, pid);
}

int symcache_fork(struct symcache *c, pid_t parent, pid_t child)
{
	int ret = forget(c, child);

	return ret < 0 ? ret : c->svc->symbolizer_fork(c->ctx, parent, child);
}

struct symcache_frame *symcache_lookup(struct symcache *c, pid_t pid, uint64_t addr, int kernel)
{
	uint32_t space = kernel ? 0 : space_of(c, pid);
	struct symcache_frame *f;
	struct slot *s;
	size_t i;

	if (kernel)
		pid = 0;
	if ((c->n + 1) * 4 > c->cap * 3 && grow(c) < 0)
		return &c->fallback;
	i = hash(addr, space) & (c->cap - 1);
	while (c->slots[i].frame) {
		if (c->slots[i].addr == addr && c->slots[i].space == space)
			return c->slots[i].frame;
		i = (i + 1) & (c->cap - 1);
	}
	f = take(&c->frames, sizeof(*f), FRAMES_PER_BLOCK * sizeof(*f));
	if (!f)
		return &c->fallback;
	*f = (struct symcache_frame){ .sym = { 0 } };
	if (c->svc->symbolize(c->ctx, pid, addr, kernel, &f->sym) < 0 || !f->sym.name)
		c->unresolved++;
	if (!f->sym.dso)
		f->sym.dso = "[unknown]";
	s = &c->slots[i];
	s->addr = addr;
	s->space = space;
	s->frame = f;
	c->n++;
	return f;
}

uint64_t symcache_unresolved(const struct symcache *c)
{
	return c->unresolved;
}
