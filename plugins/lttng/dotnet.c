/* The .NET runtime emits its LTTng events from libcoreclrtraceptprovider.so,
 * which libcoreclr.so dlopen()s at startup unless DOTNET_LTTng=0, and which
 * loads only when the liblttng-ust.so.N it was linked against (.so.0 or
 * .so.1, by .NET version and architecture) is in the process's root -- a
 * container's own filesystem, not the host's.  When it does not load, the
 * runtime runs on and its events are silently absent: this file tells
 * which of those happened. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dotnet.h"
#include "lib/elfopen.h"
#include "lib/procpid.h"
#include "lib/untrusted.h"

#include <gelf.h>

#define ENVIRON_MAX (1 << 20)
#define MAPS_MAX (16 << 20)

static const char *const ust_sonames[2] = { "liblttng-ust.so.0", "liblttng-ust.so.1" };

/* Where ld.so looks by default, multiarch (Debian, Ubuntu) and not
 * (Alpine, RHEL). */
static const char *const lib_dirs[] = {
	"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/usr/lib/arm-linux-gnueabihf", "/lib/arm-linux-gnueabihf",
	"/usr/lib64", "/lib64", "/usr/lib", "/lib", "/usr/local/lib", NULL,
};

static int basename_is(const char *path, size_t len, const char *name)
{
	size_t n = strlen(name);

	return len >= n + 1 && path[len - n - 1] == '/' && memcmp(path + len - n, name, n) == 0;
}

void dotnet_parse_maps(const char *maps, struct dotnet_status *st)
{
	const char *line = maps;

	while (line && *line) {
		const char *end = strchr(line, '\n'), *path;
		size_t len = end ? (size_t)(end - line) : strlen(line);

		path = memchr(line, '/', len);
		if (path) {
			size_t plen = len - (size_t)(path - line);

			/* A deleted file keeps its name with " (deleted)" after it. */
			if (plen > 10 && memcmp(path + plen - 10, " (deleted)", 10) == 0)
				plen -= 10;
			if (basename_is(path, plen, DOTNET_PROVIDER)) {
				st->is_dotnet = 1;
				if (!st->provider_mapped)
					snprintf(st->provider, sizeof(st->provider), "%.*s",
						 (int)plen, path);
				st->provider_mapped = 1;
			} else if (basename_is(path, plen, "libcoreclr.so")) {
				st->is_dotnet = 1;
				if (!st->runtime_dir[0])
					snprintf(st->runtime_dir, sizeof(st->runtime_dir), "%.*s",
						 (int)(plen - strlen("/libcoreclr.so")), path);
			}
		}
		line = end ? end + 1 : NULL;
	}
}

/* The value of NAME in a NUL-separated environment, or NULL. */
static const char *env_get(const char *env, size_t len, const char *name)
{
	size_t n = strlen(name);
	const char *p = env, *end = env + len;

	while (p < end) {
		size_t l = strnlen(p, (size_t)(end - p));

		if (l > n && memcmp(p, name, n) == 0 && p[n] == '=')
			return p + n + 1;
		p += l + 1;
	}
	return NULL;
}

static const char *env_either(const char *env, size_t len, const char *suffix)
{
	char name[64];
	const char *v;

	/* The runtime reads DOTNET_x first, then the older COMPlus_x. */
	snprintf(name, sizeof(name), "DOTNET_%s", suffix);
	v = env_get(env, len, name);
	if (!v) {
		snprintf(name, sizeof(name), "COMPlus_%s", suffix);
		v = env_get(env, len, name);
	}
	return v;
}

void dotnet_parse_environ(const char *env, size_t len, struct dotnet_status *st)
{
	const char *v = env_either(env, len, "LTTng");

	st->lttng_disabled = v && strcmp(v, "0") == 0;
	v = env_either(env, len, "PerfMapEnabled");
	st->perfmap = v && *v && strcmp(v, "0") != 0;
	snprintf(st->perfmap_value, sizeof(st->perfmap_value), "%s", v ? v : "");
}

