/* A kernel CPU list is ranges and single numbers separated by commas. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpus.h"

int tr_online_cpus(int **out, size_t *n)
{
	char buf[1024], *p;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int *cpus = NULL;
	size_t cnt = 0;

	if (!f)
		return -errno;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p)
		return -EIO;
	while (*p && *p != '\n') {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			break;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long c = lo; c <= hi; c++) {
			int *np = realloc(cpus, (cnt + 1) * sizeof(*cpus));

			if (!np) {
				free(cpus);
				return -ENOMEM;
			}
			cpus = np;
			cpus[cnt++] = (int)c;
		}
		p = *end == ',' ? end + 1 : end;
	}
	if (!cnt) {
		free(cpus);
		return -EIO;
	}
	*out = cpus;
	*n = cnt;
	return 0;
}
