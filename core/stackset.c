/* Stacks merged by content, with interned frames and strings. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strmap.h"
#include "stackset.h"

struct index {
	struct tr_strmap strings; /* keys are the interned strings */
	struct tr_strmap frames;  /* value: frame index + 1 */
	struct tr_strmap stacks;  /* value: stack index + 1 */
	char *key;
	size_t key_cap;
};

static const char *intern(struct index *ix, const char *str)
{
	struct tr_strmap_entry *e = tr_strmap_get(&ix->strings, str, strlen(str));

	return e ? e->key : NULL;
}

/* Room for `need` bytes in the key scratch. */
static int key_room(struct index *ix, size_t need)
{
	char *grown;

	if (need <= ix->key_cap)
		return 0;
	grown = realloc(ix->key, need * 2);
	if (!grown)
		return -ENOMEM;
	ix->key = grown;
	ix->key_cap = need * 2;
	return 0;
}

int tr_stackset_init(struct tr_stackset *s, const char *kind, const char *value_type,
		     const char *value_unit)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->value_type = value_type;
	s->value_unit = value_unit;
	s->index = calloc(1, sizeof(struct index));
	return s->index ? 0 : -ENOMEM;
}

void tr_stackset_free(struct tr_stackset *s)
{
	struct index *ix = s->index;

	for (size_t i = 0; i < s->n_stacks; i++)
		free(s->stacks[i].frames);
	free(s->stacks);
	free(s->frames);
	if (ix) {
		tr_strmap_free(&ix->strings);
		tr_strmap_free(&ix->frames);
		tr_strmap_free(&ix->stacks);
		free(ix->key);
		free(ix);
	}
	memset(s, 0, sizeof(*s));
}

/* The frame's index + 1, or 0 when out of memory. */
static uint32_t frame_index(struct tr_stackset *s, const struct ss_frame *f)
{
	struct index *ix = s->index;
	struct tr_strmap_entry *e;
	size_t need = strlen(f->name) + strlen(f->dso) + 64;
	int len;

	if (key_room(ix, need) < 0)
		return 0;
	len = snprintf(ix->key, ix->key_cap, "%" PRIx64 "|%d|%zu:%s|%s", f->address, f->kernel,
		       strlen(f->name), f->name, f->dso);
	e = tr_strmap_get(&ix->frames, ix->key, (size_t)len);
	if (!e)
		return 0;
	if (!e->value) {
		struct ss_frame copy = *f;

		if (s->n_frames == s->cap_frames) {
			size_t cap = s->cap_frames ? s->cap_frames * 2 : 256;
			struct ss_frame *grown = realloc(s->frames, cap * sizeof(*grown));

			if (!grown)
				return 0;
			s->frames = grown;
			s->cap_frames = cap;
		}
		copy.name = intern(ix, f->name);
		copy.dso = intern(ix, f->dso);
		if (!copy.name || !copy.dso)
			return 0;
		s->frames[s->n_frames++] = copy;
		e->value = s->n_frames;
	}
	return (uint32_t)e->value;
}

int tr_stackset_add(struct tr_stackset *s, const struct ss_frame *frames, size_t n_frames,
		    long pid, long tid, const char *comm, int64_t value, int64_t count)
{
	struct index *ix = s->index;
	struct tr_strmap_entry *e;
	uint32_t *ids = malloc((n_frames ? n_frames : 1) * sizeof(*ids));
	size_t len;
	struct ss_stack *st;

	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < n_frames; i++) {
		ids[i] = frame_index(s, &frames[i]);
		if (!ids[i]) {
			free(ids);
			return -ENOMEM;
		}
		ids[i]--;
	}
	if (key_room(ix, n_frames * 11 + strlen(comm) + 64) < 0) {
		free(ids);
		return -ENOMEM;
	}
	len = (size_t)snprintf(ix->key, ix->key_cap, "%ld/%ld/%s|", pid, tid, comm);
	for (size_t i = 0; i < n_frames; i++)
		len += (size_t)snprintf(ix->key + len, ix->key_cap - len, "%" PRIu32 ",", ids[i]);
	e = tr_strmap_get(&ix->stacks, ix->key, len);
	if (!e) {
		free(ids);
		return -ENOMEM;
	}
	if (e->value) {
		st = &s->stacks[e->value - 1];
		st->value += value;
		st->count += count;
		free(ids);
		return 0;
	}
	if (s->n_stacks == s->cap_stacks) {
		size_t cap = s->cap_stacks ? s->cap_stacks * 2 : 256;
		struct ss_stack *grown = realloc(s->stacks, cap * sizeof(*grown));

		if (!grown) {
			free(ids);
			return -ENOMEM;
		}
		s->stacks = grown;
		s->cap_stacks = cap;
	}
	st = &s->stacks[s->n_stacks];
	st->frames = ids;
	st->n_frames = n_frames;
	st->pid = pid;
	st->tid = tid;
	st->comm = intern(ix, comm);
	st->value = value;
	st->count = count;
	if (!st->comm) {
		free(ids);
		return -ENOMEM;
	}
	e->value = ++s->n_stacks;
	return 0;
}

int64_t tr_stackset_total(const struct tr_stackset *s)
{
	int64_t sum = 0;

	for (size_t i = 0; i < s->n_stacks; i++)
		sum += s->stacks[i].value;
	return sum;
}

int64_t tr_stackset_count(const struct tr_stackset *s)
{
	int64_t sum = 0;

	for (size_t i = 0; i < s->n_stacks; i++)
		sum += s->stacks[i].count;
	return sum;
}
