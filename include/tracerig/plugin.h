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
 *     init -> start -> (collection) -> stop -> flush -> fini
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
#define TRACERIG_ABI_VERSION 2

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

/* See symbolizer_model(). */
enum tracerig_model {
	TRACERIG_MODEL_WANTED = 1,
	TRACERIG_MODEL_RECORDED = 2,
};

/* One mapping of a process, as a recording saw it (perf's MMAP2 record). */
struct tracerig_mapping {
	pid_t pid;              /* host PID */
	uint64_t start, len, pgoff;
	const unsigned char *build_id; /* the object's build id, or NULL: then dev/ino */
	size_t build_id_len;
	uint64_t dev, ino;      /* makedev(major, minor) and inode, when no build id */
	const char *path;       /* as the process sees it: "/usr/lib/...", "[vdso]", "//anon" */
};

/* The file behind one executable mapping (see symbolizer_object()). */
struct tracerig_object {
	int fd;                 /* read-only; the caller closes it.  -1 for the
	                         * vDSO (path "[vdso]"): the kernel's image, the
	                         * same as the caller's own when the sizes match */
	uint64_t start, end, pgoff; /* the mapping holding the address asked about */
	const char *path;       /* as the process sees it; lives as long as the session */
};

/* The mapping a frame is in, for outputs that carry it (pprof's Mapping:
 * a store re-symbolizes by build id and file offset); see
 * symbolizer_mapping(). */
struct tracerig_frame_mapping {
	uint64_t start, limit;  /* the mapping's address range [start, limit) */
	uint64_t pgoff;         /* file offset of start */
	const char *path;       /* as the process sees it, "[kernel.kallsyms]",
	                         * "[vdso]", "/tmp/perf-PID.map" for JIT code;
	                         * lives as long as the session */
	char build_id[2 * 20 + 1]; /* the object's in lower-case hex (at most 20
	                         * bytes of it, as perf keeps), "" when unknown */
};

/* When what an archive holds was collected (see archive_window()). */
struct tracerig_window {
	uint64_t start_ns;     /* from (the session clock, clock_ns) */
	uint64_t end_ns;       /* to (the session clock) */
	int64_t start_real_ns; /* start_ns as CLOCK_REALTIME: ns since the epoch */
};

/* What the weights of a folded view measure (see folded_view()). */
enum tracerig_time {
	TRACERIG_TIME_ONCPU = 1,  /* threads running on a CPU (sampled) */
	TRACERIG_TIME_OFFCPU = 2, /* threads switched out: blocked, waiting, preempted */
};

/* Or-ed into archive_stream_level()'s level: the core deflates with
 * Intel's ISA-L (igzip) instead of zlib, at its level 1 for 1..6, 2 for
 * 7..8 and 3 for 9: several times faster, a slightly larger output,
 * the same format (raw deflate, RFC 1951). */
#define TRACERIG_DEFLATE_FAST 0x100

/* What the core deflated of a staged entry while it grew (see
 * archive_streamed()). */
struct tracerig_streamed {
	const char *path;   /* the deflated bytes: a file under the staging
	                     * directory that is never an archive entry */
	uint64_t comp_size; /* its first comp_size bytes are raw deflate
	                     * (RFC 1951) of the entry's bytes [from, to),
	                     * ending byte aligned (a sync flush) with no
	                     * final block: a piece to put between the
	                     * deflated [0, from) and [to, end) */
	uint64_t from, to;
	uint32_t crc;       /* CRC-32 of the entry's bytes [from, to) */
	int level;          /* the deflate level, archive_stream_level()'s
	                     * (with TRACERIG_DEFLATE_FAST when it was) */
	uint64_t dev, ino;  /* the file the core followed: the entry's still? */
};

struct tracerig_ctx;     /* one per loaded plugin: who is calling */
struct tracerig_archive; /* the staging area and, for packagers, the output */

typedef void (*tracerig_pid_cb)(void *arg, pid_t pid);
/* See watchdog_cleanup(). */
typedef void (*tracerig_cleanup_fn)(const char *key, const char *arg, char *said,
				    size_t said_len);
typedef int (*tracerig_entry_cb)(void *arg, const char *name, const char *path, uint64_t size);
/* See snapshot_register(). */
typedef int (*tracerig_snapshot_fn)(void *state, struct tracerig_archive *ar, uint64_t from_ns,
				    uint64_t to_ns);

