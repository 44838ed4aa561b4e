/* The private services of tracerig's own plugins.
 *
 * Not installed, and not part of the plugin ABI: what these services
 * expose follows the core's internals (the process model a recording
 * replays, archive entries compressed while they grow, the stack views the
 * core joins) and may change in any release.  A plugin built in this tree
 * sets `.internal_version = TRACERIG_INTERNAL_VERSION` in its descriptor,
 * so that the loader refuses a plugin package from another release, and
 * reaches the table through tracerig_internal(svc).  A site plugin has
 * include/tracerig/plugin.h and nothing else.
 */
#ifndef TRACERIG_PRIVATE_EXT_H
#define TRACERIG_PRIVATE_EXT_H

#include "tracerig/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change of this header. */
#define TRACERIG_INTERNAL_VERSION 2

/* See symbolizer_model(). */
enum tracerig_model {
	TRACERIG_MODEL_WANTED = 1,
	TRACERIG_MODEL_RECORDED = 2,
};

/* One mapping of a process, as a recording saw it (perf's MMAP2 record). */
struct tracerig_mapping {
	pid_t pid; /* host PID */
	uint64_t start, len, pgoff;
	const unsigned char *build_id; /* the object's build id, or NULL: then dev/ino */
	size_t build_id_len;
	uint64_t dev, ino; /* makedev(major, minor) and inode, when no build id */
	const char *path;  /* as the process sees it: "/usr/lib/...", "[vdso]", "//anon" */
};

/* The file behind one executable mapping (see symbolizer_object()). */
struct tracerig_object {
	int fd;                     /* read-only; the caller closes it.  -1 for the
	                         * vDSO (path "[vdso]"): the kernel's image, the
	                         * same as the caller's own when the sizes match */
	uint64_t start, end, pgoff; /* the mapping holding the address asked about */
	const char *path;           /* as the process sees it; lives as long as the session */
	pid_t root_pid;             /* whose root its debug files are in: the process's
	                         * own, or 0 (ours) once the process is gone and
	                         * the file was found at the same path in our root,
	                         * the same inode (as the symbolizer reads them) */
};

/* The mapping a frame is in, for outputs that carry it (pprof's Mapping:
 * a store re-symbolizes by build id and file offset); see
 * symbolizer_mapping(). */
struct tracerig_frame_mapping {
	uint64_t start, limit;     /* the mapping's address range [start, limit) */
	uint64_t pgoff;            /* file offset of start */
	const char *path;          /* as the process sees it, "[kernel.kallsyms]",
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

/* What the weights of a stack view measure (see stacks_open()). */
enum tracerig_time {
	TRACERIG_TIME_ONCPU = 1,  /* threads running on a CPU (sampled) */
	TRACERIG_TIME_OFFCPU = 2, /* threads switched out: blocked, waiting, preempted */
};

/* One stack for stacks_add(): frames as addresses, each part innermost
 * first, as the kernel's stack tables and callchains give them. */
struct tracerig_stack {
	pid_t pid, tid;           /* host PIDs */
	const char *comm, *tcomm; /* the process's and the thread's names; NULL: unknown */
	const uint64_t *user;     /* n_user user frames */
	size_t n_user;
	const uint64_t *kernel; /* n_kernel kernel frames */
	size_t n_kernel;
	/* The frames' names as frame_name() answered them for this stack
	 * (kernel ones ending in "_[k]"), for a source that asked already
	 * (for a text of its own); NULL: the sink asks. */
	const char *const *user_names;
	const char *const *kernel_names;
	unsigned flags;   /* TRACERIG_STACK_* */
	uint64_t time_ns; /* when it was taken (frame_name's time_ns), 0: unknown */
	uint64_t count;   /* samples, or intervals, it stands for */
	uint64_t ns;      /* the time they add up to (an event's period: its count) */
};

/* tracerig_stack.flags: a part of the stack the source could not get
 * (its table full, its copy failed) is shown as a frame saying so; a
 * stack the kernel cut at its callchain limit has no outermost frames,
 * and must not pass for one that starts where it was cut. */
#define TRACERIG_STACK_USER_LOST 0x1u
#define TRACERIG_STACK_KERNEL_LOST 0x2u
#define TRACERIG_STACK_CUT 0x4u

/* stacks_open()'s flags. */
/* Offered to the core's wall-clock view, which joins the session's on-CPU
 * and off-CPU views (only processes the session traced) into wall.folded,
 * wall.svg and wall.pb.gz, leaves marked [on-cpu] / [off-cpu]; on-CPU
 * stacks at the spec's ns_per_sample. */
#define TRACERIG_STACKS_WALL 0x1u
/* No NAME.folded nor NAME.svg: only NAME.pb.gz (when pprof is wanted). */
#define TRACERIG_STACKS_NO_FOLDED 0x2u
/* On-CPU: NAME.pb.gz's period is the mean of the stacks' ns per sample
 * (samples taken at a frequency, whose period the kernel moves). */
#define TRACERIG_STACKS_MEAN_PERIOD 0x4u

/* What a source's stacks are written as (see stacks_open()). */
struct tracerig_stacks_spec {
	const char *name;  /* NAME.folded, NAME.svg, NAME.pb.gz */
	const char *title; /* the flame graph's */
	enum tracerig_time what;
	unsigned flags; /* TRACERIG_STACKS_* */
	/* On-CPU: NAME.pb.gz's column beside the samples' count, which sums
	 * the stacks' ns; NULL: ("cpu", "nanoseconds").  An event counted by
	 * occurrences names its own ("cycles", "count"). */
	const char *value_type, *value_unit;
	/* On-CPU: what one sample stands for in NAME.pb.gz (its period); 0:
	 * unknown (unless TRACERIG_STACKS_MEAN_PERIOD). */
	uint64_t period;
	/* On-CPU, with TRACERIG_STACKS_WALL: what one sample is worth in the
	 * wall-clock view, in ns; 0: the stacks' mean ns per sample (a clock
	 * event's periods, which the kernel moves to keep a frequency). */
	uint64_t ns_per_sample;
	/* Bytes the distinct folded lines, and apart from them the pprof
	 * samples, may take in memory before they are written sorted to the
	 * staging directory and merged back at stacks_write(); 0: no limit. */
	size_t memory_limit;
};

/* What stacks_write() wrote, for the source's counters and log. */
struct tracerig_stacks_stats {
	uint64_t stacks;        /* distinct folded stacks */
	uint64_t count, ns;     /* sums of the stacks' count and ns */
	uint64_t folded_away;   /* [unknown] frames a run of them stood for */
	uint64_t unnamed;       /* frame lookups no symbol answered (names not given) */
	uint64_t ns_per_sample; /* ns / count, rounded; 0 without samples */
	/* memory_limit: sorted runs of lines and spills of pprof samples
	 * written, and the first error that kept them in memory instead. */
	size_t folded_runs, pprof_spills;
	uint64_t pprof_spill_bytes;
	int spill_err;
};

struct tracerig_stacks;

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
	uint32_t crc;      /* CRC-32 of the entry's bytes [from, to) */
	int level;         /* the deflate level, archive_stream_level()'s
	                     * (with TRACERIG_DEFLATE_FAST when it was) */
	uint64_t dev, ino; /* the file the core followed: the entry's still? */
};

