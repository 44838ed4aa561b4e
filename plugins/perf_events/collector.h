/* The collecting side: perf_event_open(2) for every event on every CPU (or
 * target thread, or cgroup), one ring buffer per CPU, a thread that drains
 * them into perf.data as records arrive. */
#ifndef TR_PERF_COLLECTOR_H
#define TR_PERF_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#if defined(__x86_64__)
#include <asm/perf_regs.h>
#endif

#include "events.h"
#include "perfdata.h"

enum pc_hw_fallback {
	PC_HW_FAIL,      /* an unsupported hardware event fails the backend */
	PC_HW_CPU_CLOCK, /* ... is replaced by cpu-clock */
	PC_HW_SKIP,      /* ... is left out */
};

/* The user registers sampled for callchain = dwarf: what perf record
 * --call-graph dwarf asks for (its PERF_REGS_MASK), every register but the
 * segment ones the kernel does not sample. */
#if defined(__x86_64__)
#define PC_USER_REGS_MASK                                                                   \
	(((1ull << PERF_REG_X86_64_MAX) - 1) &                                              \
	 ~((1ull << PERF_REG_X86_DS) | (1ull << PERF_REG_X86_ES) | (1ull << PERF_REG_X86_FS) | \
	   (1ull << PERF_REG_X86_GS)))
#else
#define PC_USER_REGS_MASK 0ull
#endif
/* perf's limit on the user stack copied per sample (a record's size is 16
 * bits): 65528, a multiple of 8. */
#define PC_MAX_STACK_BYTES 65528

/* Told of every record as it goes to perf.data (at `offset` in its data
 * section) and of the end of each pass over the rings, from the thread
 * that drains them: must not block. */
struct pc_observer {
	void (*record)(void *arg, uint64_t offset, const struct perf_event_header *h);
	void (*pass)(void *arg);
	void *arg;
};

struct pc_config {
	const struct ev_spec *events;
	size_t n_events;
	uint64_t frequency;   /* Hz, used unless period is set */
	uint64_t period;      /* events per sample; 0 = use frequency */
	int callchain;        /* kernel and user stacks via frame pointers */
	/* callchain = dwarf: user registers and this many bytes of user stack
	 * per sample (unwound later); user frames are not walked.  0: off. */
	uint32_t dwarf_stack_bytes;
	int kernel;           /* kernel samples and frames too */
	/* _text and _etext when known already (the core's read of
	 * /proc/kallsyms); 0: the collector reads them. */
	uint64_t kernel_text, kernel_etext;
	uint16_t max_stack;   /* callchain frames per sample; 0: the kernel's limit */
	int context_switches; /* PERF_RECORD_SWITCH records */
	size_t ring_pages;    /* data pages per CPU, a power of two */
	enum pc_hw_fallback hw_fallback;
	struct pc_observer observer; /* optional */
	/* Flight mode: perf.data is written in chunks of chunk_ns
	 * (data_path.000001, ...), each starting with the side-band of what
	 * is alive then (as the recording's start), and chunks that ended
	 * more than keep_ns ago are removed, so the disk holds at most
	 * keep_ns + 2 * chunk_ns of recording.  0: one perf.data. */
	uint64_t chunk_ns, keep_ns;
};

struct pc_target {
	int system_wide;
	const pid_t *pids;
	size_t n_pids;
	pid_t command_pid; /* held before exec: counted from its exec */
	const char *cgroup;
};

/* What the collector has seen so far.  Times are CLOCK_MONOTONIC ns, 0
 * when not (yet) known: the events were enabled (by PERF_EVENT_IOC_ENABLE,
 * or by the launched command's exec) and disabled, the first and last
 * sample's time. */
struct pc_counts {
	uint64_t samples, lost, lost_records, throttles, records, bytes, wakeups;
	uint64_t enabled_ns, disabled_ns, first_sample_ns, last_sample_ns;
	/* Record mode: perf.data's data section holds `data_bytes` of whole
	 * records on disk, and every record taken before `data_complete_ns`
	 * is among them (the rings were all drained since: the start of the
	 * last pass over them, less the moment between a record's time and
	 * its write). */
	uint64_t data_bytes, data_complete_ns;
};

/* One event as opened, for the reader of perf.data. */
struct pc_opened {
	struct ev_spec spec;
	struct perf_event_attr attr;
	uint64_t *ids;
	size_t n_ids;
};

/* A process seen for the first time (exec = 0) or after an exec (1);
 * called from the reader thread. */
typedef void (*pc_pid_fn)(void *arg, pid_t pid, int exec);
typedef void (*pc_log_fn)(void *arg, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct pc_collector;

/* Opens every event (disabled), maps the rings, starts perf.data at
 * `data_path` with the synthesized records.  On failure `why` says what
 * failed and what to do.  With `data_path` NULL it only tries: the same
 * events, rings, hardware fallbacks and /proc reads, no file (--check);
 * close the result with pc_close(). */
int pc_open(const struct pc_config *cfg, const struct pc_target *t, const char *data_path,
	    pc_pid_fn pid_fn, pc_log_fn log_fn, void *arg, struct pc_collector **out,
	    char *why, size_t why_len);
/* Enables the events and starts draining. */
int pc_start(struct pc_collector *c, char *why, size_t why_len);
/* Disables the events, drains what is left, stops the thread. */
int pc_stop(struct pc_collector *c);
void pc_counts(struct pc_collector *c, struct pc_counts *out);
/* From now on each pass over the rings that wrote records adds 1 to the
 * eventfd `fd` (-1: none), so that a reader of perf.data wakes when there
 * is more, not on a timer.  Once this returns the old fd is not written. */
void pc_notify_passes(struct pc_collector *c, int fd);
/* The events as opened (after hardware fallbacks). */
const struct pc_opened *pc_events(const struct pc_collector *c, size_t *n);
/* Finishes perf.data with the header features. */
int pc_finish(struct pc_collector *c, struct pd_features *f);
void pc_close(struct pc_collector *c);

/* Flight mode: the part of the chunks a window starting at from_ns needs,
 * opened (a chunk removed meanwhile stays readable), with the objects'
 * build ids seen so far.  The rings are drained first, so it reaches up
 * to now. */
struct pc_window_chunk {
	int fd;
	uint64_t begin, end; /* file offsets of the records to read */
};
struct pc_window {
	struct pc_window_chunk *chunks;
	size_t n;
	struct pd_build_id *ids;
	size_t n_ids;
};
int pc_window_open(struct pc_collector *c, uint64_t from_ns, struct pc_window *w);
/* Finishes `writer` (a perf.data cut from the window) with the header
 * features, the kernel's and the window's build ids; frees the writer. */
int pc_window_finish(const struct pc_window *w, struct pd_writer *writer, struct pd_features *f);
void pc_window_close(struct pc_window *w);

/* kernel.perf_event_max_sample_rate, or 0 when unreadable. */
uint64_t pc_max_sample_rate(void);
/* What to do about EACCES/EPERM from perf_event_open, for messages. */
void pc_permission_advice(char *buf, size_t len);

#endif
