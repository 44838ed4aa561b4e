/* "Did you mean": the closest of a few names to one mistyped, for the
 * core's keys and backends and a plugin's own words (eventpipe's presets). */
#ifndef TR_LIB_CLOSEST_H
#define TR_LIB_CLOSEST_H

#include <stddef.h>

/* The closest of `n` candidate names to `name` (case-insensitive edit
 * distance within a third of its length, or a candidate it begins, from 3
 * characters on), or NULL if none is close. */
const char *tr_closest(const char *name, const char *const *candidates, size_t n);

#endif
