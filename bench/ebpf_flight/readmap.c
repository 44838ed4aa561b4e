/* What reading the ebpf backend's aggregation costs (flight mode reads it
 * at every bucket): a hash map of the `agg` map's key and value sizes
 * (plugins/ebpf/offcpu.h), filled with N entries, read key by key
 * (get_next_key + lookup, two system calls an entry) and in batches of
 * 4096 (BPF_MAP_LOOKUP_BATCH), as plugins/ebpf/collector.c's oc_read does.
 * Median of 5 reads each; prints a table row.  Run by
 * bench/ebpf_flight/run.sh (as root): readmap N. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <linux/types.h>
#include <bpf/bpf.h>

#include "offcpu.h"

#define REPS 5
#define BATCH 4096

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static size_t walk(int fd)
{
	struct offcpu_key key, next;
	struct offcpu_val v;
	void *prev = NULL;
	size_t n = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		n += bpf_map_lookup_elem(fd, &next, &v) == 0;
		key = next;
		prev = &key;
	}
	return n;
}

static size_t batch(int fd, struct offcpu_key *keys, struct offcpu_val *vals)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u64 token = 0;
	size_t n = 0;
	int first = 1;

	for (;;) {
		__u32 count = BATCH;
		int ret = bpf_map_lookup_batch(fd, first ? NULL : &token, &token, keys, vals,
					       &count, &opts);

		n += count;
		first = 0;
		if (ret < 0)
			return n;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 65536, fd;
	struct offcpu_key *keys = malloc(BATCH * sizeof(*keys));
	struct offcpu_val *vals = malloc(BATCH * sizeof(*vals));
	double t_walk[REPS], t_batch[REPS];
	size_t got_walk = 0, got_batch = 0;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "agg", sizeof(struct offcpu_key),
			    sizeof(struct offcpu_val), 65536, NULL);
	if (fd < 0 || !keys || !vals) {
		perror("bpf_map_create");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct offcpu_key k = { .tgid = 1, .pid = (__u32)i, .kstack = 2 + (__u64)i * 7,
					.ustack = 2 + (__u64)i * 13 };
		struct offcpu_val v = { .weighted_ns = (__u64)i, .count = 1 };

		bpf_map_update_elem(fd, &k, &v, BPF_ANY);
	}
	for (int r = 0; r < REPS; r++) {
		double t0 = now_ms();

		got_walk = walk(fd);
		t_walk[r] = now_ms() - t0;
		t0 = now_ms();
		got_batch = batch(fd, keys, vals);
		t_batch[r] = now_ms() - t0;
	}
	qsort(t_walk, REPS, sizeof(double), cmp);
	qsort(t_batch, REPS, sizeof(double), cmp);
	printf("| %d | %.1f ms | %.1f ms |\n", n, t_walk[REPS / 2], t_batch[REPS / 2]);
	if (got_walk != (size_t)n || got_batch != (size_t)n)
		fprintf(stderr, "read %zu and %zu entries of %d\n", got_walk, got_batch, n);
	return 0;
}
