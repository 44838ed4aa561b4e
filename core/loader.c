#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <ltdl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"
#include "log.h"

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

int tr_loader_load(const char *name, struct tr_loaded *out, char *why, size_t why_len)
{
	const struct tracerig_plugin *desc;
	char base[PATH_MAX];
	lt_dlhandle h = NULL;
	const lt_dlinfo *info;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (strchr(name, '/') || name[0] == '.') {
		snprintf(why, why_len, "'%s' is not a plugin name", name);
		return -EINVAL;
	}
	for (i = 0; i < n_search_dirs; i++)
		if (find_candidate(search_dirs[i], name, base, sizeof(base)))
			break;
	if (i == n_search_dirs) {
		snprintf(why, why_len, "plugin '%s' is not installed (searched", name);
		for (size_t j = 0; j < n_search_dirs; j++) {
			size_t used = strlen(why);

			snprintf(why + used, why_len - used, "%s%s", j ? ":" : " ", search_dirs[j]);
		}
		if (strlen(why) + 2 < why_len)
			strcat(why, ")");
		return -ENOENT;
	}
	h = lt_dlopenext(base);
	if (!h) {
		snprintf(why, why_len, "cannot load %s: %s (a library it needs is missing or "
			 "it was built for another system)", base, lt_dlerror());
		return -ELIBBAD;
	}
	info = lt_dlgetinfo(h);
	desc = lt_dlsym(h, TRACERIG_PLUGIN_SYMBOL);
	if (!desc) {
		snprintf(why, why_len, "%s does not export '%s': not a tracerig plugin",
			 info && info->filename ? info->filename : base, TRACERIG_PLUGIN_SYMBOL);
		lt_dlclose(h);
		return -ENOEXEC;
	}
	if (desc->abi_version != TRACERIG_ABI_VERSION) {
		snprintf(why, why_len, "%s was built for plugin ABI %u but this tracerig has ABI %u "
			 "(rebuild the plugin against this tracerig's header)",
			 info && info->filename ? info->filename : base, desc->abi_version,
			 TRACERIG_ABI_VERSION);
		lt_dlclose(h);
		return -EPROTO;
	}
	if (desc->name && strcmp(desc->name, name) != 0) {
		snprintf(why, why_len, "%s is plugin '%s', not '%s' (a plugin's file must be "
			 "named after it)", info && info->filename ? info->filename : base,
			 desc->name, name);
		lt_dlclose(h);
		return -ENOEXEC;
	}
	if (!desc->name || !desc->init || !desc->flush ||
	    (desc->kind != TRACERIG_PLUGIN_SOURCE && desc->kind != TRACERIG_PLUGIN_PACKAGER) ||
	    (desc->kind == TRACERIG_PLUGIN_SOURCE && (!desc->start || !desc->stop))) {
		snprintf(why, why_len, "%s has an incomplete descriptor (name '%s', kind %d, "
			 "missing vtable entries)", info && info->filename ? info->filename : base,
			 desc->name ? desc->name : "(none)", (int)desc->kind);
		lt_dlclose(h);
		return -ENOEXEC;
	}
	out->plugin = desc;
	out->handle = h;
	out->file = strdup(info && info->filename ? info->filename : base);
	if (!out->file) {
		lt_dlclose(h);
		memset(out, 0, sizeof(*out));
		return -ENOMEM;
	}
	return 0;
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
