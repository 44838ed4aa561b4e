/* [tracerig], bound once per session through its key table
 * (tr_session_keys) as each plugin's section is through its own: the
 * session reads fields, never a key by its name. */
#ifndef TR_SETTINGS_H
#define TR_SETTINGS_H

#include "tracerig-private/ext.h"

struct tr_section;

/* mode's choices, in their order. */
enum tr_mode { TR_MODE_RECORD, TR_MODE_FLIGHT };

struct tr_settings {
	const char *name, *description, *output, *packager, *cgroup, *trigger_cpu;
	struct tracerig_list required;
	long long duration_ms, window_ms, keep, trigger_for_ms;
	long long start_timeout_ms, stop_timeout_ms, flush_timeout_ms, open_timeout_ms;
	int pprof, stream, trigger_crash, keep_staging;
	int mode; /* enum tr_mode */
};

extern const struct tracerig_key tr_session_keys[];

/* Fills *st from `section` (NULL: every default).  The strings are the
 * profile's; the list's items are st's own until tr_settings_free.  0 or
 * -ENOMEM. */
int tr_settings_bind(const struct tr_section *section, struct tr_settings *st);
void tr_settings_free(struct tr_settings *st);

/* Whether `name` is one of the list's items. */
int tr_list_contains(const struct tracerig_list *list, const char *name);

#endif
