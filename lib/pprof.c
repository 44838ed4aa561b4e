/* The pprof builder: strings interned in a strmap; mappings, locations,
 * stacks, label sets and samples kept once each in tables keyed by their
 * content (numbers, and strings by their index), so that what it holds is
 * what the profile holds; encoding by libprotobuf-c's code generated from
 * the vendored profile.proto, gzip by gzfile.c (ISA-L or zlib). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "gzfile.h"
#include "hash.h"
#include "pprof.h"
#include "probe.h"
#include "profile.pb-c.h"
#include "strmap.h"
#include "vec.h"

typedef Perftools__Profiles__Mapping pp_mapping_msg;
typedef Perftools__Profiles__Location pp_location_msg;
typedef Perftools__Profiles__Line pp_line_msg;
typedef Perftools__Profiles__Function pp_function_msg;
typedef Perftools__Profiles__Label pp_label_msg;
typedef Perftools__Profiles__Sample pp_sample_msg;
typedef Perftools__Profiles__ValueType pp_value_type_msg;

struct pp_sample {
	uint64_t *locations;
	size_t n_locations;
	int64_t values[PP_MAX_VALUES];
	pp_label_msg *labels;
	size_t n_labels;
	uint32_t str_labels; /* bit i: label i is a string (when i < 32) */
};

/* The samples pp_add saw last, by a hash of what the caller passed
 * (location ids, label numbers, the addresses of label strings), checked
 * against the sample's content before it is taken: a source passes the
 * same few stacks and strings over and over, and building and hashing the
 * text key costs ten times more than this.  Direct-mapped. */
#define SAMPLE_CACHE 1024
struct sample_cached {
	uint64_t hash;
	size_t index; /* in samples, + 1; 0: empty */
};

/* Stacks (location ids) and label sets, each kept once and shared by the
 * samples that have it: a system-wide session sees the same stacks in
 * process after process, and every sample of a thread has its labels.
 * Their arrays come from chunks that never move (samples point at them). */
struct pp_chunk {
	struct pp_chunk *next;
	size_t used, size;
	_Alignas(uint64_t) unsigned char data[];
};

struct pp_stack {
	uint64_t *locations; /* NULL: a free slot */
	size_t n;
	uint64_t hash;
};

struct pp_labelset {
	pp_label_msg *labels; /* NULL: a free slot */
	const unsigned char *is_str; /* per label: 1 for a string */
	size_t n;
	uint64_t hash;
};

struct pp_builder {
	struct tr_strmap strings; /* value: index in string_table */
	char **string_table;
	size_t n_strings, cap_strings;

	/* Mappings and locations by their content (numbers, strings by their
	 * index in string_table): id, 0 for a free slot. */
	uint32_t *mapping_slots;
	size_t mapping_slots_cap;
	pp_mapping_msg *mappings;
	size_t n_mappings, cap_mappings;

	struct tr_strmap function_keys;
	pp_function_msg *functions;
	size_t n_functions, cap_functions;

	uint32_t *location_slots;
	size_t location_slots_cap;
	pp_location_msg *locations;
	pp_line_msg *lines; /* one per location */
	size_t n_locations, cap_locations;

	/* Samples by (stack, label set), both kept once: the same pointers
	 * are the same sample.  Index + 1; 0: a free slot. */
	uint32_t *sample_slots;
	size_t sample_cap;
	struct pp_sample *samples;
	size_t n_samples, cap_samples;
	struct pp_stack *stacks;
	size_t n_stacks, stacks_cap;
	struct pp_labelset *labelsets;
	size_t n_labelsets, labelsets_cap;
	struct pp_chunk *chunks; /* the newest first */

	pp_value_type_msg sample_types[PP_MAX_VALUES];
	size_t n_types;
	pp_value_type_msg period_type;
	int64_t period, time_nanos, duration_nanos;
	int64_t *comments;
	size_t n_comments;


	struct sample_cached *recent; /* SAMPLE_CACHE of them, NULL until used */

	/* pp_spill: once the samples (with their stacks and label sets) take
	 * more than spill_limit bytes, they are encoded as the profile's
	 * Sample fields into spill_fd, an unlinked file, and memory starts
	 * empty; pp_write_gz appends those bytes to the profile it encodes
	 * (protobuf concatenates repeated fields).  A stack seen on both
	 * sides of a spill is then two samples, which pprof readers sum. */
	char *spill_dir;
	size_t spill_limit, chunk_bytes;
	int spill_fd; /* -1 until the first spill */
	int spill_error;
	uint64_t spilled_bytes;
	size_t spilled_samples, spills;
	int64_t spilled_totals[PP_MAX_VALUES];
	/* Per mapping (id - 1), the first value of the spilled samples that
	 * pass through it: pp_write_gz ranks mappings by all samples. */
	uint64_t *spilled_weight;
	size_t spilled_weight_n;
};

/* Room for one more element in *arr (n used of *cap). */
static int grow(void *arr, size_t *cap, size_t n, size_t size)
{
	void **p = arr, *grown = tr_vec_grow(*p, cap, n + 1, size, 64);

	if (!grown)
		return -ENOMEM;
	*p = grown;
	return 0;
}

static int64_t intern(struct pp_builder *b, const char *s)
{
	struct tr_strmap_entry *e;
	size_t before = b->strings.n;

	if (!s)
		s = "";
	e = tr_strmap_get(&b->strings, s, strlen(s));
	if (!e)
		return -1;
	if (b->strings.n == before)
		return (int64_t)e->value;
	if (grow(&b->string_table, &b->cap_strings, b->n_strings, sizeof(char *)) < 0)
		return -1;
	e->value = b->n_strings;
	b->string_table[b->n_strings++] = e->key;
	return (int64_t)e->value;
}

void pp_set_period(struct pp_builder *b, int64_t period)
{
	b->period = period;
}

struct pp_builder *pp_new(const struct pp_value_type *sample_types, size_t n_types,
			  struct pp_value_type period_type, int64_t period)
{
	struct pp_builder *b;

	if (n_types == 0 || n_types > PP_MAX_VALUES)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->spill_fd = -1;
	/* pprof wants "" at index 0. */
	if (intern(b, "") != 0)
		goto fail;
	for (size_t i = 0; i < n_types; i++) {
		pp_value_type_msg vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;

		vt.type = intern(b, sample_types[i].type);
		vt.unit = intern(b, sample_types[i].unit);
		if (vt.type < 0 || vt.unit < 0)
			goto fail;
		b->sample_types[i] = vt;
	}
	b->n_types = n_types;
	{
		pp_value_type_msg vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;

		vt.type = intern(b, period_type.type);
		vt.unit = intern(b, period_type.unit);
		if (vt.type < 0 || vt.unit < 0)
			goto fail;
		b->period_type = vt;
	}
	b->period = period;
	return b;
fail:
	pp_free(b);
	return NULL;
}

