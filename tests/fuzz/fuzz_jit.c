/* libFuzzer target: the symbolizer's JIT readers (core/symbols/jit.c), the
 * perf-PID.map text reader and the jit-PID.dump reader, fed as the
 * symbolizer is fed: a file a runtime keeps appending to (or rewrites),
 * read incrementally through tr_jit_refresh().
 *
 * Input: byte 0 says where to cut the rest (in 255ths) and, in its low bit,
 * whether the second part is appended (a runtime writing on) or replaces
 * the file (a runtime restarted with the same PID).  Bytes 1..8 are an
 * address to look up besides every symbol's own start. */
#include "config.h"

#include <assert.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/symbols/jit.h"

static char map_path[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cleanup(void)
{
	char dir[sizeof(map_path)];
	char *slash;

	unlink(map_path);
	snprintf(dir, sizeof(dir), "%s", map_path);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		rmdir(dir);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char dir[sizeof(map_path) - 32];

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/tracerig-fuzz-jit.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	/* The reader must not care about the name: perf-1.map can hold a jitdump. */
	snprintf(map_path, sizeof(map_path), "%s/perf-1.map", dir);
	atexit(cleanup);
	return 0;
}

static void put(const uint8_t *data, size_t size, int append)
{
	int fd = open(map_path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC),
		      0600);

	if (fd < 0)
		abort();
	while (size) {
		ssize_t n = write(fd, data, size);

		if (n <= 0)
			abort();
		data += n;
		size -= (size_t)n;
	}
	close(fd);
}

static void check_lookups(struct tr_jit *j, uint64_t extra)
{
	struct tr_sym *s = tr_jit_find(j, extra);

	if (s)
		assert(extra - s->start < s->size);
	for (size_t i = 0; i < j->syms.n; i++) {
		uint64_t addr = j->syms.syms[i].start;

		s = tr_jit_find(j, addr);
		assert(s && s->name && addr - s->start < s->size);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_jit j;
	struct tr_arena arena = { 0 };
	uint64_t extra = 0;
	size_t cut;
	int append;

	if (size < 9)
		return 0;
	append = !(data[0] & 1);
	cut = (size_t)data[0] * (size - 9) / 255;
	memcpy(&extra, data + 1, sizeof(extra));
	data += 9;
	size -= 9;

	memset(&j, 0, sizeof(j));
	put(data, cut, 0);
	/* Read through our own root, as the symbolizer reads a traced process's. */
	if (tr_jit_add_source(&j, map_path, getpid()) < 0)
		abort();
	tr_jit_refresh(&j, &arena);
	check_lookups(&j, extra);

	put(data + cut, size - cut, append);
	tr_jit_refresh(&j, &arena);
	check_lookups(&j, extra);
	/* Nothing new: a third read must change nothing. */
	tr_jit_refresh(&j, &arena);
	check_lookups(&j, extra);

	tr_jit_free(&j);
	tr_arena_free(&arena);
	return 0;
}
