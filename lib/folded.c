/* Folded stacks: summing, writing, and the one root convention. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decimal.h"
#include "fdio.h"
#include "folded.h"
#include "sanitize.h"
#include "strmap.h"

/* Runs kept before they are merged into one: each holds a descriptor. */
#define MAX_RUNS 16

/* What one distinct line costs in memory beyond its bytes: the key's
 * allocation and its share of the table's slots. */
#define LINE_OVERHEAD 64

struct tr_folded {
	struct tr_strmap lines; /* line -> summed weight */
	/* Spilling (tr_folded_spill): the lines' memory over `limit` bytes
	 * goes to sorted runs in unlinked files of `dir`, merged back when
	 * written. */
	char *dir;
	size_t limit, bytes;
	FILE *runs[MAX_RUNS];
	size_t n_runs;
	size_t spilled; /* lines written to runs (a line may be in several) */
	int spill_error; /* the first failure to spill: kept in memory since */
	/* The lines in memory in sorted order, kept while none is added: a
	 * set is read several times once complete (its file, its graph's
	 * two passes, the wall view), and sorting long lines is most of
	 * each read.  Valid while n_sorted == lines.n (a new line grows n;
	 * a spill empties memory and drops it). */
	const struct tr_strmap_entry **sorted;
	size_t n_sorted;
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
	for (size_t i = 0; i < f->n_runs; i++)
		fclose(f->runs[i]);
	free(f->sorted);
	free(f->dir);
	free(f);
}

int tr_folded_spill(struct tr_folded *f, const char *dir, size_t limit)
{
	char *copy = strdup(dir);

	if (!copy)
		return -ENOMEM;
	free(f->dir);
	f->dir = copy;
	f->limit = limit;
	return 0;
}

/* A run's file: see tr_unlinked_file. */
static FILE *run_file(const char *dir)
{
	int fd = tr_unlinked_file(dir);
	FILE *fp;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	fp = fdopen(fd, "w+");
	if (!fp)
		close(fd);
	return fp;
}

/* A run's record: the line's length (4 bytes), the line, its weight. */
static int put_record(FILE *fp, const char *line, size_t len, uint64_t weight)
{
	uint32_t n = (uint32_t)len;

	if (fwrite(&n, sizeof(n), 1, fp) != 1 || fwrite(line, 1, len, fp) != len ||
	    fwrite(&weight, sizeof(weight), 1, fp) != 1)
		return -EIO;
	return 0;
}

/* A source of sorted, summed lines: a run or the lines in memory. */
struct source {
	FILE *fp;                             /* a run, or NULL */
	const struct tr_strmap_entry **v;     /* the lines in memory, sorted */
	size_t i, n;
	const char *line;                     /* the current line, NULL at the end */
	uint64_t weight;
	char *buf;                            /* a run's current line */
	size_t cap;
};

static int source_next(struct source *s)
{
	uint32_t n;

	if (!s->fp) {
		s->line = s->i < s->n ? s->v[s->i]->key : NULL;
		s->weight = s->i < s->n ? s->v[s->i]->value : 0;
		s->i++;
		return 0;
	}
	if (fread(&n, sizeof(n), 1, s->fp) != 1) {
		s->line = NULL;
		return ferror(s->fp) ? -EIO : 0;
	}
	if ((size_t)n + 1 > s->cap) {
		char *b = realloc(s->buf, (size_t)n + 1);

		if (!b)
			return -ENOMEM;
		s->buf = b;
		s->cap = (size_t)n + 1;
	}
	if (fread(s->buf, 1, n, s->fp) != n || fread(&s->weight, sizeof(s->weight), 1, s->fp) != 1)
		return -EIO;
	s->buf[n] = '\0';
	s->line = s->buf;
	return 0;
}

/* The lines in memory, sorted (see struct tr_folded); NULL when out of
 * memory.  The cache is not what the set holds, so a const set fills it. */
