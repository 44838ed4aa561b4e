/* perf_events' conversion alone, on a perf.data already recorded: the
 * code tracerig runs in its flush (sc_convert into perf.data.txt and the
 * core's stack sink, tr_folded_write of cpu.folded) against a fresh symbolizer,
 * timed.  For comparing the conversion before and after a change on the
 * same files (their output must not change) and for profiling it under
 * valgrind or perf without recording again.
 *
 *   convert PERF_DATA TXT_OUT FOLDED_OUT [PPROF_OUT]
 *
 * Prints "samples N frames N unresolved N convert_ms X convert_cpu_ms Y
 * fold_ms Z", and with PPROF_OUT (cpu.pb.gz, built in the same pass as in
 * a flush, every sample labelled with one cgroup) "pprof_ms W" for its
 * writing.  Objects are found where the recording says they were (the
 * processes are usually gone): run it on the machine that recorded, with
 * the traced programs still in place. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tracerig/plugin.h>

#include "core/symbols/symbolizer.h"
#include "core/views/stacks.h"
#include "plugins/perf_events/collector.h"
#include "lib/folded.h"
#include "lib/pprof.h"
#include "plugins/perf_events/perffile.h"
#include "plugins/perf_events/script.h"

/* The feature bit of the events' attrs, names and ids (tools/perf/util/header.h). */
#define HEADER_EVENT_DESC 12
#define MAX_EVENTS 32

/* The session's context, as far as the conversion's services need it. */
struct tracerig_ctx {
	struct tr_symbolizer *sym;
};

static int svc_mmap(struct tracerig_ctx *ctx, const struct tracerig_mapping *m)
{
	return tr_symbolizer_record_mmap(ctx->sym, m);
}

static int svc_exec(struct tracerig_ctx *ctx, pid_t pid)
{
	return tr_symbolizer_record_exec(ctx->sym, pid);
}

static int svc_fork(struct tracerig_ctx *ctx, pid_t parent, pid_t child)
{
	return tr_symbolizer_record_fork(ctx->sym, parent, child);
}

static int svc_frame_name(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
			  uint64_t time_ns, const char **name, struct tracerig_symbol *sym)
{
	return tr_symbolizer_frame_name_at(ctx->sym, pid, addr, kernel, time_ns, name, sym);
}

static int svc_frame_generation(struct tracerig_ctx *ctx, pid_t pid, uint32_t *gen)
{
	return tr_symbolizer_frame_generation(ctx->sym, pid, gen);
}

static int svc_object(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr,
		      struct tracerig_object *out)
{
	return tr_symbolizer_object(ctx->sym, pid, addr, out);
}

static int svc_mapping(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
		       struct tracerig_frame_mapping *out)
{
	return tr_symbolizer_mapping(ctx->sym, pid, addr, kernel, out);
}

/* A container's path as long as a systemd scope's: what the label costs. */
static const char *svc_cgroup(struct tracerig_ctx *ctx, pid_t pid)
{
	(void)ctx;
	(void)pid;
	return "/user.slice/user-0.slice/session-1.scope";
}

/* Reads n bytes at *pos of the section [0, len), moving on. */
static int take(const unsigned char *sec, size_t len, size_t *pos, void *out, size_t n)
{
	if (n > len - *pos)
		return -EINVAL;
	memcpy(out, sec + *pos, n);
	*pos += n;
	return 0;
}

/* The events of the file from its HEADER_EVENT_DESC (attr, name, ids), as
 * the collector would hand them to the conversion. */
