/* Frame names from the core's frame_name service. */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "frames.h"

void fr_name(void *namer, pid_t pid, uint64_t addr, int kernel, char *buf, size_t len)
{
	struct fr_namer *n = namer;
	const char *name;
	/* On any failure the service still names the frame ("[unknown]"). */
	int ret = n->svc->symbols->frame_name(n->ctx, pid, addr, kernel, 0, &name, NULL);

	if (ret == -ENOENT || ret == -ENODATA)
		n->unnamed++;
	snprintf(buf, len, "%s", name);
}