static const struct tr_strmap_entry **sorted_lines(const struct tr_folded *set)
{
	struct tr_folded *f = (struct tr_folded *)set;

	if (f->sorted && f->n_sorted == f->lines.n)
		return f->sorted;
	free(f->sorted);
	f->sorted = tr_strmap_sorted(&f->lines);
	f->n_sorted = f->sorted ? f->lines.n : 0;
	return f->sorted;
}

static void forget_sorted(struct tr_folded *f)
{
	free(f->sorted);
	f->sorted = NULL;
	f->n_sorted = 0;
}

/* Memory alone: its lines are distinct, nothing to merge. */
static int each_in_memory(const struct tr_folded *f,
			  int (*each)(void *arg, const char *line, size_t len, uint64_t weight),
			  void *arg)
{
	const struct tr_strmap_entry **v = f->lines.n ? sorted_lines(f) : NULL;
	int ret = 0;

	if (f->lines.n && !v)
		return -ENOMEM;
	for (size_t i = 0; i < f->lines.n && !ret; i++)
		ret = each(arg, v[i]->key, strlen(v[i]->key), v[i]->value);
	return ret;
}

/* Calls each(arg, line, weight) for every distinct line of memory and,
 * with `with_runs`, of the runs, in sorted order, each line's weights
 * summed across them. */
static int merge(const struct tr_folded *f, int with_runs,
		 int (*each)(void *arg, const char *line, size_t len, uint64_t weight), void *arg)
{
	struct source src[MAX_RUNS + 1];
	size_t n_src = 0;
	char *cur = NULL;
	size_t cur_cap = 0;
	int ret = 0;

	if (!with_runs || !f->n_runs)
		return each_in_memory(f, each, arg);
	memset(src, 0, sizeof(src));
	if (f->lines.n) {
		src[0].v = sorted_lines(f);
		if (!src[0].v)
			return -ENOMEM;
		src[0].n = f->lines.n;
		n_src = 1;
	}
	for (size_t i = 0; i < f->n_runs; i++) {
		src[n_src].fp = f->runs[i];
		if (fflush(f->runs[i]) != 0 || fseek(f->runs[i], 0, SEEK_SET) != 0)
			ret = -EIO;
		n_src++;
	}
	for (size_t i = 0; i < n_src && !ret; i++)
		ret = source_next(&src[i]);
	while (!ret) {
		struct source *min = NULL;
		uint64_t sum = 0;
		size_t len;

		for (size_t i = 0; i < n_src; i++)
			if (src[i].line && (!min || strcmp(src[i].line, min->line) < 0))
				min = &src[i];
		if (!min)
			break;
		len = strlen(min->line);
		if (len + 1 > cur_cap) {
			char *b = realloc(cur, len + 1);

			if (!b) {
				ret = -ENOMEM;
				break;
			}
			cur = b;
			cur_cap = len + 1;
		}
		memcpy(cur, min->line, len + 1);
		for (size_t i = 0; i < n_src && !ret; i++)
			while (!ret && src[i].line && strcmp(src[i].line, cur) == 0) {
				sum += src[i].weight;
				ret = source_next(&src[i]);
			}
		if (!ret)
			ret = each(arg, cur, len, sum);
	}
	for (size_t i = 0; i < n_src; i++)
		free(src[i].buf);
	free(cur);
	return ret;
}

static int to_run(void *arg, const char *line, size_t len, uint64_t weight)
{
	return put_record(arg, line, len, weight);
}

/* The lines in memory (and, when the runs are all taken, every run) into
 * one new run; memory emptied. */
static int spill(struct tr_folded *f)
{
	int all = f->n_runs == MAX_RUNS;
	FILE *run = run_file(f->dir);
	int ret;

	if (!run)
		return errno ? -errno : -EIO;
	ret = merge(f, all, to_run, run);
	if (!ret && fflush(run) != 0)
		ret = -EIO;
	if (ret < 0) {
		fclose(run);
		return ret;
	}
	if (all) {
		for (size_t i = 0; i < f->n_runs; i++)
			fclose(f->runs[i]);
		f->n_runs = 0;
	}
	f->runs[f->n_runs++] = run;
	f->spilled += f->lines.n;
	forget_sorted(f);
	tr_strmap_free(&f->lines);
	memset(&f->lines, 0, sizeof(f->lines));
	f->bytes = 0;
	return 0;
}

