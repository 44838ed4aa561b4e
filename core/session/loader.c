#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <ltdl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "keys.h"
#include "loader.h"

#define TR_STR_(x) #x
#define TR_STR(x) TR_STR_(x)

static char **search_dirs;
static size_t n_search_dirs;
static int ltdl_ready;

static int add_dir(const char *dir)
{
	char **grown;

	if (!dir || !*dir)
		return 0;
	for (size_t i = 0; i < n_search_dirs; i++)
		if (strcmp(search_dirs[i], dir) == 0)
			return 0;
	grown = realloc(search_dirs, (n_search_dirs + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	search_dirs = grown;
	search_dirs[n_search_dirs] = strdup(dir);
	if (!search_dirs[n_search_dirs])
		return -ENOMEM;
	n_search_dirs++;
	return 0;
}

static int add_path_list(const char *list)
{
	char *copy, *save = NULL;
	int ret = 0;

	if (!list)
		return 0;
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	for (char *dir = strtok_r(copy, ":", &save); dir && !ret; dir = strtok_r(NULL, ":", &save))
		ret = add_dir(dir);
	free(copy);
	return ret;
}

/* True when this binary is the one in the build tree, so `make` output is
 * usable without installing. */
static int running_from_build_tree(void)
{
	char exe[PATH_MAX], built[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return 0;
	exe[n] = '\0';
	if (!realpath(TR_ABS_BUILDDIR, built))
		return 0;
	return strncmp(exe, built, strlen(built)) == 0 && exe[strlen(built)] == '/';
}

/* ---- trust: plugins run as root, so only files nobody else can replace ---- */

/* Root and the user who ran tracerig (through sudo: SUDO_UID, which only
 * someone already root could have set) may own plugin files. */
static int trusted_owner(uid_t uid)
{
	const char *sudo = getenv("SUDO_UID");
	char *end;
	unsigned long sudo_uid;

	if (uid == 0 || uid == getuid())
		return 1;
	if (!sudo || !*sudo)
		return 0;
	errno = 0;
	sudo_uid = strtoul(sudo, &end, 10);
	return !*end && !errno && sudo_uid == (unsigned long)uid;
}

static const char *user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, len, "%s (uid %u)", pw->pw_name, (unsigned)uid);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
	return buf;
}

/* One object on the way to a plugin.  Like sudo and OpenSSH's safe_path:
 * owned by root or the invoking user and writable by nobody else.  An
 * ancestor directory may be a sticky one owned by root (/tmp): others can
 * add entries there but not rename or remove ours. */
static int check_object(const char *path, const struct stat *st, int ancestor, char *why,
			size_t len)
{
	char who[128];

	if (!trusted_owner(st->st_uid)) {
		snprintf(why, len, "%s is owned by %s, not by root or you (chown root %s, or "
			 "use a directory only root can write)", path,
			 user_name(st->st_uid, who, sizeof(who)), path);
		return -EPERM;
	}
	if (!(st->st_mode & (S_IWGRP | S_IWOTH)))
		return 0;
	if (ancestor && S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX) && st->st_uid == 0)
		return 0;
	snprintf(why, len, "%s is writable by %s (mode %04o) (chmod go-w %s, or use a directory "
		 "only root can write)", path,
		 (st->st_mode & S_IWOTH) ? "everyone" : "its group",
		 (unsigned)(st->st_mode & 07777), path);
	return -EPERM;
}

/* Checks `path` (resolved: what would really be opened) and every directory
 * above it.  Returns 0, -EPERM with `why`, or -errno when it cannot be
 * examined. */
