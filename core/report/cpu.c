#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "folded.h"
#include "lib/folded.h"
#include "perfscript.h"
#include "profile.h"
#include "text.h"

#define FOLDED "cpu.folded"
#define SCRIPT "perf.data.txt"
#define BPF_FOLDED "oncpu.folded" /* ebpf's sampler (oncpu = yes): the same lines */

/* A cpu.folded line: "comm-PID;tcomm-TID;outermost;...;leaf" (lib/folded.h),
 * or "comm-PID;outermost;...;leaf" in archives written before the thread
 * frame.  The thread's name is the one a sample is counted under. */
static int add_folded(void *arg, char *stack, uint64_t weight)
{
	struct rp_profile *p = arg;
	struct tr_folded_rootinfo root;
	char *frame;
	int ret;

	tr_folded_root_parse(stack, &root);
	frame = (char *)root.frames;
	if (root.tcomm) {
		((char *)root.tcomm)[root.tcomm_len] = '\0';
		ret = rp_profile_begin(p, root.tcomm, root.pid, weight);
	} else {
		stack[root.comm_len] = '\0';
		ret = rp_profile_begin(p, stack, root.pid, weight);
	}
	while (ret == 0 && frame) {
		char *next = strchr(frame, ';');

		ret = rp_profile_frame(p, frame, next ? (size_t)(next - frame) : strlen(frame),
				       next == NULL);
		frame = next ? next + 1 : NULL;
	}
	return ret < 0 ? ret : rp_profile_end(p);
}

static void print_functions(struct rp_profile *p, int top)
{
	struct rp_counts *f = &p->funcs;
	size_t n = f->n < (size_t)top ? f->n : (size_t)top, n_self = 0;

	rp_counts_sort_by_self(f);
	while (n_self < n && f->items[n_self].self)
		n_self++;
	printf("\nTop %zu functions by self samples (where the CPU was):\n", n_self);
	printf("  %9s %7s  %s\n", "samples", "%", "function");
	for (size_t i = 0; i < n_self; i++)
		printf("  %9" PRIu64 " %6.1f%%  %s\n", f->items[i].self,
		       rp_percent(f->items[i].self, p->samples), rp_tty(f->items[i].name));

	rp_counts_sort_by_total(f);
	printf("\nTop %zu functions by total samples (on the stack, once per sample):\n", n);
	printf("  %9s %7s  %s\n", "samples", "%", "function");
	for (size_t i = 0; i < n; i++)
		printf("  %9" PRIu64 " %6.1f%%  %s\n", f->items[i].total,
		       rp_percent(f->items[i].total, p->samples), rp_tty(f->items[i].name));
}

/* A process is shown by its busiest thread name, the others after it. */
static void print_process(const struct rp_count *c, uint64_t samples)
{
	int best = 0, names = 0;

	for (int k = 0; k < RP_MAX_COMMS && c->comms[k].name; k++, names++)
		if (c->comms[k].n > c->comms[best].n)
			best = k;
	printf("  %9" PRIu64 " %6.1f%%  %s", c->self, rp_percent(c->self, samples),
	       c->comms[0].name ? rp_tty(c->comms[best].name) : "?");
	if (c->pid >= 0)
		printf(" %ld", c->pid);
	if (names > 1)
		printf("  (and thread names:");
	for (int k = 0; names > 1 && k < names; k++)
		if (k != best)
			printf(" %s", rp_tty(c->comms[k].name));
	printf("%s\n", names > 1 ? ")" : "");
}

static void print_processes(struct rp_profile *p, int top)
{
	struct rp_counts *pr = &p->procs;
	size_t n = pr->n < (size_t)top ? pr->n : (size_t)top;

	rp_counts_sort_by_self(pr);
	printf("\nProcesses (%zu):\n", pr->n);
	printf("  %9s %7s  %s\n", "samples", "%", "process (pid)");
	for (size_t i = 0; i < n; i++)
		print_process(&pr->items[i], p->samples);
	if (pr->n > n)
		printf("  ... %zu more processes\n", pr->n - n);
}

static void print_samples(struct rp_profile *p, const char *entry, int top)
{
	printf("\nCPU samples: %" PRIu64 " in %s", p->samples, entry);
	for (size_t i = 0; i < p->n_events; i++)
		printf("%s%s %" PRIu64, i ? ", " : " (", rp_tty(p->events[i]), p->event_samples[i]);
	printf("%s\n", p->n_events ? ")" : "");
	print_functions(p, top);
	print_processes(p, top);
}

int rp_report_cpu(struct rp_archive *ar, int top)
{
	struct rp_profile p;
	const char *entry;
	int ret;

	memset(&p, 0, sizeof(p));
	/* The stacks tracerig folded itself, when it did: a fraction of the
	 * text, and no `perf script` format to guess at. */
	if (rp_archive_has(ar, FOLDED)) {
		entry = FOLDED;
		ret = rp_folded_read(ar, entry, add_folded, &p);
	} else if (rp_archive_has(ar, SCRIPT)) {
		entry = SCRIPT;
		ret = rp_perfscript_read(ar, entry, &p);
	} else if (rp_archive_has(ar, BPF_FOLDED)) {
		entry = BPF_FOLDED;
		ret = rp_folded_read(ar, entry, add_folded, &p);
	} else {
		printf("\nCPU samples: none (the archive has no " SCRIPT ", " FOLDED
		       " nor " BPF_FOLDED ": no on-CPU source ran, or it wrote nothing)\n");
		return 0;
	}
	if (ret < 0) {
		rp_archive_perror(ar, entry, ret);
	} else if (!p.samples) {
		printf("\nCPU samples: none (%s has no samples)\n", entry);
	} else {
		print_samples(&p, entry, top);
		ret = 1;
	}
	rp_profile_free(&p);
	return ret;
}
