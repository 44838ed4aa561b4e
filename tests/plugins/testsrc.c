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

#include "tracerig-private/ext.h"

#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "testsrc"
#endif
#ifndef TEST_PLUGIN_ABI
#define TEST_PLUGIN_ABI TRACERIG_ABI_VERSION
#endif
#ifndef TEST_PLUGIN_INTERNAL
#define TEST_PLUGIN_INTERNAL TRACERIG_INTERNAL_VERSION
#endif
#ifdef TEST_PLUGIN_FLIGHT
#define TEST_PLUGIN_CAPS TRACERIG_CAP_FLIGHT
#elif !defined(TEST_PLUGIN_CAPS)
#define TEST_PLUGIN_CAPS 0
#endif

#ifdef TEST_PLUGIN_UNRESOLVED
/* Defined nowhere: loading must fail on this relocation. */
extern int tracerig_test_symbol_that_does_not_exist;
int *tracerig_test_unresolved_ref = &tracerig_test_symbol_that_does_not_exist;
#endif

/* The phases fail_in and fault_in name, in the order of their choices. */
#define PHASES "none,check,init,start,collect,stop,flush,fini,snapshot"
enum phase { NONE, CHECK, INIT, START, COLLECT, STOP, FLUSH, FINI, SNAPSHOT };
#define FAULTS "segv,abort,hang"
enum fault { SEGV, ABORT, HANG };

/* What the profile says, bound by the core (config_bind). */
struct testsrc_config {
	int fail_in, fault_in, fault; /* enum phase, enum phase, enum fault */
	const char *journal, *setenv, *payload, *cleanup;
	int level, enabled;
	long long interval_ms, buffer, bulk, start_delay_ms, stop_delay_ms, flush_delay_ms;
	struct tracerig_list tags;
};

struct testsrc {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct testsrc_config cfg;
	pthread_t collector;
	int has_collector;
	int started;
};

static void journal(struct testsrc *t, const char *what)
{
	FILE *f;

	if (!t->cfg.journal)
		return;
	f = fopen(t->cfg.journal, "a");
	if (!f)
		return;
	fprintf(f, "%s %s\n", TEST_PLUGIN_NAME, what);
	fclose(f);
}

/* What a broken plugin does: the supervisor must survive each. */
static void misbehave(enum fault how)
{
	if (how == ABORT)
		abort();
	if (how == HANG)
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
	t->svc->run->log(t->ctx, TRACERIG_LOG_INFO,
			 "collecting thread: about to misbehave (fault %d)", t->cfg.fault);
	usleep(100 * 1000);
	misbehave((enum fault)t->cfg.fault);
	return NULL;
}

static int maybe_fail(struct testsrc *t, enum phase phase, const char *name)
{
	journal(t, name);
	if (t->cfg.fault_in == (int)phase)
		misbehave((enum fault)t->cfg.fault);
	if (t->cfg.fail_in == (int)phase) {
		t->svc->run->log(t->ctx, TRACERIG_LOG_ERROR, "failing in %s as the profile asks",
				 name);
		return -EIO;
	}
	return 0;
}

#ifdef TEST_PLUGIN_FLIGHT
/* testflight: each snapshot gets <name>.txt with the range it covers. */
static int testsrc_snapshot(void *state, struct tracerig_archive *ar, uint64_t from_ns,
			    uint64_t to_ns)
{
	struct testsrc *t = state;
	char name[128];
	FILE *out;
	int ret;

	if ((ret = maybe_fail(t, SNAPSHOT, "snapshot")) < 0)
		return ret;
	snprintf(name, sizeof(name), "%s.txt", TEST_PLUGIN_NAME);
	out = t->svc->archive->fopen(ar, name);
	if (!out)
		return -errno;
	fprintf(out, "plugin %s\nsnapshot %llu %llu\npayload %s\n", TEST_PLUGIN_NAME,
		(unsigned long long)from_ns, (unsigned long long)to_ns, t->cfg.payload);
	return fclose(out) == 0 ? 0 : -errno;
}
#endif

/* What the key table cannot say: a payload the plugin refuses.  Journals
 * that it ran, so a test can see every validate come before any init. */
static int testsrc_validate(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	struct testsrc t = { .svc = svc, .ctx = ctx };
	int ret = svc->run->config_bind(ctx, &t.cfg);

	if (ret < 0)
		return ret;
	journal(&t, "validate");
	if (t.cfg.payload && strncmp(t.cfg.payload, "refused", 7) == 0)
		svc->run->config_error(ctx, "payload", "'%s' is refused by the plugin's validate",
				       t.cfg.payload);
	return 0;
}

static int testsrc_check(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			 char *advice, size_t len)
{
	struct testsrc_config cfg;
	int ret = svc->run->config_bind(ctx, &cfg);

	if (ret < 0)
		return ret;
	if (cfg.fail_in == CHECK) {
		snprintf(advice, len, "told to be unusable (set fail_in to something else)");
		return -ENODEV;
	}
	return 0;
}

