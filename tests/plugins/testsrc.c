/* A source plugin for the core's tests: it records every lifecycle call in a
 * journal, can be told to fail in any phase, and writes what the services
 * told it into its archive entry, so tests can check the core's behaviour
 * from the archive alone.  Built several times under different names. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracerig/plugin.h>

#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "testsrc"
#endif
#ifndef TEST_PLUGIN_ABI
#define TEST_PLUGIN_ABI TRACERIG_ABI_VERSION
#endif

#ifdef TEST_PLUGIN_UNRESOLVED
/* Defined nowhere: loading must fail on this relocation. */
extern int tracerig_test_symbol_that_does_not_exist;
int *tracerig_test_unresolved_ref = &tracerig_test_symbol_that_does_not_exist;
#endif

struct testsrc {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	const char *fail_in;
	const char *fault_in;
	const char *fault;
	pthread_t collector;
	int has_collector;
	const char *journal;
	int started;
};

static void journal(struct testsrc *t, const char *what)
{
	FILE *f;

	if (!t->journal)
		return;
	f = fopen(t->journal, "a");
	if (!f)
		return;
	fprintf(f, "%s %s\n", TEST_PLUGIN_NAME, what);
	fclose(f);
}

/* What a broken plugin does: the supervisor must survive each. */
static void misbehave(const char *how)
{
	if (strcmp(how, "abort") == 0)
		abort();
	if (strcmp(how, "hang") == 0)
		for (;;)
			pause();
	{
		/* A real invalid write, the way a broken plugin dies. */
		volatile int *volatile nowhere = (int *)(uintptr_t)8;

		*nowhere = 1;
	}
}

static void *collect_then_fault(void *arg)
{
	struct testsrc *t = arg;

	/* Lets the session begin collecting before this thread breaks. */
	t->svc->log(t->ctx, TRACERIG_LOG_INFO, "collecting thread: about to %s", t->fault);
	usleep(100 * 1000);
	misbehave(t->fault);
	return NULL;
}

static int maybe_fail(struct testsrc *t, const char *phase)
{
	journal(t, phase);
	if (strcmp(t->fault_in, phase) == 0)
		misbehave(t->fault);
	if (strcmp(t->fail_in, phase) == 0) {
		t->svc->log(t->ctx, TRACERIG_LOG_ERROR, "failing in %s as the profile asks", phase);
		return -EIO;
	}
	return 0;
}

static int testsrc_check(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			 char *advice, size_t len)
{
	if (strcmp(svc->config_string(ctx, "fail_in"), "check") == 0) {
		snprintf(advice, len, "told to be unusable (set fail_in to something else)");
		return -ENODEV;
	}
	return 0;
}

static int testsrc_init(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			void **state)
{
	struct testsrc *t = calloc(1, sizeof(*t));
	const char *env;
	int ret;

	if (!t)
		return -ENOMEM;
	t->svc = svc;
	t->ctx = ctx;
	t->fail_in = svc->config_string(ctx, "fail_in");
	t->fault_in = svc->config_string(ctx, "fault_in");
	t->fault = svc->config_string(ctx, "fault");
	t->journal = svc->config_string(ctx, "journal");
	*state = t;
	env = svc->config_string(ctx, "setenv");
	if (env) {
		char name[128];
		const char *eq = strchr(env, '=');

		if (!eq || (size_t)(eq - env) >= sizeof(name))
			return -EINVAL;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - env), env);
		if ((ret = svc->target_setenv(ctx, name, eq + 1)) < 0)
			return ret;
	}
	return maybe_fail(t, "init");
}

static int testsrc_start(void *state)
{
	struct testsrc *t = state;
	const struct tracerig_targets *tg = t->svc->targets(t->ctx);

	if (tg->command_pid)
		t->svc->pid_observe(t->ctx, tg->command_pid);
	/* A slow source (LTTng takes most of a second): the window must
	 * still be what -d says. */
	if (t->svc->config_int(t->ctx, "start_delay") > 0)
		usleep((useconds_t)t->svc->config_int(t->ctx, "start_delay") * 1000);
	t->svc->progress_set(t->ctx, "running");
	t->started = 1;
	if (strcmp(t->fault_in, "collect") == 0 &&
	    pthread_create(&t->collector, NULL, collect_then_fault, t) == 0)
		t->has_collector = 1;
	return maybe_fail(t, "start");
}

static int testsrc_stop(void *state)
{
	struct testsrc *t = state;
	long long delay_ms = t->svc->config_int(t->ctx, "stop_delay");

	/* Lets a test send a second interrupt while a backend is stopping. */
	if (delay_ms > 0)
		usleep((useconds_t)delay_ms * 1000);
	return maybe_fail(t, "stop");
}

