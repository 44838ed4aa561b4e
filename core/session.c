#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "keys.h"
#include "log.h"
#include "manifest.h"
#include "output.h"
#include "pids.h"
#include "services.h"
#include "session.h"
#include "status.h"
#include "symbols/symbolizer.h"

/* In-tree backends: where a missing one comes from. */
static const struct {
	const char *name, *package;
} known_backends[] = {
	{ "perf_events", "tracerig-perf-events" },
	{ "lttng", "tracerig-lttng" },
	{ "ebpf", "tracerig-ebpf" },
	{ "mapharvest", "tracerig-mapharvest" },
	{ "zip", "tracerig" },
};

const char *tr_phase_name(enum tr_phase phase)
{
	static const char *const names[] = { "loaded", "initialized", "started",
					     "stopped", "ok", "failed" };

	return phase <= TR_PHASE_FAILED ? names[phase] : "?";
}

const char *tr_end_reason_name(enum tr_end_reason reason)
{
	static const char *const names[] = { "not started", "duration", "signal",
					     "command exited", "target processes exited" };

	return reason <= TR_END_TARGETS_GONE ? names[reason] : "?";
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---------------- preparing: profile, plugins, validation ---------------- */

static char *find_config_file(const char *given)
{
	char path[PATH_MAX];

	if (access(given, R_OK) == 0)
		return strdup(given);
	if (given[0] == '/')
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", TR_SYSCONFDIR, given);
	if (access(path, R_OK) == 0)
		return strdup(path);
	/* Before installation the build tree's own conf/ is the sysconfdir. */
	snprintf(path, sizeof(path), "%s/conf/%s", TR_ABS_SRCDIR, given);
	if (access(path, R_OK) == 0)
		return strdup(path);
	return NULL;
}

static void where(const struct tr_entry *e, char *buf, size_t len)
{
	if (e->line > 0)
		snprintf(buf, len, "%s:%d", e->origin, e->line);
	else
		snprintf(buf, len, "%s", e->origin);
}

/* Validates every key of `section` against `keys`; returns the error count. */
static int validate_section(struct tr_section *section, const struct tracerig_key *keys,
			    const char *owner)
{
	int errors = 0;

	for (size_t i = 0; section && i < section->n_entries; i++) {
		struct tr_entry *e = &section->entries[i];
		const struct tracerig_key *k = tr_key_find(keys, e->key);
		char at[PATH_MAX + 16], err[512];

		where(e, at, sizeof(at));
		if (!k) {
			const char *close = tr_key_suggest(keys, e->key);
			char valid[1024] = "";
			size_t used = 0;

			for (const struct tracerig_key *v = keys; v && v->name; v++)
				used += snprintf(valid + used, used < sizeof(valid) ? sizeof(valid) - used : 0,
						 "%s%s", v == keys ? "" : ", ", v->name);
			if (close)
				tr_err("%s: [%s] unknown key '%s' (did you mean '%s'?)", at,
				       section->name, e->key, close);
			else
				tr_err("%s: [%s] unknown key '%s' (%s accepts: %s)", at,
				       section->name, e->key, owner, valid[0] ? valid : "no keys");
			errors++;
			continue;
		}
		if (tr_key_parse(k, e->value, &e->num, err, sizeof(err)) < 0) {
			tr_err("%s: [%s] %s: %s", at, section->name, e->key, err);
			errors++;
		}
	}
	return errors;
}

static const char *package_hint(const char *name, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(known_backends) / sizeof(known_backends[0]); i++) {
		if (strcmp(known_backends[i].name, name) == 0) {
			snprintf(buf, len, "install the %s package, or build tracerig with "
				 "--enable-%s", known_backends[i].package, name);
			return buf;
		}
	}
	snprintf(buf, len, "put %s.so in a directory named by --plugin-dir or "
		 "TRACERIG_PLUGIN_PATH", name);
	return buf;
}

