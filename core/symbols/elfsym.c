/* ELF symbol tables with libelf. */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "demangle.h"
#include "elfsym.h"
#include "lib/buildid.h"
#include "lib/elfopen.h"
#include "lib/untrusted.h"
#include "procfs.h"

static Elf_Scn *section_by_name(Elf *elf, const char *want, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, shdr))
			continue;
		name = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (name && strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

static void read_build_id(Elf *elf, struct tr_elf *e)
{
	if (tr_buildid_from_elf(elf, e->build_id, sizeof(e->build_id), &e->build_id_len) < 0)
		e->build_id_len = 0;
}

static int read_loads(Elf *elf, struct tr_elf *e)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return -ENOEXEC;
	for (size_t i = 0; i < phnum && e->n_loads < TR_ELF_MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->loads[e->n_loads++] = (struct tr_elf_load){
			.off = ph.p_offset, .filesz = ph.p_filesz, .vaddr = ph.p_vaddr,
		};
	}
	return 0;
}

/* Without a symbol version ("memcpy@@GLIBC_2.14" -> "memcpy"). */
static size_t name_len(const char *name)
{
	const char *at = strchr(name + 1, '@');

	return at ? (size_t)(at - name) : strlen(name);
}

struct section {
	uint64_t end;
	int exec;
};

/* Which sections hold code (untyped symbols count only there), and where
 * they end (a symbol without a size ends there at the latest; in code, at
 * the end of the last code section: perf extends such a symbol to the
 * next one, so .init's _init names the PLT's header after it, "_init+0x26"
 * in perf script).  The table of shnum entries, *code_end set; NULL when
 * out of memory. */
static struct section *section_table(Elf *elf, size_t shnum, uint64_t *code_end)
{
	struct section *sec = calloc(shnum, sizeof(*sec));
	Elf_Scn *scn = NULL;

	if (!sec)
		return NULL;
	*code_end = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		size_t idx = elf_ndxscn(scn);

		if (idx < shnum && gelf_getshdr(scn, &shdr)) {
			sec[idx].exec = !!(shdr.sh_flags & SHF_EXECINSTR);
			sec[idx].end = shdr.sh_addr + shdr.sh_size;
			if (sec[idx].exec && sec[idx].end > *code_end)
				*code_end = sec[idx].end;
		}
	}
	return sec;
}

/* A symbol's name when it names code: functions, and untyped symbols in
 * code sections; NULL for what names nothing a frame could be in. */
static const char *code_symbol_name(Elf *elf, Elf64_Word strtab, const GElf_Sym *s,
				    const struct section *sec, size_t shnum)
{
	int st_type = GELF_ST_TYPE(s->st_info);
	const char *name;

	if (s->st_shndx == SHN_UNDEF || s->st_shndx >= shnum || !s->st_value)
		return NULL;
	if (st_type != STT_FUNC && st_type != STT_GNU_IFUNC &&
	    !(st_type == STT_NOTYPE && sec[s->st_shndx].exec))
		return NULL;
	name = elf_strptr(elf, strtab, s->st_name);
	/* Empty names, ARM/AArch64 mapping symbols, local labels. */
	if (!name || !name[0] || name[0] == '$' || strncmp(name, ".L", 2) == 0)
		return NULL;
	return name;
}

/* Adds the function symbols of every section of `type`; returns how many. */
static long add_symbols(Elf *elf, Elf64_Word type, struct tr_symtab *tab, struct tr_arena *arena)
{
	size_t shnum;
	struct section *sec;
	Elf_Scn *scn = NULL;
	long added = 0;
	uint64_t code_end;

	if (elf_getshdrnum(elf, &shnum) != 0 || shnum == 0)
		return 0;
	sec = section_table(elf, shnum, &code_end);
	if (!sec)
		return -ENOMEM;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t count;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		count = shdr.sh_size / shdr.sh_entsize;
		for (size_t i = 1; i < count; i++) {
			GElf_Sym s;
			const char *name;
			char *copy;
			int bind;
			uint32_t prio;

			if (!gelf_getsym(data, (int)i, &s))
				break;
			name = code_symbol_name(elf, shdr.sh_link, &s, sec, shnum);
			if (!name)
				continue;
			copy = tr_arena_strdup(arena, name); /* with its version, as perf */
			if (!copy) {
				free(sec);
				return -ENOMEM;
			}
			bind = GELF_ST_BIND(s.st_info);
			prio = tr_symtab_alias_prio(GELF_ST_TYPE(s.st_info) != STT_NOTYPE,
						    bind == STB_WEAK, bind == STB_GLOBAL, copy);
			if ((s.st_size ? tr_symtab_add(tab, s.st_value, s.st_size, copy, prio)
				       : tr_symtab_add_unsized(tab, s.st_value,
							       sec[s.st_shndx].exec ? code_end
										   : sec[s.st_shndx].end,
							       copy, prio)) < 0) {
				free(sec);
				return -ENOMEM;
			}
			added++;
		}
	}
	free(sec);
	return added;
}