/* The samples, their stacks and label sets, gone from memory. */
static void drop_samples(struct pp_builder *b)
{
	while (b->chunks) {
		struct pp_chunk *next = b->chunks->next;

		free(b->chunks);
		b->chunks = next;
	}
	b->chunk_bytes = 0;
	free(b->sample_slots);
	b->sample_slots = NULL;
	b->sample_cap = 0;
	free(b->stacks);
	b->stacks = NULL;
	b->n_stacks = b->stacks_cap = 0;
	free(b->labelsets);
	b->labelsets = NULL;
	b->n_labelsets = b->labelsets_cap = 0;
	free(b->samples);
	b->samples = NULL;
	b->n_samples = b->cap_samples = 0;
	if (b->recent)
		memset(b->recent, 0, SAMPLE_CACHE * sizeof(*b->recent));
}

void pp_free(struct pp_builder *b)
{
	if (!b)
		return;
	drop_samples(b);
	if (b->spill_fd >= 0)
		close(b->spill_fd);
	free(b->spill_dir);
	free(b->spilled_weight);
	free(b->locations);
	free(b->lines);
	free(b->functions);
	free(b->mappings);
	free(b->string_table);
	free(b->comments);
	free(b->recent);
	tr_strmap_free(&b->strings);
	free(b->mapping_slots);
	free(b->location_slots);
	tr_strmap_free(&b->function_keys);
	free(b);
}

void pp_set_time(struct pp_builder *b, int64_t time_nanos, int64_t duration_nanos)
{
	b->time_nanos = time_nanos;
	b->duration_nanos = duration_nanos;
}