static int load_plugin(struct tr_session *s, const char *name, struct tr_section *section,
		       const char *at, enum tracerig_plugin_kind kind, struct tracerig_ctx **out)
{
	struct tr_loaded loaded;
	char why[2048], hint[256];
	int ret;

	ret = tr_loader_load(name, &loaded, why, sizeof(why));
	if (ret < 0) {
		if (ret == -ENOENT) {
			const char *names[] = { "perf_events", "lttng", "ebpf", "mapharvest", "zip" };
			const char *close = tr_closest(name, names, 5);

			if (close && strcmp(close, name) != 0)
				tr_err("%s: [%s] no backend of that name (did you mean [%s]?)", at,
				       name, close);
			else
				tr_err("%s: [%s] %s: %s", at, name, why,
				       package_hint(name, hint, sizeof(hint)));
		} else {
			tr_err("%s: [%s] %s", at, name, why);
		}
		return -1;
	}
	if (loaded.plugin->kind != kind) {
		tr_err("%s: [%s] is a %s plugin, not a %s (%s)", at, name,
		       loaded.plugin->kind == TRACERIG_PLUGIN_PACKAGER ? "packaging" : "source",
		       kind == TRACERIG_PLUGIN_PACKAGER ? "packager" : "source",
		       kind == TRACERIG_PLUGIN_PACKAGER ? "set [tracerig] packager to a packaging plugin"
							: "name it in [tracerig] packager instead");
		tr_loader_unload(&loaded);
		return -1;
	}
	if (tr_ctx_new(s, &loaded, section, out) < 0) {
		tr_loader_unload(&loaded);
		return -1;
	}
	return 0;
}

