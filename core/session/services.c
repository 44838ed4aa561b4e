#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/archive/staging.h"
#include "core/archive/stream.h"
#include "core/log.h"
#include "core/symbols/symbolizer.h"
#include "core/views/stacks.h"
#include "core/views/wall.h"
#include "ctx.h"
#include "flight.h"
#include "keys.h"
#include "core/archive/output.h"
#include "lib/closest.h"
#include "lib/sanitize.h"
#include "mode.h"
#include "pids.h"
#include "services.h"
#include "session.h"
#include "watchdog.h"

#define SESSION_BIND(field) TRACERIG_BIND(struct tr_settings, field)
/* One key per paragraph, as the reference lists them. */
/* clang-format off */
const struct tracerig_key tr_session_keys[] = {
	{ .name = "name", .type = TRACERIG_KEY_STRING, .default_value = "tracerig",
	  SESSION_BIND(name),
	  .description = "Name of the collection; the archive is <name>.trace.zip unless output is set." },
	{ .name = "description", .type = TRACERIG_KEY_STRING,
	  SESSION_BIND(description),
	  .description = "Free text recorded in the manifest." },
	{ .name = "duration", .type = TRACERIG_KEY_DURATION, .default_value = "10s",
	  .max = 7LL * 24 * 3600 * 1000,
	  SESSION_BIND(duration_ms),
	  .description = "How long to collect; 0 = until Ctrl-C (or the launched command exits)." },
	{ .name = "output", .type = TRACERIG_KEY_STRING,
	  SESSION_BIND(output),
	  .description = "Archive path; default <name>.trace.zip in the current directory." },
	{ .name = "required", .type = TRACERIG_KEY_LIST, .default_value = "",
	  SESSION_BIND(required),
	  .description = "Backends whose failure aborts the run; others are optional (logged, skipped, noted in the manifest)." },
	{ .name = "packager", .type = TRACERIG_KEY_STRING, .default_value = "zip",
	  SESSION_BIND(packager),
	  .description = "Packaging plugin that writes the archive." },
	{ .name = "cgroup", .type = TRACERIG_KEY_STRING,
	  SESSION_BIND(cgroup),
	  .description = "Trace only this cgroup (a directory under /sys/fs/cgroup): how a whole container is traced from the host." },
	{ .name = "pprof", .type = TRACERIG_KEY_BOOL, .default_value = "yes",
	  SESSION_BIND(pprof),
	  .description = "Write each stack view as a pprof profile too (cpu.pb.gz, offcpu.pb.gz, wall.pb.gz), with mappings and build ids, for continuous-profiling stores and `go tool pprof`." },
	{ .name = "stream", .type = TRACERIG_KEY_BOOL, .default_value = "yes",
	  SESSION_BIND(stream),
	  .description = "Compress the entries that sources say only grow (perf.data, perf.data.txt) while collecting, on a low-priority thread, so that packaging at the end compresses only what was written last, and free the staged bytes already compressed that the source will not read again once the kernel wrote them back (the staging then holds the archive so far and about the last half minute of the recording, not the whole recording; not where tracerig lacks CAP_SYS_NICE, logged); no: compress everything when packaging." },
	{ .name = "mode", .type = TRACERIG_KEY_ENUM, .default_value = "record",
	  .choices = "record,flight",
	  SESSION_BIND(mode),
	  .description = "record: collect for duration (or until stopped) and write one archive. flight: a flight recorder: collect until stopped keeping only the last window, and write <name>-<UTC time>.trace.zip of that window into the output directory on each trigger (SIGUSR1, `tracerig snapshot`, trigger_cpu, trigger_crash) and when stopped; duration applies only when given with -d. Only backends with flight support (perf_events, mapharvest, lttng) take part: others fail the session when required, else are left out with a warning. See docs/flight.md." },
	{ .name = "window", .type = TRACERIG_KEY_DURATION, .default_value = "30s",
	  .min = 1000, .max = 24LL * 3600 * 1000,
	  SESSION_BIND(window_ms),
	  .description = "mode = flight: how much of the recent past each snapshot holds; sources keep about this much on disk (perf_events: at most window + window/4 of recording)." },
	{ .name = "keep", .type = TRACERIG_KEY_INT, .default_value = "0", .min = 0, .max = 1000000,
	  SESSION_BIND(keep),
	  .description = "mode = flight: how many snapshot archives of this name to keep in the output directory; the oldest go first (those of earlier runs too). Only regular files of tracerig's own user count and go: another user's file of the same name in a shared directory is never deleted. 0 keeps all." },
	{ .name = "trigger_cpu", .type = TRACERIG_KEY_STRING,
	  SESSION_BIND(trigger_cpu),
	  .description = "mode = flight: a snapshot when CPU use stays at or above this share for trigger_for, e.g. 80% (of one CPU for traced processes or the cgroup, as top shows a process; of all CPUs for the whole machine). Fires once per spike: again only after use fell below. Unset: no CPU trigger." },
	{ .name = "trigger_for", .type = TRACERIG_KEY_DURATION, .default_value = "5s",
	  .min = 0, .max = 24LL * 3600 * 1000,
	  SESSION_BIND(trigger_for_ms),
	  .description = "mode = flight: how long CPU use must stay at or above trigger_cpu (measured every 0.5 s)." },
	{ .name = "trigger_crash", .type = TRACERIG_KEY_BOOL, .default_value = "yes",
	  SESSION_BIND(trigger_crash),
	  .description = "mode = flight: a snapshot when a traced process (any process, system-wide) dies on a crash signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSYS, SIGTRAP, SIGQUIT, SIGXCPU, SIGXFSZ); collection goes on. A launched command that crashes ends the session: its final snapshot says so." },
	{ .name = "keep_staging", .type = TRACERIG_KEY_BOOL, .default_value = "no",
	  SESSION_BIND(keep_staging),
	  .description = "Keep the staging directory after a successful packaging (for debugging); its files are then kept whole while collecting too (stream frees nothing)." },
	{ .name = "start_timeout", .type = TRACERIG_KEY_DURATION, .default_value = "60s",
	  .min = 1, .max = 24LL * 3600 * 1000,
	  SESSION_BIND(start_timeout_ms),
	  .description = "How long a backend may take to initialise and to start before it is abandoned as hung." },
	{ .name = "stop_timeout", .type = TRACERIG_KEY_DURATION, .default_value = "30s",
	  .min = 1, .max = 24LL * 3600 * 1000,
	  SESSION_BIND(stop_timeout_ms),
	  .description = "How long a backend may take to stop before it is abandoned as hung (the others are still packaged)." },
	{ .name = "flush_timeout", .type = TRACERIG_KEY_DURATION, .default_value = "10m",
	  .min = 1, .max = 24LL * 3600 * 1000,
	  SESSION_BIND(flush_timeout_ms),
	  .description = "How long a backend, or the packager, may take to write its entries before it is abandoned as hung." },
	{ .name = "open_timeout", .type = TRACERIG_KEY_DURATION, .default_value = "5s",
	  .min = 100, .max = 3600LL * 1000,
	  SESSION_BIND(open_timeout_ms),
	  .description = "How long opening (and, on FUSE or a network file system, copying) one file of a traced process may take, or removing a map it left behind. A file system that does not answer in time (a hung FUSE server, an unreachable NFS server) is given up for the session: the frames of its files stay unnamed, its maps stay where they are, and collection goes on. A TMPDIR on FUSE or a network file system is never searched for a .NET diagnostic socket." },
	{ .name = NULL },
};
/* clang-format on */
#undef SESSION_BIND