/* Services the core offers.  Every function is safe to call from any thread
 * of the plugin unless it says otherwise.  Functions returning int return 0
 * or a negative errno. */
struct tracerig_services {
	unsigned abi_version;

	/* Logging: goes to stderr (by verbosity) and to tracerig.log in the
	 * archive, prefixed with "tracerig: <plugin>: ". */
	void (*log)(struct tracerig_ctx *ctx, enum tracerig_log_level level,
		    const char *fmt, ...) TRACERIG_PRINTF(3, 4);

	/* The plugin's validated profile section.  config_bind writes every
	 * bound key of the plugin's table (set, or its default) into `dst`, a
	 * struct the plugin owns; 0 or -ENOMEM.  Call it in check and init.
	 * config_is_set tells a key set in the profile from its default. */
	int (*config_bind)(struct tracerig_ctx *ctx, void *dst);
	int (*config_is_set)(struct tracerig_ctx *ctx, const char *key);
	/* 1 when the profile's [tracerig] required names this plugin: its
	 * failure aborts the run, so what is only a warning for an optional
	 * backend (a missing kernel tracer) may be an error. */
	int (*required)(struct tracerig_ctx *ctx);
	/* The `[tracerig]` section of the profile (name, duration, ...). */
	const char *(*session_string)(struct tracerig_ctx *ctx, const char *key);

	/* The session clock: CLOCK_MONOTONIC in nanoseconds. */
	uint64_t (*clock_ns)(void);

	const struct tracerig_targets *(*targets)(struct tracerig_ctx *ctx);
	/* Adds to the launched command's environment.  Only during init. */
	int (*target_setenv)(struct tracerig_ctx *ctx, const char *name, const char *value);

	/* The staging directory, valid from init to fini: the archive root.
	 * A source that must write while collecting (a tracer's output
	 * directory, files harvested from exiting processes) writes here;
	 * whatever is in it when the packager runs goes into the archive. */
	const char *(*staging_dir)(struct tracerig_ctx *ctx);

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

	/* The shared symbolizer (libelf, kallsyms, perf maps, jitdump), with
	 * per-object caches.  `pid` is a host PID; objects are read through
	 * /proc/PID/root so processes in containers resolve against their own
	 * files.  Returns 0 and fills `out` (name NULL when only the object is
	 * known), or -ENOENT.  Uncached, raw strings: a frame written to an
	 * output takes its name from frame_name() (further down this table). */
	int (*symbolize)(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
			 struct tracerig_symbol *out);
	/* Snapshots the process's mappings now, so it still resolves after it exits. */
	int (*symbolizer_remember)(struct tracerig_ctx *ctx, pid_t pid);
	/* Adds a perf-PID.map or jit-PID.dump file to use for `pid`'s anonymous code. */
	int (*symbolizer_add_jit_file)(struct tracerig_ctx *ctx, pid_t pid, const char *path);

	/* The process model, fed by a recording's side-band records replayed
	 * in time order (what perf's machine/thread model does): an
	 * executable mapping, an exec (the address space starts empty) and a
	 * fork (the child's starts as a copy of the parent's).  From the first
	 * record about a process on, symbolize() resolves its addresses
	 * against the mappings so recorded, as they stand at that point of
	 * the replay, never against /proc/PID/maps read late; so frames of
	 * libraries loaded late and of processes gone by the end resolve.
	 * Objects are matched by build id (or device and inode), using what
	 * was read while the process was alive (symbolizer_remember).  Call
	 * from one thread, interleaved with the symbolize() calls of the
	 * samples in between. */
	int (*symbolizer_mmap)(struct tracerig_ctx *ctx, const struct tracerig_mapping *m);
	int (*symbolizer_exec)(struct tracerig_ctx *ctx, pid_t pid);
	int (*symbolizer_fork)(struct tracerig_ctx *ctx, pid_t parent, pid_t child);

	/* How this source's stacks meet the process model; call during init.
	 * TRACERIG_MODEL_RECORDED: the source records side-band records
	 * itself and replays them with symbolizer_mmap/exec/fork in flush
	 * (perf_events); such sources flush before the others.
	 * TRACERIG_MODEL_WANTED: the source symbolizes user stacks in flush;
	 * unless a source records the side-band, the core records it (a
	 * PERF_COUNT_SW_DUMMY event on every CPU) and replays it after the
	 * sources stop and before they flush. */
	int (*symbolizer_model)(struct tracerig_ctx *ctx, enum tracerig_model how);

