/* Staged entries deflated while they grow (issue 13).  A source declares
 * that a staged entry only grows at its end from some offset on
 * (archive_append_only); a packager that can take precompressed data says
 * at which level (archive_stream_level); then one core thread, at low
 * priority, follows each such file and deflates what was appended into a
 * side file under the staging directory's TR_STREAM_DIR, which is never an
 * archive entry.  At packaging the core stops the thread and the packager
 * asks what was done (archive_streamed): it deflates only the head (the
 * part before the offset, which the source may have rewritten) and the
 * tail (what the thread had not got to), and copies the middle.
 *
 * Memory: one tr_zpiece per followed entry (under 600 KiB, see
 * lib/zpiece.h), at most TR_STREAM_MAX entries (under 4.7 MiB); nothing
 * grows with the session. */
#ifndef TR_STREAM_H
#define TR_STREAM_H

#include <stdint.h>
#include "tracerig-private/ext.h"

/* Below the staging directory; tr_staging_foreach skips it. */
#define TR_STREAM_DIR ".tracerig-stream"
#define TR_STREAM_MAX 8

/* A session's streams: the entries followed and the thread that deflates
 * them. */
struct tr_stream;
struct tr_stream *tr_stream_new(void);

/* The packager's deflate level (1..9, with TR_ZPIECE_FAST for ISA-L); 0
 * turns streaming off.  0, -EINVAL or -ENOTSUP (see tr_zpiece_level_ok). */
int tr_stream_set_level(struct tr_stream *st, int level);
/* Follows `staging_dir`/`name`, append-only from byte `from`.  0,
 * -ENOTSUP (no packager asked for streaming), -EINVAL, -ENOSPC (too many),
 * -EEXIST, or the errno of opening the files or starting the thread. */
int tr_stream_follow(struct tr_stream *st, const char *staging_dir, const char *name,
		     uint64_t from);
/* Whether the thread may free what it deflated of the staged files
 * (punched out; the file keeps its size) where their source released it:
 * not when the staging is kept for someone to look at. */
void tr_stream_may_free(struct tr_stream *st, int yes);
/* The source of `staging_dir`/`name` reads none of its bytes below `below`
 * again (archive_release).  0 or -ENOENT (not followed). */
int tr_stream_release(struct tr_stream *st, const char *staging_dir, const char *name,
		      uint64_t below);
/* The watchdog, packaging the staging of a collector that died: reads back
 * what its thread had deflated (the state files beside the side files), so
 * that tr_stream_result answers as it would have.  The number of entries,
 * or -errno; call after tr_stream_set_level (the packager's init). */
int tr_stream_recover(struct tr_stream *st, const char *staging_dir);
/* Collection ended: the thread goes back to normal priority (what it has
 * not done is now on the way to the archive). */
void tr_stream_collection_ended(struct tr_stream *st);
/* Stops the thread (what it has not deflated yet stays for the packager);
 * idempotent.  Logs, per entry, how much was deflated while collecting. */
void tr_stream_stop(struct tr_stream *st);
/* What was deflated of `staging_dir`/`name`, once stopped.  0, -ENOENT
 * (not followed), -EAGAIN (still running), -EIO (the stream broke: the
 * packager deflates the whole entry; once some of the staged file was
 * freed, what was deflated before the break is answered instead). */
int tr_stream_result(struct tr_stream *st, const char *staging_dir, const char *name,
		     struct tracerig_streamed *out);
/* Stops and frees everything (the side files stay with the staging
 * directory, which is removed with them). */
void tr_stream_free(struct tr_stream *st);

#endif
