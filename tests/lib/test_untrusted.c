/* Opening files a traced process controls: a fake process root full of
 * traps (links out of it and inside it, a FIFO, a directory, a sparse file
 * far over the limit), the device nodes of our own root, a file replaced
 * between the lookup and the open, bounded reads, and a kernel without
 * openat2 (a seccomp filter): no fallback follows links; a file mounted over
 * another in a mount namespace of our own, and a file of another user than
 * the process's.  No root needed (the owner of another user's file: root). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/untrusted.h"
#include "../testing.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static char tmpdir[] = "/tmp/test_untrusted.XXXXXX";
static char rootpath[256];
static int root = -1;

static int write_file(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", rootpath, rel);
	f = fopen(path, "we");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int at(const char *rel, char *path, size_t len)
{
	return snprintf(path, len, "%s/%s", rootpath, rel) >= (int)len ? -1 : 0;
}

/* <tmpdir>/root: what a container's process would plant in its /tmp. */
static int make_root(void)
{
	char p[512];
	int fd;

	snprintf(rootpath, sizeof(rootpath), "%s/root", tmpdir);
	if (mkdir(rootpath, 0755) < 0 || at("tmp", p, sizeof(p)) || mkdir(p, 0755) < 0)
		return -1;
	if (write_file("tmp/perf-1.map", "7f0000001000 40 hot_function\n") < 0 ||
	    write_file("secret", "SECRET-OF-THE-HOST\n") < 0)
		return -1;
	/* Out of the root: the host's /etc/passwd, and our secret by its
	 * absolute host path (inside the root it names nothing). */
	if (at("tmp/perf-2.map", p, sizeof(p)) || symlink("/etc/passwd", p) < 0)
		return -1;
	{
		char target[512];

		snprintf(target, sizeof(target), "%s/secret", rootpath);
		if (at("tmp/perf-6.map", p, sizeof(p)) || symlink(target, p) < 0)
			return -1;
	}
	/* Inside the root: a link to a harmless file of the root itself. */
	if (at("tmp/perf-7.map", p, sizeof(p)) || symlink("/tmp/perf-1.map", p) < 0)
		return -1;
	if (at("tmp/perf-3.map", p, sizeof(p)) || mkfifo(p, 0644) < 0)
		return -1;
	if (write_file("tmp/perf-4.map", "0123456789abcdef0123456789abcdef\n") < 0)
		return -1;
	/* 1 GiB, no newline, no blocks: what made a 3 s trace take 74 s. */
	if (at("tmp/perf-8.map", p, sizeof(p)))
		return -1;
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 1ll << 30) < 0)
		return -1;
	close(fd);
	if (at("etc", p, sizeof(p)) || symlink("/etc", p) < 0)
		return -1;
	if (at("tmp/dir.map", p, sizeof(p)) || mkdir(p, 0755) < 0)
		return -1;
	root = open(rootpath, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return root < 0 ? -1 : 0;
}

static char why[512];

static int try_open(const char *path, uint64_t max)
{
	struct tr_untrusted u;
	int fd = tr_untrusted_openat(root, path, TR_IN_ROOT, max, &u);

	tr_untrusted_explain(&u, fd, why, sizeof(why));
	return fd;
}