	/* The object file of `pid`'s executable mapping that holds `addr`, as
	 * symbolize() would find it at this point (of the replay): for a
	 * source that unwinds stacks with the object's CFI.  Opened as the
	 * symbolizer opens its objects (through the process's root, checked
	 * to be the mapped inode or build id, never following a link).
	 * -ENOENT when no object file is there (anonymous or JIT code, an
	 * unreadable file). */
	int (*symbolizer_object)(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr,
				 struct tracerig_object *out);

	/* Counters shown in the summary and recorded in manifest.json under the
	 * plugin, e.g. "samples", "lost_samples".  The last value set wins. */
	void (*counter_set)(struct tracerig_ctx *ctx, const char *name, uint64_t value);
	/* Short progress text for the live status line ("12034 samples"). */
	void (*progress_set)(struct tracerig_ctx *ctx, const char *fmt, ...) TRACERIG_PRINTF(2, 3);

	/* Staging: entries are files under the staging directory; their path
	 * relative to it is their name in the archive ("perf.data",
	 * "lttngTrace/ust/..."). */
	const char *(*archive_dir)(struct tracerig_archive *ar);
	/* Creates (truncating) an entry, making parent directories; returns an
	 * fd opened O_WRONLY|O_CLOEXEC or a negative errno. */
	int (*archive_create)(struct tracerig_archive *ar, const char *name);
	/* The same entry as a stdio stream for writing (close-on-exec), or
	 * NULL with errno set.  The caller fcloses it; fclose's failure
	 * (ENOSPC, EDQUOT) is the write's. */
	FILE *(*archive_fopen)(struct tracerig_archive *ar, const char *name);
	/* Renders a folded-stack entry ("a;b;c 123" lines) as an SVG flame graph
	 * entry.  `unit` names the weight ("samples", "us"). */
	int (*archive_flamegraph)(struct tracerig_archive *ar, const char *folded_name,
				  const char *svg_name, const char *title, const char *unit);

	/* Packagers only: every staged file (manifest.json and tracerig.log
	 * included) in a stable order, and the path to write the archive to.
	 * The core renames that path to the final name once flush returns 0. */
	int (*archive_foreach)(struct tracerig_archive *ar, tracerig_entry_cb cb, void *arg);
	const char *(*archive_output)(struct tracerig_archive *ar);

	/* Declares a folded-stack entry this source has staged (in flush,
	 * once it is written) as a view of where the traced threads spent
	 * their time: `what` its weights measure and how many nanoseconds
	 * one unit of weight stands for (1000 for microseconds; for samples,
	 * the mean period they were actually taken at).  Its lines must be
	 * rooted "comm-PID;tcomm-TID;" (docs/ARCHITECTURE.md).  After every
	 * source has flushed, the core joins the session's on-CPU and
	 * off-CPU views into wall.folded and wall.svg (microseconds, leaves
	 * marked [on-cpu] / [off-cpu], only processes the session traced), so
	 * no source reads another's files.  0, -EINVAL (a bad name, a zero
	 * unit) or -ENOMEM. */
	int (*folded_view)(struct tracerig_ctx *ctx, const char *folded_name,
			   enum tracerig_time what, uint64_t ns_per_unit);

	/* A cleanup for what would outlive tracerig (a tracer's session, a
	 * daemon the plugin started), run by the core's watchdog, a process
	 * forked from tracerig after the plugins were loaded and before any
	 * init, if the plugin does not get to remove it: tracerig killed
	 * (SIGKILL, the OOM killer), crashed, aborted by a second Ctrl-C, or
	 * this plugin crashed or hung and was never called again.  There
	 * `fn(key, arg, said, said_len)` runs, one cleanup after another in
	 * the reverse order of registration, with this plugin's code but none
	 * of its state: `fn` must be a function of this plugin, and `arg` (a
	 * copy, one line of at most 200 bytes) says all it needs.  `fn` writes
	 * what it did into `said` ("" when nothing), which the core logs.
	 * Registering `key` again replaces it; `arg` NULL removes it, which
	 * the plugin does once it cleaned up itself (in stop or fini).  Call
	 * from init on (and in check).  0, -EINVAL (fn outside the plugin, a
	 * bad key or arg), -ENOTCONN (no watchdog runs). */
	int (*watchdog_cleanup)(struct tracerig_ctx *ctx, const char *key, tracerig_cleanup_fn fn,
				const char *arg);

