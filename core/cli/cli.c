#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/exitcodes.h"
#include "core/log.h"
#include "lib/list.h"

enum {
	OPT_SET = 0x100,
	OPT_PLUGIN_DIR,
	OPT_CHECK,
	OPT_LIST_PLUGINS,
	OPT_PROFILE_REFERENCE,
	OPT_NAME,
	OPT_FOREGROUND,
};

static const struct option long_options[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "pid", required_argument, NULL, 'p' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "set", required_argument, NULL, OPT_SET },
	{ "plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "list-plugins", no_argument, NULL, OPT_LIST_PLUGINS },
	{ "profile-reference", no_argument, NULL, OPT_PROFILE_REFERENCE },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "foreground", no_argument, NULL, OPT_FOREGROUND },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

void tr_cli_usage(FILE *out)
{
	fprintf(out,
		"Usage: tracerig -c PROFILE [options] [-- COMMAND [ARGS...]]\n"
		"       tracerig --check -c PROFILE\n"
		"       tracerig --list-plugins [-v]\n"
		"       tracerig report ARCHIVE [--top N]\n"
		"       tracerig convert ARCHIVE [--to pprof|folded|speedscope] [-o DIR]\n"
		"       tracerig start -c PROFILE [--name NAME] [options]   (in the background)\n"
		"       tracerig start --foreground -c PROFILE ...   (for systemd: the same\n"
		"                           control socket, the log on stderr)\n"
		"       tracerig stop [NAME]   |   tracerig status\n"
		"       tracerig snapshot [NAME]   (a flight recorder: the last window)\n"
		"\n"
		"Collects performance data with the backends a profile names and writes one\n"
		"archive (<name>.trace.zip) for PerfView, perf report, babeltrace2 or a browser.\n"
		"\n"
		"  -c, --config PROFILE     profile (.ini); a relative name is also looked up\n"
		"                           under %s, and a shipped one by its name (-c cpu)\n"
		"  -p, --pid PID[,PID...]   trace these processes (and their threads, children);\n"
		"                           commas or blanks separate them\n"
		"  -d, --duration TIME      collect for TIME (10, 500ms, 2m; 0 = until Ctrl-C)\n"
		"  -o, --output PATH        archive path, or a directory for <name>.trace.zip\n"
		"                           (default <name>.trace.zip here, numbered if taken)\n"
		"      --set SEC.KEY=VALUE  override or add a profile key (repeatable)\n"
		"      --plugin-dir DIR     look for plugins in DIR first (repeatable)\n"
		"      --name NAME          with start: the session's name (default: the\n"
		"                           profile's file name without .ini)\n"
		"      --foreground         with start: do not fork; the session keeps its\n"
		"                           control socket (stop, snapshot, status) and logs\n"
		"                           to stderr, as a service manager wants\n"
		"      --check              validate the profile and tell whether each backend\n"
		"                           can work on this machine\n"
		"      --list-plugins       list installed plugins (-v: with their keys)\n"
		"      --profile-reference  print every key of every plugin as Markdown\n"
		"  -v, --verbose            more messages (repeat for debug)\n"
		"  -q, --quiet              only errors\n"
		"  -h, --help               this help\n"
		"  -V, --version            version and plugin ABI\n"
		"\n"
		"With -- COMMAND the command is started and traced from its exec; the session\n"
		"ends when it exits.  Ctrl-C or SIGTERM stops and packages; a second Ctrl-C\n"
		"aborts without packaging.\n"
		"\n"
		"Exit status: 0 success, 1 collection or packaging failed, 2 bad command line\n"
		"or profile, 3 the launched command failed, 127 the command could not be run,\n"
		"130 aborted.  See tracerig(1) and tracerig.ini(5).\n",
		TR_SYSCONFDIR);
}

static int add_string(char ***list, size_t *n, const char *value)
{
	char **grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	*list = grown;
	(*list)[(*n)++] = (char *)value;
	return 0;
}

/* PIDs separated by commas or blanks (`-p "$(pidof a b)"` gives "12 34").
 * An empty list is an error: it is what `-p "$(pidof x)"` gives when x is not
 * running, and tracing the whole machine instead is not what was asked. */
