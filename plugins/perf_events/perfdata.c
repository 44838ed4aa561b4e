/* The perf.data writer.  Layout, in file order:
 *
 *   header (104 bytes)
 *   ids of every event, then the perf_file_attr array (when the events
 *     were added before the first record, as the collector does)
 *   data section: records, 8-byte aligned
 *   feature section table (one perf_file_section per set feature bit)
 *   feature payloads
 *   [ids and attrs here instead when events came after the first record]
 *
 * perf finds the feature table at data.offset + data.size, so it must come
 * right after the data.  The attrs go before the data and the header's
 * data.size follows every round (pd_write_finished_round, pd_sync): a file
 * whose writer was killed mid-collection is a valid perf.data up to its
 * last complete round, with no features, that stock perf reads. */
#include "config.h"

#include "bytebuf.h"
#include "lib/fdio.h"
#include "perfdata.h"
#include "perffile.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PD_BUF_SIZE (256 * 1024)
#define PD_NAME_ALIGN 64
/* perf 6.1 (and older) refuse attrs larger than their own struct, which
 * ends at sig_data; newer perf reads smaller ones fine. */
#define PD_ATTR_SIZE_VER7 128

/* Feature bits of tools/perf/util/header.h; the numbers are ABI. */
enum {
	HEADER_RESERVED = 0,
	HEADER_TRACING_DATA = 1,
	HEADER_BUILD_ID = 2,
	HEADER_HOSTNAME = 3,
	HEADER_OSRELEASE = 4,
	HEADER_VERSION = 5,
	HEADER_ARCH = 6,
	HEADER_NRCPUS = 7,
	HEADER_CPUDESC = 8,
	HEADER_CPUID = 9,
	HEADER_TOTAL_MEM = 10,
	HEADER_CMDLINE = 11,
	HEADER_EVENT_DESC = 12,
	HEADER_CLOCKID = 23,
	HEADER_CLOCK_DATA = 29,
};

/* struct perf_record_header_build_id: 36 bytes, then the padded name. */
#define PD_BUILD_ID_REC 36
#define PERF_RECORD_MISC_BUILD_ID_SIZE (1 << 15)
#define HOST_KERNEL_ID (-1)

struct pd_event {
	struct perf_event_attr attr;
	char *name;
	uint64_t *ids;
	size_t n_ids;
	uint64_t ids_offset;
};

struct pd_writer {
	int fd;
	uint8_t *buf;
	size_t buf_len;
	uint64_t data_offset; /* 0 until the first record fixes it */
	uint64_t data_size;
	uint64_t synced_size; /* data.size in the header on disk */
	struct pd_file_section head_attrs; /* attrs written before the data */
	size_t head_attr_size, head_n_events;
	/* HEADER_TRACING_DATA while collecting (pd_set_tracing_data): the
	 * blob before the data, and a feature table after the data of each
	 * sync (see interim_table). */
	uint8_t *td;
	size_t td_len;
	uint64_t td_offset;
	uint64_t synced_end; /* data_size right after the last sync */
	struct pd_event *events;
	size_t n_events;
};

static size_t file_attr_size(const struct pd_writer *w);
static void put_attr(struct bytebuf *b, const struct perf_event_attr *attr, size_t size);

static void buf_string(struct bytebuf *b, const char *s)
{
	size_t len = strlen(s) + 1;
	size_t padded = (len + PD_NAME_ALIGN - 1) & ~(size_t)(PD_NAME_ALIGN - 1);

	bytebuf_u32(b, (uint32_t)padded);
	bytebuf_put(b, s, len);
	bytebuf_put(b, NULL, padded - len);
}


static int flush(struct pd_writer *w)
{
	int err;

	if (!w->buf_len)
		return 0;
	err = tr_write_all(w->fd, w->buf, w->buf_len);
	if (!err)
		w->buf_len = 0;
	return err;
}

