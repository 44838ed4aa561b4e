/* Frame texts kept per (process, generation, address) (see frametexts.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frametexts.h"
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
	const char *fold; /* frame_name's name: the core's entry it came from */
	struct frame_text *text; /* NULL: a free slot */
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

void ft_free(struct frametexts *ft)
{
	if (!ft)
		return;
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

static size_t slot_hash(pid_t pid, uint32_t gen, uint64_t addr)
{
	uint64_t h = addr * 0x9E3779B97F4A7C15ull ^
		     ((uint64_t)(uint32_t)pid << 32 | gen) * 0xC2B2AE3D27D4EB4Full;

	return (size_t)(h ^ (h >> 29));
}

/* The slot of the key, or the free slot where it would go. */
static struct ft_slot *slot_of(const struct frametexts *ft, pid_t pid, uint32_t gen,
			       uint64_t addr, int kernel)
{
	size_t i;

	for (i = slot_hash(pid, gen, addr) & (ft->cap - 1); ft->slots[i].text;
	     i = (i + 1) & (ft->cap - 1)) {
		const struct ft_slot *s = &ft->slots[i];

		if (s->addr == addr && s->pid == pid && s->gen == gen && s->kernel == kernel)
			break;
	}
	return &ft->slots[i];
}

static int grow(struct frametexts *ft)
{
	struct ft_slot *old = ft->slots;
	size_t old_cap = ft->cap;

	ft->slots = calloc(old_cap * 2, sizeof(*ft->slots));
	if (!ft->slots) {
		ft->slots = old;
		return -ENOMEM;
	}
	ft->cap = old_cap * 2;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].text)
			*slot_of(ft, old[i].pid, old[i].gen, old[i].addr, old[i].kernel) = old[i];
	free(old);
	return 0;
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

/* "\t%16llx name (object)\n" and the folded name; NULL when out of memory. */
static struct frame_text *make_text(struct frametexts *ft, uint64_t addr, int kernel,
				    const char *fold, const struct tracerig_symbol *sym)
{
	const char *name = sym->name ? sym->name : "[unknown]";
	size_t name_len = strlen(name), dso_len = strlen(sym->dso), fold_len = strlen(fold);
	size_t line_len = 1 + 16 + 1 + name_len + 2 + dso_len + 2;
	struct frame_text *t;
	char *p;

	/* fold_frames marks kernel frames itself: the name goes without
	 * the "_[k]" that frame_name ends every kernel frame's name with. */
	if (kernel && fold_len >= 4 && memcmp(fold + fold_len - 4, "_[k]", 4) == 0)
		fold_len -= 4;
	if (line_len + fold_len > UINT32_MAX)
		return NULL;
	t = take(ft, sizeof(*t) + line_len + fold_len);
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
	memcpy(p, fold, fold_len);
	t->line_len = (uint32_t)line_len;
	t->fold_len = (uint32_t)fold_len;
	t->no_object = !sym->name && strcmp(sym->dso, "[unknown]") == 0;
	return t;
}

const struct frame_text *ft_text(struct frametexts *ft, pid_t pid, uint64_t addr, int kernel,
				 int *ret)
{
	struct tracerig_symbol sym;
	struct ft_slot *slot;
	struct frame_text *text;
	const char *fold;
	uint32_t gen = 0, after;
	int r;

	if (kernel) {
		pid = 0;
	} else {
		if (!ft->gen_ok || ft->gen_pid != pid) {
			if (ft->svc->frame_generation(ft->ctx, pid, &ft->gen) < 0)
				return NULL;
			ft->gen_pid = pid;
			ft->gen_ok = 1;
		}
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
	r = ft->svc->frame_name(ft->ctx, pid, addr, kernel, &fold, &sym);
	if (r == -ENOMEM)
		return NULL;
	*ret = r;
	/* An unnamed frame the core answered from the entry it made when
	 * this text was: the same strings, the same text, and no lookup that
	 * could have moved the generation (the core makes a new entry, with
	 * new strings, for every lookup). */
	if (slot->text && slot->fold == fold)
		return slot->text;
	if (!kernel) {
		/* The lookup may have moved the generation (mappings reread,
		 * new JIT symbols).  The rest of the sample asks under the new
		 * one; what is kept under the old one is never served again,
		 * as later samples read the new one. */
		if (ft->svc->frame_generation(ft->ctx, pid, &after) < 0)
			return NULL;
		ft->gen = after;
	}
	text = make_text(ft, addr, kernel, fold, &sym);
	if (!text)
		return NULL;
	if (!slot->text && (ft->n + 1) * 4 > ft->cap * 3) {
		if (grow(ft) < 0)
			return NULL;
		slot = slot_of(ft, pid, gen, addr, kernel);
	}
	if (!slot->text)
		ft->n++;
	slot->text = text;
	slot->addr = addr;
	slot->pid = pid;
	slot->gen = gen;
	slot->kernel = kernel;
	slot->ret = r;
	slot->fold = fold;
	return slot->text;
}
