/* callchain = cfi: an object's call frame information (.eh_frame and
 * .debug_frame, as elfutils' libdw reads them) compiled once into a sorted table of compact
 * rows, one per address range with the same rules, for a walker that
 * needs no stack copy: it finds the row of a PC by binary search and
 * computes the caller's PC, SP and RBP from the registers and a few reads
 * of the stack (the OpenTelemetry eBPF profiler's "stack deltas").  x86-64
 * only, as the rows name its registers.
 *
 * A row holds what almost all code needs: the CFA as RSP or RBP plus an
 * offset, the return address at CFA - 8, and the caller's RBP saved at
 * CFA + an offset or left as it was.  Rules it cannot hold (a CFA by
 * expression, as PLT entries have; a return address elsewhere) make a row
 * of kind TR_CFI_FALLBACK, where a walker goes on by frame pointers, and
 * are counted; so are addresses no FDE covers (TR_CFI_NONE). */
#ifndef TR_LIB_CFI_H
#define TR_LIB_CFI_H

#include <stddef.h>
#include <stdint.h>

enum tr_cfi_kind {
	TR_CFI_NONE = 0, /* no CFI here: not code the object describes */
	TR_CFI_RSP,      /* CFA = RSP + cfa_offset */
	TR_CFI_RBP,      /* CFA = RBP + cfa_offset */
	TR_CFI_FALLBACK, /* rules a row cannot hold: walk by frame pointers */
	TR_CFI_SIGNAL,   /* a signal frame's: the interrupted state is in the
	                      * kernel's sigframe (a walker stops or reads it) */
};

/* The rules from `pc` up to the next row's pc.  Addresses are the ELF's
 * (virtual addresses as linked): a walker subtracts the mapping's load
 * bias first. */
struct tr_cfi_row {
	uint64_t pc;
	int32_t cfa_offset;
	/* The caller's RBP is at CFA + rbp_offset; 0: this frame left RBP as
	 * it was. */
	int16_t rbp_offset;
	uint8_t kind; /* enum tr_cfi_kind */
	uint8_t pad;
};

/* Where the FDEs compiled were found: tr_cfi_stats.sources, a mask. */
enum tr_cfi_source {
	TR_CFI_FROM_EH_FRAME_HDR = 1, /* .eh_frame, by .eh_frame_hdr's list */
	TR_CFI_FROM_EH_FRAME = 2,     /* .eh_frame read through: no usable list */
	TR_CFI_FROM_DEBUG_FRAME = 4,  /* .debug_frame: code without unwind tables */
};

struct tr_cfi_stats {
	size_t fdes;      /* FDEs read */
	size_t rows;      /* rows in the table */
	size_t fallbacks; /* rows of kind TR_CFI_FALLBACK */
	unsigned sources; /* enum tr_cfi_source bits */
};

struct tr_cfi_table {
	struct tr_cfi_row *rows; /* sorted by pc, ranges not overlapping */
	size_t n;
	struct tr_cfi_stats stats;
};

/* Compiles the table of the ELF object open on `fd` from the FDEs of its
 * .eh_frame (found through .eh_frame_hdr's sorted list, or by reading the
 * section through where the object has no such list) and of its
 * .debug_frame (compressed or not), for the code no FDE of .eh_frame
 * describes.  0, -ENOENT (no FDE in either), -ENOTSUP (not x86-64),
 * -EINVAL (not ELF), -ENOMEM.  The caller frees the table with
 * tr_cfi_free. */
int tr_cfi_build(int fd, struct tr_cfi_table *out);
void tr_cfi_free(struct tr_cfi_table *t);

/* The row whose range holds `pc` (ELF address), or NULL when none does
 * (before the first FDE).  A row of kind TR_CFI_NONE is returned for the
 * gaps between FDEs. */
const struct tr_cfi_row *tr_cfi_find(const struct tr_cfi_table *t, uint64_t pc);

/* The registers a walk carries from frame to frame. */
struct tr_cfi_regs {
	uint64_t pc, sp, bp;
};

/* Reads the 8 bytes at `addr` of the walked thread's memory: 0, or -1. */
typedef int (*tr_cfi_read_fn)(void *arg, uint64_t addr, uint64_t *value);

/* One frame up, by `row` (tr_cfi_find of regs->pc less the load bias; NULL
 * or TR_CFI_NONE and TR_CFI_FALLBACK rows go by frame pointers): the
 * caller's PC (the return address), SP (the CFA) and RBP.  0, or -1 where
 * the walk stops (an unreadable or implausible frame, a signal frame).
 * What the BPF walker does, in C: its tests compare with this. */
int tr_cfi_step(const struct tr_cfi_row *row, struct tr_cfi_regs *regs, tr_cfi_read_fn read,
		void *arg);

#endif
