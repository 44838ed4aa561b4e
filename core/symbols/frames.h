/* Frame names: the one naming every output writes (the frame_name
 * service), and the (process, address) cache in front of the symbolizer.
 *
 * The symbolizer owns one struct tr_frames and calls these functions under
 * its lock; nothing here locks.  A process's entries are keyed by the
 * generation of its address space (see struct proc in symbolizer.c), which
 * the symbolizer bumps whenever the mappings it resolves against change:
 * a recorded mmap, exec or fork, a reread of /proc/PID/maps.  Entries of an
 * older generation are never served again.  Kernel addresses are keyed by
 * address alone, once for all processes. */
#ifndef TR_SYMBOLS_FRAMES_H
#define TR_SYMBOLS_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "tracerig-private/ext.h"

#include "interned.h"
#include "symtab.h"

struct tr_frame {
	const char *name;           /* the folded name, under the sanitize rule */
	struct tracerig_symbol sym; /* strings under the sanitize rule */
	int ret;                    /* 0: a symbol names it; -ENOENT: not */
	uint64_t retry_ns;          /* unnamed user frames: look again from then */
	uint64_t looked_ns;         /* unnamed user frames: when last looked up */
	/* Its key, and the next entry of its process (tr_frames_drop). */
	uint64_t addr;
	pid_t pid;
	uint32_t gen;
	struct tr_frame *next_of_pid;
};

struct tr_frame_slot;
struct tr_frame_block;
struct tr_frame_names;

struct tr_frames {
	struct tr_frame_slot *slots;
	size_t cap, n;
	struct tr_frame_block *blocks; /* entries never move while in use */
	struct tr_frame *spare; /* entries dropped, for reuse */
	/* The names made and the copies made under the sanitize rule, each
	 * once: processes come and go (tr_frames_drop), their names stay, so
	 * that what they take is what distinct names take. */
	struct tr_interned names;
};

/* Writes the frame's name under the one rule (see frame_name in
 * tracerig/plugin.h) into dst like snprintf: returns the length it needs. */
size_t tr_frame_name_format(char *dst, size_t size, const struct tracerig_symbol *s,
			    uint64_t addr, int kernel);

/* The entry for (pid, gen, addr) or, for kernel, (addr); NULL if none. */
struct tr_frame *tr_frames_find(const struct tr_frames *c, pid_t pid, uint32_t gen,
				uint64_t addr, int kernel);

/* Enters what a lookup found (`found`, its return `ret`) under that key,
 * replacing an entry of the same key; strings go to `arena`, each distinct
 * one once.  A user frame's entry goes on its process's list `*owner`
 * (NULL for kernel frames), for tr_frames_drop.  NULL when out of memory. */
struct tr_frame *tr_frames_add(struct tr_frames *c, struct tr_arena *arena, pid_t pid,
			       uint32_t gen, uint64_t addr, int kernel,
			       const struct tracerig_symbol *found, int ret, struct tr_frame **owner);

/* Drops the entries of a process's list (tr_frames_add's owner); their
 * strings stay in the arena. */
void tr_frames_drop(struct tr_frames *c, struct tr_frame *list);

void tr_frames_free(struct tr_frames *c);

#endif
