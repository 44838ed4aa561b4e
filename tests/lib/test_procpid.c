/* What /proc says about PIDs: namespace IDs from status text, descendants
 * of a live process (real children of this test, no root needed). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/procpid.h"
#include "../testing.h"

DEF_TEST(innermost_id_is_the_last_of_the_line)
{
	pid_t id = 0;

	EXPECT_EQ_INT(0, tr_status_innermost("\t4242\t17\t1\n", &id));
	EXPECT_EQ_INT(1, id);
	EXPECT_EQ_INT(0, tr_status_innermost("\t4242\n", &id));
	EXPECT_EQ_INT(4242, id);
	/* The next line's number is not this line's. */
	EXPECT_EQ_INT(0, tr_status_innermost("\t4242\t57\n99\n", &id));
	EXPECT_EQ_INT(57, id);
	EXPECT_EQ_INT(-EINVAL, tr_status_innermost("\t\n", &id));
	EXPECT_EQ_INT(-EINVAL, tr_status_innermost("\t0\n", &id));
	EXPECT_EQ_INT(-EINVAL, tr_status_innermost("\t99999999999999\n", &id));
}

DEF_TEST(field_is_found_by_its_whole_name)
{
	static const char status[] = "Name:\tnode\nTgid:\t4242\nNStgid:\t4242\t57\t1\n"
				     "NSpid:\t4243\t58\t2\n";
	pid_t id = 0;

	EXPECT_EQ_INT(0, tr_status_field_innermost(status, "NStgid", &id));
	EXPECT_EQ_INT(1, id);
	EXPECT_EQ_INT(0, tr_status_field_innermost(status, "NSpid", &id));
	EXPECT_EQ_INT(2, id);
	EXPECT_EQ_INT(-ENOENT, tr_status_field_innermost("Tgid:\t77\n", "NSpid", &id));
	EXPECT_EQ_INT(-ENOENT, tr_status_field_innermost(status, "NS", &id));
}

DEF_TEST(stat_fields_count_from_the_last_parenthesis)
{
	/* A comm with spaces and ')' must not shift the fields. */
	static const char stat[] = "4242 (a) b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 "
				   "1 2 0 0 20 0 1 0 987654 10000 200\n";
	unsigned long long v;

	EXPECT_EQ_INT(0, tr_stat_field(stat, 4, &v));
	EXPECT_EQ_INT(17, v);
	EXPECT_EQ_INT(0, tr_stat_field(stat, 22, &v));
	EXPECT_EQ_INT(987654, v);
	EXPECT_EQ_INT(0, tr_stat_field(stat, 24, &v));
	EXPECT_EQ_INT(200, v);
	EXPECT_EQ_INT(-EINVAL, tr_stat_field(stat, 25, &v));
	EXPECT_EQ_INT(-EINVAL, tr_stat_field(stat, 3, &v)); /* the state is a letter */
	EXPECT_EQ_INT(-EINVAL, tr_stat_field("4242 no parenthesis 1 2 3", 4, &v));
}

DEF_TEST(own_stat_says_who_our_parent_is)
{
	unsigned long long ppid, start;

	EXPECT_EQ_INT(0, tr_proc_stat_field(getpid(), 4, &ppid));
	EXPECT_EQ_INT(getppid(), ppid);
	EXPECT_EQ_INT(0, tr_proc_stat_field(getpid(), 22, &start));
	EXPECT_TRUE(start > 0);
	EXPECT_EQ_INT(-ENOENT, tr_proc_stat_field(-1, 4, &ppid));
}

DEF_TEST(text_files_are_read_whole_and_terminated)
{
	char path[] = "/tmp/tracerig-readtext.XXXXXX", buf[8];
	int fd = mkstemp(path);

	CHECK_NOT_NULL(fd >= 0 ? path : NULL);
	EXPECT_EQ_INT(-ENOENT, tr_read_text(path, buf, sizeof(buf)));
	EXPECT_EQ_INT(11, write(fd, "12345\nmore\n", 11));
	close(fd);
	EXPECT_EQ_INT(7, tr_read_text(path, buf, sizeof(buf)));
	EXPECT_EQ_STR("12345\nm", buf);
	unlink(path);
	EXPECT_EQ_INT(-ENOENT, tr_read_text(path, buf, sizeof(buf)));
	EXPECT_EQ_INT(-EINVAL, tr_read_text("/proc/self/stat", buf, 1));
}

DEF_TEST(proc_files_are_read_to_their_end_and_cut_at_the_limit)
{
	char *text = NULL;
	size_t len = 0;

	/* /proc/self/maps reports size 0 and is longer than one page here. */
	EXPECT_EQ_INT(0, tr_read_proc_file(AT_FDCWD, "/proc/self/maps", 1 << 20, &text, &len));
	EXPECT_TRUE(text && len > 0 && strlen(text) == len && strstr(text, "[stack]"));
	free(text);
	EXPECT_EQ_INT(0, tr_read_proc_file(AT_FDCWD, "/proc/self/maps", 100, &text, &len));
	EXPECT_EQ_INT(100, (int)len);
	EXPECT_TRUE(text && strlen(text) == 100);
	free(text);
	EXPECT_EQ_INT(0, tr_read_proc_file(AT_FDCWD, "/proc/self/maps", 0, &text, &len));
	EXPECT_TRUE(text && len == 0 && text[0] == '\0');
	free(text);
	EXPECT_EQ_INT(-ENOENT, tr_read_proc_file(AT_FDCWD, "/proc/self/no-such-file", 4096, &text, &len));
	EXPECT_TRUE(text == NULL);
}

