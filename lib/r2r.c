/* ReadyToRun method names from a PE image (see r2r.h).
 *
 * Formats, as read from dotnet/runtime: docs/design/coreclr/botr/
 * readytorun-format.md and src/coreclr/inc/readytorun.h (header, sections,
 * method signature flags), the NativeFormat readers of
 * ILCompiler.Reflection.ReadyToRun (NativeArray, NativeHashtable, the
 * variable-length integers; ReadyToRunReader for composite images, their
 * component assemblies and module override indexes), ECMA-335 partition II
 * §24 (metadata root, streams, table layout) and §23.2 (signatures), and
 * Microsoft's "ARM64 exception handling" (.pdata and .xdata records) for
 * arm64 code lengths. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "r2r.h"
#include "vec.h"

#define RTR_SIGNATURE 0x00525452u /* "RTR" */
#define RTR_FLAG_COMPONENT 0x20u  /* code lives in the composite image */
#define SEC_RUNTIME_FUNCTIONS 102
#define SEC_METHODDEF_ENTRY_POINTS 103
#define SEC_INSTANCE_ENTRY_POINTS 109
#define SEC_COMPONENT_ASSEMBLIES 115
#define SEC_MANIFEST_MVIDS 118
/* Components of one composite image read at most (the whole framework
 * and an app: a few hundred). */
#define COMPONENTS_MAX 4096

/* Machines (IMAGE_FILE_MACHINE_*) whose code is read.  Their
 * RUNTIME_FUNCTIONs differ: x64's (BeginAddress, EndAddress, UnwindData)
 * says where the code ends, arm64's (BeginAddress, UnwindData) leaves the
 * length to the unwind data (rf_range). */
#define MACHINE_X64 0x8664
#define MACHINE_ARM64 0xaa64

/* Method signature flags (READYTORUN_METHOD_SIG_*) that change how the
 * rest of an instance entry is laid out. */
#define SIG_METHOD_INSTANTIATION 0x04u
#define SIG_SLOT_INSTEAD_OF_TOKEN 0x08u
#define SIG_MEMBERREF_TOKEN 0x10u
#define SIG_CONSTRAINED 0x20u
#define SIG_OWNER_TYPE 0x40u
#define SIG_UPDATE_CONTEXT 0x80u

/* Names are cut at TR_R2R_NAME_MAX; all names together may not exceed
 * NAMES_MAX, so that what an image makes us allocate has a bound of its
 * own. */
#define NAME_MAX_LEN TR_R2R_NAME_MAX
#define NAMES_MAX (64u << 20)
/* Nesting of types (enclosing classes, generic arguments) followed. */
#define DEPTH_MAX 32
/* Type arguments of one generic instantiation or method. */
#define ARGS_MAX 256
/* Types parsed for one name (the largest in the framework: a few dozen). */
#define SIG_STEPS_MAX 4096

/* Table numbers (ECMA-335 II.22). */
enum {
	T_MODULE = 0x00, T_TYPEREF = 0x01, T_TYPEDEF = 0x02, T_FIELD = 0x04, T_METHODPTR = 0x05,
	T_METHODDEF = 0x06, T_PARAM = 0x08, T_MEMBERREF = 0x0a, T_MODULEREF = 0x1a,
	T_TYPESPEC = 0x1b, T_NESTEDCLASS = 0x29, N_TABLES = 0x2d
};

/* Column kinds: a table number (< 64), a coded index (CI + kind) or fixed
 * widths and heap indexes. */
enum { CI = 64, C2 = 100, C4, CS, CG, CB, CEND = 0 };
enum {
	CI_TYPEDEFORREF, CI_HASCONSTANT, CI_HASCUSTOMATTR, CI_HASFIELDMARSHAL, CI_HASDECLSEC,
	CI_MEMBERREFPARENT, CI_HASSEMANTICS, CI_METHODDEFORREF, CI_MEMBERFORWARDED,
	CI_IMPLEMENTATION, CI_CUSTOMATTRTYPE, CI_RESOLUTIONSCOPE, CI_TYPEORMETHODDEF, N_CI
};
#define X 0xff /* a coded index's unused tag */
static const struct {
	uint8_t bits, n, tab[22];
} coded[N_CI] = {
	[CI_TYPEDEFORREF] = { 2, 3, { 0x02, 0x01, 0x1b } },
	[CI_HASCONSTANT] = { 2, 3, { 0x04, 0x08, 0x17 } },
	[CI_HASCUSTOMATTR] = { 5, 22, { 0x06, 0x04, 0x01, 0x02, 0x08, 0x09, 0x0a, 0x00, 0x0e, 0x17, 0x14,
				       0x11, 0x1a, 0x1b, 0x20, 0x23, 0x26, 0x27, 0x28, 0x2a, 0x2c, 0x2b } },
	[CI_HASFIELDMARSHAL] = { 1, 2, { 0x04, 0x08 } },
	[CI_HASDECLSEC] = { 2, 3, { 0x02, 0x06, 0x20 } },
	[CI_MEMBERREFPARENT] = { 3, 5, { 0x02, 0x01, 0x1a, 0x06, 0x1b } },
	[CI_HASSEMANTICS] = { 1, 2, { 0x14, 0x17 } },
	[CI_METHODDEFORREF] = { 1, 2, { 0x06, 0x0a } },
	[CI_MEMBERFORWARDED] = { 1, 2, { 0x04, 0x06 } },
	[CI_IMPLEMENTATION] = { 2, 3, { 0x26, 0x23, 0x27 } },
	[CI_CUSTOMATTRTYPE] = { 3, 5, { X, X, 0x06, 0x0a, X } },
	[CI_RESOLUTIONSCOPE] = { 2, 4, { 0x00, 0x1a, 0x23, 0x01 } },
	[CI_TYPEORMETHODDEF] = { 1, 2, { 0x02, 0x06 } },
};
#undef X

/* The columns of every table up to GenericParamConstraint: they are laid
 * out one after another, so finding TypeDef's rows needs the row sizes of
 * every table before it. */
static const uint8_t schema[N_TABLES][10] = {
	[0x00] = { C2, CS, CG, CG, CG },                      /* Module */
	[0x01] = { CI + CI_RESOLUTIONSCOPE, CS, CS },         /* TypeRef */
	[0x02] = { C4, CS, CS, CI + CI_TYPEDEFORREF, 0x04, 0x06 }, /* TypeDef */
	[0x03] = { 0x04 },                                    /* FieldPtr */
	[0x04] = { C2, CS, CB },                              /* Field */
	[0x05] = { 0x06 },                                    /* MethodPtr */
	[0x06] = { C4, C2, C2, CS, CB, 0x08 },                /* MethodDef */
	[0x07] = { 0x08 },                                    /* ParamPtr */
	[0x08] = { C2, C2, CS },                              /* Param */
	[0x09] = { 0x02, CI + CI_TYPEDEFORREF },              /* InterfaceImpl */
	[0x0a] = { CI + CI_MEMBERREFPARENT, CS, CB },         /* MemberRef */
	[0x0b] = { C2, CI + CI_HASCONSTANT, CB },             /* Constant */
	[0x0c] = { CI + CI_HASCUSTOMATTR, CI + CI_CUSTOMATTRTYPE, CB }, /* CustomAttribute */
	[0x0d] = { CI + CI_HASFIELDMARSHAL, CB },             /* FieldMarshal */
	[0x0e] = { C2, CI + CI_HASDECLSEC, CB },              /* DeclSecurity */
	[0x0f] = { C2, C4, 0x02 },                            /* ClassLayout */
	[0x10] = { C4, 0x04 },                                /* FieldLayout */
	[0x11] = { CB },                                      /* StandAloneSig */
	[0x12] = { 0x02, 0x14 },                              /* EventMap */
	[0x13] = { 0x14 },                                    /* EventPtr */
	[0x14] = { C2, CS, CI + CI_TYPEDEFORREF },            /* Event */
	[0x15] = { 0x02, 0x17 },                              /* PropertyMap */
	[0x16] = { 0x17 },                                    /* PropertyPtr */
	[0x17] = { C2, CS, CB },                              /* Property */
	[0x18] = { C2, 0x06, CI + CI_HASSEMANTICS },          /* MethodSemantics */
	[0x19] = { 0x02, CI + CI_METHODDEFORREF, CI + CI_METHODDEFORREF }, /* MethodImpl */
	[0x1a] = { CS },                                      /* ModuleRef */
	[0x1b] = { CB },                                      /* TypeSpec */
	[0x1c] = { C2, CI + CI_MEMBERFORWARDED, CS, 0x1a },   /* ImplMap */
	[0x1d] = { C4, 0x04 },                                /* FieldRVA */
	[0x1e] = { C4, C4 },                                  /* EncLog */
	[0x1f] = { C4 },                                      /* EncMap */
	[0x20] = { C4, C2, C2, C2, C2, C4, CB, CS, CS },      /* Assembly */
	[0x21] = { C4 },                                      /* AssemblyProcessor */
	[0x22] = { C4, C4, C4 },                              /* AssemblyOS */
	[0x23] = { C2, C2, C2, C2, C4, CB, CS, CS, CB },      /* AssemblyRef */
	[0x24] = { C4, 0x23 },                                /* AssemblyRefProcessor */
	[0x25] = { C4, C4, C4, 0x23 },                        /* AssemblyRefOS */
	[0x26] = { C4, CS, CB },                              /* File */
	[0x27] = { C4, C4, CS, CS, CI + CI_IMPLEMENTATION },  /* ExportedType */
	[0x28] = { C4, C4, CS, CI + CI_IMPLEMENTATION },      /* ManifestResource */
	[0x29] = { 0x02, 0x02 },                              /* NestedClass */
	[0x2a] = { C2, C2, CI + CI_TYPEORMETHODDEF, CS },     /* GenericParam */
	[0x2b] = { CI + CI_METHODDEFORREF, CB },              /* MethodSpec */
	[0x2c] = { 0x2a, CI + CI_TYPEDEFORREF },              /* GenericParamConstraint */
};

struct table {
	uint32_t rows, row_size;
	size_t off; /* image offset of row 1 */
	uint8_t col_off[10], col_size[10];
};

/* One module's ECMA-335 metadata: that of the image itself, or in a
 * composite image that of a component assembly (read from its own file). */
struct md {
	const uint8_t *p; /* the metadata root */
	size_t len;
	size_t str_off, blob_off, guid_off;
	uint32_t str_len, blob_len, guid_len;
	struct table t[N_TABLES];
	const char *asm_name; /* the Assembly row's name, for whole names */
	uint8_t *own;         /* a component's metadata bytes, held here */
	int state;            /* components: 0 not read yet, 1 read, -1 unusable */
};

