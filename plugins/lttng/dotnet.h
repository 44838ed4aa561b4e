/* What `--check -p PID` says about a .NET process: whether the runtime's
 * LTTng provider is loaded, and if not, why. */
#ifndef TR_LTTNG_DOTNET_H
#define TR_LTTNG_DOTNET_H

#include <stddef.h>
#include <sys/types.h>

#define DOTNET_PROVIDER "libcoreclrtraceptprovider.so"

struct dotnet_status {
	int is_dotnet;          /* libcoreclr.so or the provider is mapped */
	int provider_mapped;
	char provider[512];     /* path of the mapped provider */
	char runtime_dir[512];  /* directory of libcoreclr.so, as the process sees it */
	int lttng_disabled;     /* DOTNET_LTTng=0 (or COMPlus_LTTng=0) in its environment */
	int perfmap;            /* DOTNET_PerfMapEnabled (or COMPlus_) set, not 0 */
	char perfmap_value[32];
	/* liblttng-ust.so.0 / .so.1 found in the process's root */
	int ust_so[2];
	char ust_where[2][1024];
	int provider_present;   /* the provider file next to libcoreclr.so */
	/* Which liblttng-ust.so.N the provider links (its DT_NEEDED), -1 when
	 * it could not be read. */
	int provider_needs;
};

/* Pure parsers (unit-tested): a /proc/PID/maps text and a NUL-separated
 * environment block. */
void dotnet_parse_maps(const char *maps, struct dotnet_status *st);
void dotnet_parse_environ(const char *env, size_t len, struct dotnet_status *st);

/* Fills `st` for a host PID: maps, environ, and the libraries found in its
 * root (opened with RESOLVE_IN_ROOT, existence only).  0 or a negative
 * errno (the process is gone, or /proc is unreadable). */
int dotnet_inspect(pid_t pid, struct dotnet_status *st);

/* One line for `--check`: "pid N: ...".  Returns 1 when the runtime's events
 * will be recorded, 0 when not (or not a .NET process). */
int dotnet_describe(pid_t pid, const struct dotnet_status *st, char *buf, size_t len);

/* Whether a .NET runtime started on this host (our own root) could load
 * its LTTng provider: the providers of the runtimes installed beside the
 * `dotnet` on PATH (or DOTNET_ROOT, or the usual places) and the
 * liblttng-ust each links.  1 yes, 0 no (`why` says which soname is
 * missing), -1 no runtime found (nothing known).  A command launched with
 * DOTNET_EnableEventLog=1 routes every EventSource event through the
 * runtime's event logger whether or not the provider loaded: an ASP.NET
 * service lost 94% of its throughput to it on a host without the soname. */
int dotnet_host_provider_loadable(char *why, size_t len);

#endif
