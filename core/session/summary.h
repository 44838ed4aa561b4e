/* What the end of a session says (summary.c). */
#ifndef TR_SUMMARY_H
#define TR_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

struct tr_session;
struct tracerig_ctx;

/* "12.3 MiB", "45.6 KiB", "789 bytes". */
void tr_human_size(uint64_t bytes, char *buf, size_t len);

/* Why a failed backend failed: its crash signal, hang, or error, and where. */
void tr_describe_failure(const struct tracerig_ctx *ctx, char *buf, size_t len);

/* Each source's line, in the log with every counter and, when `packaged`
 * is not negative and the verbosity is the default, on stderr with the
 * first few. */
void tr_summarize(const struct tr_session *s, int packaged);

#endif
