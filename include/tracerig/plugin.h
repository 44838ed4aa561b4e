/* tracerig plugin ABI.
 *
 * This header is the whole contract between the tracerig core and a plugin,
 * in-tree or site-specific.  A plugin is a shared object that exports exactly
 * one symbol, `tracerig_plugin`, a `struct tracerig_plugin` descriptor.  The
 * core loads it with libltdl, refuses it unless `abi_version` equals the
 * core's TRACERIG_ABI_VERSION, validates the plugin's profile section against
 * its `keys` table (and binds the values into the plugin's struct, see
 * config_bind) and drives it through the vtable:
 *
 *     validate -> init -> start -> (collection) -> stop -> flush -> fini
 *
 * (validate -> check for `tracerig --check`; snapshot instead of flush in
 * flight mode).  Every plugin's validate runs before any plugin's init.
 *
 * Every call runs on a thread of the core's that belongs to the plugin (its
 * driver), never on the main thread, and one call at a time per plugin.
 * Sources are initialised in profile order; they are started together and
 * stopped together (each on its own driver, so one slow source does not
 * shift the others' window); every source is flushed, in profile order, into
 * the archive staging area, then the packager's flush turns the staging area
 * into the archive.  A plugin that crashes, aborts or overruns the profile's
 * start/stop/flush timeout is never called again, not even fini, and the
 * others go on.  Plugins never talk to each other directly: everything they
 * share goes through the services table.
 *
 * Build an out-of-tree plugin with
 *     cc -shared -fPIC $(pkg-config --cflags tracerig-plugin) -o myplug.so myplug.c
 * and see docs/writing-a-plugin.md.
 */
#ifndef TRACERIG_PLUGIN_H
#define TRACERIG_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change of this header. */
#define TRACERIG_ABI_VERSION 3

/* The one symbol a plugin exports. */
#define TRACERIG_PLUGIN_SYMBOL "tracerig_plugin"

#if defined(__GNUC__)
#define TRACERIG_EXPORT __attribute__((visibility("default")))
#define TRACERIG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TRACERIG_EXPORT
#define TRACERIG_PRINTF(a, b)
#endif

/* Write `TRACERIG_PLUGIN = { ... };` at the end of the plugin's file.  The
 * descriptor is declared below, inside extern "C", so that it has C
 * linkage and is exported from C++ plugins as well (a namespace-scope
 * const would otherwise be internal there). */
#define TRACERIG_PLUGIN const struct tracerig_plugin tracerig_plugin

enum tracerig_plugin_kind {
	TRACERIG_PLUGIN_SOURCE = 1,   /* collects data into the staging area */
	TRACERIG_PLUGIN_PACKAGER = 2, /* turns the staging area into the archive */
};

enum tracerig_log_level {
	TRACERIG_LOG_ERROR = 0,
	TRACERIG_LOG_WARN = 1,
	TRACERIG_LOG_INFO = 2,
	TRACERIG_LOG_DEBUG = 3,
};

/* Types of profile keys.  The core parses and range-checks values before
 * init and binds them into the plugin's struct (see TRACERIG_BIND): a
 * plugin reads them back already validated, never by name.  The comment
 * after each type is the C type of the field a key of that type binds. */
enum tracerig_key_type {
	TRACERIG_KEY_STRING = 1, /* const char *: the value, NULL when unset */
	TRACERIG_KEY_INT,        /* long long (or int when [min, max] fits one): decimal,
	                          * checked against [min, max] when min < max */
	TRACERIG_KEY_BOOL,       /* int, 0 or 1: yes/no, true/false, on/off, 1/0 */
	TRACERIG_KEY_SIZE,       /* like INT: bytes; suffixes K, M, G (powers of 1024) */
	TRACERIG_KEY_DURATION,   /* like INT: milliseconds; suffixes ms, s, m, h
	                          * (bare number = seconds) */
	TRACERIG_KEY_ENUM,       /* int: the index of the value in `choices`, -1 when unset */
	TRACERIG_KEY_LIST,       /* struct tracerig_list: the items, already split */
};