struct tracerig_internal_services {
	size_t size;
	/* The `[tracerig]` section of the profile (name, duration, ...). */
	const char *(*session_string)(struct tracerig_ctx *ctx, const char *key);

	/* Snapshots the process's mappings now, so it still resolves after it exits. */
	int (*symbolizer_remember)(struct tracerig_ctx *ctx, pid_t pid);
	/* Adds a perf-PID.map or jit-PID.dump file to use for `pid`'s anonymous code. */
	int (*symbolizer_add_jit_file)(struct tracerig_ctx *ctx, pid_t pid, const char *path);

	/* The process model, fed by a recording's side-band records replayed
	 * in time order (what perf's machine/thread model does): an
	 * executable mapping, an exec (the address space starts empty) and a
	 * fork (the child's starts as a copy of the parent's).  From the first
	 * record about a process on, frame_name() resolves its addresses
	 * against the mappings so recorded, as they stand at that point of
	 * the replay, never against /proc/PID/maps read late; so frames of
	 * libraries loaded late and of processes gone by the end resolve.
	 * Objects are matched by build id (or device and inode), using what
	 * was read while the process was alive (symbolizer_remember).  Call
	 * from one thread, interleaved with the frame_name() calls of the
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
	 * frame_name() would find it at this point (of the replay): for a
	 * source that unwinds stacks with the object's CFI.  Opened as the
	 * symbolizer opens its objects (through the process's root, checked
	 * to be the mapped inode or build id, never following a link).
	 * -ENOENT when no object file is there (anonymous or JIT code, an
	 * unreadable file). */
	int (*symbolizer_object)(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr,
				 struct tracerig_object *out);

	/* Staging: entries are files under the staging directory; their path
	 * relative to it is their name in the archive ("perf.data",
	 * "lttngTrace/ust/..."). */
	const char *(*archive_dir)(struct tracerig_archive *ar);
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
	 * view's samples from that profile (its first column whose
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

	/* The stack sink: a source hands the core its stacks as addresses and
	 * the core names their frames (frame_name, at the point of the
	 * replay where they are added), sums them, and writes NAME.folded,
	 * NAME.svg and, when the profile wants pprof, NAME.pb.gz: one place
	 * that folds, names and maps a frame alike for every source.
	 * TRACERIG_TIME_ONCPU stacks are weighted by their count (samples;
	 * pprof: samples and the spec's column), TRACERIG_TIME_OFFCPU ones by
	 * their ns (written in microseconds; pprof: nanoseconds).  NULL with
	 * errno set (EINVAL, ENOMEM).  Use from one thread. */
	struct tracerig_stacks *(*stacks_open)(struct tracerig_ctx *ctx,
					       const struct tracerig_stacks_spec *spec);
	/* Adds `n` stacks, naming their frames now.  0 or -ENOMEM. */
	int (*stacks_add)(struct tracerig_stacks *s, const struct tracerig_stack *stacks, size_t n);
	/* Writes the entries into `ar` (in flush or snapshot), declares the
	 * pprof entry for the manifest and, with TRACERIG_STACKS_WALL and
	 * stacks added, hands the stacks to the wall-clock view (add none
	 * after it); logs what fails.  *out (when not NULL) says what was
	 * written.  0 or a negative errno. */
	int (*stacks_write)(struct tracerig_stacks *s, struct tracerig_archive *ar,
			    struct tracerig_stacks_stats *out);
	void (*stacks_close)(struct tracerig_stacks *s);
};

static inline const struct tracerig_internal_services *
tracerig_internal(const struct tracerig_services *svc)
{
	return (const struct tracerig_internal_services *)svc->internal;
}

#ifdef __cplusplus
}
#endif

#endif /* TRACERIG_PRIVATE_EXT_H */
