/* Deflated pieces put together into one zip entry (lib/zpiece.h,
 * plugins/zip/pieces.c) and the core's thread that deflates a staged file
 * while it grows (core/archive/stream.c): the entry reads back byte for byte with
 * libzip, unzip -t and python3's zipfile, however the file was cut into
 * head, streamed middle and tail, and whichever encoder (zlib, ISA-L)
 * wrote which piece; and what does not add up is refused. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include "../testing.h"
#include "core/archive/stream.h"
#include "core/archive/writeback.h"
#include "lib/zpiece.h"
#include "plugins/zip/pieces.h"

static char dir[1024]; /* short enough for every name made in it */
static unsigned rng = 12345;

/* Half random, half repeated text: compressible, but not trivially. */
static void fill(unsigned char *p, size_t n)
{
	static const char text[] = "cpu-clock: ffffffff81234567 do_syscall_64+0x5c ([kernel.kallsyms])\n";

	for (size_t i = 0; i < n; i++) {
		rng = rng * 1103515245u + 12345u;
		p[i] = (i / 4096) % 2 ? (unsigned char)(rng >> 16) : (unsigned char)text[i % (sizeof(text) - 1)];
	}
}

static int append(int fd, const unsigned char *p, size_t n)
{
	return write(fd, p, n) == (ssize_t)n ? 0 : -1;
}

/* Writes `zip` with one entry `name` from `src` (compression left at the
 * default, as the packager does), then checks it with libzip, unzip -t and
 * python3's zipfile against `want`. */
static void check_zip(const char *zip, zip_source_t *src, zip_t *za, const unsigned char *want,
		      size_t len)
{
	char cmd[2 * PATH_MAX];
	zip_stat_t zs, pieces;
	zip_file_t *zf;
	unsigned char *got = malloc(len + 1);
	zip_int64_t n;
	int err;

	/* What the pieces say they are: deflated already, this long. */
	EXPECT_EQ_INT(0, zip_source_stat(src, &pieces));
	EXPECT_EQ_INT(ZIP_CM_DEFLATE, pieces.comp_method);
	EXPECT_TRUE(zip_file_add(za, "perf.data", src, ZIP_FL_ENC_UTF_8) == 0);
	EXPECT_EQ_INT(0, zip_close(za));
	za = zip_open(zip, ZIP_RDONLY, &err);
	EXPECT_TRUE(za != NULL);
	if (!za || !got) {
		free(got);
		return;
	}
	EXPECT_EQ_INT(0, zip_stat(za, "perf.data", 0, &zs));
	EXPECT_EQ_INT(ZIP_CM_DEFLATE, zs.comp_method);
	EXPECT_EQ_INT(len, zs.size);
	/* Copied as they are, not decompressed and deflated again. */
	EXPECT_EQ_INT(pieces.comp_size, zs.comp_size);
	EXPECT_EQ_INT(crc32(crc32(0, Z_NULL, 0), want, (uInt)len), zs.crc);
	zf = zip_fopen(za, "perf.data", 0);
	EXPECT_TRUE(zf != NULL);
	n = zf ? zip_fread(zf, got, len + 1) : -1;
	EXPECT_EQ_INT(len, n);
	EXPECT_TRUE(n == (zip_int64_t)len && memcmp(got, want, len) == 0);
	if (zf)
		zip_fclose(zf);
	zip_close(za);
	free(got);
	snprintf(cmd, sizeof(cmd), "unzip -tq '%s' >/dev/null", zip);
	EXPECT_EQ_INT(0, system(cmd));
	snprintf(cmd, sizeof(cmd), "python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); "
		 "sys.exit(z.testzip() is not None)' '%s'", zip);
	EXPECT_EQ_INT(0, system(cmd));
}

/* check_zip on a new `zip` whose entry is the pieces zp_pieces_source
 * makes of `path` and `sd` (what the core's thread answered, or NULL). */
