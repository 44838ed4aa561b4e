/* Per-process harvesting.
 *
 * A file, once found, stays open: polling then costs an fstat and a copy of
 * what was appended, and when the process exits — its /proc entry, its /tmp
 * and perhaps its whole container gone — the open fd still reads the file to
 * its end.  That is how a short-lived process keeps its map.  Beyond
 * max_held open files, sources are reopened by path on each pass instead. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy.h"
#include "dotnet.h"
#include "harvest.h"
#include "jitdump.h"
#include "lib/untrusted.h"
#include "lib/vec.h"

#define MAX_BACKOFF 16 /* ticks between looks at a process without files */

struct mh_file {
	int src, dst, dir;     /* held source, staged copy, O_PATH of its directory */
	dev_t dev;
	ino_t ino;
	uint64_t copied;
	uint64_t fixed;        /* perf maps: lines up to here made bare hex */
	size_t dir_index;      /* which of rt.dirs it was found in */
	unsigned found : 1, refused : 1, failed : 1;
	uint32_t refused_dirs; /* dirs whose refusal was logged already */
};

struct mh_proc {
	pid_t pid, nspid;
	int gone, have_info, kthread;
	int dotnet_on; /* we switched its runtime's maps on: off and removed at the end */
	int switched_off; /* ... and off again */
	unsigned next_tick, backoff;
	struct mh_runtime rt;
	struct mh_file files[MH_N_KINDS];
};

/* The names runtimes use; PerfView and perf look for the same ones. */
static const char *const kind_prefix[MH_N_KINDS] = {
	[MH_PERF_MAP] = "perf-",
	[MH_PERFINFO] = "perfinfo-",
	[MH_JITDUMP] = "jit-",
};
static const char *const kind_suffix[MH_N_KINDS] = {
	[MH_PERF_MAP] = ".map",
	[MH_PERFINFO] = ".map",
	[MH_JITDUMP] = ".dump",
};

void mh_entry_name(enum mh_kind kind, pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "%s%d%s", kind_prefix[kind], (int)pid, kind_suffix[kind]);
}

static void update_counters(struct mh_harvester *h)
{
	h->svc->run->counter_set(h->ctx, "files", h->n_files);
	h->svc->run->counter_set(h->ctx, "refused", h->n_refused);
	h->svc->run->counter_set(h->ctx, "bytes", h->bytes);
	h->svc->run->progress_set(h->ctx, "%llu maps", (unsigned long long)h->n_files);
}

