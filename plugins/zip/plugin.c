/* The packager: turns the staging directory into NAME.trace.zip with libzip.
 * Entries keep their staged names at the archive root, files are streamed
 * from disk by libzip at zip_close() rather than read into memory, and the
 * archive is created 0600 because traces reveal code, paths and data.
 *
 * Entries the core deflated while they grew (archive_streamed: perf.data,
 * perf.data.txt)
 * are put together from pieces (lib/zpiece.h): the head the source may
 * have rewritten and the tail the core had not got to are deflated here,
 * the middle is the core's, and the CRC-32 is combined.  A source that
 * says in ZIP_SOURCE_STAT that its data is deflated already, with its
 * size and CRC, is copied by libzip as it is (zip_close.c add_data: no
 * decompression, no CRC pass, no recompression).  Whatever does not add
 * up (the file changed, the stream broke) makes it the plain path. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "tracerig-private/ext.h"

#include "lib/zpiece.h"
#include "outfile.h"
#include "pieces.h"

struct zip_packager {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	zip_t *za;
	struct tracerig_archive *ar; /* the one being written */
	int level;                   /* compression */
	int deflater;                /* enum deflater */
	int big_level;               /* what large entries are deflated at,
	                              * with TRACERIG_DEFLATE_FAST for ISA-L */
	struct tracerig_list stored; /* store */
	uint64_t entries, bytes_in;
	uint64_t streamed_entries, streamed_bytes;
};

enum deflater { DEFLATER_AUTO, DEFLATER_ISAL, DEFLATER_ZLIB };

/* Entries at least this large that were not deflated while they grew
 * (streaming off, flight snapshots, LTTng's traces) are deflated here by
 * the large entries' encoder, before zip_close() copies them, rather than
 * by libzip's zlib: that is where the time goes. */
#define BIG_ENTRY (1024 * 1024)

/* Already-compressed files gain nothing from deflate. */
static int stored_as_is(const struct tracerig_list *stored, const char *name)
{
	size_t name_len = strlen(name);

	for (size_t i = 0; i < stored->n; i++) {
		size_t len = strlen(stored->items[i]);

		if (len <= name_len && strcmp(name + name_len - len, stored->items[i]) == 0)
			return 1;
	}
	return 0;
}

/* libzip reports errors as its own codes plus, for I/O (ZIP_ER_WRITE,
 * ZIP_ER_CLOSE, ZIP_ER_TMPOPEN...), the system errno: that errno is the
 * cause to report (ENOSPC is "disk full", not an I/O error). */
static int zip_errno(zip_error_t *err)
{
	int sys = zip_error_code_system(err);

	if (zip_error_system_type(err) == ZIP_ET_SYS && sys > 0)
		return -sys;
	if (zip_error_code_zip(err) == ZIP_ER_MEMORY)
		return -ENOMEM;
	return -EIO;
}

/* What to do about an error writing the archive. */
static const char *write_hint(int err)
{
	switch (-err) {
	case ENOSPC: return "the file system is full: free space, or choose another place with -o";
	case EDQUOT: return "your disk quota is used up: free space, or choose another place with -o";
	case EIO: return "the device reported an error: see dmesg";
	case EROFS: return "the file system is read-only: choose another place with -o";
	}
	return "choose another place with -o";
}

/* A source for `name` that is deflated already (zip_close() copies it as
 * it is): put together from what the core deflated while it grew, or, for
 * a large entry it did not, deflated here by ISA-L.  NULL when neither:
 * libzip deflates it.  *from_core: put together from the core's, whose
 * *streamed_bytes it had deflated. */
static zip_source_t *deflated_source(struct zip_packager *z, const char *name, const char *path,
				     uint64_t size, int *from_core, uint64_t *streamed_bytes)
{
	struct tracerig_streamed sd;
	zip_source_t *src = NULL;
	const char *why = NULL;
	int ret;

	*from_core = 0;
	*streamed_bytes = 0;
	if (z->level == 0 || stored_as_is(&z->stored, name))
		return NULL;
	ret = tracerig_internal(z->svc)->archive_streamed(z->ctx, z->ar, name, &sd);
	if (ret == 0 && sd.level == z->big_level) {
		src = zp_pieces_source(z->za, z->big_level, path, &sd, &why);
		if (src) {
			*from_core = 1;
			*streamed_bytes = sd.to - sd.from;
			return src;
		}
		z->svc->run->log(z->ctx, TRACERIG_LOG_WARN,
				 "%s: what was deflated before "
				 "packaging is not used (%s): deflating it whole",
				 name, why);
	} else if (ret == -EIO) {
		z->svc->run->log(z->ctx, TRACERIG_LOG_INFO,
				 "%s: deflating it whole (deflating it "
				 "as it grew had stopped)",
				 name);
	}
	if (size < BIG_ENTRY || !(z->big_level & TRACERIG_DEFLATE_FAST))
		return NULL;
	src = zp_pieces_source(z->za, z->big_level, path, NULL, &why);
	if (src) {
		zip_stat_t st;

		if (zip_source_stat(src, &st) == 0)
			z->svc->run->log(z->ctx, TRACERIG_LOG_INFO,
					 "%s: deflated whole by ISA-L at "
					 "packaging (%llu bytes to %llu)",
					 name, (unsigned long long)st.size,
					 (unsigned long long)st.comp_size);
	} else {
		z->svc->run->log(z->ctx, TRACERIG_LOG_WARN,
				 "%s: cannot deflate it with ISA-L (%s): "
				 "libzip deflates it",
				 name, why);
	}
	return src;
}