static void read_all(int fd, char *buf, size_t len)
{
	ssize_t n = read(fd, buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
}

DEF_TEST(regular_file_inside_the_root)
{
	char buf[128];
	int fd = try_open("/tmp/perf-1.map", 1024);

	EXPECT_TRUE(fd >= 0);
	if (fd < 0)
		return;
	read_all(fd, buf, sizeof(buf));
	EXPECT_EQ_STR("7f0000001000 40 hot_function\n", buf);
	/* Non-blocking, close-on-exec, read-only. */
	EXPECT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
	EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ_INT(O_RDONLY, fcntl(fd, F_GETFL) & O_ACCMODE);
	close(fd);
}

DEF_TEST(symlink_out_of_the_root_is_refused)
{
	EXPECT_EQ_INT(-EPERM, try_open("/tmp/perf-2.map", 1 << 20));
	EXPECT_EQ_STR("a symbolic link (links are not followed inside a process's root)", why);
	/* The absolute host path of a file: refused as a link, never read. */
	EXPECT_EQ_INT(-EPERM, try_open("/tmp/perf-6.map", 1 << 20));
	EXPECT_CONTAINS("symbolic link", why);
}

DEF_TEST(symlink_inside_the_root_is_refused_too)
{
	/* Harmless here, but a link cannot be told harmless without following
	 * it, and real JIT maps and objects (canonical paths) have none. */
	EXPECT_EQ_INT(-EPERM, try_open("/tmp/perf-7.map", 1 << 20));
	EXPECT_CONTAINS("symbolic link", why);
}

DEF_TEST(link_on_the_path_and_dotdot)
{
	/* The root's /etc is a link to the host's /etc. */
	EXPECT_EQ_INT(-EPERM, try_open("/etc/passwd", 1 << 20));
	EXPECT_EQ_STR("a directory on its path is a symbolic link (links are not followed inside "
		      "a process's root)", why);
	/* ".." stops at the root: this is <root>/etc/passwd, behind the link. */
	EXPECT_EQ_INT(-EPERM, try_open("/tmp/../../../../../etc/passwd", 1 << 20));
	/* ... and reaches the root's own files only. */
	{
		int fd = try_open("/tmp/../../../secret", 1024);
		char buf[64];

		EXPECT_TRUE(fd >= 0);
		if (fd >= 0) {
			read_all(fd, buf, sizeof(buf));
			EXPECT_EQ_STR("SECRET-OF-THE-HOST\n", buf);
			close(fd);
		}
	}
	/* Beneath a directory, ".." is refused outright. */
	{
		struct tr_untrusted u;

		EXPECT_EQ_INT(-EPERM, tr_untrusted_openat(root, "../x", TR_BENEATH, 16, &u));
		EXPECT_EQ_INT(TR_REFUSED_ESCAPES, u.refusal);
	}
}

/* A soname is a link to its versioned file: existence follows links,
 * but only inside the root. */
DEF_TEST(existence_follows_links_inside_the_root_only)
{
	EXPECT_EQ_INT(1, tr_exists_in_root(root, "/secret"));
	EXPECT_EQ_INT(1, tr_exists_in_root(root, "/tmp/perf-7.map")); /* -> /tmp/perf-1.map */
	EXPECT_EQ_INT(1, tr_exists_in_root(root, "/../../secret"));
	EXPECT_EQ_INT(0, tr_exists_in_root(root, "/tmp/no-such.map"));
	/* The host's /etc/passwd and our secret by its host path: the links
	 * resolve inside the root, where they name nothing. */
	EXPECT_EQ_INT(0, tr_exists_in_root(root, "/tmp/perf-2.map"));
	EXPECT_EQ_INT(0, tr_exists_in_root(root, "/tmp/perf-6.map"));
	EXPECT_EQ_INT(0, tr_exists_in_root(root, "/etc/passwd"));
}

DEF_TEST(fifo_is_refused_without_blocking)
{
	/* No writer: a real open would block forever (alarm ends the test). */
	alarm(20);
	EXPECT_EQ_INT(-EPERM, try_open("/tmp/perf-3.map", 1024));
	alarm(0);
	EXPECT_EQ_STR("a FIFO", why);
}

DEF_TEST(devices_and_directories_are_refused)
{
	struct tr_untrusted u;
	int fd;

	fd = tr_untrusted_open(0, "/dev/null", 1024, &u);
	EXPECT_EQ_INT(-EPERM, fd);
	EXPECT_EQ_INT(TR_REFUSED_CHARDEV, u.refusal);
	EXPECT_EQ_STR("a character device", tr_untrusted_explain(&u, fd, why, sizeof(why)));
	/* /dev/zero would give an endless read, /dev/tty a controlling tty. */
	EXPECT_EQ_INT(-EPERM, tr_untrusted_open(0, "/dev/zero", 1024, &u));
	EXPECT_EQ_INT(-EPERM, try_open("/tmp/dir.map", 16));
	EXPECT_EQ_STR("a directory", why);
	EXPECT_EQ_INT(-ENOENT, try_open("/tmp/perf-5.map", 16));
	EXPECT_EQ_INT(-ENOENT, try_open("/tmp/perf-1.map/x", 16));
}

DEF_TEST(too_big_is_refused_before_reading)
{
	EXPECT_EQ_INT(-EFBIG, try_open("/tmp/perf-4.map", 16));
	EXPECT_EQ_STR("33 bytes, larger than the 16-byte limit", why);
	EXPECT_EQ_INT(-EFBIG, try_open("/tmp/perf-8.map", 256ull << 20));
	EXPECT_EQ_STR("1073741824 bytes, larger than the 256 MiB limit", why);
}

DEF_TEST(through_a_process_root)
{
	struct tr_untrusted u;
	char path[600], buf[128];
	int fd;

	/* Our own root, by PID: the same rules through /proc/PID/root. */
	snprintf(path, sizeof(path), "%s/tmp/perf-1.map", rootpath);
	fd = tr_untrusted_open(getpid(), path, 1024, &u);
	EXPECT_TRUE(fd >= 0);
	if (fd >= 0) {
		read_all(fd, buf, sizeof(buf));
		EXPECT_CONTAINS("hot_function", buf);
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/tmp/perf-2.map", rootpath);
	EXPECT_EQ_INT(-EPERM, tr_untrusted_open(getpid(), path, 1024, &u));
	EXPECT_EQ_INT(TR_REFUSED_SYMLINK, u.refusal);
	EXPECT_EQ_INT(-EINVAL, tr_untrusted_open(0, "relative/path", 1024, &u));
}

DEF_TEST(replaced_by_a_link_between_lookup_and_open)
{
	char path[512], link[512], buf[128];
	struct tr_untrusted u;
	int pfd, fd;

	/* The lookup found a regular file... */
	if (write_file("tmp/race.map", "ORIGINAL\n") < 0 || at("tmp/race.map", path, sizeof(path)) ||
	    at("tmp/race.link", link, sizeof(link))) {
		TEST_FAIL("cannot set up");
		return;
	}
	pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	EXPECT_TRUE(pfd >= 0);
	if (pfd < 0)
		return;
	/* ...then the process swaps a link to a host file in its place... */
	EXPECT_EQ_INT(0, symlink("/etc/passwd", link));
	EXPECT_EQ_INT(0, rename(link, path));
	/* ...and what is read is still the inode that was checked. */
	fd = tr_untrusted_reopen(pfd, 1024, &u);
	EXPECT_TRUE(fd >= 0);
	if (fd >= 0) {
		read_all(fd, buf, sizeof(buf));
		EXPECT_EQ_STR("ORIGINAL\n", buf);
		close(fd);
	}
	/* A FIFO handed in O_PATH is refused, not opened. */
	at("tmp/perf-3.map", path, sizeof(path));
	pfd = open(path, O_PATH | O_CLOEXEC);
	alarm(20);
	EXPECT_EQ_INT(-EPERM, tr_untrusted_reopen(pfd, 1024, &u));
	alarm(0);
	EXPECT_EQ_INT(TR_REFUSED_FIFO, u.refusal);
}

DEF_TEST(bounded_reads)
{
	char path[512], text[101];
	unsigned char *buf;
	size_t len;
	int fd;

	memset(text, 'x', 100);
	text[100] = '\0';
	text[10] = 'A';
	if (write_file("tmp/hundred", text) < 0 || at("tmp/hundred", path, sizeof(path)))
		return;
	fd = try_open("/tmp/hundred", 1024);
	EXPECT_TRUE(fd >= 0);
	if (fd < 0)
		return;
	EXPECT_EQ_INT(0, tr_read_at_most(fd, 10, 20, &buf, &len));
	EXPECT_EQ_INT(20, len);
	EXPECT_TRUE(buf && buf[0] == 'A');
	free(buf);
	EXPECT_EQ_INT(0, tr_read_at_most(fd, 95, 20, &buf, &len));
	EXPECT_EQ_INT(5, len);
	free(buf);
	EXPECT_EQ_INT(0, tr_read_at_most(fd, 200, 20, &buf, &len));
	EXPECT_EQ_INT(0, len);
	EXPECT_TRUE(buf == NULL);
	close(fd);
	/* A sparse GiB: what is allocated and read is the bound, not the size. */
	at("tmp/perf-8.map", path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	EXPECT_EQ_INT(0, tr_read_at_most(fd, 0, 4096, &buf, &len));
	EXPECT_EQ_INT(4096, len);
	free(buf);
	close(fd);
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	return close(fd) == 0 && ok ? 0 : -1;
}

/* A mount namespace of our own (with a user namespace when not root, as
 * unshare -Urm does), private so that nothing mounted reaches the host's. */
static int own_mount_namespace(void)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (uid != 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return -1;
		snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
		if (write_text("/proc/self/uid_map", map) < 0 ||
		    write_text("/proc/self/setgroups", "deny") < 0)
			return -1;
		snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
		if (write_text("/proc/self/gid_map", map) < 0)
			return -1;
	} else if (unshare(CLONE_NEWNS) < 0) {
		return -1;
	}
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

static const char *no_mount_namespace(void)
{
	int status;
	pid_t child = fork();

	if (child == 0)
		_exit(own_mount_namespace() < 0 ? 1 : 0);
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return "cannot create a mount namespace (unshare -Urm) here";
	return NULL;
}

/* In a child of its own mount namespace: exit code 0, or which check failed. */
static int mounts_in_a_namespace(void)
{
	char src[512], dst[512], buf[128];
	struct tr_untrusted u;
	int fd;

	if (own_mount_namespace() < 0)
		return 10;
	/* An fd opened before keeps looking at the mounts of the namespace
	 * it was opened in. */
	close(root);
	root = open(rootpath, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return 10;
	/* The attack: the root's secret bind-mounted over a perf map. */
	if (write_file("tmp/perf-9.map", "") < 0 || at("secret", src, sizeof(src)) ||
	    at("tmp/perf-9.map", dst, sizeof(dst)) || mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return 11;
	/* Opened as an ELF object would be (one bind-mounted alone is checked
	 * against what the process mapped), but noted... */
	fd = tr_untrusted_openat(root, "/tmp/perf-9.map", TR_IN_ROOT, 1024, &u);
	if (fd < 0 || !u.mounted_over)
		return 12;
	/* ...and refused as a file the process writes itself. */
	fd = tr_untrusted_owned(getpid(), fd, &u);
	tr_untrusted_explain(&u, fd, why, sizeof(why));
	if (fd != -EPERM || u.refusal != TR_REFUSED_MOUNT_POINT)
		return 13;
	if (strcmp(why, "another file is mounted over it (a file is read only from the mount "
			"of its own directory)") != 0) {
		printf("# %s\n", why);
		return 13;
	}
	/* The same through a process's root. */
	fd = tr_untrusted_open(getpid(), dst, 1024, &u);
	if (fd < 0 || !u.mounted_over)
		return 14;
	if (tr_untrusted_owned(getpid(), fd, &u) != -EPERM || u.refusal != TR_REFUSED_MOUNT_POINT)
		return 14;
	/* A container's own tmpfs /tmp: directories on the path may be mounts. */
	if (at("vol", dst, sizeof(dst)) || mkdir(dst, 0755) < 0 ||
	    mount("tmpfs", dst, "tmpfs", 0, NULL) < 0 ||
	    write_file("vol/perf-1.map", "7f0000002000 40 in_its_own_tmpfs\n") < 0)
		return 15;
	fd = try_open("/vol/perf-1.map", 1024);
	if (fd < 0) {
		printf("# %s\n", why);
		return 16;
	}
	read_all(fd, buf, sizeof(buf));
	close(fd);
	if (!strstr(buf, "in_its_own_tmpfs"))
		return 17;
	/* A volume: a directory bind-mounted in, whose files are read. */
	if (at("tmp", src, sizeof(src)) || at("bound", dst, sizeof(dst)) || mkdir(dst, 0755) < 0 ||
	    mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return 18;
	fd = try_open("/bound/perf-1.map", 1024);
	if (fd < 0)
		return 19;
	close(fd);
	return 0;
}

DEF_TEST(a_file_mounted_over_another_is_refused)
{
	int status;
	pid_t child;

	fflush(stdout);
	child = fork();
	if (child == 0)
		_exit(mounts_in_a_namespace());
	EXPECT_TRUE(child > 0);
	EXPECT_EQ_INT(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ_INT(0, WEXITSTATUS(status));
}

static struct tr_untrusted ou;

/* Opens path in the fake root, the result in u, as tr_untrusted_owned wants. */
static int open_in_root(const char *path)
{
	return tr_untrusted_openat(root, path, TR_IN_ROOT, 1024, &ou);
}

DEF_TEST(only_the_process_users_files)
{
	char path[512];
	pid_t child;
	int fd, status;

	/* Ours, for us (pid 0 and our own PID alike). */
	fd = tr_untrusted_owned(getpid(), open_in_root("/tmp/perf-1.map"), &ou);
	EXPECT_TRUE(fd >= 0);
	if (fd >= 0)
		close(fd);
	EXPECT_EQ_INT(-ENOENT, tr_untrusted_owned(0, open_in_root("/tmp/perf-5.map"), &ou));
	if (geteuid() != 0) {
		/* Ours, for init (root): refused. */
		EXPECT_EQ_INT(-EPERM, tr_untrusted_owned(1, open_in_root("/tmp/perf-1.map"), &ou));
		EXPECT_EQ_INT(TR_REFUSED_OWNER, ou.refusal);
		return;
	}
	/* Root: a process of nobody's gets nobody's file, not root's. */
	if (write_file("tmp/nobody.map", "7f0000003000 40 nobodys\n") < 0 ||
	    at("tmp/nobody.map", path, sizeof(path)) || chown(path, 65534, 65534) < 0) {
		TEST_FAIL("cannot set up nobody's file");
		return;
	}
	fflush(stdout);
	child = fork();
	if (child == 0) {
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	EXPECT_TRUE(child > 0);
	if (child < 0)
		return;
	for (int i = 0; i < 200; i++) {
		struct stat st;
		char proc[64];

		/* /proc/PID belongs to the effective uid once it changed. */
		snprintf(proc, sizeof(proc), "/proc/%d", (int)child);
		if (stat(proc, &st) == 0 && st.st_uid == 65534)
			break;
		usleep(10000);
	}
	fd = tr_untrusted_owned(child, open_in_root("/tmp/nobody.map"), &ou);
	EXPECT_TRUE(fd >= 0);
	if (fd >= 0)
		close(fd);
	fd = tr_untrusted_owned(child, open_in_root("/tmp/perf-1.map"), &ou);
	EXPECT_EQ_INT(-EPERM, fd);
	EXPECT_EQ_INT(TR_REFUSED_OWNER, ou.refusal);
	EXPECT_EQ_STR("owned by uid 0, not by the process's user (uid 65534)",
		      tr_untrusted_explain(&ou, fd, why, sizeof(why)));
	kill(child, SIGKILL);
	EXPECT_EQ_INT(child, waitpid(child, &status, 0));
	/* Gone: nothing to compare with, and no refusal for good. */
	EXPECT_EQ_INT(-ESRCH, tr_untrusted_owned(child, open_in_root("/tmp/nobody.map"), &ou));
	EXPECT_EQ_INT(TR_REFUSED_NONE, ou.refusal);
}

/* openat2 made to fail with ENOSYS, as on Linux < 5.6. */
static int without_openat2(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

DEF_TEST(no_openat2_no_fallback)
{
	int status;
	pid_t child = fork();

	if (child == 0) {
		struct tr_untrusted u;
		int fd;

		if (without_openat2() < 0)
			_exit(2);
		/* Even a plain file is refused: any fallback would follow links. */
		fd = tr_untrusted_openat(root, "/tmp/perf-1.map", TR_IN_ROOT, 1024, &u);
		if (fd != -ENOSYS || u.refusal != TR_REFUSED_NO_OPENAT2)
			_exit(3);
		if (tr_untrusted_openat(root, "/tmp/perf-2.map", TR_IN_ROOT, 1024, &u) != -ENOSYS)
			_exit(4);
		tr_untrusted_explain(&u, fd, why, sizeof(why));
		if (!strstr(why, "openat2(2) with RESOLVE_IN_ROOT is unavailable"))
			_exit(5);
		_exit(tr_untrusted_usable() ? 6 : 0);
	}
	EXPECT_TRUE(child > 0);
	EXPECT_EQ_INT(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ_INT(0, WEXITSTATUS(status));
}

/* Does the kernel have openat2(2) with RESOLVE_IN_ROOT?  Asked here with
 * the raw system call, not through the code under test: only a kernel that
 * really lacks it (ENOSYS, or EINVAL for an unknown resolve flag) is a
 * reason to skip; anything else untrusted.c says is its own failure. */
static const char *kernel_lacks_openat2(void)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));

	if (fd >= 0) {
		close((int)fd);
		return NULL;
	}
	if (errno == ENOSYS)
		return "openat2(2) unavailable (ENOSYS: Linux < 5.6, or a seccomp filter)";
	if (errno == EINVAL)
		return "openat2(2) refuses RESOLVE_IN_ROOT (EINVAL: Linux < 5.6)";
	return NULL;
}

/* The kernel has openat2: the code under test must say it is usable. */
DEF_TEST(usable_when_the_kernel_has_openat2)
{
	EXPECT_TRUE(tr_untrusted_usable());
}

int main(void)
{
	char cmd[300];
	const char *lacks = kernel_lacks_openat2();

	if (lacks) {
		printf("1..0 # SKIP %s\n", lacks);
		return 0;
	}
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (make_root() < 0) {
		printf("Bail out! cannot build the fake process root under %s: %s\n", tmpdir,
		       strerror(errno));
		return 1;
	}
	RUN_TEST(usable_when_the_kernel_has_openat2);
	RUN_TEST(regular_file_inside_the_root);
	RUN_TEST(symlink_out_of_the_root_is_refused);
	RUN_TEST(symlink_inside_the_root_is_refused_too);
	RUN_TEST(link_on_the_path_and_dotdot);
	RUN_TEST(existence_follows_links_inside_the_root_only);
	RUN_TEST(fifo_is_refused_without_blocking);
	RUN_TEST(devices_and_directories_are_refused);
	RUN_TEST(too_big_is_refused_before_reading);
	RUN_TEST(through_a_process_root);
	RUN_TEST(replaced_by_a_link_between_lookup_and_open);
	RUN_TEST(bounded_reads);
	RUN_TEST(no_openat2_no_fallback);
	{
		const char *no_ns = no_mount_namespace();

		if (no_ns)
			SKIP_TEST(a_file_mounted_over_another_is_refused, no_ns);
		else
			RUN_TEST(a_file_mounted_over_another_is_refused);
	}
	RUN_TEST(only_the_process_users_files);
	close(root);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", tmpdir);
	TEST_MAIN_END();
}
