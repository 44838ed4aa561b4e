/* Event names as a user writes them in a profile ("cpu-clock", "cycles",
 * "sched:sched_switch") turned into perf_event_attr, with close matches
 * for names that are not events. */
#ifndef TR_PERF_EVENTS_H
#define TR_PERF_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

enum ev_kind {
	EV_SOFTWARE,
	EV_HARDWARE,
	EV_TRACEPOINT,
};

struct ev_spec {
	char name[128];   /* as perf names it */
	enum ev_kind kind;
	uint32_t type;    /* PERF_TYPE_* */
	uint64_t config;
	char sys[64], tp[64]; /* tracepoints: subsystem and event */
};

/* Fills `out` for `name`.  -ENOENT for an unknown name, with `hint` saying
 * what was meant or where to look; -ENOTSUP when tracefs is not mounted. */
int ev_parse(const char *name, struct ev_spec *out, char *hint, size_t hint_len);
/* Reads the tracepoint's format file into a malloc'd buffer. */
int ev_tracepoint_format(const struct ev_spec *ev, char **buf, size_t *len);

#endif
