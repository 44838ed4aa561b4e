/* A traced process that attacks its tracer through the files it controls.
 * It runs "JIT code" (a loop copied into anonymous executable memory, so
 * that samples land where the symbolizer reads its perf map), plants one
 * trap as /tmp/perf-<pid>.map or /tmp/jit-<pid>.dump, prints "pid=N" and
 * "ready", and spins until killed.
 *
 *   hostile link TARGET   the perf map is a symbolic link to TARGET
 *   hostile fifo          the perf map is a FIFO nobody writes
 *   hostile sparse BYTES  the perf map is a sparse file with no newline
 *   hostile names         the perf map names the code with ';', ESC, CR,
 *                         and the thread name has a newline
 *   hostile jitdump       a jitdump (mapped, as runtimes do) whose code name
 *                         holds newlines and a fake frame and sample line */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* loop: count down the first argument, return. */
#if defined(__x86_64__)
static const unsigned char spin_code[] = {
	0x48, 0x83, 0xef, 0x01, /* sub $1, %rdi */
	0x75, 0xfa,             /* jnz loop */
	0xc3,                   /* ret */
};
#elif defined(__aarch64__)
static const unsigned char spin_code[] = {
	0x00, 0x04, 0x00, 0xf1, /* subs x0, x0, #1 */
	0xe1, 0xff, 0xff, 0x54, /* b.ne loop */
	0xc0, 0x03, 0x5f, 0xd6, /* ret */
};
#else
#error "hostile: no spin loop for this architecture"
#endif

#define JIT_NAME_DUMP "fn\n\tffffffffdeadbeef injected_frame (/fake)\n\nfake 1/1 [000] 1.000000: 1 cpu-clock:"

static int write_jitdump(const char *path, uint64_t code, uint64_t size, const char *name)
{
	uint32_t hdr[10] = { 0x4A695444, 1, 40, 62, 0, (uint32_t)getpid() };
	uint32_t rec[4] = { 0, 0, 0, 0 };
	uint32_t ids[2] = { (uint32_t)getpid(), (uint32_t)getpid() };
	uint64_t load[4] = { code, code, size, 1 };
	FILE *f = fopen(path, "w+");
	size_t len;

	if (!f)
		return -1;
	rec[1] = (uint32_t)(16 + 8 + 32 + strlen(name) + 1);
	fwrite(hdr, 1, 40, f);
	fwrite(rec, 1, 16, f);
	fwrite(ids, 1, 8, f);
	fwrite(load, 1, 32, f);
	fwrite(name, 1, strlen(name) + 1, f);
	fflush(f);
	len = (size_t)ftell(f);
	/* Mapped executable: that is how perf, and tracerig, find it. */
	if (ferror(f) || mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(f), 0) ==
			       MAP_FAILED) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

static int plant(const char *mode, const char *arg, void *code)
{
	char map[64], dump[64];
	FILE *f;
	int fd;

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	snprintf(dump, sizeof(dump), "/tmp/jit-%d.dump", (int)getpid());
	if (strcmp(mode, "link") == 0 && arg)
		return symlink(arg, map);
	if (strcmp(mode, "fifo") == 0)
		return mkfifo(map, 0644);
	if (strcmp(mode, "sparse") == 0 && arg) {
		fd = open(map, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || ftruncate(fd, strtoll(arg, NULL, 0)) < 0)
			return -1;
		return close(fd);
	}
	if (strcmp(mode, "names") == 0) {
		if (prctl(PR_SET_NAME, "ev\nil;co\x1bm", 0, 0, 0) < 0)
			return -1;
		f = fopen(map, "w");
		if (!f)
			return -1;
		fprintf(f, "%lx 40 evil;frame\x1b[2Jname\rX\n", (unsigned long)(uintptr_t)code);
		return fclose(f);
	}
	if (strcmp(mode, "jitdump") == 0)
		return write_jitdump(dump, (uint64_t)(uintptr_t)code, 0x40, JIT_NAME_DUMP);
	errno = EINVAL;
	return -1;
}

int main(int argc, char **argv)
{
	long (*spin)(long);
	char self[64] = "";
	ssize_t n;
	void *code;

	if (argc < 2) {
		fprintf(stderr, "usage: hostile link TARGET|fifo|sparse BYTES|names|jitdump\n");
		return 2;
	}
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, spin_code, sizeof(spin_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) < 0) {
		perror("hostile: mprotect");
		return 1;
	}
	if (plant(argv[1], argc > 2 ? argv[2] : NULL, code) < 0) {
		perror("hostile: plant");
		return 1;
	}
	n = readlink("/proc/self", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	printf("pid=%s\nready\n", self);
	fflush(stdout);
	spin = (long (*)(long))code;
	for (;;)
		spin(1000000);
}