DEF_TEST(own_namespace_pid_is_getpid)
{
	pid_t id = 0;

	/* Whatever namespace this runs in, its innermost PID is what it sees. */
	EXPECT_EQ_INT(0, tr_proc_nspid(getpid(), &id));
	EXPECT_EQ_INT(getpid(), id);
	EXPECT_EQ_INT(-ENOENT, tr_proc_nspid(-1, &id));
}

DEF_TEST(descendants_of_a_process)
{
	pid_t child, *pids = NULL;
	size_t n = 0;
	int p[2], found_grandchild = 0;
	pid_t grandchild = 0;

	if (pipe(p) < 0) {
		TEST_FAIL("pipe: %s", strerror(errno));
		return;
	}
	child = fork();
	if (child == 0) {
		pid_t g = fork();

		if (g == 0) {
			pause();
			_exit(0);
		}
		if (write(p[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(p[0], &grandchild, sizeof(grandchild)) != sizeof(grandchild))
		TEST_FAIL("no grandchild");
	EXPECT_EQ_INT(0, tr_proc_descendants(getpid(), &pids, &n, 100));
	for (size_t i = 0; i < n; i++)
		if (pids[i] == grandchild)
			found_grandchild = 1;
	EXPECT_TRUE(found_grandchild);
	EXPECT_TRUE(n >= 2 && pids[0] == child);
	free(pids);
	kill(grandchild, SIGKILL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(p[0]);
	close(p[1]);
}

DEF_TEST(descendants_stop_at_the_limit_and_skip_known_pids)
{
	pid_t child = fork(), *pids = NULL;
	size_t n = 0;

	if (child == 0) {
		pause();
		_exit(0);
	}
	if (child < 0) {
		TEST_FAIL("fork: %s", strerror(errno));
		return;
	}
	EXPECT_EQ_INT(0, tr_proc_descendants(getpid(), &pids, &n, 1));
	EXPECT_EQ_INT(1, n);
	EXPECT_TRUE(n == 1 && pids[0] == child);
	/* Already there: not added twice. */
	EXPECT_EQ_INT(0, tr_proc_descendants(getpid(), &pids, &n, 10));
	EXPECT_EQ_INT(1, n);
	free(pids);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

DEF_TEST(cgroup_is_the_unified_hierarchy_path)
{
	char out[64];

	EXPECT_EQ_INT(0, tr_cgroup_path("0::/system.slice/docker-ab12.scope\n", out, sizeof(out)));
	EXPECT_EQ_STR("/system.slice/docker-ab12.scope", out);
	/* A hybrid host: the unified line wins over the v1 lines before it. */
	EXPECT_EQ_INT(0, tr_cgroup_path("12:cpu,cpuacct:/docker/ab12\n1:name=systemd:/x\n0::/y\n",
					 out, sizeof(out)));
	EXPECT_EQ_STR("/y", out);
	/* A hybrid host leaving the unified path at the root: the first v1
	 * path below it. */
	EXPECT_EQ_INT(0, tr_cgroup_path("5:devices:/\n4:memory:/api/c7\n1:cpu:/other\n0::/\n", out,
					 sizeof(out)));
	EXPECT_EQ_STR("/api/c7", out);
	EXPECT_EQ_INT(0, tr_cgroup_path("5:devices:/\n0::/\n", out, sizeof(out)));
	EXPECT_EQ_STR("/", out);
	/* cgroup v1 only: the first hierarchy's path. */
	EXPECT_EQ_INT(0, tr_cgroup_path("12:cpu,cpuacct:/docker/ab12\n1:name=systemd:/x\n", out,
					 sizeof(out)));
	EXPECT_EQ_STR("/docker/ab12", out);
	/* Cut to the buffer, still terminated. */
	EXPECT_EQ_INT(0, tr_cgroup_path("0::/abcdef", out, 4));
	EXPECT_EQ_STR("/ab", out);
	EXPECT_EQ_INT(-ENOENT, tr_cgroup_path("", out, sizeof(out)));
	EXPECT_EQ_INT(-ENOENT, tr_cgroup_path("garbage\n", out, sizeof(out)));
}

DEF_TEST(own_cgroup_is_readable)
{
	char out[4096];

	EXPECT_EQ_INT(0, tr_proc_cgroup(getpid(), out, sizeof(out)));
	EXPECT_EQ_INT('/', out[0]);
}

int main(void)
{
	RUN_TEST(innermost_id_is_the_last_of_the_line);
	RUN_TEST(field_is_found_by_its_whole_name);
	RUN_TEST(stat_fields_count_from_the_last_parenthesis);
	RUN_TEST(own_stat_says_who_our_parent_is);
	RUN_TEST(text_files_are_read_whole_and_terminated);
	RUN_TEST(proc_files_are_read_to_their_end_and_cut_at_the_limit);
	RUN_TEST(own_namespace_pid_is_getpid);
	RUN_TEST(descendants_of_a_process);
	RUN_TEST(descendants_stop_at_the_limit_and_skip_known_pids);
	RUN_TEST(cgroup_is_the_unified_hierarchy_path);
	RUN_TEST(own_cgroup_is_readable);
	TEST_MAIN_END();
}
