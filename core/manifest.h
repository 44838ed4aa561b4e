/* manifest.json: what was collected, how, and where it is in the archive. */
#ifndef TR_MANIFEST_H
#define TR_MANIFEST_H

struct tr_session;

/* Writes manifest.json into the staging area (after every flush). */
int tr_manifest_write(struct tr_session *s);

#endif
