#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "core/log.h"
#include "profile.h"

struct parse_state {
	struct tr_profile *profile;
	const char *origin;
	FILE *file;
	int line;
	int errors;
	int too_long;
	int indented;    /* the current line continues the previous key's value */
	int mid_line;    /* the last read ended inside a line (inih grows its buffer) */
	size_t line_len; /* characters of the current line read so far */
	int in_bad_section; /* keys under a refused section header are ignored */
	char *header;       /* a line starting with '[', gathered over the reads */
	size_t header_len;
};

/* inih keeps a section name in a 50-byte buffer (MAX_SECTION) and cuts a
 * longer one silently: the keys would land in a section of another name. */
#define SECTION_NAME_MAX 49

/* inih's line buffer grows up to this; it must hold "\r\n\0" besides. */
#define PROFILE_MAX_LINE (TR_PROFILE_MAX_LINE + 3)
/* The largest profile read: hand-written files are a few KiB, generated
 * ones with long event lists or payloads a few MiB at most. */
#define PROFILE_MAX_SIZE (16 << 20)

static struct tr_section *add_section(struct tr_profile *p, const char *name, const char *origin,
				      int line)
{
	struct tr_section *grown, *s;

	grown = realloc(p->sections, (p->n_sections + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	p->sections = grown;
	s = &p->sections[p->n_sections];
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	if (!s->name)
		return NULL;
	s->origin = origin;
	s->line = line;
	p->n_sections++;
	return s;
}

static int set_entry(struct tr_section *s, const char *key, const char *value, const char *origin,
		     int line)
{
	struct tr_entry *e = tr_section_entry(s, key), *grown;
	char *copy = strdup(value);

	if (!copy)
		return -ENOMEM;
	if (e) {
		free(e->value);
		e->value = copy;
		e->origin = origin;
		e->line = line;
		return 0;
	}
	grown = realloc(s->entries, (s->n_entries + 1) * sizeof(*grown));
	if (!grown) {
		free(copy);
		return -ENOMEM;
	}
	s->entries = grown;
	e = &s->entries[s->n_entries];
	memset(e, 0, sizeof(*e));
	e->key = strdup(key);
	if (!e->key) {
		free(copy);
		return -ENOMEM;
	}
	e->value = copy;
	e->origin = origin;
	e->line = line;
	s->n_entries++;
	return 0;
}

struct tr_section *tr_profile_section(const struct tr_profile *p, const char *name)
{
	for (size_t i = 0; i < p->n_sections; i++)
		if (strcmp(p->sections[i].name, name) == 0)
			return &p->sections[i];
	return NULL;
}

struct tr_entry *tr_section_entry(const struct tr_section *s, const char *key)
{
	for (size_t i = 0; s && i < s->n_entries; i++)
		if (strcmp(s->entries[i].key, key) == 0)
			return &s->entries[i];
	return NULL;
}

void tr_entry_where(const struct tr_entry *e, char *buf, size_t len)
{
	if (e->line > 0)
		snprintf(buf, len, "%s:%d", e->origin, e->line);
	else
		snprintf(buf, len, "%s", e->origin);
}

/* Debian's inih reports a section only through its keys, so an empty
 * section ("[zip]", a backend with all defaults) would go unseen: sections
 * are recorded here, from the raw line, with inih's own trimming rules. */
static void note_section_header(struct parse_state *st, const char *line)
{
	const char *start = line, *end;
	char name[256];
	struct tr_section *s;

	while (*start == ' ' || *start == '\t')
		start++;
	if (*start != '[')
		return;
	end = strchr(start, ']');
	if (!end)
		return; /* inih reports the syntax error */
	start++;
	while (start < end && (*start == ' ' || *start == '\t'))
		start++;
	while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	st->in_bad_section = 0;
	if (end - start > SECTION_NAME_MAX) {
		tr_err("%s:%d: section name [%.20s...] is %zu characters long: at most %d (it "
		       "names a backend or [tracerig])", st->origin, st->line, start,
		       (size_t)(end - start), SECTION_NAME_MAX);
		st->errors++;
		st->in_bad_section = 1;
		return;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(end - start), start);
	s = tr_profile_section(st->profile, name);
	if (s && s->origin == st->origin) {
		tr_err("%s:%d: section [%s] appears twice (first at line %d): merge them",
		       st->origin, st->line, name, s->line);
		st->errors++;
		return;
	}
	if (!s && !add_section(st->profile, name, st->origin, st->line))
		st->errors++;
}

/* inih reads line by line through this, which is how we know the line
 * number of every key (Debian's inih is built without INI_HANDLER_LINENO).
 * With ini_allow_realloc inih reads a long line in several calls, each into
 * the rest of a grown buffer: only the first call starts a line.  At its
 * limit inih would silently parse the rest of the line as a new line, so an
 * overlong line is cut here and reported. */
static char *read_line(char *buf, int size, void *stream)
{
	struct parse_state *st = stream;
	char *got = fgets(buf, size, st->file);
	int start = !st->mid_line, ends_nl, too_long;
	size_t len;

	if (!got)
		return NULL;
	len = strlen(buf); /* shorter than what was read if the line holds a NUL */
	ends_nl = len > 0 && buf[len - 1] == '\n';
	if (start) {
		st->line++;
		st->line_len = 0;
		st->indented = buf[0] == ' ' || buf[0] == '\t';
	}
	st->line_len += len;
	st->mid_line = len > 0 && !ends_nl && !feof(st->file);
	if (st->mid_line) {
		/* inih grows its buffer no further than this. */
		too_long = st->line_len >= PROFILE_MAX_LINE - 1;
	} else {
		size_t content = st->line_len - (size_t)ends_nl;

		if (ends_nl && len > 1 && buf[len - 2] == '\r')
			content--;
		too_long = content > TR_PROFILE_MAX_LINE;
	}
	if (too_long) {
		int c;

		tr_err("%s:%d: line longer than %d characters (split a long list over "
		       "indented continuation lines)", st->origin, st->line, TR_PROFILE_MAX_LINE);
		st->errors++;
		st->too_long = 1;
		while (st->mid_line && (c = fgetc(st->file)) != EOF && c != '\n')
			;
		buf[0] = '\0';
		st->mid_line = 0;
	}
	if ((start && !st->header && buf[strspn(buf, " \t")] == '[') || (!start && st->header)) {
		/* A header longer than inih's first buffer comes in pieces. */
		char *grown = realloc(st->header, st->header_len + len + 1);

		if (grown) {
			memcpy(grown + st->header_len, buf, len + 1);
			st->header = grown;
			st->header_len += len;
		}
	}
	if (st->header && !st->mid_line) {
		note_section_header(st, st->header);
		free(st->header);
		st->header = NULL;
		st->header_len = 0;
	}
	return got;
}

/* Joins a continuation line to the value so far: a value ending in a
 * backslash goes on with a space (a filter split over lines), anything else
 * with a comma (one list item per line). */
static char *join_continuation(const char *so_far, const char *more)
{
	size_t len = strlen(so_far), total = len + strlen(more) + 2;
	char *joined = malloc(total);

	if (!joined)
		return NULL;
	if (len && so_far[len - 1] == '\\') {
		while (len > 1 && (so_far[len - 2] == ' ' || so_far[len - 2] == '\t'))
			len--;
		snprintf(joined, total, "%.*s %s", (int)(len - 1), so_far, more);
	} else {
		snprintf(joined, total, "%s,%s", so_far, more);
	}
	return joined;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *st = user;
	struct tr_profile *p = st->profile;
	struct tr_section *s;
	struct tr_entry *e;

	if (name == NULL || st->in_bad_section)
		return 1; /* headers are recorded by note_section_header */
	if (section[0] == '\0') {
		tr_err("%s:%d: key '%s' is outside any section (put it under [tracerig] or a "
		       "backend's section)", st->origin, st->line, name);
		st->errors++;
		return 1;
	}
	s = tr_profile_section(p, section);
	if (!s && !(s = add_section(p, section, st->origin, st->line)))
		return 0;
	e = tr_section_entry(s, name);
	if (e && e->origin == st->origin) {
		/* inih reports an indented continuation line as the same key
		 * again: that is how long lists are split, so join them. */
		if (st->indented) {
			char *joined = join_continuation(e->value, value);

			if (!joined)
				return 0;
			free(e->value);
			e->value = joined;
			e->line = st->line;
			return 1;
		}
		tr_err("%s:%d: [%s] %s is set twice (first at line %d): keep one", st->origin,
		       st->line, section, name, e->line);
		st->errors++;
		return 1;
	}
	if (set_entry(s, name, value, st->origin, st->line) < 0)
		return 0;
	return 1;
}

static const char *keep_origin(struct tr_profile *p, const char *path)
{
	if (p->n_origins == sizeof(p->origins) / sizeof(p->origins[0]))
		return NULL;
	p->origins[p->n_origins] = strdup(path);
	return p->origins[p->n_origins] ? p->origins[p->n_origins++] : NULL;
}

static const char *file_kind(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return "unreadable";
	switch (st.st_mode & S_IFMT) {
	case S_IFDIR: return "a directory";
	case S_IFIFO: return "a FIFO";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFSOCK: return "a socket";
	}
	return "not a regular file";
}

/* Opens `path` for reading only if it is a regular file: a FIFO would block
 * and /dev/zero never end.  O_NONBLOCK keeps the open itself from waiting
 * for a FIFO's writer.  *file is NULL (and 0 returned) for another type. */
static int open_regular(const char *path, FILE **file)
{
	struct statfs fs;
	struct stat st;
	int fd;

	*file = NULL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENXIO ? 0 : -errno; /* a socket */
	if (fstat(fd, &st) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	/* procfs, sysfs, tracefs and debugfs call their files regular: one
	 * blocks for ever (trace_pipe), another consumes what it gives
	 * (/proc/kmsg).  None is a profile. */
	if (fstatfs(fd, &fs) == 0 &&
	    (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC ||
	     fs.f_type == TRACEFS_MAGIC || fs.f_type == DEBUGFS_MAGIC)) {
		close(fd);
		return -EMEDIUMTYPE;
	}
	if (st.st_size > PROFILE_MAX_SIZE) {
		close(fd);
		return -EFBIG;
	}
	if (fcntl(fd, F_SETFL, 0) < 0 || !(*file = fdopen(fd, "r"))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return 0;
}

int tr_profile_load(struct tr_profile *p, const char *path)
{
	struct parse_state st = { .profile = p };
	int ret;

	st.origin = keep_origin(p, path);
	if (!st.origin)
		return -ENOMEM;
	ret = open_regular(path, &st.file);
	if (ret == -EMEDIUMTYPE) {
		tr_err("%s: a file of the kernel's procfs, sysfs, tracefs or debugfs, not a profile: "
		       "give the path of a profile (.ini)", path);
		return 1;
	}
	if (ret == -EFBIG) {
		tr_err("%s: larger than %d KiB, too large for a profile: give the path of a "
		       "profile (.ini)", path, PROFILE_MAX_SIZE >> 10);
		return 1;
	}
	if (ret < 0)
		return ret;
	if (!st.file) {
		tr_err("%s: not a regular file (it is %s): give the path of a profile (.ini)",
		       path, file_kind(path));
		return 1;
	}
	if (!p->path)
		p->path = strdup(path);

	/* Long event lists and filters are legitimate: let inih grow its line
	 * buffer (Debian's libinih starts at 200 bytes and, unless told to
	 * reallocate, parses the rest of a longer line as a new line). */
	ini_use_stack = false;
	ini_allow_realloc = true;
	ini_max_line = PROFILE_MAX_LINE;
	ret = ini_parse_stream(read_line, &st, on_key, &st);
	free(st.header);
	fclose(st.file);
	if (ret > 0 && !st.too_long) {
		tr_err("%s:%d: cannot parse this line (expected [section], key = value, or a "
		       "comment starting with ; or #)", path, ret);
		st.errors++;
	} else if (ret < 0) {
		return ret == -2 ? -ENOMEM : -EIO;
	}
	return st.errors;
}

int tr_profile_set(struct tr_profile *p, const char *assignment)
{
	const char *dot = strchr(assignment, '.'), *eq = strchr(assignment, '=');
	struct tr_section *s;
	char section[128], key[128];

	if (!dot || !eq || dot > eq || dot == assignment || eq == dot + 1) {
		tr_err("--set %s: expected SECTION.KEY=VALUE (for example --set "
		       "perf_events.frequency=499)", assignment);
		return -EINVAL;
	}
	if ((size_t)(dot - assignment) >= sizeof(section) || (size_t)(eq - dot - 1) >= sizeof(key)) {
		tr_err("--set %s: section or key name too long", assignment);
		return -EINVAL;
	}
	snprintf(section, sizeof(section), "%.*s", (int)(dot - assignment), assignment);
	snprintf(key, sizeof(key), "%.*s", (int)(eq - dot - 1), dot + 1);
	s = tr_profile_section(p, section);
	if (!s && !(s = add_section(p, section, "--set", 0)))
		return -ENOMEM;
	return set_entry(s, key, eq + 1, "--set", 0);
}

int tr_profile_default(struct tr_profile *p, const char *section, const char *key,
		       const char *value, const char *origin, int line)
{
	struct tr_section *s = tr_profile_section(p, section);

	if (!s && !(s = add_section(p, section, origin, line)))
		return -ENOMEM;
	if (tr_section_entry(s, key))
		return 0;
	return set_entry(s, key, value, origin, line);
}

void tr_profile_free(struct tr_profile *p)
{
	for (size_t i = 0; i < p->n_sections; i++) {
		struct tr_section *s = &p->sections[i];

		for (size_t j = 0; j < s->n_entries; j++) {
			free(s->entries[j].key);
			free(s->entries[j].value);
		}
		free(s->entries);
		free(s->name);
	}
	free(p->sections);
	for (size_t i = 0; i < p->n_origins; i++)
		free(p->origins[i]);
	free(p->path);
	memset(p, 0, sizeof(*p));
}
