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

/* The pointer encodings of .eh_frame_hdr and of .eh_frame's CIEs and FDEs
 * (LSB's DW_EH_PE_*). */
#define PE_OMIT 0xff
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_UDATA8 0x04
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_INDIRECT 0x80

/* A value of a section at `*pos`, moved past.  `sec_addr` is the
 * section's address: pcrel values are from their own, datarel ones (in
 * .eh_frame_hdr) from the section's.  -1 for an encoding this reader does
 * not take. */
static int read_encoded(const uint8_t *data, size_t len, size_t *pos, uint8_t enc,
			uint64_t sec_addr, uint64_t *out)
{
	uint64_t base = 0, value;
	size_t size;

	switch (enc & 0x70) {
	case 0: break;
	case PE_PCREL: base = sec_addr + *pos; break;
	case PE_DATAREL: base = sec_addr; break;
	default: return -1;
	}
	switch (enc & 0x0f) {
	case PE_UDATA2:
	case PE_SDATA2: size = 2; break;
	case PE_UDATA4:
	case PE_SDATA4: size = 4; break;
	case PE_UDATA8:
	case PE_SDATA8:
	case 0: /* absptr: a pointer of the machine, 8 bytes here */ size = 8; break;
	default: return -1;
	}
	if (*pos > len || len - *pos < size)
		return -1;
	if (size == 2) {
		uint16_t v;

		memcpy(&v, data + *pos, 2);
		value = (enc & 0x0f) == PE_SDATA2 ? (uint64_t)(int64_t)(int16_t)v : v;
	} else if (size == 4) {
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

/* The code one FDE describes, [start, end), and the section its rules are
 * in (enum tr_cfi_source).  .eh_frame_hdr's list gives no end: there the
 * FDE ends where libdw's rules for it stop. */
struct fde_range {
	uint64_t start, end;
	unsigned source;
};

struct fde_list {
	struct fde_range *v;
	size_t n, cap;
};

static int add_range(struct fde_list *l, uint64_t start, uint64_t end, unsigned source)
{
	struct fde_range *grown = tr_vec_grow(l->v, &l->cap, l->n + 1, sizeof(*l->v), 256);

	if (!grown)
		return -ENOMEM;
	l->v = grown;
	l->v[l->n++] = (struct fde_range){ .start = start, .end = end, .source = source };
	return 0;
}

/* The rows of one FDE, up to its end or to the next FDE's start (`next`),
 * whichever comes first: each libdw frame state covers [start, end). */
static int add_fde(struct builder *b, Dwarf_CFI *cfi, const struct fde_range *r, uint64_t next,
		   struct tr_cfi_stats *st)
{
	uint64_t pc = r->start, stop = r->end < next ? r->end : next;
	struct tr_cfi_row none = { .kind = TR_CFI_NONE };
	int ret;

	while (pc < stop) {
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
	if (pc != r->start) {
		st->fdes++;
		st->sources |= r->source;
	}
	/* Past its end (or from its start, when libdw read no rules) and
	 * before the next FDE, nothing is described: the rules of the code
	 * before must not run on into it. */
	if (pc >= next || b->n == 0)
		return 0;
	none.pc = pc;
	return add_row(b, &none);
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

/* A section's bytes, inflated first where they are compressed: Go's
 * linker and some distributions compress .debug_frame (SHF_COMPRESSED,
 * or, before Go 1.19, a .zdebug_ section with GNU's "ZLIB" header). */
static Elf_Data *section_bytes(Elf_Scn *scn, const char *name)
{
	GElf_Shdr shdr;
	Elf_Data *data;

	if (!gelf_getshdr(scn, &shdr))
		return NULL;
	if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return NULL;
	data = elf_getdata(scn, NULL);
	if (data && data->d_buf && data->d_size >= 12 && strncmp(name, ".zdebug", 7) == 0 &&
	    memcmp(data->d_buf, "ZLIB", 4) == 0) {
		if (elf_compress_gnu(scn, 0, 0) < 0)
			return NULL;
		data = elf_getdata(scn, NULL);
	}
	return data && data->d_buf ? data : NULL;
}

/* The FDEs of the sorted list in .eh_frame_hdr (LSB 5.0, "Exception
 * Frames"): where each starts. */
static int ranges_from_hdr(Elf *elf, struct fde_list *l)
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
		uint64_t loc, fde;

		if (read_encoded(d, data->d_size, &pos, d[3], shdr.sh_addr, &loc) < 0 ||
		    read_encoded(d, data->d_size, &pos, d[3], shdr.sh_addr, &fde) < 0)
			return -ENOTSUP;
		/* libdw binary-searches the list too: unsorted, its lookups
		 * would miss */
		if (i && loc < prev)
			return -EINVAL;
		prev = loc;
		if ((ret = add_range(l, loc, UINT64_MAX, TR_CFI_FROM_EH_FRAME_HDR)) < 0)
			return ret;
	}
	return 0;
}

/* A CFI section read through, entry by entry (dwarf_next_cfi). */
struct cfi_section {
	const unsigned char *ident;
	Elf_Data *data;
	uint64_t addr; /* the section's: pcrel values are from it */
	bool eh;       /* .eh_frame: CIE ids and pointers of its own */
	unsigned source;
	/* The last CIE read and its FDE encoding: FDEs share a few CIEs. */
	Dwarf_Off cie;
	int enc;
};

/* The encoding of the addresses in the FDEs of the CIE at `off`: its
 * augmentation's 'R' (LSB 5.0, "The Common Information Entry Format"),
 * else plain addresses, as .debug_frame's are.  -1 for a CIE this reader
 * cannot go through. */
static int fde_encoding(const struct cfi_section *s, Dwarf_Off off)
{
	const uint8_t *base = s->data->d_buf;
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	size_t pos, end;
	uint64_t ignored;

	if (dwarf_next_cfi(s->ident, s->data, s->eh, off, &next, &e) != 0 || !dwarf_cfi_cie_p(&e))
		return -1;
	if (e.cie.augmentation[0] != 'z')
		return e.cie.augmentation[0] ? -1 : 0; /* data of a size unknown */
	pos = (size_t)(e.cie.augmentation_data - base);
	end = pos + e.cie.augmentation_data_size;
	for (const char *a = e.cie.augmentation + 1; *a; a++) {
		if (*a == 'R')
			return pos < end ? base[pos] : -1;
		if (*a == 'L') {
			pos++;
		} else if (*a == 'P') {
			/* The personality routine: its encoding, then its
			 * address, which only the size of matters here. */
			uint8_t enc = pos < end ? base[pos++] : PE_OMIT;

			if (read_encoded(base, end, &pos, (uint8_t)(enc & ~PE_INDIRECT), s->addr,
					 &ignored) < 0)
				return -1;
		}
	}
	return 0;
}

/* The code an FDE describes.  1 for one to pass over: under a CIE this
 * reader does not take, or covering nothing (the FDE of code the linker
 * discarded, left at 0 or at lld's tombstone, -1). */
static int fde_range(struct cfi_section *s, const Dwarf_FDE *fde, uint64_t *start, uint64_t *end)
{
	const uint8_t *base = s->data->d_buf;
	size_t pos = (size_t)(fde->start - base), len = (size_t)(fde->end - base);
	uint64_t range;

	if (fde->CIE_pointer != s->cie) {
		s->cie = fde->CIE_pointer;
		s->enc = fde_encoding(s, s->cie);
	}
	/* Relative to the FDE's own address or to nothing: the others
	 * (datarel, textrel, indirect) do not describe x86-64 code. */
	if (s->enc < 0 || (s->enc & ~0x1f) != 0)
		return 1;
	if (read_encoded(base, len, &pos, (uint8_t)s->enc, s->addr, start) < 0 ||
	    read_encoded(base, len, &pos, (uint8_t)(s->enc & 0x0f), s->addr, &range) < 0)
		return 1;
	*end = *start + range;
	return *start == 0 || *end <= *start;
}

/* Every FDE of a CFI section, read through.  A malformed entry ends the
 * reading: what came before it is kept, what follows goes by frame
 * pointers. */
static int ranges_from_section(struct cfi_section *s, struct fde_list *l)
{
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int ret;

	while (dwarf_next_cfi(s->ident, s->data, s->eh, off, &next, &e) == 0) {
		uint64_t start, end;

		off = next;
		if (dwarf_cfi_cie_p(&e) || fde_range(s, &e.fde, &start, &end) != 0)
			continue;
		if ((ret = add_range(l, start, end, s->source)) < 0)
			return ret;
	}
	return 0;
}

/* Where an object's rules are looked up: .eh_frame's CFI, which libdw
 * reads from the ELF, and .debug_frame's, through a DWARF handle that
 * stays open while the rows are compiled. */
struct sources {
	const unsigned char *ident;
	Dwarf_CFI *eh;
	Dwarf *dwarf;
	Dwarf_CFI *debug; /* the handle's */
};

/* .eh_frame's FDEs: by .eh_frame_hdr's list or, where there is none
 * (linked without --eh-frame-hdr) or one this reader does not take, by
 * reading .eh_frame through. */
static int ranges_from_eh(Elf *elf, struct sources *src, struct fde_list *l)
{
	struct cfi_section s = { .ident = src->ident,
				 .eh = true,
				 .source = TR_CFI_FROM_EH_FRAME,
				 .cie = (Dwarf_Off)-1 };
	GElf_Shdr shdr;
	Elf_Scn *scn;
	int ret;

	src->eh = dwarf_getcfi_elf(elf);
	if (!src->eh)
		return 0;
	ret = ranges_from_hdr(elf, l);
	if (ret == 0 || ret == -ENOMEM)
		return ret;
	l->n = 0;
	scn = section_named(elf, ".eh_frame", &shdr);
	if (!scn || !(s.data = section_bytes(scn, ".eh_frame")))
		return 0;
	s.addr = shdr.sh_addr;
	return ranges_from_section(&s, l);
}

/* .debug_frame's FDEs: code built without unwind tables, Go's.  An
 * executable has .eh_frame beside it for the C library's start code. */
static int ranges_from_debug(Elf *elf, struct sources *src, struct fde_list *l)
{
	struct cfi_section s = { .ident = src->ident,
				 .source = TR_CFI_FROM_DEBUG_FRAME,
				 .cie = (Dwarf_Off)-1 };
	const char *name = ".debug_frame";
	GElf_Shdr shdr;
	Elf_Scn *scn = section_named(elf, name, &shdr);

	if (!scn)
		scn = section_named(elf, name = ".zdebug_frame", &shdr);
	if (!scn)
		return 0;
	/* Where libdw cannot read the DWARF, .eh_frame's FDEs go alone. */
	src->dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!src->dwarf || !(src->debug = dwarf_getcfi(src->dwarf)))
		return 0;
	/* After dwarf_begin_elf, which inflates the sections it reads:
	 * inflated twice, GNU's format would fail it. */
	s.data = section_bytes(scn, name);
	if (!s.data)
		return 0;
	return ranges_from_section(&s, l);
}

/* By start; where both sections describe the same code, .eh_frame's FDE
 * first: its rules are the ones the program's own unwinder follows. */
static int by_start(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->source == TR_CFI_FROM_DEBUG_FRAME) - (y->source == TR_CFI_FROM_DEBUG_FRAME);
}