static int add_entry(void *arg, const char *name, const char *path, uint64_t size)
{
	struct zip_packager *z = arg;
	uint64_t streamed_bytes;
	int from_core, ret;
	zip_source_t *src = deflated_source(z, name, path, size, &from_core, &streamed_bytes);
	int deflated = src != NULL;
	zip_int64_t idx;

	/* Length -1: libzip reads to EOF when writing, so a file still growing
	 * cannot make the archive inconsistent. */
	if (!src)
		src = zip_source_file(z->za, path, 0, -1);
	if (!src) {
		z->svc->run->log(z->ctx, TRACERIG_LOG_ERROR, "cannot read %s: %s", path,
				 zip_strerror(z->za));
		return zip_errno(zip_get_error(z->za));
	}
	idx = zip_file_add(z->za, name, src, ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE);
	if (idx < 0) {
		ret = zip_errno(zip_get_error(z->za));
		z->svc->run->log(z->ctx, TRACERIG_LOG_ERROR, "cannot add %s: %s", name,
				 zip_strerror(z->za));
		zip_source_free(src);
		return ret;
	}
	/* One mode for every entry, whatever the staged file's or libzip's
	 * default for a source that is no file (0666): unzip creates the
	 * files readable by all, writable by their owner only. */
	if (zip_file_set_external_attributes(z->za, (zip_uint64_t)idx, 0, ZIP_OPSYS_UNIX,
					     (zip_uint32_t)(S_IFREG | 0644) << 16) < 0)
		z->svc->run->log(z->ctx, TRACERIG_LOG_WARN, "%s: cannot set its mode: %s", name,
				 zip_strerror(z->za));
	/* A deflated source keeps the default method: libzip takes the
	 * source's deflate as it is. */
	if (deflated) {
		z->streamed_entries += (uint64_t)from_core;
		z->streamed_bytes += streamed_bytes;
	} else if (stored_as_is(&z->stored, name) || z->level == 0)
		zip_set_file_compression(z->za, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
	else
		zip_set_file_compression(z->za, (zip_uint64_t)idx, ZIP_CM_DEFLATE,
					 (zip_uint32_t)z->level);
	z->entries++;
	z->bytes_in += size;
	return 0;
}

/* Opens the archive's file; the fd, or -errno (logged). */
static int open_output(struct zip_packager *z, const char *out)
{
	struct stat st;
	int fd, ret;

	/* The core has created `out` (O_EXCL, 0600) and renames it into place
	 * once written: libzip writes into it (outfile.h).  Never follow a
	 * link or open anything but a regular file here; create the file only
	 * if it is not there yet, and then exclusively. */
	fd = open(out, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = fd < 0 ? -errno : -EEXIST;
		z->svc->run->log(z->ctx, TRACERIG_LOG_ERROR, "cannot create %s: %s", out,
				 fd < 0 ? strerror(-ret) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return ret;
	}
	return fd;
}

/* Opens z->za on fd, empty; 0 or -errno (logged). */
static int open_archive(struct zip_packager *z, int fd, const char *out)
{
	zip_source_t *src;
	zip_error_t zerr;
	int ret;

	zip_error_init(&zerr);
	src = zo_file_source(fd, &zerr);
	z->za = src ? zip_open_from_source(src, ZIP_CREATE | ZIP_TRUNCATE, &zerr) : NULL;
	if (!z->za) {
		z->svc->run->log(z->ctx, TRACERIG_LOG_ERROR, "cannot open %s: %s", out,
				 zip_error_strerror(&zerr));
		ret = zip_errno(&zerr);
		zip_error_fini(&zerr);
		if (src)
			zip_source_free(src);
		return ret;
	}
	zip_error_fini(&zerr);
	return 0;
}

/* Adds the archive's entries to z->za and writes it out; 0 or -errno.
 * z->za is gone after, whatever happened. */
static int write_entries(struct zip_packager *z, struct tracerig_archive *ar, const char *out)
{
	int ret;

	z->ar = ar;
	ret = z->svc->archive->foreach (ar, add_entry, z);
	if (ret < 0) {
		zip_discard(z->za);
		z->za = NULL;
		return ret;
	}
	if (zip_close(z->za) < 0) {
		ret = zip_errno(zip_get_error(z->za));
		z->svc->run->log(z->ctx, TRACERIG_LOG_ERROR, "cannot write %s: %s (%s)", out,
				 zip_strerror(z->za), write_hint(ret));
		zip_discard(z->za);
		z->za = NULL;
		return ret;
	}
	z->za = NULL;
	return 0;
}

/* Keeps the written archive private and counts its size; 0 or -errno. */
static int seal_output(struct zip_packager *z, int fd, const char *out)
{
	struct stat st;
	int ret;

	if (fstat(fd, &st) == 0) {
		if ((st.st_mode & 0777) != 0600 && fchmod(fd, 0600) < 0) {
			ret = -errno;
			z->svc->run->log(z->ctx, TRACERIG_LOG_ERROR, "cannot make %s private: %s",
					 out, strerror(errno));
			return ret;
		}
		z->svc->run->counter_set(z->ctx, "bytes_out", (uint64_t)st.st_size);
	}
	return 0;
}

static int zip_flush(void *state, struct tracerig_archive *ar)
{
	struct zip_packager *z = state;
	const char *out = z->svc->archive->output(ar);
	int fd, ret;

	fd = open_output(z, out);
	if (fd < 0)
		return fd;
	ret = open_archive(z, fd, out);
	if (!ret)
		ret = write_entries(z, ar, out);
	if (ret < 0) {
		close(fd);
		unlink(out);
		return ret;
	}
	ret = seal_output(z, fd, out);
	close(fd);
	if (ret < 0)
		return ret;
	z->svc->run->counter_set(z->ctx, "entries", z->entries);
	z->svc->run->counter_set(z->ctx, "bytes_in", z->bytes_in);
	z->svc->run->counter_set(z->ctx, "streamed_entries", z->streamed_entries);
	z->svc->run->counter_set(z->ctx, "streamed_bytes", z->streamed_bytes);
	return 0;
}

static int zip_check(const struct tracerig_services *svc, struct tracerig_ctx *ctx, char *advice,
		     size_t len)
{
	(void)svc;
	(void)ctx;
	snprintf(advice, len, "libzip %s, large entries deflated by %s", zip_libzip_version(),
		 tr_zpiece_level_ok(6 | TR_ZPIECE_FAST) == 0 ? "ISA-L or zlib" : "zlib");
	return 0;
}

static int zip_init(const struct tracerig_services *svc, struct tracerig_ctx *ctx, void **state)
{
	struct zip_packager *z = calloc(1, sizeof(*z));
	int ret;

	if (!z)
		return -ENOMEM;
	z->svc = svc;
	z->ctx = ctx;
	*state = z;
	ret = svc->run->config_bind(ctx, z);
	if (ret)
		return ret;
	z->big_level = z->level;
	if (z->level > 0 && z->deflater != DEFLATER_ZLIB) {
		if (tr_zpiece_level_ok(z->level | TR_ZPIECE_FAST) == 0)
			z->big_level |= TRACERIG_DEFLATE_FAST;
		else if (z->deflater == DEFLATER_ISAL) {
			svc->run->log(
				ctx, TRACERIG_LOG_ERROR,
				"[zip] deflate = isal: this tracerig "
				"was built without ISA-L (rebuild with libisal-dev installed), "
				"or set deflate = zlib or auto");
			return -ENOTSUP;
		}
	}
	if (z->level > 0)
		svc->run->log(ctx, TRACERIG_LOG_DEBUG, "large entries are deflated by %s",
			      z->big_level & TRACERIG_DEFLATE_FAST ? "ISA-L" : "zlib");
	/* Entries the sources say only grow are deflated while collecting,
	 * at this level (add_entry puts them together). */
	return tracerig_internal(svc)->archive_stream_level(ctx, z->big_level);
}

static void zip_fini(void *state)
{
	struct zip_packager *z = state;

	if (z->za)
		zip_discard(z->za);
	free(z);
}

/* One key per paragraph, as the reference lists them. */
/* clang-format off */
static const struct tracerig_key zip_keys[] = {
	{ .name = "compression", .type = TRACERIG_KEY_INT, .default_value = "6", .max = 9,
	  TRACERIG_BIND(struct zip_packager, level),
	  .description = "Deflate level: 0 stores everything, 9 is smallest and slowest." },
	{ .name = "deflate", .type = TRACERIG_KEY_ENUM, .default_value = "auto",
	  .choices = "auto,isal,zlib", TRACERIG_BIND(struct zip_packager, deflater),
	  .description = "Encoder of the large entries (perf.data, perf.data.txt, traces): "
			 "isal (Intel ISA-L: several times faster, about a quarter larger), "
			 "zlib (smallest), auto (isal when built with it)." },
	{ .name = "store", .type = TRACERIG_KEY_LIST, .default_value = ".gz,.zip,.xz,.zst,.bz2",
	  TRACERIG_BIND(struct zip_packager, stored),
	  .description = "Entry name suffixes stored without compression (already compressed)." },
	{ .name = NULL },
};
/* clang-format on */

TRACERIG_PLUGIN = {
	.abi_version = TRACERIG_ABI_VERSION,
	.name = "zip",
	.version = PACKAGE_VERSION,
	.kind = TRACERIG_PLUGIN_PACKAGER,
	.description = "writes the .trace.zip archive (libzip)",
	.package = "tracerig",
	.keys = zip_keys,
	.internal_version = TRACERIG_INTERNAL_VERSION,
	.check = zip_check,
	.init = zip_init,
	.flush = zip_flush,
	.fini = zip_fini,
};