int pd_create(const char *path, struct pd_writer **out)
{
	struct pd_file_header hdr = {
		.magic = PD_MAGIC,
		.size = sizeof(hdr),
		.data = { .offset = sizeof(hdr) },
	};
	struct pd_writer *w;
	int err;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->buf = malloc(PD_BUF_SIZE);
	if (!w->buf) {
		err = -ENOMEM;
		goto err_free;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		err = -errno;
		goto err_free;
	}
	/* A valid header with no data and no attrs yet: the first record
	 * puts the attrs before the data (write_head). */
	err = tr_write_all(w->fd, &hdr, sizeof(hdr));
	if (err)
		goto err_close;
	*out = w;
	return 0;

err_close:
	close(w->fd);
err_free:
	free(w->buf);
	free(w);
	return err;
}

/* Checks that `record` holds whole records, so a bad size from a ring
 * buffer cannot desynchronise every record after it in the file. */
static int check_records(const uint8_t *p, size_t len)
{
	size_t off = 0;

	while (off < len) {
		struct perf_event_header hdr;

		if (len - off < sizeof(hdr))
			return -EINVAL;
		memcpy(&hdr, p + off, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size % 8 || hdr.size > len - off)
			return -EINVAL;
		off += hdr.size;
	}
	return 0;
}

/* perf 6.1 refuses a file with tracepoint attrs and no HEADER_TRACING_DATA,
 * and finds the feature table at data.offset + data.size, where the next
 * records go.  So while collecting, each sync ends the data with these 32
 * bytes, which are at once
 *   - a feature table: an entry for HEADER_RESERVED (bit 0, which perf
 *     skips without reading it), then HEADER_TRACING_DATA -> the blob, and
 *   - one 32-byte PERF_RECORD_FINISHED_ROUND (perf reads only its header),
 * and the header's data.size stops right before them.  The next sync's
 * records follow them, and one 8-byte pwrite of data.size moves the file
 * from one valid state to the next: it is never unreadable. */
static void interim_table(const struct pd_writer *w, uint8_t table[32])
{
	struct perf_event_header round = {
		.type = PD_RECORD_FINISHED_ROUND,
		.size = 32,
	};
	struct pd_file_section td = { .offset = w->td_offset, .size = w->td_len };

	memset(table, 0, 32);
	memcpy(table, &round, sizeof(round));
	memcpy(table + 16, &td, sizeof(td));
}

int pd_set_tracing_data(struct pd_writer *w, const void *blob, size_t len)
{
	uint8_t *copy;

	if (w->data_offset || !len)
		return -EINVAL; /* the blob goes before the data */
	copy = malloc(len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, blob, len);
	free(w->td);
	w->td = copy;
	w->td_len = len;
	return 0;
}

/* The ids of every event, then the attrs pointing at them, as they go
 * right after the header; w->head_attrs says where the attrs are. */
static int put_ids_and_attrs(struct pd_writer *w, struct bytebuf *b, size_t attr_size)
{
	const size_t hdr_size = sizeof(struct pd_file_header);
	uint64_t *ids_off;
	size_t k;

	ids_off = calloc(w->n_events, sizeof(*ids_off));
	if (!ids_off)
		return -ENOMEM;
	for (k = 0; k < w->n_events; k++) {
		ids_off[k] = hdr_size + b->len;
		bytebuf_put(b, w->events[k].ids, w->events[k].n_ids * sizeof(uint64_t));
	}
	w->head_attrs.offset = hdr_size + b->len;
	w->head_attrs.size = w->n_events * (attr_size + sizeof(struct pd_file_section));
	for (k = 0; k < w->n_events; k++) {
		struct pd_file_section ids = {
			.offset = ids_off[k],
			.size = w->events[k].n_ids * sizeof(uint64_t),
		};

		put_attr(b, &w->events[k].attr, attr_size);
		bytebuf_put(b, &ids, sizeof(ids));
	}
	free(ids_off);
	return 0;
}

/* Writes the ids, the attrs and the tracing data right after the header,
 * and fills in hdr's attrs and features to match. */
