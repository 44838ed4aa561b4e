/* `tracerig report ARCHIVE [--top N]`: what is in a .trace.zip, at a glance.
 *
 * Reads the archive with libzip, streaming its entries (perf.data.txt can be
 * large), and prints: the manifest basics (profile name, host, kernel,
 * duration, each backend's status), the top functions by self and by total
 * CPU samples from perf.data.txt (`perf script` text), the split of the
 * samples between processes, and, when offcpu.folded is there, where the
 * threads were blocked.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>

#include "lib/sanitize.h"
#include "lib/strmap.h"
#include "report.h"
#include "session.h"

#define REPORT_DEFAULT_TOP 10
#define REPORT_MAX_MANIFEST (16u << 20)
#define REPORT_MAX_EVENTS 8
#define REPORT_MAX_COMMS 4

/* ---- a small JSON reader, for manifest.json only ---- */

enum jv_type { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT };

struct jv {
	enum jv_type type;
	double number;
	int boolean;
	char *string;	  /* JV_STRING */
	char **keys;	  /* JV_OBJECT: n keys, parallel to items */
	struct jv *items; /* JV_ARRAY, JV_OBJECT */
	size_t n;
};

struct jparser {
	const char *p, *end;
	int depth;
};

static void jv_free(struct jv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		jv_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->string);
	memset(v, 0, sizeof(*v));
}

static void jskip(struct jparser *jp)
{
	while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' ||
				   *jp->p == '\r'))
		jp->p++;
}

static int jlit(struct jparser *jp, const char *word)
{
	size_t len = strlen(word);

	if ((size_t)(jp->end - jp->p) < len || memcmp(jp->p, word, len) != 0)
		return -EINVAL;
	jp->p += len;
	return 0;
}

static void put_utf8(char **o, unsigned int c)
{
	if (c < 0x80) {
		*(*o)++ = (char)c;
	} else if (c < 0x800) {
		*(*o)++ = (char)(0xc0 | (c >> 6));
		*(*o)++ = (char)(0x80 | (c & 0x3f));
	} else {
		*(*o)++ = (char)(0xe0 | (c >> 12));
		*(*o)++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*(*o)++ = (char)(0x80 | (c & 0x3f));
	}
}

static int jstring(struct jparser *jp, char **out)
{
	const char *start = ++jp->p; /* after the quote */
	char *s, *o;

	while (jp->p < jp->end && *jp->p != '"') {
		if (*jp->p == '\\')
			jp->p++;
		jp->p++;
	}
	if (jp->p >= jp->end)
		return -EINVAL;
	/* Escapes only shrink: the raw length is enough. */
	s = o = malloc((size_t)(jp->p - start) + 1);
	if (!s)
		return -ENOMEM;
	for (const char *c = start; c < jp->p; c++) {
		unsigned int u = 0;

		if (*c != '\\') {
			*o++ = *c;
			continue;
		}
		switch (*++c) {
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			for (int i = 0; i < 4; i++) {
				if (++c >= jp->p || !isxdigit((unsigned char)*c))
					goto bad;
				u = u * 16 + (unsigned int)(isdigit((unsigned char)*c)
							    ? *c - '0'
							    : (tolower((unsigned char)*c) - 'a' + 10));
			}
			put_utf8(&o, u ? u : '?'); /* surrogates are kept as is */
			break;
		default: /* \" \\ \/ */
			*o++ = *c;
		}
	}
	*o = '\0';
	jp->p++;
	*out = s;
	return 0;
bad:
	free(s);
	return -EINVAL;
}

static int jvalue(struct jparser *jp, struct jv *v);

static int jcontainer(struct jparser *jp, struct jv *v, int object)
{
	char close = object ? '}' : ']';
	size_t cap = 0;
	int ret;

	v->type = object ? JV_OBJECT : JV_ARRAY;
	jp->p++;
	jskip(jp);
	if (jp->p < jp->end && *jp->p == close) {
		jp->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;

		jskip(jp);
		if (object) {
			if (jp->p >= jp->end || *jp->p != '"')
				return -EINVAL;
			ret = jstring(jp, &key);
			if (ret < 0)
				return ret;
			jskip(jp);
			if (jp->p >= jp->end || *jp->p != ':') {
				free(key);
				return -EINVAL;
			}
			jp->p++;
		}
		if (v->n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct jv *items = realloc(v->items, ncap * sizeof(*items));
			char **keys;

			if (!items) {
				free(key);
				return -ENOMEM;
			}
			v->items = items;
			if (object) {
				keys = realloc(v->keys, ncap * sizeof(*keys));
				if (!keys) {
					free(key);
					return -ENOMEM;
				}
				v->keys = keys;
			}
			cap = ncap;
		}
		memset(&v->items[v->n], 0, sizeof(v->items[v->n]));
		if (object)
			v->keys[v->n] = key;
		v->n++;
		ret = jvalue(jp, &v->items[v->n - 1]);
		if (ret < 0)
			return ret;
		jskip(jp);
		if (jp->p < jp->end && *jp->p == ',') {
			jp->p++;
			continue;
		}
		if (jp->p < jp->end && *jp->p == close) {
			jp->p++;
			return 0;
		}
		return -EINVAL;
	}
}

