/* Stacks merged by content, with interned frames and strings. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/folded.h"
#include "lib/sanitize.h"
#include "lib/strmap.h"
#include "lib/vec.h"
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
	char *grown = tr_vec_grow(ix->key, &ix->key_cap, need, 1, 256);

	if (!grown)
		return -ENOMEM;
	ix->key = grown;
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

/* What a string map entry costs beside its key, roughly. */
#define ENTRY_COST 48

/* a + b, held at the limit it would cross: weights come from archives. */
static int64_t sum_sat(int64_t a, int64_t b)
{
	int64_t sum;

	return __builtin_add_overflow(a, b, &sum) ? (b > 0 ? INT64_MAX : INT64_MIN) : sum;
}

static int64_t add_sat(struct tr_stackset *s, int64_t a, int64_t b)
{
	int64_t sum = sum_sat(a, b);

	if (sum == INT64_MAX || sum == INT64_MIN)
		s->saturated = 1;
	return sum;
}

/* Counts `cost` more bytes: 0, or -E2BIG past the cap. */
static int charge(struct tr_stackset *s, uint64_t cost)
{
	s->bytes += cost;
	return s->max_bytes && s->bytes > s->max_bytes ? -E2BIG : 0;
}

/* The frame's index + 1, or 0 with *err set. */
static uint32_t frame_index(struct tr_stackset *s, const struct ss_frame *f, int *err)
{
	struct index *ix = s->index;
	struct tr_strmap_entry *e;
	size_t need = strlen(f->name) + strlen(f->dso) + 64;
	int len;

	*err = -ENOMEM;
	if (key_room(ix, need) < 0)
		return 0;
	len = snprintf(ix->key, ix->key_cap, "%" PRIx64 "|%d|%zu:%s|%s", f->address, f->kernel,
		       strlen(f->name), f->name, f->dso);
	e = tr_strmap_get(&ix->frames, ix->key, (size_t)len);
	if (!e)
		return 0;
	if (!e->value) {
		struct ss_frame copy = *f;
		struct ss_frame *grown;

		if (charge(s, sizeof(copy) + (size_t)len + need + 3 * ENTRY_COST) < 0) {
			*err = -E2BIG;
			return 0;
		}
		grown = tr_vec_grow(s->frames, &s->cap_frames, s->n_frames + 1, sizeof(*grown), 256);
		if (!grown)
			return 0;
		s->frames = grown;
		copy.name = intern(ix, f->name);
		copy.dso = intern(ix, f->dso);
		if (!copy.name || !copy.dso)
			return 0;
		s->frames[s->n_frames++] = copy;
		e->value = s->n_frames;
	}
	return (uint32_t)e->value;
}

int64_t tr_stackset_frame(struct tr_stackset *s, const struct ss_frame *f)
{
	int err = 0;
	uint32_t id = frame_index(s, f, &err);

	return id ? (int64_t)id - 1 : err;
}

/* Ids as bytes without a NUL (strmap keys are strings): 6 bits a byte,
 * 0x40-0x7f while more follow, 0x80-0xbf for the last. */
static size_t put_id(char *out, uint32_t id)
{
	char tmp[6];
	size_t n = 0, len = 0;

	do {
		tmp[n++] = (char)(id & 0x3f);
		id >>= 6;
	} while (id);
	while (n > 1)
		out[len++] = (char)(0x40 | tmp[--n]);
	out[len++] = (char)(0x80 | tmp[0]);
	return len;
}