static int list_has(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if ((size_t)(end - p) == len && strncmp(p, name, len) == 0)
			return 1;
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

/* Every name in `required` must be a backend of the profile. */
static int check_required(struct tr_session *s, struct tr_section *main_section)
{
	struct tr_entry *e = tr_section_entry(main_section, "required");
	char *copy, *save = NULL;
	int errors = 0;

	if (!e)
		return 0;
	copy = strdup(e->value);
	if (!copy)
		return 1;
	for (char *tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		if (!tr_profile_section(&s->profile, tok) || strcmp(tok, "tracerig") == 0) {
			char at[PATH_MAX + 16];

			where(e, at, sizeof(at));
			tr_err("%s: [tracerig] required names '%s', which has no section in this "
			       "profile (add a [%s] section or remove it from required)", at, tok, tok);
			errors++;
		}
	}
	free(copy);
	return errors;
}

static int load_defaults(struct tr_session *s)
{
	struct tr_profile conf = { 0 };
	int errors;

	s->conf_path = find_config_file("tracerig.conf");
	if (!s->conf_path)
		return 0;
	errors = tr_profile_load(&conf, s->conf_path);
	if (errors < 0) {
		tr_err("%s: cannot read: %s", s->conf_path, strerror(-errors));
		tr_profile_free(&conf);
		return 1;
	}
	for (size_t i = 0; i < conf.n_sections; i++) {
		struct tr_section *sec = &conf.sections[i];

		if (strcmp(sec->name, "tracerig") != 0) {
			tr_err("%s:%d: [%s]: tracerig.conf only holds [tracerig] defaults; backend "
			       "settings belong in profiles", s->conf_path, sec->line, sec->name);
			errors++;
			continue;
		}
		for (size_t k = 0; k < sec->n_entries; k++)
			if (tr_profile_default(&s->profile, "tracerig", sec->entries[k].key,
					       sec->entries[k].value, s->conf_path,
					       sec->entries[k].line) < 0)
				errors++;
	}
	tr_profile_free(&conf);
	return errors;
}

static void list_profiles_hint(void)
{
	fprintf(stderr, "tracerig: profiles shipped with tracerig are under %s/profiles/\n",
		TR_SYSCONFDIR);
}

int tr_session_prepare(struct tr_session *s, const struct tr_options *opts)
{
	struct tr_section *main_section;
	const char *packager;
	int errors = 0, ret;

	memset(s, 0, sizeof(*s));
	s->opts = opts;
	s->command.release_fd = s->command.exec_err_fd = -1;

	s->profile_path = find_config_file(opts->profile);
	if (!s->profile_path) {
		tr_err("cannot find profile '%s' (looked for it as given, under %s/ and in the "
		       "source tree's conf/): give a path to an .ini file", opts->profile,
		       TR_SYSCONFDIR);
		list_profiles_hint();
		return TR_EXIT_USAGE;
	}
	ret = tr_profile_load(&s->profile, s->profile_path);
	if (ret < 0) {
		tr_err("%s: cannot read the profile: %s", s->profile_path, strerror(-ret));
		return TR_EXIT_USAGE;
	}
	errors += ret;
	main_section = tr_profile_section(&s->profile, "tracerig");
	if (!main_section && errors == 0)
		tr_info("%s: no [tracerig] section; using defaults", s->profile_path);

	for (size_t i = 0; i < opts->n_sets; i++)
		if (tr_profile_set(&s->profile, opts->sets[i]) < 0)
			errors++;
	if (opts->duration && tr_profile_set(&s->profile, "tracerig.duration=") == 0) {
		struct tr_entry *e = tr_section_entry(tr_profile_section(&s->profile, "tracerig"),
						      "duration");
		free(e->value);
		e->value = strdup(opts->duration);
		e->origin = "-d";
		if (!e->value)
			errors++;
	}
	if (opts->output && tr_profile_set(&s->profile, "tracerig.output=") == 0) {
		struct tr_entry *e = tr_section_entry(tr_profile_section(&s->profile, "tracerig"),
						      "output");
		free(e->value);
		e->value = strdup(opts->output);
		e->origin = "-o";
		if (!e->value)
			errors++;
	}
	errors += load_defaults(s);
	/* Sections may have moved while --set and defaults added some. */
	main_section = tr_profile_section(&s->profile, "tracerig");
	errors += validate_section(main_section, tr_session_keys, "[tracerig]");
	errors += check_required(s, main_section);

	ret = tr_loader_init((const char *const *)opts->plugin_dirs, opts->n_plugin_dirs);
	if (ret < 0)
		return TR_EXIT_FAILURE;

	const char *required = tr_config_value(main_section, tr_session_keys, "required");
	for (size_t i = 0; i < s->profile.n_sections; i++) {
		struct tr_section *sec = &s->profile.sections[i];
		struct tracerig_ctx *ctx, **grown;
		char at[PATH_MAX + 16];

		if (strcmp(sec->name, "tracerig") == 0)
			continue;
		if (sec->line > 0)
			snprintf(at, sizeof(at), "%s:%d", sec->origin, sec->line);
		else
			snprintf(at, sizeof(at), "%s", sec->origin);
		packager = tr_config_value(main_section, tr_session_keys, "packager");
		if (strcmp(sec->name, packager) == 0)
			continue;
		if (load_plugin(s, sec->name, sec, at, TRACERIG_PLUGIN_SOURCE, &ctx) < 0) {
			errors++;
			continue;
		}
		grown = realloc(s->sources, (s->n_sources + 1) * sizeof(*grown));
		if (!grown) {
			tr_ctx_free(ctx);
			return TR_EXIT_FAILURE;
		}
		s->sources = grown;
		s->sources[s->n_sources++] = ctx;
		ctx->required = list_has(required, sec->name);
		errors += validate_section(sec, ctx->plugin->keys, ctx->plugin->name);
	}
	packager = tr_config_value(main_section, tr_session_keys, "packager");
	if (load_plugin(s, packager, tr_profile_section(&s->profile, packager),
			"[tracerig] packager", TRACERIG_PLUGIN_PACKAGER, &s->packager) < 0)
		errors++;
	else
		errors += validate_section(s->packager->section, s->packager->plugin->keys,
					   packager);
	if (errors)
		goto invalid;
	if (s->n_sources == 0 && !opts->check) {
		tr_err("%s: the profile names no backend: add a section such as [perf_events]",
		       s->profile_path);
		return TR_EXIT_USAGE;
	}

	/* Targets. */
	s->targets.pids = opts->pids;
	s->targets.n_pids = opts->n_pids;
	s->targets.cgroup = tr_config_value(main_section, tr_session_keys, "cgroup");
	s->targets.system_wide = opts->n_pids == 0 && !opts->command;
	if (s->targets.cgroup) {
		struct stat st;

		if (stat(s->targets.cgroup, &st) < 0 || !S_ISDIR(st.st_mode)) {
			tr_err("[tracerig] cgroup = %s: not a cgroup directory (use a path under "
			       "/sys/fs/cgroup, e.g. the container's)", s->targets.cgroup);
			return TR_EXIT_USAGE;
		}
		s->targets.system_wide = 0;
	}
	if (!opts->check)
		for (size_t i = 0; i < opts->n_pids; i++)
			if (tr_pid_check(opts->pids[i]) < 0)
				return TR_EXIT_USAGE;

	/* Output and duration. */
	if (tr_output_prepare(tr_config_value(main_section, tr_session_keys, "output"),
			      tr_config_value(main_section, tr_session_keys, "name"), opts->check,
			      &s->output) < 0)
		return TR_EXIT_USAGE;
	s->duration_ms = tr_config_number(main_section, tr_session_keys, "duration");
	/* A launched command bounds the session itself unless a duration was
	 * asked for on this command line. */
	if (opts->command && !opts->duration &&
	    !(tr_section_entry(main_section, "duration") &&
	      strcmp(tr_section_entry(main_section, "duration")->origin, "--set") == 0))
		s->duration_ms = 0;
	s->keep_staging = tr_config_number(main_section, tr_session_keys, "keep_staging") != 0;
	return 0;

invalid:
	tr_err("%d error%s in the profile; nothing was collected", errors, errors == 1 ? "" : "s");
	return TR_EXIT_USAGE;
}

/* ---------------- --check ---------------- */

int tr_session_check(struct tr_session *s)
{
	int unusable_required = 0;

	printf("profile %s: valid\n", s->profile_path);
	for (size_t i = 0; i <= s->n_sources; i++) {
		struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;
		char advice[1024] = "";
		int ret = 0;

		if (!ctx)
			continue;
		if (ctx->plugin->check)
			ret = ctx->plugin->check(&tr_services, ctx, advice, sizeof(advice));
		printf("  %-12s %-8s %-9s %s%s%s\n", ctx->plugin->name,
		       ctx->plugin->version ? ctx->plugin->version : "?",
		       ctx->plugin->kind == TRACERIG_PLUGIN_PACKAGER ? "packager"
		       : ctx->required ? "required" : "optional",
		       ret == 0 ? "usable" : "NOT USABLE: ",
		       ret == 0 ? "" : (advice[0] ? advice : strerror(-ret)),
		       ret == 0 && advice[0] ? "" : "");
		if (ret == 0 && advice[0])
			printf("  %-12s note: %s\n", "", advice);
		if (ret < 0 && (ctx->required || ctx->plugin->kind == TRACERIG_PLUGIN_PACKAGER))
			unusable_required++;
	}
	printf("  plugin file(s):\n");
	for (size_t i = 0; i <= s->n_sources; i++) {
		struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;

		if (ctx)
			printf("    %s: %s\n", ctx->plugin->name, ctx->loaded.file);
	}
	return unusable_required ? TR_EXIT_FAILURE : TR_EXIT_OK;
}

/* ---------------- running ---------------- */

static char abort_message[PATH_MAX + 256];
static char abort_unlink[PATH_MAX];

static void abort_on_second_signal(int sig)
{
	(void)sig;
	if (write(STDERR_FILENO, abort_message, strlen(abort_message)) < 0) {
		/* Nothing to do: we are leaving anyway. */
	}
	if (abort_unlink[0])
		unlink(abort_unlink);
	_exit(TR_EXIT_ABORTED);
}

static void arm_second_signal(struct tr_session *s)
{
	struct sigaction sa;
	sigset_t set;

	snprintf(abort_message, sizeof(abort_message),
		 "\ntracerig: aborted by a second interrupt: no archive was written; what was "
		 "collected so far is left in %s\n", s->archive.dir);
	snprintf(abort_unlink, sizeof(abort_unlink), "%s", s->archive.output);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = abort_on_second_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static void fail_plugin(struct tracerig_ctx *ctx, const char *phase, int err)
{
	ctx->phase = TR_PHASE_FAILED;
	ctx->failed_in = phase;
	ctx->error = err < 0 ? err : -EIO;
	tr_log(TRACERIG_LOG_ERROR, ctx->plugin->name, "%s failed: %s%s", phase,
	       strerror(-ctx->error),
	       ctx->required || ctx->plugin->kind == TRACERIG_PLUGIN_PACKAGER
		       ? "" : " (optional backend: continuing without it)");
}

static void stop_started(struct tr_session *s)
{
	for (size_t i = s->n_sources; i-- > 0;) {
		struct tracerig_ctx *ctx = s->sources[i];
		int ret;

		if (ctx->phase != TR_PHASE_STARTED)
			continue;
		tr_log(TRACERIG_LOG_DEBUG, ctx->plugin->name, "stopping");
		ret = ctx->plugin->stop(ctx->state);
		if (ret < 0)
			tr_log(TRACERIG_LOG_WARN, ctx->plugin->name,
			       "stop failed: %s (flushing what it has)", strerror(-ret));
		ctx->phase = TR_PHASE_STOPPED;
	}
}

static void fini_all(struct tr_session *s)
{
	for (size_t i = s->n_sources + 1; i-- > 0;) {
		struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;

		if (ctx && ctx->state && ctx->plugin->fini)
			ctx->plugin->fini(ctx->state);
		if (ctx)
			ctx->state = NULL;
	}
}

static int init_all(struct tr_session *s)
{
	for (size_t i = 0; i <= s->n_sources; i++) {
		struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;
		int ret;

		ctx->in_init = 1;
		ret = ctx->plugin->init(&tr_services, ctx, &ctx->state);
		ctx->in_init = 0;
		if (ret < 0) {
			fail_plugin(ctx, "init", ret);
			if (ctx->plugin->fini && ctx->state)
				ctx->plugin->fini(ctx->state);
			ctx->state = NULL;
			if (ctx->required || ctx == s->packager)
				return -1;
			continue;
		}
		ctx->phase = TR_PHASE_INITIALIZED;
	}
	return 0;
}

static int start_all(struct tr_session *s)
{
	size_t usable = 0;

	for (size_t i = 0; i < s->n_sources; i++) {
		struct tracerig_ctx *ctx = s->sources[i];
		int ret;

		if (ctx->phase != TR_PHASE_INITIALIZED)
			continue;
		tr_log(TRACERIG_LOG_DEBUG, ctx->plugin->name, "starting");
		ret = ctx->plugin->start(ctx->state);
		if (ret < 0) {
			fail_plugin(ctx, "start", ret);
			if (ctx->required)
				return -1;
			continue;
		}
		ctx->phase = TR_PHASE_STARTED;
		usable++;
	}
	if (usable == 0) {
		tr_err("no backend could start: nothing to collect (see the errors above; "
		       "`tracerig --check -c %s` tells what each backend needs)",
		       s->opts->profile);
		return -1;
	}
	return 0;
}

static int targets_alive(const struct tr_session *s)
{
	for (size_t i = 0; i < s->targets.n_pids; i++)
		if (tr_pid_alive(s->targets.pids[i]))
			return 1;
	return 0;
}

static void wait_for_end(struct tr_session *s, int sfd)
{
	uint64_t deadline = s->duration_ms > 0
				    ? s->start_mono_ns + (uint64_t)s->duration_ms * 1000000ull : 0;

	for (;;) {
		struct pollfd pfd = { .fd = sfd, .events = POLLIN };
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		int timeout = 500;

		if (deadline) {
			if (now >= deadline) {
				s->end_reason = TR_END_DURATION;
				return;
			}
			if ((deadline - now) / 1000000 < (uint64_t)timeout)
				timeout = (int)((deadline - now) / 1000000) + 1;
		}
		tr_status_update();
		if (poll(&pfd, 1, timeout) > 0) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM) {
					s->end_reason = TR_END_SIGNAL;
					tr_warn("%s: stopping and packaging what was collected "
						"(Ctrl-C again aborts without packaging)",
						si.ssi_signo == SIGINT ? "interrupted" : "terminated");
					return;
				}
			}
		}
		if (s->targets.command_pid && tr_command_poll(&s->command)) {
			s->end_reason = TR_END_COMMAND;
			return;
		}
		if (s->targets.n_pids && !s->targets.command_pid && !targets_alive(s)) {
			s->end_reason = TR_END_TARGETS_GONE;
			tr_info("every target process has exited: ending the session");
			return;
		}
	}
}

