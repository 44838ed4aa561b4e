/* Reading a process's namespace PID and its runtimes' map settings.
 *
 * Runtimes name their files by the PID they see (the innermost NSpid) and
 * write them where their own settings say, in their own mount namespace:
 *   .NET    DOTNET_PerfMapEnabled (or COMPlus_): 1 = perf map + jitdump,
 *           2 = jitdump only, 3 = perf map only; DOTNET_PerfMapJitDumpPath
 *           (or COMPlus_) is the directory for both, default /tmp; before
 *           .NET 8 the perf map went to the temporary directory (TMPDIR).
 *   Node.js --perf-basic-prof writes /tmp/perf-PID.map; --perf-prof writes
 *           ./jit-PID.dump in the working directory (flags on the command
 *           line or in NODE_OPTIONS).
 * Other runtimes (Java's perf-map-agent, LuaJIT, ...) use /tmp. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/procpid.h"
#include "procinfo.h"

/* An environment block beyond this is not a runtime's. */
#define MAX_BLOCK (1u << 20)

int mh_parse_status(const char *text, pid_t *tgid, pid_t *nstgid, int *kthread)
{
	int have_tgid = 0, have_ns = 0;

	*kthread = 0;
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');

		/* Kernel threads are children of kthreadd (PID 2); newer kernels
		 * also say so in "Kthread:". */
		if (strncmp(line, "PPid:", 5) == 0 && strtol(line + 5, NULL, 10) == 2)
			*kthread = 1;
		else if (strncmp(line, "Kthread:", 8) == 0 && strtol(line + 8, NULL, 10) == 1)
			*kthread = 1;
		if (strncmp(line, "Tgid:", 5) == 0) {
			*tgid = (pid_t)strtol(line + 5, NULL, 10);
			have_tgid = 1;
		} else if (strncmp(line, "NStgid:", 7) == 0) {
			have_ns = tr_status_innermost(line + 7, nstgid) == 0;
		}
		line = end ? end + 1 : NULL;
	}
	if (!have_tgid)
		return -EINVAL;
	if (!have_ns) /* kernels before 4.1 have no NStgid: no PID namespaces */
		*nstgid = *tgid;
	if (*tgid == 2)
		*kthread = 1;
	return *tgid > 0 && *nstgid > 0 ? 0 : -EINVAL;
}

/* The value of NAME in a NUL-separated block, or NULL. */
static const char *block_get(const char *block, size_t len, const char *name)
{
	size_t nlen = strlen(name);

	for (size_t off = 0; off < len;) {
		const char *s = block + off;
		size_t slen = strnlen(s, len - off);

		if (slen > nlen && s[nlen] == '=' && strncmp(s, name, nlen) == 0 && off + slen < len)
			return s + nlen + 1;
		off += slen + 1;
	}
	return NULL;
}

/* .NET reads DOTNET_X first, then COMPlus_X. */
static const char *dotnet_get(const char *env, size_t len, const char *name, const char **which)
{
	static const char *const prefixes[] = { "DOTNET_", "COMPlus_" };
	char full[64];

	for (size_t i = 0; i < 2; i++) {
		const char *v;

		snprintf(full, sizeof(full), "%s%s", prefixes[i], name);
		v = block_get(env, len, full);
		if (v) {
			*which = prefixes[i];
			return v;
		}
	}
	return NULL;
}

static int has_flag(const char *block, size_t len, int nul_separated, const char *flag)
{
	size_t flen = strlen(flag);

	for (size_t off = 0; off < len;) {
		const char *s = block + off;
		size_t slen = nul_separated ? strnlen(s, len - off) : strcspn(s, " \t");

		if (slen == flen && strncmp(s, flag, flen) == 0)
			return 1;
		off += slen + 1;
		if (!nul_separated && off <= len)
			off += strspn(block + off, " \t");
	}
	return 0;
}

static int add_dir(struct mh_runtime *rt, const char *dir, const char *cwd)
{
	char buf[PATH_MAX];
	size_t len;

	if (!dir || !*dir || rt->n_dirs == MH_MAX_DIRS)
		return 0;
	if (dir[0] != '/') {
		/* Relative to the working directory, like the runtime's open(2). */
		if (!cwd)
			return 0;
		if ((size_t)snprintf(buf, sizeof(buf), "%s/%s", cwd, dir) >= sizeof(buf))
			return 0;
		dir = buf;
	}
	len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	for (size_t i = 0; i < rt->n_dirs; i++)
		if (strlen(rt->dirs[i]) == len && strncmp(rt->dirs[i], dir, len) == 0)
			return 0;
	rt->dirs[rt->n_dirs] = strndup(dir, len);
	if (!rt->dirs[rt->n_dirs])
		return -ENOMEM;
	rt->n_dirs++;
	return 0;
}

