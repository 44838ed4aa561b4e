#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/archive/jsonread.h"
#include "overview.h"
#include "text.h"

/* manifest.json is a few KiB; anything near this was not written by tracerig. */
#define MAX_MANIFEST (16u << 20)

/* The session's name: the profile's [tracerig] name, else the profile file's. */
static void session_name(const struct tr_jv *m, char *buf, size_t len)
{
	const char *name = tr_jv_str(tr_jv_get(m, "profile", "sections", "tracerig", "name", NULL));
	const char *path = tr_jv_str(tr_jv_get(m, "profile", "path", NULL));
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

static void print_targets(const struct tr_jv *m)
{
	const struct tr_jv *t = tr_jv_get(m, "targets", NULL);
	const struct tr_jv *pids = tr_jv_get(t, "pids", NULL);
	const struct tr_jv *cmd = tr_jv_get(t, "command", NULL);
	const struct tr_jv *argv = tr_jv_get(cmd, "argv", NULL);
	const struct tr_jv *sw = tr_jv_get(t, "system_wide", NULL);
	double v;

	if (!t)
		return;
	printf("  %-10s", "targets");
	if (cmd && argv && argv->type == TR_JV_ARRAY) {
		printf(" command");
		for (size_t i = 0; i < argv->n; i++)
			printf(" %s", tr_jv_str(&argv->items[i]) ? rp_tty(tr_jv_str(&argv->items[i])) : "?");
		if (tr_jv_num(tr_jv_get(cmd, "pid", NULL), &v))
			printf(" (pid %.0f", v);
		else
			printf(" (");
		if (tr_jv_num(tr_jv_get(cmd, "exit_status", NULL), &v))
			printf(", exit status %.0f)", v);
		else if (tr_jv_num(tr_jv_get(cmd, "killed_by_signal", NULL), &v))
			printf(", killed by signal %.0f)", v);
		else if (tr_jv_str(tr_jv_get(cmd, "exec_error", NULL)))
			printf(", could not run: %s)", rp_tty(tr_jv_str(tr_jv_get(cmd, "exec_error", NULL))));
		else
			printf(")");
	} else if (pids && pids->type == TR_JV_ARRAY && pids->n) {
		printf(" pid%s", pids->n > 1 ? "s" : "");
		for (size_t i = 0; i < pids->n; i++)
			if (tr_jv_num(&pids->items[i], &v))
				printf("%s%.0f", i ? "," : " ", v);
	} else if (tr_jv_true(sw)) {
		printf(" the whole system");
	} else {
		printf(" ?");
	}
	if (tr_jv_num(tr_jv_get(t, "observed_processes", NULL), &v))
		printf("; %.0f processes observed", v);
	printf("\n");
}

static void print_plugins(const struct tr_jv *m)
{
	const struct tr_jv *plugins = tr_jv_get(m, "plugins", NULL);

	if (!plugins || plugins->type != TR_JV_ARRAY)
		return;
	printf("  backends\n");
	for (size_t i = 0; i < plugins->n; i++) {
		const struct tr_jv *p = &plugins->items[i];
		const struct tr_jv *counters = tr_jv_get(p, "counters", NULL);
		const char *name = tr_jv_str(tr_jv_get(p, "name", NULL));
		const char *status = tr_jv_str(tr_jv_get(p, "status", NULL));
		const char *err = tr_jv_str(tr_jv_get(p, "error", NULL));
		const char *in = tr_jv_str(tr_jv_get(p, "failed_in", NULL));
		const struct tr_jv *req = tr_jv_get(p, "required", NULL);
		int sep = 0;

		printf("    %-12s %-7s %s", name ? rp_tty(name) : "?", status ? rp_tty(status) : "?",
		       tr_jv_true(req) ? "required" : "optional");
		if (err)
			printf(" (%s%s%s)", in ? rp_tty(in) : "", in ? ": " : "", rp_tty(err));
		for (size_t k = 0; counters && counters->type == TR_JV_OBJECT && k < counters->n; k++) {
			double v;

			if (tr_jv_num(&counters->items[k], &v)) {
				printf("%s%s %.0f", sep ? ", " : "  ", rp_tty(counters->keys[k]), v);
				sep = 1;
			}
		}
		printf("\n");
	}
}

void rp_report_overview(struct rp_archive *ar)
{
	const char *host, *kernel, *arch, *start, *ended;
	char *text = NULL, name[256];
	size_t len;
	struct tr_jv m;
	double v;
	int ret;

	ret = rp_archive_read(ar, "manifest.json", MAX_MANIFEST, &text, &len);
	if (ret == 0)
		ret = tr_jv_parse(text, len, &m);
	free(text);
	if (ret == -ENOENT && ar->prefix) {
		printf("archive      %s (perfcollect's layout: entries under %s, no manifest)\n",
		       rp_tty(ar->path), rp_tty(ar->prefix));
		return;
	}
	if (ret < 0) {
		fprintf(stderr, "tracerig: report: warning: %s manifest.json in %s: %s "
			"(is this an archive written by tracerig?)\n",
			ret == -ENOENT ? "no" : "cannot read", ar->path,
			ret == -ENOENT ? "not in the archive"
				       : ret == -EINVAL ? "not valid JSON" : rp_archive_strerror(ar, ret));
		printf("archive      %s (no manifest)\n", rp_tty(ar->path));
		return;
	}
	session_name(&m, name, sizeof(name));
	printf("archive      %s\n", rp_tty(ar->path));
	printf("  %-10s %s", "name", rp_tty(name));
	if (tr_jv_str(tr_jv_get(&m, "profile", "path", NULL)))
		printf(" (profile %s)", rp_tty(tr_jv_str(tr_jv_get(&m, "profile", "path", NULL))));
	printf("\n");

	host = tr_jv_str(tr_jv_get(&m, "host", "hostname", NULL));
	kernel = tr_jv_str(tr_jv_get(&m, "host", "kernel", NULL));
	arch = tr_jv_str(tr_jv_get(&m, "host", "arch", NULL));
	printf("  %-10s %s\n", "host", host ? rp_tty(host) : "?");
	printf("  %-10s Linux %s%s%s", "kernel", kernel ? rp_tty(kernel) : "?", arch ? " " : "",
	       arch ? rp_tty(arch) : "");
	if (tr_jv_num(tr_jv_get(&m, "host", "cpus_online", NULL), &v))
		printf(", %.0f CPUs", v);
	printf("\n");

	start = tr_jv_str(tr_jv_get(&m, "clock", "start_utc", NULL));
	ended = tr_jv_str(tr_jv_get(&m, "session", "ended_by", NULL));
	printf("  %-10s ", "duration");
	if (tr_jv_num(tr_jv_get(&m, "session", "duration_ms", NULL), &v))
		printf("%.3f s", v / 1000.0);
	else
		printf("?");
	if (start)
		printf(", started %s", rp_tty(start));
	if (ended)
		printf(", ended by %s", rp_tty(ended));
	printf("\n");
	print_targets(&m);
	print_plugins(&m);
	tr_jv_free(&m);
}
