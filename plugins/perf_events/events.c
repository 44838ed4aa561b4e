/* Event names to perf_event_attr.  Names follow `perf list` so that a
 * profile written for perf record reads the same here. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events.h"
#include "lib/procpid.h"
#include "tracefs.h"

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} named_events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

#define N_NAMED (sizeof(named_events) / sizeof(named_events[0]))

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

/* Edit distance, for "did you mean". */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[128], cur[128];

	if (la >= 127 || lb >= 127)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++)
			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1,
				      prev[j - 1] + (a[i - 1] != b[j - 1]));
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb];
}

static void closest_named(const char *name, char *hint, size_t hint_len)
{
	size_t best = (size_t)-1, bi = 0;

	for (size_t i = 0; i < N_NAMED; i++) {
		size_t d = distance(name, named_events[i].name);

		if (d < best) {
			best = d;
			bi = i;
		}
	}
	if (best <= 3)
		snprintf(hint, hint_len, "did you mean %s?", named_events[bi].name);
	else
		snprintf(hint, hint_len, "use cpu-clock, task-clock, a hardware event (cycles, "
			 "instructions, cache-misses, ...) or a tracepoint subsystem:event "
			 "(see /sys/kernel/tracing/events)");
}

/* The closest tracepoint name, searched in the subsystem given (or, for an
 * unknown subsystem, among subsystem names). */
static void closest_tracepoint(const char *tracefs, const char *sys, const char *tp, char *hint,
			       size_t hint_len)
{
	char path[512], best_name[1100] = "";
	size_t best = (size_t)-1;
	struct stat st;
	FILE *ls;
	int sys_known;

	snprintf(path, sizeof(path), "%s/events/%s", tracefs, sys);
	sys_known = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	snprintf(path, sizeof(path), "%s/available_events", tracefs);
	ls = fopen(path, "re");
	if (!ls) {
		snprintf(hint, hint_len, "see %s/events", tracefs);
		return;
	}
	/* available_events lines are "sys:event". */
	while (fgets(path, sizeof(path), ls)) {
		char *colon = strchr(path, ':'), *nl = strchr(path, '\n');
		size_t d;

		if (nl)
			*nl = '\0';
		if (!colon)
			continue;
		*colon = '\0';
		if (sys_known) {
			if (strcmp(path, sys) != 0)
				continue;
			d = distance(tp, colon + 1);
		} else {
			d = distance(sys, path);
		}
		if (d < best) {
			best = d;
			snprintf(best_name, sizeof(best_name), "%s%s%s", path, sys_known ? ":" : "",
				 sys_known ? colon + 1 : "");
		}
	}
	fclose(ls);
	/* For an unknown subsystem, the closest subsystem and where its
	 * events are listed, not one of them picked at random. */
	if (best_name[0] && best <= 4 && sys_known)
		snprintf(hint, hint_len, "did you mean %s?", best_name);
	else if (best_name[0] && best <= 4)
		snprintf(hint, hint_len,
			 "no subsystem %s: did you mean %s? (its events: ls %s/events/%s)", sys,
			 best_name, tracefs, best_name);
	else
		snprintf(hint, hint_len, "no such tracepoint in %s/events", tracefs);
}

static int read_number(const char *path, uint64_t *out)
{
	char buf[64];
	ssize_t n = tr_read_text(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	*out = strtoull(buf, NULL, 10);
	return 0;
}

int ev_parse(const char *name, struct ev_spec *out, char *hint, size_t hint_len)
{
	const char *colon = strchr(name, ':');

	memset(out, 0, sizeof(*out));
	hint[0] = '\0';
	if (strlen(name) >= sizeof(out->name)) {
		snprintf(hint, hint_len, "the name is too long");
		return -ENOENT;
	}
	snprintf(out->name, sizeof(out->name), "%s", name);
	if (colon) {
		const char *tracefs = tracefs_root();
		size_t sl = (size_t)(colon - name);
		char path[512];
		int ret;

		if (sl == 0 || sl >= sizeof(out->sys) || strlen(colon + 1) >= sizeof(out->tp) ||
		    strchr(colon + 1, '/') || memchr(name, '/', sl)) {
			snprintf(hint, hint_len, "write a tracepoint as subsystem:event");
			return -ENOENT;
		}
		memcpy(out->sys, name, sl);
		snprintf(out->tp, sizeof(out->tp), "%s", colon + 1);
		if (!tracefs) {
			snprintf(hint, hint_len, "tracefs is not mounted (mount -t tracefs nodev "
				 "/sys/kernel/tracing)");
			return -ENOTSUP;
		}
		snprintf(path, sizeof(path), "%s/events/%s/%s/id", tracefs, out->sys, out->tp);
		ret = read_number(path, &out->config);
		if (ret < 0) {
			closest_tracepoint(tracefs, out->sys, out->tp, hint, hint_len);
			return -ENOENT;
		}
		out->kind = EV_TRACEPOINT;
		out->type = PERF_TYPE_TRACEPOINT;
		return 0;
	}
	for (size_t i = 0; i < N_NAMED; i++) {
		if (strcmp(name, named_events[i].name) == 0) {
			out->type = named_events[i].type;
			out->config = named_events[i].config;
			out->kind = out->type == PERF_TYPE_HARDWARE ? EV_HARDWARE : EV_SOFTWARE;
			return 0;
		}
	}
	closest_named(name, hint, hint_len);
	return -ENOENT;
}

int ev_tracepoint_format(const struct ev_spec *ev, char **buf, size_t *len)
{
	const char *tracefs = tracefs_root();
	char path[512];

	if (!tracefs)
		return -ENOTSUP;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracefs, ev->sys, ev->tp);
	return tracefs_read(path, buf, len);
}