/* A LIST value, split by the one rule for lists: items are separated by
 * commas, white space around an item is not part of it, empty items are
 * skipped ("a, b,,c " is "a", "b", "c").  The strings belong to the core
 * and stay valid until fini. */
struct tracerig_list {
	size_t n;
	const char *const *items;
};

/* One profile key a plugin accepts.  The same table drives validation,
 * "did you mean", `tracerig --list-plugins -v` and the profile reference,
 * and says where each value lands in the plugin's struct.  Write it with
 * designated initializers and end it with an entry whose name is NULL:
 *
 *     { .name = "interval", .type = TRACERIG_KEY_DURATION, .default_value = "1s",
 *       .min = 10, .max = 60000, TRACERIG_BIND(struct my_state, interval_ms),
 *       .description = "How often to sample." },
 */
struct tracerig_key {
	const char *name;
	enum tracerig_key_type type;
	const char *default_value; /* as it would be written in the profile; NULL = unset */
	/* ENUM: the values, comma-separated as lists are.  LIST: when set,
	 * what each item may be; every other item is the profile's error,
	 * said by the core with its line before the plugin's check or init
	 * runs (a plugin need not say it again). */
	const char *choices;
	long long min, max;        /* INT, SIZE, DURATION (ms); ignored unless min < max */
	const char *description;
	/* Where config_bind() writes the value: a field of the plugin's
	 * struct, of the C type its key type names.  bind_size 0 = not
	 * bound (the key is read with config_is_set() only).  The loader
	 * refuses a table whose field sizes do not match the types. */
	size_t bind_offset, bind_size;
};

/* Binds a key to `field` of `type` (inside a designated initializer). */
#define TRACERIG_BIND(type, field) \
	.bind_offset = offsetof(type, field), .bind_size = sizeof(((type *)0)->field)

/* What the session traces.  All PIDs are host PIDs (the core translates). */
struct tracerig_targets {
	int system_wide;        /* neither -p nor a command: the whole machine */
	size_t n_pids;          /* processes from -p */
	const pid_t *pids;
	pid_t command_pid;      /* launched command, 0 if none.  It is held before
	                         * exec(2) until every source has started, so a
	                         * source that counts from exec can attach to it
	                         * in start (perf's enable_on_exec). */
	const char *command;    /* argv[0] of the launched command, or NULL; set
	                         * from check on (its PID only once spawned) */
	const char *cgroup;     /* cgroup directory from the profile, or NULL */
};

/* The result of a symbol lookup.  Strings belong to the symbolizer and stay
 * valid until the session ends. */
struct tracerig_symbol {
	const char *name;    /* demangled function name, NULL when unknown */
	const char *dso;     /* object as the process sees it, "[kernel.kallsyms]",
	                      * "/tmp/perf-PID.map" for JIT code, "[unknown]" */
	uint64_t sym_offset; /* address - start of the symbol */
	uint64_t dso_offset; /* address relative to the object's load base (for perf) */
};

struct tracerig_ctx;     /* one per loaded plugin: who is calling */
struct tracerig_archive; /* the staging area and, for packagers, the output */

typedef void (*tracerig_pid_cb)(void *arg, pid_t pid);
typedef int (*tracerig_entry_cb)(void *arg, const char *name, const char *path, uint64_t size);

/* Services the core offers, in tables by concern.  Every table begins
 * with its size as the core built it, so that a later release can append
 * a service without an ABI break and a plugin can test for it:
 *
 *     if (TRACERIG_HAS(svc->procs, struct tracerig_process_services, newer_one)) ...
 *
 * Every function is safe to call from any thread of the plugin unless it
 * says otherwise.  Functions returning int return 0 or a negative errno. */
#define TRACERIG_HAS(table, type, member) \
	((table)->size >= offsetof(type, member) + sizeof(((type *)0)->member))

/* The run: logging, the plugin's profile section, the clock, what the
 * summary shows, flight mode and cleanups that must outlive tracerig. */
struct tracerig_run_services {
	size_t size;

	/* Goes to stderr (by verbosity) and to tracerig.log in the archive,
	 * prefixed with "tracerig: <plugin>: ".  The first error logged
	 * inside a call that then fails is the failure's reason: the core
	 * prints it once, with the phase ("start failed: <reason>"). */
	void (*log)(struct tracerig_ctx *ctx, enum tracerig_log_level level, const char *fmt, ...)
		TRACERIG_PRINTF(3, 4);

