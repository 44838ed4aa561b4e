/* Lines of /proc/kallsyms ("ffffffff81000000 T _text",
 * "ffffffffc0a01000 t ext4_fill_super\t[ext4]"), for the symbolizer's
 * kernel symbols and perf_events' kernel map. */
#ifndef TR_LIB_KALLSYMS_H
#define TR_LIB_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct tr_kallsyms_line {
	uint64_t addr; /* 0 for every line when kptr_restrict hides them */
	char type;     /* 'T', 't', 'W', 'D', ... */
	const char *name;
	size_t name_len;
	const char *module; /* "ext4" (module_len bytes) right after the '[' of
			     * "[ext4]"; NULL for the kernel's own symbols */
	size_t module_len;
};

/* 0 with `out` pointing into `line`, or -EINVAL for a line of another shape. */
int tr_kallsyms_parse(const char *line, struct tr_kallsyms_line *out);

/* Calls `cb` for every well-formed line of `path` (normally
 * /proc/kallsyms), until it returns nonzero; returns that, 0 at the end,
 * or -errno when the file cannot be read.  The line is valid during the
 * call only. */
int tr_kallsyms_each(const char *path, int (*cb)(void *arg, const struct tr_kallsyms_line *l),
		     void *arg);

#endif
