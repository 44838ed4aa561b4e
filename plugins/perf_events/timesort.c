/* A least-significant-digit radix sort: a few passes over the array, where
 * a comparison sort of a few hundred thousand samples makes millions of
 * calls to its comparison function.  Stable by construction, so records
 * of the same time stay in file order (as perf's ordered events keep
 * them).  Times are counted from the earliest, and digits that are the
 * same in every key are skipped: a recording spans few of the 64 bits. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "timesort.h"

#define DIGIT_BITS 11
#define BUCKETS (1u << DIGIT_BITS)

static size_t digit(uint64_t key, unsigned d)
{
	return (size_t)(key >> (d * DIGIT_BITS)) & (BUCKETS - 1);
}

int timesort(struct time_ref *v, size_t n)
{
	struct time_ref *src = v, *dst, *tmp;
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t (*count)[BUCKETS];
	unsigned digits = 0;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].time < lo)
			lo = v[i].time;
		if (v[i].time > hi)
			hi = v[i].time;
	}
	for (uint64_t span = hi - lo; span; span >>= DIGIT_BITS)
		digits++;
	if (!digits)
		return 0; /* one time for all: file order it is */
	tmp = malloc(n * sizeof(*tmp));
	count = calloc(digits, sizeof(*count));
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		for (unsigned d = 0; d < digits; d++)
			count[d][digit(v[i].time - lo, d)]++;
	dst = tmp;
	for (unsigned d = 0; d < digits; d++) {
		size_t at = 0;

		if (count[d][digit(v[0].time - lo, d)] == n)
			continue; /* every key has this digit */
		for (size_t b = 0; b < BUCKETS; b++) {
			size_t c = count[d][b];

			count[d][b] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[d][digit(src[i].time - lo, d)]++] = src[i];
		dst = src;
		src = src == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	free(count);
	return 0;
}