const char *tr_config_value(const struct tr_section *section, const struct tracerig_key *keys,
			    const char *key)
{
	const struct tr_entry *e = tr_section_entry(section, key);
	const struct tracerig_key *k;

	if (e)
		return e->value;
	k = tr_key_find(keys, key);
	return k ? k->default_value : NULL;
}

long long tr_config_number(const struct tr_section *section, const struct tracerig_key *keys,
			   const char *key)
{
	const struct tr_entry *e = tr_section_entry(section, key);
	const struct tracerig_key *k = tr_key_find(keys, key);
	char err[256];
	long long num = 0;

	if (e)
		return e->num;
	if (k && k->default_value && tr_key_parse(k, k->default_value, &num, err, sizeof(err)) < 0)
		num = 0;
	return num;
}

/* ---- the services table ---- */

/* A plugin's warning or error, kept for the manifest (the first few, each
 * cut at WARNING_MAX bytes). */
#define WARNING_MAX 1024
static void keep_warning(struct tracerig_ctx *ctx, const char *fmt, va_list ap)
{
	char *text;

	pthread_mutex_lock(&ctx->lock);
	if (ctx->n_warnings < TR_CTX_MAX_WARNINGS && (text = malloc(WARNING_MAX))) {
		vsnprintf(text, WARNING_MAX, fmt, ap);
		/* A cut may split a character; quoted names may hold anything. */
		tr_sanitize_text(text, WARNING_MAX, text);
		ctx->warnings[ctx->n_warnings++] = text;
	}
	pthread_mutex_unlock(&ctx->lock);
}

