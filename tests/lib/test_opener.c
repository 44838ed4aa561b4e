/* lib/opener: once started, lib/untrusted's opens run in the helper
 * process and come back as they would directly (fds, refusals, stat),
 * from many threads at once; before the start, after the stop and in a
 * forked child they are direct.  (A file system that does not answer is
 * tests/perf_events/fuse.sh: it needs root and FUSE.) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/opener.h"
#include "lib/untrusted.h"
#include "../testing.h"

static char tmpdir[] = "/tmp/test_opener.XXXXXX";
static char file[300], link_path[300];

static int contents_are(int fd, const char *want)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return 0;
	buf[n] = '\0';
	return strcmp(buf, want) == 0;
}

DEF_TEST(opens_are_direct_before_the_start)
{
	EXPECT_EQ_INT(0, tr_opener_active());
}

DEF_TEST(an_open_comes_back_with_the_files_stat)
{
	struct tr_untrusted u;
	struct stat st;
	int fd;

	EXPECT_EQ_INT(1, tr_opener_active());
	fd = tr_untrusted_open(0, file, 1024, &u);
	EXPECT_TRUE(fd >= 0);
	if (fd < 0)
		return;
	EXPECT_TRUE(contents_are(fd, "hello\n"));
	EXPECT_EQ_INT(0, stat(file, &st));
	EXPECT_TRUE(u.st.st_ino == st.st_ino && u.st.st_dev == st.st_dev);
	EXPECT_EQ_INT(O_RDONLY, fcntl(fd, F_GETFL) & O_ACCMODE);
	EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

DEF_TEST(openat_and_reopen_pass_their_fd)
{
	struct tr_untrusted u;
	int dir = open(tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC), fd, pfd;

	EXPECT_TRUE(dir >= 0);
	fd = tr_untrusted_openat(dir, "f", TR_BENEATH, 1024, &u);
	EXPECT_TRUE(fd >= 0 && contents_are(fd, "hello\n"));
	if (fd >= 0)
		close(fd);
	pfd = open(file, O_PATH | O_CLOEXEC);
	fd = tr_untrusted_reopen(pfd, 1024, &u);
	EXPECT_TRUE(fd >= 0 && contents_are(fd, "hello\n"));
	if (fd >= 0)
		close(fd);
	fd = tr_untrusted_open_dir(dir, "sub", TR_BENEATH);
	EXPECT_TRUE(fd >= 0);
	if (fd >= 0)
		close(fd);
	close(dir);
}

DEF_TEST(refusals_come_back_as_they_are)
{
	struct tr_untrusted u;
	char why[256];
	int fd;

	fd = tr_untrusted_open(0, link_path, 1024, &u);
	EXPECT_EQ_INT(-EPERM, fd);
	EXPECT_EQ_INT(TR_REFUSED_SYMLINK, u.refusal);
	fd = tr_untrusted_open(0, file, 3, &u);
	EXPECT_EQ_INT(-EFBIG, fd);
	EXPECT_CONTAINS("larger than the 3-byte limit", tr_untrusted_explain(&u, fd, why, sizeof(why)));
	fd = tr_untrusted_open(0, "/nonexistent/file/of/test_opener", 1024, &u);
	EXPECT_EQ_INT(-ENOENT, fd);
	/* A step is a string of the worker's: the same binary's. */
	fd = tr_untrusted_open(0, "relative", 1024, &u);
	EXPECT_EQ_INT(-EINVAL, fd);
	EXPECT_CONTAINS("relative", tr_untrusted_explain(&u, fd, why, sizeof(why)));
}

/* A removal through the worker takes the file it was told of, and only
 * that one: another file under the same name stays. */
