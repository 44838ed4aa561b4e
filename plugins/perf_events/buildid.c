/* Build ids read with libelf, from section headers when there are any and
 * from PT_NOTE segments otherwise (stripped objects keep only those). */
#include "config.h"

#include "buildid.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

static pthread_once_t libelf_once = PTHREAD_ONCE_INIT;
static int libelf_ok;

static void libelf_init(void)
{
	libelf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

/* Scans one block of notes; 0 when the GNU build id was found in it. */
static int scan_notes(Elf_Data *data, uint8_t id[BUILDID_MAX], uint8_t *size)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nhdr;

	if (!data || !data->d_buf)
		return -ENOENT;
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    memcmp(name, "GNU", 4) == 0 && nhdr.n_descsz > 0) {
			/* perf keeps at most 20 bytes (SHA-1); longer ids are
			 * truncated by it too. */
			size_t n = nhdr.n_descsz < BUILDID_MAX ? nhdr.n_descsz : BUILDID_MAX;

			memset(id, 0, BUILDID_MAX);
			memcpy(id, (const char *)data->d_buf + desc_off, n);
			*size = (uint8_t)n;
			return 0;
		}
		off = next;
	}
	return -ENOENT;
}

static int from_sections(Elf *elf, uint8_t id[BUILDID_MAX], uint8_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		if (scan_notes(elf_getdata(scn, NULL), id, size) == 0)
			return 0;
	}
	return -ENOENT;
}

static int from_segments(Elf *elf, uint8_t id[BUILDID_MAX], uint8_t *size)
{
	size_t i, phnum;
	GElf_Phdr phdr;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return -ENOENT;
	for (i = 0; i < phnum; i++) {
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_NOTE)
			continue;
		/* 8-byte aligned note segments (GNU property notes) use the
		 * other note layout. */
		data = elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset, phdr.p_filesz,
					    phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (scan_notes(data, id, size) == 0)
			return 0;
	}
	return -ENOENT;
}

int buildid_read_fd(int fd, uint8_t id[BUILDID_MAX], uint8_t *size)
{
	Elf *elf;
	int err;

	pthread_once(&libelf_once, libelf_init);
	if (!libelf_ok)
		return -ENOSYS;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EIO;
	if (elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	err = from_sections(elf, id, size);
	if (err)
		err = from_segments(elf, id, size);
out:
	elf_end(elf);
	return err;
}

int buildid_read(const char *path, uint8_t id[BUILDID_MAX], uint8_t *size)
{
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = buildid_read_fd(fd, id, size);
	close(fd);
	return err;
}

int buildid_read_kernel(uint8_t id[BUILDID_MAX], uint8_t *size)
{
	/* /sys/kernel/notes is the kernel's raw .notes section, not an ELF
	 * file: hand it to libelf as a block of 4-byte aligned notes. */
	char buf[4096];
	Elf_Data data;
	ssize_t n;
	int fd, err;

	pthread_once(&libelf_once, libelf_init);
	if (!libelf_ok)
		return -ENOSYS;
	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;

	memset(&data, 0, sizeof(data));
	data.d_buf = buf;
	data.d_type = ELF_T_NHDR;
	data.d_size = (size_t)n;
	data.d_version = EV_CURRENT;
	return scan_notes(&data, id, size);
}

void buildid_hex(const uint8_t *id, uint8_t size, char *out)
{
	static const char digits[] = "0123456789abcdef";
	uint8_t i;

	for (i = 0; i < size; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 0xf];
	}
	out[2 * size] = '\0';
}
