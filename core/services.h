/* The services table (include/tracerig/plugin.h) and the core's own
 * [tracerig] keys, which the session reads the same way. */
#ifndef TR_SERVICES_H
#define TR_SERVICES_H

#include <tracerig/plugin.h>

#include "settings.h"

struct tr_section;
struct tr_session;

extern const struct tracerig_services tr_services;

/* The core's own [tracerig] keys: settings.h. */
/* Reads a validated value of `key` in `section`, or its default. */
const char *tr_config_value(const struct tr_section *section, const struct tracerig_key *keys,
			    const char *key);
long long tr_config_number(const struct tr_section *section, const struct tracerig_key *keys,
			   const char *key);

/* The session's window (the archive_window service for its archive);
 * -EAGAIN until it has ended. */
int tr_session_window(const struct tr_session *s, struct tracerig_window *out);

#endif
