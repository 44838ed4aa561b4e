/* libFuzzer target: the profile parser (core/session/profile.c over inih) and the
 * typed value parser (core/session/keys.c).
 *
 * The input is a profile file.  tr_profile_load() takes a path, so the
 * input goes to a memfd opened by its /proc/self/fd name, the way a real
 * profile is read (fopen + inih's line reader).  Every value that parses is
 * then checked against every key type, applied again through --set, and
 * every key name is matched for "did you mean". */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/log.h"
#include "core/session/keys.h"
#include "core/session/profile.h"

static int profile_fd = -1;
static char profile_path[64];

/* One key of each type, with and without a range, like the core's and the
 * plugins' tables. */
static const struct tracerig_key keys[] = {
	{ .name = "name", .type = TRACERIG_KEY_STRING },
	{ .name = "events", .type = TRACERIG_KEY_LIST },
	{ .name = "required", .type = TRACERIG_KEY_BOOL },
	{ .name = "frequency", .type = TRACERIG_KEY_INT, .min = 1, .max = 100000 },
	{ .name = "offset", .type = TRACERIG_KEY_INT },
	{ .name = "buffer_size", .type = TRACERIG_KEY_SIZE, .min = 4096, .max = 1LL << 40 },
	{ .name = "max_size", .type = TRACERIG_KEY_SIZE },
	{ .name = "duration", .type = TRACERIG_KEY_DURATION, .min = 1, .max = 86400000 },
	{ .name = "timeout", .type = TRACERIG_KEY_DURATION },
	{ .name = "mode", .type = TRACERIG_KEY_ENUM, .choices = "user,kernel,both" },
	{ .name = "empty_choice", .type = TRACERIG_KEY_ENUM, .choices = "" },
	{ .name = NULL },
};

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Errors about the input are expected by the thousand: keep stderr
	 * for sanitizer reports. */
	tr_log_set_verbosity(TRACERIG_LOG_ERROR - 1);
	profile_fd = memfd_create("fuzz-profile.ini", MFD_CLOEXEC);
	if (profile_fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(profile_path, sizeof(profile_path), "/proc/self/fd/%d", profile_fd);
	return 0;
}

static void write_input(const uint8_t *data, size_t size)
{
	size_t done = 0;

	if (ftruncate(profile_fd, 0) < 0)
		abort();
	while (done < size) {
		ssize_t n = pwrite(profile_fd, data + done, size - done, (off_t)done);

		if (n <= 0)
			abort();
		done += (size_t)n;
	}
}

static void check_value(const char *value)
{
	char err[256];

	for (const struct tracerig_key *k = keys; k->name; k++) {
		long long num = -1;
		int ret;

		err[0] = '\0';
		ret = tr_key_parse(k, value, &num, err, sizeof(err));
		if (ret == 0) {
			/* A parsed value is what the plugin reads: in range, never
			 * negative for sizes and durations. */
			if (k->min < k->max)
				assert(num >= k->min && num <= k->max);
			if (k->type == TRACERIG_KEY_SIZE || k->type == TRACERIG_KEY_DURATION)
				assert(num >= 0);
			if (k->type == TRACERIG_KEY_BOOL)
				assert(num == 0 || num == 1);
		} else {
			/* A refusal always says why. */
			assert(err[0] != '\0');
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_profile p;
	int ret;

	memset(&p, 0, sizeof(p));
	write_input(data, size);
	ret = tr_profile_load(&p, profile_path);
	assert(ret >= 0 || ret == -ENOMEM || ret == -EIO);

	for (size_t i = 0; i < p.n_sections; i++) {
		struct tr_section *s = &p.sections[i];

		assert(s->name && tr_profile_section(&p, s->name));
		for (size_t j = 0; j < s->n_entries; j++) {
			struct tr_entry *e = &s->entries[j];

			assert(e->key && e->value);
			assert(tr_section_entry(s, e->key) == e);
			check_value(e->value);
			(void)tr_key_suggest(keys, e->key);
		}
	}
	/* The same text as --set arguments: "SECTION.KEY=VALUE", so the input's
	 * lines are also read as assignments. */
	for (const uint8_t *line = data, *end = data + size; line < end;) {
		const uint8_t *nl = memchr(line, '\n', (size_t)(end - line));
		size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
		char *text = strndup((const char *)line, len);

		if (!text)
			abort();
		if (tr_profile_set(&p, text) == 0)
			check_value(strchr(text, '=') + 1);
		free(text);
		line += len + 1;
	}
	if (tr_profile_default(&p, "tracerig", "duration", "10", "tracerig.conf", 1) == 0)
		assert(tr_section_entry(tr_profile_section(&p, "tracerig"), "duration"));
	tr_profile_free(&p);
	/* The log keeps lines for tracerig.log until it is opened: drop them. */
	tr_log_close_file();
	return 0;
}
