/* libFuzzer target: the archive readers, `tracerig report ARCHIVE`
 * (core/report/report.c and core/report/: libzip, the perf.data.txt and folded
 * readers; core/archive/jsonread.c, the manifest.json reader) and `tracerig
 * convert ARCHIVE` (core/report/convert.c: the same readers into core/views/stackset.c,
 * whose weights are summed and scaled, written by core/views/export.c as pprof,
 * folded or speedscope), and the manifest writer (core/archive/json.c) whose output
 * the reader must read back.
 *
 * Input: a zip file as is when it starts with "PK"; otherwise up to four
 * parts separated by 0x1e (ASCII record separator), stored as
 * manifest.json, perf.data.txt, offcpu.folded and cpu.folded (an empty
 * part: no such entry), which is where the readers' bugs live.  (With
 * cpu.folded, the report reads it rather than perf.data.txt.) */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "core/archive/json.h"
#include "core/archive/jsonread.h"
#include "core/exitcodes.h"
#include "core/report/convert.h"
#include "core/report/report.h"

#define SEP 0x1e

static char zip_path[4096];
static char out_dir[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cleanup(void)
{
	char dir[sizeof(zip_path)];
	char *slash;

	unlink(zip_path);
	rmdir(out_dir);
	snprintf(dir, sizeof(dir), "%s", zip_path);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		rmdir(dir);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char dir[sizeof(zip_path) - 32];

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/tracerig-fuzz-report.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	snprintf(zip_path, sizeof(zip_path), "%s/fuzz.trace.zip", dir);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	if (mkdir(out_dir, 0700) < 0) {
		perror("mkdir");
		abort();
	}
	atexit(cleanup);
	/* The report itself is of no interest, only how it is made. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

static void write_raw(const uint8_t *data, size_t size)
{
	FILE *f = fopen(zip_path, "we");

	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
}

static void write_archive(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "manifest.json", "perf.data.txt", "offcpu.folded",
					     "cpu.folded" };
	const uint8_t *part = data, *end = data + size;
	zip_t *za;
	int err;

	za = zip_open(zip_path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	if (!za)
		abort();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && part <= end; i++) {
		const uint8_t *sep = memchr(part, SEP, (size_t)(end - part));
		size_t len = sep ? (size_t)(sep - part) : (size_t)(end - part);
		zip_source_t *src;
		zip_int64_t idx;

		if (len) {
			src = zip_source_buffer(za, part, len, 0);
			if (!src)
				abort();
			idx = zip_file_add(za, names[i], src, ZIP_FL_OVERWRITE);
			if (idx < 0)
				abort();
			/* Stored: the time goes to the readers, not to deflate. */
			if (zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_STORE, 0) < 0)
				abort();
		}
		if (!sep)
			break;
		part = sep + 1;
	}
	if (zip_close(za) < 0)
		abort();
}

/* What tr_json_string writes, the report's reader must give back. */
static void json_round_trip(const uint8_t *data, size_t size)
{
	char *text = strndup((const char *)data, size), *out = NULL;
	const struct tr_jv *got;
	struct tr_json j;
	size_t out_len = 0;
	FILE *f;
	struct tr_jv v;

	if (!text)
		abort();
	f = open_memstream(&out, &out_len);
	if (!f)
		abort();
	tr_json_init(&j, f);
	tr_json_object(&j, NULL);
	tr_json_string(&j, "host", text);
	tr_json_array(&j, text);
	tr_json_string(&j, NULL, text);
	tr_json_end_array(&j);
	tr_json_end_object(&j);
	tr_json_finish(&j);
	if (fclose(f) != 0)
		abort();
	assert(tr_jv_parse(out, out_len, &v) == 0);
	got = tr_jv_get(&v, "host", NULL);
	assert(got && got->type == TR_JV_STRING && strcmp(got->string, text) == 0);
	/* tr_jv_get finds the first of two equal keys. */
	got = strcmp(text, "host") ? tr_jv_get(&v, text, NULL) : &v.items[1];
	assert(got && got->type == TR_JV_ARRAY && got->n == 1);
	assert(got->items[0].type == TR_JV_STRING && strcmp(got->items[0].string, text) == 0);
	tr_jv_free(&v);
	free(out);
	free(text);
}

/* `tracerig convert` of the same archive, in the format the input's size
 * picks; what it wrote is removed (-f: the names stay the same). */
static void convert(size_t size)
{
	static const char *const formats[] = { "pprof", "folded", "speedscope" };
	static const char *const outputs[] = {
		"cpu.pb.gz", "offcpu.pb.gz", "wall.pb.gz", "cpu.folded", "offcpu.folded",
		"wall.folded", "speedscope.json",
	};
	char *argv[] = { "convert", "-f", "--max-size", "64M", "--to", (char *)formats[size % 3],
			 "-o", out_dir, zip_path, NULL };
	char path[sizeof(out_dir) + 64];
	int status = tr_convert_main(9, argv);

	assert(status == 0 || status == 1);
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		snprintf(path, sizeof(path), "%s/fuzz.%s", out_dir, outputs[i]);
		unlink(path);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[] = { "report", "--top", "3", zip_path, NULL };
	int status;

	if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
		write_raw(data, size);
	} else {
		const uint8_t *sep = memchr(data, SEP, size);

		write_archive(data, size);
		json_round_trip(data, sep ? (size_t)(sep - data) : size);
	}
	status = tr_report_main(4, argv);
	assert(status == TR_EXIT_OK || status == TR_EXIT_FAILURE);
	convert(size);
	return 0;
}
