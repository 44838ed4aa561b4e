/* Copying a growing, append-only file (perf map, jitdump) into staging. */
#ifndef MH_COPY_H
#define MH_COPY_H

#include <stdint.h>
#include <sys/types.h>

/* Copies bytes [*done, EOF) of `src` to the same offsets of `dst`, advancing
 * *done.  Never lets *done pass `limit`: returns -EFBIG when the source has
 * grown beyond it.  Returns the number of bytes copied or a negative errno. */
int64_t mh_copy_tail(int src, int dst, uint64_t *done, uint64_t limit);

/* .NET writes a perf map line's address with printf's %p ("0x7f..."), and
 * PerfView's reader of perf-PID.map (TraceEvent's LinuxPerfScriptMapper)
 * parses it as bare hex and throws, failing the whole stack view.  In the
 * staged copy `fd`, every complete line in [*fixed, end) that starts with
 * "0x" gets "00" there instead: the same number for perf and every other
 * reader, the same length, so the copy's offsets stay the source's.
 * Advances *fixed past the last complete line.  0 or a negative errno. */
int mh_perfmap_bare_hex(int fd, uint64_t *fixed, uint64_t end);

#endif
