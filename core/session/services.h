/* The services table (include/tracerig/plugin.h) and the core's own
 * [tracerig] keys, which the session reads the same way. */
#ifndef TR_SERVICES_H
#define TR_SERVICES_H

#include "tracerig-private/ext.h"

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

/* Says every item of the plugin's LIST keys that is not among the key's
 * choices (config_error: with its line, counted as the profile's error),
 * before the plugin's own check or init says what else is wrong, so that
 * a run and --check say it all at once.  Returns how many; `first` gets
 * the first as "key: what". */
int tr_judge_list_choices(struct tracerig_ctx *ctx, char *first, size_t first_len);

/* The session's window (the archive_window service for its archive);
 * -EAGAIN until it has ended. */
int tr_session_window(const struct tr_session *s, struct tracerig_window *out);

#endif