int pp_add_comment(struct pp_builder *b, const char *text)
{
	size_t cap = b->n_comments;
	int64_t s = intern(b, text), *grown;

	if (s < 0)
		return -ENOMEM;
	grown = realloc(b->comments, (cap + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	b->comments = grown;
	b->comments[b->n_comments++] = s;
	return 0;
}

static uint64_t mapping_hash(uint64_t size, uint64_t file_offset, int64_t file, int64_t build_id)
{
	uint64_t h = tr_hash_mix(
		tr_hash_mix(tr_hash_mix(tr_hash_mix(0, size), file_offset), (uint64_t)file),
		(uint64_t)build_id);

	return h ^ (h >> 31);
}

static uint64_t location_hash(uint64_t mapping_id, uint64_t address, uint64_t function_id)
{
	uint64_t h = tr_hash_mix(tr_hash_mix(tr_hash_mix(1, mapping_id), address), function_id);

	return h ^ (h >> 31);
}

static int id_used(const void *slot)
{
	return *(const uint32_t *)slot != 0;
}

static uint64_t mapping_slot_hash(const void *slot, const void *ctx)
{
	const struct pp_builder *b = ctx;
	const pp_mapping_msg *m = &b->mappings[*(const uint32_t *)slot - 1];

	return mapping_hash(m->memory_limit - m->memory_start, m->file_offset, m->filename,
			    m->build_id);
}

static uint64_t location_slot_hash(const void *slot, const void *ctx)
{
	const struct pp_builder *b = ctx;
	uint32_t id = *(const uint32_t *)slot;

	return location_hash(b->locations[id - 1].mapping_id, b->locations[id - 1].address,
			     b->lines[id - 1].function_id);
}

/* Mappings and locations by their content: the slots hold ids. */
static const struct tr_probe_ops mapping_ops = {
	.size = sizeof(uint32_t),
	.first = 1024,
	.used = id_used,
	.hash = mapping_slot_hash,
};
static const struct tr_probe_ops location_ops = {
	.size = sizeof(uint32_t),
	.first = 1024,
	.used = id_used,
	.hash = location_slot_hash,
};

/* Room for one more id in a table of ids (the slots hold 32 bits). */
static int ids_grow(const struct pp_builder *b, uint32_t **slots, size_t *cap, size_t n,
		    const struct tr_probe_ops *ops)
{
	uint32_t *grown;

	if (n >= UINT32_MAX - 1)
		return -ENOMEM;
	grown = tr_probe_grow(*slots, cap, n + 1, ops, b);
	if (!grown)
		return -ENOMEM;
	*slots = grown;
	return 0;
}

struct mapping_key {
	const struct pp_builder *b;
	uint64_t size, file_offset;
	int64_t file, build_id;
};

static int mapping_is(const void *slot, const void *key)
{
	const struct mapping_key *k = key;
	const pp_mapping_msg *o = &k->b->mappings[*(const uint32_t *)slot - 1];

	return o->memory_limit - o->memory_start == k->size && o->file_offset == k->file_offset &&
	       o->filename == k->file && o->build_id == k->build_id;
}

uint64_t pp_mapping(struct pp_builder *b, uint64_t start, uint64_t limit, uint64_t file_offset,
		    const char *file, const char *build_id)
{
	pp_mapping_msg m = PERFTOOLS__PROFILES__MAPPING__INIT;
	struct mapping_key key = { .b = b, .size = limit - start, .file_offset = file_offset };
	size_t j;

	/* Interned first, as a new mapping would have them: a string new to
	 * the table makes a new mapping anyway. */
	key.file = intern(b, file);
	key.build_id = key.file < 0 ? -1 : intern(b, build_id);
	if (key.build_id < 0 ||
	    ids_grow(b, &b->mapping_slots, &b->mapping_slots_cap, b->n_mappings, &mapping_ops) < 0)
		return 0;
	/* Keyed as pprof's own merge keys them (size, offset, object), not
	 * by where: a system-wide session sees the same objects at a new
	 * address in every process, and each would otherwise bring its own
	 * mapping and locations of the same code. */
	j = tr_probe_find(b->mapping_slots, b->mapping_slots_cap, &mapping_ops,
			  mapping_hash(key.size, file_offset, key.file, key.build_id), mapping_is,
			  &key);
	if (b->mapping_slots[j])
		return b->mapping_slots[j];
	if (grow(&b->mappings, &b->cap_mappings, b->n_mappings, sizeof(*b->mappings)) < 0)
		return 0;
	m.id = b->n_mappings + 1;
	m.memory_start = start;
	m.memory_limit = limit;
	m.file_offset = file_offset;
	m.filename = key.file;
	m.build_id = key.build_id;
	/* The names are ours: a store may keep them rather than re-symbolize. */
	m.has_functions = 1;
	b->mappings[b->n_mappings++] = m;
	b->mapping_slots[j] = (uint32_t)m.id;
	return m.id;
}

uint64_t pp_mapped_address(const struct pp_builder *b, uint64_t mapping_id, uint64_t start,
			   uint64_t address)
{
	if (!mapping_id || mapping_id > b->n_mappings)
		return address;
	return b->mappings[mapping_id - 1].memory_start + (address - start);
}

static uint64_t function_id(struct pp_builder *b, const char *name)
{
	pp_function_msg f = PERFTOOLS__PROFILES__FUNCTION__INIT;
	struct tr_strmap_entry *e = tr_strmap_get(&b->function_keys, name, strlen(name));
	size_t before;

	if (!e)
		return 0;
	if (e->value)
		return e->value;
	before = b->n_functions;
	if (grow(&b->functions, &b->cap_functions, before, sizeof(*b->functions)) < 0)
		return 0;
	f.id = before + 1;
	f.name = f.system_name = intern(b, name);
	if (f.name < 0)
		return 0;
	b->functions[b->n_functions++] = f;
	e->value = f.id;
	return f.id;
}

struct location_key {
	const struct pp_builder *b;
	uint64_t mapping_id, address, function_id;
};

static int location_is(const void *slot, const void *key)
{
	const struct location_key *k = key;
	uint32_t id = *(const uint32_t *)slot;

	return k->b->locations[id - 1].mapping_id == k->mapping_id &&
	       k->b->locations[id - 1].address == k->address &&
	       k->b->lines[id - 1].function_id == k->function_id;
}

uint64_t pp_location(struct pp_builder *b, uint64_t mapping_id, uint64_t address,
		     const char *function)
{
	pp_location_msg l = PERFTOOLS__PROFILES__LOCATION__INIT;
	pp_line_msg line = PERFTOOLS__PROFILES__LINE__INIT;
	struct location_key key;
	uint64_t fid = 0;
	size_t j;

	/* Its function first, as a new location would have it: a function
	 * new to the profile makes a new location anyway. */
	if (function && *function && !(fid = function_id(b, function)))
		return 0;
	if (ids_grow(b, &b->location_slots, &b->location_slots_cap, b->n_locations, &location_ops) <
	    0)
		return 0;
	key = (struct location_key){ b, mapping_id, address, fid };
	j = tr_probe_find(b->location_slots, b->location_slots_cap, &location_ops,
			  location_hash(mapping_id, address, fid), location_is, &key);
	if (b->location_slots[j])
		return b->location_slots[j];
	if (grow(&b->locations, &b->cap_locations, b->n_locations, sizeof(*b->locations)) < 0)
		return 0;
	{
		size_t cap = b->cap_locations;
		pp_line_msg *grown = realloc(b->lines, cap * sizeof(*grown));

		if (!grown)
			return 0;
		b->lines = grown;
	}
	l.id = b->n_locations + 1;
	l.mapping_id = mapping_id;
	l.address = address;
	line.function_id = fid;
	b->lines[b->n_locations] = line;
	b->locations[b->n_locations++] = l;
	b->location_slots[j] = (uint32_t)l.id;
	return l.id;
}

/* a + b, held at the limit it would cross: a profile's values may come
 * from an archive made elsewhere (`tracerig convert`). */
static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t sum;

	return __builtin_add_overflow(a, b, &sum) ? (b > 0 ? INT64_MAX : INT64_MIN) : sum;
}

static uint64_t sample_hash(const uint64_t *locations, size_t n_locations,
			    const struct pp_label *labels, size_t n_labels)
{
	uint64_t h = tr_hash_mix(0, n_locations);

	for (size_t i = 0; i < n_locations; i++)
		h = tr_hash_mix(h, locations[i]);
	for (size_t i = 0; i < n_labels; i++) {
		h = tr_hash_mix(h, (uintptr_t)labels[i].key);
		h = tr_hash_mix(h,
				labels[i].str ? (uintptr_t)labels[i].str : (uint64_t)labels[i].num);
	}
	return h ^ (h >> 31);
}

/* Whether sample s is the one of these locations and labels, by content. */
static int sample_is(const struct pp_builder *b, const struct pp_sample *s,
		     const uint64_t *locations, size_t n_locations, const struct pp_label *labels,
		     size_t n_labels)
{
	if (s->n_locations != n_locations || s->n_labels != n_labels || n_labels > 32 ||
	    memcmp(s->locations, locations, n_locations * sizeof(*locations)) != 0)
		return 0;
	for (size_t i = 0; i < n_labels; i++) {
		const pp_label_msg *l = &s->labels[i];
		int is_str = (s->str_labels >> i) & 1;

		if (is_str != (labels[i].str != NULL) ||
		    strcmp(b->string_table[l->key], labels[i].key ? labels[i].key : "") != 0 ||
		    (is_str ? strcmp(b->string_table[l->str], labels[i].str) != 0
			    : l->num != labels[i].num))
			return 0;
	}
	return 1;
}

/* Room for `size` bytes that never move; NULL when out of memory. */
static void *chunk_take(struct pp_builder *b, size_t size)
{
	struct pp_chunk *c = b->chunks;

	size = (size + 7) & ~(size_t)7;
	if (!c || c->used + size > c->size) {
		size_t room = size > 65536 ? size : 65536;

		c = malloc(sizeof(*c) + room);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = room;
		c->next = b->chunks;
		b->chunks = c;
	}
	c->used += size;
	/* The bytes taken, not the chunks': a chunk is 64 KiB from its first
	 * sample, and a view_memory below that would spill at every sample. */
	b->chunk_bytes += size;
	return c->data + c->used - size;
}

static uint64_t stack_hash(const uint64_t *locations, size_t n)
{
	uint64_t h = tr_hash_mix(0, n);

	for (size_t i = 0; i < n; i++)
		h = tr_hash_mix(h, locations[i]);
	return h ^ (h >> 31);
}

static int stack_used(const void *slot)
{
	return ((const struct pp_stack *)slot)->locations != NULL;
}

static uint64_t stack_slot_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return ((const struct pp_stack *)slot)->hash;
}

static const struct tr_probe_ops stack_ops = {
	.size = sizeof(struct pp_stack),
	.first = 1024,
	.used = stack_used,
	.hash = stack_slot_hash,
};

static int stack_is(const void *slot, const void *key)
{
	const struct pp_stack *st = slot, *k = key;

	return st->hash == k->hash && st->n == k->n &&
	       memcmp(st->locations, k->locations, k->n * sizeof(*k->locations)) == 0;
}

