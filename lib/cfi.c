/* CFI compiled into rows (cfi.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "vec.h"

#ifdef HAVE_LIBDW
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

/* DWARF register numbers of x86-64 (System V psABI, figure 3.36). */
#define DWARF_RBP 6
#define DWARF_RSP 7
#define DWARF_RA 16

/* The pointer encodings .eh_frame_hdr uses (LSB's DW_EH_PE_*). */
#define PE_OMIT 0xff
#define PE_UDATA4 0x03
#define PE_SDATA4 0x0b
#define PE_UDATA8 0x04
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30

/* A value of .eh_frame_hdr at `*pos`, moved past.  `field_addr` is its
 * address (pcrel), `hdr_addr` the section's (datarel).  -1 for an
 * encoding this reader does not take. */
static int read_encoded(const uint8_t *data, size_t len, size_t *pos, uint8_t enc,
			uint64_t hdr_addr, uint64_t *out)
{
	uint64_t base = 0, value;
	size_t size;

	switch (enc & 0x70) {
	case 0: break;
	case PE_PCREL: base = hdr_addr + *pos; break;
	case PE_DATAREL: base = hdr_addr; break;
	default: return -1;
	}
	switch (enc & 0x0f) {
	case PE_UDATA4:
	case PE_SDATA4: size = 4; break;
	case PE_UDATA8:
	case PE_SDATA8:
	case 0: /* absptr: a pointer of the machine, 8 bytes here */ size = 8; break;
	default: return -1;
	}
	if (*pos + size > len)
		return -1;
	if (size == 4) {
		uint32_t v;

		memcpy(&v, data + *pos, 4);
		value = (enc & 0x0f) == PE_SDATA4 ? (uint64_t)(int64_t)(int32_t)v : v;
	} else {
		memcpy(&value, data + *pos, 8);
	}
	*pos += size;
	*out = base + value;
	return 0;
}

/* Where a register is saved, when the rule is "at CFA + offset": libdw
 * writes it as DW_OP_call_frame_cfa, then DW_OP_plus_uconst N or
 * DW_OP_consts N, DW_OP_plus (frame_register.c); a value rule ends in
 * DW_OP_stack_value and is not this. */
static int saved_at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *offset)
{
	if (nops == 0 || ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	if (nops == 1) {
		*offset = 0;
		return 0;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*offset = (int64_t)ops[1].number;
		return 0;
	}
	if (nops == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus) {
		*offset = (int64_t)ops[1].number;
		return 0;
	}
	return -1;
}

/* The CFA as a register and an offset: libdw writes DW_CFA_def_cfa's rule
 * as DW_OP_bregx REG OFFSET (cfi.c), a DWARF expression may say
 * DW_OP_bregN OFFSET.  -1 for anything else. */
static int cfa_rule(const Dwarf_Op *ops, size_t nops, int *reg, int64_t *offset)
{
	if (nops != 1)
		return -1;
	if (ops[0].atom == DW_OP_bregx) {
		*reg = (int)ops[0].number;
		*offset = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		*reg = ops[0].atom - DW_OP_breg0;
		*offset = (int64_t)ops[0].number;
	} else {
		return -1;
	}
	return *offset == (int32_t)*offset ? 0 : -1;
}

/* The row libdw's frame state at one address comes to. */
static struct tr_cfi_row row_of(Dwarf_Frame *frame, uint64_t pc, int signal)
{
	struct tr_cfi_row row = { .pc = pc, .kind = TR_CFI_FALLBACK };
	Dwarf_Op ops_mem[3], *ops;
	size_t nops;
	int64_t ra, rbp = 0, cfa_offset;
	int cfa_reg;

	if (signal) {
		row.kind = TR_CFI_SIGNAL;
		return row;
	}
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 ||
	    cfa_rule(ops, nops, &cfa_reg, &cfa_offset) < 0 ||
	    (cfa_reg != DWARF_RSP && cfa_reg != DWARF_RBP))
		return row;
	if (dwarf_frame_register(frame, DWARF_RA, ops_mem, &ops, &nops) != 0 ||
	    saved_at_cfa(ops, nops, &ra) < 0 || ra != -8)
		return row;
	if (dwarf_frame_register(frame, DWARF_RBP, ops_mem, &ops, &nops) != 0)
		return row;
	/* nops 0: "same value" (ops NULL) or "undefined": either way this
	 * frame gives no other RBP. */
	if (nops && (saved_at_cfa(ops, nops, &rbp) < 0 || rbp != (int16_t)rbp || rbp == 0))
		return row;
	row.kind = cfa_reg == DWARF_RSP ? TR_CFI_RSP : TR_CFI_RBP;
	row.cfa_offset = (int32_t)cfa_offset;
	row.rbp_offset = (int16_t)rbp;
	return row;
}

