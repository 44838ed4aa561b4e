#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "perfscript.h"

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

/* "comm  pid/tid [cpu] time: period event: ...": comm may hold spaces, so
 * the pid is the token right before the cpu (or, without one, the time). */
static int sample_header(struct rp_profile *p, const char *line)
{
	const char *tok[64];
	size_t len[64], n = 0, k;
	const char *c = line;
	char comm[256];
	long pid = -1;
	int ret;

	while (*c && n < 64) {
		while (*c == ' ' || *c == '\t')
			c++;
		if (!*c)
			break;
		tok[n] = c;
		while (*c && *c != ' ' && *c != '\t')
			c++;
		len[n] = (size_t)(c - tok[n]);
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
	ret = rp_profile_begin(p, comm, pid, 1);
	if (ret < 0)
		return ret;
	/* The event: the first "name:" token after the time. */
	for (; k < n && !is_time_token(tok[k], len[k]); k++)
		;
	for (k++; k < n; k++)
		if (len[k] > 1 && tok[k][len[k] - 1] == ':' && !isdigit((unsigned char)tok[k][0]))
			return rp_profile_event(p, tok[k], len[k] - 1);
	return 0;
}

/* "\t    55d0c0a1b2c3 demo_hot+0x12 (/path/to/dso)" */
static int sample_frame(struct rp_profile *prof, char *line)
{
	char *p = line, *sym, *end, *dso = NULL;
	char name[1024];

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

	/* perf script prints the leaf first. */
	return rp_profile_frame(prof, name, strlen(name), prof->frames == 0);
}

static int script_line(void *arg, char *line)
{
	struct rp_profile *p = arg;

	if (line[0] == ' ' || line[0] == '\t')
		return strspn(line, " \t") == strlen(line) ? rp_profile_end(p) : sample_frame(p, line);
	if (line[0] == '\0')
		return rp_profile_end(p);
	if (line[0] == '#')
		return 0;
	return sample_header(p, line);
}

int rp_perfscript_read(struct rp_archive *ar, const char *entry, struct rp_profile *p)
{
	int ret = rp_lines_each(ar, entry, script_line, p);

	return ret < 0 ? ret : rp_profile_end(p);
}
