/* The test suite's own LTTng-UST tracepoint provider: events with known
 * fields, so tests can check exactly what ends up in the archive. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tracerig_test

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp.h"

#if !defined(TR_TEST_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TR_TEST_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

/* The marker the tests look for: "tracerig" in ASCII. */
#define TR_TEST_MAGIC 0x7472616365726967ull

/* One per thread and round: carries its own pid/tid so a reader can check
 * the vpid/vtid contexts against them. */
LTTNG_UST_TRACEPOINT_EVENT(tracerig_test, hello,
	LTTNG_UST_TP_ARGS(uint32_t, seq, int32_t, pid, int32_t, tid, const char *, msg),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint32_t, seq, seq)
		lttng_ust_field_integer(int32_t, pid, pid)
		lttng_ust_field_integer(int32_t, tid, tid)
		lttng_ust_field_integer_hex(uint64_t, magic, TR_TEST_MAGIC)
		lttng_ust_field_string(msg, msg)
	)
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(tracerig_test, hello, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

/* The small, frequent event of the benchmark and the log-level test. */
LTTNG_UST_TRACEPOINT_EVENT(tracerig_test, tick,
	LTTNG_UST_TP_ARGS(uint64_t, seq),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
	)
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(tracerig_test, tick, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)

#endif

#include <lttng/tracepoint-event.h>
