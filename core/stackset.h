/* Stacks with their weights, merged as they are added: what `tracerig
 * convert` reads from an archive (perf.data.txt samples, folded lines) and
 * writes as pprof, folded stacks or speedscope. */
#ifndef TR_STACKSET_H
#define TR_STACKSET_H

#include <stddef.h>
#include <stdint.h>

/* A frame as read: a name ("" when unknown), and where known the address
 * and the object (dso) it is in. */
struct ss_frame {
	const char *name;
	const char *dso; /* "" when unknown */
	uint64_t address; /* 0 when unknown */
	int kernel;
};

struct ss_stack {
	uint32_t *frames; /* indexes into set->frames, leaf first */
	size_t n_frames;
	long pid, tid;    /* -1 when unknown */
	const char *comm; /* the process (or thread) name, "" when unknown */
	int64_t value;    /* summed weight */
	int64_t count;    /* samples or intervals merged */
};

struct tr_stackset {
	const char *kind;        /* "cpu", "offcpu", "wall" */
	const char *value_type;  /* pprof's words: ("cpu", "nanoseconds"), ... */
	const char *value_unit;
	struct ss_frame *frames; /* distinct frames; names and dsos interned */
	size_t n_frames, cap_frames;
	struct ss_stack *stacks;
	size_t n_stacks, cap_stacks;
	void *index; /* interning tables */
};

int tr_stackset_init(struct tr_stackset *s, const char *kind, const char *value_type,
		     const char *value_unit);
void tr_stackset_free(struct tr_stackset *s);

/* Adds one stack (frames leaf first) with its weight and how many samples
 * or intervals that is; 0 or -ENOMEM. */
int tr_stackset_add(struct tr_stackset *s, const struct ss_frame *frames, size_t n_frames,
		    long pid, long tid, const char *comm, int64_t value, int64_t count);

/* Sum of every stack's value, or of its count. */
int64_t tr_stackset_total(const struct tr_stackset *s);
int64_t tr_stackset_count(const struct tr_stackset *s);

#endif