static int same_rules(const struct tr_cfi_row *a, const struct tr_cfi_row *b)
{
	return a->kind == b->kind && a->cfa_offset == b->cfa_offset &&
	       a->rbp_offset == b->rbp_offset;
}

struct builder {
	struct tr_cfi_row *rows;
	size_t n, cap;
};

/* Appends a row, or extends the last one when the rules are the same. */
static int add_row(struct builder *b, const struct tr_cfi_row *row)
{
	struct tr_cfi_row *grown;

	if (b->n && same_rules(&b->rows[b->n - 1], row))
		return 0;
	if (b->n && b->rows[b->n - 1].pc == row->pc) {
		b->rows[b->n - 1] = *row;
		return 0;
	}
	grown = tr_vec_grow(b->rows, &b->cap, b->n + 1, sizeof(*b->rows), 256);
	if (!grown)
		return -ENOMEM;
	b->rows = grown;
	b->rows[b->n++] = *row;
	return 0;
}

/* The rows of one FDE, from its first address `loc` up to `next` (the
 * next FDE's): each libdw frame state covers [start, end). */
static int add_fde(struct builder *b, Dwarf_CFI *cfi, uint64_t loc, uint64_t next,
		   struct tr_cfi_stats *st)
{
	uint64_t pc = loc;
	int ret;

	while (pc < next) {
		Dwarf_Frame *frame;
		Dwarf_Addr start, end;
		bool signal;
		struct tr_cfi_row row;

		if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
			break;
		if (dwarf_frame_info(frame, &start, &end, &signal) < 0 || start > pc || end <= pc) {
			free(frame);
			break;
		}
		row = row_of(frame, pc, signal);
		free(frame);
		if ((ret = add_row(b, &row)) < 0)
			return ret;
		pc = end;
	}
	if (pc == loc)
		return 0;
	st->fdes++;
	/* Past its end and before the next FDE, nothing is described. */
	if (pc < next) {
		struct tr_cfi_row none = { .pc = pc, .kind = TR_CFI_NONE };

		return add_row(b, &none);
	}
	return 0;
}

static Elf_Scn *section_named(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t strndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &strndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(elf, strndx, shdr->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

/* Every FDE of the sorted list in .eh_frame_hdr (LSB 5.0, "Exception
 * Frames"), compiled. */
static int build_from_hdr(Elf *elf, Dwarf_CFI *cfi, struct builder *b, struct tr_cfi_stats *st)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = section_named(elf, ".eh_frame_hdr", &shdr);
	Elf_Data *data;
	const uint8_t *d;
	size_t pos = 4;
	uint64_t ignored, count, prev = 0;
	int ret;

	if (!scn)
		return -ENOENT;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || data->d_size < 4)
		return -EINVAL;
	d = data->d_buf;
	if (d[0] != 1 || d[2] == PE_OMIT || d[3] == PE_OMIT)
		return -ENOTSUP;
	if (read_encoded(d, data->d_size, &pos, d[1], shdr.sh_addr, &ignored) < 0 ||
	    read_encoded(d, data->d_size, &pos, d[2], shdr.sh_addr, &count) < 0)
		return -ENOTSUP;
	if (count > (data->d_size - pos) / 8)
		return -EINVAL;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t loc, fde, next = UINT64_MAX;
		size_t peek;

		if (read_encoded(d, data->d_size, &pos, d[3], shdr.sh_addr, &loc) < 0 ||
		    read_encoded(d, data->d_size, &pos, d[3], shdr.sh_addr, &fde) < 0)
			return -ENOTSUP;
		if (i && loc < prev)
			return -EINVAL; /* the list must be sorted: binary search needs it */
		prev = loc;
		peek = pos;
		if (i + 1 < count &&
		    read_encoded(d, data->d_size, &peek, d[3], shdr.sh_addr, &next) < 0)
			return -ENOTSUP;
		if ((ret = add_fde(b, cfi, loc, next, st)) < 0)
			return ret;
	}
	return 0;
}

