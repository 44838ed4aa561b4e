#include "config.h"

#include "phase.h"

const char *tr_phase_name(enum tr_phase phase)
{
	static const char *const names[] = { "loaded", "initialized", "started",
					     "stopped", "ok", "failed" };

	return phase <= TR_PHASE_FAILED ? names[phase] : "?";
}

const char *tr_end_reason_name(enum tr_end_reason reason)
{
	static const char *const names[] = { "not started", "duration", "signal",
					     "command exited", "target processes exited",
					     "a backend crashed", "the collecting process died",
					     "tracerig stop" };

	return reason <= TR_END_STOP_REQUEST ? names[reason] : "?";
}