struct ctx {
	const uint8_t *p;
	size_t len;
	char *why;
	size_t why_len;
	struct tr_r2r_section *sec;
	size_t n_sec;
	unsigned flags;            /* TR_R2R_* */
	struct md self;            /* the image's metadata (a composite's: its manifest) */
	/* Composite images: their component assemblies, in the order of the
	 * ComponentAssemblies section. */
	struct md *comp;
	uint32_t n_comp;
	size_t mvids_off;          /* ManifestAssemblyMvids, 0 without */
	uint32_t mvids_size;
	char comp_why[200];        /* why the first component that could not be read was not */
	/* Module override index i names component i - comp_bias: indexes
	 * count the manifest's AssemblyRefs from 1, and since version 6.3
	 * index 1 is the manifest itself (ILCompiler.Reflection.ReadyToRun's
	 * GetAssemblyAtIndex); 0 is the module that refers. */
	uint32_t comp_bias;
	tr_r2r_open_fn open_component;
	void *open_arg;
	uint16_t machine;          /* MACHINE_* */
	size_t rf_size;            /* bytes of one RUNTIME_FUNCTION */
	/* Types parsed for the current name: a TypeSpec may refer to
	 * TypeSpecs, each many times, so depth alone does not bound the work. */
	unsigned sig_steps;
	/* names */
	char *names;
	size_t names_len, names_cap;
};

/* A name being built: cut at NAME_MAX_LEN, never an error. */
struct sb {
	char s[NAME_MAX_LEN + 1];
	size_t n;
};

