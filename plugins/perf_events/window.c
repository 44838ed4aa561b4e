#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "window.h"

/* Records are at most 64 KiB (a 16-bit size): a read this big always
 * holds at least one whole record. */
#define READ_SIZE (1u << 20)

/* Every event samples IDENTIFIER, IP, TID then TIME (collector.c). */
static int sample_time(const struct perf_event_header *h, uint64_t *t)
{
	if (h->size < sizeof(*h) + 32)
		return -1;
	memcpy(t, (const char *)(h + 1) + 24, sizeof(*t));
	return 0;
}

/* The records of one chunk, samples outside [from, to] left out. */
static int cut_chunk(const struct pc_window_chunk *ch, unsigned char *buf, struct pd_writer *w,
		     uint64_t from_ns, uint64_t to_ns, uint64_t *samples, char *why,
		     size_t why_len)
{
	uint64_t pos = ch->begin;

	while (pos < ch->end) {
		size_t want = ch->end - pos < READ_SIZE ? (size_t)(ch->end - pos) : READ_SIZE;
		ssize_t got = pread(ch->fd, buf, want, (off_t)pos);
		size_t off = 0;

		if (got <= 0) {
			snprintf(why, why_len, "cannot read a perf.data chunk: %s",
				 got < 0 ? strerror(errno) : "it is shorter than its header says");
			return got < 0 ? -errno : -EIO;
		}
		while (off + sizeof(struct perf_event_header) <= (size_t)got) {
			const struct perf_event_header *h = (const void *)(buf + off);
			uint64_t t;
			int ret;

			if (h->size < sizeof(*h) || h->size % 8) {
				snprintf(why, why_len, "a perf.data chunk holds a record of %u bytes",
					 (unsigned)h->size);
				return -EINVAL;
			}
			if (off + h->size > (size_t)got)
				break; /* read again from here */
			off += h->size;
			if (h->type == PERF_RECORD_SAMPLE) {
				if (sample_time(h, &t) < 0 || t < from_ns || t > to_ns)
					continue;
				(*samples)++;
			}
			ret = pd_write(w, h, h->size);
			if (ret < 0) {
				snprintf(why, why_len, "cannot write the snapshot's perf.data: %s",
					 strerror(-ret));
				return ret;
			}
		}
		if (off == 0) {
			snprintf(why, why_len, "a perf.data chunk ends inside a record");
			return -EIO;
		}
		pos += off;
	}
	return pd_write_finished_round(w);
}

int pw_cut(const struct pc_window *win, const struct pc_opened *ev, size_t n_ev, const void *td,
	   size_t td_len, uint64_t from_ns, uint64_t to_ns, const char *path,
	   struct pd_writer **out, uint64_t *samples, char *why, size_t why_len)
{
	unsigned char *buf = malloc(READ_SIZE);
	struct pd_writer *w = NULL;
	int ret;

	*out = NULL;
	*samples = 0;
	if (!buf) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	ret = pd_create(path, &w);
	if (ret < 0) {
		snprintf(why, why_len, "cannot create %s: %s", path, strerror(-ret));
		free(buf);
		return ret;
	}
	for (size_t i = 0; i < n_ev && ret == 0; i++)
		ret = pd_add_event(w, &ev[i].attr, ev[i].spec.name, ev[i].ids, ev[i].n_ids);
	if (ret == 0 && td && td_len)
		ret = pd_set_tracing_data(w, td, td_len);
	if (ret < 0)
		snprintf(why, why_len, "cannot describe the events in %s: %s", path, strerror(-ret));
	for (size_t i = 0; i < win->n && ret == 0; i++)
		ret = cut_chunk(&win->chunks[i], buf, w, from_ns, to_ns, samples, why, why_len);
	free(buf);
	if (ret < 0) {
		pd_abort(w);
		unlink(path);
		return ret;
	}
	*out = w;
	return 0;
}
