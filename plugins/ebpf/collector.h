/* The BPF side seen from user space: feature probes, loading the skeleton
 * with the profile's settings, attaching, and reading back counters, the
 * aggregated intervals and their stacks.  Knows nothing of the plugin ABI,
 * so that tests can drive it directly. */
#ifndef TR_EBPF_COLLECTOR_H
#define TR_EBPF_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "offcpu.h"

enum oc_hook {
	OC_HOOK_AUTO = 0, /* tp_btf where the kernel supports it, else raw_tp */
	OC_HOOK_BTF,
	OC_HOOK_RAW,
};

struct oc_config {
	enum oc_hook hook;
	uint32_t threads;          /* enum offcpu_threads */
	uint32_t state_mask;       /* enum offcpu_state bits */
	uint64_t min_block_ns, max_block_ns;
	uint64_t sample_period_ns; /* 0: record every interval */
	uint32_t stack_storage;    /* stack map entries */
	uint32_t stack_depth;      /* frames per stack */
	uint32_t agg_entries;      /* distinct (thread, stacks) entries */
	uint32_t thread_entries;   /* raw_tp: threads tracked at once; dwarf: copies at once */
	uint32_t dwarf_stack_bytes; /* callchain = dwarf: user stack bytes copied; 0: fp */
	int cfi;                    /* callchain = cfi: user stacks walked by CFI tables */
	uint32_t cfi_rows;          /* callchain = cfi: rows the tables hold at once */
	uint32_t cfi_processes;     /* callchain = cfi: processes with tables at once */
	uint32_t oncpu_hz;          /* on-CPU samples per second and CPU (cpu-clock); 0: none */
	int oncpu_script;           /* oncpu: every sample also sent (oc_on_sample), for
	                             * perf.data.txt */
	int lru;                   /* flight mode: the stack and aggregation maps make
	                            * room by evicting their least recently used
	                            * entries instead of refusing new ones */
	int filter_tgids;          /* trace only oc_add_tgid's processes (and children);
	                            * also settable after load with oc_filter_tgids */
	const char *cgroup;        /* cgroup v2 directory, or NULL */
};

/* Levels as in tracerig's log: 0 error, 1 warning, 2 info, 3 debug. */
typedef void (*oc_log_fn)(void *arg, int level, const char *msg);
typedef void (*oc_event_fn)(void *arg, const struct offcpu_event *ev);
/* A kept interval with its user stack copy (callchain = dwarf); u->size
 * bytes of u->data are there. */
typedef void (*oc_ustack_fn)(void *arg, const struct offcpu_ustack *u);
/* An on-CPU sample as taken (oncpu_script), in the order the CPUs
 * reserved room in the one ring: by time, to within a reservation. */
typedef void (*oc_sample_fn)(void *arg, const struct offcpu_sample *s);

struct oc_entry {
	struct offcpu_key key;
	struct offcpu_val val;
};

struct oc_collector;

/* Routes libbpf's messages (verifier log included) to `log`; process-wide,
 * as libbpf's print hook is.  NULL puts back the hook found before. */
void oc_set_log(oc_log_fn log, void *arg);

/* 0 when this machine can run the collector, else a negative errno and
 * advice in `advice`. */
int oc_check(char *advice, size_t advice_len);

/* 0 when this kernel can run callchain = cfi's walker, else a negative
 * errno and advice. */
int oc_check_cfi(char *advice, size_t advice_len);

/* Opens and loads the BPF program (the verifier runs here).  On failure
 * returns a negative errno with the reason in `why`. */
int oc_open(const struct oc_config *cfg, struct oc_collector **out, char *why, size_t why_len);
const char *oc_hook_name(const struct oc_collector *c);
int oc_add_tgid(struct oc_collector *c, uint32_t tgid);
/* Turns the process filter on or off (before attaching). */
void oc_filter_tgids(struct oc_collector *c, int on);
int oc_attach(struct oc_collector *c, char *why, size_t why_len);
void oc_detach(struct oc_collector *c);
/* Where oc_poll delivers callchain = dwarf's intervals (NULL: dropped);
 * in ring order with the notifications, a process's first interval after
 * its new-process notification. */
void oc_on_ustack(struct oc_collector *c, oc_ustack_fn fn, void *arg);
void oc_on_sample(struct oc_collector *c, oc_sample_fn fn, void *arg);
uint32_t oc_stack_bytes(const struct oc_collector *c);
/* callchain = cfi: the maps the tables go into (plugins/ebpf/cfimaps.h);
 * -1 when the collector walks no stacks by CFI. */
int oc_cfi_rows_fd(const struct oc_collector *c);
int oc_cfi_procs_fd(const struct oc_collector *c);
/* Delivers new-process / exec notifications, waiting up to timeout_ms
 * for some unless `wake_fd` (-1: none) becomes readable first; returns the
 * number handled or a negative errno. */
int oc_poll(struct oc_collector *c, int timeout_ms, int wake_fd, oc_event_fn cb, void *arg);
void oc_counters(struct oc_collector *c, uint64_t out[OFFCPU_CNT__MAX]);
/* All aggregated entries (malloc'd array, caller frees). */
int oc_read(struct oc_collector *c, struct oc_entry **out, size_t *n);
/* The on-CPU samples' entries (oncpu_hz > 0; none otherwise): val.count
 * samples, val.weighted_ns = val.real_ns the nanoseconds they stand for. */
int oc_read_oncpu(struct oc_collector *c, struct oc_entry **out, size_t *n);
/* The frames of stack `id`, innermost first; returns how many (0 for
 * OFFCPU_STACK_NONE, OFFCPU_STACK_LOST or an unknown id). */
size_t oc_stack(struct oc_collector *c, uint64_t id, uint64_t *ips, size_t max);
uint32_t oc_stack_depth(const struct oc_collector *c);
void oc_close(struct oc_collector *c);

/* Counter names for the manifest, indexed by enum offcpu_counter. */
extern const char *const oc_counter_names[OFFCPU_CNT__MAX];

#endif