static int jvalue(struct jparser *jp, struct jv *v)
{
	char *end;
	int ret;

	jskip(jp);
	if (jp->p >= jp->end)
		return -EINVAL;
	switch (*jp->p) {
	case '{':
	case '[':
		if (++jp->depth > 64)
			return -EINVAL;
		ret = jcontainer(jp, v, *jp->p == '{');
		jp->depth--;
		return ret;
	case '"':
		v->type = JV_STRING;
		return jstring(jp, &v->string);
	case 't':
		v->type = JV_BOOL;
		v->boolean = 1;
		return jlit(jp, "true");
	case 'f':
		v->type = JV_BOOL;
		return jlit(jp, "false");
	case 'n':
		v->type = JV_NULL;
		return jlit(jp, "null");
	default:
		/* The buffer is NUL-terminated, so strtod stops in time. */
		v->type = JV_NUMBER;
		v->number = strtod(jp->p, &end);
		if (end == jp->p || end > jp->end)
			return -EINVAL;
		jp->p = end;
		return 0;
	}
}

/* text must be NUL-terminated at text[len]. */
static int jv_parse(const char *text, size_t len, struct jv *v)
{
	struct jparser jp = { .p = text, .end = text + len };
	int ret;

	memset(v, 0, sizeof(*v));
	ret = jvalue(&jp, v);
	jskip(&jp);
	if (ret == 0 && jp.p != jp.end)
		ret = -EINVAL;
	if (ret < 0)
		jv_free(v);
	return ret;
}

/* get(v, "a", "b", NULL): v.a.b, or NULL. */
static const struct jv *jv_get(const struct jv *v, ...)
{
	const char *key;
	va_list ap;

	va_start(ap, v);
	while (v && (key = va_arg(ap, const char *))) {
		const struct jv *found = NULL;

		if (v->type == JV_OBJECT)
			for (size_t i = 0; i < v->n && !found; i++)
				if (strcmp(v->keys[i], key) == 0)
					found = &v->items[i];
		v = found;
	}
	va_end(ap);
	return v;
}

static const char *jv_str(const struct jv *v)
{
	return v && v->type == JV_STRING ? v->string : NULL;
}

static int jv_num(const struct jv *v, double *out)
{
	if (!v || v->type != JV_NUMBER)
		return 0;
	*out = v->number;
	return 1;
}

/* ---- counting: names -> counts ---- */

struct count {
	const char *name; /* the key in counts.index */
	uint64_t self, total;
	uint64_t last_sample; /* counts `total` once per sample */
	long pid;
	struct {
		char *name;
		uint64_t n;
	} comms[REPORT_MAX_COMMS];
};

struct counts {
	struct count *items;
	size_t n, cap;
	struct tr_strmap index; /* name -> its item's index + 1 */
};

static void counts_free(struct counts *c)
{
	for (size_t i = 0; i < c->n; i++)
		for (int k = 0; k < REPORT_MAX_COMMS; k++)
			free(c->items[i].comms[k].name);
	free(c->items);
	tr_strmap_free(&c->index);
	memset(c, 0, sizeof(*c));
}

/* The entry for `name`, created with zero counts if new; NULL on ENOMEM. */
static struct count *counts_get(struct counts *c, const char *name)
{
	struct tr_strmap_entry *at = tr_strmap_get(&c->index, name, strlen(name));
	struct count *e;

	if (!at)
		return NULL;
	if (at->value)
		return &c->items[at->value - 1];
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		struct count *items = realloc(c->items, ncap * sizeof(*items));

		if (!items)
			return NULL;
		c->items = items;
		c->cap = ncap;
	}
	e = &c->items[c->n];
	memset(e, 0, sizeof(*e));
	e->name = at->key;
	at->value = ++c->n;
	return e;
}

