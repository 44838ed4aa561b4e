/* Writing stack sets as pprof, folded stacks and speedscope JSON. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/archive/json.h"
#include "export.h"
#include "lib/pprof.h"
#include "lib/sanitize.h"
#include "lib/strmap.h"

#define KERNEL_MAPPING "[kernel.kallsyms]"

void tr_export_root(const struct ss_stack *st, char *buf, size_t len)
{
	const char *comm = *st->comm ? st->comm : "[unknown]";

	if (st->pid >= 0)
		snprintf(buf, len, "%s-%ld", comm, st->pid);
	else
		snprintf(buf, len, "%s", comm);
}

/* The name a viewer shows for a frame: its symbol, else its address, else
 * the object it is in. */
static void frame_label(const struct ss_frame *f, char *buf, size_t len)
{
	const char *base = strrchr(f->dso, '/');

	base = base ? base + 1 : f->dso;
	if (*f->name)
		snprintf(buf, len, "%s", f->name);
	else if (f->address)
		snprintf(buf, len, "0x%" PRIx64, f->address);
	else if (*base)
		snprintf(buf, len, "[unknown] (%s)", base);
	else
		snprintf(buf, len, "[unknown]");
}

/* A set read from perf.data.txt has counts and values; one read from
 * cpu.folded has counts only, offcpu/wall.folded values only. */
static int has_values(const struct tr_stackset *s)
{
	return tr_stackset_total(s) != 0 || tr_stackset_count(s) == 0;
}

static int has_counts(const struct tr_stackset *s)
{
	return strcmp(s->kind, "cpu") == 0 && tr_stackset_count(s) != 0;
}

/* One mapping per object; pp_write_gz puts the program first, where pprof
 * looks for the profile's binary, as it does for the archive's own. */
static int add_mappings(struct pp_builder *b, const struct tr_stackset *s, uint64_t *mapping_of)
{
	for (size_t i = 0; i < s->n_frames; i++) {
		const char *object = s->frames[i].kernel ? KERNEL_MAPPING : s->frames[i].dso;

		mapping_of[i] = *object ? pp_mapping(b, 0, 0, 0, object, NULL) : 0;
		if (*object && !mapping_of[i])
			return -ENOMEM;
	}
	return 0;
}

/* A builder with the set's sample types: a count, a value, or both. */
static struct pp_builder *pprof_builder_for(const struct tr_stackset *s, int counts, int values)
{
	struct pp_value_type types[2];
	size_t n_types = 0;
	int64_t period = 0;

	if (counts)
		types[n_types++] = (struct pp_value_type){ "samples", "count" };
	if (values || !counts)
		types[n_types++] = (struct pp_value_type){ s->value_type, s->value_unit };
	/* What one sample stands for: the mean weight (one period at a fixed
	 * frequency). */
	if (counts && values && tr_stackset_count(s))
		period = tr_stackset_total(s) / tr_stackset_count(s);
	return pp_new(types, n_types,
		      (struct pp_value_type){ counts && !values ? "samples" : s->value_type,
					      counts && !values ? "count" : s->value_unit },
		      counts && !values ? 1 : period);
}

/* A location per frame of the set, its id in location_of[]. */
static int add_locations(struct pp_builder *b, const struct tr_stackset *s,
			 const uint64_t *mapping_of, uint64_t *location_of)
{
	for (size_t i = 0; i < s->n_frames; i++) {
		const struct ss_frame *fr = &s->frames[i];
		char label[1024];

		/* pprof shows the address of a nameless location itself. */
		label[0] = '\0';
		if (*fr->name || !fr->address)
			frame_label(fr, label, sizeof(label));
		location_of[i] = pp_location(b, mapping_of[i], fr->address, label);
		if (!location_of[i])
			return -ENOMEM;
	}
	return 0;
}

/* The stack as one sample, labelled with its process, thread and command;
 * ids has room for its frames. */
