/* The perf.data file format (tools/perf/Documentation/perf.data-file-format.txt),
 * written by tracerig itself so that stock `perf report` / `perf script`
 * open the archive without a perf binary at collection time.
 *
 * Layout written: the file header, the attr ids and attrs of the events
 * added before the first record, the data section (records appended while
 * collecting, exactly as the kernel's ring buffers hold them, plus
 * synthesized ones), then the feature sections.  The header's data size
 * follows each pd_sync(), so the file is readable by perf at any moment
 * (up to the last sync) even if the writer is killed. */
#ifndef TR_PERF_PERFDATA_H
#define TR_PERF_PERFDATA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

struct pd_writer;

/* Creates (truncating) `path` with a placeholder header.  Add the events
 * (pd_add_event) before the first record: then they are written ahead of
 * the data and an unfinished file stays readable. */
int pd_create(const char *path, struct pd_writer **out);
/* Appends one record (a struct perf_event_header and its payload) to the
 * data section.  Buffered; not thread-safe (one writer thread). */
int pd_write(struct pd_writer *w, const void *record, size_t len);
/* Bytes of data written so far. */
uint64_t pd_data_size(const struct pd_writer *w);
/* Bytes of data on disk as whole records after the last pd_sync (or
 * pd_write_finished_round): what a reader of the growing file may read. */
uint64_t pd_data_on_disk(const struct pd_writer *w);
/* Writes what is buffered and the header's data size: the file on disk is
 * now a readable perf.data holding every record written so far. */
int pd_sync(struct pd_writer *w);

/* Record types perf itself defines (tools/perf/util/event.h), above the
 * kernel's; they carry no sample_id trailer. */
#define PD_RECORD_HEADER_BUILD_ID 67
#define PD_RECORD_FINISHED_ROUND 68
/* Appends PERF_RECORD_FINISHED_ROUND (perf may sort and deliver everything
 * before the previous round marker) and syncs (pd_sync).  Write one after
 * each pass that drained every ring buffer, as perf record does. */
int pd_write_finished_round(struct pd_writer *w);

/* One event as opened: its attr, the name perf shows ("cpu-clock",
 * "sched:sched_switch") and the ids of all its fds (PERF_EVENT_IOC_ID). */
int pd_add_event(struct pd_writer *w, const struct perf_event_attr *attr, const char *name,
		 const uint64_t *ids, size_t n_ids);

/* HEADER_TRACING_DATA while collecting: the blob of td_build() for the
 * tracepoint events, without which perf refuses the file.  Call it after
 * pd_add_event and before the first record; pd_finish writes the one it
 * is given in its features. */
int pd_set_tracing_data(struct pd_writer *w, const void *blob, size_t len);

/* An object with a build id (from MMAP2 records carrying one, or read from
 * the ELF file); pid -1 = kernel. */
struct pd_build_id {
	pid_t pid;
	const char *filename;
	uint8_t id[20];
	uint8_t size;
};

/* What the header features say about the collecting machine. */
struct pd_features {
	const char *hostname, *osrelease, *arch;
	const char *version;        /* "tracerig 0.1.0" */
	const char *cpudesc, *cpuid;
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem_kb;
	int argc;
	const char *const *argv;    /* tracerig's own command line */
	int clockid;                /* CLOCK_MONOTONIC */
	uint64_t clock_ref_tod_ns;  /* a wall-clock time ... */
	uint64_t clock_ref_clk_ns;  /* ... and the clockid time taken at the same moment */
	const struct pd_build_id *build_ids;
	size_t n_build_ids;
	/* HEADER_TRACING_DATA, written as is when set: the blob of
	 * td_build() (tracingdata.h) for the tracepoint events, which perf
	 * needs to decode their PERF_SAMPLE_RAW payloads. */
	const void *tracing_data;
	size_t tracing_data_len;
};

/* Where the data of the perf.data at `path` begins, once its first record
 * was written, as its header on disk says: the writer rewrites nothing
 * from there on (records, then the feature sections, are only appended;
 * only the header before it changes), so the file may be compressed as
 * it grows from that offset (the archive_append_only service).  0 and
 * *offset set; -EAGAIN when the events' attrs are not written before the
 * data yet (or will follow it), or the errno of reading. */
int pd_append_only_from(const char *path, uint64_t *offset);

/* Writes the attrs, ids and features after the data, rewrites the header
 * and closes the file.  Frees `w` whatever the outcome. */
int pd_finish(struct pd_writer *w, const struct pd_features *features);
/* Closes without finishing: the file is left as of the last sync, which
 * perf reads (without the header features). */
void pd_abort(struct pd_writer *w);

#endif