static int by_self(const void *a, const void *b)
{
	const struct count *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_total(const void *a, const void *b)
{
	const struct count *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Every string printed comes from an archive, most of it from traced
 * programs (frame and thread names, command lines): no escape sequence of
 * theirs reaches the terminal.  A few rotating buffers, so that one printf
 * can hold several; the report is single-threaded. */
static const char *tty(const char *s)
{
	static char bufs[8][1024];
	static unsigned next;
	char *b = bufs[next++ % 8];

	if (!s)
		return "?";
	tr_sanitize_name(b, sizeof(bufs[0]), s);
	return b;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ---- reading entries line by line ---- */

/* Longer lines are skipped: a small archive can hold a huge compressed
 * line, and no real frame list comes near this. */
#define REPORT_LINE_MAX (16u << 20)

struct line_reader {
	zip_file_t *zf;
	char buf[65536];
	size_t pos, len;
	int eof;
	char *line;
	size_t cap;
	uint64_t skipped; /* lines longer than REPORT_LINE_MAX */
};

/* 1 with r->line set (no newline), 0 at the end, negative errno on error. */
static int read_line(struct line_reader *r)
{
	size_t n = 0;
	int too_long = 0;

	for (;;) {
		char *nl;
		size_t chunk;

		if (r->pos == r->len) {
			zip_int64_t got;

			if (r->eof)
				break;
			got = zip_fread(r->zf, r->buf, sizeof(r->buf));
			if (got < 0)
				return -EIO;
			if (got == 0) {
				r->eof = 1;
				break;
			}
			r->pos = 0;
			r->len = (size_t)got;
		}
		nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
		chunk = (nl ? (size_t)(nl - r->buf) : r->len) - r->pos;
		if (too_long || n + chunk > REPORT_LINE_MAX) {
			/* Read on to its end without keeping it. */
			too_long = 1;
			r->pos += chunk;
			if (nl) {
				r->pos++;
				r->skipped++;
				too_long = 0;
				n = 0;
			}
			continue;
		}
		if (n + chunk + 1 > r->cap) {
			size_t ncap = (n + chunk + 1) * 2;
			char *grown = realloc(r->line, ncap);

			if (!grown)
				return -ENOMEM;
			r->line = grown;
			r->cap = ncap;
		}
		memcpy(r->line + n, r->buf + r->pos, chunk);
		n += chunk;
		r->pos += chunk;
		if (nl) {
			r->pos++;
			r->line[n] = '\0';
			goto done;
		}
	}
	if (too_long)
		r->skipped++;
	if (n == 0 || too_long)
		return 0;
	r->line[n] = '\0';
done:
	if (n && r->line[n - 1] == '\r')
		r->line[n - 1] = '\0';
	return 1;
}

static void warn_skipped(const struct line_reader *r, const char *entry)
{
	if (r->skipped)
		fprintf(stderr, "tracerig: report: %s: %" PRIu64 " line(s) longer than %u MiB "
			"skipped (tracerig never writes such lines: the archive was altered)\n",
			entry, r->skipped, REPORT_LINE_MAX >> 20);
}

/* ---- perf.data.txt ---- */

struct cpu_profile {
	struct counts funcs, procs;
	uint64_t samples, current; /* current: 1-based number of the open sample */
	int in_sample, first_frame;
	char *events[REPORT_MAX_EVENTS];
	uint64_t event_samples[REPORT_MAX_EVENTS];
	size_t n_events;
};

static int is_time_token(const char *t, size_t len)
{
	size_t i = 0, digits = 0;

	while (i < len && isdigit((unsigned char)t[i]))
		i++, digits++;
	if (!digits || i >= len || t[i] != '.')
		return 0;
	for (i++; i < len && isdigit((unsigned char)t[i]); i++)
		;
	return i + 1 == len && t[i] == ':';
}

static int is_cpu_token(const char *t, size_t len)
{
	if (len < 3 || t[0] != '[' || t[len - 1] != ']')
		return 0;
	for (size_t i = 1; i + 1 < len; i++)
		if (!isdigit((unsigned char)t[i]))
			return 0;
	return 1;
}

static int add_event(struct cpu_profile *cp, const char *name, size_t len)
{
	for (size_t i = 0; i < cp->n_events; i++) {
		if (strlen(cp->events[i]) == len && memcmp(cp->events[i], name, len) == 0) {
			cp->event_samples[i]++;
			return 0;
		}
	}
	if (cp->n_events == REPORT_MAX_EVENTS)
		return 0;
	cp->events[cp->n_events] = strndup(name, len);
	if (!cp->events[cp->n_events])
		return -ENOMEM;
	cp->event_samples[cp->n_events++] = 1;
	return 0;
}

static int count_comm(struct count *proc, const char *comm)
{
	int k;

	for (k = 0; k < REPORT_MAX_COMMS && proc->comms[k].name; k++) {
		if (strcmp(proc->comms[k].name, comm) == 0) {
			proc->comms[k].n++;
			return 0;
		}
	}
	if (k == REPORT_MAX_COMMS)
		return 0; /* more thread names than we show */
	proc->comms[k].name = strdup(comm);
	if (!proc->comms[k].name)
		return -ENOMEM;
	proc->comms[k].n = 1;
	return 0;
}

/* "comm  pid/tid [cpu] time: period event: ...": comm may hold spaces, so
 * the pid is the token right before the cpu (or, without one, the time). */
static int sample_header(struct cpu_profile *cp, const char *line)
{
	const char *tok[64];
	size_t len[64], n = 0, k;
	const char *p = line;
	char key[32], comm[256];
	struct count *proc;
	long pid = -1;
	int ret;

	while (*p && n < 64) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		tok[n] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		len[n] = (size_t)(p - tok[n]);
		n++;
	}
	for (k = 1; k < n; k++)
		if (is_cpu_token(tok[k], len[k]) || is_time_token(tok[k], len[k]))
			break;
	if (k < n) {
		size_t clen = (size_t)(tok[k - 1] - line);

		pid = isdigit((unsigned char)tok[k - 1][0]) ? strtol(tok[k - 1], NULL, 10) : -1;
		while (clen && (line[clen - 1] == ' ' || line[clen - 1] == '\t'))
			clen--;
		if (!clen) { /* no comm: the pid token was the first one */
			k = 0;
		} else {
			snprintf(comm, sizeof(comm), "%.*s", (int)clen, line);
		}
	}
	if (k == 0 || k >= n)
		snprintf(comm, sizeof(comm), "%.*s", n ? (int)len[0] : 0, n ? tok[0] : "");
	/* The event: the first "name:" token after the time. */
	for (; k < n && !is_time_token(tok[k], len[k]); k++)
		;
	for (k++; k < n; k++) {
		if (len[k] > 1 && tok[k][len[k] - 1] == ':' && !isdigit((unsigned char)tok[k][0])) {
			ret = add_event(cp, tok[k], len[k] - 1);
			if (ret < 0)
				return ret;
			break;
		}
	}

	cp->samples++;
	cp->current = cp->samples;
	cp->in_sample = 1;
	cp->first_frame = 1;
	snprintf(key, sizeof(key), "%ld", pid);
	proc = counts_get(&cp->procs, key);
	if (!proc)
		return -ENOMEM;
	proc->pid = pid;
	proc->self++;
	return count_comm(proc, comm);
}

/* "\t    55d0c0a1b2c3 demo_hot+0x12 (/path/to/dso)" */
static int sample_frame(struct cpu_profile *cp, char *line)
{
	char *p = line, *sym, *end, *dso = NULL;
	char name[1024];
	struct count *f;

	while (*p == ' ' || *p == '\t')
		p++;
	while (*p && *p != ' ' && *p != '\t') /* the address */
		p++;
	while (*p == ' ' || *p == '\t')
		p++;
	sym = p;
	end = sym + strlen(sym);
	/* The dso is the last balanced "(...)"; the symbol may hold parentheses. */
	if (end > sym && end[-1] == ')') {
		int depth = 0;

		for (char *q = end - 1; q >= sym; q--) {
			if (*q == ')')
				depth++;
			else if (*q == '(' && --depth == 0) {
				dso = q + 1;
				end[-1] = '\0';
				end = q;
				break;
			}
		}
	}
	while (end > sym && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*end = '\0';
	/* Drop "+0x1f" offsets. */
	p = strrchr(sym, '+');
	if (p && p[1] == '0' && p[2] == 'x' && p[3] && strspn(p + 3, "0123456789abcdefABCDEF") ==
						  strlen(p + 3))
		*p = '\0';
	if (!*sym || strcmp(sym, "[unknown]") == 0) {
		const char *base = dso ? strrchr(dso, '/') : NULL;

		base = base ? base + 1 : dso;
		if (base && *base && strcmp(base, "[unknown]") != 0)
			snprintf(name, sizeof(name), "[unknown] (%s)", base);
		else
			snprintf(name, sizeof(name), "[unknown]");
	} else {
		snprintf(name, sizeof(name), "%s", sym);
	}

	f = counts_get(&cp->funcs, name);
	if (!f)
		return -ENOMEM;
	if (cp->first_frame)
		f->self++;
	cp->first_frame = 0;
	if (f->last_sample != cp->current) {
		f->total++;
		f->last_sample = cp->current;
	}
	return 0;
}

static int end_sample(struct cpu_profile *cp)
{
	struct count *f;

	if (cp->in_sample && cp->first_frame) {
		/* A sample without a stack still counts, as such. */
		f = counts_get(&cp->funcs, "[no stack]");
		if (!f)
			return -ENOMEM;
		f->self++;
		f->total++;
		f->last_sample = cp->current;
	}
	cp->in_sample = 0;
	return 0;
}

static int read_perf_script(zip_file_t *zf, struct cpu_profile *cp)
{
	struct line_reader *r;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->zf = zf;
	while ((ret = read_line(r)) > 0) {
		char *line = r->line;

		if (line[0] == ' ' || line[0] == '\t') {
			if (strspn(line, " \t") == strlen(line))
				ret = end_sample(cp);
			else if (cp->in_sample)
				ret = sample_frame(cp, line);
		} else if (line[0] == '\0') {
			ret = end_sample(cp);
		} else if (line[0] != '#') {
			ret = end_sample(cp);
			if (ret == 0)
				ret = sample_header(cp, line);
		}
		if (ret < 0)
			break;
	}
	if (ret == 0)
		ret = end_sample(cp);
	warn_skipped(r, "perf.data.txt");
	free(r->line);
	free(r);
	return ret;
}

static void cpu_profile_free(struct cpu_profile *cp)
{
	counts_free(&cp->funcs);
	counts_free(&cp->procs);
	for (size_t i = 0; i < cp->n_events; i++)
		free(cp->events[i]);
}

static void print_functions(struct cpu_profile *cp, int top)
{
	struct counts *f = &cp->funcs;
	size_t n = f->n < (size_t)top ? f->n : (size_t)top, n_self = 0;

	qsort(f->items, f->n, sizeof(*f->items), by_self);
	while (n_self < n && f->items[n_self].self)
		n_self++;
	printf("\nTop %zu functions by self samples (where the CPU was):\n", n_self);
	printf("  %9s %7s  %s\n", "samples", "%", "function");
	for (size_t i = 0; i < n_self; i++)
		printf("  %9" PRIu64 " %6.1f%%  %s\n", f->items[i].self,
		       percent(f->items[i].self, cp->samples), tty(f->items[i].name));

	qsort(f->items, f->n, sizeof(*f->items), by_total);
	printf("\nTop %zu functions by total samples (on the stack, once per sample):\n", n);
	printf("  %9s %7s  %s\n", "samples", "%", "function");
	for (size_t i = 0; i < n; i++)
		printf("  %9" PRIu64 " %6.1f%%  %s\n", f->items[i].total,
		       percent(f->items[i].total, cp->samples), tty(f->items[i].name));
	/* Sorting moved the items: the index must follow. */
	for (size_t i = 0; i < f->n; i++)
		tr_strmap_find(&f->index, f->items[i].name, strlen(f->items[i].name))->value = i + 1;
}

static void print_processes(struct cpu_profile *cp, int top)
{
	struct counts *pr = &cp->procs;
	size_t n = pr->n < (size_t)top ? pr->n : (size_t)top;

	qsort(pr->items, pr->n, sizeof(*pr->items), by_self);
	printf("\nProcesses (%zu):\n", pr->n);
	printf("  %9s %7s  %s\n", "samples", "%", "process (pid)");
	for (size_t i = 0; i < n; i++) {
		struct count *p = &pr->items[i];
		int best = 0, names = 0;

		/* A process is shown by its busiest thread name. */
		for (int k = 0; k < REPORT_MAX_COMMS && p->comms[k].name; k++, names++)
			if (p->comms[k].n > p->comms[best].n)
				best = k;
		printf("  %9" PRIu64 " %6.1f%%  %s", p->self, percent(p->self, cp->samples),
		       p->comms[0].name ? tty(p->comms[best].name) : "?");
		if (p->pid >= 0)
			printf(" %ld", p->pid);
		if (names > 1)
			printf("  (and thread names:");
		for (int k = 0; names > 1 && k < names; k++)
			if (k != best)
				printf(" %s", tty(p->comms[k].name));
		printf("%s\n", names > 1 ? ")" : "");
	}
	if (pr->n > n)
		printf("  ... %zu more processes\n", pr->n - n);
}

/* 1 when the archive has CPU samples, 0 when not, negative errno. */
static int report_cpu(zip_t *za, const char *archive, int top)
{
	struct cpu_profile cp;
	zip_file_t *zf;
	int ret;

	memset(&cp, 0, sizeof(cp));
	if (zip_name_locate(za, "perf.data.txt", 0) < 0) {
		printf("\nCPU samples: none (the archive has no perf.data.txt: "
		       "the perf_events backend did not run or wrote nothing)\n");
		return 0;
	}
	zf = zip_fopen(za, "perf.data.txt", 0);
	if (zf) {
		ret = read_perf_script(zf, &cp);
		zip_fclose(zf);
	} else {
		ret = -EIO;
	}
	if (ret < 0) {
		fprintf(stderr, "tracerig: report: cannot read perf.data.txt in %s: %s "
			"(the archive may be damaged: check it with `unzip -t`)\n", archive,
			ret == -EIO ? zip_strerror(za) : strerror(-ret));
		goto cleanup;
	}
	if (!cp.samples) {
		printf("\nCPU samples: none (perf.data.txt has no samples)\n");
		goto cleanup;
	}
	printf("\nCPU samples: %" PRIu64 " in perf.data.txt", cp.samples);
	for (size_t i = 0; i < cp.n_events; i++)
		printf("%s%s %" PRIu64, i ? ", " : " (", tty(cp.events[i]), cp.event_samples[i]);
	printf("%s\n", cp.n_events ? ")" : "");
	print_functions(&cp, top);
	print_processes(&cp, top);
	ret = 1;
cleanup:
	cpu_profile_free(&cp);
	return ret;
}

/* ---- offcpu.folded ---- */

/* The innermost user-space frame says where the program waited; kernel
 * frames ("_[k]") only say how.  Kernel-only stacks keep their leaf. */
static const char *folded_leaf(char *stack)
{
	char *frame = strrchr(stack, ';');
	char *leaf = frame ? frame + 1 : stack;

	for (;;) {
		size_t len = strlen(leaf);

		if (len < 4 || strcmp(leaf + len - 4, "_[k]") != 0)
			return leaf;
		if (frame == NULL)
			break;
		*frame = '\0';
		/* Back from the cut: strrchr from the start made a line of many
		 * kernel frames quadratic (minutes for a few MB). */
		for (leaf = frame; leaf > stack && leaf[-1] != ';'; leaf--)
			;
		frame = leaf > stack ? leaf - 1 : NULL;
	}
	/* All kernel frames: the innermost one. */
	return NULL;
}

/* 1 when the archive has off-CPU stacks, 0 when not, negative errno. */
static int report_offcpu(zip_t *za, const char *archive, int top)
{
	struct counts leaves;
	struct line_reader *r = NULL;
	zip_file_t *zf;
	uint64_t total = 0, stacks = 0;
	int ret;

	memset(&leaves, 0, sizeof(leaves));
	if (zip_name_locate(za, "offcpu.folded", 0) < 0)
		return 0;
	zf = zip_fopen(za, "offcpu.folded", 0);
	if (!zf) {
		ret = -EIO;
		goto fail;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		ret = -ENOMEM;
		goto fail;
	}
	r->zf = zf;
	while ((ret = read_line(r)) > 0) {
		char *sp = strrchr(r->line, ' '), *end;
		const char *leaf;
		struct count *c;
		char *copy;
		uint64_t w;

		if (!sp || sp == r->line)
			continue;
		w = strtoull(sp + 1, &end, 10);
		if (*end || end == sp + 1)
			continue;
		*sp = '\0';
		copy = strdup(r->line);
		if (!copy) {
			ret = -ENOMEM;
			break;
		}
		leaf = folded_leaf(r->line);
		if (!leaf) {
			const char *semi = strrchr(copy, ';');

			leaf = semi ? semi + 1 : copy;
		}
		c = counts_get(&leaves, leaf);
		free(copy);
		if (!c) {
			ret = -ENOMEM;
			break;
		}
		c->self += w;
		total += w;
		stacks++;
	}
	if (ret < 0)
		goto fail;
	if (!total) {
		printf("\nOff-CPU time: none (offcpu.folded has no stacks)\n");
		goto cleanup;
	}
	printf("\nOff-CPU time: %.3f s blocked in %" PRIu64 " stacks (offcpu.folded)\n",
	       (double)total / 1e6, stacks);
	qsort(leaves.items, leaves.n, sizeof(*leaves.items), by_self);
	printf("\nTop %zu leaf functions by blocked time (innermost user-space frame):\n",
	       leaves.n < (size_t)top ? leaves.n : (size_t)top);
	printf("  %12s %7s  %s\n", "blocked ms", "%", "function");
	for (size_t i = 0; i < leaves.n && i < (size_t)top; i++)
		printf("  %12.3f %6.1f%%  %s\n", (double)leaves.items[i].self / 1e3,
		       percent(leaves.items[i].self, total), tty(leaves.items[i].name));
	ret = 1;
	goto cleanup;
fail:
	fprintf(stderr, "tracerig: report: cannot read offcpu.folded in %s: %s "
		"(the archive may be damaged: check it with `unzip -t`)\n", archive,
		ret == -EIO ? zip_strerror(za) : strerror(-ret));
cleanup:
	if (r) {
		warn_skipped(r, "offcpu.folded");
		free(r->line);
	}
	free(r);
	if (zf)
		zip_fclose(zf);
	counts_free(&leaves);
	return ret;
}

/* ---- manifest.json ---- */

static int read_entry(zip_t *za, const char *name, char **out, size_t *out_len)
{
	zip_stat_t st;
	zip_file_t *zf;
	zip_int64_t got;
	char *buf;

	zip_stat_init(&st);
	if (zip_stat(za, name, 0, &st) < 0)
		return -ENOENT;
	if (!(st.valid & ZIP_STAT_SIZE) || st.size > REPORT_MAX_MANIFEST)
		return -EFBIG;
	zf = zip_fopen(za, name, 0);
	if (!zf)
		return -EIO;
	buf = malloc(st.size + 1);
	if (!buf) {
		zip_fclose(zf);
		return -ENOMEM;
	}
	got = zip_fread(zf, buf, st.size);
	zip_fclose(zf);
	if (got < 0 || (zip_uint64_t)got != st.size) {
		free(buf);
		return -EIO;
	}
	buf[st.size] = '\0';
	*out = buf;
	*out_len = st.size;
	return 0;
}

/* The session's name: the profile's [tracerig] name, else the profile file's. */
static void session_name(const struct jv *m, char *buf, size_t len)
{
	const char *name = jv_str(jv_get(m, "profile", "sections", "tracerig", "name", NULL));
	const char *path = jv_str(jv_get(m, "profile", "path", NULL));
	const char *base, *dot;

	if (name) {
		snprintf(buf, len, "%s", name);
		return;
	}
	if (!path) {
		snprintf(buf, len, "?");
		return;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	snprintf(buf, len, "%.*s", (int)(dot && dot != base ? dot - base : (long)strlen(base)),
		 base);
}

static void print_targets(const struct jv *m)
{
	const struct jv *t = jv_get(m, "targets", NULL);
	const struct jv *pids = jv_get(t, "pids", NULL);
	const struct jv *cmd = jv_get(t, "command", NULL);
	const struct jv *argv = jv_get(cmd, "argv", NULL);
	const struct jv *sw = jv_get(t, "system_wide", NULL);
	double v;

	if (!t)
		return;
	printf("  %-10s", "targets");
	if (cmd && argv && argv->type == JV_ARRAY) {
		printf(" command");
		for (size_t i = 0; i < argv->n; i++)
			printf(" %s", jv_str(&argv->items[i]) ? tty(jv_str(&argv->items[i])) : "?");
		if (jv_num(jv_get(cmd, "pid", NULL), &v))
			printf(" (pid %.0f", v);
		else
			printf(" (");
		if (jv_num(jv_get(cmd, "exit_status", NULL), &v))
			printf(", exit status %.0f)", v);
		else if (jv_num(jv_get(cmd, "killed_by_signal", NULL), &v))
			printf(", killed by signal %.0f)", v);
		else if (jv_str(jv_get(cmd, "exec_error", NULL)))
			printf(", could not run: %s)", tty(jv_str(jv_get(cmd, "exec_error", NULL))));
		else
			printf(")");
	} else if (pids && pids->type == JV_ARRAY && pids->n) {
		printf(" pid%s", pids->n > 1 ? "s" : "");
		for (size_t i = 0; i < pids->n; i++)
			if (jv_num(&pids->items[i], &v))
				printf("%s%.0f", i ? "," : " ", v);
	} else if (sw && sw->type == JV_BOOL && sw->boolean) {
		printf(" the whole system");
	} else {
		printf(" ?");
	}
	if (jv_num(jv_get(t, "observed_processes", NULL), &v))
		printf("; %.0f processes observed", v);
	printf("\n");
}

static void print_plugins(const struct jv *m)
{
	const struct jv *plugins = jv_get(m, "plugins", NULL);

	if (!plugins || plugins->type != JV_ARRAY)
		return;
	printf("  backends\n");
	for (size_t i = 0; i < plugins->n; i++) {
		const struct jv *p = &plugins->items[i];
		const struct jv *counters = jv_get(p, "counters", NULL);
		const char *name = jv_str(jv_get(p, "name", NULL));
		const char *status = jv_str(jv_get(p, "status", NULL));
		const char *err = jv_str(jv_get(p, "error", NULL));
		const char *in = jv_str(jv_get(p, "failed_in", NULL));
		const struct jv *req = jv_get(p, "required", NULL);
		int sep = 0;

		printf("    %-12s %-7s %s", name ? tty(name) : "?", status ? tty(status) : "?",
		       req && req->type == JV_BOOL && req->boolean ? "required" : "optional");
		if (err)
			printf(" (%s%s%s)", in ? tty(in) : "", in ? ": " : "", tty(err));
		for (size_t k = 0; counters && counters->type == JV_OBJECT && k < counters->n; k++) {
			double v;

			if (jv_num(&counters->items[k], &v)) {
				printf("%s%s %.0f", sep ? ", " : "  ", tty(counters->keys[k]), v);
				sep = 1;
			}
		}
		printf("\n");
	}
}

static void report_manifest(zip_t *za, const char *archive)
{
	const char *host, *kernel, *arch, *start, *ended;
	char *text = NULL, name[256];
	size_t len;
	struct jv m;
	double v;
	int ret;

	ret = read_entry(za, "manifest.json", &text, &len);
	if (ret == 0)
		ret = jv_parse(text, len, &m);
	free(text);
	if (ret < 0) {
		fprintf(stderr, "tracerig: report: warning: %s manifest.json in %s: %s "
			"(is this an archive written by tracerig?)\n",
			ret == -ENOENT ? "no" : "cannot read", archive,
			ret == -ENOENT ? "not in the archive"
				       : ret == -EINVAL ? "not valid JSON" : strerror(-ret));
		printf("archive      %s (no manifest)\n", tty(archive));
		return;
	}
	session_name(&m, name, sizeof(name));
	printf("archive      %s\n", tty(archive));
	printf("  %-10s %s", "name", tty(name));
	if (jv_str(jv_get(&m, "profile", "path", NULL)))
		printf(" (profile %s)", tty(jv_str(jv_get(&m, "profile", "path", NULL))));
	printf("\n");

	host = jv_str(jv_get(&m, "host", "hostname", NULL));
	kernel = jv_str(jv_get(&m, "host", "kernel", NULL));
	arch = jv_str(jv_get(&m, "host", "arch", NULL));
	printf("  %-10s %s\n", "host", host ? tty(host) : "?");
	printf("  %-10s Linux %s%s%s", "kernel", kernel ? tty(kernel) : "?", arch ? " " : "",
	       arch ? tty(arch) : "");
	if (jv_num(jv_get(&m, "host", "cpus_online", NULL), &v))
		printf(", %.0f CPUs", v);
	printf("\n");

	start = jv_str(jv_get(&m, "clock", "start_utc", NULL));
	ended = jv_str(jv_get(&m, "session", "ended_by", NULL));
	printf("  %-10s ", "duration");
	if (jv_num(jv_get(&m, "session", "duration_ms", NULL), &v))
		printf("%.3f s", v / 1000.0);
	else
		printf("?");
	if (start)
		printf(", started %s", tty(start));
	if (ended)
		printf(", ended by %s", tty(ended));
	printf("\n");
	print_targets(&m);
	print_plugins(&m);
	jv_free(&m);
}

/* ---- the command ---- */

static void report_usage(FILE *out)
{
	fprintf(out,
		"Usage: tracerig report ARCHIVE [--top N]\n"
		"\n"
		"Summarizes a tracerig archive (.trace.zip): the session, each backend's\n"
		"status, the top functions by self and total CPU samples, the processes,\n"
		"and off-CPU time when the archive has it.\n"
		"\n"
		"  -n, --top N   show the N first functions and processes (default %d)\n"
		"  -h, --help    this help\n",
		REPORT_DEFAULT_TOP);
}

static const struct option report_options[] = {
	{ "top", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int open_archive(const char *path, zip_t **out)
{
	struct stat st;
	zip_error_t ze;
	zip_t *za;
	int err = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "tracerig: report: cannot open %s: %s (give the path of a "
			".trace.zip written by tracerig)\n", path, strerror(errno));
		return -errno;
	}
	if (S_ISDIR(st.st_mode)) {
		fprintf(stderr, "tracerig: report: cannot open %s: %s (give the path of a "
			".trace.zip written by tracerig)\n", path, strerror(EISDIR));
		return -EISDIR;
	}
	za = zip_open(path, ZIP_RDONLY, &err);
	if (!za) {
		zip_error_init_with_code(&ze, err);
		fprintf(stderr, "tracerig: report: cannot open %s: %s (%s)\n", path,
			zip_error_strerror(&ze),
			err == ZIP_ER_NOZIP || err == ZIP_ER_INCONS
				? "give a .trace.zip written by tracerig"
				: "check the path and the permissions");
		zip_error_fini(&ze);
		return -EINVAL;
	}
	*out = za;
	return 0;
}

int tr_report_main(int argc, char **argv)
{
	const char *archive;
	zip_t *za = NULL;
	int c, cpu, off, top = REPORT_DEFAULT_TOP, status = TR_EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:h", report_options, NULL)) != -1) {
		char *end;
		long v;

		switch (c) {
		case 'n':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || errno || v < 1 || v > 100000) {
				fprintf(stderr, "tracerig: report: --top %s: not a count "
					"(use --top 20)\n", optarg);
				return TR_EXIT_USAGE;
			}
			top = (int)v;
			break;
		case 'h':
			report_usage(stdout);
			return TR_EXIT_OK;
		default:
			fprintf(stderr, "Try 'tracerig report --help'.\n");
			return TR_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "tracerig: report: %s (tracerig report ARCHIVE [--top N])\n",
			optind == argc ? "which archive? give one .trace.zip"
				       : "one archive at a time");
		return TR_EXIT_USAGE;
	}
	archive = argv[optind];
	if (open_archive(archive, &za) < 0)
		return TR_EXIT_FAILURE;

	report_manifest(za, archive);
	cpu = report_cpu(za, archive, top);
	off = report_offcpu(za, archive, top);
	if (cpu < 0 || off < 0)
		status = TR_EXIT_FAILURE;
	else if (!cpu && !off)
		printf("\nNo samples in this archive: no backend recorded CPU samples or "
		       "off-CPU stacks.\n");
	zip_discard(za);
	return status;
}