static int write_head_attrs(struct pd_writer *w, struct pd_file_header *hdr)
{
	struct bytebuf b = { 0 };
	size_t attr_size = file_attr_size(w);
	int err;

	err = put_ids_and_attrs(w, &b, attr_size);
	if (err)
		return err;
	if (w->td) {
		bytebuf_put(&b, NULL, ((b.len + 7) & ~(size_t)7) - b.len);
		w->td_offset = sizeof(*hdr) + b.len;
		bytebuf_put(&b, w->td, w->td_len);
		hdr->adds_features[0] = 1ULL << HEADER_RESERVED | 1ULL << HEADER_TRACING_DATA;
	}
	err = b.err;
	if (!err)
		err = tr_pwrite_all(w->fd, b.p, b.len, (off_t)sizeof(*hdr));
	free(b.p);
	if (err)
		return err;
	w->head_attr_size = attr_size;
	w->head_n_events = w->n_events;
	w->data_offset = sizeof(*hdr) + ((b.len + 7) & ~(size_t)7);
	hdr->attr_size = attr_size + sizeof(struct pd_file_section);
	hdr->attrs = w->head_attrs;
	return 0;
}

/* Writes the header and leaves the file offset where the data starts. */
static int write_header(struct pd_writer *w, struct pd_file_header *hdr)
{
	int err;

	hdr->data.offset = w->data_offset;
	err = tr_pwrite_all(w->fd, hdr, sizeof(*hdr), 0);
	if (!err && lseek(w->fd, (off_t)w->data_offset, SEEK_SET) < 0)
		err = -errno;
	if (!err && w->td) {
		/* data.size is 0: the table is right at data.offset. */
		uint8_t table[32];

		interim_table(w, table);
		err = tr_write_all(w->fd, table, sizeof(table));
		if (!err)
			w->data_size = w->synced_end = sizeof(table);
	}
	return err;
}

/* The ids and attrs of the events known so far, written right after the
 * header, and the header pointing at them: from then on the file needs
 * nothing more than a data.size to be read. */
static int write_head(struct pd_writer *w)
{
	struct pd_file_header hdr = {
		.magic = PD_MAGIC,
		.size = sizeof(hdr),
	};
	int err;

	w->data_offset = sizeof(hdr);
	if (!w->n_events) {
		free(w->td); /* only with the attrs (pd_set_tracing_data) */
		w->td = NULL;
		return write_header(w, &hdr); /* attrs will follow the data (pd_finish) */
	}
	err = write_head_attrs(w, &hdr);
	if (err)
		return err;
	return write_header(w, &hdr);
}

int pd_write(struct pd_writer *w, const void *record, size_t len)
{
	int err;

	err = check_records(record, len);
	if (err)
		return err;
	if (!w->data_offset) {
		err = write_head(w);
		if (err)
			return err;
	}
	if (w->buf_len + len > PD_BUF_SIZE) {
		err = flush(w);
		if (err)
			return err;
	}
	if (len >= PD_BUF_SIZE) {
		err = tr_write_all(w->fd, record, len);
		if (err)
			return err;
	} else {
		memcpy(w->buf + w->buf_len, record, len);
		w->buf_len += len;
	}
	w->data_size += len;
	return 0;
}

uint64_t pd_data_size(const struct pd_writer *w)
{
	return w->data_size;
}

uint64_t pd_data_on_disk(const struct pd_writer *w)
{
	/* With tracing data the last sync's table is on disk too, after
	 * the size the header says. */
	return w->td ? w->synced_end : w->synced_size;
}

int pd_sync(struct pd_writer *w)
{
	uint64_t size;
	int err;

	if (!w->data_offset)
		return 0; /* nothing written: the header says so already */
	if (w->td && w->data_size != w->synced_end) {
		uint8_t table[32];

		/* The size on disk stops before the table (interim_table). */
		size = w->data_size;
		interim_table(w, table);
		err = pd_write(w, table, sizeof(table));
		if (!err)
			err = flush(w);
		if (!err)
			err = tr_pwrite_all(w->fd, &size, sizeof(size),
					  (off_t)offsetof(struct pd_file_header, data.size));
		if (err)
			return err;
		w->synced_size = size;
		w->synced_end = w->data_size;
		return 0;
	}
	err = flush(w);
	if (err)
		return err;
	if (w->td || w->synced_size == w->data_size)
		return 0;
	/* After the records it counts: a reader never sees a size larger
	 * than what is on disk. */
	size = w->data_size;
	err = tr_pwrite_all(w->fd, &size, sizeof(size),
			  (off_t)offsetof(struct pd_file_header, data.size));
	if (!err)
		w->synced_size = size;
	return err;
}