/* The one copy of this stack. */
static uint64_t *stack_of(struct pp_builder *b, const uint64_t *locations, size_t n)
{
	struct pp_stack key = { (uint64_t *)locations, n, stack_hash(locations, n) }, *st;

	st = tr_probe_grow(b->stacks, &b->stacks_cap, b->n_stacks + 1, &stack_ops, NULL);
	if (!st)
		return NULL;
	b->stacks = st;
	st = &b->stacks[tr_probe_find(b->stacks, b->stacks_cap, &stack_ops, key.hash, stack_is,
				      &key)];
	if (st->locations)
		return st->locations;
	st->locations = chunk_take(b, (n ? n : 1) * sizeof(*locations));
	if (!st->locations)
		return NULL;
	memcpy(st->locations, locations, n * sizeof(*locations));
	st->n = n;
	st->hash = key.hash;
	b->n_stacks++;
	return st->locations;
}

static int labelset_used(const void *slot)
{
	return ((const struct pp_labelset *)slot)->labels != NULL;
}

static uint64_t labelset_slot_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return ((const struct pp_labelset *)slot)->hash;
}

static const struct tr_probe_ops labelset_ops = {
	.size = sizeof(struct pp_labelset),
	.first = 256,
	.used = labelset_used,
	.hash = labelset_slot_hash,
};

static int labelset_is(const void *slot, const void *key)
{
	const struct pp_labelset *set = slot, *k = key;

	if (set->hash != k->hash || set->n != k->n || memcmp(set->is_str, k->is_str, k->n) != 0)
		return 0;
	for (size_t i = 0; i < k->n; i++)
		if (set->labels[i].key != k->labels[i].key ||
		    set->labels[i].str != k->labels[i].str ||
		    set->labels[i].num != k->labels[i].num)
			return 0;
	return 1;
}

/* The one copy of these labels, their strings interned. */
static struct pp_labelset *labelset_of(struct pp_builder *b, const struct pp_label *labels,
				       size_t n)
{
	pp_label_msg small[8], *msgs = n <= 8 ? small : calloc(n, sizeof(*msgs));
	unsigned char kinds_small[8], *kinds = n <= 8 ? kinds_small : malloc(n);
	struct pp_labelset *set = NULL, key;
	uint64_t h = tr_hash_mix(0, n);

	if (!msgs || !kinds)
		goto out;
	for (size_t k = 0; k < n; k++) {
		pp_label_msg l = PERFTOOLS__PROFILES__LABEL__INIT;

		l.key = intern(b, labels[k].key);
		kinds[k] = labels[k].str != NULL;
		if (labels[k].str)
			l.str = intern(b, labels[k].str);
		else
			l.num = labels[k].num;
		if (l.key < 0 || l.str < 0)
			goto out;
		msgs[k] = l;
		h = tr_hash_mix(tr_hash_mix(tr_hash_mix(h, (uint64_t)l.key), (uint64_t)l.str),
				(uint64_t)l.num);
		h = tr_hash_mix(h, kinds[k]);
	}
	h ^= h >> 31;
	set = tr_probe_grow(b->labelsets, &b->labelsets_cap, b->n_labelsets + 1, &labelset_ops,
			    NULL);
	if (!set)
		goto out;
	b->labelsets = set;
	key = (struct pp_labelset){ msgs, kinds, n, h };
	set = &b->labelsets[tr_probe_find(b->labelsets, b->labelsets_cap, &labelset_ops, h,
					  labelset_is, &key)];
	if (set->labels)
		goto out;
	set->labels = chunk_take(b, (n ? n : 1) * sizeof(*msgs) + n);
	if (!set->labels) {
		set = NULL;
		goto out;
	}
	memcpy(set->labels, msgs, n * sizeof(*msgs));
	set->is_str = (unsigned char *)(set->labels + (n ? n : 1));
	memcpy((unsigned char *)set->is_str, kinds, n);
	set->n = n;
	set->hash = h;
	b->n_labelsets++;
out:
	if (msgs != small)
		free(msgs);
	if (kinds != kinds_small)
		free(kinds);
	return set;
}

static uint64_t sample_slot_hash(const uint64_t *stack, const pp_label_msg *labels)
{
	uint64_t h = tr_hash_mix(tr_hash_mix(0, (uintptr_t)stack), (uintptr_t)labels);

	return h ^ (h >> 31);
}

static uint64_t sample_slot_hash_of(const void *slot, const void *ctx)
{
	const struct pp_builder *b = ctx;
	const struct pp_sample *s = &b->samples[*(const uint32_t *)slot - 1];

	return sample_slot_hash(s->locations, s->labels);
}

/* Samples by (stack, label set): the slots hold index + 1. */
static const struct tr_probe_ops sample_ops = {
	.size = sizeof(uint32_t),
	.first = 1024,
	.used = id_used,
	.hash = sample_slot_hash_of,
};

struct sample_key {
	const struct pp_builder *b;
	const uint64_t *stack;
	const pp_label_msg *labels;
};

static int sample_slot_is(const void *slot, const void *key)
{
	const struct sample_key *k = key;
	const struct pp_sample *s = &k->b->samples[*(const uint32_t *)slot - 1];

	return s->locations == k->stack && s->labels == k->labels;
}

/* The slot of the sample of this stack and label set, or the free slot
 * where it would go; NULL when out of memory. */
static uint32_t *sample_slot(struct pp_builder *b, const uint64_t *stack,
			     const pp_label_msg *labels)
{
	struct sample_key key = { b, stack, labels };
	uint32_t *grown =
		tr_probe_grow(b->sample_slots, &b->sample_cap, b->n_samples + 1, &sample_ops, b);

	if (!grown)
		return NULL;
	b->sample_slots = grown;
	return &b->sample_slots[tr_probe_find(b->sample_slots, b->sample_cap, &sample_ops,
					      sample_slot_hash(stack, labels), sample_slot_is,
					      &key)];
}

/* How much a sample weighs in ranking the mappings it passes through:
 * its first value, whatever its sign (a diff's negative values count). */
static uint64_t rank_weight(const struct pp_sample *s)
{
	return s->values[0] < 0 ? 0 - (uint64_t)s->values[0] : (uint64_t)s->values[0];
}