/* An error logged during a call is held as the call's reason (ctx.h):
 * 1 when it was. */
static int held_as_reason(struct tracerig_ctx *ctx, const char *fmt, va_list ap)
{
	char text[1024];

	vsnprintf(text, sizeof(text), fmt, ap);
	tr_sanitize_text(text, sizeof(text), text);
	return tr_ctx_hold_error(ctx, text);
}

static void svc_log(struct tracerig_ctx *ctx, enum tracerig_log_level level, const char *fmt, ...)
{
	va_list ap, copy;
	int held = 0;

	va_start(ap, fmt);
	if (ctx && level <= TRACERIG_LOG_WARN) {
		va_copy(copy, ap);
		keep_warning(ctx, fmt, copy);
		va_end(copy);
	}
	if (ctx && ctx->plugin && level == TRACERIG_LOG_ERROR) {
		va_copy(copy, ap);
		held = held_as_reason(ctx, fmt, copy);
		va_end(copy);
	}
	if (!held)
		tr_logv(level, ctx && ctx->plugin ? ctx->plugin->name : NULL, fmt, ap);
	va_end(ap);
}

/* A LIST key's items, split once per session and kept until the ctx goes:
 * config_bind may be called again (check, then init) and the plugin keeps
 * the pointers. */
static int bound_list(struct tracerig_ctx *ctx, size_t index, struct tracerig_list *out)
{
	const struct tracerig_key *keys = ctx->plugin->keys;
	int ret = 0;

	pthread_mutex_lock(&ctx->lock);
	if (!ctx->lists) {
		size_t n = 0;

		while (keys[n].name)
			n++;
		ctx->lists = calloc(n, sizeof(*ctx->lists));
		ctx->lists_split = calloc(n, 1);
		ctx->n_lists = n;
		if (!ctx->lists || !ctx->lists_split) {
			free(ctx->lists);
			free(ctx->lists_split);
			ctx->lists = NULL;
			ctx->lists_split = NULL;
			ctx->n_lists = 0;
			ret = -ENOMEM;
		}
	}
	if (ret == 0 && !ctx->lists_split[index]) {
		ret = tr_key_split(tr_config_value(ctx->section, keys, keys[index].name),
				   &ctx->lists[index]);
		ctx->lists_split[index] = ret == 0;
	}
	if (ret == 0)
		*out = ctx->lists[index];
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/* The values of `keys` in `section` (or their defaults) into the fields
 * their TRACERIG_BIND names in dst; a LIST's items from list_of, which
 * owns them. */
static int bind_keys(const struct tr_section *section, const struct tracerig_key *keys, void *dst,
		     int (*list_of)(void *arg, size_t index, struct tracerig_list *out), void *arg)
{
	for (size_t i = 0; keys && keys[i].name; i++) {
		const struct tracerig_key *k = &keys[i];
		char *field = (char *)dst + k->bind_offset;
		const char *text;
		struct tracerig_list list = { 0 };
		long long num;
		int flag, ret;

		if (!k->bind_size)
			continue;
		switch (k->type) {
		case TRACERIG_KEY_STRING:
			text = tr_config_value(section, keys, k->name);
			memcpy(field, &text, sizeof(text));
			break;
		case TRACERIG_KEY_INT:
		case TRACERIG_KEY_SIZE:
		case TRACERIG_KEY_DURATION:
			num = tr_config_number(section, keys, k->name);
			if (k->bind_size == sizeof(int)) {
				/* The loader let an int through only for a range within one. */
				flag = (int)num;
				memcpy(field, &flag, sizeof(flag));
			} else {
				memcpy(field, &num, sizeof(num));
			}
			break;
		case TRACERIG_KEY_BOOL:
			flag = tr_config_number(section, keys, k->name) != 0;
			memcpy(field, &flag, sizeof(flag));
			break;
		case TRACERIG_KEY_ENUM:
			flag = tr_key_choice(k->choices, tr_config_value(section, keys, k->name));
			memcpy(field, &flag, sizeof(flag));
			break;
		case TRACERIG_KEY_LIST:
			if ((ret = list_of(arg, i, &list)) < 0)
				return ret;
			memcpy(field, &list, sizeof(list));
			break;
		}
	}
	return 0;
}

static int ctx_list(void *arg, size_t index, struct tracerig_list *out)
{
	return bound_list(arg, index, out);
}

static int svc_config_bind(struct tracerig_ctx *ctx, void *dst)
{
	return bind_keys(ctx->section, ctx->plugin->keys, dst, ctx_list, ctx);
}

/* [tracerig] has one LIST, required: split into the settings' own. */
struct settings_lists {
	const struct tr_section *section;
	struct tr_settings *st;
};

static int settings_list(void *arg, size_t index, struct tracerig_list *out)
{
	const struct settings_lists *sl = arg;
	const char *value =
		tr_config_value(sl->section, tr_session_keys, tr_session_keys[index].name);

	tr_settings_free(sl->st);
	return tr_key_split(value, out);
}

int tr_settings_bind(const struct tr_section *section, struct tr_settings *st)
{
	struct settings_lists sl = { section, st };

	return bind_keys(section, tr_session_keys, st, settings_list, &sl);
}

void tr_settings_free(struct tr_settings *st)
{
	free((void *)st->required.items);
	st->required = (struct tracerig_list){ 0 };
}

int tr_list_contains(const struct tracerig_list *list, const char *name)
{
	for (size_t i = 0; i < list->n; i++)
		if (strcmp(list->items[i], name) == 0)
			return 1;
	return 0;
}

static int svc_config_is_set(struct tracerig_ctx *ctx, const char *key)
{
	return tr_section_entry(ctx->section, key) != NULL;
}

static void svc_config_error(struct tracerig_ctx *ctx, const char *key, const char *fmt, ...)
{
	const struct tr_entry *e = tr_section_entry(ctx->section, key);
	char msg[1024], at[PATH_MAX + 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A name from the profile may hold anything. */
	tr_sanitize_text(msg, sizeof(msg), msg);
	if (e)
		tr_entry_where(e, at, sizeof(at));
	else
		snprintf(at, sizeof(at), "%s", ctx->session->profile_path);
	tr_log(TRACERIG_LOG_ERROR, NULL, "%s: [%s] %s: %s", at, ctx->plugin->name, key, msg);
	__atomic_add_fetch(&ctx->config_errors, 1, __ATOMIC_RELAXED);
}

/* One wrong item of `k`, said with its line. */
static void say_wrong_item(struct tracerig_ctx *ctx, const struct tracerig_key *k,
			   const struct tracerig_list *choices, const char *item, size_t len,
			   char *first, size_t first_len, int wrong)
{
	char word[128], among[512];
	size_t used = 0;
	const char *close;

	snprintf(word, sizeof(word), "%.*s", (int)(len < 100 ? len : 100), item);
	close = tr_closest(word, choices->items, choices->n);
	among[0] = '\0';
	for (size_t i = 0; i < choices->n && used < sizeof(among); i++)
		used += snprintf(among + used, sizeof(among) - used, "%s%s", i ? ", " : "",
				 choices->items[i]);
	svc_config_error(ctx, k->name, "'%s' is not one of: %s%s%s%s", word, among,
			 close ? " (did you mean '" : "", close ? close : "", close ? "'?)" : "");
	if (!wrong && first_len) {
		snprintf(first, first_len, "%s: '%s' is not one of: %s", k->name, word, among);
		tr_sanitize_text(first, first_len, first);
	}
}

int tr_judge_list_choices(struct tracerig_ctx *ctx, char *first, size_t first_len)
{
	int wrong = 0;

	if (first_len)
		first[0] = '\0';
	for (const struct tracerig_key *k = ctx->plugin->keys; k && k->name; k++) {
		struct tracerig_list choices;
		const char *cursor, *item;
		size_t len;

		if (k->type != TRACERIG_KEY_LIST || !k->choices)
			continue;
		cursor = tr_config_value(ctx->section, ctx->plugin->keys, k->name);
		if (!cursor || tr_key_split(k->choices, &choices) < 0)
			continue;
		while (tr_key_next_wrong_item(k, &cursor, &item, &len))
			say_wrong_item(ctx, k, &choices, item, len, first, first_len, wrong++);
		free((void *)choices.items);
	}
	return wrong;
}

static int svc_required(struct tracerig_ctx *ctx)
{
	return ctx->required;
}

static const char *svc_session_string(struct tracerig_ctx *ctx, const char *key)
{
	struct tr_session *s = ctx->session;

	if (strcmp(key, "output") == 0 && tr_output_path(s->output))
		return tr_output_path(s->output);
	return tr_config_value(tr_profile_section(&s->profile, "tracerig"), tr_session_keys, key);
}

static uint64_t svc_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const struct tracerig_targets *svc_targets(struct tracerig_ctx *ctx)
{
	return &ctx->session->targets;
}

static int svc_target_setenv(struct tracerig_ctx *ctx, const char *name, const char *value)
{
	struct tr_session *s = ctx->session;
	size_t len;
	char **grown, *entry;

	if (!ctx->in_init)
		return -EPERM;
	if (!name || !*name || strchr(name, '='))
		return -EINVAL;
	len = strlen(name) + strlen(value) + 2;
	entry = malloc(len);
	if (!entry)
		return -ENOMEM;
	snprintf(entry, len, "%s=%s", name, value);
	grown = realloc(s->command_env, (s->n_command_env + 2) * sizeof(*grown));
	if (!grown) {
		free(entry);
		return -ENOMEM;
	}
	s->command_env = grown;
	s->command_env[s->n_command_env++] = entry;
	s->command_env[s->n_command_env] = NULL;
	return 0;
}

static const char *svc_staging_dir(struct tracerig_ctx *ctx)
{
	return ctx->session->archive.dir;
}

static void svc_pid_observe(struct tracerig_ctx *ctx, pid_t pid)
{
	tr_pids_observe(ctx->session->pids, pid);
}

static size_t svc_pid_list(struct tracerig_ctx *ctx, pid_t *out, size_t max)
{
	return tr_pids_list(ctx->session->pids, out, max);
}

static int svc_pid_subscribe(struct tracerig_ctx *ctx, tracerig_pid_cb cb, void *arg)
{
	return cb ? tr_pids_subscribe(ctx->session->pids, cb, arg) : -EINVAL;
}

static int svc_pid_unsubscribe(struct tracerig_ctx *ctx, tracerig_pid_cb cb, void *arg)
{
	return tr_pids_unsubscribe(ctx->session->pids, cb, arg);
}

static int svc_symbolizer_remember(struct tracerig_ctx *ctx, pid_t pid)
{
	if (!ctx->session->symbolizer)
		return -ENOSYS;
	return tr_symbolizer_remember(ctx->session->symbolizer, pid);
}

static int svc_symbolizer_add_jit_file(struct tracerig_ctx *ctx, pid_t pid, const char *path)
{
	if (!ctx->session->symbolizer)
		return -ENOSYS;
	return tr_symbolizer_add_jit_file(ctx->session->symbolizer, pid, path);
}

static int svc_symbolizer_mmap(struct tracerig_ctx *ctx, const struct tracerig_mapping *m)
{
	if (!ctx->session->symbolizer)
		return -ENOSYS;
	return tr_symbolizer_record_mmap(ctx->session->symbolizer, m);
}

static int svc_symbolizer_exec(struct tracerig_ctx *ctx, pid_t pid)
{
	if (!ctx->session->symbolizer)
		return -ENOSYS;
	return tr_symbolizer_record_exec(ctx->session->symbolizer, pid);
}

static int svc_symbolizer_fork(struct tracerig_ctx *ctx, pid_t parent, pid_t child)
{
	if (!ctx->session->symbolizer)
		return -ENOSYS;
	return tr_symbolizer_record_fork(ctx->session->symbolizer, parent, child);
}

static int svc_kernel_text(struct tracerig_ctx *ctx, uint64_t *text, uint64_t *etext)
{
	*text = *etext = 0;
	if (!ctx->session->symbolizer)
		return -ENOSYS;
	return tr_symbolizer_kernel_text(ctx->session->symbolizer, text, etext);
}

static int svc_symbolizer_exit(struct tracerig_ctx *ctx, pid_t pid)
{
	struct tr_session *s = ctx->session;

	if (!s->symbolizer)
		return -ENOSYS;
	/* Another source names its stacks in flush against the model as
	 * the recording left it: processes gone by then must still be there. */
	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i] != ctx && s->sources[i]->model == TRACERIG_MODEL_WANTED)
			return 0;
	return tr_symbolizer_forget(s->symbolizer, pid);
}

