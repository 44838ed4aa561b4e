/* Symbolizer throughput: lookups of random addresses in this process's own
 * executable mappings (program, libc, libelf, ld.so, vDSO) and in the
 * kernel's text, cold (first sight: reads the objects) and warm.  Prints
 * "key value" lines; bench/symbols/run.sh turns them into a table, and
 * writes the libc addresses it used for the addr2line comparison. */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/symbols/symbolizer.h"

#define N_ADDR 100000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct range {
	uint64_t start, end;
	int libc;
};

static struct tr_symbolizer *sym;
static uint64_t *addrs;
static pid_t self;

static void *spin(void *arg)
{
	long n = (long)arg;
	struct tracerig_symbol s;

	for (long i = 0; i < n; i++)
		tr_symbolizer_lookup(sym, self, addrs[i % N_ADDR], 0, &s);
	return NULL;
}

int main(int argc, char **argv)
{
	struct range r[64];
	size_t nr = 0;
	char line[512];
	FILE *maps = fopen("/proc/self/maps", "r"), *libc_out;
	struct tracerig_symbol s;
	long hits = 0, warm = 2000000;
	double t0, t;

	if (argc < 2 || !maps)
		return 2;
	libc_out = fopen(argv[1], "w");
	if (!libc_out)
		return 2;
	while (fgets(line, sizeof(line), maps) && nr < 64) {
		unsigned long long a, b, off;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s %llx", &a, &b, perms, &off) == 4 && perms[2] == 'x' &&
		    !strstr(line, "[vsyscall]"))
			r[nr++] = (struct range){ a, b, strstr(line, "/libc.so") != NULL };
	}
	fclose(maps);
	self = getpid();
	addrs = malloc(N_ADDR * sizeof(*addrs));
	sym = tr_symbolizer_new();
	if (!addrs || !sym)
		return 2;
	for (size_t i = 0; i < N_ADDR; i++) {
		struct range *m = &r[next_rand() % nr];

		addrs[i] = m->start + next_rand() % (m->end - m->start);
	}

	t0 = now();
	for (size_t i = 0; i < N_ADDR; i++)
		hits += tr_symbolizer_lookup(sym, self, addrs[i], 0, &s) == 0;
	t = now() - t0;
	printf("cold_user_seconds %.4f\ncold_user_lookups %d\nuser_resolved_pct %.1f\n", t, N_ADDR,
	       100.0 * hits / N_ADDR);
	/* The libc addresses, as file addresses, for addr2line. */
	for (size_t i = 0, n = 0; i < N_ADDR && n < 20000; i++) {
		if (tr_symbolizer_lookup(sym, self, addrs[i], 0, &s) == 0 && s.dso &&
		    strstr(s.dso, "/libc.so")) {
			fprintf(libc_out, "%#" PRIx64 " %s\n", s.dso_offset, s.name);
			n++;
		}
	}
	fclose(libc_out);

	t0 = now();
	spin((void *)warm);
	t = now() - t0;
	printf("warm_user_per_sec %.0f\n", warm / t);

	/* Two threads sharing the symbolizer (it takes one lock). */
	pthread_t th[2];
	t0 = now();
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, spin, (void *)(warm / 2));
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	t = now() - t0;
	printf("warm_user_2threads_per_sec %.0f\n", warm / t);

	/* Kernel text: _stext.._etext from kallsyms. */
	uint64_t kstart = 0, kend = 0;
	FILE *k = fopen("/proc/kallsyms", "r");
	while (k && fgets(line, sizeof(line), k)) {
		unsigned long long a;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		if (strcmp(name, "_stext") == 0)
			kstart = a;
		else if (strcmp(name, "_etext") == 0)
			kend = a;
	}
	if (k)
		fclose(k);
	if (kstart && kend > kstart) {
		for (size_t i = 0; i < N_ADDR; i++)
			addrs[i] = kstart + next_rand() % (kend - kstart);
		t0 = now();
		tr_symbolizer_lookup(sym, 0, addrs[0], 1, &s);
		printf("cold_kallsyms_seconds %.4f\n", now() - t0);
		t0 = now();
		for (long i = 0; i < warm; i++)
			tr_symbolizer_lookup(sym, 0, addrs[i % N_ADDR], 1, &s);
		printf("warm_kernel_per_sec %.0f\n", warm / (now() - t0));
	}
	tr_symbolizer_free(sym);
	free(addrs);
	return 0;
}