static uint64_t add_sat_u(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* What the samples hold in memory, roughly: what they took of their
 * chunks (one chunk's slack more), their array and tables. */
static size_t sample_bytes(const struct pp_builder *b)
{
	return b->chunk_bytes + b->cap_samples * sizeof(struct pp_sample) +
	       b->sample_cap * sizeof(uint32_t) + b->stacks_cap * sizeof(struct pp_stack) +
	       b->labelsets_cap * sizeof(struct pp_labelset);
}

int pp_spill(struct pp_builder *b, const char *dir, size_t limit)
{
	char *copy = strdup(dir);

	if (!copy)
		return -ENOMEM;
	free(b->spill_dir);
	b->spill_dir = copy;
	b->spill_limit = limit;
	return 0;
}

int pp_spilled(const struct pp_builder *b, size_t *spills, uint64_t *bytes)
{
	if (spills)
		*spills = b->spills;
	if (bytes)
		*bytes = b->spilled_bytes;
	return b->spill_error;
}

/* One sample as the Sample message pp_write_gz writes; `label_ptrs` has
 * room for its labels. */
static void sample_msg(const struct pp_builder *b, struct pp_sample *mine, pp_sample_msg *out,
		       pp_label_msg **label_ptrs)
{
	pp_sample_msg s = PERFTOOLS__PROFILES__SAMPLE__INIT;

	s.n_location_id = mine->n_locations;
	s.location_id = mine->locations;
	s.n_value = b->n_types;
	s.value = mine->values;
	s.n_label = mine->n_labels;
	s.label = label_ptrs;
	for (size_t k = 0; k < mine->n_labels; k++)
		label_ptrs[k] = &mine->labels[k];
	*out = s;
}

/* The bytes spill() gathers before writing them: many samples go in one
 * write, and one bigger than the buffer goes on its own. */
struct spill_out {
	int fd;
	size_t used;
	uint64_t written;
	uint8_t buf[1 << 16];
};

/* Sample m, as the Profile's field 2, appended to out. */
static int spill_put(struct spill_out *out, const pp_sample_msg *m)
{
	size_t len = perftools__profiles__sample__get_packed_size(m), n_head = 0;
	uint8_t head[11], *body;
	uint64_t v;
	int ret = 0;

	head[n_head++] = 0x12; /* field 2 (sample), length-delimited */
	for (v = len; v >= 0x80; v >>= 7)
		head[n_head++] = (uint8_t)(v | 0x80);
	head[n_head++] = (uint8_t)v;
	if (out->used + n_head + len > sizeof(out->buf)) {
		ret = tr_write_all(out->fd, out->buf, out->used);
		out->written += out->used;
		out->used = 0;
	}
	if (ret)
		return ret;
	if (n_head + len > sizeof(out->buf)) {
		body = malloc(n_head + len);
		if (!body)
			return -ENOMEM;
		memcpy(body, head, n_head);
		perftools__profiles__sample__pack(m, body + n_head);
		ret = tr_write_all(out->fd, body, n_head + len);
		out->written += n_head + len;
		free(body);
		return ret;
	}
	memcpy(out->buf + out->used, head, n_head);
	perftools__profiles__sample__pack(m, out->buf + out->used + n_head);
	out->used += n_head + len;
	return 0;
}

/* Every sample in memory through out, to its last byte written. */
static int spill_samples(struct pp_builder *b, struct spill_out *out)
{
	pp_label_msg *small[16], **labels = small;
	size_t labels_cap = 16;
	int ret = 0;

	for (size_t i = 0; i < b->n_samples && !ret; i++) {
		struct pp_sample *mine = &b->samples[i];
		pp_sample_msg m;

		if (mine->n_labels > labels_cap) {
			pp_label_msg **grown = malloc(mine->n_labels * sizeof(*grown));

			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			if (labels != small)
				free(labels);
			labels = grown;
			labels_cap = mine->n_labels;
		}
		sample_msg(b, mine, &m, labels);
		ret = spill_put(out, &m);
	}
	if (!ret && out->used) {
		ret = tr_write_all(out->fd, out->buf, out->used);
		out->written += out->used;
	}
	if (labels != small)
		free(labels);
	return ret;
}

/* What a failed spill wrote goes: the file ends where the last whole
 * spill did. */
static void spill_undo(struct pp_builder *b)
{
	if (ftruncate(b->spill_fd, (off_t)b->spilled_bytes) < 0 ||
	    lseek(b->spill_fd, (off_t)b->spilled_bytes, SEEK_SET) < 0) {
		close(b->spill_fd);
		b->spill_fd = -1;
	}
}

/* The samples in memory counted as spilled: in the totals, and in the
 * weight of the mappings they pass through. */
static void spill_account(struct pp_builder *b)
{
	if (b->n_mappings > b->spilled_weight_n) {
		uint64_t *w = realloc(b->spilled_weight, b->n_mappings * sizeof(*w));

		if (w) {
			memset(w + b->spilled_weight_n, 0,
			       (b->n_mappings - b->spilled_weight_n) * sizeof(*w));
			b->spilled_weight = w;
			b->spilled_weight_n = b->n_mappings;
		}
	}
	for (size_t i = 0; i < b->n_samples; i++) {
		const struct pp_sample *smp = &b->samples[i];

		for (size_t k = 0; k < b->n_types; k++)
			b->spilled_totals[k] = add_sat(b->spilled_totals[k], smp->values[k]);
		for (size_t k = 0; k < smp->n_locations; k++) {
			uint64_t id = b->locations[smp->locations[k] - 1].mapping_id;

			if (id && id <= b->spilled_weight_n)
				b->spilled_weight[id - 1] =
					add_sat_u(b->spilled_weight[id - 1], rank_weight(smp));
		}
	}
}

/* Every sample in memory, encoded as the Profile's field 2 (a Sample),
 * appended to the spill file; memory emptied.  The samples stay whole in
 * memory when this fails. */
static int spill(struct pp_builder *b)
{
	struct spill_out out;
	int ret;

	if (b->spill_fd < 0) {
		ret = tr_unlinked_file(b->spill_dir);
		if (ret < 0)
			return ret;
		b->spill_fd = ret;
	}
	out.fd = b->spill_fd;
	out.used = 0;
	out.written = 0;
	ret = spill_samples(b, &out);
	if (ret < 0) {
		spill_undo(b);
		return ret;
	}
	spill_account(b);
	b->spilled_samples += b->n_samples;
	b->spilled_bytes += out.written;
	b->spills++;
	drop_samples(b);
	return 0;
}

/* `values` added to s's, each held at its limit. */
static void add_values(const struct pp_builder *b, struct pp_sample *s, const int64_t *values)
{
	for (size_t i = 0; i < b->n_types; i++)
		s->values[i] = add_sat(s->values[i], values[i]);
}

/* A sample new to the builder, of this stack and label set, put in the
 * free slot `slot`. */
static int sample_new(struct pp_builder *b, uint32_t *slot, uint64_t *stack, size_t n_locations,
		      const struct pp_labelset *set, size_t n_labels, const int64_t *values)
{
	struct pp_sample *s;

	if (b->n_samples >= UINT32_MAX - 1 ||
	    grow(&b->samples, &b->cap_samples, b->n_samples, sizeof(*b->samples)) < 0)
		return -ENOMEM;
	s = &b->samples[b->n_samples];
	memset(s, 0, sizeof(*s));
	s->locations = stack;
	s->n_locations = n_locations;
	s->labels = set->labels;
	s->n_labels = n_labels;
	for (size_t i = 0; i < n_labels && i < 32; i++)
		if (set->is_str[i])
			s->str_labels |= 1u << i;
	for (size_t i = 0; i < b->n_types; i++)
		s->values[i] = values[i];
	*slot = (uint32_t)++b->n_samples;
	return 0;
}

int pp_add(struct pp_builder *b, const uint64_t *locations, size_t n_locations,
	   const int64_t *values, const struct pp_label *labels, size_t n_labels)
{
	struct sample_cached *c = NULL;
	struct pp_labelset *set;
	uint64_t h = 0, *stack;
	uint32_t *slot;

	if (!b->recent)
		b->recent = calloc(SAMPLE_CACHE, sizeof(*b->recent));
	if (b->recent) {
		h = sample_hash(locations, n_locations, labels, n_labels);
		c = &b->recent[h % SAMPLE_CACHE];
		if (c->index && c->hash == h &&
		    sample_is(b, &b->samples[c->index - 1], locations, n_locations, labels,
			      n_labels)) {
			add_values(b, &b->samples[c->index - 1], values);
			return 0;
		}
	}

	stack = stack_of(b, locations, n_locations);
	set = stack ? labelset_of(b, labels, n_labels) : NULL;
	if (!set)
		return -ENOMEM;
	slot = sample_slot(b, stack, set->labels);
	if (!slot)
		return -ENOMEM;
	if (*slot) {
		add_values(b, &b->samples[*slot - 1], values);
		if (c)
			*c = (struct sample_cached){ h, *slot };
		return 0;
	}
	if (sample_new(b, slot, stack, n_locations, set, n_labels, values) < 0)
		return -ENOMEM;
	if (c)
		*c = (struct sample_cached){ h, b->n_samples };
	if (b->spill_limit && !b->spill_error && sample_bytes(b) > b->spill_limit) {
		int ret = spill(b);

		/* Kept in memory then, as without a limit: not lost for want
		 * of disk. */
		if (ret < 0)
			b->spill_error = ret;
	}
	return 0;
}

size_t pp_sample_count(const struct pp_builder *b)
{
	return b->n_samples + b->spilled_samples;
}

int64_t pp_total(const struct pp_builder *b, size_t i)
{
	int64_t sum = i < PP_MAX_VALUES ? b->spilled_totals[i] : 0;

	for (size_t k = 0; k < b->n_samples && i < b->n_types; k++)
		sum = add_sat(sum, b->samples[k].values[i]);
	return sum;
}

/* Deflates z's input into f; with `finish`, to the stream's end. */
/* data[0..len), then the spilled samples, gzipped into f. */
static int gzip_to(FILE *f, const uint8_t *data, size_t len, int spill_fd, uint64_t spilled)
{
	struct tr_gzfile *g = tr_gzfile_open(f);
	uint8_t in[65536];
	uint64_t off = 0;
	int ret;

	if (!g)
		return -ENOMEM;
	ret = tr_gzfile_write(g, data, len, spilled == 0);
	while (!ret && off < spilled) {
		size_t want = spilled - off < sizeof(in) ? (size_t)(spilled - off) : sizeof(in);
		ssize_t n = pread(spill_fd, in, want, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = -EIO;
			break;
		}
		off += (uint64_t)n;
		ret = tr_gzfile_write(g, in, (size_t)n, off == spilled);
	}
	tr_gzfile_free(g);
	return ret;
}

/* pprof takes the first mapping for the profile's binary ("File:" in
 * `pprof -top`): programs come first, then shared libraries, then what is
 * no file ([kernel.kallsyms], [vdso]), each by the samples they are in. */
static int mapping_class(const char *file)
{
	const char *base = strrchr(file, '/');

	if (!*file || file[0] == '[')
		return 2;
	base = base ? base + 1 : file;
	return strstr(base, ".so") ? 1 : 0;
}

struct mapping_rank {
	size_t index;
	int class;
	uint64_t weight;
};

static int by_rank(const void *a, const void *b)
{
	const struct mapping_rank *x = a, *y = b;

	if (x->class != y->class)
		return x->class - y->class;
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The mappings in that order, renumbered densely from 1, in
 * *out; the locations (copies in *loc_out) point at the new ids.  0 or
 * -ENOMEM. */
static int order_mappings(const struct pp_builder *b, pp_mapping_msg **out,
			  pp_location_msg **loc_out)
{
	struct mapping_rank *rank = calloc(b->n_mappings + 1, sizeof(*rank));
	uint64_t *new_id = calloc(b->n_mappings + 1, sizeof(*new_id));
	pp_mapping_msg *m = calloc(b->n_mappings + 1, sizeof(*m));
	pp_location_msg *l = calloc(b->n_locations + 1, sizeof(*l));

	if (!rank || !new_id || !m || !l) {
		free(rank);
		free(new_id);
		free(m);
		free(l);
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->n_mappings; i++)
		rank[i] = (struct mapping_rank){ i, mapping_class(b->string_table[b->mappings[i].filename]),
						 i < b->spilled_weight_n ? b->spilled_weight[i] : 0 };
	for (size_t i = 0; i < b->n_samples; i++) {
		const struct pp_sample *s = &b->samples[i];
		uint64_t w = rank_weight(s);

		for (size_t k = 0; k < s->n_locations; k++) {
			uint64_t id = b->locations[s->locations[k] - 1].mapping_id;

			if (id)
				rank[id - 1].weight = add_sat_u(rank[id - 1].weight, w);
		}
	}
	qsort(rank, b->n_mappings, sizeof(*rank), by_rank);
	for (size_t i = 0; i < b->n_mappings; i++) {
		m[i] = b->mappings[rank[i].index];
		m[i].id = i + 1;
		new_id[rank[i].index] = i + 1;
	}
	for (size_t i = 0; i < b->n_locations; i++) {
		l[i] = b->locations[i];
		if (l[i].mapping_id)
			l[i].mapping_id = new_id[l[i].mapping_id - 1];
	}
	free(rank);
	free(new_id);
	*out = m;
	*loc_out = l;
	return 0;
}

/* The arrays of pointers a Profile message is made of, over the builder's
 * tables and the mappings and locations in pp_write_gz's order. */
struct profile_arrays {
	pp_value_type_msg *types[PP_MAX_VALUES];
	pp_mapping_msg **mappings;
	pp_location_msg **locations;
	pp_line_msg **lines;
	pp_function_msg **functions;
	pp_sample_msg *samples, **sample_ptrs;
	pp_label_msg **labels;
	pp_mapping_msg *ordered;
	pp_location_msg *located;
};

/* 0 or -ENOMEM; what was allocated is profile_arrays_free's either way. */
static int profile_arrays_alloc(const struct pp_builder *b, struct profile_arrays *a)
{
	size_t n_labels = 0;

	for (size_t i = 0; i < b->n_samples; i++)
		n_labels += b->samples[i].n_labels;
	a->mappings = calloc(b->n_mappings + 1, sizeof(*a->mappings));
	a->locations = calloc(b->n_locations + 1, sizeof(*a->locations));
	a->lines = calloc(b->n_locations + 1, sizeof(*a->lines));
	a->functions = calloc(b->n_functions + 1, sizeof(*a->functions));
	a->samples = calloc(b->n_samples + 1, sizeof(*a->samples));
	a->sample_ptrs = calloc(b->n_samples + 1, sizeof(*a->sample_ptrs));
	a->labels = calloc(n_labels + 1, sizeof(*a->labels));
	if (!a->mappings || !a->locations || !a->lines || !a->functions || !a->samples ||
	    !a->sample_ptrs || !a->labels || order_mappings(b, &a->ordered, &a->located) < 0)
		return -ENOMEM;
	return 0;
}

static void profile_arrays_fill(struct pp_builder *b, struct profile_arrays *a)
{
	size_t li = 0;

	for (size_t i = 0; i < b->n_types; i++)
		a->types[i] = &b->sample_types[i];
	for (size_t i = 0; i < b->n_mappings; i++)
		a->mappings[i] = &a->ordered[i];
	for (size_t i = 0; i < b->n_functions; i++)
		a->functions[i] = &b->functions[i];
	for (size_t i = 0; i < b->n_locations; i++) {
		a->locations[i] = &a->located[i];
		if (b->lines[i].function_id) {
			a->lines[i] = &b->lines[i];
			a->locations[i]->n_line = 1;
			a->locations[i]->line = &a->lines[i];
		}
	}
	for (size_t i = 0; i < b->n_samples; i++) {
		sample_msg(b, &b->samples[i], &a->samples[i], &a->labels[li]);
		li += b->samples[i].n_labels;
		a->sample_ptrs[i] = &a->samples[i];
	}
}

static void profile_arrays_free(struct profile_arrays *a)
{
	free(a->located);
	free(a->ordered);
	free(a->labels);
	free(a->sample_ptrs);
	free(a->samples);
	free(a->functions);
	free(a->lines);
	free(a->locations);
	free(a->mappings);
}

/* The Profile message of the builder, over the arrays of a. */
static void profile_msg(struct pp_builder *b, struct profile_arrays *a,
			Perftools__Profiles__Profile *p)
{
	p->n_sample_type = b->n_types;
	p->sample_type = a->types;
	p->n_sample = b->n_samples;
	p->sample = a->sample_ptrs;
	p->n_mapping = b->n_mappings;
	p->mapping = a->mappings;
	p->n_location = b->n_locations;
	p->location = a->locations;
	p->n_function = b->n_functions;
	p->function = a->functions;
	p->n_string_table = b->n_strings;
	p->string_table = b->string_table;
	p->time_nanos = b->time_nanos;
	p->duration_nanos = b->duration_nanos;
	p->period_type = &b->period_type;
	p->period = b->period;
	p->n_comment = b->n_comments;
	p->comment = b->comments;
}

int pp_write_gz(struct pp_builder *b, FILE *f)
{
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct profile_arrays a = { 0 };
	uint8_t *packed = NULL;
	int ret = -ENOMEM;

	if (profile_arrays_alloc(b, &a) < 0)
		goto out;
	profile_arrays_fill(b, &a);
	profile_msg(b, &a, &p);
	packed = malloc(perftools__profiles__profile__get_packed_size(&p) + 1);
	if (!packed)
		goto out;
	ret = gzip_to(f, packed, perftools__profiles__profile__pack(&p, packed), b->spill_fd,
		      b->spilled_bytes);
out:
	free(packed);
	profile_arrays_free(&a);
	return ret;
}

int pp_column(const struct pp_builder *b, const char *unit)
{
	for (size_t i = 0; i < b->n_types; i++)
		if (strcmp(b->string_table[b->sample_types[i].unit], unit) == 0)
			return (int)i;
	return -1;
}

/* One merge of src into dst: src's mappings and locations as ids of dst
 * (by src id - 1), and room for a sample's stack and labels. */
struct merge {
	struct pp_builder *dst;
	const struct pp_builder *src;
	size_t column;
	int64_t scale;
	uint64_t leaf;
	pp_keep_fn keep;
	void *arg;
	uint64_t *mapping_of, *location_of, *ids;
	struct pp_label *labels;
	size_t cap_ids, cap_labels;
};

static int merge_tables(struct merge *mg)
{
	const struct pp_builder *src = mg->src;
	char *const *str = src->string_table;

	for (size_t i = 0; i < src->n_mappings; i++) {
		const pp_mapping_msg *x = &src->mappings[i];
		const char *build_id = str[x->build_id];

		mg->mapping_of[i] =
			pp_mapping(mg->dst, x->memory_start, x->memory_limit, x->file_offset,
				   str[x->filename], build_id && *build_id ? build_id : NULL);
		if (!mg->mapping_of[i])
			return -ENOMEM;
	}
	for (size_t i = 0; i < src->n_locations; i++) {
		const pp_location_msg *x = &src->locations[i];
		uint64_t fid = src->lines[i].function_id, mapping = 0, address = x->address;
		const char *name = fid ? str[src->functions[fid - 1].name] : NULL;

		if (x->mapping_id) {
			mapping = mg->mapping_of[x->mapping_id - 1];
			address = pp_mapped_address(mg->dst, mapping,
						    src->mappings[x->mapping_id - 1].memory_start,
						    address);
		}
		mg->location_of[i] = pp_location(mg->dst, mapping, address, name);
		if (!mg->location_of[i])
			return -ENOMEM;
	}
	return 0;
}

/* One of src's samples (its location ids, values and labels as src has
 * them) added to dst. */
static int merge_sample(struct merge *mg, const uint64_t *locations, size_t n_locations,
			const int64_t *values, pp_label_msg *const *labels, size_t n_labels)
{
	char *const *str = mg->src->string_table;
	size_t n = 0;
	int64_t value;

	/* Held at the limit rather than wrapped, as every sum here. */
	if (__builtin_mul_overflow(values[mg->column], mg->scale, &value))
		value = (values[mg->column] < 0) != (mg->scale < 0) ? INT64_MIN : INT64_MAX;
	if (value == 0)
		return 0;
	if (grow(&mg->ids, &mg->cap_ids, n_locations, sizeof(*mg->ids)) < 0 ||
	    grow(&mg->labels, &mg->cap_labels, n_labels, sizeof(*mg->labels)) < 0)
		return -ENOMEM;
	for (size_t k = 0; k < n_labels; k++) {
		const pp_label_msg *l = labels[k];

		mg->labels[k] =
			(struct pp_label){ str[l->key], l->str ? str[l->str] : NULL, l->num };
		if (mg->keep && !l->str && strcmp(str[l->key], "pid") == 0 &&
		    !mg->keep(mg->arg, l->num))
			return 0;
	}
	if (mg->leaf)
		mg->ids[n++] = mg->leaf;
	for (size_t k = 0; k < n_locations; k++)
		mg->ids[n++] = mg->location_of[locations[k] - 1];
	return pp_add(mg->dst, mg->ids, n, &value, mg->labels, n_labels);
}

static int merge_in_memory(struct merge *mg)
{
	pp_label_msg *small[16], **ptrs = small;
	int ret = 0;

	for (size_t i = 0; i < mg->src->n_samples && ret == 0; i++) {
		const struct pp_sample *s = &mg->src->samples[i];

		if (s->n_labels > 16) {
			if (ptrs != small)
				free(ptrs);
			ptrs = malloc(s->n_labels * sizeof(*ptrs));
			if (!ptrs)
				return -ENOMEM;
		}
		for (size_t k = 0; k < s->n_labels; k++)
			ptrs[k] = &s->labels[k];
		ret = merge_sample(mg, s->locations, s->n_locations, s->values, ptrs, s->n_labels);
		if (ptrs != small) {
			free(ptrs);
			ptrs = small;
		}
	}
	return ret;
}

/* A spilled sample refers to nothing src does not hold: the spill file
 * is in a staging directory others may write to. */
static int spilled_sample_ok(const struct pp_builder *src, const pp_sample_msg *m)
{
	if (m->n_value != src->n_types)
		return 0;
	for (size_t k = 0; k < m->n_location_id; k++)
		if (m->location_id[k] == 0 || m->location_id[k] > src->n_locations)
			return 0;
	for (size_t k = 0; k < m->n_label; k++)
		if (m->label[k]->key < 0 || (uint64_t)m->label[k]->key >= src->n_strings ||
		    m->label[k]->str < 0 || (uint64_t)m->label[k]->str >= src->n_strings)
			return 0;
	return 1;
}

/* The spill file read back a window at a time: its Sample fields as
 * spill_put wrote them. */
struct spill_in {
	int fd;
	uint64_t off, end; /* of the file: the next byte to read, the last + 1 */
	uint8_t *buf;
	size_t cap, pos, used;
};

/* At least n bytes from pos on in the window, or -EIO. */
static int spill_need(struct spill_in *in, size_t n)
{
	if (in->used - in->pos >= n)
		return 0;
	memmove(in->buf, in->buf + in->pos, in->used - in->pos);
	in->used -= in->pos;
	in->pos = 0;
	if (n > in->cap && grow(&in->buf, &in->cap, n - 1, 1) < 0)
		return -ENOMEM;
	while (in->used < n) {
		size_t want = in->cap - in->used;
		ssize_t got;

		if (want > in->end - in->off)
			want = (size_t)(in->end - in->off);
		got = want ? pread(in->fd, in->buf + in->used, want, (off_t)in->off) : 0;
		if (got <= 0)
			return -EIO;
		in->used += (size_t)got;
		in->off += (uint64_t)got;
	}
	return 0;
}

/* The next sample's bytes: *len of them at in->buf + in->pos. */
static int spill_next(struct spill_in *in, size_t *len)
{
	uint64_t v = 0;
	size_t shift = 0;
	int ret;

	for (size_t i = 1;; i++) {
		ret = spill_need(in, i + 1);
		if (ret < 0)
			return ret;
		if (in->buf[in->pos] != 0x12 || i > 10)
			return -EIO;
		v |= (uint64_t)(in->buf[in->pos + i] & 0x7f) << shift;
		shift += 7;
		if (!(in->buf[in->pos + i] & 0x80)) {
			in->pos += i + 1;
			break;
		}
	}
	if (v > in->end)
		return -EIO;
	*len = (size_t)v;
	return spill_need(in, *len);
}

static int merge_spilled(struct merge *mg)
{
	struct spill_in in = { .fd = mg->src->spill_fd, .end = mg->src->spilled_bytes };
	int ret = grow(&in.buf, &in.cap, (1 << 16) - 1, 1);

	while (ret == 0 && (in.off < in.end || in.pos < in.used)) {
		pp_sample_msg *m;
		size_t len;

		ret = spill_next(&in, &len);
		if (ret < 0)
			break;
		m = perftools__profiles__sample__unpack(NULL, len, in.buf + in.pos);
		in.pos += len;
		if (!m || !spilled_sample_ok(mg->src, m))
			ret = -EIO;
		else
			ret = merge_sample(mg, m->location_id, m->n_location_id, m->value, m->label,
					   m->n_label);
		if (m)
			perftools__profiles__sample__free_unpacked(m, NULL);
	}
	free(in.buf);
	return ret;
}

int pp_merge(struct pp_builder *dst, const struct pp_builder *src, size_t column, int64_t scale,
	     uint64_t leaf, pp_keep_fn keep, void *arg)
{
	struct merge mg = {
		.dst = dst,
		.src = src,
		.column = column,
		.scale = scale,
		.leaf = leaf,
		.keep = keep,
		.arg = arg,
	};
	int ret = -ENOMEM;

	if (column >= src->n_types || dst->n_types != 1)
		return -EINVAL;
	mg.mapping_of = calloc(src->n_mappings + 1, sizeof(*mg.mapping_of));
	mg.location_of = calloc(src->n_locations + 1, sizeof(*mg.location_of));
	if (mg.mapping_of && mg.location_of)
		ret = merge_tables(&mg);
	if (ret == 0)
		ret = merge_in_memory(&mg);
	if (ret == 0 && src->spill_fd >= 0 && src->spilled_bytes)
		ret = merge_spilled(&mg);
	free(mg.labels);
	free(mg.ids);
	free(mg.location_of);
	free(mg.mapping_of);
	return ret;
}