int tr_cfi_build(int fd, struct tr_cfi_table *out)
{
	struct builder b = { 0 };
	Dwarf_CFI *cfi = NULL;
	GElf_Ehdr ehdr;
	Elf *elf;
	int ret;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EINVAL;
	if (!gelf_getehdr(elf, &ehdr)) {
		ret = -EINVAL;
		goto out;
	}
	if (ehdr.e_machine != EM_X86_64 || ehdr.e_ident[EI_CLASS] != ELFCLASS64) {
		ret = -ENOTSUP;
		goto out;
	}
	cfi = dwarf_getcfi_elf(elf);
	if (!cfi) {
		ret = -ENOENT;
		goto out;
	}
	ret = build_from_hdr(elf, cfi, &b, &out->stats);
	if (ret == 0) {
		out->rows = b.rows;
		out->n = b.n;
		out->stats.rows = b.n;
		for (size_t i = 0; i < b.n; i++)
			out->stats.fallbacks += b.rows[i].kind == TR_CFI_FALLBACK;
		b.rows = NULL;
	}
out:
	free(b.rows);
	if (cfi)
		dwarf_cfi_end(cfi);
	elf_end(elf);
	return ret;
}

#else /* !HAVE_LIBDW */

int tr_cfi_build(int fd, struct tr_cfi_table *out)
{
	(void)fd;
	memset(out, 0, sizeof(*out));
	return -ENOTSUP;
}

#endif

void tr_cfi_free(struct tr_cfi_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct tr_cfi_row *tr_cfi_find(const struct tr_cfi_table *t, uint64_t pc)
{
	size_t lo = 0, hi = t->n;

	/* The last row whose pc is at or below `pc`. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}

int tr_cfi_step(const struct tr_cfi_row *row, struct tr_cfi_regs *regs, tr_cfi_read_fn read,
		void *arg)
{
	uint64_t cfa, ra, bp = regs->bp;

	switch (row ? row->kind : TR_CFI_NONE) {
	case TR_CFI_RSP:
	case TR_CFI_RBP:
		cfa = (row->kind == TR_CFI_RSP ? regs->sp : regs->bp) + (int64_t)row->cfa_offset;
		if (read(arg, cfa - 8, &ra) < 0)
			return -1;
		if (row->rbp_offset && read(arg, cfa + (int64_t)row->rbp_offset, &bp) < 0)
			return -1;
		break;
	case TR_CFI_FALLBACK:
	case TR_CFI_NONE:
		/* Code without rules (JIT code, a PLT entry): its frame, if it
		 * keeps frame pointers, is [saved RBP, return address] at RBP. */
		if (!regs->bp || read(arg, regs->bp + 8, &ra) < 0 || read(arg, regs->bp, &bp) < 0)
			return -1;
		cfa = regs->bp + 16;
		break;
	default: return -1;
	}
	if (!ra || cfa <= regs->sp)
		return -1;
	regs->pc = ra;
	regs->sp = cfa;
	regs->bp = bp;
	return 0;
}
