/* `tracerig start`, `tracerig stop` and `tracerig status`: sessions that
 * run in the background, as perfcollect's start/stop, steered through
 * root-only control sockets (control.c). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/exitcodes.h"
#include "core/log.h"
#include "core/session/control.h"
#include "detach.h"
#include "lib/path.h"

static int refuse_non_root(const char *command)
{
	if (geteuid() == 0)
		return 0;
	tr_err("tracerig %s: detached sessions are root's (their control sockets in %s are "
	       "root's alone); run it as root, e.g. with sudo", command, tr_control_dir());
	return -1;
}

/* The profile's file name without directory and ".ini": `-c profiles/cpu.ini`
 * runs as "cpu". */
static void default_name(const char *profile, char *buf, size_t len)
{
	static const char *const suffixes[] = { ".ini", NULL };

	tr_path_stem(profile, suffixes, buf, len);
}

int tr_detach_check(struct tr_options *opts, char *name_buf, size_t len)
{
	char why[512];
	int fd;

	if (refuse_non_root("start") < 0)
		return TR_EXIT_FAILURE;
	if (opts->list_plugins) {
		tr_err("tracerig start runs a session; --list-plugins does not go with it");
		return TR_EXIT_USAGE;
	}
	/* `start --foreground --check`: a unit's ExecStart line checked as it
	 * stands (profile, keys, backends), with nothing run or listened on. */
	if (opts->check && !opts->foreground) {
		tr_err("tracerig start runs a session; --check goes with it only with "
		       "--foreground (to check a service's command line)");
		return TR_EXIT_USAGE;
	}
	if (!opts->session_name) {
		default_name(opts->profile, name_buf, len);
		opts->session_name = name_buf;
	}
	if (tr_control_check_name(opts->session_name, why, sizeof(why)) < 0) {
		tr_err("--name %s: %s", opts->session_name, why);
		return TR_EXIT_USAGE;
	}
	/* A check runs nothing: the service it checks may well be running. */
	if (opts->check)
		return TR_EXIT_OK;
	if (tr_control_prepare_dir(why, sizeof(why)) < 0) {
		tr_err("cannot run %s: %s", opts->foreground ? "with a control socket" : "detached",
		       why);
		return TR_EXIT_FAILURE;
	}
	fd = tr_control_connect(opts->session_name);
	if (fd >= 0) {
		close(fd);
		tr_err("a session named '%s' is already running: `tracerig stop %s` ends it, or "
		       "start this one with --name OTHER", opts->session_name, opts->session_name);
		return TR_EXIT_FAILURE;
	}
	return TR_EXIT_OK;
}

/* What the session wrote before it failed, for the terminal that started it. */
static void show_log(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fclose(f);
}

/* The session's stdout and stderr go to NAME.log: nobody reads the
 * terminal of a detached session. */
static int redirect_output(const char *log_path)
{
	int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int ok;

	ok = log >= 0 && null >= 0 && dup2(null, STDIN_FILENO) >= 0 &&
	     dup2(log, STDOUT_FILENO) >= 0 && dup2(log, STDERR_FILENO) >= 0;
	if (log >= 0)
		close(log);
	if (null >= 0)
		close(null);
	return ok ? 0 : -1;
}