static void flush_all(struct tr_session *s)
{
	for (size_t i = 0; i < s->n_sources; i++) {
		struct tracerig_ctx *ctx = s->sources[i];
		int ret;

		if (ctx->phase != TR_PHASE_STOPPED)
			continue;
		tr_log(TRACERIG_LOG_DEBUG, ctx->plugin->name, "flushing");
		ret = ctx->plugin->flush(ctx->state, &s->archive);
		if (ret < 0)
			fail_plugin(ctx, "flush", ret);
		else
			ctx->phase = TR_PHASE_FLUSHED;
	}
}

static void human_size(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 10ull << 20)
		snprintf(buf, len, "%.1f MiB", bytes / 1048576.0);
	else if (bytes >= 10ull << 10)
		snprintf(buf, len, "%.1f KiB", bytes / 1024.0);
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
}

static void summarize(struct tr_session *s, int packaged)
{
	for (size_t i = 0; i < s->n_sources; i++) {
		struct tracerig_ctx *ctx = s->sources[i];
		char line[1024];
		size_t used;

		used = snprintf(line, sizeof(line), "%-12s %s", ctx->plugin->name,
				ctx->phase == TR_PHASE_FAILED
					? (ctx->required ? "FAILED" : "skipped") : "ok");
		if (ctx->phase == TR_PHASE_FAILED)
			used += snprintf(line + used, sizeof(line) - used, " (%s: %s)",
					 ctx->failed_in, strerror(-ctx->error));
		pthread_mutex_lock(&ctx->lock);
		for (size_t c = 0; c < ctx->n_counters && used < sizeof(line); c++)
			used += snprintf(line + used, sizeof(line) - used, "%s%s=%llu",
					 c ? ", " : "  ", ctx->counters[c].name,
					 (unsigned long long)ctx->counters[c].value);
		pthread_mutex_unlock(&ctx->lock);
		tr_log(TRACERIG_LOG_INFO, NULL, "%s", line);
		if (packaged >= 0 && tr_log_verbosity() >= TRACERIG_LOG_WARN &&
		    tr_log_verbosity() < TRACERIG_LOG_INFO)
			fprintf(stderr, "  %s\n", line);
	}
}