	/* The frame at `addr` of `pid` (a host PID; ignored when `kernel`)
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
	 * a frame of a folded stack and on a line of text.  When `sym` is not NULL
	 * it gets what symbolize() finds there (dso never NULL, "[unknown]"
	 * when unknown), its strings under the same rule: what perf.data.txt
	 * writes.  The strings live until the session ends.
	 * Cached per (process, address), kernel addresses once for all
	 * processes.  The cache follows the process model: an answer is for
	 * the mappings the process has at this point (of the replay), never
	 * served again once a symbolizer_mmap/exec/fork (or a reread of
	 * /proc/PID/maps) changed them; a frame nothing named is looked up
	 * again after a while (a runtime's perf map grows).
	 * Returns 0 when a symbol names the frame, -ENOENT when none does
	 * ("[object]" or "[unknown]") yet, -ENODATA when none does and none
	 * can within the generation (a process known only from the recording
	 * or gone, with no perf map: nothing the lookup reads may change),
	 * another negative errno when it cannot tell (out of memory): then
	 * *name is "[unknown]". */
	int (*frame_name)(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
			  const char **name, struct tracerig_symbol *sym);

	/* The mapping holding the frame at `addr` of `pid` (a host PID;
	 * ignored when `kernel`), as frame_name() finds it at this point (of
	 * the replay): its range, file offset, path and the object's build
	 * id (from the recording, else read from the object).  Kernel
	 * addresses are one mapping, "[kernel.kallsyms]" (modules' too), with
	 * the running kernel's build id.  0, or -ENOENT when no mapping holds
	 * the address (JIT code of a process gone, nothing known). */
	int (*symbolizer_mapping)(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
				  struct tracerig_frame_mapping *out);
	/* 1 when the profile wants pprof profiles in the archive (`[tracerig]
	 * pprof`, on by default): a source that has stacks writes its view as
	 * NAME.pb.gz beside its folded file.  The core's wall.pb.gz takes a
	 * folded_view()'s samples from that profile (its first column whose
	 * unit is nanoseconds, else its first at the view's ns_per_unit),
	 * so it must hold the same samples as NAME.folded. */
	int (*pprof_wanted)(struct tracerig_ctx *ctx);
	/* Declares a pprof entry this source staged (in flush, once written),
	 * for the manifest: how many samples it holds (pprof Sample messages:
	 * distinct stacks and labels) and the sum of its first value column
	 * (samples taken, or nanoseconds).  0, -EINVAL or -ENOMEM. */
	int (*pprof_entry)(struct tracerig_ctx *ctx, const char *name, uint64_t samples,
			   uint64_t total);
	/* The cgroup `pid` (a host PID) is in, as /proc/PID/cgroup says
	 * ("/system.slice/docker-ab12.scope": what tells containers apart),
	 * read when the process was first observed (pid_observe) or, for one
	 * never observed, now; NULL when unknown (it was gone before).  The
	 * string lives until the session ends. */
	const char *(*process_cgroup)(struct tracerig_ctx *ctx, pid_t pid);

	/* The generation of `pid`'s address space at this point (of the
	 * replay), for a caller that keeps what frame_name() answered rather
	 * than asking it for every frame of every sample: frame_name()'s
	 * answer for (pid, addr) holds as long as the generation stays the
	 * same.  The core bumps it whenever what the process's addresses
	 * resolve to may have changed (symbolizer_mmap/exec/fork, a reread of
	 * /proc/PID/maps that found other mappings, new JIT symbols), which
	 * frame_name() itself may do while it looks a frame up: read it again
	 * after asking.  Kernel frames have no generation: their answer holds
	 * for the session.  A frame nothing named (-ENOENT) is not final even
	 * within a generation (frame_name() looks it up again after a while):
	 * ask again for those; -ENODATA is final as a name is.  0 and *gen
	 * filled, or -ENOMEM. */
	int (*frame_generation)(struct tracerig_ctx *ctx, pid_t pid, uint32_t *gen);