	/* The plugin's validated profile section.  config_bind writes every
	 * bound key of the plugin's table (set, or its default) into `dst`, a
	 * struct the plugin owns; 0 or -ENOMEM.  Call it in validate, check
	 * and init.  config_is_set tells a key set in the profile from its
	 * default. */
	int (*config_bind)(struct tracerig_ctx *ctx, void *dst);
	int (*config_is_set)(struct tracerig_ctx *ctx, const char *key);
	/* A wrong value of `key` (a key of the plugin's table) that the
	 * table could not catch (an event name this kernel lacks), said as
	 * the core says its own, "PROFILE:LINE: [section] key: <message>",
	 * and counted among the profile's errors: a run with any ends before
	 * any plugin's init, with exit status 2.  Say every wrong item, not
	 * only the first.  From validate (where it belongs), check and init. */
	void (*config_error)(struct tracerig_ctx *ctx, const char *key, const char *fmt, ...)
		TRACERIG_PRINTF(3, 4);
	/* 1 when the profile's [tracerig] required names this plugin: its
	 * failure aborts the run, so what is only a warning for an optional
	 * backend (a missing kernel tracer) may be an error. */
	int (*required)(struct tracerig_ctx *ctx);

	/* The session clock: CLOCK_MONOTONIC in nanoseconds. */
	uint64_t (*clock_ns)(void);

	/* Counters shown in the summary and recorded in manifest.json under the
	 * plugin, e.g. "samples", "lost_samples".  The last value set wins. */
	void (*counter_set)(struct tracerig_ctx *ctx, const char *name, uint64_t value);
	/* Short progress text for the live status line ("12034 samples"). */
	void (*progress_set)(struct tracerig_ctx *ctx, const char *fmt, ...) TRACERIG_PRINTF(2, 3);

	/* Flight mode (`[tracerig] mode = flight`, docs/flight.md): collection
	 * runs until stopped, keeping only the last `window`, and each
	 * trigger writes an archive of that window through the descriptor's
	 * `snapshot`.  1 with *window_ns set in flight mode, 0 in record
	 * mode.  From validate on. */
	int (*flight_window)(struct tracerig_ctx *ctx, uint64_t *window_ns);

	/* Registers a cleanup of something that would outlive tracerig (a
	 * tracer's session, a daemon the plugin started): if the plugin
	 * does not get to remove it (tracerig killed by SIGKILL or the OOM
	 * killer, crashed, aborted by a second Ctrl-C, or this plugin crashed
	 * or hung and was never called again), the core's watchdog, a
	 * process forked before any init, calls the descriptor's `cleanup`
	 * with (key, arg): this plugin's code but none of its state, so `arg`
	 * (a copy, one line of at most 200 bytes) says all it needs.
	 * Registering `key` again replaces it; `arg` NULL removes it, which
	 * the plugin does once it cleaned up itself (in stop or fini).  From
	 * check on.  0, -EINVAL (no `cleanup` in the descriptor, a bad key or
	 * arg), -ENOTCONN (no watchdog runs). */
	int (*watchdog_cleanup)(struct tracerig_ctx *ctx, const char *key, const char *arg);
};

/* What the session traces, and which processes the session saw. */
struct tracerig_process_services {
	size_t size;

	const struct tracerig_targets *(*targets)(struct tracerig_ctx *ctx);
	/* Adds to the launched command's environment.  Only during init. */
	int (*target_setenv)(struct tracerig_ctx *ctx, const char *name, const char *value);

	/* Registry of processes some source saw during the session (host PIDs).
	 * Subscribers are called once per new PID, from the observing thread,
	 * possibly while the process is still alive: do little there. */
	void (*pid_observe)(struct tracerig_ctx *ctx, pid_t pid);
	size_t (*pid_list)(struct tracerig_ctx *ctx, pid_t *out, size_t max);
	int (*pid_subscribe)(struct tracerig_ctx *ctx, tracerig_pid_cb cb, void *arg);
	/* Ends the subscription of (cb, arg).  On return cb is not running
	 * and is not called again, so arg may be freed; never call it from
	 * inside cb.  0, or -ENOENT when there was no such subscription. */
	int (*pid_unsubscribe)(struct tracerig_ctx *ctx, tracerig_pid_cb cb, void *arg);
};

