/* Flame graphs: merged call paths, widths by weight, escaped names, valid XML. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/flamegraph.h"
#include "../testing.h"

static char *render(const char *folded, const char *unit)
{
	FILE *in = fmemopen((void *)folded, strlen(folded), "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!in || !out)
		return NULL;
	if (tr_flamegraph_write(in, out, "CPU <test>", unit) != 0) {
		fclose(in);
		fclose(out);
		free(buf);
		return NULL;
	}
	fclose(in);
	fclose(out);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

DEF_TEST(common_prefixes_merge_into_one_frame)
{
	char *svg = render("demo;main;hot 60\ndemo;main;warm 30\ndemo;main;cold 10\n", "samples");

	CHECK_NOT_NULL(svg);
	/* demo, main, hot, warm, cold */
	EXPECT_EQ_INT(5, count(svg, "<g class=\"f\""));
	EXPECT_CONTAINS("<title>main (100 samples, 100.00%)</title>", svg);
	EXPECT_CONTAINS("<title>hot (60 samples, 60.00%)</title>", svg);
	EXPECT_CONTAINS("<title>cold (10 samples, 10.00%)</title>", svg);
	EXPECT_CONTAINS("100 samples in all", svg);
	/* hot takes 60% of the 1200 px width */
	EXPECT_CONTAINS("width=\"720.0\"", svg);
	free(svg);
}

DEF_TEST(names_are_escaped_and_spaces_kept)
{
	char *svg = render("app;std::vector<int>::push_back;a & b 5\nbad line\n\n", "us");

	CHECK_NOT_NULL(svg);
	EXPECT_CONTAINS("std::vector&lt;int&gt;::push_back", svg);
	EXPECT_CONTAINS("data-n=\"a &amp; b\"", svg);
	EXPECT_CONTAINS("(5 us, 100.00%)", svg);
	EXPECT_CONTAINS("CPU &lt;test&gt;", svg);
	EXPECT_TRUE(strstr(svg, "<int>") == NULL);
	free(svg);
}

DEF_TEST(tiny_frames_are_omitted)
{
	char *svg = render("a;big 1000000\na;tiny 1\n", "samples");

	CHECK_NOT_NULL(svg);
	EXPECT_TRUE(strstr(svg, "data-n=\"tiny\"") == NULL);
	EXPECT_CONTAINS("data-n=\"big\"", svg);
	free(svg);
}

DEF_TEST(empty_input_is_a_valid_graph_that_says_so)
{
	char *svg = render("", "samples");

	CHECK_NOT_NULL(svg);
	EXPECT_CONTAINS("no stacks were recorded", svg);
	EXPECT_CONTAINS("</svg>", svg);
	free(svg);
}

DEF_TEST(output_is_well_formed_xml)
{
	char *svg = render("p;f<1>;g\"q 3\np;h&i 2\n", "samples");
	char path[] = "/tmp/tracerig-fg-XXXXXX", cmd[256];
	int fd;

	CHECK_NOT_NULL(svg);
	if (system("command -v python3 >/dev/null 2>&1") != 0) {
		printf("# python3 missing: XML well-formedness not checked\n");
		free(svg);
		return;
	}
	fd = mkstemp(path);
	EXPECT_TRUE(fd >= 0);
	EXPECT_EQ_INT((long long)strlen(svg), write(fd, svg, strlen(svg)));
	close(fd);
	snprintf(cmd, sizeof(cmd), "python3 -c 'import sys, xml.etree.ElementTree as E; "
		 "E.parse(sys.argv[1])' %s", path);
	EXPECT_EQ_INT(0, system(cmd));
	unlink(path);
	free(svg);
}

int main(void)
{
	RUN_TEST(common_prefixes_merge_into_one_frame);
	RUN_TEST(names_are_escaped_and_spaces_kept);
	RUN_TEST(tiny_frames_are_omitted);
	RUN_TEST(empty_input_is_a_valid_graph_that_says_so);
	RUN_TEST(output_is_well_formed_xml);
	TEST_MAIN_END();
}
