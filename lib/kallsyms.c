#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"

int tr_kallsyms_parse(const char *line, struct tr_kallsyms_line *out)
{
	const char *mod;
	char *end;

	out->addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return -EINVAL;
	out->type = end[1];
	out->name = end + 3;
	out->name_len = strcspn(out->name, "\t \n");
	if (!out->name_len)
		return -EINVAL;
	mod = out->name + out->name_len;
	while (*mod == '\t' || *mod == ' ')
		mod++;
	out->module = NULL;
	out->module_len = 0;
	if (*mod == '[') {
		out->module = mod + 1;
		out->module_len = strcspn(out->module, "]\n");
	}
	return 0;
}

int tr_kallsyms_each(const char *path, int (*cb)(void *arg, const struct tr_kallsyms_line *l),
		     void *arg)
{
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (!ret && getline(&line, &cap, f) > 0) {
		struct tr_kallsyms_line l;

		if (tr_kallsyms_parse(line, &l) == 0)
			ret = cb(arg, &l);
	}
	if (!ret && ferror(f))
		ret = -EIO;
	free(line);
	fclose(f);
	return ret;
}
