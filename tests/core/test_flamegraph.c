/* Flame graphs: merged call paths, widths by weight, escaped names, valid XML. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/views/flamegraph.h"
#include "../../lib/folded.h"
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

/* y of the rect of the first frame at depth `depth`, or -1. */
static long frame_y(const char *svg, int depth)
{
	char key[32];
	const char *g, *y;

	snprintf(key, sizeof(key), "data-d=\"%d\"", depth);
	g = strstr(svg, key);
	y = g ? strstr(g, " y=\"") : NULL;
	return y ? strtol(y + 4, NULL, 10) : -1;
}

static long svg_height(const char *svg)
{
	const char *h = strstr(svg, " height=\"");

	return h ? strtol(h + 9, NULL, 10) : -1;
}

/* The browser's first screen relies on it: the bottom row sits at the same
 * distance from the bottom of the image whatever the depth, so scrolling to
 * the bottom always brings it into view. */
DEF_TEST(bottom_row_is_at_the_bottom_however_deep)
{
	char *deep_line = malloc(16 + 300 * 8), *shallow, *deep;
	size_t len;

	CHECK_NOT_NULL(deep_line);
	len = (size_t)sprintf(deep_line, "main");
	for (int i = 0; i < 300; i++)
		len += (size_t)sprintf(deep_line + len, ";recurse");
	sprintf(deep_line + len, " 10\n");
	shallow = render("main;work 10\n", "samples");
	deep = render(deep_line, "samples");
	CHECK_NOT_NULL(shallow);
	CHECK_NOT_NULL(deep);
	EXPECT_TRUE(svg_height(deep) > 300 * 16);
	EXPECT_TRUE(frame_y(deep, 1) > 0);
	EXPECT_EQ_INT(svg_height(shallow) - frame_y(shallow, 1), svg_height(deep) - frame_y(deep, 1));
	/* The deepest frame is at the top, below the header's space. */
	EXPECT_EQ_INT(frame_y(shallow, 2), frame_y(deep, 301));
	free(deep_line);
	free(shallow);
	free(deep);
}

DEF_TEST(the_view_starts_at_the_bottom_under_a_header_drawn_last)
{
	char *svg = render("a;b 1\n", "samples");
	const char *header, *last_frame;

	CHECK_NOT_NULL(svg);
	EXPECT_CONTAINS("window.scrollTo(0, svg.scrollHeight)", svg);
	header = strstr(svg, "<g id=\"header\">");
	last_frame = strstr(svg, "data-n=\"b\"");
	EXPECT_TRUE(header && last_frame && header > last_frame);
	/* The title and buttons are inside it, so they move with it. */
	EXPECT_TRUE(header && strstr(header, "id=\"search\"") && strstr(header, "id=\"unzoom\"") &&
		    strstr(header, "id=\"title\""));
	free(svg);
}