static int check_trusted(const char *path, char *why, size_t len)
{
	char real[PATH_MAX];
	struct stat st;
	int ret;

	if (!realpath(path, real)) {
		ret = -errno;
		snprintf(why, len, "cannot resolve %s: %s", path, strerror(errno));
		return ret;
	}
	for (int ancestor = 0;; ancestor = 1) {
		char *slash;

		if (lstat(real, &st) < 0) {
			ret = -errno;
			snprintf(why, len, "cannot examine %s: %s", real, strerror(errno));
			return ret;
		}
		if ((ret = check_object(real, &st, ancestor, why, len)) < 0)
			return ret;
		if (strcmp(real, "/") == 0)
			return 0;
		slash = strrchr(real, '/');
		if (slash == real)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

/* dlopen maps a shared object's segments as its headers say: one that
 * reaches past the end of a truncated file faults (SIGBUS) inside the
 * dynamic linker.  Checked here first with libelf, which reads within the
 * file's size.  What is not ELF at all is left to dlopen to describe. */
static int check_elf(const char *path, char *why, size_t len)
{
	struct stat st;
	size_t n = 0;
	Elf *elf;
	int fd, ret = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0; /* dlopen says why */
	if (fstat(fd, &st) < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL))) {
		close(fd);
		return 0;
	}
	if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &n) != 0) {
		snprintf(why, len, "cannot load %s: corrupt ELF file: %s", path, elf_errmsg(-1));
		ret = -ELIBBAD;
	}
	for (size_t i = 0; ret == 0 && i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			snprintf(why, len, "cannot load %s: corrupt ELF file: %s", path,
				 elf_errmsg(-1));
			ret = -ELIBBAD;
		} else if (ph.p_type == PT_LOAD &&
			   (ph.p_offset > (uint64_t)st.st_size ||
			    ph.p_filesz > (uint64_t)st.st_size - ph.p_offset)) {
			snprintf(why, len, "cannot load %s: truncated or corrupt ELF file (a segment "
				 "ends at byte %llu, the file has %lld bytes): reinstall or rebuild "
				 "it", path, (unsigned long long)(ph.p_offset + ph.p_filesz),
				 (long long)st.st_size);
			ret = -ELIBBAD;
		}
	}
	elf_end(elf);
	close(fd);
	return ret;
}

/* A libtool .la names the shared object libltdl really opens: NAME.so in
 * .libs/ beside it (build tree), beside it, or in its libdir (installed).
 * Each that exists must be as trusted as the .la. */
static int check_la_targets(const char *la, char *why, size_t len)
{
	char line[PATH_MAX + 32], dlname[NAME_MAX + 1] = "", libdir[PATH_MAX + 1] = "";
	char dir[PATH_MAX], probe[PATH_MAX + NAME_MAX + 16];
	const char *cands[3];
	FILE *f = fopen(la, "re");
	int ret = 0;

	if (!f) {
		ret = -errno;
		snprintf(why, len, "cannot read %s: %s", la, strerror(errno));
		return ret;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "dlname='%" TR_STR(NAME_MAX) "[^']'", dlname) == 1)
			continue;
		sscanf(line, "libdir='%" TR_STR(PATH_MAX) "[^']'", libdir);
	}
	fclose(f);
	if (!dlname[0] || strchr(dlname, '/'))
		return 0; /* libltdl refuses it anyway */
	snprintf(dir, sizeof(dir), "%s", la);
	*strrchr(dir, '/') = '\0';
	cands[0] = ".libs";
	cands[1] = ".";
	cands[2] = libdir[0] == '/' ? libdir : NULL;
	for (size_t i = 0; i < 3 && ret == 0; i++) {
		struct stat st;

		if (!cands[i])
			continue;
		if (i == 2)
			snprintf(probe, sizeof(probe), "%s/%s", libdir, dlname);
		else
			snprintf(probe, sizeof(probe), "%s/%s/%s", dir, cands[i], dlname);
		if (stat(probe, &st) == 0)
			ret = check_trusted(probe, why, len);
		if (ret == 0 && stat(probe, &st) == 0 && (ret = check_elf(probe, why, len)) < 0)
			return ret;
	}
	return ret;
}

