/* Names (functions, processes) to their counts, in an array that can be
 * sorted for printing, indexed by the internal library's string map. */
#ifndef TR_REPORT_COUNTS_H
#define TR_REPORT_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/strmap.h"

/* Thread names kept per process: the busiest is shown, a few others named. */
#define RP_MAX_COMMS 4

struct rp_count {
	const char *name; /* the key in the index */
	uint64_t self, total;
	uint64_t last_sample; /* counts `total` once per sample */
	long pid;
	struct {
		char *name;
		uint64_t n;
	} comms[RP_MAX_COMMS];
};

/* Zero-initialised is empty and ready. */
struct rp_counts {
	struct rp_count *items;
	size_t n, cap;
	struct tr_strmap index; /* name -> its item's index + 1 */
};

/* a + b, held at UINT64_MAX: weights come from archives made elsewhere. */
static inline uint64_t rp_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The entry of name[0..len), created with zero counts if new; NULL on ENOMEM. */
struct rp_count *rp_counts_get(struct rp_counts *c, const char *name, size_t len);

/* Adds `n` under the thread name `comm`; 0 or -ENOMEM.  Names past
 * RP_MAX_COMMS are not kept. */
int rp_count_comm(struct rp_count *e, const char *comm, uint64_t n);

/* Sorts the items by self (then total) count, largest first, ties by name;
 * the index follows the items. */
void rp_counts_sort_by_self(struct rp_counts *c);
void rp_counts_sort_by_total(struct rp_counts *c);

void rp_counts_free(struct rp_counts *c);

#endif