static int add_pids(struct tr_options *opts, const char *arg)
{
	const char *cursor = arg, *item;
	size_t found = 0, len;
	int ret = 0;

	while (tr_words_next(&cursor, &item, &len)) {
		char tok[24], *end = NULL;
		long pid = 0;
		pid_t *grown;

		errno = 0;
		if (tr_list_item(tok, sizeof(tok), item, len) == 0 && tok[0] >= '0' && tok[0] <= '9')
			pid = strtol(tok, &end, 10);
		if (!end || *end || errno || pid <= 0 || pid > INT_MAX) {
			tr_err("-p %s: '%.*s' is not a process ID (use -p 1234 or -p 1234,5678)", arg,
			       (int)len, item);
			ret = -EINVAL;
			break;
		}
		grown = realloc(opts->pids, (opts->n_pids + 1) * sizeof(*grown));
		if (!grown) {
			ret = -ENOMEM;
			break;
		}
		opts->pids = grown;
		opts->pids[opts->n_pids++] = (pid_t)pid;
		found++;
	}
	if (ret == 0 && found == 0) {
		tr_err("-p '%s': no process ID given (is the process running? `-p \"$(pidof x)\"` "
		       "is empty when x is not; leave out -p to trace the whole machine)", arg);
		ret = -EINVAL;
	}
	return ret;
}

/* What the options mean together: a profile, and no command beside -p or
 * --check.  An exit status. */
static int check_combination(const struct tr_options *opts)
{
	if (!opts->profile) {
		tr_err("no profile: use -c PROFILE (for example -c profiles/cpu.ini)");
		return TR_EXIT_USAGE;
	}
	if (opts->command && opts->n_pids) {
		tr_err("-p and a command exclude each other: trace either running processes or "
		       "the command you launch");
		return TR_EXIT_USAGE;
	}
	if (opts->check && opts->command) {
		tr_err("--check validates a profile; it does not run a command");
		return TR_EXIT_USAGE;
	}
	return TR_EXIT_OK;
}

/* One option: -1 to go on, else the exit status to return (with *done
 * set when the option's answer was all there was to do). */
static int take_option(int c, struct tr_options *opts, int *quiet, int *done)
{
	switch (c) {
	case 'c': opts->profile = optarg; break;
	case 'p':
		if (add_pids(opts, optarg) < 0)
			return TR_EXIT_USAGE;
		break;
	case 'd': opts->duration = optarg; break;
	case 'o': opts->output = optarg; break;
	case OPT_SET:
		if (add_string(&opts->sets, &opts->n_sets, optarg) < 0)
			return TR_EXIT_FAILURE;
		break;
	case OPT_PLUGIN_DIR:
		if (add_string(&opts->plugin_dirs, &opts->n_plugin_dirs, optarg) < 0)
			return TR_EXIT_FAILURE;
		break;
	case OPT_CHECK: opts->check = 1; break;
	case OPT_NAME: opts->session_name = optarg; break;
	case OPT_FOREGROUND: opts->foreground = 1; break;
	case OPT_LIST_PLUGINS: opts->list_plugins = 1; break;
	case OPT_PROFILE_REFERENCE:
		opts->list_plugins = 1;
		opts->reference = 1;
		break;
	case 'v': opts->verbose++; break;
	case 'q': *quiet = 1; break;
	case 'h':
		tr_cli_usage(stdout);
		*done = 1;
		return TR_EXIT_OK;
	case 'V':
		printf("tracerig %s (plugin ABI %d)\n", PACKAGE_VERSION, TRACERIG_ABI_VERSION);
		*done = 1;
		return TR_EXIT_OK;
	default: fprintf(stderr, "Try 'tracerig --help'.\n"); return TR_EXIT_USAGE;
	}
	return -1;
}

int tr_cli_parse(int argc, char **argv, struct tr_options *opts, int *done)
{
	int c, quiet = 0, status;

	memset(opts, 0, sizeof(*opts));
	opts->ready_fd = -1;
	opts->argc = argc;
	opts->argv = argv;
	*done = 0;
	/* '+': the first operand starts the command, like `perf record`. */
	while ((c = getopt_long(argc, argv, "+c:p:d:o:vqhV", long_options, NULL)) != -1)
		if ((status = take_option(c, opts, &quiet, done)) >= 0)
			return status;
	tr_log_set_verbosity(quiet ? TRACERIG_LOG_ERROR : TRACERIG_LOG_WARN + opts->verbose);
	if (optind < argc)
		opts->command = &argv[optind];
	return opts->list_plugins ? TR_EXIT_OK : check_combination(opts);
}

void tr_cli_free(struct tr_options *opts)
{
	free(opts->pids);
	free(opts->sets);
	free(opts->plugin_dirs);
}
