/* Sample records: identifiers to events, the fixed fields. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "sample.h"

struct sample_id {
	uint64_t id;
	size_t ev;
};

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct sample_id *)a)->id, y = ((const struct sample_id *)b)->id;

	return (x > y) - (x < y);
}

int sample_ids_build(struct sample_ids *m, const struct pc_opened *ev, size_t n_ev)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < n_ev; i++)
		n += ev[i].n_ids;
	m->ids = calloc(n ? n : 1, sizeof(*m->ids));
	m->n = 0;
	if (!m->ids)
		return -ENOMEM;
	for (size_t i = 0; i < n_ev; i++)
		for (size_t j = 0; j < ev[i].n_ids; j++)
			m->ids[k++] = (struct sample_id){ ev[i].ids[j], i };
	qsort(m->ids, k, sizeof(*m->ids), cmp_id);
	m->n = k;
	return 0;
}

void sample_ids_free(struct sample_ids *m)
{
	free(m->ids);
	m->ids = NULL;
	m->n = 0;
}

/* Twice per sample: a binary search without bsearch's calls. */
const struct pc_opened *sample_event(const struct sample_ids *m, const struct pc_opened *ev,
				     uint64_t id)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->ids[mid].id < id)
			lo = mid + 1;
		else if (m->ids[mid].id > id)
			hi = mid;
		else
			return &ev[m->ids[mid].ev];
	}
	return NULL;
}

int sample_parse(const struct perf_event_header *h, uint64_t st, struct sample *s)
{
	const uint64_t *p = (const uint64_t *)(h + 1) + 1, *end;

	end = (const uint64_t *)((const char *)h + h->size);
	*s = (struct sample){ .period = 1, .end = end };
	/* IDENTIFIER (read by the caller), IP, TID: every event has them. */
	if (p + 2 > end)
		return -EINVAL;
	s->ip = *p++;
	s->pid = (pid_t)((const uint32_t *)p)[0];
	s->tid = (pid_t)((const uint32_t *)p)[1];
	p++;
	if ((st & PERF_SAMPLE_TIME) && p < end)
		s->time = *p++;
	if ((st & PERF_SAMPLE_CPU) && p < end)
		s->cpu = (int)((const uint32_t *)p++)[0];
	if ((st & PERF_SAMPLE_PERIOD) && p < end)
		s->period = *p++;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (p >= end)
			return -EINVAL;
		s->nr = *p++;
		if (s->nr > (uint64_t)(end - p))
			return -EINVAL;
		s->chain = p;
		p += s->nr;
	}
	if (st & PERF_SAMPLE_RAW) {
		if ((const char *)p + 4 > (const char *)end)
			return -EINVAL;
		s->raw_size = *(const uint32_t *)p;
		s->raw = (const char *)p + 4;
		if ((const char *)s->raw + s->raw_size > (const char *)end)
			s->raw = NULL;
		p += (4 + s->raw_size + 7) / 8;
	}
	s->regs = p < end ? p : end;
	return 0;
}

unsigned sample_time_from_end(uint64_t sample_type)
{
	unsigned off = 8;

	if (sample_type & PERF_SAMPLE_ID)
		off += 8;
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		off += 8;
	if (sample_type & PERF_SAMPLE_CPU)
		off += 8;
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		off += 8;
	return off;
}