static void find_ust(int rootfd, struct dotnet_status *st)
{
	char path[1024];

	for (int so = 0; so < 2; so++) {
		if (st->runtime_dir[0]) {
			snprintf(path, sizeof(path), "%s/%s", st->runtime_dir, ust_sonames[so]);
			if (tr_exists_in_root(rootfd, path)) {
				st->ust_so[so] = 1;
				snprintf(st->ust_where[so], sizeof(st->ust_where[so]), "%s", path);
				continue;
			}
		}
		for (int i = 0; lib_dirs[i]; i++) {
			snprintf(path, sizeof(path), "%s/%s", lib_dirs[i], ust_sonames[so]);
			if (tr_exists_in_root(rootfd, path)) {
				st->ust_so[so] = 1;
				snprintf(st->ust_where[so], sizeof(st->ust_where[so]), "%s", path);
				break;
			}
		}
	}
}

/* The liblttng-ust soname the provider was linked against, read from its
 * dynamic section inside the process's root: .NET's own builds link .so.0
 * (.NET 8 to 10 on x64), which current distributions no longer ship. */
static int provider_needs(int rootfd, const char *path)
{
	struct tr_untrusted u;
	Elf_Scn *scn = NULL;
	int fd, err, needs = -1;
	Elf *elf;

	fd = tr_untrusted_openat(rootfd, path, TR_IN_ROOT, TR_OBJECT_MAX, &u);
	if (fd < 0)
		return -1;
	elf = tr_elf_open_fd(fd, &err);
	while (elf && needs < 0 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *name;

			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			for (int so = 0; name && so < 2; so++)
				if (strcmp(name, ust_sonames[so]) == 0)
					needs = so;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return needs;
}

int dotnet_inspect(pid_t pid, struct dotnet_status *st)
{
	char root[64], *text = NULL, path[1024];
	size_t len = 0;
	int ret, rootfd;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	ret = tr_read_proc_file(AT_FDCWD, path, MAPS_MAX, &text, &len);
	if (ret < 0)
		return ret;
	dotnet_parse_maps(text, st);
	free(text);
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	ret = tr_read_proc_file(AT_FDCWD, path, ENVIRON_MAX, &text, &len);
	if (ret < 0)
		return ret;
	dotnet_parse_environ(text, len, st);
	free(text);
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	find_ust(rootfd, st);
	if (st->runtime_dir[0]) {
		snprintf(path, sizeof(path), "%s/%s", st->runtime_dir, DOTNET_PROVIDER);
		st->provider_present = tr_exists_in_root(rootfd, path);
		st->provider_needs = st->provider_present ? provider_needs(rootfd, path) : -1;
	} else {
		st->provider_needs = -1;
	}
	close(rootfd);
	return 0;
}

int dotnet_describe(pid_t pid, const struct dotnet_status *st, char *buf, size_t len)
{
	int ok = 0;

	/* Perf maps are mapharvest's to describe (it may switch them on). */
	if (!st->is_dotnet) {
		snprintf(buf, len, "pid %d: not a .NET process (no libcoreclr.so mapped): no "
			 "runtime events from it", (int)pid);
		return 0;
	}
	if (st->provider_mapped) {
		snprintf(buf, len, "pid %d: the .NET runtime's LTTng provider is "
			 "loaded (%s)", (int)pid, st->provider);
		ok = 1;
	} else if (st->lttng_disabled) {
		snprintf(buf, len, "pid %d: the .NET runtime's LTTng provider "
			 "(%s) is not loaded: DOTNET_LTTng=0 in its environment "
			 "disables it (start it without DOTNET_LTTng=0)", (int)pid,
			 DOTNET_PROVIDER);
	} else if (!st->ust_so[0] && !st->ust_so[1]) {
		snprintf(buf, len, "pid %d: the .NET runtime's LTTng provider "
			 "(%s) is not loaded: neither liblttng-ust.so.0 nor "
			 "liblttng-ust.so.1 is in the process's root (install the "
			 "one its .NET build links -- liblttng-ust0 or liblttng-ust1 "
			 "-- in its image, and restart it)", (int)pid,
			 DOTNET_PROVIDER);
	} else if (st->runtime_dir[0] && !st->provider_present) {
		snprintf(buf, len, "pid %d: the .NET runtime's LTTng provider is "
			 "not loaded: %s is not in %s (a runtime built without "
			 "LTTng support)", (int)pid, DOTNET_PROVIDER,
			 st->runtime_dir);
	} else if (st->provider_needs >= 0 && !st->ust_so[st->provider_needs]) {
		int needs = st->provider_needs;

		snprintf(buf, len, "pid %d: the .NET runtime's LTTng provider "
			 "(%s) cannot load: it links %s, which is not in the "
			 "process's root (it has %s only), so no runtime event can "
			 "reach LTTng from it; install %s in its image, or record "
			 "its runtime events over EventPipe (its diagnostics "
			 "socket, as dotnet-trace does) instead", (int)pid,
			 DOTNET_PROVIDER, ust_sonames[needs], ust_sonames[!needs],
			 ust_sonames[needs]);
	} else {
		int have = st->ust_so[1] ? 1 : 0;

		snprintf(buf, len, "pid %d: the .NET runtime's LTTng provider "
			 "(%s) is not loaded although %s is in its root (%s): its "
			 ".NET build may link liblttng-ust.so.%d instead (install "
			 "that one), or the process loaded it and failed (see "
			 "its stderr)", (int)pid, DOTNET_PROVIDER, ust_sonames[have],
			 st->ust_where[have], !have);
	}
	return ok;
}

/* The .NET installation a command on this host would run: DOTNET_ROOT, the
 * directory of the `dotnet` found on PATH (through its links), or the
 * places distributions and Microsoft's packages use. */
static int dotnet_root(char *out, size_t len)
{
	static const char *const usual[] = { "/usr/share/dotnet", "/usr/lib/dotnet",
					     "/usr/lib64/dotnet", "/opt/dotnet", NULL };
	const char *env = getenv("DOTNET_ROOT"), *path = getenv("PATH");
	char buf[PATH_MAX], *real;

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return 0;
	}
	while (path && *path) {
		size_t n = strcspn(path, ":");

		if (n && n < sizeof(buf) - 8) {
			snprintf(buf, sizeof(buf), "%.*s/dotnet", (int)n, path);
			if (access(buf, X_OK) == 0 && (real = realpath(buf, NULL))) {
				char *slash = strrchr(real, '/');

				if (slash)
					*slash = '\0';
				snprintf(out, len, "%s", real);
				free(real);
				return 0;
			}
		}
		path += n + (path[n] == ':');
	}
	for (size_t i = 0; usual[i]; i++)
		if (access(usual[i], F_OK) == 0) {
			snprintf(out, len, "%s", usual[i]);
			return 0;
		}
	return -ENOENT;
}

