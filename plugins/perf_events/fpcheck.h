/* tracerig --check: does a traced program keep frame pointers?  Without
 * them callchain = fp loses every caller of a sample in its code, and
 * callchain = dwarf (its CFI) is what gives whole stacks.
 *
 * perf has no such check.  The signal chosen is the program's own CFI
 * (.eh_frame, read with libdw): code built with frame pointers defines
 * each frame's CFA from rbp everywhere past its prologue, code built
 * -fomit-frame-pointer from rsp.  Places spread over .text are probed;
 * under one in ten finding the CFA from rbp means no frame pointers
 * (with them it is most of them: only prologues and epilogues are not).
 * Unlike guessing from instruction bytes, this reads what the compiler
 * itself recorded about every function, stripped binaries included. */
#ifndef TR_PERF_FPCHECK_H
#define TR_PERF_FPCHECK_H

#include <stddef.h>
#include "tracerig-private/ext.h"

struct fp_probe {
	size_t probed; /* places in .text with CFI */
	size_t rbp;    /* of them, with the CFA computed from rbp */
};

/* Probes the ELF file `fd`.  0, -ENOENT when it has no CFI (or no
 * .text), -ENOTSUP in a build without libdw, or another -errno. */
int fp_probe_file(int fd, struct fp_probe *out);
/* Whether a probe says "no frame pointers, but CFI": dwarf would help. */
int fp_probe_says_dwarf(const struct fp_probe *p);

/* For --check: appends to `note` (after "; " when it holds text already)
 * a sentence for each -p PID whose executable has no frame pointers
 * (--check launches no command: there is none to look at). */
void fp_check_targets(const struct tracerig_targets *t, char *note, size_t note_len);

#endif