int tr_folded_add(struct tr_folded *f, const char *line, size_t len, uint64_t weight)
{
	size_t before = f->lines.n;
	struct tr_strmap_entry *e = tr_strmap_get(&f->lines, line, len);

	if (!e)
		return -ENOMEM;
	e->value += weight;
	if (f->lines.n == before)
		return 0;
	f->bytes += len + LINE_OVERHEAD;
	if (f->limit && f->bytes > f->limit && !f->spill_error) {
		int ret = spill(f);

		/* Kept in memory then, as without spilling: the lines are not
		 * lost for want of disk. */
		if (ret < 0)
			f->spill_error = ret;
	}
	return 0;
}

int tr_folded_split(char *line, uint64_t max, uint64_t *weight)
{
	char *space, *end;
	uint64_t w;

	line[strcspn(line, "\r\n")] = '\0';
	space = strrchr(line, ' ');
	if (!space || space == line)
		return 0;
	/* strtoull takes "-5" for 2^64 - 5: digits only. */
	if (space[1] < '0' || space[1] > '9')
		return space[1] == '-' ? -ERANGE : 0;
	errno = 0;
	w = strtoull(space + 1, &end, 10);
	if (*end != '\0')
		return 0;
	if (errno == ERANGE || w > max)
		return -ERANGE;
	*space = '\0';
	*weight = w;
	return 1;
}

int tr_folded_read(struct tr_folded *f, FILE *in)
{
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;

	while (ret == 0 && getline(&line, &cap, in) >= 0) {
		uint64_t weight;

		if (tr_folded_split(line, UINT64_MAX, &weight) == 1 && weight)
			ret = tr_folded_add(f, line, strlen(line), weight);
	}
	if (ret == 0 && ferror(in))
		ret = -EIO;
	free(line);
	return ret;
}

size_t tr_folded_count(const struct tr_folded *f)
{
	return f->lines.n + f->spilled;
}

int tr_folded_spilled(const struct tr_folded *f, size_t *runs)
{
	if (runs)
		*runs = f->n_runs;
	return f->spill_error;
}

struct writing {
	FILE *out;
	uint64_t divisor;
};

static int write_line(void *arg, const char *line, size_t len, uint64_t weight)
{
	struct writing *w = arg;
	uint64_t v = w->divisor == 1 ? weight : (weight + w->divisor / 2) / w->divisor;

	(void)len;
	if (v && fprintf(w->out, "%s %" PRIu64 "\n", line, v) < 0)
		return -EIO;
	return 0;
}

int tr_folded_write(const struct tr_folded *f, FILE *out, uint64_t divisor)
{
	struct writing w = { out, divisor ? divisor : 1 };
	int ret;

	/* Sorted: one collection always gives the same file. */
	ret = merge(f, 1, write_line, &w);
	if (!ret && ferror(out))
		ret = -EIO;
	return ret;
}

struct each_arg {
	int (*each)(void *arg, const char *line, uint64_t weight);
	void *arg;
};

static int each_line(void *arg, const char *line, size_t len, uint64_t weight)
{
	struct each_arg *e = arg;

	(void)len;
	return e->each(e->arg, line, weight);
}

int tr_folded_each(const struct tr_folded *f,
		   int (*each)(void *arg, const char *line, uint64_t weight), void *arg)
{
	struct each_arg e = { each, arg };

	return merge(f, 1, each_line, &e);
}

/* "name-ID" at buf[*pos...], the name under the sanitize rule.  Every
 * sample of a conversion is rooted here: written by hand rather than by
 * snprintf, which cost more than naming all of a sample's frames. */
static int put_frame(char *buf, size_t len, size_t *pos, const char *name, long id)
{
	char digits[TR_DECIMAL_MAX], *d;
	unsigned long v = id < 0 ? 0ul - (unsigned long)id : (unsigned long)id;
	size_t start = *pos, name_len, id_len;

	if (!name || !*name)
		name = "[unknown]";
	d = tr_decimal(digits + sizeof(digits), v);
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
