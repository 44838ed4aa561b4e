/* A process with known functions for the symbolizer tests.  It prints
 * "name=0xADDRESS" lines (and "pid=" its host PID), then waits until its
 * stdin closes.  argv[1]: a shared library to dlopen.  With
 * TR_FIXTURE_PERFMAP set it writes its own /tmp/perf-<its pid>.map, as a JIT
 * runtime does, naming code in an anonymous executable mapping; with
 * TR_FIXTURE_JITDUMP, a /tmp/jit-<its pid>.dump that it maps, as runtimes do. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))

NOINLINE int tr_fixture_alpha(int x);
NOINLINE int tr_fixture_alpha(int x)
{
	return x * 3 + 1;
}

NOINLINE static int fixture_local(int x)
{
	return x ^ 0x5a;
}

/* A C++-mangled symbol without a C++ compiler: tr::fixture::spin(int),
 * shown as "tr::fixture::spin" like perf does. */
NOINLINE int fixture_spin(int x) __asm__("_ZN2tr7fixture4spinEi");
NOINLINE int fixture_spin(int x)
{
	return x + 7;
}

/* A jitdump with one JIT_CODE_LOAD record, mapped as runtimes map theirs. */
static int write_jitdump(uint64_t code, const char *name)
{
	uint32_t hdr[10] = { 0x4A695444, 1, 40, 62, 0, (uint32_t)getpid() };
	uint32_t rec[4] = { 0, 0, 0, 0 };
	uint32_t ids[2] = { (uint32_t)getpid(), (uint32_t)getpid() };
	uint64_t load[4] = { code, code, 0x40, 1 };
	unsigned char body[0x40];
	char path[64];
	FILE *f;
	void *map;
	size_t len;

	snprintf(path, sizeof(path), "/tmp/jit-%d.dump", (int)getpid());
	f = fopen(path, "w+");
	if (!f)
		return -1;
	rec[1] = (uint32_t)(16 + 8 + 32 + strlen(name) + 1 + sizeof(body));
	memset(body, 0xcc, sizeof(body));
	fwrite(hdr, 1, 40, f);
	fwrite(rec, 1, 16, f);
	fwrite(ids, 1, 8, f);
	fwrite(load, 1, 32, f);
	fwrite(name, 1, strlen(name) + 1, f);
	fwrite(body, 1, sizeof(body), f);
	fflush(f);
	len = (size_t)ftell(f);
	map = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(f), 0);
	fclose(f);
	return map == MAP_FAILED ? -1 : 0;
}

static void show(const char *name, const void *addr)
{
	printf("%s=%#lx\n", name, (unsigned long)(uintptr_t)addr);
}

int main(int argc, char **argv)
{
	char self[64] = "";
	ssize_t n;
	void *lib = NULL, *anon;
	char c;

	/* The host PID: our /proc is the host's even in a new PID namespace. */
	n = readlink("/proc/self", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	printf("pid=%s\n", n > 0 ? self : "0");
	show("alpha", (const void *)tr_fixture_alpha);
	show("local", (const void *)fixture_local);
	show("spin", (const void *)fixture_spin);
	if (argc > 1) {
		lib = dlopen(argv[1], RTLD_NOW);
		if (!lib) {
			fprintf(stderr, "fixture: dlopen %s: %s\n", argv[1], dlerror());
			return 1;
		}
		show("lib", dlsym(lib, "tr_fixture_lib_func"));
		void *(*getter)(void) = (void *(*)(void))dlsym(lib, "tr_fixture_lib_local_addr");
		if (getter)
			show("liblocal", getter());
	}
	/* Stands for JIT code: anonymous, executable. */
	anon = mmap(NULL, 65536, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED) {
		perror("fixture: mmap");
		return 1;
	}
	show("anon", anon);
	if (getenv("TR_FIXTURE_PERFMAP")) {
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		f = fopen(path, "w");
		if (!f) {
			perror("fixture: perf map");
			return 1;
		}
		fprintf(f, "%lx 20 ns_jit_func\n", (unsigned long)(uintptr_t)anon + 0x200);
		fclose(f);
	}
	if (getenv("TR_FIXTURE_JITDUMP") &&
	    write_jitdump((uint64_t)(uintptr_t)anon + 0x600, "auto_dumped_fn") < 0) {
		perror("fixture: jitdump");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	tr_fixture_alpha(fixture_local(fixture_spin(1)));
	if (lib)
		dlclose(lib);
	munmap(anon, 65536);
	return 0;
}