static int read_events(const unsigned char *map, size_t size, struct pc_opened *ev, size_t *n_ev)
{
	const struct pd_file_header *fh = (const void *)map;
	const struct pd_file_section *table;
	struct pd_file_section desc;
	size_t k = 0, pos = 0;
	uint32_t nr, attr_size;

	if (size < sizeof(*fh) || fh->magic != PD_MAGIC ||
	    fh->data.offset + fh->data.size > size)
		return -EINVAL;
	if (!(fh->adds_features[0] & (1ull << HEADER_EVENT_DESC)))
		return -ENOENT;
	for (int bit = 0; bit < HEADER_EVENT_DESC; bit++)
		k += (fh->adds_features[0] >> bit) & 1;
	table = (const void *)(map + fh->data.offset + fh->data.size);
	if ((const unsigned char *)(table + k + 1) > map + size)
		return -EINVAL;
	desc = table[k];
	if (desc.offset > size || desc.size > size - desc.offset)
		return -EINVAL;
	map += desc.offset;
	if (take(map, desc.size, &pos, &nr, 4) < 0 || take(map, desc.size, &pos, &attr_size, 4) < 0 ||
	    nr > MAX_EVENTS)
		return -EINVAL;
	for (uint32_t i = 0; i < nr; i++) {
		struct pc_opened *e = &ev[i];
		uint32_t n_ids, name_len;
		char name[sizeof(e->spec.name)], hint[256];

		memset(e, 0, sizeof(*e));
		if (attr_size > desc.size - pos)
			return -EINVAL;
		memcpy(&e->attr, map + pos, attr_size < sizeof(e->attr) ? attr_size : sizeof(e->attr));
		pos += attr_size;
		if (take(map, desc.size, &pos, &n_ids, 4) < 0 ||
		    take(map, desc.size, &pos, &name_len, 4) < 0 || name_len == 0 ||
		    name_len > desc.size - pos)
			return -EINVAL;
		snprintf(name, sizeof(name), "%.*s", (int)name_len, (const char *)map + pos);
		pos += name_len;
		/* The name as a profile writes it: the tracepoints' sys:event too. */
		if (ev_parse(name, &e->spec, hint, sizeof(hint)) < 0)
			snprintf(e->spec.name, sizeof(e->spec.name), "%s", name);
		e->ids = calloc(n_ids ? n_ids : 1, sizeof(*e->ids));
		if (!e->ids)
			return -ENOMEM;
		e->n_ids = n_ids;
		*n_ev = i + 1;
		if (take(map, desc.size, &pos, e->ids, n_ids * sizeof(*e->ids)) < 0)
			return -EINVAL;
	}
	return nr ? 0 : -ENOENT;
}

