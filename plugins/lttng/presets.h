/* Event presets and the list of userspace events a profile asks for. */
#ifndef TR_LTTNG_PRESETS_H
#define TR_LTTNG_PRESETS_H

#include <stddef.h>
#include "tracerig-private/ext.h"

struct lttng_preset {
	const char *name;
	const char *description;
	/* NULL-terminated runs of NULL-terminated full tracepoint names: the
	 * preset's events are the runs' in order. */
	const char *const *const *parts;
};

/* Their names, in lttng_presets[]'s order: the preset key's choices
 * (presets-test checks that the two agree). */
#define LTTNG_PRESET_NAMES "default,gccollectonly,gconly,gcwithheap,threading,exceptions,jit,loader"

/* Every preset, terminated by an entry whose name is NULL. */
extern const struct lttng_preset lttng_presets[];

const struct lttng_preset *lttng_preset_find(const char *name);
size_t lttng_preset_size(const struct lttng_preset *preset);
/* The preset's i-th event, or NULL past the last. */
const char *lttng_preset_event(const struct lttng_preset *preset, size_t i);

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
