/* Frame names and their (process, address) cache (see frames.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "lib/hash.h"
#include "lib/probe.h"
#include "lib/sanitize.h"

/* Entries live in blocks that never move: the service hands out pointers
 * to their strings, and the table points into them. */
#define FRAMES_PER_BLOCK 1024
#define KERNEL_MARK "_[k]"

struct tr_frame_slot {
	uint64_t addr;
	pid_t pid;
	uint32_t gen;
	int kernel;
	struct tr_frame *frame; /* NULL: free */
};

struct tr_frame_block {
	struct tr_frame_block *next;
	size_t used;
	struct tr_frame frames[FRAMES_PER_BLOCK];
};

size_t tr_frame_name_format(char *dst, size_t size, const struct tracerig_symbol *s,
			    uint64_t addr, int kernel)
{
	const char *mark = kernel ? KERNEL_MARK : "";
	int n;

	/* Empty strings name nothing: a folded stack has no empty frames. */
	if (s->name && *s->name) {
		n = snprintf(dst, size, "%s%s", s->name, mark);
	} else if (s->dso && *s->dso && strcmp(s->dso, "[unknown]") != 0) {
		/* The object's file name in brackets; names that have them
		 * already ("[vdso]", "[kernel.kallsyms]", a module's) as they are. */
		const char *base = strrchr(s->dso, '/');

		base = base && base[1] ? base + 1 : s->dso;
		n = base[0] == '[' ? snprintf(dst, size, "%s%s", base, mark)
				   : snprintf(dst, size, "[%s]%s", base, mark);
	} else {
		/* perf's word: one name for every such frame keeps flame graphs
		 * merged where garbage addresses would split them. */
		n = snprintf(dst, size, "[unknown]%s", mark);
	}
	if (n < 0)
		n = 0;
	/* The rule keeps the length: what was written stays what is needed. */
	if (size)
		tr_sanitize_name(dst, size, dst);
	return (size_t)n;
}

static int slot_used(const void *slot)
{
	return ((const struct tr_frame_slot *)slot)->frame != NULL;
}

static uint64_t slot_hash(const void *slot, const void *ctx)
{
	const struct tr_frame_slot *s = slot;

	(void)ctx;
	return tr_frame_key_hash(s->pid, s->gen, s->addr);
}

/* Three quarters full at most: the cache is the core's largest table. */
static const struct tr_probe_ops slot_ops = {
	.size = sizeof(struct tr_frame_slot),
	.first = 1 << 14,
	.quarters = 3,
	.used = slot_used,
	.hash = slot_hash,
};

static int slot_is(const void *slot, const void *key)
{
	const struct tr_frame_slot *s = slot, *k = key;

	return s->addr == k->addr && s->kernel == k->kernel && s->pid == k->pid && s->gen == k->gen;
}

/* The slot of the key, or the free slot where it would go. */
static struct tr_frame_slot *slot_of(const struct tr_frames *c, pid_t pid, uint32_t gen,
				     uint64_t addr, int kernel)
{
	struct tr_frame_slot k = { .addr = addr, .pid = pid, .gen = gen, .kernel = kernel };

	return &c->slots[tr_probe_find(c->slots, c->cap, &slot_ops,
				       tr_frame_key_hash(pid, gen, addr), slot_is, &k)];
}

struct tr_frame *tr_frames_find(const struct tr_frames *c, pid_t pid, uint32_t gen,
				uint64_t addr, int kernel)
{
	if (!c->cap)
		return NULL;
	if (kernel)
		pid = 0, gen = 0;
	return slot_of(c, pid, gen, addr, kernel)->frame;
}

static int grow(struct tr_frames *c)
{
	struct tr_frame_slot *slots = tr_probe_grow(c->slots, &c->cap, c->n + 1, &slot_ops, NULL);

	if (!slots)
		return -ENOMEM;
	c->slots = slots;
	return 0;
}

static struct tr_frame *new_frame(struct tr_frames *c)
{
	struct tr_frame_block *b = c->blocks;

	if (c->spare) {
		struct tr_frame *f = c->spare;

		c->spare = f->next_of_pid;
		return f;
	}

