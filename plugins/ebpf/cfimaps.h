/* callchain = cfi: the tables the BPF walker reads (offcpu.h's cfi_rows
 * and cfi_procs), kept in step with the traced processes' executable
 * mappings.  Each object's CFI is compiled once (lib/cfi.h) into one range
 * of cfi_rows that every process mapping the object shares; a process's
 * cfi_procs entry lists its executable mappings, sorted by address, each
 * with its load bias and its object's range (none: frame pointers).
 *
 * Knows nothing of the skeleton: it is handed the two maps' fds.  Call
 * from one thread (the notification thread). */
#ifndef TR_EBPF_CFIMAPS_H
#define TR_EBPF_CFIMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracerig-private/ext.h"

struct cfi_maps;

struct cfi_maps_stats {
	uint64_t objects;          /* objects known (mapped by a live process) */
	uint64_t objects_no_cfi;   /* of which without rows: frame pointers */
	uint64_t rows_used;        /* cfi_rows entries held by objects */
	uint64_t rows_max;         /* cfi_rows' size */
	uint64_t processes;        /* processes with a cfi_procs entry */
	uint64_t loads;            /* cfi_maps_load calls that wrote an entry */
	uint64_t rows_full;        /* objects left without rows: cfi_rows was full */
	uint64_t mappings_dropped; /* executable mappings beyond OFFCPU_CFI_MAX_MAPPINGS
				    * (adjacent ones without rows merged first) */
	uint64_t incomplete_loads; /* loads that left out objects not openable yet */
};

/* `rows_fd`: cfi_rows, an array of `max_rows` struct offcpu_cfi_row;
 * `procs_fd`: cfi_procs, a hash from a __u32 tgid to struct
 * offcpu_cfi_proc.  0, -ENOTSUP when this build cannot compile CFI (no
 * libdw, not x86_64), -EINVAL, -ENOMEM. */
int cfi_maps_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx, int rows_fd,
		 uint32_t max_rows, int procs_fd, struct cfi_maps **out);
/* Leaves the maps as they are (they go with the skeleton). */
void cfi_maps_free(struct cfi_maps *m);

/* Reads tgid's executable mappings again and replaces its cfi_procs entry
 * whole, after writing the rows of any object new to it: when a process
 * is first seen, after an exec, and when the walker flagged its entry
 * stale.  On the way it forgets processes gone since (looked for at most
 * once a second: a kill() per process known) and gives back the rows no
 * live process maps.  0 or -errno (-ESRCH: the process is gone, and
 * forgotten). */
int cfi_maps_load(struct cfi_maps *m, pid_t tgid);
/* Deletes tgid's entry and lets go of its objects. */
/* Loads again the entries that left out objects not openable then (the
 * process model lagging an exec or a dlopen), whose time has come: call
 * every few tens of milliseconds from the thread that calls
 * cfi_maps_load. */
void cfi_maps_retry(struct cfi_maps *m);
void cfi_maps_forget(struct cfi_maps *m, pid_t tgid);
void cfi_maps_get_stats(const struct cfi_maps *m, struct cfi_maps_stats *out);

/* ---- the parts, exposed for tests/ebpf/test_cfimaps.c ---- */

enum cfi_map_kind {
	CFI_MAP_FILE = 1, /* an absolute path and an inode: an object to open */
	CFI_MAP_ANON,     /* anonymous, special ([vdso], [anon:...]) or memfd: no rows */
};

/* One executable mapping of /proc/PID/maps. */
struct cfi_exec_map {
	uint64_t start, end, pgoff;
	uint64_t ino;
	enum cfi_map_kind kind;
	const char *path; /* into the maps text, path_len bytes, not terminated */
	size_t path_len;
};

/* The executable mappings of /proc/PID/maps text, in its (address) order,
 * at most `max` into `out` (*dropped counts the rest).  Lines that do not
 * parse, go backwards or overlap the previous one are skipped; so is
 * [vsyscall] (the walker has no use for the legacy page). */
void cfi_maps_parse(const char *text, struct cfi_exec_map *out, size_t max, size_t *n,
		    uint64_t *dropped);

/* A PT_LOAD segment of an object. */
struct cfi_seg {
	uint64_t offset, vaddr, filesz;
	uint32_t flags; /* PF_X ... */
};

/* The load bias of a mapping of `start` at file offset `pgoff` of an
 * object with these segments (ELF address = address - bias): 0, or
 * -ENOENT when no segment holds pgoff. */
int cfi_maps_bias(const struct cfi_seg *segs, size_t n, uint64_t start, uint64_t pgoff,
		  uint64_t *bias);

/* Ranges of cfi_rows: first fit, coalesced on free.  A range freed waits
 * CFI_QUARANTINE_NS before it is handed out again: a walk on another CPU
 * may still be reading it. */
#define CFI_QUARANTINE_NS 100000000ull

struct cfi_extent {
	uint32_t start, count;
	uint64_t freed_ns; /* quarantined ranges: when */
};

struct cfi_extents {
	struct cfi_extent *free; /* sorted by start, none adjacent */
	size_t n_free, cap_free;
	struct cfi_extent *held; /* quarantined, in the order freed */
	size_t n_held, cap_held;
	uint64_t released; /* ranges made reusable so far: a retry may now fit */
};

int cfi_ext_init(struct cfi_extents *x, uint32_t size);
void cfi_ext_fini(struct cfi_extents *x);
/* 0 and *start, or -ENOSPC. */
int cfi_ext_alloc(struct cfi_extents *x, uint32_t count, uint32_t *start);
/* Quarantines [start, start + count) from now_ns.  0 or -ENOMEM (then the
 * range is lost: never handed out twice). */
int cfi_ext_free(struct cfi_extents *x, uint32_t start, uint32_t count, uint64_t now_ns);
/* Makes the ranges quarantined before now_ns - CFI_QUARANTINE_NS reusable. */
void cfi_ext_release(struct cfi_extents *x, uint64_t now_ns);

/* Writes rows (struct tr_cfi_row, the layout of struct offcpu_cfi_row) to
 * [start, start + n) of the array map `fd`: in batches when `batch`, else
 * one element at a time.  0 or -errno. */
int cfi_maps_write_rows(int fd, uint32_t start, const void *rows, size_t n, int batch);

/* cfi_maps_load with the maps text given (tests: hostile texts). */
int cfi_maps_load_text(struct cfi_maps *m, pid_t tgid, const char *text);

#endif