/* Runs in the core's watchdog: appends "cleanup KEY" to the file `arg`. */
static void clean_up(const char *key, const char *arg, char *said, size_t said_len)
{
	FILE *f = fopen(arg, "a");

	if (!f)
		return;
	fprintf(f, "cleanup %s\n", key);
	if (fclose(f) == 0)
		snprintf(said, said_len, "wrote %s", arg);
}

/* cleanup = FILE: the watchdog writes to FILE unless fini removed it. */
static int register_cleanup(struct testsrc *t)
{
	int ret;

	if (!t->cfg.cleanup)
		return 0;
	ret = t->svc->run->watchdog_cleanup(t->ctx, "file", t->cfg.cleanup);
	journal(t, ret == 0 ? "cleanup registered" : "cleanup not registered");
	return ret;
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
	*state = t;
	if ((ret = svc->run->config_bind(ctx, &t->cfg)) < 0)
		return ret;
	env = t->cfg.setenv;
	if (env) {
		char name[128];
		const char *eq = strchr(env, '=');

		if (!eq || (size_t)(eq - env) >= sizeof(name))
			return -EINVAL;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - env), env);
		if ((ret = svc->procs->target_setenv(ctx, name, eq + 1)) < 0)
			return ret;
	}
	if ((ret = register_cleanup(t)) < 0)
		return ret;
	return maybe_fail(t, INIT, "init");
}

static int testsrc_start(void *state)
{
	struct testsrc *t = state;
	const struct tracerig_targets *tg = t->svc->procs->targets(t->ctx);

	if (tg->command_pid)
		t->svc->procs->pid_observe(t->ctx, tg->command_pid);
	/* A slow source (LTTng takes most of a second): the window must
	 * still be what -d says. */
	if (t->cfg.start_delay_ms > 0)
		usleep((useconds_t)t->cfg.start_delay_ms * 1000);
	t->svc->run->progress_set(t->ctx, "running");
	t->started = 1;
	if (t->cfg.fault_in == COLLECT &&
	    pthread_create(&t->collector, NULL, collect_then_fault, t) == 0)
		t->has_collector = 1;
	return maybe_fail(t, START, "start");
}

static int testsrc_stop(void *state)
{
	struct testsrc *t = state;
	long long delay_ms = t->cfg.stop_delay_ms;

	/* Lets a test send a second interrupt while a backend is stopping. */
	if (delay_ms > 0)
		usleep((useconds_t)delay_ms * 1000);
	return maybe_fail(t, STOP, "stop");
}

static int testsrc_flush(void *state, struct tracerig_archive *ar)
{
	struct testsrc *t = state;
	const struct tracerig_targets *tg = t->svc->procs->targets(t->ctx);
	char name[128];
	struct stat st;
	FILE *out;
	int fd, ret;

	if ((ret = maybe_fail(t, FLUSH, "flush")) < 0)
		return ret;
	/* Lets a test signal tracerig while it is packaging. */
	if (t->cfg.flush_delay_ms > 0)
		usleep((useconds_t)t->cfg.flush_delay_ms * 1000);
	snprintf(name, sizeof(name), "%s.txt", TEST_PLUGIN_NAME);
	out = t->svc->archive->fopen(ar, name);
	if (!out)
		return -errno;
	fprintf(out, "plugin %s\n", TEST_PLUGIN_NAME);
	fprintf(out, "system_wide %d\n", tg->system_wide);
	fprintf(out, "pids");
	for (size_t i = 0; i < tg->n_pids; i++)
		fprintf(out, " %d", (int)tg->pids[i]);
	fprintf(out, "\ncommand_pid %d\n", (int)tg->command_pid);
	fprintf(out, "command %s\n", tg->command ? tg->command : "-");
	fprintf(out, "cgroup %s\n", tg->cgroup ? tg->cgroup : "-");
	fprintf(out, "staging_is_archive_dir %d\n",
		strcmp(t->svc->archive->staging_dir(t->ctx),
		       tracerig_internal(t->svc)->archive_dir(ar)) == 0 &&
			stat(tracerig_internal(t->svc)->archive_dir(ar), &st) == 0);
	fprintf(out, "observed %zu\n", t->svc->procs->pid_list(t->ctx, NULL, 0));
	fprintf(out, "required %d\n", t->svc->run->required(t->ctx));
	fprintf(out, "session_name %s\n",
		tracerig_internal(t->svc)->session_string(t->ctx, "name"));
	fprintf(out, "payload %s\n", t->cfg.payload);
	fprintf(out, "bound level %d interval_ms %lld buffer %lld enabled %d fail_in %d "
		"fault %d tags %zu:", t->cfg.level, t->cfg.interval_ms, t->cfg.buffer,
		t->cfg.enabled, t->cfg.fail_in, t->cfg.fault, t->cfg.tags.n);
	for (size_t i = 0; i < t->cfg.tags.n; i++)
		fprintf(out, "%s[%s]", i ? "," : "", t->cfg.tags.items[i]);
	fprintf(out, "\n");
	fprintf(out, "clock_monotonic %d\n", t->svc->run->clock_ns() > 0);
	if (fclose(out) != 0)
		return -errno;
	if (t->cfg.bulk > 0) {
		/* A large, sparse entry: the packager must stream it. */
		fd = t->svc->archive->create(ar, "bulk.bin");
		if (fd < 0)
			return fd;
		ret = ftruncate(fd, (off_t)t->cfg.bulk) < 0 ? -errno : 0;
		close(fd);
		if (ret < 0)
			return ret;
	}
	t->svc->run->counter_set(t->ctx, "flushed_entries", 1);
	t->svc->run->counter_set(t->ctx, "payload_bytes", strlen(t->cfg.payload));
	return 0;
}