/* PLT stubs get "callee@plt" names, as perf synthesizes them: entry i of
 * .plt (after its header) or of .plt.sec is relocation i of .rela.plt. */
static long add_plt_symbols(Elf *elf, struct tr_symtab *tab, struct tr_arena *arena)
{
	GElf_Shdr plt, plt_sec, rela, dynsym;
	Elf_Scn *rela_scn, *dynsym_scn;
	Elf_Data *rela_data, *sym_data;
	GElf_Ehdr eh;
	uint64_t base, header;
	size_t count;
	long added = 0;

	if (!gelf_getehdr(elf, &eh))
		return 0;
	if (eh.e_machine == EM_X86_64)
		header = 16;
	else if (eh.e_machine == EM_AARCH64)
		header = 32;
	else
		return 0;
	rela_scn = section_by_name(elf, ".rela.plt", &rela);
	if (!rela_scn || rela.sh_type != SHT_RELA || !rela.sh_entsize ||
	    !section_by_name(elf, ".plt", &plt))
		return 0;
	base = section_by_name(elf, ".plt.sec", &plt_sec) ? plt_sec.sh_addr : plt.sh_addr + header;
	dynsym_scn = elf_getscn(elf, rela.sh_link);
	if (!dynsym_scn || !gelf_getshdr(dynsym_scn, &dynsym))
		return 0;
	rela_data = elf_getdata(rela_scn, NULL);
	sym_data = elf_getdata(dynsym_scn, NULL);
	if (!rela_data || !sym_data)
		return 0;
	count = rela.sh_size / rela.sh_entsize;
	for (size_t i = 0; i < count; i++) {
		char buf[512], *copy;
		const char *name;
		GElf_Rela r;
		GElf_Sym sym;
		int n;

		if (!gelf_getrela(rela_data, (int)i, &r))
			break;
		if (!GELF_R_SYM(r.r_info) || !gelf_getsym(sym_data, (int)GELF_R_SYM(r.r_info), &sym))
			continue;
		name = elf_strptr(elf, dynsym.sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		n = snprintf(buf, sizeof(buf), "%.*s@plt", (int)name_len(name), name);
		if (n < 0 || (size_t)n >= sizeof(buf))
			continue;
		copy = tr_arena_strndup(arena, buf, (size_t)n);
		if (!copy || tr_symtab_add(tab, base + i * 16, 16, copy, 0) < 0)
			return -ENOMEM;
		added++;
	}
	return added;
}

static int has_section_type(Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type && shdr.sh_size)
			return 1;
	return 0;
}

/* Debug files are looked up by path in the object's own root only: the
 * root of process root_pid (what its maps path means), ours for 0.  A file
 * of the same name elsewhere (the host's, for a container's object) is no
 * debug file of it, and may be one that only root may read.  Never through
 * a link (build-id trees made of links are not used). */
static int open_in_root(pid_t root_pid, const char *path)
{
	struct tr_untrusted u;

	return tr_untrusted_open(root_pid > 0 ? root_pid : 0, path, TR_OBJECT_MAX, &u);
}

static int same_build_id(const struct tr_elf *a, const struct tr_elf *b)
{
	return a->build_id_len && a->build_id_len == b->build_id_len &&
	       memcmp(a->build_id, b->build_id, a->build_id_len) == 0;
}

/* Loads a debug file's .symtab when it is the object's: the same build id,
 * or, for a file named by .gnu_debuglink (`crc` given), the CRC-32 that
 * the link holds (and no other build id).  Any file of a name is not
 * enough: its symbols would name the object's frames.  How many symbols
 * were added (0: not used); -EMFILE or -ENFILE when it could not be
 * opened for want of descriptors, which says nothing of the file: the
 * caller does not settle for .dynsym then. */
