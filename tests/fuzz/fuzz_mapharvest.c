/* libFuzzer target: mapharvest's parsers of what a traced process controls
 * (plugins/mapharvest/procinfo.c: /proc/PID/status, the environment and
 * command line, the working directory; jitdump.c: the PID rewrite of a
 * harvested jit-PID.dump, in place).
 *
 * Input: byte 0 picks the parser; for the runtime settings bytes 1-2 say
 * where the environment block ends and the command line starts (the rest),
 * and byte 3 whether the working directory is known. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugins/mapharvest/jitdump.h"
#include "plugins/mapharvest/procinfo.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int dump_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	dump_fd = memfd_create("jit-1.dump", MFD_CLOEXEC);
	if (dump_fd < 0) {
		perror("memfd_create");
		abort();
	}
	return 0;
}

/* An exact-size copy, so that reading one byte too far is an ASan report. */
static char *copy(const uint8_t *data, size_t size, int terminate)
{
	char *c = malloc(size + (terminate ? 1 : 0));

	if (!c && size + (terminate ? 1 : 0))
		abort();
	if (size)
		memcpy(c, data, size);
	if (terminate)
		c[size] = '\0';
	return c;
}

static void fuzz_status(const uint8_t *data, size_t size)
{
	char *text = copy(data, size, 1);
	pid_t tgid = -1, nstgid = -1;
	int kthread = -1;

	if (mh_parse_status(text, &tgid, &nstgid, &kthread) == 0)
		assert(tgid > 0 && nstgid > 0);
	assert(kthread == 0 || kthread == 1);
	free(text);
}

static void fuzz_runtime(const uint8_t *data, size_t size)
{
	/* mh_cwd_in_root gives absolute paths or NULL. */
	static const char *const cwds[] = { NULL, "/", "/srv/app", "/srv/app/" };
	struct mh_runtime rt;
	size_t env_len;
	const char *cwd;
	char *env, *cmd;

	if (size < 3)
		return;
	env_len = ((size_t)data[0] | (size_t)data[1] << 8) % (size - 2);
	cwd = cwds[data[2] % 4];
	data += 3;
	size -= 3;
	/* /proc blocks are NUL-separated but need not end with a NUL. */
	env = copy(data, env_len, 0);
	cmd = copy(data + env_len, size - env_len, 0);
	if (mh_runtime_parse(&rt, env, env_len, cmd, size - env_len, cwd) == 0) {
		assert(rt.n_dirs <= MH_MAX_DIRS);
		for (size_t i = 0; i < rt.n_dirs; i++)
			assert(rt.dirs[i] && rt.dirs[i][0] == '/');
		assert(memchr(rt.why, '\0', sizeof(rt.why)));
		mh_runtime_free(&rt);
	}
	free(env);
	free(cmd);
}

static void fuzz_cwd(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t root_len = nul ? (size_t)(nul - data) : size / 2;
	char *root = copy(data, root_len, 1);
	char *cwd = copy(data + root_len + (nul ? 1 : 0), size - root_len - (nul ? 1 : 0), 1);
	char *in_root = mh_cwd_in_root(root, cwd);

	if (in_root)
		assert(in_root[0] == '/');
	free(in_root);
	free(root);
	free(cwd);
}

static void fuzz_jitdump(const uint8_t *data, size_t size)
{
	pid_t nspid, hostpid;
	struct stat st;
	size_t done = 0;
	int64_t n;

	if (size < 2)
		return;
	/* Small PIDs, so that the records' PIDs (1, 2, ...) match now and then. */
	nspid = data[0] % 4;
	hostpid = 1000 + data[1];
	data += 2;
	size -= 2;
	if (ftruncate(dump_fd, 0) < 0)
		abort();
	while (done < size) {
		ssize_t w = pwrite(dump_fd, data + done, size - done, (off_t)done);

		if (w <= 0)
			abort();
		done += (size_t)w;
	}
	n = mh_jitdump_set_pid(dump_fd, size, nspid, hostpid);
	assert(n >= 0 || n == -EINVAL);
	/* Rewritten in place: never a byte more. */
	if (fstat(dump_fd, &st) < 0)
		abort();
	assert((size_t)st.st_size == size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 4) {
	case 0: fuzz_status(data + 1, size - 1); break;
	case 1: fuzz_runtime(data + 1, size - 1); break;
	case 2: fuzz_cwd(data + 1, size - 1); break;
	case 3: fuzz_jitdump(data + 1, size - 1); break;
	}
	return 0;
}