/* True when the staging directory holds everything collected: each source
 * flushed and the manifest is there.  Only then may a failure say that
 * nothing is lost. */
static int staging_complete(struct tr_session *s)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->phase == TR_PHASE_FAILED && s->sources[i]->failed_in &&
		    strcmp(s->sources[i]->failed_in, "flush") == 0)
			return 0;
	snprintf(path, sizeof(path), "%s/manifest.json", s->archive.dir);
	return access(path, F_OK) == 0;
}

static int package(struct tr_session *s)
{
	struct stat st;
	char size[32], why[128];
	int ret;

	tr_log_close_file();
	ret = tr_manifest_write(s);
	if (ret < 0) {
		/* A partial manifest must not pass for the record of the run. */
		tr_staging_remove_entry(&s->archive, "manifest.json");
		tr_err("cannot write manifest.json in %s: %s", s->archive.dir,
		       tr_output_strerror(ret, why, sizeof(why)));
		return ret;
	}
	ret = tr_output_create_temp(&s->archive);
	if (ret < 0)
		return ret;
	ret = s->packager->plugin->flush(s->packager->state, &s->archive);
	if (ret < 0) {
		fail_plugin(s->packager, "flush", ret);
		unlink(s->archive.output);
		return ret;
	}
	ret = tr_output_commit(&s->archive, &s->output);
	if (ret < 0)
		return ret;
	s->packager->phase = TR_PHASE_FLUSHED;
	if (stat(s->output, &st) == 0) {
		human_size((uint64_t)st.st_size, size, sizeof(size));
		if (tr_log_verbosity() >= TRACERIG_LOG_WARN)
			fprintf(stderr, "tracerig: archive %s (%s)\n", s->output, size);
	}
	return 0;
}