int dotnet_host_provider_loadable(char *why, size_t len)
{
	char root[PATH_MAX], dir[PATH_MAX + 64];
	int rootfd, found = 0, loadable = 0, missing = -1;
	struct dirent *de;
	DIR *d;

	if (dotnet_root(root, sizeof(root)) < 0)
		return -1;
	snprintf(dir, sizeof(dir), "%s/shared/Microsoft.NETCore.App", root);
	d = opendir(dir);
	if (!d)
		return -1;
	rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	while (rootfd >= 0 && !loadable && (de = readdir(d))) {
		struct dotnet_status st = { 0 };
		char provider[PATH_MAX * 2];
		int needs;

		if (de->d_name[0] == '.' ||
		    (size_t)snprintf(st.runtime_dir, sizeof(st.runtime_dir), "%s/%s", dir,
				     de->d_name) >= sizeof(st.runtime_dir))
			continue;
		snprintf(provider, sizeof(provider), "%s/%s", st.runtime_dir, DOTNET_PROVIDER);
		if (!tr_exists_in_root(rootfd, provider))
			continue;
		found = 1;
		needs = provider_needs(rootfd, provider);
		find_ust(rootfd, &st);
		if (needs < 0 ? (st.ust_so[0] || st.ust_so[1]) : st.ust_so[needs])
			loadable = 1;
		else if (needs >= 0)
			missing = needs;
	}
	closedir(d);
	if (rootfd >= 0)
		close(rootfd);
	if (!found)
		return -1;
	if (!loadable)
		snprintf(why, len, "the runtimes in %s link %s for their LTTng provider, which this "
			 "host lacks", dir, missing >= 0 ? ust_sonames[missing] : "a liblttng-ust");
	return loadable;
}