/* The rows of every FDE in the order of their addresses, so that the
 * table comes out sorted; of FDEs that start at the same address, the
 * first. */
static int compile_ranges(struct builder *b, struct fde_list *l, const struct sources *src,
			  struct tr_cfi_stats *st)
{
	int ret;

	qsort(l->v, l->n, sizeof(*l->v), by_start);
	for (size_t i = 0, j; i < l->n; i = j) {
		const struct fde_range *r = &l->v[i];
		Dwarf_CFI *cfi = r->source == TR_CFI_FROM_DEBUG_FRAME ? src->debug : src->eh;

		for (j = i + 1; j < l->n && l->v[j].start == r->start; j++)
			;
		ret = add_fde(b, cfi, r, j < l->n ? l->v[j].start : UINT64_MAX, st);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static void take_rows(struct tr_cfi_table *out, struct builder *b)
{
	out->rows = b->rows;
	out->n = b->n;
	out->stats.rows = b->n;
	for (size_t i = 0; i < b->n; i++)
		out->stats.fallbacks += b->rows[i].kind == TR_CFI_FALLBACK;
	b->rows = NULL;
}

static int read_ranges(Elf *elf, struct sources *src, struct fde_list *l)
{
	GElf_Ehdr ehdr;
	int ret;

	if (!gelf_getehdr(elf, &ehdr) ||
	    !(src->ident = (const unsigned char *)elf_getident(elf, NULL)))
		return -EINVAL;
	if (ehdr.e_machine != EM_X86_64 || ehdr.e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOTSUP;
	if ((ret = ranges_from_eh(elf, src, l)) < 0 || (ret = ranges_from_debug(elf, src, l)) < 0)
		return ret;
	return l->n ? 0 : -ENOENT;
}

int tr_cfi_build(int fd, struct tr_cfi_table *out)
{
	struct builder b = { 0 };
	struct fde_list l = { 0 };
	struct sources src = { 0 };
	Elf *elf;
	int ret;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EINVAL;
	ret = read_ranges(elf, &src, &l);
	if (ret == 0)
		ret = compile_ranges(&b, &l, &src, &out->stats);
	if (ret == 0)
		take_rows(out, &b);
	free(b.rows);
	free(l.v);
	if (src.eh)
		dwarf_cfi_end(src.eh);
	if (src.dwarf)
		dwarf_end(src.dwarf);
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