static int testsrc_flush(void *state, struct tracerig_archive *ar)
{
	struct testsrc *t = state;
	const struct tracerig_targets *tg = t->svc->targets(t->ctx);
	char name[128];
	struct stat st;
	FILE *out;
	int fd, ret;

	if ((ret = maybe_fail(t, "flush")) < 0)
		return ret;
	/* Lets a test signal tracerig while it is packaging. */
	if (t->svc->config_int(t->ctx, "flush_delay") > 0)
		usleep((useconds_t)t->svc->config_int(t->ctx, "flush_delay") * 1000);
	snprintf(name, sizeof(name), "%s.txt", TEST_PLUGIN_NAME);
	fd = t->svc->archive_create(ar, name);
	if (fd < 0)
		return fd;
	out = fdopen(fd, "w");
	if (!out) {
		close(fd);
		return -errno;
	}
	fprintf(out, "plugin %s\n", TEST_PLUGIN_NAME);
	fprintf(out, "system_wide %d\n", tg->system_wide);
	fprintf(out, "pids");
	for (size_t i = 0; i < tg->n_pids; i++)
		fprintf(out, " %d", (int)tg->pids[i]);
	fprintf(out, "\ncommand_pid %d\n", (int)tg->command_pid);
	fprintf(out, "command %s\n", tg->command ? tg->command : "-");
	fprintf(out, "cgroup %s\n", tg->cgroup ? tg->cgroup : "-");
	fprintf(out, "staging_is_archive_dir %d\n",
		strcmp(t->svc->staging_dir(t->ctx), t->svc->archive_dir(ar)) == 0 &&
			stat(t->svc->archive_dir(ar), &st) == 0);
	fprintf(out, "observed %zu\n", t->svc->pid_list(t->ctx, NULL, 0));
	fprintf(out, "session_name %s\n", t->svc->session_string(t->ctx, "name"));
	fprintf(out, "payload %s\n", t->svc->config_string(t->ctx, "payload"));
	fprintf(out, "clock_monotonic %d\n", t->svc->clock_ns() > 0);
	if (fclose(out) != 0)
		return -errno;
	if (t->svc->config_int(t->ctx, "bulk") > 0) {
		/* A large, sparse entry: the packager must stream it. */
		fd = t->svc->archive_create(ar, "bulk.bin");
		if (fd < 0)
			return fd;
		ret = ftruncate(fd, (off_t)t->svc->config_int(t->ctx, "bulk")) < 0 ? -errno : 0;
		close(fd);
		if (ret < 0)
			return ret;
	}
	t->svc->counter_set(t->ctx, "flushed_entries", 1);
	t->svc->counter_set(t->ctx, "payload_bytes", strlen(t->svc->config_string(t->ctx, "payload")));
	return 0;
}

static void testsrc_fini(void *state)
{
	struct testsrc *t = state;

	journal(t, "fini");
	if (strcmp(t->fault_in, "fini") == 0)
		misbehave(t->fault);
	free(t);
}

static const struct tracerig_key testsrc_keys[] = {
	{ "fail_in", TRACERIG_KEY_ENUM, "none", "none,check,init,start,stop,flush", 0, 0,
	  "Phase in which to fail, to test the core's fault handling." },
	{ "fault_in", TRACERIG_KEY_ENUM, "none", "none,init,start,collect,stop,flush,fini", 0, 0,
	  "Phase in which to crash, abort or hang (see fault), to test the supervisor." },
	{ "fault", TRACERIG_KEY_ENUM, "segv", "segv,abort,hang", 0, 0,
	  "How to misbehave in fault_in." },
	{ "journal", TRACERIG_KEY_STRING, NULL, NULL, 0, 0,
	  "File to append one line per lifecycle call to." },
	{ "setenv", TRACERIG_KEY_STRING, NULL, NULL, 0, 0,
	  "NAME=value to add to the launched command's environment." },
	{ "payload", TRACERIG_KEY_STRING, "hello", NULL, 0, 0, "Text written to the entry." },
	{ "level", TRACERIG_KEY_INT, "3", NULL, 1, 9, "An integer key with a range." },
	{ "interval", TRACERIG_KEY_DURATION, "1s", NULL, 0, 0, "A duration key." },
	{ "buffer", TRACERIG_KEY_SIZE, "4M", NULL, 0, 0, "A size key." },
	{ "bulk", TRACERIG_KEY_SIZE, "0", NULL, 0, 0, "Size of a sparse bulk.bin entry to write." },
	{ "stop_delay", TRACERIG_KEY_DURATION, "0", NULL, 0, 0, "Time to take in stop." },
	{ "start_delay", TRACERIG_KEY_DURATION, "0", NULL, 0, 0, "Time to take in start." },
	{ "flush_delay", TRACERIG_KEY_DURATION, "0", NULL, 0, 0, "Time to take in flush." },
	{ "enabled", TRACERIG_KEY_BOOL, "yes", NULL, 0, 0, "A boolean key." },
	{ NULL, 0, NULL, NULL, 0, 0, NULL },
};

TRACERIG_PLUGIN = {
	.abi_version = TEST_PLUGIN_ABI,
	.name = TEST_PLUGIN_NAME,
	.version = "0.0-test",
	.kind = TRACERIG_PLUGIN_SOURCE,
	.description = "test source for the core's tests",
	.package = NULL,
	.keys = testsrc_keys,
	.check = testsrc_check,
	.init = testsrc_init,
	.start = testsrc_start,
	.stop = testsrc_stop,
	.flush = testsrc_flush,
	.fini = testsrc_fini,
};
