/* tracerig's exit statuses (documented in tracerig(1)).  Their own header
 * so that every command (collect, report, convert, start/stop) returns the
 * same numbers without including the session. */
#ifndef TR_EXITCODES_H
#define TR_EXITCODES_H

enum {
	TR_EXIT_OK = 0,
	TR_EXIT_FAILURE = 1,
	TR_EXIT_USAGE = 2,
	TR_EXIT_COMMAND_FAILED = 3,
	TR_EXIT_COMMAND_NOT_RUN = 127,
	TR_EXIT_ABORTED = 130,
};

#endif