int mh_harvester_init(struct mh_harvester *h, const struct tracerig_services *svc,
		      struct tracerig_ctx *ctx, const char *staging, uint64_t max_size,
		      int cleanup)
{
	struct rlimit rl;

	memset(h, 0, sizeof(*h));
	h->svc = svc;
	h->ctx = ctx;
	h->staging = staging;
	h->max_size = max_size;
	h->max_total = UINT64_MAX;
	h->cleanup = cleanup;
	h->self = getpid();
	h->stagefd = open(staging, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (h->stagefd < 0)
		return -errno;
	/* Open files are what keeps exited processes' maps: allow many. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	/* Three fds per file (source, copy, directory), room left for others. */
	h->max_held = rl.rlim_cur > 1024 ? (rl.rlim_cur - 512) / 3 : 128;
	if (h->max_held > 100000)
		h->max_held = 100000;
	return 0;
}

/* ---- the pid -> record index ---- */

static struct mh_proc *find_proc(struct mh_harvester *h, pid_t pid)
{
	long i = tr_pid_set_find(&h->pids, pid);

	return i >= 0 ? h->procs[i] : NULL;
}

static struct mh_proc *add_proc(struct mh_harvester *h, pid_t pid)
{
	struct mh_proc *p, **grown;

	grown = tr_vec_grow(h->procs, &h->cap_procs, h->n_procs + 1, sizeof(*grown), 64);
	if (!grown)
		return NULL;
	h->procs = grown;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (tr_pid_set_add(&h->pids, pid) <= 0) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	p->backoff = 1;
	for (int k = 0; k < MH_N_KINDS; k++)
		p->files[k].src = p->files[k].dst = p->files[k].dir = -1;
	h->procs[h->n_procs++] = p;
	return p;
}

/* ---- one file ---- */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void release_source(struct mh_harvester *h, struct mh_file *f)
{
	if (f->src >= 0) {
		close_fd(&f->src);
		h->held--;
	}
}

/* Drops a staged copy that must not go into the archive. */
static void refuse_file(struct mh_harvester *h, struct mh_proc *p, enum mh_kind kind,
			const char *why)
{
	struct mh_file *f = &p->files[kind];
	char name[64];

	mh_entry_name(kind, p->nspid, name, sizeof(name));
	h->svc->run->log(h->ctx, TRACERIG_LOG_WARN, "pid %d: refused %s/%s: %s", (int)p->pid,
			 p->rt.dirs[f->dir_index], name, why);
	release_source(h, f);
	close_fd(&f->dst);
	close_fd(&f->dir);
	mh_entry_name(kind, p->pid, name, sizeof(name));
	unlinkat(h->stagefd, name, 0);
	h->bytes -= f->copied;
	if (f->found)
		h->n_files--;
	f->copied = 0;
	f->found = 0;
	f->refused = 1;
	h->n_refused++;
	update_counters(h);
}

/* Whether the file outgrew what the session keeps: past max_size it is
 * refused, past max_total the copy stops where it is.  1 when it did. */
static int past_limits(struct mh_harvester *h, struct mh_proc *p, enum mh_kind kind,
		       const struct stat *st)
{
	struct mh_file *f = &p->files[kind];
	char why[160];

	if ((uint64_t)st->st_size > h->max_size) {
		snprintf(why, sizeof(why),
			 "grew to %llu bytes, more than max_size = %llu (raise "
			 "[mapharvest] max_size to keep it)",
			 (unsigned long long)st->st_size, (unsigned long long)h->max_size);
		refuse_file(h, p, kind, why);
		return 1;
	}
	if (h->bytes + ((uint64_t)st->st_size - f->copied) > h->max_total) {
		char name[64];

		mh_entry_name(kind, p->pid, name, sizeof(name));
		h->svc->run->log(
			h->ctx, TRACERIG_LOG_WARN,
			"pid %d: %s grew past what the session keeps "
			"of all processes' files together (max_total = %llu): the archive keeps "
			"its first %llu bytes (raise [mapharvest] max_total to keep more)",
			(int)p->pid, name, (unsigned long long)h->max_total,
			(unsigned long long)f->copied);
		f->failed = 1;
		return 1;
	}
	return 0;
}

/* Perf maps: the lines copied since the last pass made bare hex. */
static void fix_perfmap_addresses(struct mh_harvester *h, struct mh_proc *p, enum mh_kind kind)
{
	struct mh_file *f = &p->files[kind];
	int64_t n;

	if (kind == MH_PERF_MAP && f->fixed < f->copied &&
	    (n = mh_perfmap_bare_hex(f->dst, &f->fixed, f->copied)) < 0) {
		char name[64];

		mh_entry_name(kind, p->pid, name, sizeof(name));
		h->svc->run->log(
			h->ctx, TRACERIG_LOG_WARN,
			"%s: cannot rewrite its addresses as bare "
			"hex in the staging directory: %s (PerfView cannot read it as it is)",
			name, strerror((int)-n));
		f->fixed = f->copied;
	}
}

/* Copies what was appended; restarts when the file was truncated. */
static void copy_file(struct mh_harvester *h, struct mh_proc *p, enum mh_kind kind)
{
	struct mh_file *f = &p->files[kind];
	struct stat st;
	int64_t n;
	char why[160];

	if (f->src < 0 || f->dst < 0 || f->failed)
		return;
	if (fstat(f->src, &st) < 0)
		return;
	if ((uint64_t)st.st_size < f->copied) {
		/* Rewritten from the start (a restarted runtime): start over. */
		if (ftruncate(f->dst, 0) < 0)
			return;
		h->bytes -= f->copied;
		f->copied = 0;
		f->fixed = 0;
	}
	if (past_limits(h, p, kind, &st))
		return;
	n = mh_copy_tail(f->src, f->dst, &f->copied, h->max_size);
	if (n == -EFBIG) {
		snprintf(why, sizeof(why), "grew beyond max_size = %llu bytes while being copied",
			 (unsigned long long)h->max_size);
		refuse_file(h, p, kind, why);
		return;
	}
	if (n < 0) {
		char name[64];

		mh_entry_name(kind, p->pid, name, sizeof(name));
		h->svc->run->log(h->ctx, TRACERIG_LOG_ERROR,
				 "cannot copy %s into the staging "
				 "directory: %s (the archive keeps the first %llu bytes)",
				 name, strerror((int)-n), (unsigned long long)f->copied);
		f->failed = 1;
		return;
	}
	if (n > 0) {
		h->bytes += (uint64_t)n;
		update_counters(h);
	}
	fix_perfmap_addresses(h, p, kind);
}

/* The process whose file of any kind is this inode already (hard links of
 * one file under several processes' names: copied once), or NULL. */
static const struct mh_proc *harvested_as(const struct mh_harvester *h, const struct mh_proc *p,
					  const struct stat *st, enum mh_kind *kind)
{
	for (size_t i = 0; i < h->n_procs; i++) {
		const struct mh_proc *q = h->procs[i];

		for (int k = 0; k < MH_N_KINDS && q != p; k++)
			if (q->files[k].found && !q->files[k].refused && q->files[k].dev == st->st_dev &&
			    q->files[k].ino == st->st_ino) {
				*kind = (enum mh_kind)k;
				return q;
			}
	}
	return NULL;
}

/* Whether directory d's refusal is still to be logged: one line per
 * refused path, however often we look. */
static int refusal_is_new(struct mh_file *f, size_t d)
{
	if (f->refused_dirs & (1u << d))
		return 0;
	f->refused_dirs |= 1u << d;
	return 1;
}

static void log_refusal(struct mh_harvester *h, const struct mh_proc *p, const char *path,
			const char *why, const char *hint)
{
	h->svc->run->log(h->ctx, TRACERIG_LOG_WARN, "pid %d: refused %s: %s%s", (int)p->pid, path,
			 why, hint);
	h->n_refused++;
	update_counters(h);
}

/* Why a file seen for the first time is not harvested (in `why`), or NULL
 * when it is to be. */
static const char *refusal_of_new(const struct mh_harvester *h, const struct mh_proc *p,
				  const struct stat *st, char *why, size_t why_len)
{
	const struct mh_proc *q;
	enum mh_kind qk;
	char other[64];

	if ((q = harvested_as(h, p, st, &qk))) {
		mh_entry_name(qk, q->pid, other, sizeof(other));
		snprintf(why, why_len,
			 "the same file as pid %d's, harvested once (as %s): "
			 "processes do not share these files, links do",
			 (int)q->pid, other);
		return why;
	}
	if (h->bytes + (uint64_t)st->st_size > h->max_total) {
		snprintf(why, why_len,
			 "%llu bytes, past what the session keeps of all processes' "
			 "files together (max_total = %llu, %llu taken; raise [mapharvest] "
			 "max_total to keep it)",
			 (unsigned long long)st->st_size, (unsigned long long)h->max_total,
			 (unsigned long long)h->bytes);
		return why;
	}
	return NULL;
}

/* Reopened by path (no fd held): is it still the same file? */
static void restart_if_replaced(struct mh_harvester *h, struct mh_file *f, const struct stat *st)
{
	if (st->st_dev != f->dev || st->st_ino != f->ino) {
		if (ftruncate(f->dst, 0) == 0) {
			h->bytes -= f->copied;
			f->copied = 0;
			f->fixed = 0;
		}
	}
}

/* A file found for the first time, in directory d as `path`: its staged
 * copy created, the symbolizer told.  -1 when the copy cannot be made. */
static int start_harvesting(struct mh_harvester *h, struct mh_proc *p, int rootfd,
			    enum mh_kind kind, size_t d, const char *path)
{
	struct mh_file *f = &p->files[kind];
	char entry[64];
	int dst;

	mh_entry_name(kind, p->pid, entry, sizeof(entry));
	dst = openat(h->stagefd, entry, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (dst < 0) {
		h->svc->run->log(h->ctx, TRACERIG_LOG_ERROR,
				 "cannot create %s/%s: %s (is the staging "
				 "directory's disk full?)",
				 h->staging, entry, strerror(errno));
		return -1;
	}
	f->dst = dst;
	f->found = 1;
	f->dir_index = d;
	h->n_files++;
	if (h->cleanup || p->dotnet_on) {
		int dir = tr_untrusted_open_dir(rootfd, p->rt.dirs[d], TR_IN_ROOT);

		f->dir = dir >= 0 ? dir : -1;
	}
	h->svc->run->log(h->ctx, TRACERIG_LOG_INFO, "pid %d: harvesting %s (stored as %s)",
			 (int)p->pid, path, entry);
	/* The staged copy grows as we copy: handed now, it names
	 * frames for a conversion made while collecting, which
	 * cannot know where a runtime's files are (perf.data
	 * calls a jitdump ./jit-PID.dump). */
	if (kind != MH_PERFINFO) {
		char full[PATH_MAX];

		snprintf(full, sizeof(full), "%s/%s", h->staging, entry);
		(void)tracerig_internal(h->svc)->symbolizer_add_jit_file(h->ctx, p->pid, full);
	}
	return 0;
}

/* Tries each directory for `kind`; on success the file is open in f->src. */
static void find_file(struct mh_harvester *h, struct mh_proc *p, int rootfd, enum mh_kind kind)
{
	struct mh_file *f = &p->files[kind];
	char name[64], path[PATH_MAX], why[256];
	struct tr_untrusted u;

	mh_entry_name(kind, p->nspid, name, sizeof(name));
	for (size_t d = 0; d < p->rt.n_dirs; d++) {
		const char *refusal;
		int fd;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", p->rt.dirs[d], name) >= sizeof(path))
			continue;
		/* The runtime writes these files itself: one of another user's
		 * (root's, mounted in over its /tmp) is not its to hand us. */
		fd = tr_untrusted_owned(p->pid, tr_untrusted_openat(rootfd, path, TR_IN_ROOT,
								    h->max_size, &u), &u);
		if (fd == -ENOENT || fd == -ESRCH)
			continue;
		if (fd < 0) {
			if (refusal_is_new(f, d))
				log_refusal(
					h, p, path, tr_untrusted_explain(&u, fd, why, sizeof(why)),
					fd == -EFBIG ? " (raise [mapharvest] max_size to keep it)"
						     : "");
			continue;
		}
		refusal = f->found ? NULL : refusal_of_new(h, p, &u.st, why, sizeof(why));
		if (refusal) {
			close(fd);
			if (refusal_is_new(f, d))
				log_refusal(h, p, path, refusal, "");
			continue;
		}
		if (f->found) {
			restart_if_replaced(h, f, &u.st);
		} else if (start_harvesting(h, p, rootfd, kind, d, path) < 0) {
			close(fd);
			return;
		}
		f->dev = u.st.st_dev;
		f->ino = u.st.st_ino;
		f->src = fd;
		h->held++;
		return;
	}
}

/* ---- one process ---- */

static void copy_all(struct mh_harvester *h, struct mh_proc *p)
{
	for (int k = 0; k < MH_N_KINDS; k++) {
		copy_file(h, p, k);
		/* Over the budget of open files: reopen by path next time. */
		if (h->held > h->max_held && !p->gone)
			release_source(h, &p->files[k]);
	}
}

static int has_files(const struct mh_proc *p)
{
	for (int k = 0; k < MH_N_KINDS; k++)
		if (p->files[k].found)
			return 1;
	return 0;
}

/* A .NET runtime whose environment left its perf maps off gets them for
 * the session, as the maps of every process this session names frames of
 * must exist: switched on now, off at the end (mh_harvester_finish). */
static void dotnet_switch_on(struct mh_harvester *h, struct mh_proc *p)
{
	char version[64], why[512];
	int ret;

	if (strstr(p->rt.why, "PerfMapEnabled=") || !mh_maps_contain(p->pid, "libcoreclr.so"))
		return;
	ret = mh_dotnet_enable(p->pid, version, sizeof(version), why, sizeof(why));
	if (ret < 0) {
		h->n_dotnet_failed++;
		h->svc->run->counter_set(h->ctx, "dotnet_maps_not_enabled", h->n_dotnet_failed);
		h->svc->run->log(
			h->ctx, TRACERIG_LOG_WARN,
			"pid %d: a .NET process without "
			"DOTNET_PerfMapEnabled, and its perf maps could not be switched on: %s "
			"(its JIT frames stay unnamed; EnablePerfMap needs .NET 8 or later)",
			(int)p->pid, why);
		return;
	}
	p->dotnet_on = 1;
	/* Where the runtime writes them: PerfMapJitDumpPath, else /tmp. */
	p->rt.expect |= MH_EXPECT(MH_PERF_MAP) | MH_EXPECT(MH_JITDUMP);
	snprintf(p->rt.why, sizeof(p->rt.why), "EnablePerfMap");
	h->n_dotnet_enabled++;
	h->svc->run->counter_set(h->ctx, "dotnet_maps_enabled", h->n_dotnet_enabled);
	h->svc->run->log(
		h->ctx, TRACERIG_LOG_INFO,
		"pid %d: .NET %s started without "
		"DOTNET_PerfMapEnabled: perf map and jitdump switched on through its diagnostics "
		"socket, until the end of the session",
		(int)p->pid, version[0] ? version : "runtime");
}

void mh_harvest(struct mh_harvester *h, pid_t pid)
{
	struct mh_procinfo pi;
	struct mh_proc *p;
	char path[64];
	int procfd, rootfd, ret;

	if (pid <= 0 || pid == h->self)
		return;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	procfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ret = procfd < 0 ? -errno : mh_procinfo_read(procfd, &pi, 0);
	if (ret < 0) {
		/* Gone: what its held files hold is all there is. */
		p = find_proc(h, pid);
		if (p && !p->gone) {
			p->gone = 1;
			copy_all(h, p);
		}
		goto close_proc;
	}
	if (pi.tgid == h->self)
		goto close_proc;
	p = find_proc(h, pi.tgid);
	if (!p && !(p = add_proc(h, pi.tgid)))
		goto close_proc;
	if (p->gone || p->kthread)
		goto close_proc;
	if (!p->have_info) {
		mh_procinfo_free(&pi);
		if (mh_procinfo_read(procfd, &pi, 1) < 0)
			goto close_proc;
		p->nspid = pi.nspid;
		p->kthread = pi.kthread;
		p->rt = pi.rt; /* moved: freed with the record */
		p->have_info = 1;
		if (p->kthread)
			goto close_proc;
		if (h->dotnet_enable)
			dotnet_switch_on(h, p);
	}
	rootfd = openat(procfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		goto close_proc; /* exiting: its fs is already released */
	for (int k = 0; k < MH_N_KINDS; k++) {
		struct mh_file *f = &p->files[k];

		if (f->refused || f->failed || f->src >= 0)
			continue;
		find_file(h, p, rootfd, k);
	}
	close(rootfd);
	copy_all(h, p);
	if (!has_files(p)) {
		p->next_tick = h->tick + p->backoff;
		if (p->backoff < MAX_BACKOFF)
			p->backoff *= 2;
	}
close_proc:
	if (procfd >= 0)
		close(procfd);
}

void mh_harvest_tick(struct mh_harvester *h)
{
	size_t n = h->n_procs;

	h->tick++;
	for (size_t i = 0; i < n; i++) {
		struct mh_proc *p = h->procs[i];

		if (p->gone || p->kthread)
			continue;
		if (has_files(p) || h->tick >= p->next_tick)
			mh_harvest(h, p->pid);
	}
}

/* Removes a left-behind file, if it is still the one we copied.  Through
 * the opener, as its opens: the directory may be on a file system whose
 * server stopped answering. */
static void cleanup_file(struct mh_harvester *h, struct mh_proc *p, enum mh_kind kind)
{
	struct mh_file *f = &p->files[kind];
	char name[64];
	int ret;

	if (f->dir < 0)
		return;
	mh_entry_name(kind, p->nspid, name, sizeof(name));
	ret = tr_untrusted_remove(f->dir, name, f->dev, f->ino);
	if (ret == -ENOENT || ret == -ESTALE)
		return; /* gone, or another file has its name now */
	if (ret < 0)
		h->svc->run->log(h->ctx, TRACERIG_LOG_WARN, "pid %d: cleanup of %s/%s failed: %s%s",
				 (int)p->pid, p->rt.dirs[f->dir_index], name, strerror(-ret),
				 ret == -ETIMEDOUT
					 ? " (its file system did not answer); it is left there"
					 : "");
	else
		h->svc->run->log(h->ctx, TRACERIG_LOG_INFO, "pid %d: removed the left-behind %s/%s",
				 (int)p->pid, p->rt.dirs[f->dir_index], name);
}

/* Child processes inherit DOTNET_PerfMapEnabled whatever they run: only a
 * process that runs the .NET runtime was meant to write a map. */
static int runtime_runs(const struct mh_proc *p)
{
	if (p->rt.why[0] == '-')
		return 1; /* a Node.js flag on its own command line */
	if (p->gone)
		return 0; /* cannot tell any more: say nothing */
	if (strncmp(p->rt.why, "NODE_OPTIONS", 12) == 0)
		return mh_maps_contain(p->pid, "/node");
	return mh_maps_contain(p->pid, "libcoreclr.so");
}

static const char *const kind_label[MH_N_KINDS] = { "perf map", "perfinfo map", "jitdump" };

/* Whether the process is still there (a record only learns it is gone
 * when it looks). */
static void note_gone(struct mh_proc *p)
{
	char path[64];

	if (p->gone)
		return;
	snprintf(path, sizeof(path), "/proc/%d", (int)p->pid);
	p->gone = access(path, F_OK) != 0;
}

int mh_harvester_snapshot(struct mh_harvester *h, const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;

	if (dfd < 0)
		return -errno;
	for (size_t i = 0; i < h->n_procs; i++) {
		struct mh_proc *p = h->procs[i];

		if (!p->gone && !p->kthread && has_files(p))
			mh_harvest(h, p->pid); /* its last lines */
		note_gone(p);
		for (int k = 0; k < MH_N_KINDS; k++) {
			struct mh_file *f = &p->files[k];
			char entry[64], full[PATH_MAX];
			uint64_t done = 0;
			int64_t n;
			int out;

			if (!f->found || f->dst < 0)
				continue;
			copy_file(h, p, k);
			mh_entry_name(k, p->pid, entry, sizeof(entry));
			out = openat(dfd, entry, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			if (out < 0) {
				ret = -errno;
				h->svc->run->log(h->ctx, TRACERIG_LOG_ERROR,
						 "snapshot: cannot create %s: %s", entry,
						 strerror(errno));
				continue;
			}
			/* The copy so far, as the archive of a whole run has it. */
			n = mh_copy_tail(f->dst, out, &done, f->copied);
			if (n >= 0 && k == MH_JITDUMP && p->nspid != p->pid)
				(void)mh_jitdump_set_pid(out, done, p->nspid, p->pid);
			close(out);
			if (n < 0) {
				ret = (int)n;
				h->svc->run->log(h->ctx, TRACERIG_LOG_ERROR,
						 "snapshot: cannot copy %s: %s", entry,
						 strerror((int)-n));
				continue;
			}
			/* An exited process's /tmp is out of the symbolizer's reach:
			 * the copy names its JIT frames in the snapshot. */
			if (k != MH_PERFINFO && p->gone) {
				snprintf(full, sizeof(full), "%s/%s", h->staging, entry);
				(void)tracerig_internal(h->svc)->symbolizer_add_jit_file(
					h->ctx, p->pid, full);
			}
		}
	}
	close(dfd);
	return ret;
}

/* A runtime whose jitdump writer gave up leaves a file that ends inside a
 * record and never grows again: every method compiled or restored after
 * that point (ReadyToRun code above all, which only the jitdump names)
 * stays unnamed.  Said once per process, with what avoids it. */
static void check_jitdump_whole(struct mh_harvester *h, const struct mh_proc *p,
				const struct mh_file *f, const char *entry)
{
	uint64_t records;
	int64_t whole = mh_jitdump_whole(f->dst, f->copied, &records);

	if (whole < 0 || (uint64_t)whole == f->copied)
		return;
	h->svc->run->log(
		h->ctx, TRACERIG_LOG_WARN,
		"pid %d: %s stops inside a record after %llu "
		"whole record%s (%llu of %llu bytes): the runtime stopped writing it, so what "
		"it describes later (stubs; ReadyToRun methods are named from their images) "
		"stays unnamed; "
		".NET 10 does this when it cannot copy a stub block: start the process with "
		"DOTNET_PerfMapStubGranularity=2 (tracerig gives it to the commands it launches; "
		"a running runtime keeps what it was started with, as it reads that at startup "
		"only)",
		(int)p->pid, entry, (unsigned long long)records, records == 1 ? "" : "s",
		(unsigned long long)whole, (unsigned long long)f->copied);
	h->svc->run->counter_set(h->ctx, "jitdumps_cut_short", ++h->n_jitdumps_cut);
}

/* .NET logs ReadyToRun (precompiled) methods to its jitdump only: a
 * runtime told to write the perf map alone leaves every frame in the
 * framework's precompiled code unnamed, and the user should hear why. */
static void note_perfmap_only(struct mh_harvester *h, const struct mh_proc *p)
{
	if (!p->files[MH_PERF_MAP].found || p->files[MH_JITDUMP].found ||
	    (p->rt.expect & MH_EXPECT(MH_JITDUMP)) || !strstr(p->rt.why, "PerfMapEnabled="))
		return;
	h->svc->run->log(
		h->ctx, TRACERIG_LOG_INFO,
		"pid %d: %s writes a perf map but no jitdump, "
		"where the .NET runtime names ReadyToRun (precompiled framework) methods: they "
		"are named from their images instead",
		(int)p->pid, p->rt.why);
}

/* A jitdump written in a PID namespace: its code records made to say the
 * host's PID, the one perf inject --jit looks for. */
static void jitdump_to_host_pid(struct mh_harvester *h, const struct mh_proc *p,
				const struct mh_file *f, const char *entry)
{
	int64_t n = mh_jitdump_set_pid(f->dst, f->copied, p->nspid, p->pid);

	if (n < 0)
		h->svc->run->log(h->ctx, TRACERIG_LOG_WARN,
				 "pid %d: %s: %s (stored as found; perf "
				 "inject --jit will not use it)",
				 (int)p->pid, entry,
				 n == -EINVAL ? "not a jitdump in this host's byte order"
					      : strerror((int)-n));
	else
		h->svc->run->log(h->ctx, TRACERIG_LOG_DEBUG,
				 "pid %d: %s: %lld code records now say "
				 "PID %d instead of %d",
				 (int)p->pid, entry, (long long)n, (int)p->pid, (int)p->nspid);
}

/* The last copy of one of a process's files, checked, handed on and
 * closed; a file the runtime should have written but did not, said. */
static void finish_file(struct mh_harvester *h, struct mh_proc *p, enum mh_kind k)
{
	struct mh_file *f = &p->files[k];
	char entry[64], full[PATH_MAX];
	int ret;

	copy_file(h, p, k);
	if (!f->found && !f->refused && (p->rt.expect & MH_EXPECT(k)) && runtime_runs(p))
		h->svc->run->log(h->ctx, TRACERIG_LOG_WARN,
				 "pid %d: %s is set but no %s was found "
				 "(looked in %s%s): its JIT frames stay unresolved",
				 (int)p->pid, p->rt.why, kind_label[k],
				 p->rt.n_dirs ? p->rt.dirs[0] : "/tmp",
				 p->rt.n_dirs > 1 ? " and the usual places" : "");
	if (!f->found)
		return;
	mh_entry_name(k, p->pid, entry, sizeof(entry));
	if (k == MH_JITDUMP && f->dst >= 0)
		check_jitdump_whole(h, p, f, entry);
	if (k == MH_JITDUMP && p->nspid != p->pid && f->dst >= 0)
		jitdump_to_host_pid(h, p, f, entry);
	if (k != MH_PERFINFO) {
		snprintf(full, sizeof(full), "%s/%s", h->staging, entry);
		ret = tracerig_internal(h->svc)->symbolizer_add_jit_file(h->ctx, p->pid, full);
		h->svc->run->log(h->ctx, ret < 0 ? TRACERIG_LOG_WARN : TRACERIG_LOG_DEBUG,
				 "pid %d: %s handed to the symbolizer%s%s", (int)p->pid, entry,
				 ret < 0 ? ": " : "", ret < 0 ? strerror(-ret) : "");
	}
	/* Final from here on (nothing copies, fixes or rewrites
	 * it any more): the core deflates it while the other
	 * backends flush, not the packager after them.  Not
	 * before: a copy restarted from 0 or rewritten in place
	 * would break the promise. */
	if (f->dst >= 0 && !f->failed)
		(void)tracerig_internal(h->svc)->archive_append_only(h->ctx, entry, 0);
	/* A runtime still running keeps writing its file: only
	 * exited processes' files are left behind, and those
	 * that exist only because we switched maps on. */
	if ((h->cleanup && p->gone) || p->dotnet_on)
		cleanup_file(h, p, k);
	release_source(h, f);
	close_fd(&f->dst);
	close_fd(&f->dir);
}

void mh_harvester_finish(struct mh_harvester *h)
{
	for (size_t i = 0; i < h->n_procs; i++) {
		struct mh_proc *p = h->procs[i];

		/* Processes still alive with files get a last look (last lines);
		 * the caller has just looked at the targets for new files. */
		if (!p->gone && !p->kthread && has_files(p))
			mh_harvest(h, p->pid);
		note_gone(p);
		note_perfmap_only(h, p);
		for (int k = 0; k < MH_N_KINDS; k++)
			finish_file(h, p, k);
	}
	update_counters(h);
}

/* Apart from finish: a runtime busy with another diagnostics command
 * (StopTracing, whose answer waits for its rundown) answers this one only
 * after it, and what it writes from the stop on is past the session's
 * window anyway.  Each process once, whoever calls first (flush, or fini
 * when the session ends without one). */
void mh_harvester_switch_off(struct mh_harvester *h)
{
	for (size_t i = 0; i < h->n_procs; i++) {
		struct mh_proc *p = h->procs[i];
		char why[512];

		if (!p->dotnet_on || p->switched_off || p->gone)
			continue;
		p->switched_off = 1;
		if (kill(p->pid, 0) < 0 && errno == ESRCH)
			continue; /* exited since the stop: nothing is left on */
		if (mh_dotnet_disable(p->pid, why, sizeof(why)) < 0)
			h->svc->run->log(h->ctx, TRACERIG_LOG_WARN,
					 "pid %d: its perf maps, switched on for "
					 "the session, could not be switched off: %s",
					 (int)p->pid, why);
		else
			h->svc->run->log(h->ctx, TRACERIG_LOG_INFO,
					 "pid %d: perf map and jitdump switched "
					 "off again",
					 (int)p->pid);
	}
}

void mh_harvester_free(struct mh_harvester *h)
{
	for (size_t i = 0; i < h->n_procs; i++) {
		struct mh_proc *p = h->procs[i];

		for (int k = 0; k < MH_N_KINDS; k++) {
			release_source(h, &p->files[k]);
			close_fd(&p->files[k].dst);
			close_fd(&p->files[k].dir);
		}
		mh_runtime_free(&p->rt);
		free(p);
	}
	free(h->procs);
	tr_pid_set_free(&h->pids);
	close_fd(&h->stagefd);
	memset(h, 0, sizeof(*h));
	h->stagefd = -1;
}
