/* Flame graph structure: one rect per distinct call-path node, weights and
 * shares, hostile names (markup, quotes, control bytes, broken UTF-8) still
 * give well-formed XML, and large inputs stay one node per distinct path. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/views/flamegraph.h"
#include "../testing.h"

static char *render(const char *folded, size_t len)
{
	FILE *in = fmemopen((void *)folded, len, "r");
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);
	int ret;

	if (!in || !out) {
		if (in)
			fclose(in);
		if (out)
			fclose(out);
		free(buf);
		return NULL;
	}
	ret = tr_flamegraph_write(in, out, "Off-CPU \"time\" & <more>", "us");
	fclose(in);
	fclose(out);
	if (ret != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* 0: well-formed, 1: not, -1: python3 missing. */
static int xml_check(const char *svg)
{
	char path[] = "/tmp/tracerig-fg-XXXXXX", cmd[256];
	int fd, rc;

	if (system("command -v python3 >/dev/null 2>&1") != 0)
		return -1;
	fd = mkstemp(path);
	if (fd < 0)
		return 1;
	rc = write(fd, svg, strlen(svg)) == (ssize_t)strlen(svg) ? 0 : 1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "python3 -c 'import sys, xml.etree.ElementTree as E; "
		 "r = E.parse(sys.argv[1]).getroot(); sys.exit(0 if r.tag.endswith(\"svg\") else 1)' %s",
		 path);
	if (rc == 0)
		rc = system(cmd) == 0 ? 0 : 1;
	unlink(path);
	return rc;
}

DEF_TEST(one_rect_per_distinct_node_with_weights_and_shares)
{
	const char *folded = "main;a;b 30\nmain;a;c 10\nmain;d 60\nmain;a;b 20\n";
	char *svg = render(folded, strlen(folded));

	CHECK_NOT_NULL(svg);
	/* main, a, b, c, d */
	EXPECT_EQ_INT(5, count(svg, "<rect x=") - 1 /* background */);
	EXPECT_CONTAINS("<title>b (50 us, 41.67%)</title>", svg);
	EXPECT_CONTAINS("<title>a (60 us, 50.00%)</title>", svg);
	EXPECT_CONTAINS("<title>d (60 us, 50.00%)</title>", svg);
	EXPECT_CONTAINS("120 us in all", svg);
	EXPECT_CONTAINS("Off-CPU &quot;time&quot; &amp; &lt;more&gt;", svg);
	EXPECT_CONTAINS("<script", svg);
	EXPECT_TRUE(strstr(svg, "xlink:href") == NULL && strstr(svg, "src=") == NULL);
	free(svg);
}

DEF_TEST(hostile_names_still_give_well_formed_xml)
{
	/* JIT names come from files the traced program wrote. */
	const char folded[] = "app;<script>alert(1)</script>;x]]>y 3\n"
			      "app;ctl\x01\x1f" "char;bad\xff\xfe utf8 2\n"
			      "app;caf\xc3\xa9;ok 1\n"
			      "app;esc\x1b[2Jdel\x7f\tc1\xc2\x9b 1\n";
	char *svg = render(folded, sizeof(folded) - 1);
	int xml;

	CHECK_NOT_NULL(svg);
	EXPECT_TRUE(strstr(svg, "<script>alert") == NULL);
	EXPECT_CONTAINS("&lt;script&gt;alert(1)&lt;/script&gt;", svg);
	EXPECT_CONTAINS("caf\xc3\xa9", svg); /* valid UTF-8 kept as is */
	/* The rule of every output (lib/sanitize.h): ESC, DEL, tab, C1. */
	EXPECT_CONTAINS("esc?[2Jdel??c1??", svg);
	EXPECT_TRUE(strchr(svg, '\x1b') == NULL && strchr(svg, '\x7f') == NULL);
	xml = xml_check(svg);
	if (xml < 0)
		printf("# python3 missing: XML well-formedness not checked\n");
	else
		EXPECT_EQ_INT(0, xml);
	free(svg);
}

DEF_TEST(many_stacks_merge_into_their_distinct_paths)
{
	size_t cap = 1 << 20, len = 0;
	char *folded = malloc(cap), *svg;
	int xml;

	CHECK_NOT_NULL(folded);
	/* 2000 lines, 20 distinct leaves under one 30-deep path. */
	for (int i = 0; i < 2000; i++) {
		for (int d = 0; d < 30; d++)
			len += (size_t)snprintf(folded + len, cap - len, "f%d;", d);
		len += (size_t)snprintf(folded + len, cap - len, "leaf%d 5\n", i % 20);
	}
	svg = render(folded, len);
	free(folded);
	CHECK_NOT_NULL(svg);
	EXPECT_EQ_INT(30 + 20, count(svg, "<g class=\"f\""));
	EXPECT_CONTAINS("<title>f0 (10000 us, 100.00%)</title>", svg);
	EXPECT_CONTAINS("<title>leaf7 (500 us, 5.00%)</title>", svg);
	xml = xml_check(svg);
	if (xml >= 0)
		EXPECT_EQ_INT(0, xml);
	free(svg);
}

int main(void)
{
	RUN_TEST(one_rect_per_distinct_node_with_weights_and_shares);
	RUN_TEST(hostile_names_still_give_well_formed_xml);
	RUN_TEST(many_stacks_merge_into_their_distinct_paths);
	TEST_MAIN_END();
}
