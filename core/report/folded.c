#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "lines.h"

struct folded_reader {
	int (*each)(void *arg, char *stack, uint64_t weight);
	void *arg;
	uint64_t refused; /* lines whose weight is no count */
};

static int folded_line(void *arg, char *line)
{
	struct folded_reader *fr = arg;
	/* The weight follows the last space: names may hold spaces. */
	char *sp = strrchr(line, ' '), *end;
	uint64_t w;

	if (!sp || sp == line)
		return 0;
	/* strtoull takes "-5" for 2^64 - 5: digits only. */
	if (sp[1] < '0' || sp[1] > '9') {
		fr->refused += sp[1] == '-';
		return 0;
	}
	errno = 0;
	w = strtoull(sp + 1, &end, 10);
	if (*end)
		return 0;
	/* Readers add weights up and scale them in signed 64 bits. */
	if (errno == ERANGE || w > RP_FOLDED_MAX_WEIGHT) {
		fr->refused++;
		return 0;
	}
	*sp = '\0';
	return fr->each(fr->arg, line, w);
}

int rp_folded_read(struct rp_archive *ar, const char *entry,
		   int (*each)(void *arg, char *stack, uint64_t weight), void *arg)
{
	struct folded_reader fr = { each, arg, 0 };
	int ret = rp_lines_each(ar, entry, folded_line, &fr);

	if (fr.refused)
		fprintf(stderr, "tracerig: %s: %s: %" PRIu64 " line(s) skipped: their weight is "
			"negative or over %" PRIu64 " (tracerig never writes such lines: the "
			"archive was altered)\n", ar->who ? ar->who : "report", entry, fr.refused,
			(uint64_t)RP_FOLDED_MAX_WEIGHT);
	return ret;
}