static int svc_symbolizer_object(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr,
				 struct tracerig_object *out)
{
	if (!ctx->session->symbolizer)
		return -ENOSYS;
	return tr_symbolizer_object(ctx->session->symbolizer, pid, addr, out);
}

static int svc_symbolizer_mapping(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
				  struct tracerig_frame_mapping *out)
{
	if (!ctx->session->symbolizer)
		return -ENOSYS;
	return tr_symbolizer_mapping(ctx->session->symbolizer, pid, addr, kernel, out);
}

static int svc_frame_name(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
			  uint64_t time_ns, const char **name, struct tracerig_symbol *sym)
{
	if (!ctx->session->symbolizer) {
		/* The session runs without one (it could not be allocated). */
		*name = "[unknown]";
		if (sym)
			*sym = (struct tracerig_symbol){ NULL, "[unknown]", 0, 0 };
		return -ENOSYS;
	}
	return tr_symbolizer_frame_name_at(ctx->session->symbolizer, pid, addr, kernel, time_ns,
					   name, sym);
}

static int svc_frame_generation(struct tracerig_ctx *ctx, pid_t pid, uint32_t *gen)
{
	/* Without a symbolizer every frame is "[unknown]" for good. */
	if (!ctx->session->symbolizer) {
		*gen = 0;
		return 0;
	}
	return tr_symbolizer_frame_generation(ctx->session->symbolizer, pid, gen);
}