/* Naming code addresses: the core's one symbolizer (libelf, kallsyms,
 * perf maps, jitdump), through /proc/PID/root for processes in
 * containers. */
struct tracerig_symbol_services {
	size_t size;

	/* The frame at `addr` of `pid` (a host PID; ignored when `kernel`),
	 * in a sample taken at `time_ns` (the session clock; 0 when unknown),
	 * named as every output writes it, so that one frame has one name in
	 * perf.data.txt, every folded stack and every flame graph:
	 *   "name"          the demangled symbol;
	 *   "[object]"      only the object is known: its file name
	 *                   ("[libfoo.so]", "[perf-42.map]"), or the object as
	 *                   it is when it has brackets ("[vdso]",
	 *                   "[kernel.kallsyms]");
	 *   "[unknown]"     nothing is known (perf's word);
	 * with "_[k]" appended to each for a kernel frame ("schedule_[k]").
	 * The name is under the one sanitize rule of lib/sanitize.h (a ';'
	 * becomes ':', control characters '?'; spaces stay), so it is safe as
	 * a frame of a folded stack and on a line of text.  When `sym` is not
	 * NULL it gets what the symbolizer found there (dso never NULL,
	 * "[unknown]" when unknown), its strings under the same rule: what
	 * perf.data.txt writes.  The strings live until the session ends.
	 * Cached per (process, address), kernel addresses once for all
	 * processes.  A frame nothing named is looked up again (the process's
	 * perf map, jitdump and mappings read again) at once when the sample
	 * is newer than their last read (a runtime logs a method before it
	 * runs it), and after a while in any case (a runtime's perf map
	 * grows).
	 * Returns 0 when a symbol names the frame, -ENOENT when none does
	 * ("[object]" or "[unknown]") yet, -ENODATA when none does and none
	 * can (a process gone, with no perf map), another negative errno
	 * when it cannot tell (out of memory): then *name is "[unknown]". */
	int (*frame_name)(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
			  uint64_t time_ns, const char **name, struct tracerig_symbol *sym);
};

/* The archive: the staging directory whose files become its entries. */
struct tracerig_archive_services {
	size_t size;

	/* The staging directory, valid from init to fini: the archive root.
	 * A source that must write while collecting (a tracer's output
	 * directory, files harvested from exiting processes) writes here;
	 * whatever is in it when the packager runs goes into the archive. */
	const char *(*staging_dir)(struct tracerig_ctx *ctx);
	/* In flush (and snapshot): creates (truncating) entry `name` of `ar`,
	 * its path relative to the archive root ("perf.data",
	 * "lttngTrace/ust/..."), making parent directories; returns an fd
	 * opened O_WRONLY|O_CLOEXEC or a negative errno. */
	int (*create)(struct tracerig_archive *ar, const char *name);
	/* The same entry as a stdio stream for writing (close-on-exec), or
	 * NULL with errno set.  The caller fcloses it; fclose's failure
	 * (ENOSPC, EDQUOT) is the write's. */
	FILE *(*fopen)(struct tracerig_archive *ar, const char *name);
	/* Packagers only: every staged file (manifest.json and tracerig.log
	 * included) in a stable order, and the path to write the archive to.
	 * The core renames that path to the final name once flush returns 0. */
	int (*foreach)(struct tracerig_archive *ar, tracerig_entry_cb cb, void *arg);
	const char *(*output)(struct tracerig_archive *ar);
};

struct tracerig_services {
	unsigned abi_version;
	size_t size; /* of this table: TRACERIG_HAS(svc, struct tracerig_services, x) */
	const struct tracerig_run_services *run;
	const struct tracerig_process_services *procs;
	const struct tracerig_symbol_services *symbols;
	const struct tracerig_archive_services *archive;
	/* The plugins that ship with tracerig only: services whose shape
	 * follows the core's internals (the process model of a recording,
	 * archive streaming, the stack views), declared in a header that is
	 * not installed and may change in any release.  A site plugin never
	 * uses it. */
	const void *internal;
};

