/* Frame pointers or not, from the program's CFI (see fpcheck.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fpcheck.h"

/* Fewer places with CFI say nothing either way. */
#define MIN_PROBED 16

#if defined(HAVE_LIBDW) && defined(__x86_64__)

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

/* Enough places to judge a program by; spread over all of .text. */
#define MAX_PROBES 4096
/* x86_64's DWARF number of rbp. */
#define DWARF_RBP 6

static int text_section(Elf *elf, GElf_Addr *addr, GElf_Xword *size)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".text") == 0) {
			*addr = sh.sh_addr;
			*size = sh.sh_size;
			return 0;
		}
	}
	return -ENOENT;
}

int fp_probe_file(int fd, struct fp_probe *out)
{
	Elf *elf;
	Dwarf_CFI *cfi;
	GElf_Addr text;
	GElf_Xword size;
	size_t n;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EINVAL;
	cfi = dwarf_getcfi_elf(elf);
	if (!cfi || text_section(elf, &text, &size) < 0 || !size) {
		ret = -ENOENT;
		goto out;
	}
	n = size / 16 < MAX_PROBES ? size / 16 : MAX_PROBES;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Frame *frame;
		Dwarf_Op *ops;
		size_t nops;

		if (dwarf_cfi_addrframe(cfi, text + i * (size / n), &frame) != 0)
			continue;
		/* A CFA of register + offset: libdw says DW_OP_bregx. */
		if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops > 0) {
			out->probed++;
			out->rbp += ops[0].atom == DW_OP_breg0 + DWARF_RBP ||
				    (ops[0].atom == DW_OP_bregx && ops[0].number == DWARF_RBP);
		}
		free(frame);
	}
	if (out->probed < MIN_PROBED)
		ret = -ENOENT;
out:
	/* The CFI of dwarf_getcfi_elf belongs to the caller. */
	if (cfi)
		dwarf_cfi_end(cfi);
	elf_end(elf);
	return ret;
}

#else

int fp_probe_file(int fd, struct fp_probe *out)
{
	(void)fd;
	memset(out, 0, sizeof(*out));
	return -ENOTSUP;
}

#endif

int fp_probe_says_dwarf(const struct fp_probe *p)
{
	return p->probed >= MIN_PROBED && p->rbp * 10 < p->probed;
}

static void add_note(char *note, size_t note_len, const char *what, const struct fp_probe *p)
{
	size_t used = strlen(note);

	if (used + 3 >= note_len)
		return;
	snprintf(note + used, note_len - used, "%s%s has no frame pointers (its CFI finds the "
		 "frame from rbp at %zu of %zu places probed): callchain = fp loses the callers "
		 "of its functions, callchain = dwarf (-c cpu-dwarf) unwinds them", used ? "; " : "",
		 what, p->rbp, p->probed);
}

static void check_file(int fd, const char *what, char *note, size_t note_len)
{
	struct fp_probe p;

	if (fd < 0)
		return;
	if (fp_probe_file(fd, &p) == 0 && fp_probe_says_dwarf(&p))
		add_note(note, note_len, what, &p);
	close(fd);
}

void fp_check_targets(const struct tracerig_targets *t, char *note, size_t note_len)
{
	char path[64], what[PATH_MAX + 32];

	for (size_t i = 0; i < t->n_pids; i++) {
		char exe[PATH_MAX];
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->pids[i]);
		len = readlink(path, exe, sizeof(exe) - 1);
		exe[len > 0 ? len : 0] = '\0';
		snprintf(what, sizeof(what), "%s (process %d)", len > 0 ? exe : "the program",
			 (int)t->pids[i]);
		check_file(open(path, O_RDONLY | O_CLOEXEC), what, note, note_len);
	}
}
