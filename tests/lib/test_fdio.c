/* Whole writes: all of it at the file position or at an offset, and, when
 * the descriptor takes only part (a full pipe), the error with what did
 * get through, which a caller keeping offsets into its file needs. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "../testing.h"

static int scratch(void)
{
	char path[] = "/tmp/test_fdio.XXXXXX";
	int fd = mkostemp(path, O_CLOEXEC);

	if (fd >= 0)
		unlink(path);
	return fd;
}

DEF_TEST(all_of_it_at_the_position_and_at_an_offset)
{
	char buf[16] = { 0 };
	int fd = scratch();

	EXPECT_TRUE(fd >= 0);
	if (fd < 0)
		return;
	EXPECT_EQ_INT(0, tr_write_all(fd, "abcdef", 6));
	EXPECT_EQ_INT(0, tr_pwrite_all(fd, "XY", 2, 2));
	/* The offset write leaves the position where it was. */
	EXPECT_EQ_INT(6, (int)lseek(fd, 0, SEEK_CUR));
	EXPECT_EQ_INT(6, (int)pread(fd, buf, sizeof(buf) - 1, 0));
	EXPECT_EQ_STR("abXYef", buf);
	close(fd);
}

DEF_TEST(a_full_pipe_says_how_much_got_through)
{
	size_t len = 3 * 65536, written = 12345;
	char *data = malloc(len);
	int p[2], size;

	CHECK_NOT_NULL(data);
	memset(data, 'x', len);
	EXPECT_EQ_INT(0, pipe2(p, O_NONBLOCK | O_CLOEXEC));
	size = fcntl(p[1], F_GETPIPE_SZ);
	EXPECT_TRUE(size > 0 && (size_t)size < len);
	EXPECT_EQ_INT(-EAGAIN, tr_pwrite_counted(p[1], data, len, -1, &written));
	EXPECT_EQ_INT(size, (int)written);
	/* Nothing to write is done at once, and says so. */
	EXPECT_EQ_INT(0, tr_pwrite_counted(p[1], data, 0, -1, &written));
	EXPECT_EQ_INT(0, (int)written);
	close(p[0]);
	close(p[1]);
	free(data);
}

DEF_TEST(copy_to_the_end)
{
	char buf[8] = { 0 };
	int in = scratch(), out = scratch();

	EXPECT_TRUE(in >= 0 && out >= 0);
	if (in < 0 || out < 0)
		return;
	EXPECT_EQ_INT(0, tr_write_all(in, "log\n", 4));
	EXPECT_EQ_INT(0, (int)lseek(in, 0, SEEK_SET));
	EXPECT_EQ_INT(0, tr_copy_fd(in, out));
	EXPECT_EQ_INT(4, (int)pread(out, buf, sizeof(buf) - 1, 0));
	EXPECT_EQ_STR("log\n", buf);
	close(in);
	close(out);
}

int main(void)
{
	RUN_TEST(all_of_it_at_the_position_and_at_an_offset);
	RUN_TEST(a_full_pipe_says_how_much_got_through);
	RUN_TEST(copy_to_the_end);
	TEST_MAIN_END();
}
