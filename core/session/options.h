/* The command line, parsed (core/cli/cli.c): what the session, the detached
 * start and --list-plugins are asked to do. */
#ifndef TR_OPTIONS_H
#define TR_OPTIONS_H

#include <stddef.h>
#include <sys/types.h>

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
	int foreground;           /* `tracerig start --foreground`: a named session with its
				   * control socket that stays in the foreground (a service
				   * manager's child), its log on stderr */
};

#endif
