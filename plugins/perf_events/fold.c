#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "fold.h"
#include "lib/strmap.h"

struct fold {
	struct tr_strmap lines; /* line -> summed weight */
};

struct fold *fold_new(void)
{
	return calloc(1, sizeof(struct fold));
}

void fold_free(struct fold *f)
{
	if (!f)
		return;
	tr_strmap_free(&f->lines);
	free(f);
}

int fold_add(struct fold *f, const char *line, size_t len, uint64_t weight)
{
	struct tr_strmap_entry *e = tr_strmap_get(&f->lines, line, len);

	if (!e)
		return -ENOMEM;
	e->value += weight;
	return 0;
}

size_t fold_count(const struct fold *f)
{
	return f->lines.n;
}

int fold_write(const struct fold *f, FILE *out)
{
	const struct tr_strmap_entry **v = tr_strmap_sorted(&f->lines);

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < f->lines.n; i++)
		fprintf(out, "%s %llu\n", v[i]->key, (unsigned long long)v[i]->value);
	free(v);
	return ferror(out) ? -EIO : 0;
}