static void testsrc_fini(void *state)
{
	struct testsrc *t = state;

	journal(t, "fini");
	if (t->cfg.fault_in == FINI)
		misbehave((enum fault)t->cfg.fault);
	if (t->cfg.cleanup)
		t->svc->run->watchdog_cleanup(t->ctx, "file", NULL);
	free(t);
}

#define BIND(field) TRACERIG_BIND(struct testsrc_config, field)
#ifdef TEST_PLUGIN_BADBIND
/* A short where the integer key needs an int or a long long: refused. */
#define LEVEL_BINDING .bind_offset = offsetof(struct testsrc_config, level), .bind_size = 2
#else
#define LEVEL_BINDING BIND(level)
#endif
/* One key per paragraph, as the reference lists them. */
/* clang-format off */
static const struct tracerig_key testsrc_keys[] = {
	{ .name = "fail_in", .type = TRACERIG_KEY_ENUM, .default_value = "none",
	  .choices = PHASES, BIND(fail_in),
	  .description = "Phase in which to fail, to test the core's fault handling." },
	{ .name = "fault_in", .type = TRACERIG_KEY_ENUM, .default_value = "none",
	  .choices = PHASES, BIND(fault_in),
	  .description = "Phase in which to crash, abort or hang (see fault), to test the supervisor." },
	{ .name = "fault", .type = TRACERIG_KEY_ENUM, .default_value = "segv",
	  .choices = FAULTS, BIND(fault),
	  .description = "How to misbehave in fault_in." },
	{ .name = "journal", .type = TRACERIG_KEY_STRING, BIND(journal),
	  .description = "File to append one line per lifecycle call to." },
	{ .name = "cleanup", .type = TRACERIG_KEY_STRING, BIND(cleanup),
	  .description = "A file the watchdog's cleanup writes to if fini does not remove it." },
	{ .name = "setenv", .type = TRACERIG_KEY_STRING, BIND(setenv),
	  .description = "NAME=value to add to the launched command's environment." },
	{ .name = "payload", .type = TRACERIG_KEY_STRING, .default_value = "hello", BIND(payload),
	  .description = "Text written to the entry." },
	{ .name = "level", .type = TRACERIG_KEY_INT, .default_value = "3", .min = 1, .max = 9,
	  LEVEL_BINDING, .description = "An integer key with a range." },
	{ .name = "interval", .type = TRACERIG_KEY_DURATION, .default_value = "1s",
	  BIND(interval_ms), .description = "A duration key." },
	{ .name = "buffer", .type = TRACERIG_KEY_SIZE, .default_value = "4M", BIND(buffer),
	  .description = "A size key." },
	{ .name = "bulk", .type = TRACERIG_KEY_SIZE, .default_value = "0", BIND(bulk),
	  .description = "Size of a sparse bulk.bin entry to write." },
	{ .name = "stop_delay", .type = TRACERIG_KEY_DURATION, .default_value = "0",
	  BIND(stop_delay_ms), .description = "Time to take in stop." },
	{ .name = "start_delay", .type = TRACERIG_KEY_DURATION, .default_value = "0",
	  BIND(start_delay_ms), .description = "Time to take in start." },
	{ .name = "flush_delay", .type = TRACERIG_KEY_DURATION, .default_value = "0",
	  BIND(flush_delay_ms), .description = "Time to take in flush." },
	{ .name = "enabled", .type = TRACERIG_KEY_BOOL, .default_value = "yes", BIND(enabled),
	  .description = "A boolean key." },
	{ .name = "tags", .type = TRACERIG_KEY_LIST, .default_value = "red, green", BIND(tags),
	  .description = "A list key." },
	{ .name = NULL },
};
/* clang-format on */

TRACERIG_PLUGIN = {
	.abi_version = TEST_PLUGIN_ABI,
	.name = TEST_PLUGIN_NAME,
	.version = "0.0-test",
	.kind = TRACERIG_PLUGIN_SOURCE,
	.description = "test source for the core's tests",
	.package = NULL,
	.keys = testsrc_keys,
	.internal_version = TEST_PLUGIN_INTERNAL,
	.caps = TEST_PLUGIN_CAPS,
#ifdef TEST_PLUGIN_FLIGHT
	.snapshot = testsrc_snapshot,
#endif
	.validate = testsrc_validate,
	.check = testsrc_check,
	.init = testsrc_init,
	.start = testsrc_start,
	.stop = testsrc_stop,
	.flush = testsrc_flush,
	.fini = testsrc_fini,
	.cleanup = clean_up,
};