static long try_debug_file(struct tr_elf *e, pid_t root_pid, const char *object,
			   const char *path, const uint32_t *crc, struct tr_arena *arena)
{
	struct tr_elf dbg = { 0 };
	long added = 0;
	uint32_t got;
	Elf *elf;
	int fd = open_in_root(root_pid, path), ok;

	/* Gone (its root with it) between the object's open and this: that
	 * says nothing of the file either, and the object is not settled
	 * with .dynsym for good (tr_elf_read). */
	if (fd == -EMFILE || fd == -ENFILE || fd == -ESRCH)
		return fd;
	if (fd < 0)
		return 0;
	/* Read, not mapped, as tr_elf_open_fd does. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !has_section_type(elf, SHT_SYMTAB))
		goto out;
	read_build_id(elf, &dbg);
	ok = same_build_id(e, &dbg);
	if (!ok && crc) {
		char who[32] = "", why[96];

		if (e->build_id_len && dbg.build_id_len) {
			snprintf(why, sizeof(why), "its build id is not the object's");
		} else {
			if (tr_debuglink_crc_fd(fd, &got) < 0)
				goto out;
			ok = got == *crc;
			snprintf(why, sizeof(why), "its CRC-32 is %08x, not the %08x of the object's "
				 ".gnu_debuglink", (unsigned)got, (unsigned)*crc);
		}
		if (!ok) {
			if (root_pid > 0)
				snprintf(who, sizeof(who), "pid %d: ", (int)root_pid);
			tr_log(TRACERIG_LOG_WARN, "symbols", "%srefused debug file %s for %s: %s "
			       "(not its debug file: its symbols are not used)", who, path, object,
			       why);
		}
	}
	if (ok)
		added = add_symbols(elf, SHT_SYMTAB, &e->syms, arena);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return added;
}

static long find_debug_file(struct tr_elf *e, Elf *elf, pid_t root_pid, const char *path,
			    struct tr_arena *arena)
{
	char buf[4096], dir[4096];
	const char *link, *slash;
	uint32_t crc;
	long added;
	int n;

	if (e->build_id_len) {
		n = snprintf(buf, sizeof(buf), "/usr/lib/debug/.build-id/%02x/", e->build_id[0]);
		for (size_t i = 1; i < e->build_id_len; i++)
			n += snprintf(buf + n, sizeof(buf) - n, "%02x", e->build_id[i]);
		snprintf(buf + n, sizeof(buf) - n, ".debug");
		added = try_debug_file(e, root_pid, path, buf, NULL, arena);
		if (added)
			return added;
	}
	if (!path || path[0] != '/' || tr_debuglink_from_elf(elf, &link, &crc) < 0)
		return 0;
	slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	/* gdb's search order: next to the object, in .debug/ there, then
	 * under the global debug directory. */
	for (int i = 0; i < 3; i++) {
		if (i == 0)
			n = snprintf(buf, sizeof(buf), "%s/%s", dir, link);
		else if (i == 1)
			n = snprintf(buf, sizeof(buf), "%s/.debug/%s", dir, link);
		else
			n = snprintf(buf, sizeof(buf), "/usr/lib/debug%s/%s", dir, link);
		if (n < 0 || (size_t)n >= sizeof(buf) || strcmp(buf, path) == 0)
			continue;
		added = try_debug_file(e, root_pid, path, buf, &crc, arena);
		if (added)
			return added;
	}
	return 0;
}

static int read_elf(struct tr_elf *e, Elf *elf, pid_t root_pid, const char *path,
		    struct tr_arena *arena)
{
	long added;
	int ret;

	if (elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	ret = read_loads(elf, e);
	if (ret < 0)
		return ret;
	read_build_id(elf, e);
	e->symbols_from = "symtab";
	added = add_symbols(elf, SHT_SYMTAB, &e->syms, arena);
	if (added == 0 && path) {
		e->symbols_from = "debug file";
		added = find_debug_file(e, elf, root_pid, path, arena);
	}
	if (added == 0) {
		e->symbols_from = "dynsym";
		added = add_symbols(elf, SHT_DYNSYM, &e->syms, arena);
	}
	if (added < 0)
		return (int)added;
	if (added == 0)
		e->symbols_from = "none";
	if (add_plt_symbols(elf, &e->syms, arena) < 0)
		return -ENOMEM;
	tr_symtab_rank_aliases(&e->syms, tr_demangle);
	tr_symtab_finish(&e->syms, 1);
	return 0;
}

int tr_elf_read(struct tr_elf *e, int fd, pid_t root_pid, const char *path,
		struct tr_arena *arena)
{
	Elf *elf;
	int ret;

	elf = tr_elf_open_fd(fd, &ret);
	if (!elf)
		return ret;
	ret = read_elf(e, elf, root_pid, path, arena);
	elf_end(elf);
	return ret;
}

int tr_elf_read_memory(struct tr_elf *e, void *image, size_t size, struct tr_arena *arena)
{
	Elf *elf;
	int ret;

	if (tr_libelf_ready() < 0)
		return -ENOTSUP;
	elf = elf_memory(image, size);
	if (!elf)
		return -ENOEXEC;
	ret = read_elf(e, elf, 0, NULL, arena);
	elf_end(elf);
	return ret;
}

uint64_t tr_elf_vaddr(const struct tr_elf *e, uint64_t off)
{
	for (size_t i = 0; i < e->n_loads; i++) {
		const struct tr_elf_load *l = &e->loads[i];

		if (off >= l->off && off - l->off < l->filesz)
			return off - l->off + l->vaddr;
	}
	/* Past every segment's file bytes: assume the first segment's layout. */
	if (e->n_loads)
		return off - e->loads[0].off + e->loads[0].vaddr;
	return off;
}

void tr_elf_free(struct tr_elf *e)
{
	tr_symtab_free(&e->syms);
}