static int fail(struct ctx *c, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct ctx *c, int err, const char *fmt, ...)
{
	va_list ap;

	/* The first reason is the one that matters: later ones follow from it. */
	if (c->why && c->why_len && !c->why[0]) {
		va_start(ap, fmt);
		vsnprintf(c->why, c->why_len, fmt, ap);
		va_end(ap);
	}
	return err;
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void sb_add(struct sb *b, const char *s, size_t n)
{
	if (n > NAME_MAX_LEN - b->n)
		n = NAME_MAX_LEN - b->n;
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}

static void sb_str(struct sb *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/* The file bytes of [rva, rva + size): 0 and their offset, or -EINVAL. */
static int rva_span(struct ctx *c, uint32_t rva, uint32_t size, size_t *off, const char *what)
{
	for (size_t i = 0; i < c->n_sec; i++) {
		const struct tr_r2r_section *s = &c->sec[i];

		if (rva >= s->rva && rva - s->rva < s->file_size &&
		    (uint64_t)(rva - s->rva) + size <= s->file_size) {
			*off = (size_t)s->file_off + (rva - s->rva);
			return 0;
		}
	}
	return fail(c, -EINVAL, "%s (RVA 0x%x, %u bytes) is not in the file bytes of any section", what,
		    rva, size);
}

static const struct md *module_at(struct ctx *c, const struct md *from, uint32_t idx);

/* ---- PE ---- */

/* The machine an image's code is for, less the per-OS value crossgen2
 * XORs it with for images not meant for Windows (readytorun-format.md,
 * "Machine"); 0 for one whose code is not read. */
static uint16_t machine_of(uint16_t m)
{
	static const uint16_t os_xor[] = { 0, 0x7B79 /* Linux */, 0x4644 /* Apple */,
					   0xADC4 /* FreeBSD */, 0x1993 /* NetBSD */, 0x1992 /* SunOS */ };

	for (size_t i = 0; i < sizeof(os_xor) / sizeof(os_xor[0]); i++)
		if ((uint16_t)(m ^ os_xor[i]) == MACHINE_X64 || (uint16_t)(m ^ os_xor[i]) == MACHINE_ARM64)
			return (uint16_t)(m ^ os_xor[i]);
	return 0;
}

/* The section table at file offset sec: the sections with bytes in the
 * file go to c->sec. */
static int read_sections(struct ctx *c, uint32_t sec, uint16_t n_sec)
{
	if (n_sec == 0 || (uint64_t)n_sec * 40 > c->len - sec)
		return fail(c, -EINVAL, "section table (%u sections) out of the file", n_sec);
	c->sec = calloc(n_sec, sizeof(*c->sec));
	if (!c->sec)
		return fail(c, -ENOMEM, "out of memory");
	for (uint16_t i = 0; i < n_sec; i++) {
		const uint8_t *s = c->p + sec + 40 * (size_t)i;
		struct tr_r2r_section *d = &c->sec[c->n_sec];

		d->vsize = rd32(s + 8);
		d->rva = rd32(s + 12);
		d->file_size = rd32(s + 16);
		d->file_off = rd32(s + 20);
		/* Bytes beyond the section's virtual size are file alignment
		 * padding, not the section's. */
		if (d->vsize && d->file_size > d->vsize)
			d->file_size = d->vsize;
		if (d->file_off > c->len || d->file_size > c->len - d->file_off)
			return fail(
				c, -EINVAL,
				"section %u (file offset 0x%x, %u bytes) beyond the end of the file",
				i, d->file_off, d->file_size);
		if (d->file_size)
			c->n_sec++;
	}
	return 0;
}

/* Sections and the CLI header's directory entry. */
static int read_pe(struct ctx *c, uint32_t *cli_rva, uint32_t *cli_size, uint16_t *machine_out)
{
	const uint8_t *p = c->p;
	uint32_t pe, opt, dd, n_dd;
	uint16_t machine, n_sec, opt_size, magic;
	int rc;

	if (c->len < 0x40 || p[0] != 'M' || p[1] != 'Z')
		return fail(c, -ENOEXEC, "not a PE image (no MZ header)");
	pe = rd32(p + 0x3c);
	if (pe > c->len || c->len - pe < 24 || memcmp(p + pe, "PE\0\0", 4) != 0)
		return fail(c, -ENOEXEC, "not a PE image (no PE signature)");
	machine = rd16(p + pe + 4);
	n_sec = rd16(p + pe + 6);
	opt_size = rd16(p + pe + 20);
	opt = pe + 24;
	if (c->len - opt < opt_size || opt_size < 2)
		return fail(c, -EINVAL, "the PE optional header (%u bytes) is cut short", opt_size);
	magic = rd16(p + opt);
	if (magic == 0x20b) { /* PE32+ */
		if (opt_size < 112)
			return fail(c, -EINVAL, "PE32+ optional header of %u bytes", opt_size);
		n_dd = rd32(p + opt + 108);
		dd = opt + 112;
	} else if (magic == 0x10b) { /* PE32: IL-only assemblies are often this */
		if (opt_size < 96)
			return fail(c, -EINVAL, "PE32 optional header of %u bytes", opt_size);
		n_dd = rd32(p + opt + 92);
		dd = opt + 96;
	} else {
		return fail(c, -EINVAL, "unknown PE optional header magic 0x%x", magic);
	}
	if (n_dd < 15 || (uint64_t)n_dd * 8 > (uint64_t)(opt + opt_size - dd))
		return fail(c, -ENOEXEC, "no CLI header directory entry: not a .NET assembly");
	*cli_rva = rd32(p + dd + 14 * 8);
	*cli_size = rd32(p + dd + 14 * 8 + 4);
	if (!*cli_rva)
		return fail(c, -ENOEXEC, "no CLI header: not a .NET assembly");

	rc = read_sections(c, opt + opt_size, n_sec);
	if (!rc)
		*machine_out = machine;
	return rc;
}

/* ---- metadata (ECMA-335 II.24) ---- */

/* Bytes of a column of the given kind (the schema's) in module m, whose
 * row counts are known: heap indexes are 4 bytes where the HeapSizes bits
 * say so, table and coded indexes where the rows they may name need it. */
static unsigned column_width(const struct md *m, unsigned kind, uint8_t heap_sizes)
{
	uint32_t max = 0;

	if (kind == C2)
		return 2;
	if (kind == C4)
		return 4;
	if (kind == CS)
		return heap_sizes & 1 ? 4 : 2;
	if (kind == CG)
		return heap_sizes & 2 ? 4 : 2;
	if (kind == CB)
		return heap_sizes & 4 ? 4 : 2;
	if (kind < CI)
		return m->t[kind].rows > 0xffff ? 4 : 2;
	for (unsigned j = 0; j < coded[kind - CI].n; j++) {
		uint8_t tab = coded[kind - CI].tab[j];

		if (tab < N_TABLES && m->t[tab].rows > max)
			max = m->t[tab].rows;
	}
	return max < (1u << (16 - coded[kind - CI].bits)) ? 2 : 4;
}

/* The row count of every table present (the Valid bit vector's), *pos
 * past them. */
static int read_row_counts(struct ctx *c, struct md *m, uint64_t valid, size_t *pos, size_t end)
{
	for (unsigned i = 0; i < 64; i++) {
		uint32_t rows;

		if (!(valid >> i & 1))
			continue;
		if (end - *pos < 4)
			return fail(c, -EINVAL, "metadata row counts cut short");
		rows = rd32(m->p + *pos);
		*pos += 4;
		if (i < N_TABLES)
			m->t[i].rows = rows;
		else if (rows && i > 0x37)
			return fail(c, -EINVAL, "metadata table 0x%x is not an ECMA-335 table", i);
	}
	return 0;
}

static int read_tables(struct ctx *c, struct md *m, size_t off, uint32_t size)
{
	const uint8_t *p = m->p + off;
	uint8_t heap_sizes;
	uint64_t valid;
	size_t pos, end = off + size;
	int rc;

	if (size < 24)
		return fail(c, -EINVAL, "metadata tables stream of %u bytes", size);
	heap_sizes = p[6];
	valid = (uint64_t)rd32(p + 8) | (uint64_t)rd32(p + 12) << 32;
	pos = off + 24;
	rc = read_row_counts(c, m, valid, &pos, end);
	if (rc)
		return rc;
	/* An "extra data" word written by edit-and-continue metadata (#-). */
	if (heap_sizes & 0x40) {
		if (end - pos < 4)
			return fail(c, -EINVAL, "metadata tables header cut short");
		pos += 4;
	}
	for (unsigned i = 0; i < N_TABLES; i++) {
		struct table *t = &m->t[i];
		unsigned w = 0;

		for (unsigned k = 0; k < 10 && schema[i][k] != CEND; k++) {
			unsigned cw = column_width(m, schema[i][k], heap_sizes);

			t->col_off[k] = (uint8_t)w;
			t->col_size[k] = (uint8_t)cw;
			w += cw;
		}
		t->row_size = w;
		t->off = pos;
		if ((uint64_t)t->rows * w > end - pos)
			return fail(c, -EINVAL, "metadata table 0x%x (%u rows of %u bytes) beyond its stream", i,
				    t->rows, w);
		pos += (size_t)t->rows * w;
	}
	return 0;
}

/* Column col of row rid (1-based) of table tab; rid checked by callers. */
static uint32_t col(const struct md *m, unsigned tab, uint32_t rid, unsigned k)
{
	const struct table *t = &m->t[tab];
	const uint8_t *q = m->p + t->off + (size_t)(rid - 1) * t->row_size + t->col_off[k];

	return t->col_size[k] == 2 ? rd16(q) : rd32(q);
}

/* The metadata root at p, of size bytes (checked by the caller to lie in
 * the bytes read): its streams, then its tables. */
static int read_metadata(struct ctx *c, struct md *m, const uint8_t *p, uint32_t size)
{
	size_t pos, tables = 0;
	uint32_t ver_len, tables_size = 0;
	uint16_t n_streams;
	int have_str = 0, have_tables = 0;

	m->p = p;
	m->len = size;
	if (size < 16 || rd32(p) != 0x424A5342)
		return fail(c, -EINVAL, "no metadata root signature (BSJB)");
	ver_len = rd32(p + 12);
	if (ver_len > size - 16 || size - 16 - ver_len < 4)
		return fail(c, -EINVAL, "metadata version string of %u bytes", ver_len);
	pos = 16 + ((ver_len + 3u) & ~3u);
	if (pos + 4 > size)
		return fail(c, -EINVAL, "metadata root cut short");
	n_streams = rd16(p + pos + 2);
	pos += 4;
	for (unsigned i = 0; i < n_streams; i++) {
		uint32_t s_off, s_size;
		const char *name = "";
		size_t name_max, name_len;

		if (size - pos < 9)
			return fail(c, -EINVAL, "metadata stream header %u cut short", i);
		s_off = rd32(p + pos);
		s_size = rd32(p + pos + 4);
		name = (const char *)p + pos + 8;
		name_max = size - pos - 8 < 32 ? size - pos - 8 : 32;
		name_len = strnlen(name, name_max);
		if (name_len == name_max)
			return fail(c, -EINVAL, "metadata stream name %u not terminated", i);
		if (8 + ((name_len + 4) & ~(size_t)3) > size - pos)
			return fail(c, -EINVAL, "metadata stream header %u cut short", i);
		pos += 8 + ((name_len + 4) & ~(size_t)3);
		if (s_off > size || s_size > size - s_off)
			return fail(c, -EINVAL, "metadata stream %.32s beyond the metadata", name);
		if (strcmp(name, "#~") == 0 || strcmp(name, "#-") == 0) {
			tables = s_off;
			tables_size = s_size;
			have_tables = 1;
		} else if (strcmp(name, "#Strings") == 0) {
			m->str_off = s_off;
			m->str_len = s_size;
			have_str = 1;
		} else if (strcmp(name, "#Blob") == 0) {
			m->blob_off = s_off;
			m->blob_len = s_size;
		} else if (strcmp(name, "#GUID") == 0) {
			m->guid_off = s_off;
			m->guid_len = s_size;
		}
	}
	if (!have_tables || !have_str)
		return fail(c, -EINVAL, "metadata without a tables stream or #Strings heap");
	return read_tables(c, m, tables, tables_size);
}

static int get_str(struct ctx *c, const struct md *m, uint32_t idx, const char **s)
{
	const char *h = (const char *)m->p + m->str_off;

	if (idx >= m->str_len || !memchr(h + idx, 0, m->str_len - idx))
		return fail(c, -EINVAL, "string index 0x%x out of the #Strings heap", idx);
	*s = h + idx;
	return 0;
}

static int check_rid(struct ctx *c, const struct md *m, unsigned tab, uint32_t rid)
{
	if (rid == 0 || rid > m->t[tab].rows)
		return fail(c, -EINVAL, "row %u of metadata table 0x%x does not exist", rid, tab);
	return 0;
}

/* The enclosing type of a nested TypeDef, 0 if none: NestedClass is
 * sorted by its first column (ECMA-335 II.22), a binary search. */
static uint32_t enclosing(const struct md *m, uint32_t rid)
{
	uint32_t lo = 1, hi = m->t[T_NESTEDCLASS].rows;

	while (lo <= hi) {
		uint32_t mid = lo + (hi - lo) / 2, v = col(m, T_NESTEDCLASS, mid, 0);

		if (v == rid)
			return col(m, T_NESTEDCLASS, mid, 1);
		if (v < rid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

static int ns_name(struct ctx *c, const struct md *m, struct sb *b, uint32_t ns_idx,
		   uint32_t name_idx)
{
	const char *ns = "", *name = "";
	int rc = get_str(c, m, ns_idx, &ns);

	if (!rc)
		rc = get_str(c, m, name_idx, &name);
	if (rc)
		return rc;
	if (*ns) {
		sb_str(b, ns);
		sb_add(b, ".", 1);
	}
	sb_str(b, name);
	return 0;
}

/* Two ways of writing types, both the runtime's: the reflection names of
 * the type that owns a method (System.Int32, Outer+Inner,
 * List`1[System.Char]) and the IL-assembler names of a signature's types
 * (int32, valuetype Outer/Inner, class [System.Runtime]System.Type,
 * class List`1<char>) in the whole names of TR_R2R_SIGNATURES. */
enum style { REFLECTION, IL };

static int typedef_name(struct ctx *c, const struct md *m, struct sb *b, uint32_t rid,
			unsigned depth, enum style st)
{
	uint32_t outer;
	int rc = check_rid(c, m, T_TYPEDEF, rid);

	if (rc)
		return rc;
	if (depth > DEPTH_MAX)
		return fail(c, -EINVAL, "types nested deeper than %d (a loop?)", DEPTH_MAX);
	outer = enclosing(m, rid);
	if (outer) {
		const char *name = "";

		rc = typedef_name(c, m, b, outer, depth + 1, st);
		if (!rc)
			rc = get_str(c, m, col(m, T_TYPEDEF, rid, 1), &name);
		if (rc)
			return rc;
		sb_add(b, st == IL ? "/" : "+", 1);
		sb_str(b, name);
		return 0;
	}
	return ns_name(c, m, b, col(m, T_TYPEDEF, rid, 2), col(m, T_TYPEDEF, rid, 1));
}

/* In IL style a type of another assembly says which: [System.Runtime]. */
static int typeref_name(struct ctx *c, const struct md *m, struct sb *b, uint32_t rid,
			unsigned depth, enum style st)
{
	uint32_t scope;
	int rc = check_rid(c, m, T_TYPEREF, rid);

	if (rc)
		return rc;
	if (depth > DEPTH_MAX)
		return fail(c, -EINVAL, "type references nested deeper than %d (a loop?)", DEPTH_MAX);
	scope = col(m, T_TYPEREF, rid, 0);
	if ((scope & 3) == 3 && scope >> 2) { /* ResolutionScope TypeRef: nested */
		const char *name = "";

		rc = typeref_name(c, m, b, scope >> 2, depth + 1, st);
		if (!rc)
			rc = get_str(c, m, col(m, T_TYPEREF, rid, 1), &name);
		if (rc)
			return rc;
		sb_add(b, st == IL ? "/" : "+", 1);
		sb_str(b, name);
		return 0;
	}
	if (st == IL && (scope & 3) == 2) { /* AssemblyRef */
		const char *asm_name = "";

		rc = check_rid(c, m, 0x23, scope >> 2);
		if (!rc)
			rc = get_str(c, m, col(m, 0x23, scope >> 2, 6), &asm_name);
		if (rc)
			return rc;
		sb_add(b, "[", 1);
		sb_str(b, asm_name);
		sb_add(b, "]", 1);
	}
	return ns_name(c, m, b, col(m, T_TYPEREF, rid, 2), col(m, T_TYPEREF, rid, 1));
}

/* ---- signatures (ECMA-335 II.23.2, with ReadyToRun's additions) ---- */

struct sig {
	const uint8_t *p, *end;
};

static int sig_u(struct ctx *c, struct sig *s, uint32_t *v)
{
	const uint8_t *p = s->p;

	if (p >= s->end)
		goto cut;
	if (!(p[0] & 0x80)) {
		*v = p[0];
		s->p = p + 1;
	} else if ((p[0] & 0xc0) == 0x80) {
		if (s->end - p < 2)
			goto cut;
		*v = (uint32_t)(p[0] & 0x3f) << 8 | p[1];
		s->p = p + 2;
	} else if ((p[0] & 0xe0) == 0xc0) {
		if (s->end - p < 4)
			goto cut;
		*v = (uint32_t)(p[0] & 0x1f) << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
		s->p = p + 4;
	} else {
		return fail(c, -EINVAL, "bad compressed integer 0x%02x in a signature", p[0]);
	}
	return 0;
cut:
	return fail(c, -EINVAL, "signature cut short");
}

/* A blob of the #Blob heap as a signature to read. */
static int blob_sig(struct ctx *c, const struct md *m, uint32_t blob, struct sig *sp)
{
	uint32_t len;
	int rc;

	if (blob >= m->blob_len)
		return fail(c, -EINVAL, "blob index 0x%x out of the #Blob heap", blob);
	sp->p = m->p + m->blob_off + blob;
	sp->end = m->p + m->blob_off + m->blob_len;
	rc = sig_u(c, sp, &len);
	if (rc)
		return rc;
	if (len > (size_t)(sp->end - sp->p))
		return fail(c, -EINVAL, "blob of %u bytes out of the #Blob heap", len);
	sp->end = sp->p + len;
	return 0;
}

static int sig_type(struct ctx *c, struct sig *s, struct sb *b, const struct md *m, unsigned depth,
		    enum style st);

/* A TypeDefOrRefOrSpec token of module m; NULL: of a module whose
 * metadata we do not have (another image's, named by a module override
 * outside a composite image), written "?". */
static int token_type(struct ctx *c, uint32_t tok, struct sb *b, const struct md *m, unsigned depth,
		      enum style st)
{
	uint32_t rid = tok >> 2;

	if (!m) {
		sb_add(b, "?", 1);
		return 0;
	}
	switch (tok & 3) {
	case 0:
		return typedef_name(c, m, b, rid, 0, st);
	case 1:
		return typeref_name(c, m, b, rid, 0, st);
	case 2: {
		struct sig sp;
		int rc = check_rid(c, m, T_TYPESPEC, rid);

		if (!rc)
			rc = blob_sig(c, m, col(m, T_TYPESPEC, rid, 0), &sp);
		return rc ? rc : sig_type(c, &sp, b, m, depth + 1, st);
	}
	default:
		return fail(c, -EINVAL, "bad TypeDefOrRef token tag in a signature");
	}
}

/* The return type and parameters of a method signature (after its
 * calling convention and generic parameter count), written in IL style
 * as "RET [ASSEMBLY] NAME(P1,P2)", or "RET NAME(P1,P2)" without an
 * assembly. */
static int sig_method_rest(struct ctx *c, const struct md *m, struct sig *s, struct sb *b,
			   const char *assembly, const char *name, unsigned depth)
{
	uint32_t n;
	int rc = sig_u(c, s, &n);

	if (rc)
		return rc;
	if (n > 0xffff)
		return fail(c, -EINVAL, "method signature with %u parameters", n);
	rc = sig_type(c, s, b, m, depth + 1, IL);
	if (rc)
		return rc;
	sb_add(b, " ", 1);
	if (assembly) {
		sb_add(b, "[", 1);
		sb_str(b, assembly);
		sb_add(b, "] ", 2);
	}
	sb_str(b, name);
	sb_add(b, "(", 1);
	for (uint32_t i = 0; i < n && !rc; i++) {
		if (i)
			sb_add(b, ",", 1);
		if (s->p < s->end && *s->p == 0x41) { /* SENTINEL: the varargs follow */
			s->p++;
			sb_str(b, "...,");
		}
		rc = sig_type(c, s, b, m, depth + 1, IL);
	}
	sb_add(b, ")", 1);
	return rc;
}

/* A function pointer: "method unmanaged RET *(PARAMS)" in IL style. */
static int sig_fnptr(struct ctx *c, const struct md *m, struct sig *s, struct sb *b, unsigned depth)
{
	static const char *const conv_name[] = { "", "unmanaged cdecl ", "unmanaged stdcall ",
						 "unmanaged thiscall ", "unmanaged fastcall ",
						 "vararg ", "", "", "", "unmanaged " };
	uint8_t conv;
	uint32_t n;
	int rc;

	if (s->p >= s->end)
		return fail(c, -EINVAL, "signature cut short");
	conv = *s->p++;
	sb_str(b, "method ");
	if (conv & 0x20)
		sb_str(b, "instance ");
	if (conv & 0x10) { /* generic: its parameter count */
		rc = sig_u(c, s, &n);
		if (rc)
			return rc;
	}
	if ((conv & 0xf) < sizeof(conv_name) / sizeof(conv_name[0]))
		sb_str(b, conv_name[conv & 0xf]);
	return sig_method_rest(c, m, s, b, NULL, "*", depth);
}

/* The element types that stand for a type of their own: their names in
 * REFLECTION and IL style. */
static const char *const prim_name[][2] = {
	[0x01] = { "System.Void", "void" },
	[0x02] = { "System.Boolean", "bool" },
	[0x03] = { "System.Char", "char" },
	[0x04] = { "System.SByte", "int8" },
	[0x05] = { "System.Byte", "uint8" },
	[0x06] = { "System.Int16", "int16" },
	[0x07] = { "System.UInt16", "uint16" },
	[0x08] = { "System.Int32", "int32" },
	[0x09] = { "System.UInt32", "uint32" },
	[0x0a] = { "System.Int64", "int64" },
	[0x0b] = { "System.UInt64", "uint64" },
	[0x0c] = { "System.Single", "float32" },
	[0x0d] = { "System.Double", "float64" },
	[0x0e] = { "System.String", "string" },
	[0x16] = { "System.TypedReference", "typedref" },
	[0x18] = { "System.IntPtr", "native int" },
	[0x19] = { "System.UIntPtr", "native uint" },
	[0x1c] = { "System.Object", "object" },
};

/* PTR, BYREF, SZARRAY, PINNED and the like: the type that follows, then
 * suffix (none: the type alone). */
static int sig_wrapped(struct ctx *c, struct sig *s, struct sb *b, const struct md *m,
		       unsigned depth, enum style st, const char *suffix)
{
	int rc = sig_type(c, s, b, m, depth + 1, st);

	if (!rc && suffix)
		sb_str(b, suffix);
	return rc;
}

/* VALUETYPE and CLASS (et): a TypeDefOrRefOrSpec token. */
static int sig_class(struct ctx *c, struct sig *s, struct sb *b, const struct md *m, unsigned depth,
		     enum style st, uint8_t et)
{
	uint32_t v;
	int rc = sig_u(c, s, &v);

	if (rc)
		return rc;
	if (st == IL)
		sb_str(b, et == 0x11 ? "valuetype " : "class ");
	return token_type(c, v, b, m, depth, st);
}

/* VAR and MVAR (et): a generic parameter's number, "!0" or "!!0". */
static int sig_var(struct ctx *c, struct sig *s, struct sb *b, uint8_t et)
{
	uint32_t v;
	int rc = sig_u(c, s, &v);

	if (!rc) {
		char num[16];

		snprintf(num, sizeof(num), "%s%u", et == 0x13 ? "!" : "!!", v);
		sb_str(b, num);
	}
	return rc;
}

/* ARRAY: type rank nsizes sizes... nbounds bounds..., written "type[,]":
 * the sizes and bounds are not. */
static int sig_array(struct ctx *c, struct sig *s, struct sb *b, const struct md *m, unsigned depth,
		     enum style st)
{
	uint32_t v, n;
	int rc = sig_type(c, s, b, m, depth + 1, st);

	if (!rc)
		rc = sig_u(c, s, &v);
	if (rc)
		return rc;
	if (v > 32)
		return fail(c, -EINVAL, "array of rank %u", v);
	sb_add(b, "[", 1);
	for (uint32_t i = 1; i < v; i++)
		sb_add(b, ",", 1);
	sb_add(b, "]", 1);
	for (int pass = 0; pass < 2; pass++) {
		rc = sig_u(c, s, &n);
		if (rc)
			return rc;
		if (n > 32)
			return fail(c, -EINVAL, "array with %u bounds", n);
		/* the signed lower bounds read as unsigned: skipped */
		for (uint32_t i = 0; i < n && !rc; i++)
			rc = sig_u(c, s, &v);
		if (rc)
			return rc;
	}
	return 0;
}

/* GENERICINST (CLASS|VALUETYPE) token count args. */
static int sig_generic_inst(struct ctx *c, struct sig *s, struct sb *b, const struct md *m,
			    unsigned depth, enum style st)
{
	uint32_t v, n;
	int rc;

	if (s->p >= s->end)
		return fail(c, -EINVAL, "signature cut short");
	if (*s->p == 0x3f || *s->p == 0x3e || *s->p == 0x3d) {
		rc = sig_type(c, s, b, m, depth + 1, st); /* R2R: a module-qualified type */
	} else {
		if (st == IL)
			sb_str(b, *s->p == 0x11 ? "valuetype " : "class ");
		s->p++;
		rc = sig_u(c, s, &v);
		if (!rc)
			rc = token_type(c, v, b, m, depth, st);
	}
	if (!rc)
		rc = sig_u(c, s, &n);
	if (rc)
		return rc;
	if (n == 0 || n > ARGS_MAX)
		return fail(c, -EINVAL, "generic instantiation with %u arguments", n);
	sb_add(b, st == IL ? "<" : "[", 1);
	for (uint32_t i = 0; i < n && !rc; i++) {
		if (i)
			sb_add(b, ",", 1);
		rc = sig_type(c, s, b, m, depth + 1, st);
	}
	sb_add(b, st == IL ? ">" : "]", 1);
	return rc;
}

/* FNPTR: written out in IL style; in a reflection name "?", the pointer
 * parsed past in a buffer of its own. */
static int sig_fnptr_any(struct ctx *c, struct sig *s, struct sb *b, const struct md *m,
			 unsigned depth, enum style st)
{
	struct sb *fn = st == IL ? b : NULL;
	int rc;

	if (fn)
		return sig_fnptr(c, m, s, fn, depth);
	fn = malloc(sizeof(*fn));
	if (!fn)
		return fail(c, -ENOMEM, "out of memory");
	fn->n = 0;
	rc = sig_fnptr(c, m, s, fn, depth);
	free(fn);
	if (!rc)
		sb_str(b, "?");
	return rc;
}

/* CMOD_REQD and CMOD_OPT (et): token type, "type modreq(token)". */
static int sig_cmod(struct ctx *c, struct sig *s, struct sb *b, const struct md *m, unsigned depth,
		    enum style st, uint8_t et)
{
	uint32_t v;
	int rc = sig_u(c, s, &v);

	if (!rc)
		rc = sig_type(c, s, b, m, depth + 1, st);
	if (rc || st != IL)
		return rc;
	sb_str(b, et == 0x1f ? " modreq(" : " modopt(");
	rc = token_type(c, v, b, m, depth, st);
	sb_add(b, ")", 1);
	return rc;
}

/* One type of a signature, written in style st (enum style above). */
static int sig_type(struct ctx *c, struct sig *s, struct sb *b, const struct md *m, unsigned depth,
		    enum style st)
{
	uint32_t v;
	uint8_t et;
	int rc;

	if (depth > DEPTH_MAX)
		return fail(c, -EINVAL, "signature nested deeper than %d", DEPTH_MAX);
	if (++c->sig_steps > SIG_STEPS_MAX)
		return fail(c, -EINVAL, "a method signature of more than %d types", SIG_STEPS_MAX);
	if (s->p >= s->end)
		return fail(c, -EINVAL, "signature cut short");
	et = *s->p++;
	if (et < sizeof(prim_name) / sizeof(prim_name[0]) && prim_name[et][0]) {
		sb_str(b, prim_name[et][st]);
		return 0;
	}
	switch (et) {
	case 0x0f: /* PTR */ return sig_wrapped(c, s, b, m, depth, st, "*");
	case 0x10: /* BYREF */ return sig_wrapped(c, s, b, m, depth, st, "&");
	case 0x11: /* VALUETYPE */
	case 0x12: /* CLASS */ return sig_class(c, s, b, m, depth, st, et);
	case 0x13: /* VAR */
	case 0x1e: /* MVAR */ return sig_var(c, s, b, et);
	case 0x14: /* ARRAY */ return sig_array(c, s, b, m, depth, st);
	case 0x15: /* GENERICINST */ return sig_generic_inst(c, s, b, m, depth, st);
	case 0x1b: /* FNPTR */ return sig_fnptr_any(c, s, b, m, depth, st);
	case 0x1d: /* SZARRAY */ return sig_wrapped(c, s, b, m, depth, st, "[]");
	case 0x1f: /* CMOD_REQD */
	case 0x20: /* CMOD_OPT */ return sig_cmod(c, s, b, m, depth, st, et);
	case 0x45: /* PINNED */
		return sig_wrapped(c, s, b, m, depth, st, st == IL ? " pinned" : NULL);
	case 0x3d: /* R2R: NATIVE_VALUETYPE_ZAPSIG, the type follows */
		return sig_wrapped(c, s, b, m, depth, st, NULL);
	case 0x3e: /* R2R: CANON_ZAPSIG, shared generic code */
		sb_str(b, "System.__Canon");
		return 0;
	case 0x3f: /* R2R: MODULE_ZAPSIG module-index type (that module's tokens) */
		rc = sig_u(c, s, &v);
		return rc ? rc : sig_type(c, s, b, module_at(c, m, v), depth + 1, st);
	default:
		return fail(c, -EINVAL, "element type 0x%02x in a signature", et);
	}
}

/* ---- NativeFormat (ILCompiler.Reflection.ReadyToRun/NativeReader) ---- */

/* A reader over one R2R section: offsets are image offsets, bounded by
 * [lo, hi). */
struct nat {
	size_t lo, hi;
};

static int nat_u(struct ctx *c, const struct nat *r, size_t *pos, uint32_t *v)
{
	size_t left = *pos >= r->lo && *pos < r->hi ? r->hi - *pos : 0;
	const uint8_t *p;
	size_t need;

	if (!left)
		goto cut;
	p = c->p + *pos;
	if (!(p[0] & 1)) {
		need = 1;
		*v = p[0] >> 1;
	} else if (!(p[0] & 2)) {
		need = 2;
		if (left < need)
			goto cut;
		*v = (uint32_t)(p[0] >> 2) | (uint32_t)p[1] << 6;
	} else if (!(p[0] & 4)) {
		need = 3;
		if (left < need)
			goto cut;
		*v = (uint32_t)(p[0] >> 3) | (uint32_t)p[1] << 5 | (uint32_t)p[2] << 13;
	} else if (!(p[0] & 8)) {
		need = 4;
		if (left < need)
			goto cut;
		*v = (uint32_t)(p[0] >> 4) | (uint32_t)p[1] << 4 | (uint32_t)p[2] << 12 | (uint32_t)p[3] << 20;
	} else if (!(p[0] & 16)) {
		need = 5;
		if (left < need)
			goto cut;
		*v = rd32(p + 1);
	} else {
		return fail(c, -EINVAL, "bad NativeFormat integer 0x%02x at file offset 0x%zx", p[0], *pos);
	}
	*pos += need;
	return 0;
cut:
	return fail(c, -EINVAL, "NativeFormat data cut short at file offset 0x%zx", *pos);
}

static int nat_s(struct ctx *c, const struct nat *r, size_t *pos, int32_t *v)
{
	size_t left = *pos >= r->lo && *pos < r->hi ? r->hi - *pos : 0;
	const uint8_t *p = c->p + (left ? *pos : 0);

	if (left && !(p[0] & 1)) {
		*v = (int8_t)p[0] >> 1;
		*pos += 1;
	} else if (left >= 2 && !(p[0] & 2)) {
		*v = (int32_t)(p[0] >> 2) | (int32_t)(int8_t)p[1] * 64;
		*pos += 2;
	} else if (left >= 3 && !(p[0] & 4)) {
		*v = (int32_t)(p[0] >> 3) | (int32_t)p[1] << 5 | (int32_t)(int8_t)p[2] * 8192;
		*pos += 3;
	} else if (left >= 4 && !(p[0] & 8)) {
		*v = (int32_t)(p[0] >> 4) | (int32_t)p[1] << 4 | (int32_t)p[2] << 12 |
		     (int32_t)(int8_t)p[3] * 1048576;
		*pos += 4;
	} else if (left >= 5 && !(p[0] & 16)) {
		*v = (int32_t)rd32(p + 1);
		*pos += 5;
	} else {
		return fail(c, -EINVAL, "bad or cut NativeFormat integer at file offset 0x%zx", *pos);
	}
	return 0;
}

/* A method entry: the RUNTIME_FUNCTION index, with a flag saying fixups
 * (that the runtime resolves before first call) follow; they do not
 * matter for naming. */
static int entry_index(struct ctx *c, const struct nat *r, size_t pos, uint32_t *rf)
{
	uint32_t id;
	int rc = nat_u(c, r, &pos, &id);

	if (rc)
		return rc;
	*rf = id & 1 ? id >> 2 : id >> 1;
	return 0;
}

struct claim {
	uint32_t rf;   /* RUNTIME_FUNCTION index of the entry point */
	uint32_t seq;  /* order found: MethodDef entries first, they win ties */
	int64_t name;  /* offset in names, -1 for a method left unnamed */
	int64_t full;  /* offset in names of the whole name, -1 for none */
};

struct claims {
	struct claim *v;
	size_t n, cap;
	uint32_t n_rf;
};

/* Keeps a name: *at is its offset in c->names. */
static int keep_name(struct ctx *c, const struct sb *name, int64_t *at)
{
	char *names;

	if (name->n + 1 > NAMES_MAX - c->names_len)
		return fail(c, -EINVAL, "method names beyond %u MiB", NAMES_MAX >> 20);
	names = tr_vec_grow(c->names, &c->names_cap, c->names_len + name->n + 1, 1, 65536);
	if (!names)
		return fail(c, -ENOMEM, "out of memory");
	c->names = names;
	memcpy(c->names + c->names_len, name->s, name->n + 1);
	*at = (int64_t)c->names_len;
	c->names_len += name->n + 1;
	return 0;
}

static int claim(struct ctx *c, struct claims *cl, uint32_t rf, const struct sb *name,
		 const struct sb *full)
{
	struct claim *e, *v;

	if (rf >= cl->n_rf)
		return fail(c, -EINVAL, "entry point names RUNTIME_FUNCTION %u of %u", rf, cl->n_rf);
	/* At most one claim per RUNTIME_FUNCTION per table: n_rf bounds them,
	 * and with them the work of hashtable buckets that overlap. */
	if (cl->n >= 2 * (size_t)cl->n_rf)
		return fail(c, -EINVAL, "more entry points than the %u RUNTIME_FUNCTIONs allow", cl->n_rf);
	v = tr_vec_grow(cl->v, &cl->cap, cl->n + 1, sizeof(*v), 1024);
	if (!v)
		return fail(c, -ENOMEM, "out of memory");
	cl->v = v;
	e = &cl->v[cl->n];
	e->rf = rf;
	e->seq = (uint32_t)cl->n;
	e->name = e->full = -1;
	if (name) {
		int rc = keep_name(c, name, &e->name);

		if (!rc && full)
			rc = keep_name(c, full, &e->full);
		if (rc)
			return rc;
	}
	cl->n++;
	return 0;
}

/* The TypeDef that owns MethodDef rid: TypeDef.MethodList runs up the
 * MethodDef table, so the owner is the last type whose list starts at or
 * before it. */
static uint32_t method_owner(const struct md *m, uint32_t rid)
{
	uint32_t lo = 1, hi = m->t[T_TYPEDEF].rows, best = 0;

	while (lo <= hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (col(m, T_TYPEDEF, mid, 5) <= rid) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best;
}

/* The whole name, as the runtime writes it in a jitdump (without its
 * "[PreJIT]"): "[instance ]RET [Assembly] Type::Method(PARAMS)", the
 * signature's types in IL style. */
static int full_name(struct ctx *c, const struct md *m, uint32_t sig_blob, const struct sb *name,
		     struct sb *full)
{
	struct sig s;
	uint32_t n;
	uint8_t conv;
	int rc = blob_sig(c, m, sig_blob, &s);

	full->n = 0;
	full->s[0] = 0;
	c->sig_steps = 0;
	if (rc)
		return rc;
	if (s.p >= s.end)
		return fail(c, -EINVAL, "empty method signature");
	conv = *s.p++;
	if (conv & 0x20)
		sb_str(full, "instance ");
	if (conv & 0x10) { /* generic method: its parameter count, not written */
		rc = sig_u(c, &s, &n);
		if (rc)
			return rc;
	}
	if ((conv & 0xf) == 5)
		sb_str(full, "vararg ");
	return sig_method_rest(c, m, &s, full, m->asm_name, name->s, 0);
}

static int methoddef_name(struct ctx *c, const struct md *m, uint32_t rid, const struct sb *owner,
			  struct sb *b, struct sb *full)
{
	const char *name = "";
	int rc = check_rid(c, m, T_METHODDEF, rid);

	if (rc)
		return rc;
	b->n = 0;
	b->s[0] = 0;
	if (owner) {
		sb_add(b, owner->s, owner->n);
	} else {
		uint32_t type = method_owner(m, rid);

		if (!type)
			return fail(c, -EINVAL, "MethodDef %u belongs to no TypeDef", rid);
		rc = typedef_name(c, m, b, type, 0, REFLECTION);
		if (rc)
			return rc;
	}
	rc = get_str(c, m, col(m, T_METHODDEF, rid, 3), &name);
	if (rc)
		return rc;
	sb_add(b, "::", 2);
	sb_str(b, name);
	return full ? full_name(c, m, col(m, T_METHODDEF, rid, 4), b, full) : 0;
}

static int memberref_name(struct ctx *c, const struct md *m, uint32_t rid, const struct sb *owner,
			  struct sb *b, struct sb *full)
{
	const char *name = "";
	uint32_t parent;
	int rc = check_rid(c, m, T_MEMBERREF, rid);

	if (rc)
		return rc;
	b->n = 0;
	b->s[0] = 0;
	parent = col(m, T_MEMBERREF, rid, 0);
	if (owner) {
		sb_add(b, owner->s, owner->n);
	} else {
		switch (parent & 7) {
		case 0:
			rc = typedef_name(c, m, b, parent >> 3, 0, REFLECTION);
			break;
		case 1:
			rc = typeref_name(c, m, b, parent >> 3, 0, REFLECTION);
			break;
		case 4:
			rc = token_type(c, (parent >> 3) << 2 | 2, b, 0, 0, REFLECTION);
			break;
		default:
			return fail(c, -EINVAL, "MemberRef %u's parent is not a type", rid);
		}
		if (rc)
			return rc;
	}
	rc = get_str(c, m, col(m, T_MEMBERREF, rid, 1), &name);
	if (rc)
		return rc;
	sb_add(b, "::", 2);
	sb_str(b, name);
	return full ? full_name(c, m, col(m, T_MEMBERREF, rid, 2), b, full) : 0;
}

/* The names built for the entries of a section, allocated once for all
 * of them: owner only when asked for, full only with TR_R2R_SIGNATURES. */
struct names {
	struct sb *owner, *name, *full;
};

static int names_alloc(struct ctx *c, struct names *n, int with_owner)
{
	n->owner = with_owner ? malloc(sizeof(*n->owner)) : NULL;
	n->name = malloc(sizeof(*n->name));
	n->full = c->flags & TR_R2R_SIGNATURES ? malloc(sizeof(*n->full)) : NULL;
	if ((!n->owner && with_owner) || !n->name || (!n->full && (c->flags & TR_R2R_SIGNATURES)))
		return fail(c, -ENOMEM, "out of memory");
	return 0;
}

static void names_free(struct names *n)
{
	free(n->owner);
	free(n->name);
	free(n->full);
}

/* Where entry i of MethodDefEntryPoints lies, *node: 0, 1 when the method
 * has no code, or -EINVAL.  NativeArray: per block of 16 an offset, then a
 * binary tree whose leaves are the entries (NativeArray.TryGetAt). */
static int methoddef_entry_at(struct ctx *c, const struct nat *r, size_t base, unsigned entry_size,
			      uint32_t i, size_t *node)
{
	size_t at = base + ((size_t)(i / 16) << entry_size);
	uint32_t rel;

	if (at >= r->hi || r->hi - at < (1u << entry_size))
		return fail(c, -EINVAL, "MethodDefEntryPoints index cut short");
	rel = entry_size == 0 ? c->p[at] : entry_size == 1 ? rd16(c->p + at) : rd32(c->p + at);
	*node = base + rel;
	for (uint32_t bit = 8; bit; bit >>= 1) {
		size_t next = *node;
		uint32_t v;
		int rc = nat_u(c, r, &next, &v);

		if (rc)
			return rc;
		if (i & bit) {
			if (v & 2) {
				if ((v >> 2) > r->hi - *node)
					return fail(
						c, -EINVAL,
						"MethodDefEntryPoints node offset out of the section");
				*node += v >> 2;
				continue;
			}
		} else if (v & 1) {
			*node = next;
			continue;
		}
		if (!(v & 3) && (v >> 2) == (i & 15)) {
			*node = next;
			return 0;
		}
		return 1;
	}
	return 0;
}

/* The MethodDefEntryPoints of module m (in a composite image, one per
 * component, each with its own metadata). */
static int read_methoddef_entries(struct ctx *c, const struct md *m, struct claims *cl, size_t off,
				  uint32_t size)
{
	struct nat r = { off, off + size };
	size_t pos = off, base;
	uint32_t hdr, n, entry_size;
	struct names nb = { 0 };
	int rc = names_alloc(c, &nb, 0);

	if (!rc)
		rc = nat_u(c, &r, &pos, &hdr);
	if (rc)
		goto out;
	base = pos;
	n = hdr >> 2;
	entry_size = hdr & 3;
	if (entry_size > 2 || n > m->t[T_METHODDEF].rows) {
		rc = fail(c, -EINVAL, "MethodDefEntryPoints of %u entries (%u MethodDefs), index size code %u",
			  n, m->t[T_METHODDEF].rows, entry_size);
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		size_t node = 0;
		uint32_t rf;

		rc = methoddef_entry_at(c, &r, base, entry_size, i, &node);
		if (rc > 0) {
			rc = 0;
			continue; /* no code for this method */
		}
		if (!rc)
			rc = entry_index(c, &r, node, &rf);
		if (!rc)
			rc = methoddef_name(c, m, i + 1, NULL, nb.name, nb.full);
		if (!rc)
			rc = claim(c, cl, rf, nb.name, nb.full);
		if (rc)
			goto out;
	}
out:
	names_free(&nb);
	return rc;
}

/* The module that defines the type a signature starts with, in a
 * composite image: the module override (MODULE_ZAPSIG) before its
 * definition's token.  A method entry without a module override of its
 * own is looked up (ReadyToRunInfo::GetEntryPoint) through the module of
 * the method, that of its owner type's definition: its tokens are that
 * module's.  NULL when the type names none (a primitive type's method,
 * left unnamed). */
static const struct md *defining_module(struct ctx *c, const struct sig *s)
{
	struct sig p = *s;
	const struct md *m = NULL;
	uint32_t v;

	for (int steps = 0; p.p < p.end && steps < DEPTH_MAX; steps++) {
		uint8_t et = *p.p++;

		if (et == 0x3f) { /* MODULE_ZAPSIG index */
			if (sig_u(c, &p, &v))
				return NULL;
			m = module_at(c, m, v);
		} else if (et != 0x15 && et != 0x3d) { /* past GENERICINST, NATIVE_VALUETYPE */
			return et == 0x11 || et == 0x12 ? m : NULL;
		}
	}
	return NULL;
}

/* The parts of an instance entry's signature after the method token that
 * do not go into its name, parsed past (into scratch). */
static int skip_instance_parts(struct ctx *c, struct sig *s, uint32_t flags, const struct md *m,
			       struct sb *scratch)
{
	uint32_t v;
	int rc = 0;

	if (flags & SIG_METHOD_INSTANTIATION) {
		/* The runtime leaves method instantiations out of the names it
		 * writes (Enumerable::Select, not Select[...]): parsed past. */
		rc = sig_u(c, s, &v);
		if (rc)
			return rc;
		if (v > ARGS_MAX)
			return fail(c, -EINVAL, "method instantiation with %u arguments", v);
		for (uint32_t i = 0; i < v && !rc; i++) {
			scratch->n = 0;
			rc = sig_type(c, s, scratch, m, 0, REFLECTION);
		}
		if (rc)
			return rc;
	}
	if (flags & SIG_CONSTRAINED) {
		scratch->n = 0;
		rc = sig_type(c, s, scratch, m, 0, REFLECTION);
	}
	return rc;
}

/* One InstanceMethodEntryPoints entry: a method signature (readytorun.h's
 * READYTORUN_METHOD_SIG_* flags, then ECMA-encoded parts), then the entry.
 * Its tokens are those of the image's own module unless a module override
 * (UpdateContext) says which other.  A composite image has no module of
 * its own: an entry without an override is in its owner type's
 * (defining_module). */
static int instance_entry(struct ctx *c, struct claims *cl, const struct nat *r, size_t pos,
			  const struct names *nb)
{
	struct sig s = { c->p + pos, c->p + r->hi };
	uint32_t flags, v, rid, rf;
	int has_owner = 0, named = 1, rc;
	const struct md *m = c->comp ? NULL : &c->self;
	struct sb *owner = nb->owner, *name = nb->name, *full = nb->full;
	struct sb *scratch = name; /* reused: the name is built last */

	c->sig_steps = 0;
	rc = sig_u(c, &s, &flags);
	if (rc)
		return rc;
	if (flags & SIG_UPDATE_CONTEXT) {
		rc = sig_u(c, &s, &v);
		if (rc)
			return rc;
		m = module_at(c, m, v);
	}
	owner->n = 0;
	owner->s[0] = 0;
	if (!(flags & SIG_UPDATE_CONTEXT) && (flags & SIG_OWNER_TYPE) && c->comp)
		m = defining_module(c, &s);
	if (flags & SIG_OWNER_TYPE) {
		rc = sig_type(c, &s, owner, m, 0, REFLECTION);
		if (rc)
			return rc;
		has_owner = 1;
	}
	rc = sig_u(c, &s, &rid);
	if (rc)
		return rc;
	if ((flags & SIG_SLOT_INSTEAD_OF_TOKEN) || !m)
		named = 0;
	rc = skip_instance_parts(c, &s, flags, m, scratch);
	if (!rc)
		rc = entry_index(c, r, (size_t)(s.p - c->p), &rf);
	if (rc)
		return rc;
	if (named) {
		if (flags & SIG_MEMBERREF_TOKEN)
			rc = memberref_name(c, m, rid, has_owner ? owner : NULL, name, full);
		else
			rc = methoddef_name(c, m, rid, has_owner ? owner : NULL, name, full);
		if (rc)
			return rc;
	}
	return claim(c, cl, rf, named ? name : NULL, full);
}

/* The entries of one bucket of InstanceMethodEntryPoints, [pos, end):
 * each a hash byte and an offset to the entry, relative to its own. */
static int read_instance_bucket(struct ctx *c, struct claims *cl, const struct nat *r, size_t pos,
				size_t end, const struct names *nb)
{
	int rc = 0;

	while (pos < end && !rc) {
		size_t at;
		int32_t delta = 0;

		pos++; /* the entry's low hash byte */
		at = pos;
		rc = nat_s(c, r, &pos, &delta);
		if (rc)
			break;
		if ((delta < 0 && (size_t) - (int64_t)delta > at - r->lo) ||
		    (delta >= 0 && (size_t)delta >= r->hi - at)) {
			rc = fail(c, -EINVAL, "InstanceMethodEntryPoints entry out of the section");
			break;
		}
		rc = instance_entry(c, cl, r, at + (ptrdiff_t)delta, nb);
	}
	return rc;
}

static int read_instance_entries(struct ctx *c, struct claims *cl, size_t off, uint32_t size)
{
	struct nat r = { off, off + size };
	size_t base;
	uint32_t n_buckets;
	unsigned w;
	struct names nb = { 0 };
	int rc = names_alloc(c, &nb, 1);

	if (rc)
		goto out;
	/* NativeHashtable: a header byte (log2 of the bucket count, the width
	 * of bucket offsets), the bucket offsets, then per bucket entries of
	 * a hash byte and a relative offset to the entry. */
	if (size < 1) {
		rc = fail(c, -EINVAL, "empty InstanceMethodEntryPoints");
		goto out;
	}
	w = c->p[off] & 3;
	if (w > 2 || (c->p[off] >> 2) > 24) {
		rc = fail(c, -EINVAL, "InstanceMethodEntryPoints header 0x%02x", c->p[off]);
		goto out;
	}
	w = 1u << w;
	n_buckets = 1u << (c->p[off] >> 2);
	base = off + 1;
	if ((uint64_t)(n_buckets + 1) * w > r.hi - base) {
		rc = fail(c, -EINVAL, "InstanceMethodEntryPoints buckets beyond the section");
		goto out;
	}
	for (uint32_t i = 0; i < n_buckets && !rc; i++) {
		const uint8_t *b = c->p + base + (size_t)i * w;
		uint32_t start = w == 1 ? b[0] : w == 2 ? rd16(b) : rd32(b);
		uint32_t end = w == 1 ? b[1] : w == 2 ? rd16(b + w) : rd32(b + w);

		if (start > end || end > r.hi - base) {
			rc = fail(c, -EINVAL, "InstanceMethodEntryPoints bucket %u out of the section", i);
			break;
		}
		rc = read_instance_bucket(c, cl, &r, base + start, base + end, &nb);
	}
out:
	names_free(&nb);
	return rc;
}

static int cmp_claim(const void *a, const void *b)
{
	const struct claim *x = a, *y = b;

	if (x->rf != y->rf)
		return x->rf < y->rf ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_method(const void *a, const void *b)
{
	const struct tr_r2r_method *x = a, *y = b;

	return x->start_rva < y->start_rva ? -1 : x->start_rva > y->start_rva;
}

/* Where RUNTIME_FUNCTION k's code lies, [*b, *e).  arm64's length is the
 * unwind data's FunctionLength (in instructions, 4 bytes each): packed in
 * the UnwindData word itself when its low two bits are not 0 (11 bits from
 * bit 2), else the first 18 bits of the .xdata record it points to (the
 * Windows ARM64 exception handling format, which crossgen2 writes on every
 * OS). */
static int rf_range(struct ctx *c, size_t rf_off, uint32_t k, uint32_t *b, uint32_t *e)
{
	const uint8_t *f = c->p + rf_off + (size_t)k * c->rf_size;
	uint32_t len;

	*b = rd32(f);
	if (c->machine == MACHINE_X64) {
		*e = rd32(f + 4);
		if (*e < *b)
			return fail(c, -EINVAL, "RUNTIME_FUNCTION %u ends (0x%x) before it begins (0x%x)", k,
				    *e, *b);
		return 0;
	}
	len = rd32(f + 4);
	if (len & 3) {
		len = (len >> 2 & 0x7ff) * 4;
	} else {
		size_t x;
		int rc = rva_span(c, len, 4, &x, "a RUNTIME_FUNCTION's unwind data");

		if (rc)
			return rc;
		len = (rd32(c->p + x) & 0x3ffff) * 4;
	}
	if (len > UINT32_MAX - *b)
		return fail(c, -EINVAL, "RUNTIME_FUNCTION %u (0x%x, %u bytes) ends beyond 4 GiB", k, *b, len);
	*e = *b + len;
	return 0;
}

/* Claims become ranges: a method owns its entry RUNTIME_FUNCTION and those
 * after it up to the next entry point (its funclets: crossgen2 places them
 * right after the main body).  The range of claim i, the first of those
 * on its RUNTIME_FUNCTION. */
static int claim_range(struct ctx *c, const struct claims *cl, size_t i, size_t rf_off,
		       uint32_t *start, uint32_t *end)
{
	uint32_t first = cl->v[i].rf, last = cl->n_rf;

	for (size_t j = i + 1; j < cl->n; j++)
		if (cl->v[j].rf != first) {
			last = cl->v[j].rf;
			break;
		}
	*start = rd32(c->p + rf_off + (size_t)first * c->rf_size);
	*end = 0;
	for (uint32_t k = first; k < last; k++) {
		uint32_t b = 0, e = 0;
		int rc = rf_range(c, rf_off, k, &b, &e);

		if (rc)
			return rc;
		if (b >= *start && e > *end)
			*end = e;
	}
	return 0;
}

/* Disjoint: a range stops where the next method (named or not) starts;
 * of two methods at one address the first sorted stays.  The methods
 * left of the n sorted ones. */
static size_t make_disjoint(struct tr_r2r_method *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (k && v[k - 1].start_rva == v[i].start_rva)
			continue;
		v[k++] = v[i];
	}
	n = k;
	for (size_t i = 0; i + 1 < n; i++)
		if (v[i].end_rva > v[i + 1].start_rva)
			v[i].end_rva = v[i + 1].start_rva;
	return n;
}

static int build_table(struct ctx *c, struct claims *cl, size_t rf_off, struct tr_r2r *out)
{
	size_t n = 0;

	if (cl->n)
		qsort(cl->v, cl->n, sizeof(*cl->v), cmp_claim);
	out->v = calloc(cl->n ? cl->n : 1, sizeof(*out->v));
	if (!out->v)
		return fail(c, -ENOMEM, "out of memory");
	for (size_t i = 0; i < cl->n; i++) {
		uint32_t start, end;
		int rc;

		if (i && cl->v[i - 1].rf == cl->v[i].rf)
			continue; /* one code, two entries: the first found names it */
		rc = claim_range(c, cl, i, rf_off, &start, &end);
		if (rc)
			return rc;
		if (cl->v[i].name < 0 || end <= start)
			continue;
		out->v[n].start_rva = start;
		out->v[n].end_rva = end;
		/* offsets until the names settle */
		out->v[n].name = (const char *)(uintptr_t)cl->v[i].name;
		out->v[n].signature = (const char *)(uintptr_t)cl->v[i].full;
		n++;
	}
	qsort(out->v, n, sizeof(*out->v), cmp_method);
	n = make_disjoint(out->v, n);
	out->n = n;
	out->names = c->names;
	c->names = NULL;
	for (size_t i = 0; i < n; i++) {
		intptr_t full = (intptr_t)out->v[i].signature;

		out->v[i].name = out->names + (uintptr_t)out->v[i].name;
		out->v[i].signature = full < 0 ? NULL : out->names + full;
	}
	return 0;
}

/* Reads the whole file open on fd (a regular file, read with pread: a
 * file truncated meanwhile is an error, never a SIGBUS) into *buf. */
static int read_fd(int fd, uint8_t **buf, size_t *len, char *why, size_t why_len)
{
	struct stat st;
	size_t got = 0;
	int rc;

	*buf = NULL;
	*len = 0;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		if (why && why_len)
			snprintf(why, why_len, "fstat: %s", strerror(-rc));
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		if (why && why_len)
			snprintf(why, why_len, "not a regular file");
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > TR_R2R_MAX_SIZE) {
		if (why && why_len)
			snprintf(why, why_len, "%lld bytes, beyond the %u MiB limit", (long long)st.st_size,
				 TR_R2R_MAX_SIZE >> 20);
		return -EFBIG;
	}
	*len = (size_t)st.st_size;
	*buf = malloc(*len ? *len : 1);
	if (!*buf)
		return -ENOMEM;
	while (got < *len) {
		ssize_t r = pread(fd, *buf + got, *len - got, (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r < 0 ? -errno : -EINVAL;
			if (why && why_len)
				snprintf(why, why_len, "read: %s", r < 0 ? strerror(errno) : "the file shrank");
			free(*buf);
			*buf = NULL;
			return rc;
		}
		got += (size_t)r;
	}
	return 0;
}

/* The file name of component k: its AssemblyRef's name and ".dll".
 * Reasons go to s. */
static int component_file(struct ctx *c, struct ctx *s, uint32_t k, char *file, size_t file_len)
{
	const char *asm_name = "";
	int rc = get_str(s, &c->self, col(&c->self, 0x23, k + 1, 6), &asm_name);

	if (rc)
		return rc;
	/* The name comes from the image: a file name, nothing that walks the
	 * directory tree. */
	if (!asm_name[0] || asm_name[0] == '.' || strchr(asm_name, '/') || strlen(asm_name) > 200)
		return fail(s, -EINVAL, "component assembly name \"%.64s\" is not a file name",
			    asm_name);
	snprintf(file, file_len, "%s.dll", asm_name);
	return 0;
}

/* A component's file, opened through c->open_component, read whole into
 * *buf.  Reasons go to s. */
static int read_component(struct ctx *c, struct ctx *s, const char *file, uint8_t **buf,
			  size_t *len)
{
	int fd = c->open_component(c->open_arg, file), rc;

	if (fd < 0)
		return fail(s, fd, "component %s: %s", file, strerror(-fd));
	rc = read_fd(fd, buf, len, NULL, 0);
	close(fd);
	if (rc)
		return fail(s, rc, "component %s: %s", file, strerror(-rc));
	return 0;
}

/* A copy of the metadata of the PE image s reads, into m->own (*size
 * bytes): the rest of the image is not kept. */
static int copy_metadata(struct ctx *s, struct md *m, uint32_t *size)
{
	size_t cli, md;
	uint32_t cli_rva, cli_size, md_rva;
	uint16_t machine;
	int rc = read_pe(s, &cli_rva, &cli_size, &machine);

	if (!rc)
		rc = rva_span(s, cli_rva, 72, &cli, "the CLI header");
	if (!rc) {
		md_rva = rd32(s->p + cli + 8);
		*size = rd32(s->p + cli + 12);
		rc = rva_span(s, md_rva, *size, &md, "the metadata");
	}
	if (!rc && !(m->own = malloc(*size ? *size : 1)))
		rc = -ENOMEM;
	if (!rc)
		memcpy(m->own, s->p + md, *size);
	return rc;
}

/* Whether component k's module MVID is the one the composite image lists
 * for it: 0, or -EINVAL or -ESTALE with the reason in s. */
static int check_mvid(struct ctx *c, struct ctx *s, const struct md *m, uint32_t k,
		      const char *file)
{
	uint32_t guid = m->t[T_MODULE].rows ? col(m, T_MODULE, 1, 2) : 0;

	if (!guid || guid > m->guid_len / 16)
		return fail(s, -EINVAL, "component %s: no module MVID", file);
	if (memcmp(m->p + m->guid_off + (size_t)(guid - 1) * 16,
		   c->p + c->mvids_off + (size_t)k * 16, 16) != 0)
		return fail(s, -ESTALE,
			    "component %s is not the assembly the composite image was compiled "
			    "with (another MVID)",
			    file);
	return 0;
}

/* Component k of a composite image: its file (the manifest's AssemblyRef
 * k + 1, the components coming first there, as the runtime's NativeImage
 * reads them), beside the composite file, read once; its metadata is kept,
 * the rest dropped.  NULL when it cannot be read or is not the assembly the
 * composite image was compiled with (another MVID): its methods stay
 * unnamed, the others are named.  The first reason is kept in comp_why. */
static const struct md *load_component(struct ctx *c, uint32_t k)
{
	struct md *m = &c->comp[k];
	struct ctx s = { .why = c->comp_why, .why_len = sizeof(c->comp_why) };
	char file[256];
	uint8_t *buf = NULL;
	size_t len;
	uint32_t md_size = 0;
	int rc;

	if (m->state)
		return m->state > 0 ? m : NULL;
	m->state = -1;
	rc = component_file(c, &s, k, file, sizeof(file));
	if (!rc)
		rc = read_component(c, &s, file, &buf, &len);
	if (rc)
		return NULL;
	s.p = buf;
	s.len = len;
	rc = copy_metadata(&s, m, &md_size);
	free(buf);
	free(s.sec);
	s.p = NULL;
	s.sec = NULL;
	if (!rc)
		rc = read_metadata(&s, m, m->own, md_size);
	if (rc)
		return NULL;
	if (m->t[T_METHODPTR].rows) {
		fail(&s, -ENOEXEC, "component %s: metadata with a MethodPtr table", file);
		return NULL;
	}
	m->asm_name = "?";
	if (m->t[0x20].rows && get_str(&s, m, col(m, 0x20, 1, 7), &m->asm_name))
		return NULL;
	if (c->mvids_off && check_mvid(c, &s, m, k, file))
		return NULL;
	m->state = 1;
	return m;
}

static const struct md *module_at(struct ctx *c, const struct md *from, uint32_t idx)
{
	if (idx == 0)
		return from;
	/* Outside a composite image, another module is another image: not
	 * read. */
	if (!c->comp || idx < c->comp_bias || idx - c->comp_bias >= c->n_comp)
		return NULL;
	return load_component(c, idx - c->comp_bias);
}

/* A READYTORUN_CORE_HEADER's section of the given type (Flags,
 * NumberOfSections, then the sections): 0 and its offset and size, 1 when
 * there is none, or -EINVAL. */
static int core_section(struct ctx *c, uint32_t rva, uint32_t type, size_t *off, uint32_t *size)
{
	size_t h;
	uint32_t n;
	int rc = rva_span(c, rva, 8, &h, "a component's READYTORUN_CORE_HEADER");

	if (rc)
		return rc;
	n = rd32(c->p + h + 4);
	if (n > 256)
		return fail(c, -EINVAL, "a component's READYTORUN_CORE_HEADER lists %u sections", n);
	rc = rva_span(c, rva, 8 + 12 * n, &h, "a component's READYTORUN_CORE_HEADER");
	if (rc)
		return rc;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = c->p + h + 8 + 12 * i;

		if (rd32(e) == type) {
			*size = rd32(e + 8);
			return rva_span(c, rd32(e + 4), *size, off, "a component's section");
		}
	}
	return 1;
}

/* The MethodDefEntryPoints of each component of a composite image, named
 * from that component's metadata. */
static int read_components(struct ctx *c, struct claims *cl, size_t off, uint32_t size)
{
	uint32_t n = size / 16, named = 0;

	if (n == 0 || n > COMPONENTS_MAX || n > c->self.t[0x23].rows)
		return fail(c, -EINVAL, "%u component assemblies (%u assembly references in the manifest)", n,
			    c->self.t[0x23].rows);
	c->comp = calloc(n, sizeof(*c->comp));
	if (!c->comp)
		return fail(c, -ENOMEM, "out of memory");
	c->n_comp = n;
	for (uint32_t k = 0; k < n; k++) {
		size_t mdep;
		uint32_t mdep_size = 0;
		const struct md *m;
		int rc = core_section(c, rd32(c->p + off + 16 * k + 8), SEC_METHODDEF_ENTRY_POINTS, &mdep,
				      &mdep_size);

		if (rc < 0)
			return rc;
		if (rc > 0)
			continue; /* no code of its own: nothing to name */
		m = load_component(c, k);
		if (!m)
			continue;
		named++;
		rc = read_methoddef_entries(c, m, cl, mdep, mdep_size);
		if (rc)
			return rc;
	}
	if (!named)
		return fail(c, -ENOEXEC, "a composite image none of whose %u component assemblies could be read (%s)",
			    n, c->comp_why[0] ? c->comp_why : "none has code");
	return 0;
}

/* Where tr_r2r_parse_with found the headers and the sections it reads:
 * image offsets, 0 for a section the image lacks. */
struct layout {
	size_t cli; /* the CLI header */
	uint32_t cli_size;
	size_t rtr; /* the READYTORUN_HEADER */
	uint32_t rtr_rva, rtr_size;
	uint16_t machine; /* the PE header's, as written */
	size_t rf_off, mdep_off, inst_off, comp_off;
	uint32_t rf_size, mdep_size, inst_size, comp_size;
};

/* The PE headers and the CLI header's pointer to the ReadyToRun one. */
static int read_cli_header(struct ctx *c, struct layout *l)
{
	uint32_t cli_rva = 0;
	int rc = read_pe(c, &cli_rva, &l->cli_size, &l->machine);

	if (!rc)
		rc = rva_span(c, cli_rva, 72, &l->cli, "the CLI header");
	if (rc)
		return rc;
	l->rtr_rva = rd32(c->p + l->cli + 64);
	l->rtr_size = rd32(c->p + l->cli + 68);
	if (!l->rtr_rva)
		return fail(c, -ENOEXEC, "no ManagedNativeHeader: IL only, no ReadyToRun code");
	return 0;
}

/* The READYTORUN_HEADER: its version goes to out; an image that is not
 * ReadyToRun, a component or for another machine is refused. */
static int read_rtr_header(struct ctx *c, struct layout *l, struct tr_r2r *out)
{
	const uint8_t *h;
	int rc = rva_span(c, l->rtr_rva, 16, &l->rtr, "the READYTORUN_HEADER");

	if (rc)
		return rc;
	h = c->p + l->rtr;
	if (rd32(h) != RTR_SIGNATURE)
		return fail(c, -ENOEXEC,
			    "the ManagedNativeHeader is not a READYTORUN_HEADER (signature 0x%08x)",
			    rd32(h));
	out->rtr_major = rd16(h + 4);
	out->rtr_minor = rd16(h + 6);
	if (rd32(h + 8) & RTR_FLAG_COMPONENT)
		return fail(
			c, -ENOEXEC,
			"a component of a composite ReadyToRun image: its code is in the composite file");
	/* Checked once the image proved to be ReadyToRun, so that an IL-only
	 * assembly (machine i386, "AnyCPU") is called that. */
	c->machine = machine_of(l->machine);
	if (!c->machine)
		return fail(c, -ENOEXEC,
			    "machine 0x%04x: only x64 and arm64 ReadyToRun code is read",
			    l->machine);
	c->rf_size = c->machine == MACHINE_X64 ? 12 : 8;
	out->machine = c->machine;
	return 0;
}

/* One section of the READYTORUN_HEADER: where it is, if it is one read. */
static int rtr_section(struct ctx *c, struct layout *l, uint32_t type, uint32_t rva, uint32_t size)
{
	int rc = 0;

	if (type == SEC_RUNTIME_FUNCTIONS) {
		rc = rva_span(c, rva, size, &l->rf_off, "RuntimeFunctions");
		l->rf_size = size;
	} else if (type == SEC_METHODDEF_ENTRY_POINTS) {
		rc = rva_span(c, rva, size, &l->mdep_off, "MethodDefEntryPoints");
		l->mdep_size = size;
	} else if (type == SEC_INSTANCE_ENTRY_POINTS) {
		rc = rva_span(c, rva, size, &l->inst_off, "InstanceMethodEntryPoints");
		l->inst_size = size;
	} else if (type == SEC_COMPONENT_ASSEMBLIES) {
		rc = rva_span(c, rva, size, &l->comp_off, "ComponentAssemblies");
		l->comp_size = size;
	} else if (type == SEC_MANIFEST_MVIDS) {
		size_t at;

		/* Only used to check components: one too short is left out. */
		if (rva_span(c, rva, size, &at, "ManifestAssemblyMvids") == 0 && size >= 16)
			c->mvids_off = at;
		c->mvids_size = size;
	}
	return rc;
}

/* The READYTORUN_HEADER's sections: those that name methods must be
 * there, and a composite image's components must be able to be opened. */
static int read_rtr_sections(struct ctx *c, struct layout *l)
{
	size_t rtr;
	uint32_t n_sections = rd32(c->p + l->rtr + 12);
	int rc;

	if (n_sections > 256 || (uint64_t)16 + 12ull * n_sections > l->rtr_size)
		return fail(c, -EINVAL, "READYTORUN_HEADER of %u bytes lists %u sections",
			    l->rtr_size, n_sections);
	rc = rva_span(c, l->rtr_rva, 16 + 12 * n_sections, &rtr,
		      "the READYTORUN_HEADER's sections");
	for (uint32_t i = 0; i < n_sections && !rc; i++) {
		const uint8_t *s = c->p + rtr + 16 + 12 * (size_t)i;

		rc = rtr_section(c, l, rd32(s), rd32(s + 4), rd32(s + 8));
	}
	if (rc)
		return rc;
	if (!l->rf_off || (!l->mdep_off && !l->comp_off))
		return fail(c, -EINVAL,
			    "ReadyToRun image without RuntimeFunctions or MethodDefEntryPoints");
	if (l->comp_off && !c->open_component)
		return fail(c, -ENOEXEC,
			    "a composite ReadyToRun image: its code is named from its component "
			    "assemblies, which were not looked for");
	return 0;
}

/* The image's own metadata.  A composite image's is its manifest: the
 * component assemblies are its first AssemblyRefs. */
static int read_own_metadata(struct ctx *c, const struct layout *l)
{
	size_t md;
	uint32_t md_rva, md_size;
	int rc;

	if (l->cli_size < 72)
		return fail(c, -EINVAL, "CLI header of %u bytes", l->cli_size);
	md_rva = rd32(c->p + l->cli + 8);
	md_size = rd32(c->p + l->cli + 12);
	rc = rva_span(c, md_rva, md_size, &md, "the metadata");
	if (!rc)
		rc = read_metadata(c, &c->self, c->p + md, md_size);
	if (rc)
		return rc;
	/* Unoptimized (edit-and-continue) metadata reaches methods through
	 * MethodPtr; crossgen2 never writes it. */
	if (c->self.t[T_METHODPTR].rows)
		return fail(c, -ENOEXEC,
			    "metadata with a MethodPtr table (not optimized): not read");
	c->self.asm_name = "?";
	if (c->self.t[0x20].rows)
		return get_str(c, &c->self, col(&c->self, 0x20, 1, 7), &c->self.asm_name);
	return 0;
}

/* The method entry points, claims on RUNTIME_FUNCTIONs: a composite
 * image's from its components, another's from its own MethodDefs; then
 * those of generic instantiations. */
static int read_entries(struct ctx *c, struct claims *cl, const struct layout *l,
			const struct tr_r2r *out)
{
	int rc;

	cl->n_rf = (uint32_t)(l->rf_size / c->rf_size);
	if (l->comp_off) {
		if (c->mvids_off && c->mvids_size / 16 < l->comp_size / 16)
			c->mvids_off = 0;
		c->comp_bias =
			out->rtr_major > 6 || (out->rtr_major == 6 && out->rtr_minor >= 3) ? 2 : 1;
		rc = read_components(c, cl, l->comp_off, l->comp_size);
	} else {
		rc = read_methoddef_entries(c, &c->self, cl, l->mdep_off, l->mdep_size);
	}
	if (!rc && l->inst_off)
		rc = read_instance_entries(c, cl, l->inst_off, l->inst_size);
	return rc;
}

int tr_r2r_parse_with(const void *image, size_t len, unsigned flags, tr_r2r_open_fn open_component,
		      void *arg, struct tr_r2r *out, char *why, size_t why_len)
{
	struct ctx c = { .p = image,
			 .len = len,
			 .why = why,
			 .why_len = why_len,
			 .flags = flags,
			 .open_component = open_component,
			 .open_arg = arg };
	struct claims cl = { 0 };
	struct layout l = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	if (why && why_len)
		why[0] = 0;
	if (len > TR_R2R_MAX_SIZE)
		rc = fail(&c, -EFBIG, "image of %zu bytes, beyond the %u MiB limit", len,
			  TR_R2R_MAX_SIZE >> 20);
	else
		rc = read_cli_header(&c, &l);
	if (!rc)
		rc = read_rtr_header(&c, &l, out);
	if (!rc)
		rc = read_rtr_sections(&c, &l);
	if (!rc)
		rc = read_own_metadata(&c, &l);
	if (!rc)
		rc = read_entries(&c, &cl, &l, out);
	if (!rc)
		rc = build_table(&c, &cl, l.rf_off, out);
	if (!rc) {
		out->sec = c.sec;
		out->n_sec = c.n_sec;
		c.sec = NULL;
	}
	for (uint32_t k = 0; k < c.n_comp; k++)
		free(c.comp[k].own);
	free(c.comp);
	free(cl.v);
	free(c.names);
	free(c.sec);
	if (rc) {
		free(out->v);
		free(out->names);
		memset(out, 0, sizeof(*out));
	}
	return rc;
}

int tr_r2r_parse(const void *image, size_t len, unsigned flags, struct tr_r2r *out, char *why,
		 size_t why_len)
{
	return tr_r2r_parse_with(image, len, flags, NULL, NULL, out, why, why_len);
}

int tr_r2r_read_with(int fd, unsigned flags, tr_r2r_open_fn open_component, void *arg,
		     struct tr_r2r *out, char *why, size_t why_len)
{
	uint8_t *buf;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	if (why && why_len)
		why[0] = 0;
	rc = read_fd(fd, &buf, &len, why, why_len);
	if (rc)
		return rc;
	rc = tr_r2r_parse_with(buf, len, flags, open_component, arg, out, why, why_len);
	free(buf);
	return rc;
}

int tr_r2r_read(int fd, unsigned flags, struct tr_r2r *out, char *why, size_t why_len)
{
	return tr_r2r_read_with(fd, flags, NULL, NULL, out, why, why_len);
}

const struct tr_r2r_method *tr_r2r_find(const struct tr_r2r *r, uint32_t rva)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].start_rva <= rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && rva < r->v[lo - 1].end_rva)
		return &r->v[lo - 1];
	return NULL;
}

int tr_r2r_file_rva(const struct tr_r2r *r, uint64_t file_off, uint32_t *rva)
{
	for (size_t i = 0; i < r->n_sec; i++) {
		const struct tr_r2r_section *s = &r->sec[i];

		if (file_off >= s->file_off && file_off - s->file_off < s->file_size) {
			*rva = s->rva + (uint32_t)(file_off - s->file_off);
			return 0;
		}
	}
	return -ENOENT;
}

int tr_r2r_addr_rva(const struct tr_r2r *r, uint64_t addr, uint64_t map_start, uint64_t map_off,
		    uint32_t *rva)
{
	if (addr < map_start)
		return -ENOENT;
	return tr_r2r_file_rva(r, addr - map_start + map_off, rva);
}

void tr_r2r_free(struct tr_r2r *r)
{
	free(r->v);
	free(r->names);
	free(r->sec);
	memset(r, 0, sizeof(*r));
}
