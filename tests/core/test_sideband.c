/* The core's side-band recording against the real kernel (root): execs
 * of /bin/true are recorded and replayed into the process model; with the
 * spill file on a full disk, what did not fit is dropped and counted and
 * what did is still replayed. */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/archive/sideband.h"
#include "../../core/symbols/symbolizer.h"
#include "../testing.h"

#define EXECS 1500

static int run_true(int times)
{
	for (int i = 0; i < times; i++) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			return -errno;
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			return -ECHILD;
	}
	return 0;
}

/* Records a session of EXECS execs with the spill file in `dir`. */
static int record(const char *dir, struct tr_sideband_counts *c)
{
	struct tr_symbolizer *sym = tr_symbolizer_new();
	struct tr_sideband *sb = NULL;
	char why[256] = "";
	int ret;

	if (!sym)
		return -ENOMEM;
	ret = tr_sideband_open(&sb, sym, NULL, dir, why, sizeof(why));
	if (ret == 0)
		ret = tr_sideband_start(sb);
	if (ret == 0)
		ret = run_true(EXECS);
	if (ret == 0) {
		tr_sideband_stop(sb);
		tr_sideband_replay(sb);
		tr_sideband_counts(sb, c);
	} else {
		fprintf(stderr, "# %s: %s\n", why, strerror(-ret));
	}
	tr_sideband_free(sb);
	tr_symbolizer_free(sym);
	return ret;
}

static char dir[] = TR_ABS_BUILDDIR "/tests/core/sideband.XXXXXX";

DEF_TEST(spilled_to_disk)
{
	struct tr_sideband_counts c = { 0 };

	EXPECT_EQ_INT(0, record(dir, &c));
	/* Each exec is a COMM and at least the program's and ld.so's mappings. */
	EXPECT_TRUE(c.records >= 3 * EXECS);
	EXPECT_TRUE(c.replayed >= 3 * EXECS);
	EXPECT_EQ_INT(0, (int)c.dropped);
}

DEF_TEST(in_memory)
{
	struct tr_sideband_counts c = { 0 };

	EXPECT_EQ_INT(0, record(NULL, &c));
	EXPECT_TRUE(c.replayed >= 3 * EXECS);
	EXPECT_EQ_INT(0, (int)c.dropped);
}

/* A 64 KiB tmpfs: the first 1 MiB write stops short. */
DEF_TEST(disk_full)
{
	char full[sizeof(dir) + 8];
	struct tr_sideband_counts c = { 0 };

	snprintf(full, sizeof(full), "%s/full", dir);
	if (mkdir(full, 0700) < 0 || mount("tmpfs", full, "tmpfs", 0, "size=64k") < 0) {
		TEST_FAIL("cannot mount a small tmpfs on %s: %s", full, strerror(errno));
		return;
	}
	EXPECT_EQ_INT(0, record(full, &c));
	EXPECT_TRUE(c.dropped > 0);
	/* What fitted in 64 KiB is replayed (about 500 records). */
	EXPECT_TRUE(c.replayed > 100);
	EXPECT_TRUE(c.replayed + c.dropped <= c.records);
	umount2(full, MNT_DETACH);
	rmdir(full);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root (perf events)\n");
		return 0;
	}
	/* Private mounts: the tmpfs goes away with the test. */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		printf("1..0 # SKIP cannot make a private mount namespace: %s\n", strerror(errno));
		return 0;
	}
	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP cannot create %s: %s\n", dir, strerror(errno));
		return 0;
	}
	RUN_TEST(spilled_to_disk);
	RUN_TEST(in_memory);
	RUN_TEST(disk_full);
	rmdir(dir);
	TEST_MAIN_END();
}
