#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counts.h"
#include "lib/clrevents.h"
#include "lib/nettrace.h"
#include "runtime.h"
#include "text.h"

#define SUFFIX ".nettrace"

/* The first read of an entry; it grows to what one block needs, which the
 * reader holds to TR_NETTRACE_MAX_BLOCK: that, not the entry's size, is
 * what a .nettrace costs in memory. */
#define CHUNK (1u << 20)
/* Threads with a suspension under way: the runtime suspends from one
 * thread at a time, a few GC threads at most. */
#define MAX_SUSPENDING 64

struct rt_proc {
	uint64_t gcs, gen[4]; /* gen0, gen1, gen2, and any other depth */
	uint64_t pauses, pause_ticks, max_pause_ticks;
	uint64_t exceptions, jitted, contention;
	struct rp_counts types; /* exception types */
	int64_t first_ts, last_ts;
	int have_ts;
	struct {
		uint64_t tid;
		int64_t ts;
	} suspending[MAX_SUSPENDING];
	size_t n_suspending;
};

static void suspend_begin(struct rt_proc *p, uint64_t tid, int64_t ts)
{
	size_t i;

	for (i = 0; i < p->n_suspending && p->suspending[i].tid != tid; i++)
		;
	if (i == MAX_SUSPENDING)
		return;
	if (i == p->n_suspending)
		p->n_suspending++;
	p->suspending[i].tid = tid;
	p->suspending[i].ts = ts;
}

/* Events are in stream order, which is time order on each thread only: a
 * pause is paired on the thread that suspended, which is the one that
 * restarts. */
static void restart_end(struct rt_proc *p, uint64_t tid, int64_t ts)
{
	for (size_t i = 0; i < p->n_suspending; i++) {
		uint64_t d;

		if (p->suspending[i].tid != tid)
			continue;
		if (ts >= p->suspending[i].ts) {
			d = (uint64_t)ts - (uint64_t)p->suspending[i].ts;
			p->pauses++;
			p->pause_ticks += d;
			if (d > p->max_pause_ticks)
				p->max_pause_ticks = d;
		}
		p->suspending[i] = p->suspending[--p->n_suspending];
		return;
	}
}

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int exception(struct rt_proc *p, const struct tr_nettrace_event *ev)
{
	struct rp_count *c;
	size_t used;
	char *type = NULL;
	int err = tr_nettrace_utf16z(ev->payload, ev->payload_len, &type, &used);

	if (err == -ENOMEM)
		return err;
	/* A payload without its string is still an exception thrown. */
	c = rp_counts_get(&p->types, type ? type : "?", type ? strlen(type) : 1);
	free(type);
	if (!c)
		return -ENOMEM;
	c->self++;
	p->exceptions++;
	return 0;
}

static int add_event(void *arg, const struct tr_nettrace_event *ev)
{
	struct rt_proc *p = arg;

	if (!p->have_ts || ev->timestamp < p->first_ts)
		p->first_ts = ev->timestamp;
	if (!p->have_ts || ev->timestamp > p->last_ts)
		p->last_ts = ev->timestamp;
	p->have_ts = 1;
	if (strcmp(ev->provider, TR_CLR_PROVIDER) != 0)
		return 0;
	switch (ev->event_id) {
	case TR_CLR_GC_START:
		p->gcs++;
		/* Depth came with version 1 (version 0: Count, Reason). */
		p->gen[ev->version >= 1 && ev->payload_len >= 8 && le32(ev->payload + 4) < 3
			       ? le32(ev->payload + 4)
			       : 3]++;
		break;
	case TR_CLR_GC_SUSPEND_EE_BEGIN:
		suspend_begin(p, ev->thread_id, ev->timestamp);
		break;
	case TR_CLR_GC_RESTART_EE_END:
		restart_end(p, ev->thread_id, ev->timestamp);
		break;
	case TR_CLR_EXCEPTION_THROWN:
		return exception(p, ev);
	case TR_CLR_CONTENTION_START:
		p->contention++;
		break;
	case TR_CLR_METHOD_JITTING_STARTED:
		p->jitted++;
		break;
	}
	return 0;
}

/* Reads on into buf[len..], grown to `need` first: the bytes read (0 at
 * the end), or -ENOMEM, -EIO or -EFBIG (ar->why). */
