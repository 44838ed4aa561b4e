/* The tracing data of perf.data (feature HEADER_TRACING_DATA, bit 1): the
 * tracefs format files that let perf decode the PERF_SAMPLE_RAW payload of
 * tracepoint samples.  The blob is what tools/perf/util/trace-event-info.c
 * writes and trace-event-read.c (trace_report) reads, version "0.6":
 *
 *   "\027\010\104tracing" "0.6\0" endian(u8) sizeof(long)(u8) page_size(u32)
 *   "header_page\0" u64 size, events/header_page
 *   "header_event\0" u64 size, events/header_event
 *   u32 0 (no ftrace formats)
 *   u32 n_systems, per system: name "\0", u32 n_events,
 *       per event: u64 size, events/SYS/NAME/format
 *   u32 0 (no kallsyms)
 *   u32 size, printk_formats
 *   u64 size, saved_cmdlines
 *
 * All numbers in host byte order, as the endian byte says. */
#ifndef TR_PERF_TRACINGDATA_H
#define TR_PERF_TRACINGDATA_H

#include <stddef.h>

/* Builds the blob for the `n` tracepoints sys[i]:name[i] (duplicates
 * allowed, grouped by system in the blob), read from tracefs_root().  On
 * success *blob (malloc'd, free() it) and *len are set and 0 returned;
 * else a negative errno: -ENOENT no tracefs or no such event, -EINVAL a
 * name with '/' or an empty/dot name, -ENOMEM, or what reading failed with. */
int td_build(const char *const *sys, const char *const *name, size_t n, char **blob,
	     size_t *len);

/* td_build() reading from the tracefs mounted at `root`. */
int td_build_from(const char *root, const char *const *sys, const char *const *name, size_t n,
		  char **blob, size_t *len);

#endif
