/* Cached frame names from the shared symbolizer. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"

struct fr_slot {
	pid_t pid; /* 0 for kernel addresses */
	uint64_t addr;
	char *name; /* NULL: empty slot */
};

struct fr_cache {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct fr_slot *slots;
	size_t n_slots, n_used;
	uint64_t unresolved;
};

struct fr_cache *fr_cache_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	struct fr_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->svc = svc;
	c->ctx = ctx;
	return c;
}

void fr_cache_free(struct fr_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_slots; i++)
		free(c->slots[i].name);
	free(c->slots);
	free(c);
}

uint64_t fr_unresolved(const struct fr_cache *c)
{
	return c->unresolved;
}

static size_t slot_of(const struct fr_cache *c, pid_t pid, uint64_t addr)
{
	uint64_t h = (addr ^ ((uint64_t)(uint32_t)pid << 40)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (c->n_slots - 1);
}

static int grow(struct fr_cache *c)
{
	size_t n = c->n_slots ? c->n_slots * 2 : 4096;
	struct fr_slot *old = c->slots;
	size_t n_old = c->n_slots;

	c->slots = calloc(n, sizeof(*c->slots));
	if (!c->slots) {
		c->slots = old;
		return -ENOMEM;
	}
	c->n_slots = n;
	for (size_t i = 0; i < n_old; i++) {
		size_t j;

		if (!old[i].name)
			continue;
		for (j = slot_of(c, old[i].pid, old[i].addr); c->slots[j].name; j = (j + 1) & (n - 1))
			;
		c->slots[j] = old[i];
	}
	free(old);
	return 0;
}

static void lookup(struct fr_cache *c, pid_t pid, uint64_t addr, int kernel, char *buf, size_t len)
{
	struct tracerig_symbol sym;

	memset(&sym, 0, sizeof(sym));
	if (c->svc->symbolize(c->ctx, pid, addr, kernel, &sym) == 0 && sym.name) {
		snprintf(buf, len, "%s%s", sym.name, kernel ? "_[k]" : "");
		return;
	}
	c->unresolved++;
	if (sym.dso && strcmp(sym.dso, "[unknown]") != 0) {
		const char *base = strrchr(sym.dso, '/');

		snprintf(buf, len, "[%s]", base ? base + 1 : sym.dso);
		return;
	}
	snprintf(buf, len, "0x%" PRIx64 "%s", addr, kernel ? "_[k]" : "");
}

void fr_name(void *cache, pid_t pid, uint64_t addr, int kernel, char *buf, size_t len)
{
	struct fr_cache *c = cache;
	pid_t key = kernel ? 0 : pid;
	size_t j;

	if ((c->n_used + 1) * 2 > c->n_slots && grow(c) < 0) {
		lookup(c, pid, addr, kernel, buf, len); /* uncached, still right */
		return;
	}
	for (j = slot_of(c, key, addr); c->slots[j].name; j = (j + 1) & (c->n_slots - 1)) {
		if (c->slots[j].pid == key && c->slots[j].addr == addr) {
			snprintf(buf, len, "%s", c->slots[j].name);
			return;
		}
	}
	lookup(c, pid, addr, kernel, buf, len);
	c->slots[j].name = strdup(buf);
	if (c->slots[j].name) {
		c->slots[j].pid = key;
		c->slots[j].addr = addr;
		c->n_used++;
	}
}
