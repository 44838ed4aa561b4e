/* What callchain = cfi becomes where the walker cannot run (fallback.h). */
#include "fallback.h"

#include <stdio.h>

#include "lib/callchain.h"

int cfi_fallback_choose(int probe, const char *why, int fallback, int oncpu, char *msg, size_t len)
{
	msg[0] = '\0';
	if (probe == 0)
		return TR_CALLCHAIN_CFI;
	switch (fallback) {
	case CFI_FALLBACK_FP:
		snprintf(msg, len,
			 "%s; falling back to callchain = fp as cfi_fallback says: user stacks "
			 "stop at the first frame built without frame pointers",
			 why);
		return TR_CALLCHAIN_FP;
	case CFI_FALLBACK_DWARF:
		if (oncpu)
			break; /* validate said it; never chosen */
		snprintf(
			msg, len,
			"%s; falling back to callchain = dwarf as cfi_fallback says: each kept "
			"interval copies its user stack to unwind it in user space (dwarf_stack_bytes)",
			why);
		return TR_CALLCHAIN_DWARF;
	default: break;
	}
	snprintf(msg, len, "%s, or set cfi_fallback = %s to record with it on such kernels", why,
		 oncpu ? "fp" : "dwarf (or fp)");
	return -1;
}
