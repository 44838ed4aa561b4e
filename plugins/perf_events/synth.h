/* Records the kernel did not write because what they describe existed
 * before the session: the kernel map, and COMM / MMAP2 for the processes
 * already running (perf's "synthesized" events).  The data section begins
 * with them so that samples of those processes resolve. */
#ifndef TR_PERF_SYNTH_H
#define TR_PERF_SYNTH_H

#include <stdint.h>
#include <sys/types.h>

/* The sample_id trailer non-sample records carry (attr.sample_id_all). */
struct synth_id {
	uint64_t sample_type; /* of the event the records are attributed to */
	uint64_t id;          /* that event's id */
	/* Also the readable file mappings that are not executable (perf's
	 * mmap_data): what perf script's libunwind reads .eh_frame_hdr
	 * through when it unwinds callchain = dwarf samples. */
	int data_mmaps;
};

typedef int (*synth_emit_fn)(void *arg, const void *record, size_t len);

/* The kernel's own text, _text to _etext: it does not move while the
 * system runs, and /proc/kallsyms costs tens of milliseconds to read. */
struct synth_kernel_text {
	uint64_t text, etext; /* text 0: not known yet */
};

/* PERF_RECORD_MMAP for the kernel: pid -1, "[kernel.kallsyms]_text",
 * starting at _text.  `known` (or NULL) holds _text and _etext already
 * known; if not, they are read from /proc/kallsyms and kept there. */
int synth_kernel_mmap(const struct synth_id *sid, struct synth_kernel_text *known,
		      synth_emit_fn emit, void *arg);
/* The running kernel's build id, from /sys/kernel/notes. */
int synth_kernel_build_id(unsigned char *bid, size_t *bid_len);
/* The build id of this kernel's vDSO (ours: every process of our ABI maps
 * the same image) and the length of its mapping. */
int synth_vdso_identity(unsigned char *bid, size_t *bid_len, uint64_t *map_len);
/* PERF_RECORD_COMM for every thread of `pid` and PERF_RECORD_MMAP2 for its
 * executable mappings (and its data ones: synth_id.data_mmaps) (with the build id, PERF_RECORD_MISC_MMAP_BUILD_ID,
 * where the object has one), read from /proc/PID.  -ESRCH when gone. */
int synth_process(pid_t pid, const struct synth_id *sid, synth_emit_fn emit, void *arg);
/* The same for every process on the machine; processes that vanish while
 * being read are skipped. */
int synth_all_processes(const struct synth_id *sid, synth_emit_fn emit, void *arg);

#endif
