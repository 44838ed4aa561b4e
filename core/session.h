/* One collection session: the loaded plugins, the targets, the staging
 * area, and the lifecycle that drives them. */
#ifndef TR_SESSION_H
#define TR_SESSION_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <tracerig/plugin.h>

#include "loader.h"
#include "profile.h"
#include "staging.h"
#include "target.h"

struct tr_symbolizer;
struct tr_sideband;
struct tr_remote;

enum tr_phase {
	TR_PHASE_LOADED = 0,
	TR_PHASE_INITIALIZED,
	TR_PHASE_STARTED,
	TR_PHASE_STOPPED,
	TR_PHASE_FLUSHED,
	TR_PHASE_FAILED,
};

struct tr_counter {
	char *name;
	uint64_t value;
};

/* Per-plugin context: what the plugin is handed as its `ctx`. */
struct tracerig_ctx {
	struct tr_session *session;
	struct tr_loaded loaded;
	const struct tracerig_plugin *plugin;
	struct tr_section *section;
	int required;
	void *state;
	enum tr_phase phase;
	const char *failed_in; /* "init", "start", "collect", "stop", "flush" */
	int error;             /* negative errno from the failing call */
	int in_init;
	enum tracerig_model model; /* 0 when the source said nothing */

	/* Supervision (core/supervise.c). */
	struct tr_driver *driver;
	volatile sig_atomic_t fault_signal; /* the plugin faulted: never called again */
	long long hung_ms;                  /* abandoned after this long in failed_in */
	uint64_t window_start_ns, window_end_ns; /* when it really collected */

	pthread_mutex_t lock; /* counters and progress, set from plugin threads */
	struct tr_counter *counters;
	size_t n_counters;
	char progress[96];

	/* LIST keys split for config_bind, by key index (core/services.c). */
	struct tracerig_list *lists;
	unsigned char *lists_split;
	size_t n_lists;
};

enum tr_end_reason {
	TR_END_NONE = 0,
	TR_END_DURATION,
	TR_END_SIGNAL,
	TR_END_COMMAND,
	TR_END_TARGETS_GONE,
	TR_END_PLUGIN_FAULT,
	TR_END_DIED,
	TR_END_STOP_REQUEST,
};

struct tr_options {
	const char *profile;
	const char *output;
	const char *duration;
	char **sets;
	size_t n_sets;
	pid_t *pids;
	size_t n_pids;
	char **command; /* NULL-terminated, or NULL */
	char **plugin_dirs;
	size_t n_plugin_dirs;
	int check;
	int list_plugins;
	int reference; /* --profile-reference */
	int verbose;
	int argc;
	char **argv;
	const char *session_name; /* detached (`tracerig start`): the control socket's name */
	int ready_fd;             /* detached: told once collection runs, else -1 */
};

struct tr_session {
	const struct tr_options *opts;
	struct tr_profile profile;
	char *profile_path;
	char *conf_path;

	struct tracerig_ctx **sources;
	size_t n_sources;
	struct tracerig_ctx *packager;

	struct tracerig_targets targets;
	struct tr_command command;
	char **command_env; /* "NAME=value", NULL-terminated */
	size_t n_command_env;

	struct tracerig_archive archive;
	char *output;
	long long duration_ms;
	int keep_staging;

	uint64_t start_mono_ns, start_real_ns, end_mono_ns;
	uint64_t window_start_ns; /* every source started: -d counts from here */
	enum tr_end_reason end_reason;
	int collecting; /* every required source started */
	int command_started;
	int command_exec_errno;

	int sfd;     /* signalfd of SIGINT, SIGTERM, SIGCHLD */
	int signals; /* SIGINT/SIGTERM received: the first stops, a second aborts */
	long long start_timeout_ms, stop_timeout_ms, flush_timeout_ms;
	char died_why[256]; /* set by the watchdog when it salvages */
	pid_t died_pid;

	struct tr_symbolizer *symbolizer;
	struct tr_sideband *sideband; /* when no source records one */
	struct tr_remote *remote;     /* detached: the control socket */
};

extern const struct tracerig_services tr_services;

/* Exit statuses (documented in tracerig(1)). */
enum {
	TR_EXIT_OK = 0,
	TR_EXIT_FAILURE = 1,
	TR_EXIT_USAGE = 2,
	TR_EXIT_COMMAND_FAILED = 3,
	TR_EXIT_COMMAND_NOT_RUN = 127,
	TR_EXIT_ABORTED = 130,
};

/* Loads the profile and plugins, validates everything.  Returns 0 or an
 * exit status. */
int tr_session_prepare(struct tr_session *s, const struct tr_options *opts);
int tr_session_run(struct tr_session *s);
int tr_session_check(struct tr_session *s);
void tr_session_free(struct tr_session *s);

/* The watchdog's side (core/watchdog.c): what the collector said of a
 * plugin, and packaging the staging directory of a collector that died. */
void tr_session_note_phase(struct tr_session *s, const char *plugin, const char *phase);
int tr_session_salvage(struct tr_session *s, pid_t collector, const char *why,
		       uint64_t start_mono_ns, uint64_t start_real_ns);

const char *tr_phase_name(enum tr_phase phase);
const char *tr_end_reason_name(enum tr_end_reason reason);

#endif
