/* ReadyToRun code of a .NET image (lib/r2r) as an object's symbols: the
 * runtime maps System.Private.CoreLib.dll and the framework's other
 * precompiled assemblies and runs their code in place, but names it only
 * in its jitdump (cut short by .NET 10.0.12 in some cases, never written
 * with DOTNET_PerfMapEnabled=3).  Read from the image, those frames are
 * named whatever the runtime wrote, and as its jitdump names them. */
#ifndef TR_SYMBOLS_R2RSYM_H
#define TR_SYMBOLS_R2RSYM_H

#include <sys/types.h>

#include "elfsym.h"

/* Fills e (empty) from the PE image open on fd: its sections as loads (file
 * offset -> RVA, which the symbols use) and a symbol per method, named
 * "SIGNATURE[PreJIT]" as the runtime's jitdump names it.  path is the
 * image's as process root_pid sees it (0: as we do): a composite image's
 * component assemblies, which name its code, are looked for beside it,
 * inside that process's root.  0, -ENOEXEC (no ReadyToRun code here), or
 * another negative errno. */
int tr_r2r_symbols(struct tr_elf *e, int fd, pid_t root_pid, const char *path,
		   struct tr_arena *arena);

#endif
