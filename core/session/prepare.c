/* Preparing a session: the profile read (its file found, tracerig.conf's
 * defaults, --set, -d and -o laid over it), every section validated
 * against its plugin's key table, the plugins loaded, the targets, the
 * flight recorder's triggers and the archive's path decided.  Nothing
 * runs yet: session.c takes it from there. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends.h"
#include "core/archive/output.h"
#include "core/archive/stream.h"
#include "core/exitcodes.h"
#include "core/log.h"
#include "ctx.h"
#include "flight.h"
#include "keys.h"
#include "lib/list.h"
#include "loader.h"
#include "mode.h"
#include "options.h"
#include "pids.h"
#include "profile.h"
#include "services.h"
#include "session.h"
#include "target.h"
#include "triggers.h"

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

/* The directories shipped profiles are in: the installed one, then (before
 * installation) the source tree's. */
static const char *const profile_dirs[] = {
	TR_SYSCONFDIR "/profiles",
	TR_ABS_SRCDIR "/conf/profiles",
};

/* A profile as given (a path), else by its name among the shipped ones:
 * "cpu", "cpu.ini" and "profiles/cpu.ini" all find cpu.ini. */
static char *find_profile(const char *given)
{
	char path[PATH_MAX];
	size_t len = strlen(given);
	int has_ini = len > 4 && strcmp(given + len - 4, ".ini") == 0;
	char *found = find_config_file(given);

	if (found || given[0] == '/' || strchr(given, '/'))
		return found;
	for (size_t i = 0; i < sizeof(profile_dirs) / sizeof(profile_dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s%s", profile_dirs[i], given,
			 has_ini ? "" : ".ini");
		if (access(path, R_OK) == 0)
			return strdup(path);
	}
	return NULL;
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

		tr_entry_where(e, at, sizeof(at));
		if (!k) {
			const char *close = tr_key_suggest(keys, e->key);
			char valid[1024] = "";
			size_t used = 0;

			for (const struct tracerig_key *v = keys; v && v->name; v++)
				used += snprintf(valid + used,
						 used < sizeof(valid) ? sizeof(valid) - used : 0,
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
	const char *package = tr_backend_package(name);

	if (package)
		snprintf(buf, len,
			 "install it with `apt install %s` (or build tracerig with "
			 "--enable-%s)",
			 package, name);
	else
		snprintf(buf, len,
			 "put %s.so in a directory named by --plugin-dir or "
			 "TRACERIG_PLUGIN_PATH",
			 name);
	return buf;
}

/* Returns 1 when `name` is a backend tracerig ships that this (split)
 * install lacks and the profile can do without: the session goes on
 * without it, and --check lists it as not installed. */
static int load_plugin(struct tr_session *s, const char *name, struct tr_section *section,
		       const char *at, enum tracerig_plugin_kind kind, int optional,
		       struct tracerig_ctx **out)
{
	struct tr_loaded loaded;
	char why[2048], hint[256];
	int ret;

	ret = tr_loader_load(name, &loaded, why, sizeof(why));
	if (ret < 0) {
		if (ret == -ENOENT) {
			const char *close = tr_backend_closest(name);

			if (close && strcmp(close, name) != 0) {
				tr_err("%s: [%s] no backend of that name (did you mean [%s]?)", at,
				       name, close);
			} else if (optional && tr_backend_package(name)) {
				tr_warn("%s: [%s] is not installed; going on without it (optional "
					"here): to use it, %s",
					at, name, package_hint(name, hint, sizeof(hint)));
				return 1;
			} else {
				tr_err("%s: [%s] %s%s: %s", at, name, why,
				       kind == TRACERIG_PLUGIN_SOURCE && !optional
					       ? ", and the profile requires it"
					       : "",
				       package_hint(name, hint, sizeof(hint)));
			}
		} else {
			tr_err("%s: [%s] %s", at, name, why);
		}
		return -1;
	}
	if (loaded.plugin->kind != kind) {
		tr_err("%s: [%s] is a %s plugin, not a %s (%s)", at, name,
		       loaded.plugin->kind == TRACERIG_PLUGIN_PACKAGER ? "packaging" : "source",
		       kind == TRACERIG_PLUGIN_PACKAGER ? "packager" : "source",
		       kind == TRACERIG_PLUGIN_PACKAGER
			       ? "set [tracerig] packager to a packaging plugin"
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

/* Every name in `required` must be a backend of the profile. */
static int check_required(struct tr_session *s, struct tr_section *main_section)
{
	struct tr_entry *e = tr_section_entry(main_section, "required");
	const char *cursor = e ? e->value : NULL, *item;
	size_t len;
	int errors = 0;

	while (tr_list_next(&cursor, &item, &len)) {
		char *name = strndup(item, len);

		if (!name)
			return errors + 1;
		if (!tr_profile_section(&s->profile, name) || strcmp(name, "tracerig") == 0) {
			char at[PATH_MAX + 16];

			tr_entry_where(e, at, sizeof(at));
			tr_err("%s: [tracerig] required names '%s', which has no section in this "
			       "profile (add a [%s] section or remove it from required)",
			       at, name, name);
			errors++;
		}
		free(name);
	}
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
			       "settings belong in profiles",
			       s->conf_path, sec->line, sec->name);
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

/* Where the shipped profiles really are, and their names. */
static void list_profiles_hint(void)
{
	for (size_t i = 0; i < sizeof(profile_dirs) / sizeof(profile_dirs[0]); i++) {
		struct dirent **list = NULL;
		char names[1024] = "";
		size_t used = 0;
		int n = scandir(profile_dirs[i], &list, NULL, alphasort);

		if (n < 0)
			continue;
		for (int k = 0; k < n; k++) {
			size_t len = strlen(list[k]->d_name);

			if (len > 4 && strcmp(list[k]->d_name + len - 4, ".ini") == 0 &&
			    used < sizeof(names))
				used += (size_t)snprintf(names + used, sizeof(names) - used,
							 "%s%.*s", used ? ", " : "", (int)(len - 4),
							 list[k]->d_name);
			free(list[k]);
		}
		free(list);
		fprintf(stderr,
			"tracerig: the profiles shipped with tracerig are in %s/: %s "
			"(-c NAME finds one)\n",
			profile_dirs[i], names[0] ? names : "none");
		return;
	}
	fprintf(stderr, "tracerig: no shipped profiles found (neither %s/ nor %s/ exists)\n",
		profile_dirs[0], profile_dirs[1]);
}

/* -d and -o: the [tracerig] key `key` set from the command line `flag`.
 * Returns the error count. */
static int set_from_command_line(struct tr_session *s, const char *key, const char *value,
				 const char *flag)
{
	char set[64];
	struct tr_entry *e;

	snprintf(set, sizeof(set), "tracerig.%s=", key);
	if (tr_profile_set(&s->profile, set) < 0)
		return 1;
	e = tr_section_entry(tr_profile_section(&s->profile, "tracerig"), key);
	free(e->value);
	e->value = strdup(value);
	e->origin = flag;
	return e->value ? 0 : 1;
}

/* The profile, with the command line's --set, -d and -o and
 * tracerig.conf's defaults, its [tracerig] section validated.  Returns 0
 * or an exit status; adds what is wrong to *errors. */
static int read_profile(struct tr_session *s, int *errors)
{
	const struct tr_options *opts = s->opts;
	struct tr_section *main_section;
	int ret;

	s->profile_path = find_profile(opts->profile);
	if (!s->profile_path) {
		tr_err("cannot find profile '%s' (looked for it as given, under %s/ and among "
		       "the shipped profiles): give a path to an .ini file or a shipped profile's "
		       "name",
		       opts->profile, TR_SYSCONFDIR);
		list_profiles_hint();
		return TR_EXIT_USAGE;
	}
	ret = tr_profile_load(&s->profile, s->profile_path);
	if (ret < 0) {
		tr_err("%s: cannot read the profile: %s", s->profile_path, strerror(-ret));
		return TR_EXIT_USAGE;
	}
	*errors += ret;
	if (!tr_profile_section(&s->profile, "tracerig") && *errors == 0)
		tr_info("%s: no [tracerig] section; using defaults", s->profile_path);

	for (size_t i = 0; i < opts->n_sets; i++)
		if (tr_profile_set(&s->profile, opts->sets[i]) < 0)
			(*errors)++;
	if (opts->duration)
		*errors += set_from_command_line(s, "duration", opts->duration, "-d");
	if (opts->output)
		*errors += set_from_command_line(s, "output", opts->output, "-o");
	*errors += load_defaults(s);
	/* Sections may have moved while --set and defaults added some. */
	main_section = tr_profile_section(&s->profile, "tracerig");
	*errors += validate_section(main_section, tr_session_keys, "[tracerig]");
	*errors += check_required(s, main_section);
	return 0;
}

/* Loads the backend of each section but [tracerig] and the packager's.
 * Returns 0 or an exit status; adds what is wrong to *errors and the
 * optional backends this install lacks to *not_installed. */
static int load_sources(struct tr_session *s, int *errors, int *not_installed)
{
	const struct tr_settings *st = &s->settings;

	for (size_t i = 0; i < s->profile.n_sections; i++) {
		struct tr_section *sec = &s->profile.sections[i];
		struct tracerig_ctx *ctx, **grown;
		char at[PATH_MAX + 16];
		int ret;

		if (strcmp(sec->name, "tracerig") == 0 || strcmp(sec->name, st->packager) == 0)
			continue;
		if (sec->line > 0)
			snprintf(at, sizeof(at), "%s:%d", sec->origin, sec->line);
		else
			snprintf(at, sizeof(at), "%s", sec->origin);
		ret = load_plugin(s, sec->name, sec, at, TRACERIG_PLUGIN_SOURCE,
				  !tr_list_contains(&st->required, sec->name), &ctx);
		if (ret != 0) {
			*errors += ret < 0;
			*not_installed += ret > 0;
			continue;
		}
		grown = realloc(s->sources, (s->n_sources + 1) * sizeof(*grown));
		if (!grown) {
			tr_ctx_free(ctx);
			return TR_EXIT_FAILURE;
		}
		s->sources = grown;
		s->sources[s->n_sources++] = ctx;
		ctx->required = tr_list_contains(&st->required, sec->name);
		*errors += validate_section(sec, ctx->plugin->keys, ctx->plugin->name);
	}
	return 0;
}

/* Returns the error count. */
static int load_packager(struct tr_session *s)
{
	const char *packager = s->settings.packager;

	if (load_plugin(s, packager, tr_profile_section(&s->profile, packager),
			"[tracerig] packager", TRACERIG_PLUGIN_PACKAGER, 0, &s->packager) < 0)
		return 1;
	return validate_section(s->packager->section, s->packager->plugin->keys, packager);
}

/* PIDs, the launched command or the whole system, bounded by a cgroup.
 * Returns 0 or an exit status. */
static int prepare_targets(struct tr_session *s)
{
	const struct tr_options *opts = s->opts;

	s->targets.pids = opts->pids;
	s->targets.n_pids = opts->n_pids;
	/* Known from the start, so that a plugin's check and init can tell a
	 * command will be launched (its PID comes at spawn). */
	s->targets.command = opts->command ? opts->command[0] : NULL;
	s->targets.cgroup = s->settings.cgroup;
	s->targets.system_wide = opts->n_pids == 0 && !opts->command;
	if (s->targets.cgroup) {
		struct stat st;

		if (stat(s->targets.cgroup, &st) < 0 || !S_ISDIR(st.st_mode)) {
			tr_err("[tracerig] cgroup = %s: not a cgroup directory (use a path under "
			       "/sys/fs/cgroup, e.g. the container's)",
			       s->targets.cgroup);
			return TR_EXIT_USAGE;
		}
		s->targets.system_wide = 0;
	}
	if (!opts->check)
		for (size_t i = 0; i < opts->n_pids; i++)
			if (tr_pid_check(opts->pids[i]) < 0)
				return TR_EXIT_USAGE;
	return 0;
}

/* The flight recorder's automatic triggers, as written (the mode says
 * whether it has any). */
static int prepare_triggers(struct tr_session *s)
{
	char why[256];

	if (tr_triggers_configure(&s->triggers, s->settings.trigger_cpu, s->settings.trigger_for_ms,
				  s->settings.trigger_crash, why, sizeof(why)) < 0) {
		tr_err("[tracerig] %s", why);
		return -EINVAL;
	}
	return 0;
}

/* The archive's path, the duration, whether staging is kept.  Returns 0
 * or an exit status. */
static int prepare_output(struct tr_session *s, struct tr_section *main_section)
{
	const struct tr_options *opts = s->opts;
	const struct tr_entry *duration = tr_section_entry(main_section, "duration");
	const struct tr_settings *st = &s->settings;

	s->mode = st->mode == TR_MODE_FLIGHT ? &tr_flight_mode : &tr_record_mode;
	if (prepare_triggers(s) < 0)
		return TR_EXIT_USAGE;
	if (tr_output_prepare(s->output, st->output, st->name, opts->check) < 0)
		return TR_EXIT_USAGE;
	s->duration_ms = st->duration_ms;
	/* A launched command bounds the session itself unless a duration was
	 * asked for on this command line. */
	if (opts->command && !opts->duration &&
	    !(duration && strcmp(duration->origin, "--set") == 0))
		s->duration_ms = 0;
	if (s->mode->prepare(s, main_section) < 0)
		return TR_EXIT_USAGE;
	/* A kept staging is for looking at: its files stay whole. */
	tr_stream_may_free(s->stream, !st->keep_staging);
	return 0;
}

int tr_session_prepare(struct tr_session *s, const struct tr_options *opts)
{
	struct tr_section *main_section;
	int errors = 0, not_installed = 0, ret;

	memset(s, 0, sizeof(*s));
	s->opts = opts;
	s->pids = tr_pids_new();
	s->views = tr_wall_views_new();
	s->flight = tr_flight_new();
	s->stream = tr_stream_new();
	s->output = tr_output_new();
	if (!s->pids || !s->views || !s->flight || !s->stream || !s->output)
		return TR_EXIT_FAILURE;
	s->command.release_fd = s->command.exec_err_fd = -1;
	s->triggers.exit_fd = -1;

	ret = read_profile(s, &errors);
	if (ret)
		return ret;
	main_section = tr_profile_section(&s->profile, "tracerig");
	if (tr_settings_bind(main_section, &s->settings) < 0)
		return TR_EXIT_FAILURE;
	if (tr_loader_init((const char *const *)opts->plugin_dirs, opts->n_plugin_dirs) < 0)
		return TR_EXIT_FAILURE;
	ret = load_sources(s, &errors, &not_installed);
	if (ret)
		return ret;
	errors += load_packager(s);
	if (errors) {
		tr_err("%d error%s in the profile; nothing was collected", errors,
		       errors == 1 ? "" : "s");
		return TR_EXIT_USAGE;
	}
	if (s->n_sources == 0 && !opts->check) {
		if (not_installed)
			tr_err("%s: none of the profile's backends is installed", s->profile_path);
		else
			tr_err("%s: the profile names no backend: add a section such as "
			       "[perf_events]",
			       s->profile_path);
		return TR_EXIT_USAGE;
	}
	ret = prepare_targets(s);
	return ret ? ret : prepare_output(s, main_section);
}
