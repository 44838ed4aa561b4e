#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symcache.h"

struct slot {
	uint64_t addr;
	pid_t pid; /* 0 for kernel addresses: the same in every process */
	int used;
	struct tracerig_symbol sym;
};

struct symcache {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct slot *slots;
	size_t cap, n;
	uint64_t unresolved;
};

static const struct tracerig_symbol unknown = { NULL, "[unknown]", 0, 0 };

struct symcache *symcache_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	struct symcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->svc = svc;
	c->ctx = ctx;
	c->cap = 1 << 14;
	c->slots = calloc(c->cap, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return NULL;
	}
	return c;
}

void symcache_free(struct symcache *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c);
}

static size_t hash(uint64_t addr, pid_t pid)
{
	uint64_t h = addr * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)pid * 0xC2B2AE3D27D4EB4Full;

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

		if (!c->slots[i].used)
			continue;
		j = hash(c->slots[i].addr, c->slots[i].pid) & (ncap - 1);
		while (n[j].used)
			j = (j + 1) & (ncap - 1);
		n[j] = c->slots[i];
	}
	free(c->slots);
	c->slots = n;
	c->cap = ncap;
	return 0;
}

const struct tracerig_symbol *symcache_lookup(struct symcache *c, pid_t pid, uint64_t addr,
					      int kernel)
{
	struct slot *s;
	size_t i;

	if (kernel)
		pid = 0;
	if ((c->n + 1) * 4 > c->cap * 3 && grow(c) < 0)
		goto uncached;
	i = hash(addr, pid) & (c->cap - 1);
	while (c->slots[i].used) {
		if (c->slots[i].addr == addr && c->slots[i].pid == pid)
			return &c->slots[i].sym;
		i = (i + 1) & (c->cap - 1);
	}
	s = &c->slots[i];
	if (c->svc->symbolize(c->ctx, pid, addr, kernel, &s->sym) < 0 || !s->sym.name)
		c->unresolved++;
	if (!s->sym.dso)
		s->sym.dso = "[unknown]";
	s->addr = addr;
	s->pid = pid;
	s->used = 1;
	c->n++;
	return &s->sym;
uncached:
	return &unknown;
}

uint64_t symcache_unresolved(const struct symcache *c)
{
	return c->unresolved;
}
