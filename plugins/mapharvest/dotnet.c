/* Switching a running .NET runtime's perf maps on and off through its
 * diagnostics socket (lib/dotnetipc.c speaks the protocol). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dotnet.h"
#include "lib/dotnetipc.h"

int mh_dotnet_enable(pid_t pid, char *version, size_t version_len, char *why, size_t why_len)
{
	struct tr_dnipc_process_info pi = { 0 };
	struct tr_dnipc_status st = { 0 };
	int ret;

	if (version_len)
		version[0] = '\0';
	if (tr_dnipc_process_info(pid, MH_DOTNET_TIMEOUT_MS, &pi, &st) == 0 && pi.clr_version)
		snprintf(version, version_len, "%s", pi.clr_version);
	tr_dnipc_process_info_free(&pi);
	memset(&st, 0, sizeof(st));
	ret = tr_dnipc_enable_perfmap(pid, TR_DNIPC_PERFMAP_ALL, MH_DOTNET_TIMEOUT_MS, &st);
	if (ret < 0)
		tr_dnipc_explain(&st, ret, why, why_len);
	return ret;
}

int mh_dotnet_disable(pid_t pid, char *why, size_t why_len)
{
	struct tr_dnipc_status st = { 0 };
	int ret = tr_dnipc_disable_perfmap(pid, MH_DOTNET_TIMEOUT_MS, &st);

	if (ret < 0)
		tr_dnipc_explain(&st, ret, why, why_len);
	return ret;
}

void mh_dotnet_describe(pid_t pid, const char *env_why, int may_enable, char *buf, size_t len)
{
	struct tr_dnipc_process_info pi = { 0 };
	struct tr_dnipc_status st = { 0 };
	char why[512];
	int ret = tr_dnipc_process_info(pid, MH_DOTNET_TIMEOUT_MS, &pi, &st);

	if (ret < 0) {
		tr_dnipc_explain(&st, ret, why, sizeof(why));
		snprintf(buf, len, "pid %d: %s%s%s", (int)pid, why,
			 env_why[0] ? "; its environment sets " : "", env_why);
	} else if (env_why[0]) {
		snprintf(buf, len, "pid %d: .NET %s (%s), perf maps on (%s): harvested as they are",
			 (int)pid, pi.clr_version ? pi.clr_version : "runtime",
			 pi.entrypoint ? pi.entrypoint : "?", env_why);
	} else if (may_enable) {
		snprintf(buf, len, "pid %d: .NET %s (%s), perf maps off: tracerig will switch the "
			 "perf map and jitdump on through its diagnostics socket when collection "
			 "starts (.NET 8 or later), and off again at the end, removing the files",
			 (int)pid, pi.clr_version ? pi.clr_version : "runtime",
			 pi.entrypoint ? pi.entrypoint : "?");
	} else {
		snprintf(buf, len, "pid %d: .NET %s (%s), perf maps off and dotnet_enable = no: its "
			 "JIT frames stay unnamed", (int)pid,
			 pi.clr_version ? pi.clr_version : "runtime", pi.entrypoint ? pi.entrypoint : "?");
	}
	tr_dnipc_process_info_free(&pi);
}
