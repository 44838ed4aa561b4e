#include "config.h"

#include <stdio.h>
#include <string.h>

#include "path.h"

void tr_path_stem(const char *path, const char *const *suffixes, char *buf, size_t len)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	for (; suffixes && *suffixes; suffixes++) {
		size_t s = strlen(*suffixes);

		if (n > s && strcmp(base + n - s, *suffixes) == 0) {
			n -= s;
			break;
		}
	}
	snprintf(buf, len, "%.*s", (int)n, base);
}
