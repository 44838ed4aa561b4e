/* The session's mode ([tracerig] mode), chosen once when the profile is
 * read: what a recording and a flight recorder do differently, as one
 * table the core calls through, so that nothing else asks which mode it
 * is in.  record collects until the end and packages one archive; flight
 * keeps the last window and writes a snapshot of it at every trigger
 * (flight.h, docs/flight.md). */
#ifndef TR_MODE_H
#define TR_MODE_H

#include <stddef.h>
#include <stdint.h>

struct tr_session;
struct tr_section;
struct tracerig_ctx;

struct tr_mode_ops {
	const char *name; /* as the profile writes it */
	/* The mode's own keys and their consequences: flight sets up its
	 * window, retention and triggers; record says that flight keys set
	 * for it do nothing and refuses triggers.  After the duration is
	 * known (flight runs until stopped: only -d bounds it).  0, or -1
	 * after saying what is wrong. */
	int (*prepare)(struct tr_session *s, const struct tr_section *main_section);
	/* Whether an initialised source can take part: 0, or -ENOTSUP with
	 * `why` saying so ("mode = flight is not supported yet"). */
	int (*admits)(const struct tr_session *s, const struct tracerig_ctx *ctx, char *why,
		      size_t why_len);
	/* For a source that is not admitted: what to do when the profile
	 * requires it, and what happens when it is optional. */
	const char *if_required, *if_optional;
	/* The summary's words for such a source, NULL: every source is. */
	const char *left_out;
	/* A signal that takes a snapshot (blocked and read with the others),
	 * 0: none, so it keeps its default action. */
	int snapshot_signal;
	/* Where collection goes, for the line that announces it (`dur`: " for
	 * 10s" or ""). */
	void (*describe)(const struct tr_session *s, const char *dur, char *buf, size_t len);
	/* Where its archives are written: the archive, or the snapshots'
	 * directory (for `tracerig status`). */
	const char *(*destination)(const struct tr_session *s);
	/* The window sources keep, 0: all of the session. */
	uint64_t (*window_ns)(const struct tr_session *s);
	/* Whether sources may stream entries into the archive while
	 * collecting (a snapshot is written whole). */
	int streams;
	/* Whether `tracerig snapshot` can take one: 0, or -1 with `why` for
	 * the reply. */
	int (*takes_snapshots)(const struct tr_session *s, char *why, size_t why_len);
	/* Collection runs: begin, a turn of the loop (1: the session must
	 * end), and the end, which stops the sources and writes what the mode
	 * leaves; it returns the session's exit status. */
	void (*begin)(struct tr_session *s);
	int (*serve)(struct tr_session *s, uint64_t now_ns);
	int (*finish)(struct tr_session *s);
};

extern const struct tr_mode_ops tr_record_mode, tr_flight_mode;

#endif
