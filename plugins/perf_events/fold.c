#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"

struct entry {
	char *line;
	uint64_t weight;
	uint64_t hash;
};

struct fold {
	struct entry *slots;
	size_t cap, n;
};

struct fold *fold_new(void)
{
	struct fold *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->cap = 1024;
	f->slots = calloc(f->cap, sizeof(*f->slots));
	if (!f->slots) {
		free(f);
		return NULL;
	}
	return f;
}

void fold_free(struct fold *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->cap; i++)
		free(f->slots[i].line);
	free(f->slots);
	free(f);
}

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static int grow(struct fold *f)
{
	size_t ncap = f->cap * 2;
	struct entry *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < f->cap; i++) {
		size_t j;

		if (!f->slots[i].line)
			continue;
		j = f->slots[i].hash & (ncap - 1);
		while (n[j].line)
			j = (j + 1) & (ncap - 1);
		n[j] = f->slots[i];
	}
	free(f->slots);
	f->slots = n;
	f->cap = ncap;
	return 0;
}

int fold_add(struct fold *f, const char *line, size_t len, uint64_t weight)
{
	uint64_t h = fnv1a(line, len);
	size_t i;

	if ((f->n + 1) * 2 > f->cap && grow(f) < 0)
		return -ENOMEM;
	i = h & (f->cap - 1);
	while (f->slots[i].line) {
		if (f->slots[i].hash == h && strncmp(f->slots[i].line, line, len) == 0 &&
		    f->slots[i].line[len] == '\0') {
			f->slots[i].weight += weight;
			return 0;
		}
		i = (i + 1) & (f->cap - 1);
	}
	f->slots[i].line = strndup(line, len);
	if (!f->slots[i].line)
		return -ENOMEM;
	f->slots[i].hash = h;
	f->slots[i].weight = weight;
	f->n++;
	return 0;
}

size_t fold_count(const struct fold *f)
{
	return f->n;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp((*(const struct entry *const *)a)->line, (*(const struct entry *const *)b)->line);
}

int fold_write(const struct fold *f, FILE *out)
{
	const struct entry **v = malloc((f->n ? f->n : 1) * sizeof(*v));
	size_t k = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < f->cap; i++)
		if (f->slots[i].line)
			v[k++] = &f->slots[i];
	qsort(v, k, sizeof(*v), cmp_entry);
	for (size_t i = 0; i < k; i++)
		fprintf(out, "%s %llu\n", v[i]->line, (unsigned long long)v[i]->weight);
	free(v);
	return ferror(out) ? -EIO : 0;
}
