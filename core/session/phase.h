/* Where a plugin stands in its lifecycle and why a session ended, with the
 * names the log and manifest.json use for them.  Apart from the session so
 * that what reports on a session (manifest.c) needs nothing of session.c. */
#ifndef TR_PHASE_H
#define TR_PHASE_H

enum tr_phase {
	TR_PHASE_LOADED = 0,
	TR_PHASE_INITIALIZED,
	TR_PHASE_STARTED,
	TR_PHASE_STOPPED,
	TR_PHASE_FLUSHED,
	TR_PHASE_FAILED,
};

enum tr_end_reason {
	TR_END_NONE = 0,
	TR_END_DURATION,
	TR_END_SIGNAL,
	TR_END_COMMAND,
	TR_END_TARGETS_GONE,
	TR_END_PLUGIN_FAULT,
	TR_END_DIED,
	TR_END_STOP_REQUEST,
};

const char *tr_phase_name(enum tr_phase phase);
const char *tr_end_reason_name(enum tr_end_reason reason);

#endif