/* Capabilities a descriptor declares in `caps`.  The loader refuses a
 * plugin with a bit this tracerig does not know (built for a later one). */
enum tracerig_capability {
	/* Takes part in flight mode: `snapshot` is set.  A source without it
	 * is refused in flight mode when required and left out otherwise. */
	TRACERIG_CAP_FLIGHT = 1u << 0,
};
#define TRACERIG_CAPS_KNOWN (TRACERIG_CAP_FLIGHT)

struct tracerig_plugin {
	/* TRACERIG_ABI_VERSION.  First in every ABI: the loader reads it before
	 * it trusts the rest of a layout it may not know. */
	unsigned abi_version;
	const char *name;              /* profile section name and file name */
	const char *version;
	enum tracerig_plugin_kind kind;
	const char *description;       /* one line */
	const char *package;           /* Debian package that ships it, for hints */
	const struct tracerig_key *keys;
	unsigned caps; /* TRACERIG_CAP_* */
	/* 0 for every plugin but those built with tracerig itself, which set
	 * the version of the private services (`internal`) they were built
	 * against; the loader refuses one from another release. */
	unsigned internal_version;

	/* Optional.  Checks what the key table cannot (an event name this
	 * kernel lacks, a maximum below its minimum), saying every wrong value
	 * with config_error().  Called once per run for every plugin of the
	 * profile, after the table's own checks and before any plugin's check
	 * (tracerig --check) or init: a profile's mistakes are all said at
	 * once, each with its line, and nothing starts.  Only the run services
	 * are meant for it.  0, or a negative errno when it could not check
	 * (out of memory), never for a wrong value. */
	int (*validate)(const struct tracerig_services *svc, struct tracerig_ctx *ctx);

	/* Optional.  Tells `tracerig --check` whether the plugin can work on this
	 * machine with this profile: 0, or a negative errno with `advice`
	 * filled in ("needs CAP_PERFMON: run as root or ..."). */
	int (*check)(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
		     char *advice, size_t advice_len);

	/* Allocates the plugin's state.  -ENODATA, after a warning saying why:
	 * nothing this source records can come from the session's targets
	 * (e.g. no traced process can load its provider); the core leaves it
	 * out as "skipped" and says so, and fails the run only when it is
	 * required. */
	int (*init)(const struct tracerig_services *svc, struct tracerig_ctx *ctx, void **state);
	int (*start)(void *state);
	int (*stop)(void *state);
	/* Sources write their entries; the packager writes archive->output(). */
	int (*flush)(void *state, struct tracerig_archive *ar);
	void (*fini)(void *state);

	/* With TRACERIG_CAP_FLIGHT: on each flight-mode trigger (SIGUSR1,
	 * `tracerig snapshot`, the stop) the core calls snapshot(state, ar,
	 * from_ns, to_ns) on a thread of its own, one source after the other,
	 * while the source collects (its reader threads go on: it shares
	 * their state under the source's own locks), and once more after stop
	 * for the final snapshot.  It writes the entries of [from_ns, to_ns]
	 * (the session clock, at most the window) into `ar`, a fresh staging
	 * area, as flush does, and returns 0 or a negative errno; the packager
	 * then turns `ar` into <name>-<UTC time>.trace.zip.  flush is not
	 * called in flight mode. */
	int (*snapshot)(void *state, struct tracerig_archive *ar, uint64_t from_ns, uint64_t to_ns);

	/* Optional: the watchdog's cleanup of what run->watchdog_cleanup()
	 * registered.  It runs in a process forked from tracerig with none of
	 * the plugin's state, once per registered key, in the reverse order
	 * of registration, and writes what it did into `said` ("" when
	 * nothing), which the core logs. */
	void (*cleanup)(const char *key, const char *arg, char *said, size_t said_len);
};

/* The one symbol a plugin exports (see TRACERIG_PLUGIN). */
extern TRACERIG_EXPORT const struct tracerig_plugin tracerig_plugin;

#ifdef __cplusplus
}
#endif

#endif /* TRACERIG_PLUGIN_H */