int tr_detach_start(struct tr_options *opts, int *in_session)
{
	char log_path[4096], line[64];
	int fds[2], status, ret;
	pid_t child;

	*in_session = 0;
	if (tr_control_file(opts->session_name, ".log", log_path, sizeof(log_path)) < 0 ||
	    pipe2(fds, O_CLOEXEC) < 0) {
		tr_err("cannot run detached: %s", strerror(errno ? errno : ENAMETOOLONG));
		return TR_EXIT_FAILURE;
	}
	fflush(NULL);
	child = fork();
	if (child < 0) {
		tr_err("cannot run detached: fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return TR_EXIT_FAILURE;
	}
	if (child == 0) {
		close(fds[0]);
		/* Out of the terminal's session: its Ctrl-C and hang-up are not
		 * for us; `tracerig stop` and SIGTERM are. */
		setsid();
		if (redirect_output(log_path) < 0)
			_exit(TR_EXIT_FAILURE);
		opts->ready_fd = fds[1];
		*in_session = 1;
		return TR_EXIT_OK;
	}
	close(fds[1]);
	ret = tr_control_read_line(fds[0], line, sizeof(line), -1);
	close(fds[0]);
	if (ret > 0 && strcmp(line, "ready") == 0) {
		fprintf(stderr, "tracerig: session '%s' collecting (PID %d, log %s); `tracerig stop "
			"%s` packages it\n", opts->session_name, (int)child, log_path,
			opts->session_name);
		return TR_EXIT_OK;
	}
	if (waitpid(child, &status, 0) < 0)
		status = 0;
	show_log(log_path);
	tr_err("the session '%s' did not start (its log: %s)", opts->session_name, log_path);
	return WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : TR_EXIT_FAILURE;
}

/* The one running session when no name is given. */
static int pick_session(const char *command, char *buf, size_t len)
{
	char **names = NULL;
	size_t n = 0, alive = 0;
	int ret = tr_control_list(&names, &n);

	if (ret < 0) {
		tr_err("tracerig %s: cannot list %s: %s", command, tr_control_dir(), strerror(-ret));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int fd = tr_control_connect(names[i]);

		if (fd >= 0) {
			close(fd);
			if (alive++ == 0)
				snprintf(buf, len, "%s", names[i]);
		}
	}
	if (alive != 1) {
		if (alive == 0)
			tr_err("tracerig %s: no tracerig session is running", command);
		else
			tr_err("tracerig %s: %zu sessions are running: name one (`tracerig status` "
			       "lists them)", command, alive);
		ret = -1;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

/* `tracerig COMMAND [NAME]`: connects to the session named, or to the
 * only one running, and sends COMMAND.  The connected socket, or -1 with
 * the exit status in *status after saying why. */
static int ask_session(const char *command, int argc, char **argv, char *name, size_t len,
		       int *status)
{
	char why[512];
	int fd, ret;

	*status = TR_EXIT_FAILURE;
	if (refuse_non_root(command) < 0)
		return -1;
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "Usage: tracerig %s [NAME]\n", command);
		*status = TR_EXIT_USAGE;
		return -1;
	}
	/* What the directory holds is believed only when root alone could
	 * have put it there. */
	if ((ret = tr_control_check_dir(why, sizeof(why))) < 0 && ret != -ENOENT) {
		tr_err("tracerig %s: %s", command, why);
		return -1;
	}
	if (argc == 2) {
		if (tr_control_check_name(argv[1], why, sizeof(why)) < 0) {
			tr_err("tracerig %s %s: %s", command, argv[1], why);
			*status = TR_EXIT_USAGE;
			return -1;
		}
		snprintf(name, len, "%s", argv[1]);
	} else if (pick_session(command, name, len) < 0) {
		return -1;
	}
	fd = tr_control_connect(name);
	if (fd == -EACCES) {
		tr_err("tracerig %s: %s/%s.sock is served by neither root nor you: not a session "
		       "to trust; not used (remove it)", command, tr_control_dir(), name);
		return -1;
	}
	if (fd < 0) {
		tr_err("tracerig %s: no session named '%s' is running%s", command, name,
		       fd == -ECONNREFUSED ? " (its socket was left by a session that died; "
					     "removed)" : " (`tracerig status` lists them)");
		return -1;
	}
	if ((ret = tr_control_send(fd, command)) < 0) {
		tr_err("tracerig %s %s: %s", command, name, strerror(-ret));
		close(fd);
		return -1;
	}
	return fd;
}

int tr_detach_stop(int argc, char **argv)
{
	char name[128], line[4352];
	int fd, ret, answered = 0, said = 0, status = TR_EXIT_FAILURE;

	fd = ask_session("stop", argc, argv, name, sizeof(name), &status);
	if (fd < 0)
		return status;
	/* Packaging may take a while; the session answers when it is done. */
	while ((ret = tr_control_read_line(fd, line, sizeof(line), -1)) > 0) {
		answered = 1;
		if (strncmp(line, "stopping: ", 10) == 0) {
			fprintf(stderr, "tracerig: stopping '%s' (PID %s) and packaging\n", name,
				line + 10);
		} else if (strncmp(line, "archive: ", 9) == 0) {
			printf("%s\n", line + 9);
			status = TR_EXIT_OK;
		} else {
			tr_err("session '%s': %s", name, line);
			said = 1;
		}
	}
	close(fd);
	/* Every stop says what became of the session, once. */
	if (status != TR_EXIT_OK && !said && answered)
		tr_err("session '%s' ended without saying where its archive is: it may have died "
		       "while packaging (its watchdog then packages what it collected; see "
		       "%s/%s.log, or the journal for a --foreground one)", name,
		       tr_control_dir(), name);
	else if (status != TR_EXIT_OK && !said)
		tr_err("session '%s' did not answer (%s): see %s/%s.log, or the journal for a "
		       "--foreground one", name, ret < 0 ? strerror(-ret) : "it closed the connection",
		       tr_control_dir(), name);
	return status;
}

int tr_detach_snapshot(int argc, char **argv)
{
	char name[128], line[4352];
	int fd, ret, said = 0, status = TR_EXIT_FAILURE;

	fd = ask_session("snapshot", argc, argv, name, sizeof(name), &status);
	if (fd < 0)
		return status;
	/* The session answers once the archive is written. */
	while ((ret = tr_control_read_line(fd, line, sizeof(line), -1)) > 0) {
		if (strncmp(line, "snapshot: ", 10) == 0) {
			fprintf(stderr, "tracerig: session '%s' (PID %s) is writing a snapshot\n",
				name, line + 10);
		} else if (strncmp(line, "archive: ", 9) == 0) {
			printf("%s\n", line + 9);
			status = TR_EXIT_OK;
		} else if (strncmp(line, "error: ", 7) == 0) {
			tr_err("tracerig snapshot %s: %s", name, line + 7);
			said = 1;
		} else {
			tr_err("session '%s': %s", name, line);
			said = 1;
		}
	}
	close(fd);
	/* A refusal (a record-mode session) or a failure was said already. */
	if (status != TR_EXIT_OK && !said)
		tr_err("session '%s' ended without saying where the snapshot is (see %s/%s.log, "
		       "or the journal for a --foreground one)", name, tr_control_dir(), name);
	return status;
}

int tr_detach_status(int argc, char **argv)
{
	char **names = NULL, line[4352], why[512];
	size_t n = 0, shown = 0;
	int ret;

	(void)argv;
	if (refuse_non_root("status") < 0)
		return TR_EXIT_FAILURE;
	if (argc > 1) {
		fprintf(stderr, "Usage: tracerig status\n");
		return TR_EXIT_USAGE;
	}
	if ((ret = tr_control_check_dir(why, sizeof(why))) < 0 && ret != -ENOENT) {
		tr_err("tracerig status: %s", why);
		return TR_EXIT_FAILURE;
	}
	ret = tr_control_list(&names, &n);
	if (ret < 0) {
		tr_err("tracerig status: cannot list %s: %s", tr_control_dir(), strerror(-ret));
		return TR_EXIT_FAILURE;
	}
	for (size_t i = 0; i < n; i++) {
		int fd = tr_control_connect(names[i]);

		if (fd == -EACCES)
			tr_warn("tracerig status: %s/%s.sock is served by neither root nor you: "
				"not a session to trust; not listed (remove it)", tr_control_dir(),
				names[i]);
		if (fd < 0)
			continue; /* a stale socket: connect removed it */
		if (shown++)
			printf("\n");
		if (tr_control_send(fd, "status") < 0 ||
		    (ret = tr_control_read_line(fd, line, sizeof(line), 2000)) <= 0) {
			/* Requests wait while a session stops and packages. */
			printf("name: %s\nstate: stopping or packaging\n", names[i]);
		} else {
			do
				printf("%s\n", line);
			while (tr_control_read_line(fd, line, sizeof(line), 2000) > 0);
		}
		close(fd);
	}
	if (!shown)
		printf("no tracerig session is running\n");
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return TR_EXIT_OK;
}