static zip_int64_t read_more(struct rp_archive *ar, const char *name, zip_file_t *zf, uint8_t **buf,
			     size_t *cap, size_t len, size_t need, uint64_t *inflated)
{
	zip_int64_t got;

	if (need > *cap) {
		uint8_t *grown = realloc(*buf, need);

		if (!grown)
			return -ENOMEM;
		*buf = grown;
		*cap = need;
	}
	got = zip_fread(zf, *buf + len, *cap - len);
	if (got < 0) {
		rp_archive_set_zip_error(ar, name, zip_file_get_error(zf));
		return -EIO;
	}
	/* The stated size was checked on opening: this is for one that lies. */
	*inflated += (uint64_t)got;
	if (*inflated > ar->max_size) {
		rp_archive_set_too_big(ar, name, 0);
		return -EFBIG;
	}
	return got;
}

/* What follows the end tag is no event, but says the file is not what
 * the runtime sent: 0 when nothing does, else -EBADMSG (nt->why). */
static int nothing_after_end(zip_file_t *zf, uint8_t *buf, size_t len, struct tr_nettrace *nt)
{
	zip_int64_t got = len ? (zip_int64_t)len : zip_fread(zf, buf, 1);

	if (got <= 0)
		return 0;
	snprintf(nt->why, sizeof(nt->why), "byte %" PRIu64 ": data after the end of the stream",
		 nt->offset);
	return -EBADMSG;
}

/* Feeds the entry to the reader as it inflates.  0 for a stream read to
 * its end tag, or: -ENODATA (cut short), -EBADMSG, -EPROTONOSUPPORT,
 * -E2BIG (nt->why), -EIO and -EFBIG (ar->why), -ENOMEM. */
static int read_entry(struct rp_archive *ar, const char *name, struct tr_nettrace *nt,
		      struct rt_proc *p)
{
	uint64_t size, inflated = 0;
	size_t cap = CHUNK, len = 0, used;
	zip_file_t *zf;
	uint8_t *buf;
	int ret = 0, err = 0;

	zf = rp_archive_fopen(ar, name, &size, &err);
	if (!zf)
		return err;
	buf = malloc(cap);
	if (!buf) {
		zip_fclose(zf);
		return -ENOMEM;
	}
	for (;;) {
		zip_int64_t got = read_more(ar, name, zf, &buf, &cap, len, nt->need, &inflated);

		if (got < 0) {
			ret = (int)got;
			break;
		}
		if (got == 0) {
			ret = tr_nettrace_finish(nt);
			break;
		}
		len += (size_t)got;
		ret = tr_nettrace_feed(nt, buf, len, &used, add_event, p);
		memmove(buf, buf + used, len - used);
		len -= used;
		if (ret == 1)
			ret = nothing_after_end(zf, buf, len, nt);
		if (ret)
			break;
	}
	free(buf);
	zip_fclose(zf);
	return ret;
}

static double ms(uint64_t ticks, int64_t freq)
{
	return freq > 0 ? (double)ticks * 1000.0 / (double)freq : 0.0;
}

static void print_proc(const char *name, struct tr_nettrace *nt, struct rt_proc *p, int top)
{
	int64_t freq = nt->trace.qpc_freq;
	size_t n;

	printf("  %s  pid %" PRIu32 ", %" PRIu64 " events of %zu kinds", rp_tty(name),
	       nt->trace.pid, nt->stats.events, nt->n_kinds);
	if (p->have_ts && freq > 0)
		printf(" over %.3f s",
		       (double)((uint64_t)p->last_ts - (uint64_t)p->first_ts) / (double)freq);
	printf("\n");
	if (nt->stats.lost)
		printf("    %-12s %" PRIu64 " events the runtime dropped, its session buffer full "
		       "(raise [eventpipe] buffer_size): the counts below lack them\n", "lost",
		       nt->stats.lost);
	printf("    %-12s %" PRIu64 " (gen0 %" PRIu64 ", gen1 %" PRIu64 ", gen2 %" PRIu64, "GCs",
	       p->gcs, p->gen[0], p->gen[1], p->gen[2]);
	if (p->gen[3])
		printf(", other %" PRIu64, p->gen[3]);
	printf(")\n");
	if (p->pauses && freq > 0)
		printf("    %-12s %" PRIu64 ", %.3f ms in all, %.3f ms the longest\n", "GC pauses",
		       p->pauses, ms(p->pause_ticks, freq), ms(p->max_pause_ticks, freq));
	else
		printf("    %-12s none seen (GCSuspendEEBegin to GCRestartEEEnd)\n", "GC pauses");
	printf("    %-12s %" PRIu64 "\n", "exceptions", p->exceptions);
	if (p->types.n) /* qsort is given no NULL array */
		rp_counts_sort_by_self(&p->types);
	n = p->types.n < (size_t)top ? p->types.n : (size_t)top;
	for (size_t i = 0; i < n; i++)
		printf("    %12" PRIu64 "  %s\n", p->types.items[i].self, rp_tty(p->types.items[i].name));
	if (n < p->types.n)
		printf("    %12s  (%zu more types)\n", "", p->types.n - n);
	printf("    %-12s %" PRIu64 " methods compiled (MethodJittingStarted)\n", "JIT", p->jitted);
	printf("    %-12s %" PRIu64 " (ContentionStart)\n", "contention", p->contention);
}

