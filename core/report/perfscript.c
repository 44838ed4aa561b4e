#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/perfscript.h"
#include "lines.h"
#include "perfscript.h"

/* "comm  pid/tid [cpu] time: period event: ...", lib/perfscript's rule; a
 * header it cannot place (no pid) still starts a sample, named by its
 * first word. */
static int sample_header(struct rp_profile *p, char *line)
{
	struct ps_header h;
	char comm[256];
	int ret;

	if (ps_parse_header(line, &h) < 0) {
		snprintf(comm, sizeof(comm), "%.*s", (int)strcspn(line, " \t"), line);
		return rp_profile_begin(p, comm, -1, 1);
	}
	ret = rp_profile_begin(p, h.comm, h.pid, 1);
	if (ret == 0 && *h.event)
		ret = rp_profile_event(p, h.event, strlen(h.event));
	return ret;
}

/* "\t    55d0c0a1b2c3 demo_hot+0x12 (/path/to/dso)" */
static int sample_frame(struct rp_profile *prof, char *line)
{
	struct ps_frame f;
	char name[1024];

	if (ps_parse_frame(line, &f) < 0)
		return 0;
	if (!*f.symbol) {
		const char *base = strrchr(f.dso, '/');

		base = base ? base + 1 : f.dso;
		if (*base)
			snprintf(name, sizeof(name), "[unknown] (%s)", base);
		else
			snprintf(name, sizeof(name), "[unknown]");
	} else {
		snprintf(name, sizeof(name), "%s", f.symbol);
	}
	/* perf script prints the leaf first. */
	return rp_profile_frame(prof, name, strlen(name), prof->frames == 0);
}

static int script_line(void *arg, char *line)
{
	struct rp_profile *p = arg;

	if (line[0] == ' ' || line[0] == '\t')
		return strspn(line, " \t") == strlen(line) ? rp_profile_end(p) : sample_frame(p, line);
	if (line[0] == '\0')
		return rp_profile_end(p);
	if (line[0] == '#')
		return 0;
	return sample_header(p, line);
}

int rp_perfscript_read(struct rp_archive *ar, const char *entry, struct rp_profile *p)
{
	int ret = rp_lines_each(ar, entry, script_line, p);

	return ret < 0 ? ret : rp_profile_end(p);
}
