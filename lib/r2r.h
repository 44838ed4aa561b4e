/* Names of the ReadyToRun (precompiled) methods of a .NET assembly, read
 * from the PE image itself.
 *
 * The framework's assemblies (System.Private.CoreLib.dll, ...) carry native
 * code that the runtime maps and runs as is.  The runtime names that code
 * only in its jitdump (never in the perf map), and a jitdump may be cut
 * short or absent: samples there would stay "[unknown]".  The image holds
 * all that is needed to name them, as .symtab does for ELF: the
 * READYTORUN_HEADER (found through the CLI header's ManagedNativeHeader)
 * lists the code's RUNTIME_FUNCTIONs and, per MethodDef row
 * (MethodDefEntryPoints) or per generic instantiation
 * (InstanceMethodEntryPoints), which of them starts the method; the ECMA-335
 * metadata tables give the method's and its type's names.
 *
 * Names are written as the runtime writes them in a jitdump, without the
 * return type, the "[Assembly]" and the parameter list (those too with
 * TR_R2R_SIGNATURES, below):
 *     System.String::Concat
 *     System.Collections.Generic.Dictionary`2[System.__Canon,System.__Canon]::TryInsert
 *     Interop+Sys::Write                    (nested types joined with '+')
 *     System.Int32::System.Numerics.IIncrementOperators<System.Int32>.op_Increment
 * (the last is the method's metadata name, an explicit interface
 * implementation).  Generic methods' own instantiations are not written:
 * the runtime leaves them out too (Enumerable::Select).  Left out here: a
 * type argument defined in another assembly (one the image names through
 * a module override; in a composite image, one outside it) is written "?";
 * arrays keep their rank but not their bounds ([,]); of calling
 * conventions only instance, vararg and those of function pointers are
 * written.  A method whose name cannot be built (a
 * slot instead of a token, a token of another module) still bounds its
 * neighbours but gets no entry: its code stays unnamed rather than
 * misnamed.  Measured against the runtime's own jitdump of a .NET 10.0.12
 * process (tests/dotnet/r2r.sh): every one of its ~2000 "[PreJIT]"
 * methods, in 10 images, gets the runtime's name, whole names included;
 * so do the ~840 of a self-contained app's composite image
 * (tests/dotnet/composite.sh).  arm64 images, against crossgen2's map of
 * what it compiled (tests/dotnet/r2r-arm64.sh): all 4054 methods of
 * Newtonsoft.Json, and 4073 of a composite image, at the map's RVA under
 * the map's name; the lengths are the code's (the map's also count the
 * read-only data crossgen2 appends to arm64 code, 143 of them).
 *
 * x64 and arm64 images are read (arm64's RUNTIME_FUNCTION has no end
 * address: the length is its unwind data's).  A composite image (one
 * compiled with PublishReadyToRunComposite: the code of many assemblies in
 * one file, "framework-r2r.dll" or "App.r2r.dll") holds none of their
 * metadata: its component assemblies, files beside it that point back to
 * it (READYTORUN_FLAG_COMPONENT, OwnerCompositeExecutable), keep theirs,
 * and its own manifest metadata names them.  Naming its code needs them:
 * tr_r2r_read_with, given a way to open them.  A component itself has no
 * code (-ENOEXEC).
 *
 * The image is untrusted (a traced process, maybe a container, chose the
 * file): every offset, count and length is checked against the bytes read;
 * what is refused says why, in words, and nothing grows beyond what the
 * file's own size bounds.  A component is opened only by a file name (no
 * directory) and used only when its MVID is the one the composite image
 * was compiled with.  Other architectures, and metadata with a MethodPtr
 * table (never written by crossgen2), are refused as -ENOEXEC. */
#ifndef TR_LIB_R2R_H
#define TR_LIB_R2R_H
#include <stddef.h>
#include <stdint.h>

/* The largest image read (it is read whole, then dropped: the table keeps
 * only ranges and names).  System.Private.CoreLib.dll is ~15 MiB. */
#define TR_R2R_MAX_SIZE (512u << 20)

/* Longer names (generic instantiations nest without bound in principle)
 * are cut to this many bytes. */
#define TR_R2R_NAME_MAX 1024

/* One method's code: [start_rva, end_rva), its main body and the funclets
 * (exception handlers) that follow it.  The names point into
 * tr_r2r.names. */
struct tr_r2r_method {
	uint32_t start_rva, end_rva;
	const char *name;      /* Type::Method, as above */
	/* With TR_R2R_SIGNATURES, the whole name the runtime writes in a
	 * jitdump (less its "[PreJIT]" suffix, which a symbolizer adds), so
	 * that a frame named from the image and one named from the jitdump are
	 * the same frame:
	 *     instance bool [System.Private.CoreLib] System.Collections.Generic.
	 *     Dictionary`2[System.__Canon,System.__Canon]::TryInsert(!0,!1,valuetype
	 *     System.Collections.Generic.InsertionBehavior)
	 * The signature's types in the runtime's IL-assembler style (int32,
	 * class [System.Runtime]System.Type, valuetype Outer/Inner&); NULL
	 * without the flag. */
	const char *signature;
};

