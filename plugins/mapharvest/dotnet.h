/* Perf maps of a running .NET runtime switched on for the session through
 * its diagnostics socket (EnablePerfMap, .NET 8 and later), and off after:
 * most services were not started with DOTNET_PerfMapEnabled, and perfcollect
 * can only ask for a restart. */
#ifndef MH_DOTNET_H
#define MH_DOTNET_H

#include <stddef.h>
#include <sys/types.h>

/* The deadline of each exchange with a runtime: one that never answers is
 * given up on, it never holds the session. */
#define MH_DOTNET_TIMEOUT_MS 2000

/* Switches process `pid`'s perf map and jitdump on.  The stub granularity
 * that keeps .NET 10's jitdump whole cannot be given this way: the runtime
 * reads it at startup only (SetEnvironmentVariable through the socket
 * changed nothing but the application's environment), so such a jitdump
 * may stop early, which mapharvest reports.  `version` receives the
 * runtime's version ("10.0.12") when it said it.  0, or a negative errno
 * with `why` filled for a log line. */
int mh_dotnet_enable(pid_t pid, char *version, size_t version_len, char *why, size_t why_len);
/* Switches them off again.  0 or a negative errno with `why` filled. */
int mh_dotnet_disable(pid_t pid, char *why, size_t why_len);
/* One line for --check about process `pid` ("pid 4242: .NET 10.0.12 (Hot),
 * perf maps off: ..."), given whether its environment turns maps on
 * (`env_why`, "" when not) and whether tracerig may switch them on. */
void mh_dotnet_describe(pid_t pid, const char *env_why, int may_enable, char *buf,
			size_t len);

#endif
