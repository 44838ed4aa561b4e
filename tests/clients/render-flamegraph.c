/* core/views/flamegraph.c as a filter, for opening its output in a browser:
 *   render-flamegraph TITLE < stacks.folded > graph.svg */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "../../core/views/flamegraph.h"

int main(int argc, char **argv)
{
	int ret;

	if (argc != 2) {
		fputs("usage: render-flamegraph TITLE < FOLDED > SVG\n", stderr);
		return 2;
	}
	ret = tr_flamegraph_write(stdin, stdout, argv[1], "samples");
	if (ret < 0) {
		fprintf(stderr, "render-flamegraph: %s\n", strerror(-ret));
		return 1;
	}
	if (fflush(stdout) != 0) {
		perror("render-flamegraph");
		return 1;
	}
	return 0;
}