int tr_session_window(const struct tr_session *s, struct tracerig_window *out)
{
	if (!s->window_start_ns || s->end_mono_ns < s->window_start_ns)
		return -EAGAIN;
	out->start_ns = s->window_start_ns;
	out->end_ns = s->end_mono_ns;
	/* Both clocks were read together when the session started. */
	out->start_real_ns = (int64_t)(s->window_start_ns + (s->start_real_ns - s->start_mono_ns));
	return 0;
}

/* The session's own archive, or a flight snapshot's staging area, which
 * covers its own [from, to] (core/session/flight.c knows it). */
static int svc_archive_window(struct tracerig_ctx *ctx, struct tracerig_archive *ar,
			      struct tracerig_window *out)
{
	if (ar != &ctx->session->archive)
		return tr_flight_archive_window(ctx->session->flight, ar, out);
	return tr_session_window(ctx->session, out);
}

static int svc_archive_append_only(struct tracerig_ctx *ctx, const char *name, uint64_t from)
{
	if (!ctx->session->settings.stream || !ctx->session->mode->streams)
		return -ENOTSUP;
	if (!name || !tr_entry_name_ok(name))
		return -EINVAL;
	return tr_stream_follow(ctx->session->stream, ctx->session->archive.dir, name, from);
}

static int svc_archive_release(struct tracerig_ctx *ctx, const char *name, uint64_t below)
{
	if (!name || !tr_entry_name_ok(name))
		return -EINVAL;
	return tr_stream_release(ctx->session->stream, ctx->session->archive.dir, name, below);
}