static int add_stack_sample(struct pp_builder *b, const struct ss_stack *st,
			    const uint64_t *location_of, uint64_t *ids, int counts, int values)
{
	struct pp_label labels[3];
	int64_t v[2];
	size_t n_labels = 0, n_v = 0;

	for (size_t k = 0; k < st->n_frames; k++)
		ids[k] = location_of[st->frames[k]];
	if (st->pid >= 0)
		labels[n_labels++] = (struct pp_label){ "pid", NULL, st->pid };
	if (st->tid >= 0)
		labels[n_labels++] = (struct pp_label){ "tid", NULL, st->tid };
	if (*st->comm)
		labels[n_labels++] = (struct pp_label){ "comm", st->comm, 0 };
	if (counts)
		v[n_v++] = st->count;
	if (values || !counts)
		v[n_v++] = st->value;
	return pp_add(b, ids, st->n_frames, v, labels, n_labels);
}

int tr_export_pprof(const struct tr_stackset *s, int64_t time_nanos, int64_t duration_nanos,
		    FILE *f)
{
	uint64_t *mapping_of = NULL, *location_of = NULL, *ids = NULL;
	size_t max_frames = 1;
	int counts = has_counts(s), values = has_values(s);
	struct pp_builder *b = pprof_builder_for(s, counts, values);
	int ret = -ENOMEM;

	if (!b)
		return -ENOMEM;
	mapping_of = calloc(s->n_frames + 1, sizeof(*mapping_of));
	location_of = calloc(s->n_frames + 1, sizeof(*location_of));
	for (size_t i = 0; i < s->n_stacks; i++)
		if (s->stacks[i].n_frames > max_frames)
			max_frames = s->stacks[i].n_frames;
	ids = calloc(max_frames, sizeof(*ids));
	if (!mapping_of || !location_of || !ids)
		goto out;
	if (add_mappings(b, s, mapping_of) < 0 || add_locations(b, s, mapping_of, location_of) < 0)
		goto out;
	for (size_t i = 0; i < s->n_stacks; i++)
		if (add_stack_sample(b, &s->stacks[i], location_of, ids, counts, values) < 0)
			goto out;
	pp_set_time(b, time_nanos, duration_nanos);
	ret = pp_write_gz(b, f);
out:
	free(ids);
	free(location_of);
	free(mapping_of);
	pp_free(b);
	return ret;
}

int tr_export_folded(const struct tr_stackset *s, FILE *f)
{
	int values = has_values(s) && strcmp(s->kind, "cpu") != 0;

	for (size_t i = 0; i < s->n_stacks; i++) {
		const struct ss_stack *st = &s->stacks[i];
		char label[1024];

		tr_export_root(st, label, sizeof(label));
		tr_sanitize_fputs(label, f);
		for (size_t k = st->n_frames; k-- > 0;) {
			const struct ss_frame *fr = &s->frames[st->frames[k]];

			frame_label(fr, label, sizeof(label));
			fputc(';', f);
			tr_sanitize_fputs(label, f);
			if (fr->kernel)
				fputs("_[k]", f);
		}
		/* offcpu/wall folded stacks count microseconds, as tracerig's own. */
		fprintf(f, " %" PRId64 "\n", values ? st->value / 1000 : st->count);
	}
	return ferror(f) ? -EIO : 0;
}

/* speedscope's frames are shared by every profile of the file. */
struct shared_frames {
	struct tr_strmap index; /* "name\x1ffile" -> position + 1 */
	size_t n;
};

static int64_t shared_frame(struct shared_frames *sf, struct tr_json *j, const char *name,
			    const char *file)
{
	char key[2048];
	int len = snprintf(key, sizeof(key), "%s\x1f%s", name, file);
	struct tr_strmap_entry *e;

	if (len < 0 || (size_t)len >= sizeof(key))
		len = (int)sizeof(key) - 1;
	e = tr_strmap_get(&sf->index, key, (size_t)len);
	if (!e)
		return -1;
	if (!e->value) {
		e->value = ++sf->n;
		if (j) {
			tr_json_object(j, NULL);
			tr_json_string(j, "name", name);
			if (*file)
				tr_json_string(j, "file", file);
			tr_json_end_object(j);
		}
	}
	return (int64_t)e->value - 1;
}