int pd_write_finished_round(struct pd_writer *w)
{
	struct perf_event_header hdr = {
		.type = PD_RECORD_FINISHED_ROUND,
		.size = sizeof(hdr),
	};
	int err;

	/* With tracing data, the sync's table is a round marker already. */
	if (w->td && w->data_offset)
		return pd_sync(w);
	err = pd_write(w, &hdr, sizeof(hdr));
	if (!err)
		err = pd_sync(w);
	return err;
}

int pd_add_event(struct pd_writer *w, const struct perf_event_attr *attr, const char *name,
		 const uint64_t *ids, size_t n_ids)
{
	struct pd_event *ev, *v;

	if (!attr || !name || (n_ids && !ids))
		return -EINVAL;
	v = realloc(w->events, (w->n_events + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->events = v;
	ev = &v[w->n_events];
	memset(ev, 0, sizeof(*ev));
	/* attr->size may be smaller (an older ABI) than our struct. */
	memcpy(&ev->attr, attr, attr->size && attr->size < sizeof(*attr) ? attr->size
									  : sizeof(*attr));
	ev->name = strdup(name);
	ev->ids = malloc(n_ids ? n_ids * sizeof(*ids) : 1);
	if (!ev->name || !ev->ids) {
		free(ev->name);
		free(ev->ids);
		return -ENOMEM;
	}
	if (n_ids)
		memcpy(ev->ids, ids, n_ids * sizeof(*ids));
	ev->n_ids = n_ids;
	w->n_events++;
	return 0;
}

/* The attr size written: the smallest of our struct and perf 6.1's that
 * loses nothing, so old and new perf both read the file. */
static size_t file_attr_size(const struct pd_writer *w)
{
	size_t i, j;

	if (sizeof(struct perf_event_attr) <= PD_ATTR_SIZE_VER7)
		return sizeof(struct perf_event_attr);
	for (i = 0; i < w->n_events; i++) {
		const uint8_t *p = (const uint8_t *)&w->events[i].attr;

		for (j = PD_ATTR_SIZE_VER7; j < sizeof(struct perf_event_attr); j++)
			if (p[j])
				return sizeof(struct perf_event_attr);
	}
	return PD_ATTR_SIZE_VER7;
}

static void put_attr(struct bytebuf *b, const struct perf_event_attr *attr, size_t size)
{
	struct perf_event_attr a = *attr;

	a.size = (uint32_t)size;
	bytebuf_put(b, &a, size);
}

static void feat_build_id(struct bytebuf *b, const struct pd_features *f)
{
	size_t i;

	for (i = 0; i < f->n_build_ids; i++) {
		const struct pd_build_id *bid = &f->build_ids[i];
		size_t name_len = strlen(bid->filename) + 1;
		size_t padded = (name_len + PD_NAME_ALIGN - 1) & ~(size_t)(PD_NAME_ALIGN - 1);
		uint8_t rec[PD_BUILD_ID_REC];
		struct perf_event_header hdr;
		int32_t pid = HOST_KERNEL_ID;

		/* The pid field names the *machine* (-1 = host); any other
		 * value makes perf invent a guest machine for it.  Kernel or
		 * user space is said by the cpumode in misc instead. */
		hdr.type = PD_RECORD_HEADER_BUILD_ID;
		hdr.misc = (bid->pid == -1 ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER) |
			   PERF_RECORD_MISC_BUILD_ID_SIZE;
		hdr.size = (uint16_t)(sizeof(rec) + padded);
		memset(rec, 0, sizeof(rec));
		memcpy(rec, &hdr, sizeof(hdr));
		memcpy(rec + 8, &pid, sizeof(pid));
		memcpy(rec + 12, bid->id, bid->size > 20 ? 20 : bid->size);
		rec[32] = bid->size > 20 ? 20 : bid->size;
		bytebuf_put(b, rec, sizeof(rec));
		bytebuf_put(b, bid->filename, name_len);
		bytebuf_put(b, NULL, padded - name_len);
	}
}

static void feat_event_desc(struct bytebuf *b, const struct pd_writer *w, size_t attr_size)
{
	size_t i;

	bytebuf_u32(b, (uint32_t)w->n_events);
	bytebuf_u32(b, (uint32_t)attr_size);
	for (i = 0; i < w->n_events; i++) {
		const struct pd_event *ev = &w->events[i];

		put_attr(b, &ev->attr, attr_size);
		bytebuf_u32(b, (uint32_t)ev->n_ids);
		buf_string(b, ev->name);
		bytebuf_put(b, ev->ids, ev->n_ids * sizeof(uint64_t));
	}
}

/* What the feature writers read: the caller's features and what the
 * writer knows of its events. */
struct feat_src {
	const struct pd_writer *w;
	const struct pd_features *f;
	const struct perf_event_attr *clk_attr; /* the first event with use_clockid */
	size_t attr_size;                       /* file_attr_size() */
};

/* One feature section, as perf's feat_ops[] in util/header.c: when it is
 * written and how.  A string feature (no `write`) names its field of
 * pd_features by offset and is written when that is set; the others say
 * with `present`. */
struct feat_op {
	int bit;
	int (*present)(const struct feat_src *s);
	void (*write)(struct bytebuf *b, const struct feat_src *s);
	size_t str_off; /* string features: offsetof(struct pd_features, field) */
};

static const char *feat_string(const struct feat_op *op, const struct feat_src *s)
{
	const char *const *field =
		(const char *const *)((const char *)s->f + op->str_off);

	return *field;
}

static int has_tracing_data(const struct feat_src *s)
{
	return s->f->tracing_data && s->f->tracing_data_len;
}

static void write_tracing_data(struct bytebuf *b, const struct feat_src *s)
{
	/* The blob as is: perf's trace_report() reads it from the
	 * section's offset as a stream. */
	bytebuf_put(b, s->f->tracing_data, s->f->tracing_data_len);
}

static int has_build_ids(const struct feat_src *s)
{
	return s->f->n_build_ids != 0;
}

static void write_build_ids(struct bytebuf *b, const struct feat_src *s)
{
	feat_build_id(b, s->f);
}

static int has_nrcpus(const struct feat_src *s)
{
	return s->f->nr_cpus_avail != 0;
}

static void write_nrcpus(struct bytebuf *b, const struct feat_src *s)
{
	bytebuf_u32(b, s->f->nr_cpus_avail);
	bytebuf_u32(b, s->f->nr_cpus_online ? s->f->nr_cpus_online : s->f->nr_cpus_avail);
}

static int has_total_mem(const struct feat_src *s)
{
	return s->f->total_mem_kb != 0;
}

static void write_total_mem(struct bytebuf *b, const struct feat_src *s)
{
	bytebuf_u64(b, s->f->total_mem_kb);
}

static int has_cmdline(const struct feat_src *s)
{
	return s->f->argc > 0 && s->f->argv;
}

static void write_cmdline(struct bytebuf *b, const struct feat_src *s)
{
	bytebuf_u32(b, (uint32_t)s->f->argc);
	for (int j = 0; j < s->f->argc; j++)
		buf_string(b, s->f->argv[j] ? s->f->argv[j] : "");
}

static int has_events(const struct feat_src *s)
{
	return s->w->n_events != 0;
}

static void write_event_desc(struct bytebuf *b, const struct feat_src *s)
{
	feat_event_desc(b, s->w, s->attr_size);
}

/* The clock features describe the events' clock; without use_clockid
 * the kernel used perf_clock and they would lie. */
static int has_clockid(const struct feat_src *s)
{
	return s->clk_attr != NULL;
}

static void write_clockid(struct bytebuf *b, const struct feat_src *s)
{
	struct timespec res;

	/* Despite the name: the clock's resolution in ns. */
	if (clock_getres((clockid_t)s->clk_attr->clockid, &res) != 0) {
		res.tv_sec = 0;
		res.tv_nsec = 1;
	}
	bytebuf_u64(b, (uint64_t)res.tv_sec * 1000000000ULL + (uint64_t)res.tv_nsec);
}

static int has_clock_data(const struct feat_src *s)
{
	return s->clk_attr && s->f->clock_ref_tod_ns && s->f->clock_ref_clk_ns;
}

static void write_clock_data(struct bytebuf *b, const struct feat_src *s)
{
	bytebuf_u32(b, 1); /* version */
	bytebuf_u32(b, (uint32_t)s->clk_attr->clockid);
	bytebuf_u64(b, s->f->clock_ref_tod_ns);
	bytebuf_u64(b, s->f->clock_ref_clk_ns);
}

#define FEAT_STRING(bit_, field) \
	{ .bit = (bit_), .str_off = offsetof(struct pd_features, field) }

/* In bit order: perf pairs the table's entries with the set bits in order. */
static const struct feat_op feat_ops[] = {
	{ .bit = HEADER_TRACING_DATA, .present = has_tracing_data, .write = write_tracing_data },
	{ .bit = HEADER_BUILD_ID, .present = has_build_ids, .write = write_build_ids },
	FEAT_STRING(HEADER_HOSTNAME, hostname),
	FEAT_STRING(HEADER_OSRELEASE, osrelease),
	FEAT_STRING(HEADER_VERSION, version),
	FEAT_STRING(HEADER_ARCH, arch),
	{ .bit = HEADER_NRCPUS, .present = has_nrcpus, .write = write_nrcpus },
	FEAT_STRING(HEADER_CPUDESC, cpudesc),
	FEAT_STRING(HEADER_CPUID, cpuid),
	{ .bit = HEADER_TOTAL_MEM, .present = has_total_mem, .write = write_total_mem },
	{ .bit = HEADER_CMDLINE, .present = has_cmdline, .write = write_cmdline },
	{ .bit = HEADER_EVENT_DESC, .present = has_events, .write = write_event_desc },
	{ .bit = HEADER_CLOCKID, .present = has_clockid, .write = write_clockid },
	{ .bit = HEADER_CLOCK_DATA, .present = has_clock_data, .write = write_clock_data },
};

#define N_FEAT_OPS (sizeof(feat_ops) / sizeof(feat_ops[0]))

static int feat_present(const struct feat_op *op, const struct feat_src *s)
{
	return op->write ? op->present(s) : feat_string(op, s) != NULL;
}

static void feat_write(const struct feat_op *op, struct bytebuf *b, const struct feat_src *s)
{
	if (op->write)
		op->write(b, s);
	else
		buf_string(b, feat_string(op, s));
}

/* The feature section table, then each present feature's payload, with
 * its bit set in the header. */
static int build_features(const struct feat_src *src, uint64_t base,
			  struct pd_file_header *hdr, struct bytebuf *b)
{
	const struct feat_op *present[N_FEAT_OPS];
	size_t n = 0, table, i;

	for (i = 0; i < N_FEAT_OPS; i++)
		if (feat_present(&feat_ops[i], src))
			present[n++] = &feat_ops[i];
	table = b->len;
	bytebuf_put(b, NULL, n * sizeof(struct pd_file_section));
	for (i = 0; i < n; i++) {
		struct pd_file_section sec = { .offset = base + b->len };

		feat_write(present[i], b, src);
		if (b->err)
			return b->err;
		sec.size = base + b->len - sec.offset;
		memcpy(b->p + table + i * sizeof(sec), &sec, sizeof(sec));
		hdr->adds_features[present[i]->bit / 64] |= 1ULL << (present[i]->bit % 64);
	}
	return 0;
}

/* The ids and attrs after the features, when they are not before the
 * data already; fills the header's attrs section either way. */
static int build_attrs(struct pd_writer *w, size_t attr_size, uint64_t base,
		       struct pd_file_header *hdr, struct bytebuf *b)
{
	size_t k;

	if (w->head_n_events && w->head_n_events == w->n_events) {
		/* Already before the data, where perf found them all along. */
		hdr->attr_size = w->head_attr_size + sizeof(struct pd_file_section);
		hdr->attrs = w->head_attrs;
		return b->err;
	}
	for (k = 0; k < w->n_events; k++) {
		w->events[k].ids_offset = base + b->len;
		bytebuf_put(b, w->events[k].ids, w->events[k].n_ids * sizeof(uint64_t));
	}
	hdr->attr_size = attr_size + sizeof(struct pd_file_section);
	hdr->attrs.offset = base + b->len;
	hdr->attrs.size = w->n_events * hdr->attr_size;
	for (k = 0; k < w->n_events; k++) {
		struct pd_file_section ids = {
			.offset = w->events[k].ids_offset,
			.size = w->events[k].n_ids * sizeof(uint64_t),
		};

		put_attr(b, &w->events[k].attr, attr_size);
		bytebuf_put(b, &ids, sizeof(ids));
	}
	return b->err;
}

/* Builds everything after the data into `b`, with file offsets counted
 * from `base`, and fills the header's attrs section and feature bits. */
static int build_tail(struct pd_writer *w, const struct pd_features *f, uint64_t base,
		      struct pd_file_header *hdr, struct bytebuf *b)
{
	struct feat_src src = { .w = w, .f = f, .attr_size = file_attr_size(w) };
	int err;

	for (size_t k = 0; k < w->n_events && !src.clk_attr; k++)
		if (w->events[k].attr.use_clockid)
			src.clk_attr = &w->events[k].attr;
	err = build_features(&src, base, hdr, b);
	if (err)
		return err;
	return build_attrs(w, src.attr_size, base, hdr, b);
}

static void writer_free(struct pd_writer *w)
{
	size_t i;

	for (i = 0; i < w->n_events; i++) {
		free(w->events[i].name);
		free(w->events[i].ids);
	}
	free(w->events);
	free(w->td);
	free(w->buf);
	free(w);
}

int pd_finish(struct pd_writer *w, const struct pd_features *features)
{
	static const struct pd_features none;
	struct pd_file_header hdr = {
		.magic = PD_MAGIC,
		.size = sizeof(hdr),
	};
	struct bytebuf tail = { 0 };
	int err;

	if (!features)
		features = &none;
	/* perf cannot attribute a single record without an attr. */
	if (!w->n_events) {
		err = -EINVAL;
		goto out;
	}
	if (!w->data_offset) {
		err = write_head(w);
		if (err)
			goto out;
	}
	err = flush(w);
	if (err)
		goto out;
	hdr.data.offset = w->data_offset;
	hdr.data.size = w->data_size;
	err = build_tail(w, features, w->data_offset + w->data_size, &hdr, &tail);
	if (err)
		goto out;
	err = tr_pwrite_all(w->fd, tail.p, tail.len, (off_t)(w->data_offset + w->data_size));
	if (err)
		goto out;
	/* The header last: until now it describes the data of the last
	 * round, without features. */
	err = tr_pwrite_all(w->fd, &hdr, sizeof(hdr), 0);
out:
	free(tail.p);
	if (close(w->fd) != 0 && !err)
		err = -errno;
	writer_free(w);
	return err;
}

int pd_append_only_from(const char *path, uint64_t *offset)
{
	struct pd_file_header hdr;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	n = pread(fd, &hdr, sizeof(hdr), 0);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != sizeof(hdr) || hdr.magic != PD_MAGIC)
		err = -EINVAL;
	/* write_head: the attrs right after the header, the data after them;
	 * until then data.offset is the placeholder right after the header,
	 * where the attrs will go. */
	else if (!hdr.attrs.size || hdr.attrs.offset < sizeof(hdr) ||
		 hdr.data.offset < hdr.attrs.offset + hdr.attrs.size)
		err = -EAGAIN;
	else
		*offset = hdr.data.offset;
	close(fd);
	return err;
}

void pd_abort(struct pd_writer *w)
{
	if (!w)
		return;
	/* Best effort: the records written so far stay in the file, and
	 * the header says so, for whoever wants to salvage them. */
	(void)pd_sync(w);
	close(w->fd);
	writer_free(w);
}