/* tr_r2r_read/parse flags. */
enum {
	/* Also build tr_r2r_method.signature: three times the memory of the
	 * short names alone (12 MiB instead of 4 for System.Private.CoreLib's
	 * 48,000 methods). */
	TR_R2R_SIGNATURES = 1,
};

/* A PE section: what maps an address of a mapping to an RVA (below). */
struct tr_r2r_section {
	uint32_t rva, vsize, file_off, file_size;
};

/* Sorted by start_rva, ranges disjoint (a range runs at most to the next
 * method's start). */
struct tr_r2r {
	struct tr_r2r_method *v;
	size_t n;
	char *names;
	struct tr_r2r_section *sec;
	size_t n_sec;
	uint32_t rtr_major, rtr_minor; /* the READYTORUN_HEADER's version */
	uint16_t machine; /* 0x8664 (x64) or 0xaa64 (arm64), the OS's XOR undone */
};

/* Reads the image open on fd (a regular file, read with pread: a file
 * truncated meanwhile is an error, never a SIGBUS).  On 0, *out holds the
 * table (tr_r2r_free it).  Otherwise *out is empty and why (if why_len)
 * says what was wrong:
 *   -ENOEXEC  a valid PE/.NET image with no ReadyToRun code we can name (IL
 *             only, composite component, another architecture, a composite
 *             image without tr_r2r_read_with)
 *   -EINVAL   malformed: truncated, an offset or count out of bounds
 *   -EFBIG    larger than TR_R2R_MAX_SIZE
 *   -ENOMEM, or the -errno of fstat/pread. */
int tr_r2r_read(int fd, unsigned flags, struct tr_r2r *out, char *why, size_t why_len);
/* The same from bytes in memory (the fuzz target, tests). */
int tr_r2r_parse(const void *image, size_t len, unsigned flags, struct tr_r2r *out, char *why,
		 size_t why_len);

/* Opens the component assembly file_name ("System.Private.CoreLib.dll":
 * a file name, never a path) of a composite image, which the runtime
 * looks for in the composite file's directory: an fd open for reading
 * (the reader closes it), or -errno. */
typedef int (*tr_r2r_open_fn)(void *arg, const char *file_name);

/* tr_r2r_read and tr_r2r_parse that also read composite images, opening
 * their components with open_component (NULL: a composite image is
 * refused, -ENOEXEC).  A component that cannot be opened or read, or is
 * not the assembly the image was compiled with, leaves its methods out
 * (the others are named); when none can be, -ENOEXEC says why. */
int tr_r2r_read_with(int fd, unsigned flags, tr_r2r_open_fn open_component, void *arg,
		     struct tr_r2r *out, char *why, size_t why_len);
int tr_r2r_parse_with(const void *image, size_t len, unsigned flags, tr_r2r_open_fn open_component,
		      void *arg, struct tr_r2r *out, char *why, size_t why_len);

/* The method whose range holds rva, or NULL. */
const struct tr_r2r_method *tr_r2r_find(const struct tr_r2r *r, uint32_t rva);

/* The RVA of an address inside a mapping of the image, given the
 * mapping's start address and file offset (/proc/PID/maps, or an MMAP2
 * record): 0, or -ENOENT when the address falls in no section's file
 * bytes (headers, padding between sections).
 *
 * Why through the file offset: the runtime (.NET 10 on Linux, seen in
 * /proc/PID/maps of a running dotnet) maps an R2R image section by section
 * (its "image layout"): a one-page r--p mapping of the headers at the
 * image base, then .text r-xp, .data rw-p and .reloc r--p, each at
 * base + VirtualAddress rounded down to a page and with the file offset
 * PointerToRawData rounded down likewise (PE file alignment there is 0x200,
 * so .text at RVA 0x10200 from file offset 0x200 is mapped at base+0x10000
 * from offset 0).  It also maps some images flat (r--s, offset 0, the whole
 * file: the "flat layout" it reads metadata from).  In both, address minus
 * mapping start plus the mapping's offset is the file offset, and the
 * section holding that file offset gives the RVA, whichever layout the
 * mapping uses and whatever the base. */
int tr_r2r_addr_rva(const struct tr_r2r *r, uint64_t addr, uint64_t map_start, uint64_t map_off,
		    uint32_t *rva);
/* The same from a file offset. */
int tr_r2r_file_rva(const struct tr_r2r *r, uint64_t file_off, uint32_t *rva);

void tr_r2r_free(struct tr_r2r *r);

#endif
