/* A detached (or `start --foreground`) session's side of its control socket: answering `tracerig
 * status`, taking `tracerig stop`, and telling the stopper where the
 * archive went once it is written. */
#ifndef TR_REMOTE_H
#define TR_REMOTE_H

struct tr_session;

/* Listens on the session's socket when it runs detached (opts->session_name);
 * 0, or -1 after saying why. */
int tr_remote_open(struct tr_session *s);
/* The socket to poll, or -1. */
int tr_remote_fd(const struct tr_session *s);
/* Serves the connections waiting; 1 when one asked to stop.  A
 * `snapshot` request is handed to flight.c (tr_flight_request), which
 * answers it once the archive is written. */
int tr_remote_serve(struct tr_session *s);
/* Tells `tracerig start` that collection runs; with --foreground, the
 * service manager ($NOTIFY_SOCKET: READY=1). */
void tr_remote_ready(struct tr_session *s);
/* Answers whoever asked to stop (the archive's path, or why there is
 * none), then closes and removes the socket. */
void tr_remote_finish(struct tr_session *s, int exit_status);

#endif