DEF_TEST(a_removal_takes_only_the_file_named)
{
	char path[320];
	struct stat st, other;
	int top = open(tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC), dir, fd, held;

	EXPECT_TRUE(top >= 0);
	dir = tr_untrusted_open_local_dir(top, ".", TR_BENEATH);
	close(top);
	EXPECT_TRUE(dir >= 0);
	snprintf(path, sizeof(path), "%s/r", tmpdir);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	EXPECT_TRUE(fd >= 0 && fstat(fd, &st) == 0);
	/* Replaced under the name (the first kept open, so that its inode
	 * number is not given to the second): not ours to remove. */
	EXPECT_EQ_INT(0, unlink(path));
	held = fd;
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	EXPECT_TRUE(fd >= 0 && fstat(fd, &other) == 0);
	close(fd);
	close(held);
	EXPECT_TRUE(other.st_ino != st.st_ino);
	EXPECT_EQ_INT(-ESTALE, tr_untrusted_remove(dir, "r", st.st_dev, st.st_ino));
	EXPECT_EQ_INT(0, access(path, F_OK));
	EXPECT_EQ_INT(0, tr_untrusted_remove(dir, "r", other.st_dev, other.st_ino));
	EXPECT_EQ_INT(-1, access(path, F_OK));
	EXPECT_EQ_INT(-ENOENT, tr_untrusted_remove(dir, "r", other.st_dev, other.st_ino));
	EXPECT_EQ_INT(-EINVAL, tr_untrusted_remove(dir, "sub/f", other.st_dev, other.st_ino));
	if (dir >= 0)
		close(dir);
}

static void *opener_thread(void *arg)
{
	long bad = 0;

	(void)arg;
	for (int i = 0; i < 100; i++) {
		struct tr_untrusted u;
		int fd = tr_untrusted_open(0, file, 1024, &u);

		if (fd < 0 || !contents_are(fd, "hello\n"))
			bad++;
		if (fd >= 0)
			close(fd);
	}
	return (void *)bad;
}

DEF_TEST(many_threads_open_at_once)
{
	pthread_t t[4];
	long bad = 0;

	for (int i = 0; i < 4; i++)
		EXPECT_EQ_INT(0, pthread_create(&t[i], NULL, opener_thread, NULL));
	for (int i = 0; i < 4; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		bad += (long)ret;
	}
	EXPECT_EQ_INT(0, (int)bad);
}

DEF_TEST(a_forked_child_opens_directly)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		struct tr_untrusted u;
		int fd;

		if (tr_opener_active())
			_exit(1);
		fd = tr_untrusted_open(0, file, 1024, &u);
		_exit(fd >= 0 && contents_are(fd, "hello\n") ? 0 : 2);
	}
	EXPECT_TRUE(pid > 0);
	waitpid(pid, &status, 0);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

DEF_TEST(opens_are_direct_after_the_stop)
{
	struct tr_untrusted u;
	int fd;

	tr_opener_stop();
	EXPECT_EQ_INT(0, tr_opener_active());
	fd = tr_untrusted_open(0, file, 1024, &u);
	EXPECT_TRUE(fd >= 0 && contents_are(fd, "hello\n"));
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	char sub[300], cmd[320];
	FILE *f;
	int ret;

	if (!tr_untrusted_usable()) {
		printf("1..0 # SKIP openat2(2) with RESOLVE_IN_ROOT is unavailable\n");
		return 0;
	}
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(file, sizeof(file), "%s/f", tmpdir);
	snprintf(link_path, sizeof(link_path), "%s/link", tmpdir);
	snprintf(sub, sizeof(sub), "%s/sub", tmpdir);
	f = fopen(file, "we");
	if (!f || fputs("hello\n", f) < 0 || fclose(f) != 0 || symlink(file, link_path) < 0 ||
	    mkdir(sub, 0755) < 0) {
		perror(tmpdir);
		return 1;
	}
	RUN_TEST(opens_are_direct_before_the_start);
	ret = tr_opener_start(5000, NULL, NULL);
	if (ret < 0) {
		printf("# tr_opener_start: %s\n", strerror(-ret));
		return 1;
	}
	RUN_TEST(an_open_comes_back_with_the_files_stat);
	RUN_TEST(openat_and_reopen_pass_their_fd);
	RUN_TEST(refusals_come_back_as_they_are);
	RUN_TEST(a_removal_takes_only_the_file_named);
	RUN_TEST(many_threads_open_at_once);
	RUN_TEST(a_forked_child_opens_directly);
	RUN_TEST(opens_are_direct_after_the_stop);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	TEST_MAIN_END();
}