static int svc_archive_stream_level(struct tracerig_ctx *ctx, int level)
{
	if (ctx->plugin->kind != TRACERIG_PLUGIN_PACKAGER)
		return -EPERM;
	return tr_stream_set_level(ctx->session->stream, level);
}

/* Only the session's own archive was followed (not a flight snapshot's,
 * nor anything in the watchdog, which forked before the thread began). */
static int svc_archive_streamed(struct tracerig_ctx *ctx, struct tracerig_archive *ar,
				const char *name, struct tracerig_streamed *out)
{
	if (ctx->plugin->kind != TRACERIG_PLUGIN_PACKAGER || !name || !out)
		return -EINVAL;
	return tr_stream_result(ctx->session->stream, ar->dir, name, out);
}

static int svc_symbolizer_model(struct tracerig_ctx *ctx, enum tracerig_model how)
{
	if (!ctx->in_init)
		return -EPERM;
	if (how != TRACERIG_MODEL_WANTED && how != TRACERIG_MODEL_RECORDED)
		return -EINVAL;
	ctx->model = how;
	return 0;
}

static void svc_counter_set(struct tracerig_ctx *ctx, const char *name, uint64_t value)
{
	struct tr_counter *grown;

	pthread_mutex_lock(&ctx->lock);
	for (size_t i = 0; i < ctx->n_counters; i++) {
		if (strcmp(ctx->counters[i].name, name) == 0) {
			ctx->counters[i].value = value;
			pthread_mutex_unlock(&ctx->lock);
			return;
		}
	}
	grown = realloc(ctx->counters, (ctx->n_counters + 1) * sizeof(*grown));
	if (grown) {
		ctx->counters = grown;
		ctx->counters[ctx->n_counters].name = strdup(name);
		ctx->counters[ctx->n_counters].value = value;
		if (ctx->counters[ctx->n_counters].name)
			ctx->n_counters++;
	}
	pthread_mutex_unlock(&ctx->lock);
}

