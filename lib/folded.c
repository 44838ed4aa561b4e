/* Folded stacks: summing, writing, and the one root convention. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "sanitize.h"
#include "strmap.h"

struct tr_folded {
	struct tr_strmap lines; /* line -> summed weight */
};

struct tr_folded *tr_folded_new(void)
{
	return calloc(1, sizeof(struct tr_folded));
}

void tr_folded_free(struct tr_folded *f)
{
	if (!f)
		return;
	tr_strmap_free(&f->lines);
	free(f);
}

int tr_folded_add(struct tr_folded *f, const char *line, size_t len, uint64_t weight)
{
	struct tr_strmap_entry *e = tr_strmap_get(&f->lines, line, len);

	if (!e)
		return -ENOMEM;
	e->value += weight;
	return 0;
}

size_t tr_folded_count(const struct tr_folded *f)
{
	return f->lines.n;
}

int tr_folded_write(const struct tr_folded *f, FILE *out, uint64_t divisor)
{
	const struct tr_strmap_entry **v;
	int ret = 0;

	if (!f->lines.n)
		return 0;
	if (!divisor)
		divisor = 1;
	/* Sorted: one collection always gives the same file. */
	v = tr_strmap_sorted(&f->lines);
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < f->lines.n; i++) {
		uint64_t w = divisor == 1 ? v[i]->value : (v[i]->value + divisor / 2) / divisor;

		if (w && fprintf(out, "%s %" PRIu64 "\n", v[i]->key, w) < 0) {
			ret = -EIO;
			break;
		}
	}
	free(v);
	if (!ret && ferror(out))
		ret = -EIO;
	return ret;
}

int tr_folded_each(const struct tr_folded *f,
		   int (*each)(void *arg, const char *line, uint64_t weight), void *arg)
{
	const struct tr_strmap_entry *e;
	int ret = 0;

	for (size_t i = 0; !ret && (e = tr_strmap_next(&f->lines, &i));)
		ret = each(arg, e->key, e->value);
	return ret;
}

/* "name-ID" at buf[*pos...], the name under the sanitize rule.  Every
 * sample of a conversion is rooted here: written by hand rather than by
 * snprintf, which cost more than naming all of a sample's frames. */
static int put_frame(char *buf, size_t len, size_t *pos, const char *name, long id)
{
	char digits[24], *d = digits + sizeof(digits);
	unsigned long v = id < 0 ? 0ul - (unsigned long)id : (unsigned long)id;
	size_t start = *pos, name_len, id_len;

	if (!name || !*name)
		name = "[unknown]";
	do
		*--d = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	if (id < 0)
		*--d = '-';
	id_len = (size_t)(digits + sizeof(digits) - d);
	name_len = strlen(name);
	if (name_len + 1 + id_len >= len - start)
		return -ENOSPC;
	/* The rule keeps the length, and ';' never survives it: the ID
	 * goes right after the name and the frame stays one frame. */
	tr_sanitize_name(buf + start, name_len + 1, name);
	buf[start + name_len] = '-';
	memcpy(buf + start + name_len + 1, d, id_len);
	buf[start + name_len + 1 + id_len] = '\0';
	*pos += name_len + 1 + id_len;
	return 0;
}

int tr_folded_root(char *buf, size_t len, const char *comm, pid_t pid, const char *tcomm,
		   pid_t tid)
{
	size_t pos = 0;

	if (len < 2)
		return -ENOSPC;
	if (put_frame(buf, len, &pos, comm, (long)pid) < 0 || pos + 2 > len)
		return -ENOSPC;
	buf[pos++] = ';';
	if (put_frame(buf, len, &pos, tcomm, (long)tid) < 0)
		return -ENOSPC;
	return (int)pos;
}

/* The ID after the last '-' of frame[0..len), with the name's length; -1
 * when the frame does not end in "-digits" (or the name would be empty). */
static long frame_id(const char *frame, size_t len, size_t *name_len)
{
	size_t i = len;
	long id = 0, mul = 1;

	while (i > 0 && frame[i - 1] >= '0' && frame[i - 1] <= '9') {
		if (len - i >= 10) /* beyond any PID: a name that ends in digits */
			return -1;
		id += (frame[i - 1] - '0') * mul;
		mul *= 10;
		i--;
	}
	if (i == len || i < 2 || frame[i - 1] != '-')
		return -1;
	*name_len = i - 1;
	return id;
}

void tr_folded_root_parse(const char *stack, struct tr_folded_rootinfo *r)
{
	const char *semi = strchr(stack, ';'), *second, *semi2;
	size_t first_len = semi ? (size_t)(semi - stack) : strlen(stack), name_len;
	long id;

	r->comm = stack;
	r->comm_len = first_len;
	r->pid = -1;
	r->tcomm = NULL;
	r->tcomm_len = 0;
	r->tid = -1;
	r->frames = semi ? semi + 1 : NULL;

	id = frame_id(stack, first_len, &name_len);
	if (id < 0)
		return; /* "comm;frames": offcpu.folded before the thread frame */
	r->pid = id;
	r->comm_len = name_len;
	if (!semi)
		return;
	second = semi + 1;
	semi2 = strchr(second, ';');
	id = frame_id(second, semi2 ? (size_t)(semi2 - second) : strlen(second), &name_len);
	if (id < 0)
		return; /* "comm-PID;frames": cpu.folded before the thread frame */
	r->tcomm = second;
	r->tcomm_len = name_len;
	r->tid = id;
	r->frames = semi2 ? semi2 + 1 : NULL;
}