/* The entry names (without the perfcollect prefix) of the .nettrace files
 * at the archive's root, in archive order. */
static int list_entries(struct rp_archive *ar, char ***out, size_t *n_out)
{
	zip_int64_t n = zip_get_num_entries(ar->za, 0);
	size_t plen = ar->prefix ? strlen(ar->prefix) : 0, n_names = 0;
	char **names = NULL;

	for (zip_int64_t i = 0; i < n; i++) {
		const char *name = zip_get_name(ar->za, (zip_uint64_t)i, 0);
		size_t len;
		char **grown;

		if (!name || (plen && strncmp(name, ar->prefix, plen) != 0))
			continue;
		name += plen;
		len = strlen(name);
		if (strchr(name, '/') || len <= strlen(SUFFIX) ||
		    strcmp(name + len - strlen(SUFFIX), SUFFIX) != 0)
			continue;
		grown = realloc(names, (n_names + 1) * sizeof(*names));
		if (!grown)
			goto nomem;
		names = grown;
		names[n_names] = strdup(name);
		if (!names[n_names])
			goto nomem;
		n_names++;
	}
	*out = names;
	*n_out = n_names;
	return 0;
nomem:
	for (size_t i = 0; i < n_names; i++)
		free(names[i]);
	free(names);
	return -ENOMEM;
}

int rp_report_runtime(struct rp_archive *ar, int top)
{
	char **names;
	size_t n;
	int ret, status = 0;

	ret = list_entries(ar, &names, &n);
	if (ret < 0) {
		fprintf(stderr, "tracerig: %s: cannot list the .nettrace entries of %s: %s\n",
			ar->who, ar->path, strerror(-ret));
		return ret;
	}
	if (n)
		printf("\n.NET runtime events: %zu .nettrace file%s (EventPipe)\n", n, n > 1 ? "s" : "");
	for (size_t i = 0; i < n; i++) {
		struct tr_nettrace nt;
		struct rt_proc p;

		tr_nettrace_init(&nt);
		memset(&p, 0, sizeof(p));
		ret = read_entry(ar, names[i], &nt, &p);
		if (ret == -ENODATA) {
			/* A runtime that died, a file cut at max_size: what it
			 * holds is still worth counting. */
			print_proc(names[i], &nt, &p, top);
			printf("    (%s)\n", rp_tty(nt.why));
		} else if (ret == -EIO || ret == -EFBIG || ret == -ENOENT) {
			rp_archive_perror(ar, names[i], ret);
			status = ret;
		} else if (ret < 0) {
			fprintf(stderr, "tracerig: %s: cannot read %s in %s: %s (%s)\n", ar->who,
				rp_tty(names[i]), ar->path,
				ret == -ENOMEM ? strerror(ENOMEM) : rp_tty(nt.why),
				ret == -EPROTONOSUPPORT ? "a newer NetTrace format: open it with PerfView"
							: "the file is damaged, or not a runtime's EventPipe stream");
			status = ret;
		} else {
			print_proc(names[i], &nt, &p, top);
		}
		rp_counts_free(&p.types);
		tr_nettrace_free(&nt);
		free(names[i]);
	}
	free(names);
	return status < 0 ? status : n > 0;
}