int mh_runtime_parse(struct mh_runtime *rt, const char *env, size_t env_len,
		     const char *cmdline, size_t cmdline_len, const char *cwd)
{
	const char *prefix = NULL, *enabled, *dump_path, *node_options;
	int ret = 0;

	memset(rt, 0, sizeof(*rt));
	enabled = dotnet_get(env, env_len, "PerfMapEnabled", &prefix);
	if (enabled) {
		/* CLRConfig reads DWORD settings as hexadecimal. */
		switch (strtol(enabled, NULL, 16)) {
		case 1:
			rt->expect |= MH_EXPECT(MH_PERF_MAP) | MH_EXPECT(MH_JITDUMP);
			break;
		case 2:
			rt->expect |= MH_EXPECT(MH_JITDUMP);
			break;
		case 3:
			rt->expect |= MH_EXPECT(MH_PERF_MAP);
			break;
		default:
			break;
		}
		if (rt->expect)
			snprintf(rt->why, sizeof(rt->why), "%sPerfMapEnabled=%.8s", prefix, enabled);
	}
	dump_path = dotnet_get(env, env_len, "PerfMapJitDumpPath", &prefix);
	ret = add_dir(rt, dump_path, cwd);
	if (ret == 0)
		ret = add_dir(rt, block_get(env, env_len, "TMPDIR"), cwd);
	if (ret == 0)
		ret = add_dir(rt, "/tmp", cwd);
	if (ret == 0)
		ret = add_dir(rt, cwd, cwd);
	if (ret < 0) {
		mh_runtime_free(rt);
		return ret;
	}

	/* Node.js: flags on its command line, or in NODE_OPTIONS (which every
	 * child inherits, so the why says which, see runtime_runs). */
	node_options = block_get(env, env_len, "NODE_OPTIONS");
	if (has_flag(cmdline, cmdline_len, 1, "--perf-basic-prof") ||
	    has_flag(cmdline, cmdline_len, 1, "--perf-basic-prof-only-functions")) {
		rt->expect |= MH_EXPECT(MH_PERF_MAP);
		snprintf(rt->why, sizeof(rt->why), "--perf-basic-prof");
	} else if (node_options &&
		   (has_flag(node_options, strlen(node_options), 0, "--perf-basic-prof") ||
		    has_flag(node_options, strlen(node_options), 0, "--perf-basic-prof-only-functions"))) {
		rt->expect |= MH_EXPECT(MH_PERF_MAP);
		snprintf(rt->why, sizeof(rt->why), "NODE_OPTIONS=--perf-basic-prof");
	}
	if (has_flag(cmdline, cmdline_len, 1, "--perf-prof")) {
		rt->expect |= MH_EXPECT(MH_JITDUMP);
		snprintf(rt->why, sizeof(rt->why), "--perf-prof");
	} else if (node_options && has_flag(node_options, strlen(node_options), 0, "--perf-prof")) {
		rt->expect |= MH_EXPECT(MH_JITDUMP);
		snprintf(rt->why, sizeof(rt->why), "NODE_OPTIONS=--perf-prof");
	}
	return 0;
}

void mh_runtime_free(struct mh_runtime *rt)
{
	for (size_t i = 0; i < rt->n_dirs; i++)
		free(rt->dirs[i]);
	rt->n_dirs = 0;
}

static char *read_link(int procfd, const char *name)
{
	char buf[PATH_MAX];
	ssize_t n = readlinkat(procfd, name, buf, sizeof(buf) - 1);

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

char *mh_cwd_in_root(const char *root, const char *cwd)
{
	size_t rlen;

	if (!root || !cwd || cwd[0] != '/')
		return NULL;
	/* The kernel names both from our root.  A root we cannot reach (another
	 * mount namespace) reads "/" and the cwd is already relative to it. */
	if (strcmp(root, "/") == 0)
		return strdup(cwd);
	rlen = strlen(root);
	if (strncmp(cwd, root, rlen) != 0 || (cwd[rlen] != '/' && cwd[rlen] != '\0'))
		return NULL;
	return strdup(cwd[rlen] ? cwd + rlen : "/");
}

int mh_procinfo_read(int procfd, struct mh_procinfo *pi, int with_runtime)
{
	char *status = NULL, *env = NULL, *cmdline = NULL, *root, *cwd_abs, *cwd = NULL;
	size_t len, env_len = 0, cmd_len = 0;
	int ret;

	memset(pi, 0, sizeof(*pi));
	ret = tr_read_proc_file(procfd, "status", MAX_BLOCK, &status, &len);
	if (ret < 0)
		return ret;
	ret = mh_parse_status(status, &pi->tgid, &pi->nspid, &pi->kthread);
	free(status);
	if (ret < 0 || !with_runtime || pi->kthread)
		return ret;
	/* Kernel threads and zombies have empty blocks: no runtime settings. */
	if (tr_read_proc_file(procfd, "environ", MAX_BLOCK, &env, &env_len) < 0)
		env = NULL;
	if (tr_read_proc_file(procfd, "cmdline", MAX_BLOCK, &cmdline, &cmd_len) < 0)
		cmdline = NULL;
	root = read_link(procfd, "root");
	cwd_abs = read_link(procfd, "cwd");
	cwd = mh_cwd_in_root(root, cwd_abs);
	free(root);
	free(cwd_abs);
	ret = mh_runtime_parse(&pi->rt, env ? env : "", env_len, cmdline ? cmdline : "", cmd_len,
			       cwd);
	free(env);
	free(cmdline);
	free(cwd);
	return ret;
}

void mh_procinfo_free(struct mh_procinfo *pi)
{
	mh_runtime_free(&pi->rt);
}

int mh_maps_contain(pid_t pid, const char *needle)
{
	char path[64], line[4352];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}
