/* An unsigned number in decimal, written by hand: snprintf cost more than
 * naming all of a sample's frames (lib/folded.c's roots) and was a large
 * part of drawing a flame graph (core/views/flamegraph.c). */
#ifndef TR_LIB_DECIMAL_H
#define TR_LIB_DECIMAL_H

#include <stdint.h>

/* Room for any uint64_t's digits, and a sign. */
#define TR_DECIMAL_MAX 21

/* Writes v's digits so that they end just before `end`; returns where
 * they begin (at most TR_DECIMAL_MAX - 1 bytes before `end`). */
static inline char *tr_decimal(char *end, uint64_t v)
{
	do
		*--end = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	return end;
}

#endif
