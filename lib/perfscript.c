/* `perf script` text, parsed in place. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "perfscript.h"

#define MAX_TOKENS 64

static int all_digits(const char *t, size_t len)
{
	if (!len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)t[i]))
			return 0;
	return 1;
}

/* "12345.678901:" */
static int is_time_token(const char *t, size_t len)
{
	size_t i = 0;

	while (i < len && isdigit((unsigned char)t[i]))
		i++;
	if (!i || i >= len || t[i] != '.')
		return 0;
	for (i++; i < len && isdigit((unsigned char)t[i]); i++)
		;
	return i + 1 == len && t[i] == ':';
}

/* "[003]" */
static int is_cpu_token(const char *t, size_t len)
{
	return len >= 3 && t[0] == '[' && t[len - 1] == ']' && all_digits(t + 1, len - 2);
}

/* "123/456" or "123" */
static int parse_pid_token(const char *t, size_t len, long *pid, long *tid)
{
	const char *slash = memchr(t, '/', len);

	if (!slash) {
		if (!all_digits(t, len))
			return -1;
		*pid = *tid = strtol(t, NULL, 10);
		return 0;
	}
	if (!all_digits(t, (size_t)(slash - t)) ||
	    !all_digits(slash + 1, len - (size_t)(slash - t) - 1))
		return -1;
	*pid = strtol(t, NULL, 10);
	*tid = strtol(slash + 1, NULL, 10);
	return 0;
}

static uint64_t parse_time_ns(const char *t)
{
	char *dot;
	uint64_t ns = strtoull(t, &dot, 10) * 1000000000ull;
	uint64_t frac = 0, scale = 100000000ull;

	if (*dot == '.')
		for (const char *p = dot + 1; isdigit((unsigned char)*p) && scale; p++, scale /= 10)
			frac += (uint64_t)(*p - '0') * scale;
	return ns + frac;
}

int ps_is_frame_line(const char *line)
{
	return line[0] == '\t' || line[0] == ' ';
}

int ps_parse_header(char *line, struct ps_header *h)
{
	char *tok[MAX_TOKENS];
	size_t len[MAX_TOKENS], n = 0, k, pid_at;
	char *p = line, *comm_end = NULL, *event_end = NULL;

	memset(h, 0, sizeof(*h));
	h->comm = h->event = "";
	h->pid = h->tid = -1;
	h->cpu = -1;
	if (ps_is_frame_line(line))
		return -1;
	while (*p && n < MAX_TOKENS) {
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
	/* The pid is right before the cpu, or the time when there is no cpu:
	 * everything before it is the comm, spaces and all. */
	for (k = 0; k < n; k++)
		if (is_cpu_token(tok[k], len[k]) || is_time_token(tok[k], len[k]))
			break;
	if (k == n || k == 0 || parse_pid_token(tok[k - 1], len[k - 1], &h->pid, &h->tid) < 0)
		return -1;
	pid_at = k - 1;
	if (pid_at > 0) {
		h->comm = line;
		comm_end = tok[pid_at];
		while (comm_end > line && (comm_end[-1] == ' ' || comm_end[-1] == '\t'))
			comm_end--;
	}
	if (is_cpu_token(tok[k], len[k])) {
		h->cpu = atoi(tok[k] + 1);
		k++;
	}
	if (k < n && is_time_token(tok[k], len[k])) {
		h->time_ns = parse_time_ns(tok[k]);
		k++;
	}
	if (k < n && all_digits(tok[k], len[k])) {
		h->period = strtoull(tok[k], NULL, 10);
		k++;
	}
	if (k < n && len[k] > 1 && tok[k][len[k] - 1] == ':') {
		h->event = tok[k];
		event_end = tok[k] + len[k] - 1;
	}
	/* Cut last: the tokens above were read from the whole line. */
	if (comm_end)
		*comm_end = '\0';
	if (event_end)
		*event_end = '\0';
	return 0;
}

int ps_parse_frame(char *line, struct ps_frame *f)
{
	char *p = line, *addr_end, *sym, *end;

	memset(f, 0, sizeof(*f));
	f->symbol = f->dso = "";
	if (!ps_is_frame_line(line))
		return -1;
	while (*p == ' ' || *p == '\t')
		p++;
	f->address = strtoull(p, &addr_end, 16);
	if (addr_end == p || (*addr_end && *addr_end != ' ' && *addr_end != '\t'))
		return -1;
	sym = addr_end;
	while (*sym == ' ' || *sym == '\t')
		sym++;
	end = sym + strlen(sym);
	while (end > sym && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	/* The dso is the last balanced "(...)"; the symbol may hold parentheses. */
	if (end > sym && end[-1] == ')') {
		int depth = 0;

		for (char *q = end - 1; q >= sym; q--) {
			if (*q == ')') {
				depth++;
			} else if (*q == '(' && --depth == 0) {
				end[-1] = '\0';
				f->dso = q + 1;
				end = q;
				break;
			}
		}
	}
	while (end > sym && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*end = '\0';
	/* "demo_hot+0x12": the offset goes. */
	p = strrchr(sym, '+');
	if (p && p[1] == '0' && p[2] == 'x' && p[3] &&
	    strspn(p + 3, "0123456789abcdefABCDEF") == strlen(p + 3))
		*p = '\0';
	if (strcmp(sym, "[unknown]") == 0)
		*sym = '\0';
	if (strcmp(f->dso, "[unknown]") == 0)
		f->dso = "";
	f->symbol = sym;
	return 0;
}
