/* `tracerig report ARCHIVE [--top N]`: what is in a .trace.zip, at a glance.
 *
 * The command: its options, then the archive's sections in order, each from
 * core/report/: the manifest basics (overview.c), the CPU samples (cpu.c),
 * the off-CPU time (offcpu.c), the .NET runtime's events (runtime.c).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "archive.h"
#include "core/exitcodes.h"
#include "cpu.h"
#include "offcpu.h"
#include "overview.h"
#include "report.h"
#include "runtime.h"

#define REPORT_DEFAULT_TOP 10

static void report_usage(FILE *out)
{
	fprintf(out,
		"Usage: tracerig report ARCHIVE [--top N] [--max-size SIZE]\n"
		"\n"
		"Summarizes a tracerig archive (.trace.zip): the session, each backend's\n"
		"status, the top functions by self and total CPU samples, the processes,\n"
		"off-CPU time and .NET runtime events (GCs, exceptions, JIT) when the\n"
		"archive has them.  perfcollect's archives\n"
		"(entries under NAME.trace/) are read too.\n"
		"\n"
		"  -n, --top N          show the N first functions and processes (default %d)\n"
		"      --max-size SIZE  read no entry that inflates past SIZE (default 1G):\n"
		"                       a small archive can hold an entry of many GB\n"
		"  -h, --help           this help\n",
		REPORT_DEFAULT_TOP);
}

static const struct option report_options[] = {
	{ "top", required_argument, NULL, 'n' },
	{ "max-size", required_argument, NULL, 'M' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* 0 with *top set, or -EINVAL once said on stderr. */
static int parse_top(const char *arg, int *top)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (*end || end == arg || errno || v < 1 || v > 100000) {
		fprintf(stderr, "tracerig: report: --top %s: not a count (use --top 20)\n", arg);
		return -EINVAL;
	}
	*top = (int)v;
	return 0;
}

int tr_report_main(int argc, char **argv)
{
	struct rp_archive ar;
	int c, cpu, off, top = REPORT_DEFAULT_TOP, status = TR_EXIT_OK;
	uint64_t max_size = RP_MAX_SIZE_DEFAULT;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:h", report_options, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_top(optarg, &top) < 0)
				return TR_EXIT_USAGE;
			break;
		case 'M':
			if (rp_archive_parse_size(optarg, &max_size) < 0) {
				fprintf(stderr, "tracerig: report: --max-size %s: not a size (use "
					"--max-size 4G, or 512M)\n", optarg);
				return TR_EXIT_USAGE;
			}
			break;
		case 'h':
			report_usage(stdout);
			return TR_EXIT_OK;
		default:
			fprintf(stderr, "Try 'tracerig report --help'.\n");
			return TR_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "tracerig: report: %s (tracerig report ARCHIVE [--top N])\n",
			optind == argc ? "which archive? give one .trace.zip"
				       : "one archive at a time");
		return TR_EXIT_USAGE;
	}
	if (rp_archive_open(argv[optind], "report", &ar) < 0)
		return TR_EXIT_FAILURE;
	ar.max_size = max_size;

	rp_report_overview(&ar);
	cpu = rp_report_cpu(&ar, top);
	off = rp_report_offcpu(&ar, top);
	if (cpu < 0 || off < 0)
		status = TR_EXIT_FAILURE;
	else if (!cpu && !off)
		printf("\nNo samples in this archive: no backend recorded CPU samples or "
		       "off-CPU stacks.\n");
	if (rp_report_runtime(&ar, top) < 0)
		status = TR_EXIT_FAILURE;
	rp_archive_close(&ar);
	return status;
}
