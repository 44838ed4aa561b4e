/* The live status line while collecting on a terminal. */
#ifndef TR_STATUS_H
#define TR_STATUS_H

struct tr_session;

void tr_status_begin(struct tr_session *s, int enabled);
void tr_status_update(void);
void tr_status_end(void);

#endif
