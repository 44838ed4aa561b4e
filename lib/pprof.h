/* pprof profiles (profile.proto, gzipped): what Pyroscope, Parca, Cloud
 * Profiler and `go tool pprof` take.  A builder interns strings, mappings,
 * functions and locations, and merges samples of the same stack and labels,
 * so a profile is as big as its distinct stacks, not its samples. */
#ifndef TR_LIB_PPROF_H
#define TR_LIB_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pp_builder;

/* A value column: ("samples", "count"), ("cpu", "nanoseconds"), ... */
struct pp_value_type {
	const char *type, *unit;
};

/* sample_types: up to PP_MAX_VALUES columns; the period says what one
 * sample stands for (e.g. ("cpu", "nanoseconds"), 1e9 / frequency). */
#define PP_MAX_VALUES 4
struct pp_builder *pp_new(const struct pp_value_type *sample_types, size_t n_types,
			  struct pp_value_type period_type, int64_t period);
void pp_free(struct pp_builder *b);

/* Profile-wide facts: when it starts (ns since the epoch) and how long. */
void pp_set_time(struct pp_builder *b, int64_t time_nanos, int64_t duration_nanos);
/* What one sample stands for, when it is known only once every sample
 * is in (the mean period of samples taken at a frequency). */
void pp_set_period(struct pp_builder *b, int64_t period);
/* A free-form comment line (`pprof -comments`). */
int pp_add_comment(struct pp_builder *b, const char *text);

/* An object mapped in a process: its id, or 0 when out of memory.  The
 * same bytes of the same object (file, build id, offset, size) give the
 * same id wherever a process maps them: the mapping keeps the first
 * address it was given, and pp_mapped_address moves the others' addresses
 * into it, as pprof's merge does.  build_id: hex or NULL. */
uint64_t pp_mapping(struct pp_builder *b, uint64_t start, uint64_t limit, uint64_t file_offset,
		    const char *file, const char *build_id);
/* address, of a mapping given to pp_mapping at start, as it is in the
 * mapping mapping_id (unchanged for 0). */
uint64_t pp_mapped_address(const struct pp_builder *b, uint64_t mapping_id, uint64_t start,
			   uint64_t address);

/* A code location: an address in a mapping (both may be 0 when unknown)
 * and the function name resolved there (NULL: none, pprof shows the
 * address).  The same (mapping, address, name) gives the same id. */
uint64_t pp_location(struct pp_builder *b, uint64_t mapping_id, uint64_t address,
		     const char *function);

/* A label: numeric when str is NULL. */
struct pp_label {
	const char *key;
	const char *str;
	int64_t num;
};

/* Adds values[n_types] to the sample of this stack (location ids, leaf
 * first) and these labels; 0 or -ENOMEM. */
int pp_add(struct pp_builder *b, const uint64_t *locations, size_t n_locations,
	   const int64_t *values, const struct pp_label *labels, size_t n_labels);

/* From now on, once the samples (with their stacks and label sets) take
 * more than about `limit` bytes of memory, they are encoded into an
 * unlinked file in `dir` (the session's staging directory) and memory
 * starts empty; pp_write_gz appends them to the profile.  A long
 * system-wide session labels every sample with its pid, so its samples
 * grow with every process it sees: this bounds them.  A stack and labels
 * seen on both sides of a spill are then two samples in the file, which
 * pprof readers (and pp_merge) sum.  Mappings, locations, functions and
 * strings stay in memory.  A spill that cannot be written leaves the
 * samples in memory (pp_spilled says so).  0 or -ENOMEM. */
int pp_spill(struct pp_builder *b, const char *dir, size_t limit);
/* 0, or the -errno that stopped spilling; *spills and *bytes (either may
 * be NULL): the spills so far and the bytes they wrote. */
int pp_spilled(const struct pp_builder *b, size_t *spills, uint64_t *bytes);

/* The samples the profile holds, spilled ones included. */
size_t pp_sample_count(const struct pp_builder *b);
/* Sum of value column i over every sample. */
int64_t pp_total(const struct pp_builder *b, size_t i);

/* Encodes and gzips the profile to f; 0 or a negative errno. */
int pp_write_gz(struct pp_builder *b, FILE *f);

/* The first value column whose unit is `unit`, or -1. */
int pp_column(const struct pp_builder *b, const char *unit);

/* Which samples pp_merge keeps, by their "pid" label. */
typedef int (*pp_keep_fn)(void *arg, int64_t pid);

/* Adds every sample of `src` (spilled ones too) to `dst` (of one value
 * column): its locations with their mappings and function names, `leaf`
 * (a location of `dst`; 0: none) below its own leaf, its labels, and as
 * value its column `column` times `scale`.  Samples whose value is 0, or
 * whose "pid" label `keep` refuses, stay out (NULL keeps all; a sample
 * without that label is kept).  0, -EINVAL (no such column), -EIO (a
 * spill that does not read back as written) or -ENOMEM. */
int pp_merge(struct pp_builder *dst, const struct pp_builder *src, size_t column, int64_t scale,
	     uint64_t leaf, pp_keep_fn keep, void *arg);

#endif
