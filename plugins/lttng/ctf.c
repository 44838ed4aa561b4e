/* Reading back the trace LTTng wrote: how big it is, which streams it has,
 * and the clock its timestamps use, so the manifest can line LTTng events
 * up with perf samples. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf.h"

#define CTF_MAGIC 0x75D11D57u
#define CTF_PACKET_HEADER 37 /* magic, uuid, checksum, content/packet size, 5 bytes */

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Concatenates the text of every metadata packet. */
static char *metadata_text(const unsigned char *data, size_t len)
{
	char *text = malloc(len + 1);
	size_t out = 0, pos = 0;

	if (!text)
		return NULL;
	if (len < 4 || le32(data) != CTF_MAGIC) {
		memcpy(text, data, len);
		text[len] = '\0';
		return text;
	}
	while (pos + CTF_PACKET_HEADER <= len && le32(data + pos) == CTF_MAGIC) {
		uint32_t content_bits = le32(data + pos + 24), packet_bits = le32(data + pos + 28);
		size_t content = content_bits / 8, packet = packet_bits / 8;

		if (packet < CTF_PACKET_HEADER || content < CTF_PACKET_HEADER || content > packet ||
		    pos + content > len)
			break;
		memcpy(text + out, data + pos + CTF_PACKET_HEADER, content - CTF_PACKET_HEADER);
		out += content - CTF_PACKET_HEADER;
		pos += packet;
	}
	text[out] = '\0';
	return text;
}

int ctf_metadata_clock(const unsigned char *data, size_t len, char *name, size_t name_len,
		       int64_t *offset_ns)
{
	char *text = metadata_text(data, len), *clock, *end, *p;
	long long offset_s = 0, offset = 0, freq = 1000000000;
	int ret = -ENOENT;

	if (!text)
		return -ENOMEM;
	clock = strstr(text, "clock {");
	if (!clock)
		goto out;
	end = strstr(clock, "};");
	if (end)
		*end = '\0';
	if ((p = strstr(clock, "name = ")) != NULL) {
		size_t n = 0;

		p += 7;
		if (*p == '"')
			p++;
		while (p[n] && p[n] != '"' && p[n] != ';' && n + 1 < name_len)
			n++;
		memcpy(name, p, n);
		name[n] = '\0';
	} else if (name_len) {
		name[0] = '\0';
	}
	if ((p = strstr(clock, "freq = ")) != NULL)
		freq = strtoll(p + 7, NULL, 10);
	if ((p = strstr(clock, "offset_s = ")) != NULL)
		offset_s = strtoll(p + 11, NULL, 10);
	if ((p = strstr(clock, "offset = ")) != NULL)
		offset = strtoll(p + 9, NULL, 10);
	if (freq <= 0)
		goto out;
	/* offset is in clock cycles; LTTng's clock runs at 1 GHz. */
	*offset_ns = (int64_t)offset_s * 1000000000LL +
		     (freq == 1000000000 ? offset : (int64_t)((double)offset * 1e9 / (double)freq));
	ret = 0;
out:
	free(text);
	return ret;
}

int ctf_metadata_events(const unsigned char *data, size_t len, ctf_name_cb cb, void *arg)
{
	char *text = metadata_text(data, len), *p;
	int n = 0;

	if (!text)
		return -ENOMEM;
	/* LTTng writes each declaration as "event {\n\tname = \"x\";". */
	for (p = strstr(text, "event {"); p; p = strstr(p, "event {")) {
		char *name, *end;

		p += 7;
		name = strstr(p, "name = ");
		end = strstr(p, "};");
		if (!name || (end && name > end))
			continue;
		name += 7;
		if (*name == '"')
			name++;
		end = name + strcspn(name, "\";\n");
		if (end == name)
			continue;
		*end = '\0';
		cb(arg, name);
		n++;
		p = end + 1;
	}
	free(text);
	return n;
}

static int read_file(const char *path, unsigned char **data, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	*data = buf;
	*len = got;
out:
	close(fd);
	return ret;
}

static int walk(const char *root, const char *rel, struct ctf_summary *out, int depth)
{
	char path[4096], child[1024];
	struct dirent *de;
	DIR *d;

	if (depth > 16)
		return 0;
	snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
	d = opendir(path);
	if (!d)
		return errno == ENOENT && !*rel ? 0 : -errno;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		char full[4096 + 256];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(child, sizeof(child), "%s%s%s", rel, *rel ? "/" : "", de->d_name);
		snprintf(full, sizeof(full), "%s/%s", root, child);
		if (lstat(full, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(root, child, out, depth + 1);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		out->files++;
		out->bytes += (uint64_t)st.st_size;
		if (strcmp(de->d_name, "metadata") == 0) {
			if (out->n_metadata++ == 0)
				snprintf(out->first_metadata, sizeof(out->first_metadata), "%s", child);
		} else if (!strstr(child, "/index/") && strncmp(child, "index/", 6) != 0) {
			out->n_streams++;
		}
	}
	closedir(d);
	return 0;
}

int ctf_summarize(const char *dir, struct ctf_summary *out)
{
	unsigned char *data = NULL;
	char path[4096 + 512];
	size_t len = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = walk(dir, "", out, 0);
	if (ret < 0 || !out->n_metadata)
		return ret;
	snprintf(path, sizeof(path), "%s/%s", dir, out->first_metadata);
	if (read_file(path, &data, &len) == 0) {
		if (ctf_metadata_clock(data, len, out->clock_name, sizeof(out->clock_name),
				       &out->clock_offset_ns) == 0)
			out->have_clock = 1;
		free(data);
	}
	return 0;
}

static int walk_metadata(const char *path, int depth, ctf_name_cb cb, void *arg)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (depth > 16)
		return 0;
	d = opendir(path);
	if (!d)
		return errno == ENOENT && depth == 0 ? 0 : -errno;
	while ((de = readdir(d)) != NULL) {
		char full[4096];
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(full, sizeof(full), "%s/%s", path, de->d_name) >= (int)sizeof(full) ||
		    lstat(full, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int ret = walk_metadata(full, depth + 1, cb, arg);

			if (ret > 0)
				n += ret;
		} else if (S_ISREG(st.st_mode) && strcmp(de->d_name, "metadata") == 0) {
			unsigned char *data = NULL;
			size_t len = 0;

			if (read_file(full, &data, &len) == 0) {
				int ret = ctf_metadata_events(data, len, cb, arg);

				if (ret > 0)
					n += ret;
				free(data);
			}
		}
	}
	closedir(d);
	return n;
}

int ctf_event_names(const char *dir, ctf_name_cb cb, void *arg)
{
	return walk_metadata(dir, 0, cb, arg);
}
