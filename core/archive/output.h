/* The archive's final place: checked before collection starts, locked
 * against a second session writing it, and reached only by an O_EXCL
 * temporary file and a rename that never replaces a directory, a device or
 * another run's archive.  One per session, resolved once: the path as the
 * user named it (what messages show) and the same made absolute (what is
 * told to other directories). */
#ifndef TR_OUTPUT_H
#define TR_OUTPUT_H

#include <sys/types.h>

#include "staging.h"

struct tr_output;
struct tr_output *tr_output_new(void);
/* Releases the lock and frees it all. */
void tr_output_free(struct tr_output *o);

/* Decides and checks where the archive goes.  `given` is -o / [tracerig]
 * output (NULL for the default), `name` the collection's name.
 *  - NULL: NAME.trace.zip in the current directory, or NAME-2.trace.zip,
 *    NAME-3... when that exists or another session is writing it;
 *  - an existing directory, or a path ending in '/': the same, inside it;
 *  - anything else: that file, replaced if it is a regular file.
 * A device, FIFO, socket or symbolic link, a missing or unwritable
 * directory, or an explicit name another session is writing (its PID is
 * named) is an error.  Unless `check_only`, the name is locked until
 * tr_output_release().  Logs what is wrong; returns 0 or -errno. */
int tr_output_prepare(struct tr_output *o, const char *given, const char *name, int check_only);
/* The archive's path as the user named it (relative to the working
 * directory when they gave it so), and absolute; the directory it is in,
 * absolute.  NULL before tr_output_prepare. */
const char *tr_output_path(const struct tr_output *o);
const char *tr_output_absolute(const struct tr_output *o);
const char *tr_output_absolute_dir(const struct tr_output *o);
/* Flight mode: the session's last archive is its final snapshot's `path`
 * (absolute), which `tracerig stop` is told.  0, -EINVAL or -ENOMEM. */
int tr_output_written(struct tr_output *o, const char *path);

/* Creates ar->output (the temporary archive next to the final one, named by
 * tr_staging_create) with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, picking a
 * fresh name if that one is taken.  Logs; returns 0 or -errno. */
int tr_output_create_temp(struct tracerig_archive *ar);

/* Renames the complete temporary archive to the output's path: a regular
 * file there is replaced only if it was named explicitly; a default name
 * that appeared meanwhile moves the archive on to the next free one (and
 * the path with it).  Never replaces anything but a regular file.  Logs; on
 * failure removes the temporary archive and returns -errno. */
int tr_output_commit(struct tr_output *o, struct tracerig_archive *ar);

/* For other outputs than the archive (`tracerig convert`'s), the same
 * rules without a session's lock.  Neither logs.
 *
 * Creates DIR/.NAME.XXXXXX (random letters) with O_CREAT|O_EXCL|O_NOFOLLOW
 * and `mode` (less the umask): a link, FIFO or file planted at a guessed
 * name is never opened.  Returns the open fd with *tmp set (malloc'd), or
 * -errno. */
int tr_output_open_temp(const char *dir, const char *name, mode_t mode, char **tmp);

/* Renames the complete `tmp` to `final`: when `replace`, over a regular
 * file only; else over nothing (RENAME_NOREPLACE, or link() where the file
 * system lacks it).  -EEXIST with *what ("a symbolic link", ...) when
 * `final` is in the way; other -errno.  Leaves `tmp` for the caller to
 * remove on failure. */
int tr_output_place(const char *tmp, const char *final, int replace, const char **what);

/* "a FIFO", "a symbolic link", ... for the file at `path`; NULL when there
 * is none. */
const char *tr_output_what_is(const char *path);

/* Drops the lock (and its file). */
void tr_output_release(struct tr_output *o);

/* "No space left on device (the file system is full: ...)" for the errors
 * that mean the disk, and strerror for the rest. */
const char *tr_output_strerror(int err, char *buf, size_t len);

#endif
