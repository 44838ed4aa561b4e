/* callchain = cfi on a kernel that cannot run the walker (no bpf_loop or
 * bpf_task_pt_regs before Linux 5.17): what the profile's cfi_fallback
 * makes of it.  One decision for --check and for the run, so that what
 * --check says is what the run does. */
#ifndef TR_EBPF_FALLBACK_H
#define TR_EBPF_FALLBACK_H

#include <stddef.h>

/* The indexes of the cfi_fallback key's choices, in their order. */
enum cfi_fallback { CFI_FALLBACK_REFUSE, CFI_FALLBACK_FP, CFI_FALLBACK_DWARF };
#define CFI_FALLBACK_CHOICES "refuse,fp,dwarf"

/* The user stacks a cfi profile gets: TR_CALLCHAIN_CFI when `probe`
 * (oc_check_cfi's return) is 0; else the fallback's TR_CALLCHAIN_FP or
 * TR_CALLCHAIN_DWARF with what it costs in `msg` (the probe's `why`
 * included), or -1 when the profile refuses one, with what to do in
 * `msg`.  `oncpu`: the sampler is on, which walks in the kernel or by
 * frame pointers only (validate refuses dwarf for it). */
int cfi_fallback_choose(int probe, const char *why, int fallback, int oncpu, char *msg, size_t len);

#endif
