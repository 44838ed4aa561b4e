/* Whole reads, writes and copies on file descriptors: write(2) may write
 * less than asked (a signal, a pipe, a file system near full), read(2)
 * gives what is there, and the caller wants all of it or the error. */
#ifndef TR_LIB_FDIO_H
#define TR_LIB_FDIO_H

#include <stddef.h>
#include <sys/types.h>

/* All of `data` at offset `off`, or at the file position when off < 0.
 * 0, or -errno (-EIO when the kernel writes nothing and says no error). */
int tr_pwrite_all(int fd, const void *data, size_t len, off_t off);

/* The same, *written set to the bytes that reached the file whatever the
 * result: for a caller that keeps offsets into what it wrote. */
int tr_pwrite_counted(int fd, const void *data, size_t len, off_t off, size_t *written);

static inline int tr_write_all(int fd, const void *data, size_t len)
{
	return tr_pwrite_all(fd, data, len, -1);
}

/* Copies what is left of `in` to `out` at their file positions.  0, or
 * -errno of the read or the write. */
int tr_copy_fd(int in, int out);

/* Reads `src` to its end through rd(src, buf, len) (the bytes it read, 0
 * at the end, or -errno), into a buffer that starts at `first` bytes and
 * doubles up to `max` (< SIZE_MAX), with a NUL after what was read.  It
 * stops at `max` bytes whatever is left: a caller that refuses longer
 * input asks for one byte more than it takes.  0 with *out (to free()) and
 * *len, or -ENOMEM or rd's error with *out NULL. */
int tr_read_to_end(ssize_t (*rd)(void *src, void *buf, size_t len), void *src, size_t first,
		   size_t max, char **out, size_t *len);

/* The same from `fd`, from its position: what a file (/proc's, whose
 * size says nothing) holds. */
int tr_read_fd(int fd, size_t max, char **out, size_t *len);

/* A file in `dir` that no other process can open and that goes with this
 * one whatever ends it (O_TMPFILE; unlinked right after mkostemp where the
 * file system has no O_TMPFILE), open read-write: for spilling what a
 * long session would otherwise keep in memory.  The fd, or -errno. */
int tr_unlinked_file(const char *dir);

#endif
