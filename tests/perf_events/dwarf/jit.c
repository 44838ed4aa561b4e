/* The mixed-stack test's workload, built -O2 -fomit-frame-pointer: main ->
 * native_outer -> jit_code (generated at run time into anonymous memory,
 * named by /tmp/perf-PID.map, no CFI, with a frame pointer as JIT
 * compilers keep them) -> native_leaf.  Runs for argv[1] seconds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef unsigned long (*leaf_fn)(unsigned long);
typedef unsigned long (*jit_fn)(leaf_fn f, unsigned long x);

/* push %rbp; mov %rsp,%rbp; mov %rdi,%rax; mov %rsi,%rdi; call *%rax;
 * pop %rbp; ret: calls f(x) in a frame of its own. */
static const unsigned char jit_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0xff, 0xd0, 0x5d, 0xc3,
};

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long native_leaf(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

__attribute__((noinline)) static unsigned long native_outer(jit_fn jit, unsigned long x)
{
	unsigned long r = jit(native_leaf, x);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

int main(int argc, char **argv)
{
	double until = seconds() + (argc > 1 ? atof(argv[1]) : 2.0);
	unsigned long sum = 0;
	char map_path[64];
	jit_fn jit;
	FILE *map;
	void *code;

	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, jit_code, sizeof(jit_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) < 0)
		return 1;
	jit = (jit_fn)code;
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(map_path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx jit_code\n", (unsigned long)code, sizeof(jit_code));
	fclose(map);
	while (seconds() < until)
		sum = native_outer(jit, sum);
	unlink(map_path);
	__asm__ volatile("" : : "r"(sum));
	return 0;
}
