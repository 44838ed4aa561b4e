/* The archive's final place: checked before collection starts, locked
 * against a second session writing it, and reached only by an O_EXCL
 * temporary file and a rename that never replaces a directory, a device or
 * another run's archive.  One output per process, like the loader's path. */
#ifndef TR_OUTPUT_H
#define TR_OUTPUT_H

#include "staging.h"

/* Decides and checks where the archive goes.  `given` is -o / [tracerig]
 * output (NULL for the default), `name` the collection's name.
 *  - NULL: NAME.trace.zip in the current directory, or NAME-2.trace.zip,
 *    NAME-3... when that exists or another session is writing it;
 *  - an existing directory, or a path ending in '/': the same, inside it;
 *  - anything else: that file, replaced if it is a regular file.
 * A device, FIFO, socket or symbolic link, a missing or unwritable
 * directory, or an explicit name another session is writing (its PID is
 * named) is an error.  Unless `check_only`, the name is locked until
 * tr_output_release().  Logs what is wrong; returns 0 with *path set
 * (malloc'd), or -errno. */
int tr_output_prepare(const char *given, const char *name, int check_only, char **path);

/* Creates ar->output (the temporary archive next to the final one, named by
 * tr_staging_create) with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, picking a
 * fresh name if that one is taken.  Logs; returns 0 or -errno. */
int tr_output_create_temp(struct tracerig_archive *ar);

/* Renames the complete temporary archive to *path: a regular file there is
 * replaced only if it was named explicitly; a default name that appeared
 * meanwhile moves the archive on to the next free one (and *path with it).
 * Never replaces anything but a regular file.  Logs; on failure removes the
 * temporary archive and returns -errno. */
int tr_output_commit(struct tracerig_archive *ar, char **path);

/* Drops the lock (and its file). */
void tr_output_release(void);

/* "No space left on device (the file system is full: ...)" for the errors
 * that mean the disk, and strerror for the rest. */
const char *tr_output_strerror(int err, char *buf, size_t len);

#endif