static void frame_display(const struct ss_frame *fr, char *buf, size_t len)
{
	char label[1024];

	frame_label(fr, label, sizeof(label));
	snprintf(buf, len, "%s%s", label, fr->kernel ? " [k]" : "");
	tr_sanitize_name(buf, len, buf);
}

/* speedscope's shared.frames: every frame once, in the order the profiles
 * will name them (a stack's root first). */
static int write_shared_frames(struct shared_frames *sf, struct tr_json *j,
			       const struct tr_stackset *const *sets, size_t n)
{
	char label[1100];

	for (size_t p = 0; p < n; p++) {
		const struct tr_stackset *s = sets[p];

		for (size_t i = 0; i < s->n_stacks; i++) {
			const struct ss_stack *st = &s->stacks[i];

			tr_export_root(st, label, sizeof(label));
			tr_sanitize_name(label, sizeof(label), label);
			if (shared_frame(sf, j, label, "") < 0)
				return -ENOMEM;
			for (size_t k = st->n_frames; k-- > 0;) {
				const struct ss_frame *fr = &s->frames[st->frames[k]];

				frame_display(fr, label, sizeof(label));
				if (shared_frame(sf, j, label, fr->dso) < 0)
					return -ENOMEM;
			}
		}
	}
	return 0;
}

/* One stack set as a "sampled" profile: each stack once, weighted by its
 * value where the set has values, else by its count. */
static void write_sampled_profile(struct shared_frames *sf, struct tr_json *j,
				  const struct tr_stackset *s)
{
	int values = has_values(s);
	char label[1100];

	tr_json_object(j, NULL);
	tr_json_string(j, "type", "sampled");
	tr_json_string(j, "name", s->kind);
	tr_json_string(j, "unit", values ? s->value_unit : "none");
	tr_json_i64(j, "startValue", 0);
	tr_json_i64(j, "endValue", values ? tr_stackset_total(s) : tr_stackset_count(s));
	tr_json_array(j, "samples");
	for (size_t i = 0; i < s->n_stacks; i++) {
		const struct ss_stack *st = &s->stacks[i];

		tr_json_array(j, NULL);
		tr_export_root(st, label, sizeof(label));
		tr_sanitize_name(label, sizeof(label), label);
		tr_json_i64(j, NULL, shared_frame(sf, NULL, label, ""));
		for (size_t k = st->n_frames; k-- > 0;) {
			const struct ss_frame *fr = &s->frames[st->frames[k]];

			frame_display(fr, label, sizeof(label));
			tr_json_i64(j, NULL, shared_frame(sf, NULL, label, fr->dso));
		}
		tr_json_end_array(j);
	}
	tr_json_end_array(j);
	tr_json_array(j, "weights");
	for (size_t i = 0; i < s->n_stacks; i++)
		tr_json_i64(j, NULL, values ? s->stacks[i].value : s->stacks[i].count);
	tr_json_end_array(j);
	tr_json_end_object(j);
}

int tr_export_speedscope(const struct tr_stackset *const *sets, size_t n, const char *name, FILE *f)
{
	struct shared_frames sf = { 0 };
	struct tr_json j;
	int ret;

	tr_json_init(&j, f);
	tr_json_object(&j, NULL);
	tr_json_string(&j, "$schema", "https://www.speedscope.app/file-format-schema.json");
	tr_json_string(&j, "name", name);
	tr_json_string(&j, "exporter", "tracerig " PACKAGE_VERSION);
	tr_json_i64(&j, "activeProfileIndex", 0);
	tr_json_object(&j, "shared");
	tr_json_array(&j, "frames");
	ret = write_shared_frames(&sf, &j, sets, n);
	tr_json_end_array(&j);
	tr_json_end_object(&j);
	tr_json_array(&j, "profiles");
	for (size_t p = 0; p < n && ret == 0; p++)
		write_sampled_profile(&sf, &j, sets[p]);
	tr_json_end_array(&j);
	tr_json_end_object(&j);
	tr_json_finish(&j);
	tr_strmap_free(&sf.index);
	if (ret == 0 && ferror(f))
		ret = -EIO;
	return ret;
}
