/* manifest.json: what was collected, how, and where it is in the archive. */
#ifndef TR_MANIFEST_H
#define TR_MANIFEST_H

struct tr_session;
struct tr_snapshot;
struct tracerig_archive;

/* Writes manifest.json into the staging area (after every flush). */
int tr_manifest_write(struct tr_session *s);
/* A flight-mode snapshot's manifest.json, into its own staging area `ar`:
 * what triggered it and the time range it covers.  0 or -errno (errno set). */
int tr_manifest_write_snapshot(struct tr_session *s, struct tracerig_archive *ar,
			       const struct tr_snapshot *snap);

#endif
