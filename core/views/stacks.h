/* The stack sink (the stacks_open/add/write/close services): sources hand
 * their stacks over as addresses; frames are named here, through the
 * services' frame_name, and the stacks summed and written as NAME.folded,
 * NAME.svg and NAME.pb.gz, so that every source folds, names and maps a
 * frame alike.  Below the session: what it needs of the core comes
 * through the services table. */
#ifndef TR_STACKS_H
#define TR_STACKS_H

#include <stddef.h>

#include "tracerig-private/ext.h"
#include "wall.h"

struct tr_folded;

/* How the sink hands its view (its lines and profile, once written) to
 * the wall-clock view: the session's tr_wall_take, which owns them from
 * then on.  0 or a negative errno. */
typedef int (*tr_stacks_offer_fn)(struct tracerig_ctx *ctx, struct tr_wall_view *v);

/* `pprof`: whether NAME.pb.gz is wanted (the profile's `pprof`); `offer`
 * (NULL: none) takes the view of a sink opened with TRACERIG_STACKS_WALL
 * at tr_stacks_write, after which the sink holds no stacks. */
struct tracerig_stacks *tr_stacks_open(const struct tracerig_services *svc,
				       struct tracerig_ctx *ctx,
				       const struct tracerig_stacks_spec *spec, int pprof,
				       tr_stacks_offer_fn offer);
int tr_stacks_add(struct tracerig_stacks *s, const struct tracerig_stack *stacks, size_t n);
int tr_stacks_write(struct tracerig_stacks *s, struct tracerig_archive *ar,
		    struct tracerig_stacks_stats *out);
void tr_stacks_close(struct tracerig_stacks *s);

/* The folded lines added so far, as NAME.folded will hold them (before
 * the microseconds' division), NULL when they cannot all be counted (out
 * of memory), and the pprof builder (NULL: no pprof): for tests and for
 * bench/perf_events/convert, which write them without a session. */
const struct tr_folded *tr_stacks_folded(struct tracerig_stacks *s);
struct pp_builder *tr_stacks_pprof(struct tracerig_stacks *s);
/* What tr_stacks_write would report now, without writing. */
void tr_stacks_stats(struct tracerig_stacks *s, struct tracerig_stacks_stats *out);

#endif
