/* Event presets and the list of userspace events a profile asks for. */
#ifndef TR_LTTNG_PRESETS_H
#define TR_LTTNG_PRESETS_H

#include <stddef.h>
#include <tracerig/plugin.h>

struct lttng_preset {
	const char *name;
	const char *description;
	const char *const *events; /* NULL-terminated, full tracepoint names */
};

/* Every preset, terminated by an entry whose name is NULL. */
extern const struct lttng_preset lttng_presets[];

const struct lttng_preset *lttng_preset_find(const char *name);
size_t lttng_preset_size(const struct lttng_preset *preset);

/* A deduplicated list of event names (full names or wildcards). */
struct lttng_event_list {
	char **names;
	size_t n;
};

/* Builds the list from the `presets` and `events` keys' items (either may
 * be NULL or empty), keeping the first occurrence of each name.  On an
 * unknown preset or a malformed name returns -EINVAL with a message in
 * `err`. */
int lttng_event_list_build(struct lttng_event_list *list, const struct tracerig_list *presets,
			   const struct tracerig_list *events, char *err, size_t err_len);
void lttng_event_list_free(struct lttng_event_list *list);

#endif
