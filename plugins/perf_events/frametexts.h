/* The frame texts of perf_events' conversion: for every frame, its
 * perf.data.txt line and its name in folded stacks, made once per
 * (process, generation of its address space, address) from what the
 * core's frame_name service answered, and served from here, without
 * asking the core (and taking its lock) again, while the process keeps
 * that generation (the service frame_generation).  The core stays the one
 * source of names: nothing here names a frame, it only keeps the core's
 * answers for as long as the core says they hold.
 *
 * One conversion, one thread: nothing here locks. */
#ifndef TR_PERF_FRAMETEXTS_H
#define TR_PERF_FRAMETEXTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <tracerig/plugin.h>

/* A frame's text.  Both parts come from frame_name, which hands out its
 * strings under the sanitize rule already (names and paths are the traced
 * program's: one with a newline would add frame lines of its choosing, a
 * ';' would split a folded frame). */
struct frame_text {
	uint32_t line_len, fold_len;
	int no_object; /* in no known object: see fold_frames */
	/* "\t%16llx name (object)\n", then the folded name without the
	 * "_[k]" of kernel frames (fold_frames marks them itself). */
	char s[];
};

struct frametexts;

struct frametexts *ft_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx);
void ft_free(struct frametexts *ft);

/* A new sample begins: the replay may have changed its process's
 * mappings since the last one, so its generation is read again (once, at
 * its first user frame). */
void ft_sample(struct frametexts *ft);

/* The text of the frame at `addr` of `pid` (ignored when `kernel`), and
 * in *ret what frame_name returned for it (0: a symbol names it).  The
 * text stays where it is until ft_free.  NULL when out of memory. */
const struct frame_text *ft_text(struct frametexts *ft, pid_t pid, uint64_t addr, int kernel,
				 int *ret);

#endif
