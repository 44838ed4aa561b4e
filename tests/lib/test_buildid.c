/* Build ids: of this test's own executable against readelf, of raw note
 * blocks, and the errors. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buildid.h"
#include "../testing.h"

/* One NT_GNU_BUILD_ID note: namesz 4, descsz, type 3, "GNU\0", the id. */
static size_t make_note(uint32_t *buf, const uint8_t *id, uint32_t id_len)
{
	buf[0] = 4;
	buf[1] = id_len;
	buf[2] = 3;
	memcpy(&buf[3], "GNU", 4);
	memcpy(&buf[4], id, id_len);
	return 16 + ((id_len + 3u) & ~3u);
}

DEF_TEST(note_blocks)
{
	static const uint8_t want[24] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8,
					  9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
	uint32_t notes[32] = { 0 };
	uint8_t id[64];
	size_t len = 0, size;
	char hex[2 * 64 + 1];

	/* A note of another type first: skipped. */
	notes[0] = 4;
	notes[1] = 4;
	notes[2] = 1;
	memcpy(&notes[3], "GNU", 4);
	size = 20 + make_note(&notes[5], want, 8);
	EXPECT_EQ_INT(0, tr_buildid_from_notes(notes, size, id, sizeof(id), &len));
	EXPECT_EQ_INT(8, len);
	tr_buildid_hex(id, len, hex);
	EXPECT_EQ_STR("deadbeef01020304", hex);

	/* Longer than asked for: cut, as perf cuts ids to 20 bytes. */
	size = make_note(notes, want, 24);
	EXPECT_EQ_INT(0, tr_buildid_from_notes(notes, size, id, TR_BUILDID_PERF_MAX, &len));
	EXPECT_EQ_INT(TR_BUILDID_PERF_MAX, len);
	EXPECT_TRUE(memcmp(id, want, TR_BUILDID_PERF_MAX) == 0);

	/* Cut short: no id, no read past the end. */
	EXPECT_EQ_INT(-ENOENT, tr_buildid_from_notes(notes, 12, id, sizeof(id), &len));
	EXPECT_EQ_INT(-ENOENT, tr_buildid_from_notes(notes, 0, id, sizeof(id), &len));
}

DEF_TEST(own_executable_matches_readelf)
{
	char exe[4096], hex[2 * 64 + 1], cmd[4200], out[512] = "";
	uint8_t id[64];
	size_t len = 0;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *p;
	char *at;

	CHECK_NOT_NULL(n > 0 ? exe : NULL);
	exe[n] = '\0';
	EXPECT_EQ_INT(0, tr_buildid_read(exe, id, sizeof(id), &len));
	EXPECT_TRUE(len > 0);
	tr_buildid_hex(id, len, hex);
	snprintf(cmd, sizeof(cmd), "LC_ALL=C readelf -n '%s' 2>/dev/null | grep 'Build ID:'", exe);
	p = popen(cmd, "r");
	CHECK_NOT_NULL(p);
	if (!fgets(out, sizeof(out), p))
		out[0] = '\0';
	pclose(p);
	at = strstr(out, "Build ID: ");
	CHECK_NOT_NULL(at);
	at += strlen("Build ID: ");
	at[strcspn(at, " \n")] = '\0';
	EXPECT_EQ_STR(at, hex);
}

DEF_TEST(errors)
{
	uint8_t id[TR_BUILDID_PERF_MAX];
	size_t len;

	EXPECT_EQ_INT(-ENOENT, tr_buildid_read("/nonexistent/x", id, sizeof(id), &len));
	EXPECT_EQ_INT(-ENOEXEC, tr_buildid_read("/proc/self/status", id, sizeof(id), &len));
}

DEF_TEST(running_kernel)
{
	uint8_t id[TR_BUILDID_PERF_MAX];
	size_t len = 0;
	int err = tr_buildid_read_kernel(id, sizeof(id), &len);

	if (err == -ENOENT) {
		printf("# this kernel shows no notes or no build id note\n");
		return;
	}
	EXPECT_EQ_INT(0, err);
	EXPECT_TRUE(len > 0 && len <= TR_BUILDID_PERF_MAX);
}

int main(void)
{
	RUN_TEST(note_blocks);
	RUN_TEST(own_executable_matches_readelf);
	RUN_TEST(errors);
	RUN_TEST(running_kernel);
	TEST_MAIN_END();
}