int tr_stackset_add_ids(struct tr_stackset *s, const uint32_t *frame_ids, size_t n_frames,
			long pid, long tid, const char *comm, int64_t value, int64_t count)
{
	struct index *ix = s->index;
	struct tr_strmap_entry *e;
	struct ss_stack *st, *grown;
	size_t len;

	if (key_room(ix, n_frames * 6 + strlen(comm) + 64) < 0)
		return -ENOMEM;
	len = (size_t)snprintf(ix->key, ix->key_cap, "%ld/%ld/%s|", pid, tid, comm);
	for (size_t i = 0; i < n_frames; i++)
		len += put_id(ix->key + len, frame_ids[i]);
	e = tr_strmap_get(&ix->stacks, ix->key, len);
	if (!e)
		return -ENOMEM;
	if (e->value) {
		st = &s->stacks[e->value - 1];
		st->value = add_sat(s, st->value, value);
		st->count = add_sat(s, st->count, count);
		return 0;
	}
	if (charge(s, sizeof(*st) + n_frames * sizeof(*st->frames) + len + ENTRY_COST) < 0)
		return -E2BIG;
	grown = tr_vec_grow(s->stacks, &s->cap_stacks, s->n_stacks + 1, sizeof(*grown), 256);
	if (!grown)
		return -ENOMEM;
	s->stacks = grown;
	st = &s->stacks[s->n_stacks];
	st->frames = malloc((n_frames ? n_frames : 1) * sizeof(*st->frames));
	st->comm = intern(ix, comm);
	if (!st->frames || !st->comm) {
		free(st->frames);
		return -ENOMEM;
	}
	memcpy(st->frames, frame_ids, n_frames * sizeof(*st->frames));
	st->n_frames = n_frames;
	st->pid = pid;
	st->tid = tid;
	st->value = value;
	st->count = count;
	e->value = ++s->n_stacks;
	return 0;
}

int tr_stackset_add(struct tr_stackset *s, const struct ss_frame *frames, size_t n_frames,
		    long pid, long tid, const char *comm, int64_t value, int64_t count)
{
	uint32_t *ids = malloc((n_frames ? n_frames : 1) * sizeof(*ids));
	int ret = 0;

	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < n_frames && ret == 0; i++) {
		int64_t id = tr_stackset_frame(s, &frames[i]);

		if (id < 0)
			ret = (int)id;
		else
			ids[i] = (uint32_t)id;
	}
	if (ret == 0)
		ret = tr_stackset_add_ids(s, ids, n_frames, pid, tid, comm, value, count);
	free(ids);
	return ret;
}

int64_t tr_stackset_total(const struct tr_stackset *s)
{
	int64_t sum = 0;

	for (size_t i = 0; i < s->n_stacks; i++)
		sum = sum_sat(sum, s->stacks[i].value);
	return sum;
}

int64_t tr_stackset_count(const struct tr_stackset *s)
{
	int64_t sum = 0;

	for (size_t i = 0; i < s->n_stacks; i++)
		sum = sum_sat(sum, s->stacks[i].count);
	return sum;
}

static void sanitize_in_place(char *s)
{
	if (*s)
		tr_sanitize_name(s, strlen(s) + 1, s);
}

int tr_stackset_add_folded(struct tr_stackset *s, char *stack, int pid_without_thread,
			   int64_t value, int64_t count, struct ss_folded_scratch *scratch)
{
	struct tr_folded_rootinfo root;
	size_t n = 0;
	char *p;

	tr_folded_root_parse(stack, &root);
	if (root.tid < 0 && !pid_without_thread) {
		root.comm_len = root.frames ? (size_t)(root.frames - 1 - stack) : strlen(stack);
		root.pid = -1;
	}
	for (p = (char *)root.frames; p && n < SS_FOLDED_MAX; n++) {
		scratch->parts[n] = p;
		p = strchr(p, ';');
		if (p)
			*p++ = '\0';
		sanitize_in_place(scratch->parts[n]);
	}
	stack[root.comm_len] = '\0';
	sanitize_in_place(stack);
	/* Leaf first, as the stack set wants. */
	for (size_t i = 0; i < n; i++) {
		struct ss_frame *f = &scratch->frames[n - 1 - i];
		size_t len = strlen(scratch->parts[i]);

		f->name = scratch->parts[i];
		f->dso = "";
		f->address = 0;
		f->kernel = len > 4 && strcmp(scratch->parts[i] + len - 4, "_[k]") == 0;
		if (f->kernel)
			scratch->parts[i][len - 4] = '\0';
	}
	return tr_stackset_add(s, scratch->frames, n, root.pid, root.tid, stack, value, count);
}