	/* Flight mode (`[tracerig] mode = flight`, docs/flight.md): collection
	 * runs until stopped, keeping only the last `window`, and each
	 * trigger (SIGUSR1, `tracerig snapshot`, the stop) writes an archive
	 * of that window while collection goes on.  1 with *window_ns set in
	 * flight mode, 0 in record mode.  From check and init on. */
	int (*flight_window)(struct tracerig_ctx *ctx, uint64_t *window_ns);
	/* How a source takes part in flight mode.  On each trigger the core
	 * calls fn(state, ar, from_ns, to_ns) on a thread of its own, one
	 * source after the other, while the source collects (its reader
	 * threads go on: fn shares their state under the source's own
	 * locks), and once more after stop for the final snapshot.  fn
	 * writes the entries of [from_ns, to_ns] (CLOCK_MONOTONIC, at most
	 * the window) into `ar`, a fresh staging area, as flush does, and
	 * returns 0 or a negative errno; the core then has the packager turn
	 * `ar` into <name>-<UTC time>.trace.zip.  flush is not called in
	 * flight mode.  Register in check (state is not used there: it says
	 * the source has flight support, for --check) and in init.  A source
	 * that registers nothing has no flight support: in flight mode the
	 * session refuses it when required and leaves it out otherwise.
	 * 0, -EINVAL (fn NULL) or -ENOMEM. */
	int (*snapshot_register)(struct tracerig_ctx *ctx, tracerig_snapshot_fn fn, void *state);

	/* The time the entries staged in `ar` cover, for outputs that say
	 * when they were taken (pprof's time_nanos and duration_nanos): for
	 * the session's archive, its window as manifest.json records it
	 * (every source started, to the stop); for a flight snapshot's, the
	 * range the snapshot covers.  0 and *out filled; -EAGAIN
	 * while the session still collects (no end yet), -ENOENT for an
	 * archive whose window the core does not know. */
	int (*archive_window)(struct tracerig_ctx *ctx, struct tracerig_archive *ar,
			      struct tracerig_window *out);

	/* Entries compressed while they grow, so that packaging at the end
	 * has only what was written last to compress (docs/ARCHITECTURE.md,
	 * "Streaming").  A source declares, once the bytes before `from`
	 * are written, that staged entry `name` (of staging_dir()) only
	 * grows from now on: bytes at and after `from` are never rewritten
	 * once written, and the file is never truncated; bytes before
	 * `from` (a header) may still change.  The core then deflates what
	 * is appended, on a thread of its own at low priority, into a file
	 * under the staging directory that is never an archive entry
	 * (at nice 19 while collecting; once collection ended at nice 0,
	 * beside a flush that writes such an entry).  A source that breaks
	 * the promise gets a wrong archive entry: only declare what is
	 * appended with write(2) at the end.  Record mode only (not a
	 * flight snapshot's area), from start to the end of flush (perf.data
	 * at start, perf.data.txt as flush creates it).  0, -ENOTSUP
	 * (the packager does not take precompressed entries, flight mode, or
	 * `[tracerig] stream = no`: nothing to do), -EINVAL, -EEXIST, or the
	 * errno of opening the file. */
	int (*archive_append_only)(struct tracerig_ctx *ctx, const char *name, uint64_t from);
	/* Packagers, in init: the deflate level (1..9) they compress with,
	 * and that they ask archive_streamed() for each entry; 0 (the
	 * default) leaves streaming off.  TRACERIG_DEFLATE_FAST or-ed into
	 * it asks for ISA-L's encoder (see there).  0, -EINVAL, or
	 * -ENOTSUP (TRACERIG_DEFLATE_FAST: the core was built without
	 * ISA-L). */
	int (*archive_stream_level)(struct tracerig_ctx *ctx, int level);
	/* Packagers, in flush: what the core deflated of staged entry `name`
	 * of `ar` while it grew (its thread has stopped).  The packager
	 * deflates [0, from) ending with a sync flush, appends the first
	 * comp_size bytes of `path`, then deflates [to, end) to the final
	 * block; the entry's CRC-32 is crc32_combine() of the three.  It
	 * checks first that the staged file is still dev/ino and at least
	 * `to` long.  0 and *out filled (valid during flush); -ENOENT
	 * (nothing streamed for it: compress it whole), -EIO (the stream
	 * broke, a write error, before any of the staged file was freed:
	 * compress it whole; once some was, what was deflated up to the
	 * break is answered instead). */
	int (*archive_streamed)(struct tracerig_ctx *ctx, struct tracerig_archive *ar,
				const char *name, struct tracerig_streamed *out);
	/* Sources, for an entry declared with archive_append_only(): they
	 * will not read its bytes below `below` again (UINT64_MAX: none of
	 * it, e.g. a text only written).  The core may then free the disk
	 * space of what it has deflated below that (the file keeps its size;
	 * a freed range reads as zeros), so a long session's staging holds
	 * what is not deflated yet rather than everything; the archive gets
	 * the deflated pieces.  Nothing is freed with `keep_staging`.  0,
	 * -ENOENT (not followed: streaming off, or not declared), -EINVAL. */
	int (*archive_release)(struct tracerig_ctx *ctx, const char *name, uint64_t below);

