#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "lines.h"

struct folded_reader {
	int (*each)(void *arg, char *stack, uint64_t weight);
	void *arg;
};

static int folded_line(void *arg, char *line)
{
	const struct folded_reader *fr = arg;
	/* The weight follows the last space: names may hold spaces. */
	char *sp = strrchr(line, ' '), *end;
	uint64_t w;

	if (!sp || sp == line)
		return 0;
	w = strtoull(sp + 1, &end, 10);
	if (*end || end == sp + 1)
		return 0;
	*sp = '\0';
	return fr->each(fr->arg, line, w);
}

int rp_folded_read(struct rp_archive *ar, const char *entry,
		   int (*each)(void *arg, char *stack, uint64_t weight), void *arg)
{
	struct folded_reader fr = { each, arg };

	return rp_lines_each(ar, entry, folded_line, &fr);
}
