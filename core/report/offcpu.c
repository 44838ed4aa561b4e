#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "counts.h"
#include "folded.h"
#include "lib/folded.h"
#include "offcpu.h"
#include "text.h"

#define ENTRY "offcpu.folded"

struct blocked {
	struct rp_counts leaves;
	uint64_t total, stacks;
};

static int in_kernel(const char *frame, const char *end)
{
	return end - frame >= 4 && memcmp(end - 4, "_[k]", 4) == 0;
}

/* The innermost user-space frame says where the program waited; kernel
 * frames ("_[k]") only say how.  NULL for a stack of kernel frames only
 * (a kernel thread's). */
static const char *leaf_of(const char *stack, size_t *len)
{
	const char *end = stack + strlen(stack), *leaf;

	for (;;) {
		/* Backwards, one frame at a time: strrchr on a copy made
		 * kernel frames quadratic (minutes for a few MB). */
		for (leaf = end; leaf > stack && leaf[-1] != ';'; leaf--)
			;
		if (!in_kernel(leaf, end))
			break;
		if (leaf == stack)
			return NULL;
		end = leaf - 1;
	}
	*len = (size_t)(end - leaf);
	return leaf;
}

static int add_stack(void *arg, char *stack, uint64_t weight)
{
	struct blocked *b = arg;
	struct tr_folded_rootinfo root;
	char kernel_only[160];
	size_t len = 0;
	const char *leaf;
	struct rp_count *c;

	/* The root (process, thread) is no frame; a stack of nothing else
	 * counts under the process name. */
	tr_folded_root_parse(stack, &root);
	leaf = root.frames ? leaf_of(root.frames, &len) : NULL;
	if (!leaf && root.frames) {
		/* Kernel frames only: no function of a program to list, the
		 * thread's process is what waited. */
		int n = snprintf(kernel_only, sizeof(kernel_only), "[kernel only] %.*s",
				 (int)root.comm_len, root.comm);

		leaf = kernel_only;
		len = n < 0 ? 0 : (size_t)n < sizeof(kernel_only) ? (size_t)n : sizeof(kernel_only) - 1;
	} else if (!leaf) {
		leaf = root.comm;
		len = root.comm_len;
	}
	c = rp_counts_get(&b->leaves, leaf, len);

	if (!c)
		return -ENOMEM;
	c->self = rp_add(c->self, weight);
	b->total = rp_add(b->total, weight);
	b->stacks++;
	return 0;
}

static void print_leaves(struct blocked *b, int top)
{
	struct rp_counts *l = &b->leaves;
	size_t n = l->n < (size_t)top ? l->n : (size_t)top;

	printf("\nOff-CPU time: %.3f s blocked in %" PRIu64 " stacks (" ENTRY ")\n",
	       (double)b->total / 1e6, b->stacks);
	rp_counts_sort_by_self(l);
	printf("\nTop %zu leaf functions by blocked time (innermost user-space frame):\n", n);
	printf("  %12s %7s  %s\n", "blocked ms", "%", "function");
	for (size_t i = 0; i < n; i++)
		printf("  %12.3f %6.1f%%  %s\n", (double)l->items[i].self / 1e3,
		       rp_percent(l->items[i].self, b->total), rp_tty(l->items[i].name));
}

int rp_report_offcpu(struct rp_archive *ar, int top)
{
	struct blocked b;
	int ret;

	memset(&b, 0, sizeof(b));
	ret = rp_folded_read(ar, ENTRY, add_stack, &b);
	if (ret == -ENOENT) {
		ret = 0;
	} else if (ret < 0) {
		rp_archive_perror(ar, ENTRY, ret);
	} else if (!b.total) {
		printf("\nOff-CPU time: none (" ENTRY " has no stacks)\n");
	} else {
		print_leaves(&b, top);
		ret = 1;
	}
	rp_counts_free(&b.leaves);
	return ret;
}
