#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "buildid.h"
#include "elfopen.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* Scans one block of notes; 0 when the GNU build id was found in it. */
static int scan_notes(Elf_Data *data, uint8_t *id, size_t cap, size_t *len)
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
			size_t n = nhdr.n_descsz < cap ? nhdr.n_descsz : cap;

			memset(id, 0, cap);
			memcpy(id, (const char *)data->d_buf + desc_off, n);
			*len = n;
			return 0;
		}
		off = next;
	}
	return -ENOENT;
}

static int from_sections(Elf *elf, uint8_t *id, size_t cap, size_t *len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		if (scan_notes(elf_getdata(scn, NULL), id, cap, len) == 0)
			return 0;
	}
	return -ENOENT;
}

static int from_segments(Elf *elf, uint8_t *id, size_t cap, size_t *len)
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
		if (scan_notes(data, id, cap, len) == 0)
			return 0;
	}
	return -ENOENT;
}

int tr_buildid_from_elf(Elf *elf, uint8_t *id, size_t cap, size_t *len)
{
	if (from_sections(elf, id, cap, len) == 0)
		return 0;
	return from_segments(elf, id, cap, len);
}

int tr_buildid_read_fd(int fd, uint8_t *id, size_t cap, size_t *len)
{
	int err;
	Elf *elf = tr_elf_open_fd(fd, &err);

	if (!elf)
		return err;
	err = elf_kind(elf) == ELF_K_ELF ? tr_buildid_from_elf(elf, id, cap, len) : -ENOEXEC;
	elf_end(elf);
	return err;
}

int tr_buildid_read(const char *path, uint8_t *id, size_t cap, size_t *len)
{
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = tr_buildid_read_fd(fd, id, cap, len);
	close(fd);
	return err;
}

int tr_buildid_from_notes(const void *notes, size_t size, uint8_t *id, size_t cap, size_t *len)
{
	Elf_Data data;

	if (tr_libelf_ready() < 0)
		return -ENOTSUP;
	memset(&data, 0, sizeof(data));
	data.d_buf = (void *)notes;
	data.d_type = ELF_T_NHDR;
	data.d_size = size;
	data.d_version = EV_CURRENT;
	return scan_notes(&data, id, cap, len);
}

int tr_buildid_read_kernel(uint8_t *id, size_t cap, size_t *len)
{
	/* /sys/kernel/notes is the kernel's raw .notes section, not an ELF
	 * file. */
	uint32_t buf[1024]; /* notes are read in place: 4-byte aligned */
	ssize_t n;
	int fd;

	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		n = -errno;
	close(fd);
	if (n <= 0)
		return n < 0 ? (int)n : -EIO;
	return tr_buildid_from_notes(buf, (size_t)n, id, cap, len);
}

int tr_debuglink_from_elf(Elf *elf, const char **name, uint32_t *crc)
{
	const unsigned char *p, *c;
	size_t shstrndx, len, at;
	const char *ident;
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr shdr;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		sname = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (sname && strcmp(sname, ".gnu_debuglink") == 0)
			break;
	}
	if (!scn)
		return -ENOENT;
	data = elf_getdata(scn, NULL);
	ident = elf_getident(elf, NULL);
	if (!data || !data->d_buf || !ident)
		return -EINVAL;
	p = data->d_buf;
	len = strnlen((const char *)p, data->d_size);
	/* The name, its NUL, padding to 4 bytes, then the CRC in the
	 * object's byte order. */
	at = (len + 1 + 3) & ~(size_t)3;
	if (len == 0 || len == data->d_size || at + 4 > data->d_size ||
	    memchr(p, '/', len))
		return -EINVAL;
	c = p + at;
	if (ident[EI_DATA] == ELFDATA2MSB)
		*crc = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3];
	else
		*crc = (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 | (uint32_t)c[1] << 8 | c[0];
	*name = (const char *)p;
	return 0;
}

int tr_debuglink_crc_fd(int fd, uint32_t *crc)
{
	enum { CHUNK = 1 << 20 };
	unsigned char *buf;
	uLong sum = crc32(0L, Z_NULL, 0);
	struct stat st;
	off_t off = 0;
	int ret = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	buf = malloc(CHUNK);
	if (!buf)
		return -ENOMEM;
	/* Up to the size it had: a file that grows meanwhile is no debug
	 * file of a running object, and the CRC then simply differs. */
	while (off < st.st_size) {
		size_t want = st.st_size - off < CHUNK ? (size_t)(st.st_size - off) : CHUNK;
		ssize_t n = pread(fd, buf, want, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		sum = crc32(sum, buf, (uInt)n);
		off += n;
	}
	free(buf);
	*crc = (uint32_t)sum;
	return ret;
}

void tr_buildid_hex(const uint8_t *id, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 0xf];
	}
	out[2 * len] = '\0';
}
