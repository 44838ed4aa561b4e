#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/procpid.h"
#include "tracefs.h"

/* perf's reader mallocs each file whole; tracefs files are a few KiB. */
#define TRACEFS_FILE_MAX (64u << 20)

const char *tracefs_root(void)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[128];

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/header_page", roots[i]);
		if (access(path, R_OK) == 0)
			return roots[i];
	}
	return NULL;
}

int tracefs_read(const char *path, char **out, size_t *out_len)
{
	/* One byte past the limit tells a file at the limit from a longer one. */
	int ret = tr_read_proc_file(AT_FDCWD, path, TRACEFS_FILE_MAX + 1, out, out_len);

	if (ret == 0 && *out_len > TRACEFS_FILE_MAX) {
		free(*out);
		*out = NULL;
		*out_len = 0;
		return -EFBIG;
	}
	return ret;
}
