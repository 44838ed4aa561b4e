#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "folded.h"
#include "lib/folded.h"
#include "lines.h"

struct folded_reader {
	int (*each)(void *arg, char *stack, uint64_t weight);
	void *arg;
	uint64_t refused; /* lines whose weight is no count */
};

static int folded_line(void *arg, char *line)
{
	struct folded_reader *fr = arg;
	uint64_t weight;
	/* Readers add weights up and scale them in signed 64 bits. */
	int ret = tr_folded_split(line, RP_FOLDED_MAX_WEIGHT, &weight);

	if (ret < 0)
		fr->refused++;
	return ret == 1 ? fr->each(fr->arg, line, weight) : 0;
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