static int block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGCHLD);
	/* Threads that plugins start inherit this mask, so signals reach the
	 * signalfd of the main thread only. */
	if (pthread_sigmask(SIG_BLOCK, set, NULL) != 0)
		return -1;
	return signalfd(-1, set, SFD_NONBLOCK | SFD_CLOEXEC);
}

static int command_exit_status(struct tr_session *s)
{
	if (!s->opts->command)
		return TR_EXIT_OK;
	if (!s->command.reaped)
		return TR_EXIT_OK;
	if (WIFEXITED(s->command.status)) {
		if (WEXITSTATUS(s->command.status) == 0)
			return TR_EXIT_OK;
		tr_warn("the command exited with status %d", WEXITSTATUS(s->command.status));
		return TR_EXIT_COMMAND_FAILED;
	}
	if (WIFSIGNALED(s->command.status)) {
		tr_warn("the command was killed by signal %d (%s)", WTERMSIG(s->command.status),
			strsignal(WTERMSIG(s->command.status)));
		return TR_EXIT_COMMAND_FAILED;
	}
	return TR_EXIT_OK;
}

int tr_session_run(struct tr_session *s)
{
	char log_path[PATH_MAX];
	int sfd = -1, ret, status = TR_EXIT_OK;
	sigset_t blocked;

	ret = tr_staging_create(&s->archive, s->output);
	if (ret < 0) {
		char why[128];

		tr_err("cannot create a staging directory in %s: %s (set TMPDIR to a directory "
		       "with room for the trace)", tr_staging_parent(),
		       tr_output_strerror(ret, why, sizeof(why)));
		return TR_EXIT_FAILURE;
	}
	snprintf(log_path, sizeof(log_path), "%s/tracerig.log", s->archive.dir);
	if ((ret = tr_log_open_file(log_path)) < 0)
		tr_warn("cannot write %s: %s", log_path, strerror(-ret));
	tr_info("tracerig %s, profile %s, staging in %s", PACKAGE_VERSION, s->profile_path,
		s->archive.dir);

	s->symbolizer = tr_symbolizer_new();
	if (!s->symbolizer)
		tr_warn("symbolizer unavailable: frames will be addresses");
	sfd = block_signals(&blocked);
	if (sfd < 0) {
		tr_err("cannot set up signal handling: %s", strerror(errno));
		status = TR_EXIT_FAILURE;
		goto remove_staging;
	}

	if (init_all(s) < 0) {
		status = TR_EXIT_FAILURE;
		goto fini;
	}
	if (s->opts->command) {
		ret = tr_command_spawn(&s->command, s->opts->command, s->command_env);
		if (ret < 0) {
			tr_err("cannot start '%s': %s", s->opts->command[0], strerror(-ret));
			status = TR_EXIT_FAILURE;
			goto fini;
		}
		s->targets.command_pid = s->command.pid;
		s->targets.command = s->opts->command[0];
		tr_pids_observe(s->command.pid);
	}

	s->start_mono_ns = now_ns(CLOCK_MONOTONIC);
	s->start_real_ns = now_ns(CLOCK_REALTIME);
	if (start_all(s) < 0) {
		stop_started(s);
		tr_command_abort(&s->command);
		tr_err("a required backend could not start: nothing was packaged");
		status = TR_EXIT_FAILURE;
		goto fini;
	}
	s->collecting = 1;
	if (s->opts->command) {
		ret = tr_command_release(&s->command);
		if (ret < 0) {
			/* Still packaged: the manifest records why the command
			 * never ran, and system-wide sources have their data. */
			s->command_exec_errno = -ret;
			tr_err("cannot run '%s': %s (%s)", s->opts->command[0], strerror(-ret),
			       ret == -ENOENT ? "check the command name and PATH"
					      : "check that it is an executable file");
			waitpid(s->command.pid, &s->command.status, 0);
			s->command.reaped = 1;
			s->end_reason = TR_END_COMMAND;
		}
		s->command_started = ret == 0;
	}
	if (s->end_reason == TR_END_NONE) {
		tr_info("collecting%s", s->duration_ms ? "" : " until Ctrl-C or the command exits");
		tr_status_begin(s, tr_log_verbosity() >= TRACERIG_LOG_WARN);
		wait_for_end(s, sfd);
		tr_status_end();
	}
	arm_second_signal(s);
	s->end_mono_ns = now_ns(CLOCK_MONOTONIC);
	tr_info("session ended (%s) after %.1fs", tr_end_reason_name(s->end_reason),
		(s->end_mono_ns - s->start_mono_ns) / 1e9);

	stop_started(s);
	flush_all(s);
	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->required && s->sources[i]->phase == TR_PHASE_FAILED)
			status = TR_EXIT_FAILURE;
	summarize(s, 1);
	if (package(s) < 0) {
		if (staging_complete(s))
			tr_err("packaging failed: nothing collected is lost, the files are in %s "
			       "(zip that directory once the cause is fixed)", s->archive.dir);
		else
			tr_err("packaging failed: what was collected is kept in %s, but it is "
			       "incomplete (see the errors above)", s->archive.dir);
		status = TR_EXIT_FAILURE;
		goto fini_only;
	}
	if (s->keep_staging)
		fprintf(stderr, "tracerig: staging kept in %s\n", s->archive.dir);
	else
		tr_staging_remove(&s->archive);
	if (s->command_exec_errno)
		status = TR_EXIT_COMMAND_NOT_RUN;
	else if (status == TR_EXIT_OK)
		status = command_exit_status(s);
	goto fini_only;

fini:
	tr_command_abort(&s->command);
remove_staging:
	/* Before collection began there is nothing in staging worth keeping. */
	if (status != TR_EXIT_OK && s->archive.dir && !s->collecting)
		tr_staging_remove(&s->archive);
fini_only:
	fini_all(s);
	tr_command_close(&s->command);
	if (sfd >= 0)
		close(sfd);
	tr_log_close_file();
	return status;
}

void tr_session_free(struct tr_session *s)
{
	for (size_t i = 0; i < s->n_sources; i++)
		tr_ctx_free(s->sources[i]);
	free(s->sources);
	tr_ctx_free(s->packager);
	for (size_t i = 0; i < s->n_command_env; i++)
		free(s->command_env[i]);
	free(s->command_env);
	if (s->symbolizer)
		tr_symbolizer_free(s->symbolizer);
	tr_staging_free(&s->archive);
	tr_profile_free(&s->profile);
	free(s->profile_path);
	free(s->conf_path);
	free(s->output);
	tr_output_release();
	tr_loader_exit();
	tr_pids_reset();
}