	/* A wrong value of `key` (a key of the plugin's table) that the
	 * table could not catch (an event name this kernel lacks), said as
	 * the core says its own, "PROFILE:LINE: [section] key: <message>",
	 * and counted among the profile's errors: a run with any ends before
	 * collecting, with exit status 2, whatever init returns.  Say every
	 * wrong item, not only the first.  From check and init. */
	void (*config_error)(struct tracerig_ctx *ctx, const char *key, const char *fmt, ...)
		TRACERIG_PRINTF(3, 4);

	/* The process model (symbolizer_mmap/exec/fork): `pid`'s process
	 * ended at this point of the replay (its last thread's
	 * PERF_RECORD_EXIT), and this source will ask nothing more about it.
	 * The core drops what it keeps for it (mappings, JIT symbols, frame
	 * names), so that a long session's memory does not grow with every
	 * process it saw; unless another source names its stacks against the
	 * model as the recording leaves it (TRACERIG_MODEL_WANTED), then it
	 * keeps it.  A later record about `pid` (its reuse) starts a new
	 * process.  Call from the replay's thread.  0, or -ENOENT. */
	int (*symbolizer_exit)(struct tracerig_ctx *ctx, pid_t pid);

	/* The running kernel's _text and _etext (what a perf.data's kernel
	 * map spans), from the symbolizer's one read of /proc/kallsyms: the
	 * file costs the kernel tens of milliseconds to format, so a source
	 * that both describes the kernel map and names kernel frames reads it
	 * once.  0; -EACCES when kptr_restrict hides the addresses; -ENOENT
	 * when _text is not listed; -ENOSYS without a symbolizer.  *etext is
	 * 0 when not listed.  Thread-safe. */
	int (*kernel_text)(struct tracerig_ctx *ctx, uint64_t *text, uint64_t *etext);

	/* frame_name() for a frame of a sample taken at `time_ns` (the
	 * session clock, CLOCK_MONOTONIC; 0 when unknown, as frame_name()).
	 * A frame nothing named is looked up again, and the process's perf
	 * map, jitdump and mappings read again, at once when the sample was
	 * taken after they were last read (a runtime logs a method before it
	 * runs it, so a read begun after the sample can name it), besides
	 * after a while as frame_name() does.  frame_name() alone names a
	 * sample converted within that while of code compiled just before it
	 * "[unknown]".  Same returns as frame_name(). */
	int (*frame_name_at)(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
			     uint64_t time_ns, const char **name, struct tracerig_symbol *sym);
};

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

	/* Optional.  Tells `tracerig --check` whether the plugin can work on this
	 * machine with this profile: 0, or a negative errno with `advice`
	 * filled in ("needs CAP_PERFMON: run as root or ..."). */
	int (*check)(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
		     char *advice, size_t advice_len);

	/* Allocates the plugin's state; validates what the key table cannot.
	 * -ENODATA, after a warning saying why: nothing this source records
	 * can come from the session's targets (e.g. no traced process can load
	 * its provider); the core leaves it out as "skipped" and says so,
	 * and fails the run only when it is required. */
	int (*init)(const struct tracerig_services *svc, struct tracerig_ctx *ctx, void **state);
	int (*start)(void *state);
	int (*stop)(void *state);
	/* Sources write their entries; the packager writes archive_output(). */
	int (*flush)(void *state, struct tracerig_archive *ar);
	void (*fini)(void *state);
};

/* The one symbol a plugin exports (see TRACERIG_PLUGIN). */
extern TRACERIG_EXPORT const struct tracerig_plugin tracerig_plugin;

#ifdef __cplusplus
}
#endif

#endif /* TRACERIG_PLUGIN_H */