static void svc_progress_set(struct tracerig_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&ctx->lock);
	va_start(ap, fmt);
	vsnprintf(ctx->progress, sizeof(ctx->progress), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&ctx->lock);
}

static const char *svc_archive_dir(struct tracerig_archive *ar)
{
	return ar->dir;
}

static int svc_archive_create(struct tracerig_archive *ar, const char *name)
{
	return tr_staging_create_entry(ar, name);
}

static FILE *svc_archive_fopen(struct tracerig_archive *ar, const char *name)
{
	return tr_staging_fopen_entry(ar, name);
}

/* A stack sink's view, for the wall-clock view of the archive being
 * written, dated by the session's window. */
static int offer_to_wall(struct tracerig_ctx *ctx, struct tr_wall_view *v)
{
	struct tracerig_window w;

	return tr_wall_take(ctx->session->views, ctx->plugin->name, v,
			    tr_session_window(ctx->session, &w) == 0 ? &w : NULL);
}

static const char *svc_process_cgroup(struct tracerig_ctx *ctx, pid_t pid)
{
	return tr_pids_cgroup(ctx->session->pids, pid);
}

static int svc_pprof_wanted(struct tracerig_ctx *ctx)
{
	return ctx->session->settings.pprof;
}

static int svc_pprof_entry(struct tracerig_ctx *ctx, const char *name, uint64_t samples,
			   uint64_t total)
{
	struct tr_pprof_entry *grown;
	char *copy;

	if (!name || !*name)
		return -EINVAL;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	pthread_mutex_lock(&ctx->lock);
	grown = realloc(ctx->pprof, (ctx->n_pprof + 1) * sizeof(*grown));
	if (grown) {
		ctx->pprof = grown;
		ctx->pprof[ctx->n_pprof++] = (struct tr_pprof_entry){ copy, samples, total };
	}
	pthread_mutex_unlock(&ctx->lock);
	if (!grown) {
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

static struct tracerig_stacks *svc_stacks_open(struct tracerig_ctx *ctx,
					       const struct tracerig_stacks_spec *spec)
{
	return tr_stacks_open(&tr_services, ctx, spec, ctx->session->settings.pprof, offer_to_wall);
}

static int svc_archive_foreach(struct tracerig_archive *ar, tracerig_entry_cb cb, void *arg)
{
	return tr_staging_foreach(ar, cb, arg);
}

static const char *svc_archive_output(struct tracerig_archive *ar)
{
	return ar->output;
}

static int svc_watchdog_cleanup(struct tracerig_ctx *ctx, const char *key, const char *arg)
{
	if (arg && !ctx->plugin->cleanup)
		return -EINVAL;
	return tr_watchdog_cleanup(ctx->plugin->name, key, ctx->plugin->cleanup, arg);
}

static int svc_flight_window(struct tracerig_ctx *ctx, uint64_t *window_ns)
{
	uint64_t window = ctx->session->mode->window_ns(ctx->session);

	if (!window)
		return 0;
	*window_ns = window;
	return 1;
}

static const struct tracerig_run_services run_services = {
	.size = sizeof(struct tracerig_run_services),
	.log = svc_log,
	.config_bind = svc_config_bind,
	.config_is_set = svc_config_is_set,
	.config_error = svc_config_error,
	.required = svc_required,
	.clock_ns = svc_clock_ns,
	.counter_set = svc_counter_set,
	.progress_set = svc_progress_set,
	.flight_window = svc_flight_window,
	.watchdog_cleanup = svc_watchdog_cleanup,
};

static const struct tracerig_process_services process_services = {
	.size = sizeof(struct tracerig_process_services),
	.targets = svc_targets,
	.target_setenv = svc_target_setenv,
	.pid_observe = svc_pid_observe,
	.pid_list = svc_pid_list,
	.pid_subscribe = svc_pid_subscribe,
	.pid_unsubscribe = svc_pid_unsubscribe,
};

static const struct tracerig_symbol_services symbol_services = {
	.size = sizeof(struct tracerig_symbol_services),
	.frame_name = svc_frame_name,
};

static const struct tracerig_archive_services archive_services = {
	.size = sizeof(struct tracerig_archive_services),
	.staging_dir = svc_staging_dir,
	.create = svc_archive_create,
	.fopen = svc_archive_fopen,
	.foreach = svc_archive_foreach,
	.output = svc_archive_output,
};

static const struct tracerig_internal_services internal_services = {
	.size = sizeof(struct tracerig_internal_services),
	.session_string = svc_session_string,
	.process_cgroup = svc_process_cgroup,
	.symbolizer_remember = svc_symbolizer_remember,
	.symbolizer_add_jit_file = svc_symbolizer_add_jit_file,
	.symbolizer_mmap = svc_symbolizer_mmap,
	.symbolizer_exec = svc_symbolizer_exec,
	.symbolizer_fork = svc_symbolizer_fork,
	.symbolizer_exit = svc_symbolizer_exit,
	.symbolizer_model = svc_symbolizer_model,
	.symbolizer_object = svc_symbolizer_object,
	.symbolizer_mapping = svc_symbolizer_mapping,
	.frame_generation = svc_frame_generation,
	.kernel_text = svc_kernel_text,
	.archive_dir = svc_archive_dir,
	.pprof_wanted = svc_pprof_wanted,
	.pprof_entry = svc_pprof_entry,
	.archive_window = svc_archive_window,
	.archive_append_only = svc_archive_append_only,
	.archive_stream_level = svc_archive_stream_level,
	.archive_streamed = svc_archive_streamed,
	.archive_release = svc_archive_release,
	.stacks_open = svc_stacks_open,
	.stacks_add = tr_stacks_add,
	.stacks_write = tr_stacks_write,
	.stacks_close = tr_stacks_close,
};

const struct tracerig_services tr_services = {
	.abi_version = TRACERIG_ABI_VERSION,
	.size = sizeof(struct tracerig_services),
	.run = &run_services,
	.procs = &process_services,
	.symbols = &symbol_services,
	.archive = &archive_services,
	.internal = &internal_services,
};
