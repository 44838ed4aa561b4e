/* The driver of tests/dotnet/ipc.sh: lib/dotnetipc.h against a real
 * runtime, one key=value line per fact on stdout, the error's words on
 * stderr.
 *
 *   dnipc-tool [-t MS] locate PID
 *   dnipc-tool [-t MS] info PID
 *   dnipc-tool [-t MS] enable PID TYPE      (1 all, 2 jitdump, 3 perf map)
 *   dnipc-tool [-t MS] disable PID
 *   dnipc-tool [-t MS] raw PID SET ID       (a command without payload)
 *
 * On failure it prints error=ENAME (and hresult=NAME for an error reply)
 * and exits 1; 2 for a usage error. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/dotnetipc.h"
#include "lib/sanitize.h"

static const struct {
	int err;
	const char *name;
} errnames[] = {
	{ ENOENT, "ENOENT" },         { ESRCH, "ESRCH" },           { EPERM, "EPERM" },
	{ ENOSYS, "ENOSYS" },         { ETIMEDOUT, "ETIMEDOUT" },   { EBADMSG, "EBADMSG" },
	{ EREMOTEIO, "EREMOTEIO" },   { ECONNREFUSED, "ECONNREFUSED" },
	{ ECONNRESET, "ECONNRESET" }, { EPIPE, "EPIPE" },           { EINVAL, "EINVAL" },
};

static const char *errname(int ret)
{
	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].err == -ret)
			return errnames[i].name;
	return "other";
}

/* key=value with the value made safe for a line-oriented reader. */
static void field(const char *key, const char *value)
{
	printf("%s=", key);
	tr_sanitize_fputs(value ? value : "", stdout);
	putchar('\n');
}

static void where(const struct tr_dnipc_status *st)
{
	char path[PATH_MAX + 80];
	size_t n = strlen(st->tmpdir);

	snprintf(path, sizeof(path), "%s%s%s", st->tmpdir, n && st->tmpdir[n - 1] == '/' ? "" : "/",
		 st->name);
	field("socket", path);
	printf("nspid=%d\nexact=%d\n", (int)st->nspid, st->exact);
}

static int fail(const char *what, const char *pid, const struct tr_dnipc_status *st, int ret)
{
	char words[PATH_MAX + 400];
	const char *name;

	printf("error=%s\n", errname(ret));
	if (ret == -EREMOTEIO) {
		name = tr_dnipc_hresult_name(st->hresult);
		if (name)
			printf("hresult=%s\n", name);
		else
			printf("hresult=0x%08X\n", (unsigned)st->hresult);
	}
	fprintf(stderr, "dnipc-tool: %s %s: %s\n", what, pid,
		tr_dnipc_explain(st, ret, words, sizeof(words)));
	return 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: dnipc-tool [-t MS] locate|info|disable PID\n"
			"       dnipc-tool [-t MS] enable PID TYPE\n"
			"       dnipc-tool [-t MS] raw PID SET ID\n");
	return 2;
}

static int number(const char *s, long min, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 0);
	return errno || end == s || *end || *out < min || *out > max ? -EINVAL : 0;
}

/* A command without payload, on a connection of our own: what the runtime
 * answers to commands we do not wrap (an unknown id, a bad encoding). */
static int raw(pid_t pid, int timeout_ms, uint8_t set, uint8_t id, struct tr_dnipc_status *st)
{
	struct tr_dnipc_reply r;
	int fd, ret;

	fd = tr_dnipc_connect(pid, timeout_ms, st);
	if (fd < 0)
		return fd;
	st->command = "the raw command";
	ret = tr_dnipc_command(fd, set, id, NULL, timeout_ms, &r);
	close(fd);
	if (ret == 0)
		printf("reply=ok\npayload_len=%zu\n", r.payload_len);
	else if (ret == -EREMOTEIO)
		st->hresult = r.hresult;
	else if (ret == -EBADMSG)
		st->step = r.why; /* static words: still valid after the free */
	tr_dnipc_reply_free(&r);
	return ret;
}

int main(int argc, char **argv)
{
	struct tr_dnipc_process_info pi;
	struct tr_dnipc_status st;
	long timeout_ms = 5000, pid, a, b;
	const char *cmd;
	int opt, ret;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't' || number(optarg, 1, 600000, &timeout_ms) < 0)
			return usage();
	}
	if (argc - optind < 2 || number(argv[optind + 1], 1, 0x7fffffff, &pid) < 0)
		return usage();
	cmd = argv[optind];

	if (strcmp(cmd, "locate") == 0 && argc - optind == 2) {
		ret = tr_dnipc_locate((pid_t)pid, &st);
		if (ret < 0)
			return fail(cmd, argv[optind + 1], &st, ret);
		close(ret);
		where(&st);
		return 0;
	}
	if (strcmp(cmd, "info") == 0 && argc - optind == 2) {
		ret = tr_dnipc_process_info((pid_t)pid, (int)timeout_ms, &pi, &st);
		if (ret < 0) {
			tr_dnipc_process_info_free(&pi);
			return fail(cmd, argv[optind + 1], &st, ret);
		}
		where(&st);
		field("command", st.command);
		printf("pid=%llu\n", (unsigned long long)pi.pid);
		field("version", pi.clr_version);
		field("entrypoint", pi.entrypoint);
		field("os", pi.os);
		field("arch", pi.arch);
		field("commandline", pi.command_line);
		tr_dnipc_process_info_free(&pi);
		return 0;
	}
	if (strcmp(cmd, "enable") == 0 && argc - optind == 3) {
		if (number(argv[optind + 2], 0, 255, &a) < 0)
			return usage();
		ret = tr_dnipc_enable_perfmap((pid_t)pid, (enum tr_dnipc_perfmap)a, (int)timeout_ms,
					      &st);
		if (ret < 0)
			return fail(cmd, argv[optind + 1], &st, ret);
		where(&st);
		printf("enabled=%ld\n", a);
		return 0;
	}
	if (strcmp(cmd, "disable") == 0 && argc - optind == 2) {
		ret = tr_dnipc_disable_perfmap((pid_t)pid, (int)timeout_ms, &st);
		if (ret < 0)
			return fail(cmd, argv[optind + 1], &st, ret);
		where(&st);
		printf("disabled=1\n");
		return 0;
	}
	if (strcmp(cmd, "raw") == 0 && argc - optind == 4) {
		if (number(argv[optind + 2], 0, 255, &a) < 0 || number(argv[optind + 3], 0, 255, &b) < 0)
			return usage();
		ret = raw((pid_t)pid, (int)timeout_ms, (uint8_t)a, (uint8_t)b, &st);
		if (ret < 0)
			return fail(cmd, argv[optind + 1], &st, ret);
		return 0;
	}
	return usage();
}
