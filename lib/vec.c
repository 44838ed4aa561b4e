#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "vec.h"

void *tr_vec_grow_max(void *items, size_t *cap, size_t need, size_t size, size_t initial,
		      size_t max)
{
	size_t ncap = *cap ? *cap : (initial ? initial : 1);
	void *grown;

	if (need <= *cap)
		return items;
	if (need > max)
		return NULL;
	/* Twice the old capacity (or the initial one), then on until `need`
	 * fits; no more than `max`, which holds `need`. */
	if (*cap) {
		if (ncap > SIZE_MAX / 2)
			return NULL;
		ncap *= 2;
	}
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return NULL;
		ncap *= 2;
	}
	if (ncap > max)
		ncap = max;
	if (size && ncap > SIZE_MAX / size)
		return NULL;
	grown = realloc(items, ncap * size);
	if (!grown)
		return NULL;
	*cap = ncap;
	return grown;
}
