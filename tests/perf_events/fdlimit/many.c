/* The fdlimit test's workload, built -O2 -fomit-frame-pointer: dlopens
 * argv[2] objects DIR/libNNN.so (argv[1] is DIR), each with one hot
 * function hot_NNN, and calls them in turn, main -> call_one -> hot_NNN,
 * for argv[3] seconds of its own CPU time (as many samples however busy
 * the machine).  Without frame pointers only their CFI takes a sample
 * from hot_NNN back to main. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef unsigned long (*hot_fn)(unsigned long);

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long call_one(hot_fn f, unsigned long x)
{
	unsigned long r = f(x);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

int main(int argc, char **argv)
{
	unsigned long x = 1;
	hot_fn *fns;
	double end;
	int n;

	if (argc != 4 || (n = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: %s DIR COUNT SECONDS\n", argv[0]);
		return 2;
	}
	fns = calloc((size_t)n, sizeof(*fns));
	if (!fns)
		return 1;
	for (int i = 0; i < n; i++) {
		char path[4096], name[32];
		void *h;

		snprintf(path, sizeof(path), "%s/lib%03d.so", argv[1], i);
		snprintf(name, sizeof(name), "hot_%03d", i);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h || !(fns[i] = (hot_fn)(void (*)(void))dlsym(h, name))) {
			fprintf(stderr, "%s: %s\n", path, dlerror());
			return 1;
		}
	}
	end = seconds() + atof(argv[3]);
	while (seconds() < end)
		for (int i = 0; i < n; i++)
			x = call_one(fns[i], x);
	printf("%lu\n", x & 1);
	return 0;
}
