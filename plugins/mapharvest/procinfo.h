/* What a process tells about its JIT map files: its namespace PID, where its
 * runtime writes them (environment, command line, working directory). */
#ifndef MH_PROCINFO_H
#define MH_PROCINFO_H

#include <stddef.h>
#include <sys/types.h>

#define MH_MAX_DIRS 6

enum mh_kind { MH_PERF_MAP, MH_PERFINFO, MH_JITDUMP, MH_N_KINDS };

/* Bits of mh_runtime.expect: which files the runtime's settings say it writes. */
#define MH_EXPECT(kind) (1u << (kind))

struct mh_runtime {
	/* Directories to look in, as absolute paths inside the process's root,
	 * most specific first (runtime setting, TMPDIR, /tmp, working dir). */
	char *dirs[MH_MAX_DIRS];
	size_t n_dirs;
	unsigned expect;
	char why[96]; /* the setting behind `expect`, for log lines */
};

/* "Tgid:" and the innermost "NStgid:" of a /proc/PID/status text, and
 * whether it is a kernel thread.  Returns 0 or -EINVAL when Tgid is missing. */
int mh_parse_status(const char *text, pid_t *tgid, pid_t *nstgid, int *kthread);

/* Reads the runtime settings from a NUL-separated environment block and
 * command line, given the process's working directory inside its root (NULL
 * if unknown).  Returns 0 or -ENOMEM; free with mh_runtime_free. */
int mh_runtime_parse(struct mh_runtime *rt, const char *environ, size_t environ_len,
		     const char *cmdline, size_t cmdline_len, const char *cwd);
void mh_runtime_free(struct mh_runtime *rt);

/* Everything above for a live process, read through its /proc/PID directory
 * fd (which pins the process: a reused PID answers ESRCH, not another
 * process's data). */
struct mh_procinfo {
	pid_t tgid, nspid;
	int kthread;
	struct mh_runtime rt; /* only read when asked (with_runtime) */
};
int mh_procinfo_read(int procfd, struct mh_procinfo *pi, int with_runtime);
void mh_procinfo_free(struct mh_procinfo *pi);

/* The working directory as a path inside the process's root, from the
 * kernel's names of both: NULL when it lies outside that root. */
char *mh_cwd_in_root(const char *root, const char *cwd);

/* 1 when a line of /proc/PID/maps contains `needle` ("libcoreclr.so"). */
int mh_maps_contain(pid_t pid, const char *needle);

#endif