int tr_loader_init(const char *const *extra_dirs, size_t n_extra)
{
	int ret;

	for (size_t i = 0; i < n_extra; i++)
		if ((ret = add_path_list(extra_dirs[i])) < 0)
			return ret;
	if ((ret = add_path_list(getenv("TRACERIG_PLUGIN_PATH"))) < 0)
		return ret;
	if (running_from_build_tree() && (ret = add_dir(TR_ABS_BUILDDIR "/plugins")) < 0)
		return ret;
	if ((ret = add_dir(TR_PLUGINDIR)) < 0)
		return ret;
	/* A directory anyone else can write to could receive a plugin at any
	 * time, before or after this check: refuse it as a whole, whatever it
	 * holds today. */
	for (size_t i = 0; i < n_search_dirs; i++) {
		char why[3 * PATH_MAX];
		struct stat st;

		if (stat(search_dirs[i], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (check_trusted(search_dirs[i], why, sizeof(why)) < 0) {
			tr_err("plugin directory %s: refusing to load plugins from it as root: %s",
			       search_dirs[i], why);
			tr_err("(it is on the plugin path through --plugin-dir, "
			       "TRACERIG_PLUGIN_PATH or the installation: remove it from there, "
			       "or fix its permissions)");
			tr_loader_exit();
			return -EPERM;
		}
	}
	if (lt_dlinit() != 0) {
		tr_err("cannot initialise libltdl: %s", lt_dlerror());
		return -ELIBACC;
	}
	ltdl_ready = 1;
	return 0;
}

void tr_loader_exit(void)
{
	for (size_t i = 0; i < n_search_dirs; i++)
		free(search_dirs[i]);
	free(search_dirs);
	search_dirs = NULL;
	n_search_dirs = 0;
	if (ltdl_ready)
		lt_dlexit();
	ltdl_ready = 0;
}

size_t tr_loader_path(const char *const **dirs)
{
	*dirs = (const char *const *)search_dirs;
	return n_search_dirs;
}

/* A plugin NAME lives in DIR as NAME.la / NAME.so, or, in the build tree,
 * as DIR/NAME/NAME.la. */
static int find_candidate(const char *dir, const char *name, char *base, size_t len)
{
	static const char *const exts[] = { ".la", ".so" };
	struct stat st;
	char probe[PATH_MAX];

	for (size_t l = 0; l < 2; l++) {
		if (l == 0)
			snprintf(base, len, "%s/%s", dir, name);
		else
			snprintf(base, len, "%s/%s/%s", dir, name, name);
		for (size_t e = 0; e < 2; e++) {
			snprintf(probe, sizeof(probe), "%s%s", base, exts[e]);
			if (stat(probe, &st) == 0 && S_ISREG(st.st_mode))
				return 1;
		}
	}
	return 0;
}

/* The file libltdl will open for `base` (NAME.la first, as lt_dlopenext
 * does), checked for trust with what it loads. */
static int check_candidate(const char *base, char *file, size_t len, char *why, size_t why_len)
{
	char reason[3 * PATH_MAX];
	struct stat st;
	int ret;

	snprintf(file, len, "%s.la", base);
	if (stat(file, &st) < 0 || !S_ISREG(st.st_mode))
		snprintf(file, len, "%s.so", base);
	ret = check_trusted(file, reason, sizeof(reason));
	if (ret == 0 && strcmp(file + strlen(file) - 3, ".la") == 0)
		ret = check_la_targets(file, reason, sizeof(reason));
	if (ret < 0) {
		if (ret == -ELIBBAD)
			snprintf(why, why_len, "%s", reason);
		else
			snprintf(why, why_len, "refusing to load %s as root: %s", file, reason);
		return ret;
	}
	if (strcmp(file + strlen(file) - 3, ".so") == 0 &&
	    (ret = check_elf(file, why, why_len)) < 0)
		return ret;
	return 0;
}

/* The first search directory holding `name`, as a base path for
 * lt_dlopenext; -ENOENT (naming the directories searched) when none. */
static int find_plugin(const char *name, char *base, size_t base_len, char *why, size_t why_len)
{
	for (size_t i = 0; i < n_search_dirs; i++)
		if (find_candidate(search_dirs[i], name, base, base_len))
			return 0;
	snprintf(why, why_len, "plugin '%s' is not installed (searched", name);
	for (size_t j = 0; j < n_search_dirs; j++) {
		size_t used = strlen(why);

		snprintf(why + used, why_len - used, "%s%s", j ? ":" : " ", search_dirs[j]);
	}
	if (strlen(why) + 2 < why_len)
		strcat(why, ")");
	return -ENOENT;
}

static int open_plugin(const char *base, const char *file, lt_dlhandle *h, char *why,
		       size_t why_len)
{
	const char *reason;

	*h = lt_dlopenext(base);
	if (*h)
		return 0;
	reason = lt_dlerror();
	/* libltdl tries NAME.la, then NAME.so, and reports the last miss
	 * ("file not found"): ask the dynamic linker about the file that
	 * is there, for what is really wrong with it. */
	if (strcmp(file + strlen(file) - 3, ".so") == 0) {
		void *dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);

		if (!dl)
			reason = dlerror();
		else
			dlclose(dl);
	}
	snprintf(why, why_len, "cannot load %s: %s (a library it needs is missing, it "
		 "is corrupt, or it was built for another system)", file,
		 reason ? reason : "unknown error");
	return -ELIBBAD;
}

/* What the descriptor asks beyond the vtable: capabilities this core
 * knows, the entries they need, and for tracerig's own plugins the same
 * private services as this core's (a plugin package of another release
 * installed beside it is refused here, not misread later). */
static int check_capabilities(const struct tracerig_plugin *desc, const char *shown, char *why,
			      size_t why_len)
{
	if (desc->caps & ~(unsigned)TRACERIG_CAPS_KNOWN) {
		snprintf(why, why_len,
			 "%s asks for capabilities 0x%x this tracerig does not know "
			 "(it was built for a later one): rebuild it against this tracerig's "
			 "tracerig-plugin.pc",
			 shown, desc->caps & ~(unsigned)TRACERIG_CAPS_KNOWN);
		return -EPROTO;
	}
	if (!(desc->caps & TRACERIG_CAP_FLIGHT) != !desc->snapshot) {
		snprintf(why, why_len, "%s has an incomplete descriptor (%s)", shown,
			 desc->snapshot ? "a snapshot entry without TRACERIG_CAP_FLIGHT"
					: "TRACERIG_CAP_FLIGHT without a snapshot entry");
		return -ENOEXEC;
	}
	if (desc->internal_version && desc->internal_version != TRACERIG_INTERNAL_VERSION) {
		snprintf(why, why_len,
			 "%s was built with another release of tracerig (its private "
			 "services version %u, this tracerig's %u): install the plugin package of "
			 "the same release as tracerig",
			 shown, desc->internal_version, TRACERIG_INTERNAL_VERSION);
		return -EPROTO;
	}
	return 0;
}

/* Whether `desc`, found in `shown` for plugin `name`, is one this core
 * can drive. */
static int check_descriptor(const struct tracerig_plugin *desc, const char *name,
			    const char *shown, char *why, size_t why_len)
{
	char reason_of_table[512];
	int ret;

	/* abi_version is the first field in every ABI: read before anything
	 * else of a layout this core may not know. */
	if (desc->abi_version != TRACERIG_ABI_VERSION) {
		snprintf(why, why_len, "%s: plugin '%s' was built for plugin ABI %u, this tracerig "
			 "speaks ABI %u: rebuild it against tracerig-plugin.pc (pkg-config --cflags "
			 "tracerig-plugin)", shown, name, desc->abi_version, TRACERIG_ABI_VERSION);
		return -EPROTO;
	}
	if (desc->name && strcmp(desc->name, name) != 0) {
		snprintf(why, why_len, "%s is plugin '%s', not '%s' (a plugin's file must be "
			 "named after it)", shown, desc->name, name);
		return -ENOEXEC;
	}
	if (!desc->name || !desc->init || !desc->flush ||
	    (desc->kind != TRACERIG_PLUGIN_SOURCE && desc->kind != TRACERIG_PLUGIN_PACKAGER) ||
	    (desc->kind == TRACERIG_PLUGIN_SOURCE && (!desc->start || !desc->stop))) {
		snprintf(why, why_len, "%s has an incomplete descriptor (name '%s', kind %d, "
			 "missing vtable entries)", shown, desc->name ? desc->name : "(none)",
			 (int)desc->kind);
		return -ENOEXEC;
	}
	if ((ret = check_capabilities(desc, shown, why, why_len)) < 0)
		return ret;
	if (tr_key_check_table(desc->keys, reason_of_table, sizeof(reason_of_table)) < 0) {
		snprintf(why, why_len, "%s has an unusable key table: %s (fix the plugin's "
			 "tracerig_key table)", shown, reason_of_table);
		return -ENOEXEC;
	}
	return 0;
}

int tr_loader_load(const char *name, struct tr_loaded *out, char *why, size_t why_len)
{
	const struct tracerig_plugin *desc;
	char base[PATH_MAX], file[PATH_MAX + 4];
	const char *shown;
	lt_dlhandle h;
	const lt_dlinfo *info;
	int ret;

	memset(out, 0, sizeof(*out));
	if (strchr(name, '/') || name[0] == '.') {
		snprintf(why, why_len, "'%s' is not a plugin name", name);
		return -EINVAL;
	}
	if ((ret = find_plugin(name, base, sizeof(base), why, why_len)) < 0 ||
	    (ret = check_candidate(base, file, sizeof(file), why, why_len)) < 0 ||
	    (ret = open_plugin(base, file, &h, why, why_len)) < 0)
		return ret;
	info = lt_dlgetinfo(h);
	shown = info && info->filename ? info->filename : base;
	desc = lt_dlsym(h, TRACERIG_PLUGIN_SYMBOL);
	if (!desc) {
		snprintf(why, why_len, "%s does not export '%s': not a tracerig plugin", shown,
			 TRACERIG_PLUGIN_SYMBOL);
		ret = -ENOEXEC;
	} else {
		ret = check_descriptor(desc, name, shown, why, why_len);
	}
	if (ret == 0) {
		out->plugin = desc;
		out->handle = h;
		out->file = strdup(shown);
		if (!out->file) {
			memset(out, 0, sizeof(*out));
			ret = -ENOMEM;
		}
	}
	if (ret < 0)
		lt_dlclose(h);
	return ret;
}

void tr_loader_unload(struct tr_loaded *l)
{
	/* Leaving plugins mapped under ASan keeps leak reports symbolized. */
	if (l->handle && !getenv("TRACERIG_KEEP_PLUGINS_LOADED"))
		lt_dlclose(l->handle);
	free(l->file);
	memset(l, 0, sizeof(*l));
}

static int has_name(char **names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

static void collect(const char *dir, int nested, char ***names, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char name[256], base[PATH_MAX];
		const char *dot;

		if (de->d_name[0] == '.')
			continue;
		if (nested) {
			snprintf(name, sizeof(name), "%s", de->d_name);
		} else {
			dot = strrchr(de->d_name, '.');
			if (!dot || (strcmp(dot, ".la") != 0 && strcmp(dot, ".so") != 0))
				continue;
			snprintf(name, sizeof(name), "%.*s", (int)(dot - de->d_name), de->d_name);
		}
		if (has_name(*names, *n, name) || !find_candidate(dir, name, base, sizeof(base)))
			continue;
		char **grown = realloc(*names, (*n + 1) * sizeof(*grown));
		if (!grown)
			break;
		*names = grown;
		if (((*names)[*n] = strdup(name)))
			(*n)++;
	}
	closedir(d);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t tr_loader_list(char ***names)
{
	size_t n = 0;

	*names = NULL;
	for (size_t i = 0; i < n_search_dirs; i++) {
		collect(search_dirs[i], 0, names, &n);
		collect(search_dirs[i], 1, names, &n);
	}
	if (n)
		qsort(*names, n, sizeof(**names), by_name);
	return n;
}
