/* The harvester: per-process records of JIT map files found, held open and
 * copied incrementally into the staging directory under host-PID names. */
#ifndef MH_HARVEST_H
#define MH_HARVEST_H

#include <stdint.h>
#include <sys/types.h>
#include "tracerig-private/ext.h"

#include "lib/pidset.h"
#include "procinfo.h"

struct mh_proc;

struct mh_harvester {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	const char *staging;
	int stagefd;
	uint64_t max_size;
	uint64_t max_total; /* all the files of the session together */
	int cleanup;
	int dotnet_enable; /* switch .NET runtimes' maps on through their socket */
	pid_t self;

	struct mh_proc **procs; /* in discovery order; never moves a record */
	size_t n_procs, cap_procs;
	struct tr_pid_set pids; /* procs[i] is the record of pids.pids[i] */

	unsigned tick;
	size_t held, max_held; /* source fds kept open across passes */
	uint64_t n_files, n_refused, bytes;
	uint64_t n_jitdumps_cut; /* jitdumps that end inside a record */
	uint64_t n_dotnet_enabled, n_dotnet_failed; /* maps switched on, attempts refused */
};

/* `staging` must outlive the harvester.  Returns 0 or a negative errno. */
int mh_harvester_init(struct mh_harvester *h, const struct tracerig_services *svc,
		      struct tracerig_ctx *ctx, const char *staging, uint64_t max_size,
		      int cleanup);
/* Looks at process (or thread) `pid` now: finds its map files, copies what
 * was appended since the last look.  Cheap when nothing changed. */
void mh_harvest(struct mh_harvester *h, pid_t pid);
/* One polling round over the processes seen so far: those with files are
 * looked at every round, those without less and less often. */
void mh_harvest_tick(struct mh_harvester *h);
/* The final pass: copies every file to its end (the held fds still read the
 * files of processes that have exited), hands perf maps and jitdumps to the
 * symbolizer, removes left-behind files when cleanup is on, closes all. */
void mh_harvester_finish(struct mh_harvester *h);
/* Switches off again the perf maps the session switched on. */
void mh_harvester_switch_off(struct mh_harvester *h);
/* A flight snapshot (collection goes on): every file found so far, copied
 * to its end, is written into `dir` under its entry name (jitdumps with
 * host PIDs, as at finish); the files of processes that exited are handed
 * to the symbolizer.  The caller keeps other harvesting out meanwhile.
 * 0, or the last negative errno (logged). */
int mh_harvester_snapshot(struct mh_harvester *h, const char *dir);
void mh_harvester_free(struct mh_harvester *h);

/* The entry name a kind is stored under ("perf-1234.map"). */
void mh_entry_name(enum mh_kind kind, pid_t pid, char *buf, size_t len);

#endif
