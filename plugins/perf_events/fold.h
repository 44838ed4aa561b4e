/* Folded stacks ("comm-PID;outer;...;inner count"), summed per line: the
 * flame graph's input and what the ebpf backend's wall-clock view reads. */
#ifndef TR_PERF_FOLD_H
#define TR_PERF_FOLD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fold;

struct fold *fold_new(void);
void fold_free(struct fold *f);
int fold_add(struct fold *f, const char *line, size_t len, uint64_t weight);
size_t fold_count(const struct fold *f);
/* Lines sorted, one "line weight" each.  0 or -errno. */
int fold_write(const struct fold *f, FILE *out);

#endif
