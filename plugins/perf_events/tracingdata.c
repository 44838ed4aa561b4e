/* The tracing data feature of perf.data: see tracingdata.h for the layout,
 * which must match perf 6.1's trace_report() (trace-event-read.c) byte for
 * byte, as it reads the blob as a stream and has no length to resync on. */
#include "config.h"

#include "bytebuf.h"
#include "tracefs.h"
#include "tracingdata.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TD_VERSION "0.6"

static void td_str(struct bytebuf *b, const char *s)
{
	bytebuf_put(b, s, strlen(s) + 1);
}

/* Appends `root`/`rel` as a u64 (or u32) size and its contents.  An
 * optional file that cannot be read is written as size 0. */
static int put_file(struct bytebuf *b, const char *root, const char *rel, int size32,
		    int optional)
{
	char path[4096], *data = NULL;
	size_t len = 0;
	int err;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	err = tracefs_read(path, &data, &len);
	if (err && optional && err != -ENOMEM) {
		len = 0;
		err = 0;
	}
	if (err)
		return err;
	if (size32 && len > UINT32_MAX) {
		free(data);
		return -EFBIG;
	}
	if (size32)
		bytebuf_u32(b, (uint32_t)len);
	else
		bytebuf_u64(b, (uint64_t)len);
	if (len)
		bytebuf_put(b, data, len);
	free(data);
	return b->err;
}

static int bad_name(const char *s)
{
	return !s || !*s || strchr(s, '/') || strcmp(s, ".") == 0 || strcmp(s, "..") == 0;
}

int td_build(const char *const *sys, const char *const *name, size_t n, char **blob,
	     size_t *len)
{
	const char *root = tracefs_root();

	if (!root)
		return -ENOENT;
	return td_build_from(root, sys, name, n, blob, len);
}

/* Is i the first index of its sys:name pair (later ones are duplicates)? */
static int first_of_event(const char *const *sys, const char *const *name, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (strcmp(sys[j], sys[i]) == 0 && strcmp(name[j], name[i]) == 0)
			return 0;
	return 1;
}

static int first_of_system(const char *const *sys, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (strcmp(sys[j], sys[i]) == 0)
			return 0;
	return 1;
}

/* The magic, version, byte order, long and page sizes. */
static void put_preamble(struct bytebuf *b)
{
	static const char magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const uint16_t one = 1;
	long page = sysconf(_SC_PAGESIZE);

	bytebuf_put(b, magic, sizeof(magic));
	td_str(b, TD_VERSION);
	bytebuf_put(b, &(uint8_t){ *(const uint8_t *)&one ? 0 : 1 }, 1); /* big endian? */
	bytebuf_put(b, &(uint8_t){ (uint8_t)sizeof(long) }, 1);
	bytebuf_u32(b, (uint32_t)(page > 0 ? page : 4096));
}

static int put_headers(struct bytebuf *b, const char *root)
{
	int err;

	/* perf compares 12 and 13 bytes: the names with their NUL. */
	td_str(b, "header_page");
	err = put_file(b, root, "events/header_page", 0, 0);
	if (err)
		return err;
	td_str(b, "header_event");
	return put_file(b, root, "events/header_event", 0, 0);
}

/* The system sys[i] (its first index) and the formats of its events, each
 * once. */
static int put_system(struct bytebuf *b, const char *root, const char *const *sys,
		      const char *const *name, size_t n, size_t i)
{
	uint32_t count = 0;
	size_t j;
	int err;

	for (j = i; j < n; j++)
		if (strcmp(sys[j], sys[i]) == 0 && first_of_event(sys, name, j))
			count++;
	td_str(b, sys[i]);
	bytebuf_u32(b, count);
	for (j = i; j < n; j++) {
		char rel[1024];

		if (strcmp(sys[j], sys[i]) != 0 || !first_of_event(sys, name, j))
			continue;
		if ((size_t)snprintf(rel, sizeof(rel), "events/%s/%s/format", sys[j], name[j]) >=
		    sizeof(rel))
			return -ENAMETOOLONG;
		err = put_file(b, root, rel, 0, 0);
		if (err)
			return err;
	}
	return 0;
}

static int put_systems(struct bytebuf *b, const char *root, const char *const *sys,
		       const char *const *name, size_t n)
{
	uint32_t n_sys = 0;
	size_t i;
	int err;

	for (i = 0; i < n; i++)
		n_sys += (uint32_t)first_of_system(sys, i);
	bytebuf_u32(b, n_sys);
	for (i = 0; i < n; i++) {
		if (!first_of_system(sys, i))
			continue;
		err = put_system(b, root, sys, name, n, i);
		if (err)
			return err;
	}
	return 0;
}

int td_build_from(const char *root, const char *const *sys, const char *const *name, size_t n,
		  char **blob, size_t *len)
{
	struct bytebuf b = { 0 };
	size_t i;
	int err;

	if (!root || !blob || !len || (n && (!sys || !name)))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (bad_name(sys[i]) || bad_name(name[i]))
			return -EINVAL;

	put_preamble(&b);
	err = put_headers(&b, root);
	if (err)
		goto fail;

	bytebuf_u32(&b, 0);                  /* ftrace (function tracer) formats */

	err = put_systems(&b, root, sys, name, n);
	if (err)
		goto fail;

	/* kallsyms: only function-tracer events need it, and perf skips a
	 * size of 0.  Then the printk formats (bprint events) and the pid to
	 * comm table, both best effort. */
	bytebuf_u32(&b, 0);
	err = put_file(&b, root, "printk_formats", 1, 1);
	if (!err)
		err = put_file(&b, root, "saved_cmdlines", 0, 1);
	if (!err)
		err = b.err;
	if (err)
		goto fail;
	*blob = (char *)b.p;
	*len = b.len;
	return 0;

fail:
	free(b.p);
	return err;
}
