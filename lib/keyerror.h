/* A wrong value of a plugin's key that its key table could not judge (a
 * sample rate above the kernel's limit, a thread state that does not
 * exist): handed to the core's config_error, which says it once with its
 * profile line and counts it among the profile's errors, and the first of
 * a plugin's kept ("key: message") for --check's line about it. */
#ifndef TR_LIB_KEYERROR_H
#define TR_LIB_KEYERROR_H

#include <stddef.h>
#include "tracerig-private/ext.h"

/* *count: how many the plugin said so far (0: this is the first, copied
 * into `first`).  `svc` NULL says nothing, only counts and keeps the first:
 * for a check or an init that judges again what the plugin's validate said
 * (or would have said) before any plugin started. */
void tr_key_error(const struct tracerig_services *svc, struct tracerig_ctx *ctx, int *count,
		  char *first, size_t first_len, const char *key, const char *fmt, ...)
	TRACERIG_PRINTF(7, 8);

#endif