	if (!b || b->used == FRAMES_PER_BLOCK) {
		b = malloc(sizeof(*b));
		if (!b)
			return NULL;
		b->used = 0;
		b->next = c->blocks;
		c->blocks = b;
	}
	return &b->frames[b->used++];
}

/* s itself when the rule leaves it as it is, else a copy under the rule. */
static const char *sanitized(struct tr_frames *c, struct tr_arena *arena, const char *s)
{
	char small[256], *copy;
	size_t len;
	const char *ret;

	if (!s || !tr_name_needs_sanitizing(s))
		return s;
	len = strlen(s);
	copy = len < sizeof(small) ? small : malloc(len + 1);
	if (!copy)
		return NULL;
	tr_sanitize_name(copy, len + 1, s);
	ret = tr_interned_n(&c->names, arena, copy, len);
	if (copy != small)
		free(copy);
	return ret;
}

/* s->name is already under the rule (sanitized()). */
static const char *make_name(struct tr_frames *c, struct tr_arena *arena,
			     const struct tracerig_symbol *s, uint64_t addr, int kernel)
{
	char small[256], *buf = small;
	size_t len;
	const char *name;

	/* Most frames: a user symbol, named as it is, no copy. */
	if (!kernel && s->name && *s->name)
		return s->name;
	len = tr_frame_name_format(small, sizeof(small), s, addr, kernel);

	if (len >= sizeof(small)) {
		buf = malloc(len + 1);
		if (!buf)
			return NULL;
		tr_frame_name_format(buf, len + 1, s, addr, kernel);
	}
	name = tr_interned_n(&c->names, arena, buf, len);
	if (buf != small)
		free(buf);
	return name;
}

struct tr_frame *tr_frames_add(struct tr_frames *c, struct tr_arena *arena, pid_t pid,
			       uint32_t gen, uint64_t addr, int kernel,
			       const struct tracerig_symbol *found, int ret, struct tr_frame **owner)
{
	struct tr_frame_slot *slot;
	struct tr_frame *f;

	if (kernel)
		pid = 0, gen = 0;
	if (grow(c) < 0)
		return NULL;
	f = new_frame(c);
	if (!f)
		return NULL;
	*f = (struct tr_frame){ .sym = *found, .ret = ret, .addr = addr, .pid = pid, .gen = gen };
	if (!f->sym.dso)
		f->sym.dso = "[unknown]";
	f->sym.name = sanitized(c, arena, found->name);
	f->sym.dso = sanitized(c, arena, f->sym.dso);
	if ((!found->name || f->sym.name) && f->sym.dso)
		f->name = make_name(c, arena, &f->sym, addr, kernel);
	if (!f->name) {
		f->next_of_pid = c->spare;
		c->spare = f;
		return NULL;
	}
	slot = slot_of(c, pid, gen, addr, kernel);
	if (!slot->frame)
		c->n++;
	*slot = (struct tr_frame_slot){ .addr = addr, .pid = pid, .gen = gen, .kernel = kernel,
					.frame = f };
	/* One it replaced stays on the list, out of the table, until the drop. */
	if (owner) {
		f->next_of_pid = *owner;
		*owner = f;
	}
	return f;
}

void tr_frames_drop(struct tr_frames *c, struct tr_frame *list)
{
	while (list) {
		struct tr_frame *next = list->next_of_pid;
		struct tr_frame_slot *slot = slot_of(c, list->pid, list->gen, list->addr, 0);

		if (slot->frame == list) {
			tr_probe_delete(c->slots, c->cap, (size_t)(slot - c->slots), &slot_ops,
					NULL);
			c->n--;
		}
		list->next_of_pid = c->spare;
		c->spare = list;
		list = next;
	}
}

void tr_frames_free(struct tr_frames *c)
{
	while (c->blocks) {
		struct tr_frame_block *next = c->blocks->next;

		free(c->blocks);
		c->blocks = next;
	}
	free(c->slots);
	tr_interned_free(&c->names);
	*c = (struct tr_frames){ 0 };
}