/* What the lines of `text` render to from a set, pruned when `prune`. */
static char *render_set(const char *text, int prune)
{
	struct tr_folded *set = tr_folded_new();
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	int ret = set && in && out ? tr_folded_read(set, in) : -1;

	if (ret == 0)
		ret = tr_flamegraph_write_set_pruned(set, 1, out, "CPU <test>", "samples", prune);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	tr_folded_free(set);
	if (ret != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Thousands of narrow processes beside a few wide ones, with the names
 * that sort out of frame order ("b" < "b-2" < "b;x" as lines: a node seen,
 * left, then met again): pruned, the graph is byte for byte the unpruned
 * one, and the same as from the text read as a file. */
DEF_TEST(a_pruned_graph_is_the_same_graph)
{
	char *text = NULL, *pruned, *whole, *from_file;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK_NOT_NULL(f);
	fputs("app-1;main;b 500\napp-1;main;b-2;x 300\napp-1;main;b.c;y 40\n"
	      "app-1;main;b;x 700\napp-1;main;b;x;deep;deeper 2\napp-1;main;c 900\n", f);
	for (int i = 0; i < 3000; i++)
		fprintf(f, "cc1-%05d;cc1-%05d;main;parse;expr%d 1\n", 10000 + i, 10000 + i, i % 13);
	fputs("sshd-9;sshd-9;poll 200000\n", f);
	fclose(f);
	pruned = render_set(text, 1);
	whole = render_set(text, 0);
	from_file = render(text, "samples");
	CHECK_NOT_NULL(pruned);
	CHECK_NOT_NULL(whole);
	EXPECT_EQ_STR(whole, pruned);
	EXPECT_TRUE(strstr(pruned, "data-n=\"deeper\"") == NULL); /* too narrow either way */
	EXPECT_TRUE(strstr(pruned, "data-n=\"b-2\"") != NULL);
	EXPECT_TRUE(count(pruned, "data-n=\"x\"") == 2);
	CHECK_NOT_NULL(from_file);
	EXPECT_EQ_STR(whole, from_file);
	free(from_file);
	free(pruned);
	free(whole);
	free(text);
}

/* Sorted lines share long beginnings, which the build walks once: a frame
 * that the next line's frame begins ("b" and "bc", "b" and "b.c") is
 * another node, and one that it ends with is the same, past 64 bytes of
 * shared beginning too. */
DEF_TEST(frames_that_begin_alike_stay_apart)
{
	char *text = NULL, *svg, outer[80];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK_NOT_NULL(f);
	memset(outer, 'o', sizeof(outer) - 1);
	outer[sizeof(outer) - 1] = '\0';
	fprintf(f, "app-1;%s;b 5\napp-1;%s;b.c 2\napp-1;%s;b;q 3\n", outer, outer, outer);
	fprintf(f, "app-1;%s;bc 7\napp-1;%s;bc;z 9\napp-1;%s 1\n", outer, outer, outer);
	fclose(f);
	svg = render_set(text, 0);
	CHECK_NOT_NULL(svg);
	EXPECT_CONTAINS("<title>app-1 (27 samples", svg);
	EXPECT_CONTAINS("(27 samples, 100.00%)</title>", svg);
	EXPECT_CONTAINS("<title>b (8 samples", svg);
	EXPECT_CONTAINS("<title>b.c (2 samples", svg);
	EXPECT_CONTAINS("<title>bc (16 samples", svg);
	EXPECT_CONTAINS("<title>q (3 samples", svg);
	EXPECT_CONTAINS("<title>z (9 samples", svg);
	EXPECT_EQ_INT(1, count(svg, "data-n=\"b\""));
	EXPECT_EQ_INT(7, count(svg, "<g class=\"f\""));
	free(svg);
	free(text);
}

/* The sink and the wall draw from their lines in memory: the same graph
 * as their folded file's, microseconds rounded as the file has them and
 * lines that round to nothing left out, however many lines. */
DEF_TEST(a_set_in_memory_draws_its_files_graph)
{
	struct tr_folded *set = tr_folded_new();
	char *text = NULL, *from_file, *from_set = NULL, line[96];
	size_t len = 0, svg_len = 0;
	FILE *f = open_memstream(&text, &len), *svg;

	CHECK_NOT_NULL(set);
	CHECK_NOT_NULL(f);
	for (int i = 0; i < 3000; i++) {
		int n = snprintf(line, sizeof(line), "cc1-%05d;cc1-%05d;main;parse;expr%d",
				 10000 + i % 700, 10000 + i % 700, i % 13);

		/* 400 ns to 1.4 ms: some lines round to 0 us. */
		EXPECT_EQ_INT(
			0, tr_folded_add(set, line, (size_t)n, 400 + (uint64_t)(i % 7) * 233333));
	}
	EXPECT_EQ_INT(0, tr_folded_add(set, "app-1;main;b;x", 14, 700499));
	EXPECT_EQ_INT(0, tr_folded_add(set, "app-1;main;b-2;x", 16, 300500));
	EXPECT_EQ_INT(0, tr_folded_write(set, f, 1000));
	fclose(f);
	from_file = render(text, "us");
	svg = open_memstream(&from_set, &svg_len);
	CHECK_NOT_NULL(svg);
	/* render() titles its graphs so. */
	EXPECT_EQ_INT(0, tr_flamegraph_write_set(set, 1000, svg, "CPU <test>", "us"));
	fclose(svg);
	CHECK_NOT_NULL(from_file);
	CHECK_NOT_NULL(from_set);
	EXPECT_EQ_STR(from_file, from_set);
	EXPECT_TRUE(strstr(from_set, "data-n=\"b-2\"") != NULL);
	free(from_file);
	free(from_set);
	free(text);
	tr_folded_free(set);
}

int main(void)
{
	RUN_TEST(common_prefixes_merge_into_one_frame);
	RUN_TEST(names_are_escaped_and_spaces_kept);
	RUN_TEST(tiny_frames_are_omitted);
	RUN_TEST(empty_input_is_a_valid_graph_that_says_so);
	RUN_TEST(output_is_well_formed_xml);
	RUN_TEST(bottom_row_is_at_the_bottom_however_deep);
	RUN_TEST(the_view_starts_at_the_bottom_under_a_header_drawn_last);
	RUN_TEST(a_pruned_graph_is_the_same_graph);
	RUN_TEST(frames_that_begin_alike_stay_apart);
	RUN_TEST(a_set_in_memory_draws_its_files_graph);
	TEST_MAIN_END();
}
