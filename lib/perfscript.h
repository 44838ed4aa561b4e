/* Reading `perf script` text (tracerig's perf.data.txt, perfcollect's):
 *
 *   comm  pid/tid [cpu] secs.usecs:   period event: [trace...]
 *   \t    55d0c0a1b2c3 demo_hot+0x12 (/path/to/dso)
 *   ...
 *   (blank line)
 *
 * Each field is optional as `perf script -F` makes it; comm may hold
 * spaces, the symbol parentheses.  The parsers cut a line in place and
 * point into it: nothing is allocated. */
#ifndef TR_LIB_PERFSCRIPT_H
#define TR_LIB_PERFSCRIPT_H

#include <stddef.h>
#include <stdint.h>

struct ps_header {
	const char *comm;  /* "" when absent */
	long pid, tid;     /* -1 when absent (tid = pid when only one is given) */
	int cpu;           /* -1 when absent */
	uint64_t time_ns;  /* 0 when absent */
	uint64_t period;   /* 0 when absent */
	const char *event; /* "" when absent, without its ':' */
};

struct ps_frame {
	uint64_t address;
	const char *symbol; /* without "+0x..": "" when perf printed [unknown] */
	const char *dso;    /* "" when absent */
};

/* Whether a line starts a frame (leading blank) rather than a sample. */
int ps_is_frame_line(const char *line);

/* Parses a sample's first line, cutting it; 0, or -1 when it is none. */
int ps_parse_header(char *line, struct ps_header *h);

/* Parses a frame line, cutting it; 0, or -1 when it is none. */
int ps_parse_frame(char *line, struct ps_frame *f);

#endif