static double ms_since(clockid_t clock, const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(clock, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static FILE *create(const char *path)
{
	FILE *f = fopen(path, "we");

	/* The buffer perf_events gives its entries. */
	if (f)
		setvbuf(f, NULL, _IOFBF, 1 << 20);
	else
		fprintf(stderr, "convert: cannot create %s: %s\n", path, strerror(errno));
	return f;
}

int main(int argc, char **argv)
{
	static const struct tracerig_symbol_services symbols = { .frame_name = svc_frame_name };
	static const struct tracerig_internal_services internal = {
		.symbolizer_mmap = svc_mmap,
		.symbolizer_exec = svc_exec,
		.symbolizer_fork = svc_fork,
		.symbolizer_object = svc_object,
		.frame_generation = svc_frame_generation,
		.symbolizer_mapping = svc_mapping,
		.process_cgroup = svc_cgroup,
		.stacks_add = tr_stacks_add,
	};
	/* No core: what the conversion asks of the run (log, counters) it skips. */
	static const struct tracerig_run_services no_run = { 0 };
	static const struct tracerig_process_services no_procs = { 0 };
	static const struct tracerig_archive_services no_archive = { 0 };
	struct tracerig_services svc = { .run = &no_run,
					 .procs = &no_procs,
					 .symbols = &symbols,
					 .archive = &no_archive,
					 .internal = &internal };
	struct tracerig_stacks_spec spec = { .name = "cpu",
					     .title = "CPU samples",
					     .what = TRACERIG_TIME_ONCPU };
	struct tracerig_stacks *sink = NULL;
	const struct tr_folded *folded;
	struct pp_builder *pp;
	FILE *pf = NULL;
	struct tracerig_ctx ctx = { 0 };
	struct pc_opened ev[MAX_EVENTS];
	struct unwinder *uw = NULL;
	struct sc_stats st;
	struct timespec wall0, cpu0;
	double convert_ms, convert_cpu_ms, fold_ms = 0, pprof_ms = 0;
	FILE *txt = NULL, *ff = NULL;
	size_t n_ev = 0;
	struct stat sb;
	void *map = MAP_FAILED;
	char why[1024];
	int fd, ret = 1;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: %s PERF_DATA TXT_OUT FOLDED_OUT [PPROF_OUT]\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0 ||
	    (map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		fprintf(stderr, "convert: cannot read %s: %s\n", argv[1], strerror(errno));
		goto out;
	}
	if (read_events(map, (size_t)sb.st_size, ev, &n_ev) < 0) {
		fprintf(stderr, "convert: %s has no readable event description\n", argv[1]);
		goto out;
	}
	ctx.sym = tr_symbolizer_new();
	spec.period = ev[0].attr.freq && ev[0].attr.sample_freq
			      ? 1000000000 / ev[0].attr.sample_freq
			      : ev[0].attr.sample_period;
	sink = tr_stacks_open(&svc, &ctx, &spec, argc == 5, NULL);
	txt = create(argv[2]);
	ff = create(argv[3]);
	/* callchain = dwarf recordings: the user stacks are unwound, as in a flush. */
	if (ev[0].attr.sample_type & PERF_SAMPLE_REGS_USER)
		uw = uw_new(&svc, &ctx, NULL);
	if (argc == 5)
		pf = create(argv[4]);
	if (!ctx.sym || !sink || !txt || !ff || (argc == 5 && !pf) ||
	    ((ev[0].attr.sample_type & PERF_SAMPLE_REGS_USER) && !uw)) {
		fprintf(stderr, "convert: cannot start\n");
		goto out;
	}
	/* The vDSO is the kernel's, the same image in every process: a
	 * session reads it from the traced processes while they live; here
	 * this process's stands in for theirs, gone by now. */
	(void)tr_symbolizer_remember(ctx.sym, getpid());
	clock_gettime(CLOCK_MONOTONIC, &wall0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
	if (sc_convert(argv[1], ev, n_ev, txt, sink, &svc, &ctx, uw, NULL, &st, why, sizeof(why)) <
	    0) {
		fprintf(stderr, "convert: %s\n", why);
		goto out;
	}
	convert_ms = ms_since(CLOCK_MONOTONIC, &wall0);
	convert_cpu_ms = ms_since(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
	clock_gettime(CLOCK_MONOTONIC, &wall0);
	folded = tr_stacks_folded(sink);
	pp = tr_stacks_pprof(sink);
	if (!folded || tr_folded_write(folded, ff, 1) < 0 || fflush(ff) != 0) {
		fprintf(stderr, "convert: cannot write %s\n", argv[3]);
		goto out;
	}
	fold_ms = ms_since(CLOCK_MONOTONIC, &wall0);
	if (pp) {
		clock_gettime(CLOCK_MONOTONIC, &wall0);
		if (pp_write_gz(pp, pf) < 0 || fflush(pf) != 0) {
			fprintf(stderr, "convert: cannot write %s\n", argv[4]);
			goto out;
		}
		pprof_ms = ms_since(CLOCK_MONOTONIC, &wall0);
	}
	printf("samples %llu frames %llu unresolved %llu convert_ms %.1f convert_cpu_ms %.1f "
	       "fold_ms %.1f", (unsigned long long)st.samples, (unsigned long long)st.frames,
	       (unsigned long long)st.unresolved, convert_ms, convert_cpu_ms, fold_ms);
	if (pp)
		printf(" pprof_ms %.1f", pprof_ms);
	printf("\n");
	ret = 0;
out:
	if (txt && fclose(txt) != 0)
		ret = 1;
	if (ff && fclose(ff) != 0)
		ret = 1;
	if (pf && fclose(pf) != 0)
		ret = 1;
	tr_stacks_close(sink);
	uw_free(uw);
	tr_symbolizer_free(ctx.sym);
	for (size_t i = 0; i < n_ev; i++)
		free(ev[i].ids);
	if (map != MAP_FAILED)
		munmap(map, (size_t)sb.st_size);
	if (fd >= 0)
		close(fd);
	return ret;
}