static void check_pieces_zip(const char *zip, int level, const char *path,
			     const struct tracerig_streamed *sd, const unsigned char *want, size_t len)
{
	const char *why = NULL;
	zip_source_t *src;
	int err;
	zip_t *za = zip_open(zip, ZIP_CREATE | ZIP_TRUNCATE, &err);

	EXPECT_TRUE(za != NULL);
	src = za ? zp_pieces_source(za, level, path, sd, &why) : NULL;
	if (!src) {
		TEST_FAIL("no source for %s: %s", path, why ? why : "?");
		if (za)
			zip_discard(za);
		return;
	}
	check_zip(zip, src, za, want, len);
}

/* A file of `len` bytes: head [0, from), then the middle appended in
 * `n_pieces` pieces deflated at `mid_level` as the core's thread does (one
 * stream, a sync flush per piece), then the head rewritten and a tail of
 * `tail` bytes appended; the entry put together from them, its head and
 * tail deflated at `ends_level`. */
static void pieces_case(size_t from, size_t middle, size_t n_pieces, size_t tail, int mid_level,
			int ends_level)
{
	char path[PATH_MAX], side[PATH_MAX], zip[PATH_MAX];
	size_t len = from + middle + tail;
	unsigned char *data = malloc(len ? len : 1);
	struct tracerig_streamed sd = { 0 };
	struct tr_zpiece zp;
	struct stat sb;
	int fd, out;

	snprintf(path, sizeof(path), "%s/perf.data", dir);
	snprintf(side, sizeof(side), "%s/side", dir);
	snprintf(zip, sizeof(zip), "%s/t.zip", dir);
	unlink(zip);
	fill(data, len);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	out = open(side, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	EXPECT_TRUE(fd >= 0 && out >= 0);
	/* A placeholder head, rewritten once the rest is there. */
	memset(data, 0, from);
	EXPECT_EQ_INT(0, append(fd, data, from));
	EXPECT_EQ_INT(0, tr_zpiece_begin(&zp, mid_level, out));
	/* The encoder asked for is the one that runs. */
	EXPECT_EQ_INT(!!(mid_level & TR_ZPIECE_FAST), zp.isal != NULL);
	for (size_t i = 0, at = from; i < n_pieces; i++) {
		size_t n = i + 1 == n_pieces ? from + middle - at : middle / n_pieces;

		EXPECT_EQ_INT(0, append(fd, data + at, n));
		EXPECT_EQ_INT(n, tr_zpiece_feed_fd(&zp, fd, at, n));
		EXPECT_EQ_INT(0, tr_zpiece_flush(&zp, 0));
		at += n;
	}
	fill(data, from);
	EXPECT_TRUE(pwrite(fd, data, from, 0) == (ssize_t)from);
	EXPECT_EQ_INT(0, append(fd, data + from + middle, tail));
	EXPECT_EQ_INT(0, fstat(fd, &sb));
	sd.path = side;
	sd.comp_size = zp.out;
	sd.from = from;
	sd.to = from + middle;
	sd.crc = zp.crc;
	sd.level = mid_level;
	sd.dev = (uint64_t)sb.st_dev;
	sd.ino = (uint64_t)sb.st_ino;
	tr_zpiece_end(&zp);
	close(out);
	close(fd);
	check_pieces_zip(zip, ends_level, path, &sd, data, len);
	free(data);
}

DEF_TEST(pieces_head_middle_tail_read_back_whole)
{
	pieces_case(4096, 3 << 20, 7, 100000, 6, 6);
}

DEF_TEST(one_piece_and_no_tail)
{
	pieces_case(104, 1 << 20, 1, 0, 6, 6);
}

DEF_TEST(no_middle_at_all)
{
	pieces_case(104, 0, 0, 500000, 1, 1);
}

DEF_TEST(no_head_and_level_9)
{
	pieces_case(0, 600000, 3, 1, 9, 9);
}

DEF_TEST(pieces_larger_than_the_read_buffer)
{
	pieces_case(65536, 5 * TR_ZPIECE_IN_SIZE + 3, 2, TR_ZPIECE_IN_SIZE + 1, 6, 6);
}

#define FAST TR_ZPIECE_FAST

/* ISA-L (zip.deflate = isal), at each of its levels, and pieces of both
 * encoders one after the other in one entry. */
DEF_TEST(isal_pieces_read_back_whole)
{
	pieces_case(4096, 3 << 20, 7, 100000, 6 | FAST, 6 | FAST);
	pieces_case(104, 1 << 20, 1, 0, 1 | FAST, 1 | FAST);
	pieces_case(0, 600000, 3, 1, 9 | FAST, 9 | FAST);
	pieces_case(65536, 5 * TR_ZPIECE_IN_SIZE + 3, 2, TR_ZPIECE_IN_SIZE + 1, 6 | FAST,
		    6 | FAST);
}

DEF_TEST(isal_and_zlib_pieces_in_one_entry)
{
	pieces_case(4096, 2 << 20, 5, 300000, 6 | FAST, 6);
	pieces_case(4096, 2 << 20, 5, 300000, 6, 6 | FAST);
}

/* The session's streams: one per session, a fresh one after each free. */
static struct tr_stream *stream;

static struct tr_stream *the_stream(void)
{
	if (!stream)
		stream = tr_stream_new();
	return stream;
}

static void forget_stream(void)
{
	tr_stream_free(stream);
	stream = NULL;
}

/* A level this build cannot write is refused, not written some other way. */
DEF_TEST(levels_out_of_range_are_refused)
{
	struct tr_zpiece zp;

	EXPECT_EQ_INT(-EINVAL, tr_zpiece_level_ok(0));
	EXPECT_EQ_INT(-EINVAL, tr_zpiece_level_ok(10 | FAST));
	EXPECT_EQ_INT(-EINVAL, tr_zpiece_begin(&zp, 10, 1));
	EXPECT_EQ_INT(-EINVAL, tr_stream_set_level(the_stream(), 0 | FAST));
	EXPECT_EQ_INT(0, tr_stream_set_level(the_stream(), 0));
#ifndef HAVE_ISAL
	EXPECT_EQ_INT(-ENOTSUP, tr_zpiece_begin(&zp, 6 | FAST, 1));
	EXPECT_EQ_INT(-ENOTSUP, tr_stream_set_level(the_stream(), 6 | FAST));
#endif
}

/* A large entry nothing deflated while it grew, deflated whole by ISA-L
 * for the packager (sd NULL). */
DEF_TEST(a_whole_file_deflated_by_isal)
{
	char path[PATH_MAX], zip[PATH_MAX];
	size_t len = 3 * TR_ZPIECE_IN_SIZE + 17;
	unsigned char *data = malloc(len);
	int fd;

	snprintf(path, sizeof(path), "%s/lttng.data", dir);
	snprintf(zip, sizeof(zip), "%s/w.zip", dir);
	unlink(zip);
	fill(data, len);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT_EQ_INT(0, append(fd, data, len));
	close(fd);
	check_pieces_zip(zip, 6 | FAST, path, NULL, data, len);
	free(data);
}

/* The staged file changed in ways streaming cannot cover: refused. */
DEF_TEST(a_file_shorter_or_replaced_is_refused)
{
	char path[PATH_MAX], side[PATH_MAX], zip[PATH_MAX];
	unsigned char data[8192];
	struct tracerig_streamed sd = { 0 };
	struct stat sb;
	const char *why = NULL;
	zip_t *za;
	int fd, err;

	snprintf(path, sizeof(path), "%s/perf.data", dir);
	snprintf(side, sizeof(side), "%s/side", dir);
	snprintf(zip, sizeof(zip), "%s/r.zip", dir);
	fill(data, sizeof(data));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT_EQ_INT(0, append(fd, data, sizeof(data)));
	fstat(fd, &sb);
	close(fd);
	close(open(side, O_WRONLY | O_CREAT | O_TRUNC, 0600));
	sd = (struct tracerig_streamed){ .path = side, .from = 0, .to = sizeof(data) + 1,
					 .level = 6, .dev = (uint64_t)sb.st_dev,
					 .ino = (uint64_t)sb.st_ino };
	za = zip_open(zip, ZIP_CREATE | ZIP_TRUNCATE, &err);
	EXPECT_TRUE(zp_pieces_source(za, 6, path, &sd, &why) == NULL);
	EXPECT_EQ_STR("the staged file shrank", why);
	sd.to = 0;
	sd.ino++;
	EXPECT_TRUE(zp_pieces_source(za, 6, path, &sd, &why) == NULL);
	EXPECT_EQ_STR("the staged file was replaced", why);
	sd.ino--;
	sd.comp_size = 10;
	EXPECT_TRUE(zp_pieces_source(za, 6, path, &sd, &why) == NULL);
	EXPECT_EQ_STR("the deflated part is short", why);
	zip_discard(za);
}

/* The core's thread follows a file a writer appends to (and whose head
 * it rewrites at the end), and what it hands the packager makes the
 * whole file.  TRACERIG_TEST_STREAM=drain: it deflates all there is when
 * stopped, so the test does not depend on how much it got to before.
 * `freeing` 1: the writer released the file and the session allows
 * freeing, and the thread frees without waiting for the kernel's flusher
 * ("force", as without cachestat): what was deflated is punched out of it,
 * the pieces still make the whole file, and so do they when read back
 * from the state file (the watchdog's way); 2: released, but freeing not
 * allowed (keep_staging); 3: as 1 but the thread waits for the flusher,
 * whose work the writer's fdatasync does here. */
static void core_thread_case(int level, int freeing)
{
	char staging[1100], path[PATH_MAX], zip[PATH_MAX], side[PATH_MAX];
	struct tracerig_streamed again;
	struct stat sb;
	size_t len = 6 << 20, from = 512;
	unsigned char *data = malloc(len);
	struct tracerig_streamed sd;
	int fd;

	snprintf(staging, sizeof(staging), "%s/staging.%x.%d", dir, (unsigned)level, freeing);
	mkdir(staging, 0700);
	snprintf(path, sizeof(path), "%s/perf.data", staging);
	snprintf(zip, sizeof(zip), "%s/c.%x.%d.zip", dir, (unsigned)level, freeing);
	fill(data, len);
	setenv("TRACERIG_TEST_STREAM", freeing == 1 || freeing == 2 ? "drain,force" : "drain", 1);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT_EQ_INT(0, append(fd, data, from + 1000));
	EXPECT_EQ_INT(-ENOTSUP, tr_stream_follow(the_stream(), staging, "perf.data", from));
	EXPECT_EQ_INT(0, tr_stream_set_level(the_stream(), level));
	EXPECT_EQ_INT(0, tr_stream_follow(the_stream(), staging, "perf.data", from));
	EXPECT_EQ_INT(-EEXIST, tr_stream_follow(the_stream(), staging, "perf.data", from));
	EXPECT_EQ_INT(-EAGAIN, tr_stream_result(the_stream(), staging, "perf.data", &sd));
	EXPECT_EQ_INT(-ENOENT, tr_stream_release(the_stream(), staging, "other", UINT64_MAX));
	if (freeing) {
		tr_stream_may_free(the_stream(), freeing != 2);
		EXPECT_EQ_INT(0, tr_stream_release(the_stream(), staging, "perf.data", UINT64_MAX));
	}
	for (size_t at = from + 1000; at < len - 4096; at += 300000)
		EXPECT_EQ_INT(0, append(fd, data + at, at + 300000 < len - 4096 ? 300000
									: len - 4096 - at));
	if (freeing == 3)
		EXPECT_EQ_INT(0, fdatasync(fd));
	tr_stream_stop(the_stream());
	/* After the stop: the rewritten head and the last bytes. */
	EXPECT_TRUE(pwrite(fd, data, from, 0) == (ssize_t)from);
	EXPECT_EQ_INT(0, append(fd, data + len - 4096, 4096));
	close(fd);
	EXPECT_EQ_INT(-ENOENT, tr_stream_result(the_stream(), staging, "other", &sd));
	EXPECT_EQ_INT(0, tr_stream_result(the_stream(), staging, "perf.data", &sd));
	EXPECT_EQ_INT(from, sd.from);
	EXPECT_EQ_INT(len - 4096, sd.to);
	EXPECT_EQ_INT(level, sd.level);
	/* The side file is under the hidden directory, never an entry. */
	EXPECT_TRUE(strstr(sd.path, "/" TR_STREAM_DIR "/") != NULL);
	/* Freed: whole blocks of [from, to) only, the size kept. */
	EXPECT_EQ_INT(0, stat(path, &sb));
	EXPECT_EQ_INT(len, sb.st_size);
	if (freeing == 1 || freeing == 3)
		EXPECT_TRUE((uint64_t)sb.st_blocks * 512 < 64 * 1024);
	else
		EXPECT_TRUE((uint64_t)sb.st_blocks * 512 >= len);
	check_pieces_zip(zip, level, path, &sd, data, len);
	/* The watchdog's way: a process with nothing followed reads back the
	 * state file, after its packager set the level.  (sd's path goes
	 * with what it was answered from.) */
	snprintf(side, sizeof(side), "%s", sd.path);
	forget_stream();
	EXPECT_EQ_INT(0, tr_stream_set_level(the_stream(), level));
	EXPECT_EQ_INT(1, tr_stream_recover(the_stream(), staging));
	EXPECT_EQ_INT(-EPERM, tr_stream_follow(the_stream(), staging, "perf.data", from));
	EXPECT_EQ_INT(0, tr_stream_result(the_stream(), staging, "perf.data", &again));
	EXPECT_EQ_INT(sd.from, again.from);
	EXPECT_EQ_INT(sd.to, again.to);
	EXPECT_EQ_INT(sd.comp_size, again.comp_size);
	EXPECT_EQ_INT(sd.crc, again.crc);
	EXPECT_EQ_INT(sd.ino, again.ino);
	EXPECT_TRUE(strcmp(side, again.path) == 0);
	snprintf(zip, sizeof(zip), "%s/r.%x.%d.zip", dir, (unsigned)level, freeing);
	check_pieces_zip(zip, level, path, &again, data, len);
	forget_stream();
	free(data);
}

/* A staging directory `sub` holding perf.data of `n` bytes of `data`, for
 * the core's thread in TRACERIG_TEST_STREAM mode `mode`. */
static void make_staged(char *staging, size_t len, const char *sub, unsigned char *data, size_t n,
			const char *mode)
{
	char path[PATH_MAX];
	int fd;

	snprintf(staging, len, "%s/%s", dir, sub);
	mkdir(staging, 0700);
	snprintf(path, sizeof(path), "%s/perf.data", staging);
	fill(data, n);
	setenv("TRACERIG_TEST_STREAM", mode, 1);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT_EQ_INT(0, append(fd, data, n));
	if (fd >= 0)
		close(fd);
}

/* A state file that does not check out is not used: the entry is then
 * deflated whole, as without one. */
DEF_TEST(a_torn_or_foreign_state_file_is_not_used)
{
	char staging[1100], state[PATH_MAX];
	unsigned char data[300000], byte;
	struct tracerig_streamed sd;
	int fd;

	make_staged(staging, sizeof(staging), "staging3", data, sizeof(data), "drain");
	EXPECT_EQ_INT(0, tr_stream_set_level(the_stream(), 6));
	EXPECT_EQ_INT(0, tr_stream_follow(the_stream(), staging, "perf.data", 104));
	tr_stream_stop(the_stream());
	forget_stream();
	snprintf(state, sizeof(state), "%s/" TR_STREAM_DIR "/perf.data.state", staging);
	/* Another level than this packager's: not this session's pieces. */
	EXPECT_EQ_INT(0, tr_stream_set_level(the_stream(), 9));
	EXPECT_EQ_INT(0, tr_stream_recover(the_stream(), staging));
	EXPECT_EQ_INT(-ENOENT, tr_stream_result(the_stream(), staging, "perf.data", &sd));
	forget_stream();
	/* One byte changed: the check fails. */
	fd = open(state, O_RDWR);
	EXPECT_TRUE(fd >= 0 && pread(fd, &byte, 1, 20) == 1);
	byte ^= 1;
	EXPECT_TRUE(pwrite(fd, &byte, 1, 20) == 1);
	close(fd);
	EXPECT_EQ_INT(0, tr_stream_set_level(the_stream(), 6));
	EXPECT_EQ_INT(0, tr_stream_recover(the_stream(), staging));
	EXPECT_EQ_INT(-ENOENT, tr_stream_result(the_stream(), staging, "perf.data", &sd));
	forget_stream();
}

DEF_TEST(the_core_thread_follows_a_growing_file)
{
	core_thread_case(6, 0);
}

DEF_TEST(the_core_thread_follows_a_growing_file_with_isal)
{
	core_thread_case(6 | FAST, 0);
}

DEF_TEST(what_was_deflated_of_a_released_file_is_freed)
{
	core_thread_case(6, 1);
}

DEF_TEST(nothing_is_freed_unless_the_session_allows_it)
{
	core_thread_case(6, 2);
}

DEF_TEST(what_the_kernel_wrote_back_is_freed_without_forcing)
{
	core_thread_case(6, 3);
}

/* Once fdatasync returned nothing of the file is left to write back. */
DEF_TEST(unwritten_pages_are_none_after_fdatasync)
{
	char path[PATH_MAX];
	unsigned char data[256 << 10];
	int fd;

	snprintf(path, sizeof(path), "%s/unwritten", dir);
	fill(data, sizeof(data));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT_TRUE(fd >= 0);
	EXPECT_EQ_INT(0, append(fd, data, sizeof(data)));
	EXPECT_EQ_INT(0, fdatasync(fd));
	EXPECT_EQ_INT(0, tr_unwritten_pages(fd, 0, sizeof(data)));
	close(fd);
	EXPECT_EQ_INT(-EBADF, tr_unwritten_pages(fd, 0, sizeof(data)));
}

/* A round takes at most 64 MiB of an entry while collecting: 130 MiB
 * there before the thread's first round are three pieces (64, 64, 2),
 * each saved (and so freeable) as it ends, not one that ends after all
 * of it was deflated.  The count is the state record's (struct state_rec
 * in core/archive/stream.c: magic[8], from, to, comp_size, pieces). */
DEF_TEST(a_round_takes_at_most_64_mib_of_an_entry)
{
	char staging[1100], path[PATH_MAX], state[PATH_MAX];
	static unsigned char chunk[1 << 20];
	const uint64_t len = 130ull << 20, from = 512;
	uint64_t rec[5] = { 0 };
	struct tracerig_streamed sd;
	uLong want = crc32(0, Z_NULL, 0);
	int fd, done = 0;

	snprintf(staging, sizeof(staging), "%s/staging-rounds", dir);
	mkdir(staging, 0700);
	snprintf(path, sizeof(path), "%s/perf.data", staging);
	snprintf(state, sizeof(state), "%s/" TR_STREAM_DIR "/perf.data.state", staging);
	fill(chunk, sizeof(chunk));
	setenv("TRACERIG_TEST_STREAM", "", 1);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT_TRUE(fd >= 0);
	for (uint64_t at = 0; at < len; at += sizeof(chunk)) {
		EXPECT_EQ_INT(0, append(fd, chunk, sizeof(chunk)));
		want = at ? crc32(want, chunk, sizeof(chunk))
			  : crc32(want, chunk + from, (uInt)(sizeof(chunk) - from));
	}
	EXPECT_EQ_INT(0, tr_stream_set_level(the_stream(), 1));
	EXPECT_EQ_INT(0, tr_stream_follow(the_stream(), staging, "perf.data", from));
	/* Until the state says all of it is deflated (2 minutes at most). */
	for (int i = 0; i < 1200 && !done; i++) {
		int sfd = open(state, O_RDONLY);

		done = sfd >= 0 && pread(sfd, rec, sizeof(rec), 0) == (ssize_t)sizeof(rec) &&
		       rec[2] == len;
		if (sfd >= 0)
			close(sfd);
		if (!done)
			usleep(100000);
	}
	EXPECT_TRUE(done);
	EXPECT_EQ_INT(3, rec[4]);
	tr_stream_stop(the_stream());
	EXPECT_EQ_INT(0, tr_stream_result(the_stream(), staging, "perf.data", &sd));
	EXPECT_EQ_INT(from, sd.from);
	EXPECT_EQ_INT(len, sd.to);
	EXPECT_EQ_INT(want, sd.crc);
	forget_stream();
	close(fd);
	unlink(path);
}

DEF_TEST(a_write_error_breaks_the_stream)
{
	char staging[1100];
	unsigned char data[100000];
	struct tracerig_streamed sd;

	make_staged(staging, sizeof(staging), "staging2", data, sizeof(data), "fault");
	EXPECT_EQ_INT(0, tr_stream_set_level(the_stream(), 6));
	EXPECT_EQ_INT(0, tr_stream_follow(the_stream(), staging, "perf.data", 104));
	tr_stream_stop(the_stream());
	EXPECT_EQ_INT(-EIO, tr_stream_result(the_stream(), staging, "perf.data", &sd));
	forget_stream();
}

/* /proc/self/task/TID/FILE into buf (NUL-terminated; empty when
 * unreadable). */
static void read_task_file(const char *tid, const char *file, char *buf, size_t len)
{
	char path[300];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%s/%s", tid, file);
	f = fopen(path, "r");
	n = f ? fread(buf, 1, len - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
}

/* The nice value of this process's thread called `name` (/proc's stat,
 * field 19), or -100 when there is none. */
static int thread_nice(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int nice = -100;

	while (d && nice == -100 && (de = readdir(d))) {
		char buf[1024];
		const char *p;
		int field = 2;

		if (de->d_name[0] == '.')
			continue;
		read_task_file(de->d_name, "comm", buf, sizeof(buf));
		buf[strcspn(buf, "\n")] = '\0';
		if (strcmp(buf, name) != 0)
			continue;
		read_task_file(de->d_name, "stat", buf, sizeof(buf));
		/* After the comm's closing parenthesis, fields 3 on. */
		for (p = strrchr(buf, ')'); p && *p && field < 19; p++)
			if (*p == ' ')
				field++;
		if (p && field == 19)
			nice = atoi(p);
	}
	if (d)
		closedir(d);
	return nice;
}

/* Waits (up to 20 s) for the thread `name` to be at nice `want`. */
static int wait_thread_nice(const char *name, int want)
{
	for (int i = 0; i < 2000; i++) {
		if (thread_nice(name) == want)
			return 1;
		usleep(10000);
	}
	TEST_FAIL("thread %s is at nice %d, not %d", name, thread_nice(name), want);
	return 0;
}

/* While collecting the thread deflates at nice 19; once collection ended,
 * at the session's priority (ours). */
DEF_TEST(the_core_thread_is_at_nice_19_until_collection_ends)
{
	char staging[1100], path[PATH_MAX];
	unsigned char data[100000];
	int fd, ours = getpriority(PRIO_PROCESS, 0);

	snprintf(staging, sizeof(staging), "%s/staging3", dir);
	mkdir(staging, 0700);
	snprintf(path, sizeof(path), "%s/perf.data", staging);
	fill(data, sizeof(data));
	unsetenv("TRACERIG_TEST_STREAM");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT_EQ_INT(0, append(fd, data, sizeof(data)));
	EXPECT_EQ_INT(0, tr_stream_set_level(the_stream(), 6));
	EXPECT_EQ_INT(0, tr_stream_follow(the_stream(), staging, "perf.data", 104));
	EXPECT_TRUE(wait_thread_nice("tr-deflate", 19));
	tr_stream_collection_ended(the_stream());
	EXPECT_EQ_INT(0, append(fd, data, sizeof(data)));
	EXPECT_TRUE(wait_thread_nice("tr-deflate", ours));
	tr_stream_stop(the_stream());
	close(fd);
	forget_stream();
}

int main(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "%s/test_pieces.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN_TEST(pieces_head_middle_tail_read_back_whole);
	RUN_TEST(one_piece_and_no_tail);
	RUN_TEST(no_middle_at_all);
	RUN_TEST(no_head_and_level_9);
	RUN_TEST(pieces_larger_than_the_read_buffer);
	RUN_TEST(levels_out_of_range_are_refused);
#ifdef HAVE_ISAL
	RUN_TEST(isal_pieces_read_back_whole);
	RUN_TEST(isal_and_zlib_pieces_in_one_entry);
	RUN_TEST(a_whole_file_deflated_by_isal);
#else
	SKIP_TEST(isal_pieces_read_back_whole, "built without ISA-L");
	SKIP_TEST(isal_and_zlib_pieces_in_one_entry, "built without ISA-L");
	SKIP_TEST(a_whole_file_deflated_by_isal, "built without ISA-L");
#endif
	RUN_TEST(a_file_shorter_or_replaced_is_refused);
	RUN_TEST(the_core_thread_follows_a_growing_file);
#ifdef HAVE_ISAL
	RUN_TEST(the_core_thread_follows_a_growing_file_with_isal);
#else
	SKIP_TEST(the_core_thread_follows_a_growing_file_with_isal, "built without ISA-L");
#endif
	RUN_TEST(a_round_takes_at_most_64_mib_of_an_entry);
	RUN_TEST(a_write_error_breaks_the_stream);
	/* Freeing needs the core thread back from nice 19 (CAP_SYS_NICE):
	 * without it nothing is freed, by design. */
	if (geteuid() == 0 && getpriority(PRIO_PROCESS, 0) < 19) {
		RUN_TEST(what_was_deflated_of_a_released_file_is_freed);
		RUN_TEST(what_the_kernel_wrote_back_is_freed_without_forcing);
	} else {
		SKIP_TEST(what_was_deflated_of_a_released_file_is_freed,
			  "going back from nice 19 needs root");
		SKIP_TEST(what_the_kernel_wrote_back_is_freed_without_forcing,
			  "going back from nice 19 needs root");
	}
	RUN_TEST(nothing_is_freed_unless_the_session_allows_it);
	if (tr_unwritten_pages(-1, 0, 1) == -ENOSYS)
		SKIP_TEST(unwritten_pages_are_none_after_fdatasync, "this kernel has no cachestat (6.5)");
	else
		RUN_TEST(unwritten_pages_are_none_after_fdatasync);
	RUN_TEST(a_torn_or_foreign_state_file_is_not_used);
	/* Going back from nice 19 needs CAP_SYS_NICE (or RLIMIT_NICE). */
	if (geteuid() == 0 && getpriority(PRIO_PROCESS, 0) < 19)
		RUN_TEST(the_core_thread_is_at_nice_19_until_collection_ends);
	else
		SKIP_TEST(the_core_thread_is_at_nice_19_until_collection_ends, "going back from nice 19 needs root");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (!tr_test_failures && system(cmd) != 0)
		return 1;
	printf("1..%d\n", tr_test_count);
	return tr_test_failures ? 1 : 0;
}
