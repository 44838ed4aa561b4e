/* loadavg: a tracerig source plugin that records the system load.
 *
 * From a thread of its own it reads /proc/loadavg and, where the kernel
 * has pressure stall information, /proc/pressure/cpu: once when the session
 * starts, every `interval`, and once more when it stops.  The samples stay
 * in memory until flush writes them to loadavg.csv at the archive root,
 * stamped with the session clock (CLOCK_MONOTONIC) so that they line up
 * with the perf samples and LTTng events of the same archive.  In a flight
 * session it keeps only the last window and each snapshot gets the rows of
 * the window it covers.
 *
 * This is the worked example of docs/writing-a-plugin.md.  Build it against
 * an installed tracerig with
 *
 *     cc -shared -fPIC -pthread $(pkg-config --cflags tracerig-plugin) \
 *        -o loadavg.so loadavg.c
 *
 * and name it in a profile with a [loadavg] section.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracerig/plugin.h>

#define LOADAVG_PATH "/proc/loadavg"
#define PRESSURE_PATH "/proc/pressure/cpu"
#define ENTRY_NAME "loadavg.csv"

/* One line of /proc/pressure/cpu: "some avg10=1.50 avg60=0.40 avg300=0.08 total=123456". */
struct psi_line {
	double avg10, avg60, avg300;
	unsigned long long total_us;
	int valid;
};

struct sample {
	uint64_t time_ns;
	double load1, load5, load15;
	unsigned int runnable, entities;
	int last_pid;
	struct psi_line some, full;
};

/* The profile's [loadavg] keys: the core parses, range-checks and writes
 * them here (config_bind), each where its TRACERIG_BIND in the key table
 * says. */
struct loadavg_settings {
	long long interval_ms; /* a duration arrives in milliseconds */
	int max_rows;          /* an int: the key's range fits one */
	int pressure;          /* a choice arrives as its index: */
};
enum { PRESSURE_AUTO, PRESSURE_YES, PRESSURE_NO }; /* the choices' order */

struct loadavg {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct loadavg_settings cfg;
	int loadavg_fd;
	int pressure_fd; /* -1 when pressure is not sampled */

	pthread_t thread;
	int thread_running;
	pthread_mutex_t lock; /* protects stopping; wake is signalled under it */
	pthread_cond_t wake;
	int stopping;

	/* The sampling thread adds samples while a flight snapshot may read
	 * them, on a thread of the core's: under rows_lock. */
	pthread_mutex_t rows_lock;
	struct sample *samples;
	size_t n_samples, cap_samples;
	uint64_t window_ns; /* flight mode: keep this much; 0 when recording */
	uint64_t dropped, read_errors;
};

/* procfs files are regenerated on every read from offset 0, so one fd
 * opened in init serves the whole session and a sample costs one syscall. */
static int read_proc(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int parse_loadavg(const char *text, struct sample *s)
{
	/* "0.08 0.04 0.00 4/99 11779" */
	if (sscanf(text, "%lf %lf %lf %u/%u %d", &s->load1, &s->load5, &s->load15,
		   &s->runnable, &s->entities, &s->last_pid) != 6)
		return -EPROTO;
	return 0;
}

static void parse_pressure(const char *text, struct sample *s)
{
	const char *line = text;

	while (line && *line) {
		struct psi_line psi = { .valid = 1 };
		char kind[8];

		if (sscanf(line, "%7s avg10=%lf avg60=%lf avg300=%lf total=%llu", kind, &psi.avg10,
			   &psi.avg60, &psi.avg300, &psi.total_us) == 5) {
			if (strcmp(kind, "some") == 0)
				s->some = psi;
			else if (strcmp(kind, "full") == 0)
				s->full = psi; /* only since Linux 5.13 */
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
}

/* Opens /proc/pressure/cpu and reads it once: the file is missing without
 * CONFIG_PSI, and with psi=0 on the kernel command line. */
static int open_pressure(void)
{
	char buf[256];
	int fd, ret;

	fd = open(PRESSURE_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = read_proc(fd, buf, sizeof(buf));
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

/* Flight mode: the rows older than the window are of no snapshot's. */
static void forget_old(struct loadavg *la, uint64_t now_ns)
{
	size_t old = 0;

	while (old < la->n_samples && now_ns - la->samples[old].time_ns > la->window_ns)
		old++;
	if (!old)
		return;
	memmove(la->samples, la->samples + old, (la->n_samples - old) * sizeof(*la->samples));
	la->n_samples -= old;
}

/* Keeps a sample, growing the buffer geometrically up to max_rows.  Under
 * rows_lock. */
static int store(struct loadavg *la, const struct sample *s)
{
	if (la->window_ns)
		forget_old(la, s->time_ns);
	if (la->n_samples == (size_t)la->cfg.max_rows)
		return -ENOSPC;
	if (la->n_samples == la->cap_samples) {
		size_t cap = la->cap_samples ? la->cap_samples * 2 : 64;
		struct sample *grown;

		if (cap > (size_t)la->cfg.max_rows)
			cap = (size_t)la->cfg.max_rows;
		grown = realloc(la->samples, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		la->samples = grown;
		la->cap_samples = cap;
	}
	la->samples[la->n_samples++] = *s;
	return 0;
}

static void take_sample(struct loadavg *la)
{
	const struct tracerig_services *svc = la->svc;
	struct sample s = { .time_ns = svc->run->clock_ns() };
	char buf[256];
	int ret;

	ret = read_proc(la->loadavg_fd, buf, sizeof(buf));
	if (ret == 0)
		ret = parse_loadavg(buf, &s);
	if (ret < 0) {
		/* Said once: this runs every interval and would flood the log. */
		if (la->read_errors++ == 0)
			svc->run->log(la->ctx, TRACERIG_LOG_WARN,
				      "cannot read %s: %s (samples are skipped while it fails)",
				      LOADAVG_PATH, strerror(-ret));
		svc->run->counter_set(la->ctx, "read_errors", la->read_errors);
		return;
	}
	if (la->pressure_fd >= 0 && read_proc(la->pressure_fd, buf, sizeof(buf)) == 0)
		parse_pressure(buf, &s);

	pthread_mutex_lock(&la->rows_lock);
	ret = store(la, &s);
	pthread_mutex_unlock(&la->rows_lock);
	if (ret < 0) {
		if (la->dropped++ == 0)
			svc->run->log(la->ctx, TRACERIG_LOG_WARN,
				      "cannot keep more samples: %s (raise max_rows or interval)",
				      ret == -ENOSPC ? "max_rows reached" : strerror(-ret));
		svc->run->counter_set(la->ctx, "dropped", la->dropped);
		return;
	}
	svc->run->counter_set(la->ctx, "samples", la->n_samples);
	svc->run->progress_set(la->ctx, "%zu samples, load %.2f", la->n_samples, s.load1);
}

static void timespec_add_ms(struct timespec *ts, long long ms)
{
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static int timespec_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *sampler(void *arg)
{
	struct loadavg *la = arg;
	struct timespec next, now;

	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&la->lock);
	while (!la->stopping) {
		pthread_mutex_unlock(&la->lock);
		take_sample(la);
		pthread_mutex_lock(&la->lock);

		/* Absolute deadlines keep the period from drifting by the time
		 * a sample takes; after a stall (a suspended VM) start over
		 * rather than catch up with a burst of samples. */
		timespec_add_ms(&next, la->cfg.interval_ms);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (timespec_before(&next, &now))
			next = now;
		while (!la->stopping &&
		       pthread_cond_timedwait(&la->wake, &la->lock, &next) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&la->lock);
	return NULL;
}

static void stop_sampler(struct loadavg *la)
{
	if (!la->thread_running)
		return;
	pthread_mutex_lock(&la->lock);
	la->stopping = 1;
	pthread_cond_signal(&la->wake);
	pthread_mutex_unlock(&la->lock);
	pthread_join(la->thread, NULL);
	la->thread_running = 0;
}

/* ---- the vtable ---- */

/* What the key table cannot say, because it depends on more than one key:
 * in a flight session max_rows must hold the whole window at `interval`,
 * or snapshots would miss their oldest rows. */
static int loadavg_validate(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	struct loadavg_settings cfg;
	uint64_t window_ns, rows_needed;
	int ret = svc->run->config_bind(ctx, &cfg);

	if (ret < 0)
		return ret;
	if (svc->run->flight_window(ctx, &window_ns) != 1)
		return 0;
	/* One at the start of the window, one per interval after it. */
	rows_needed = window_ns / ((uint64_t)cfg.interval_ms * 1000000u) + 2;
	if (rows_needed > (uint64_t)cfg.max_rows)
		svc->run->config_error(
			ctx, "max_rows",
			"%d rows do not hold the flight window (%" PRIu64 " s at one "
			"row every %lld ms needs %" PRIu64 "): raise max_rows or "
			"interval",
			cfg.max_rows, window_ns / 1000000000u, cfg.interval_ms, rows_needed);
	return 0;
}

static int loadavg_check(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			 char *advice, size_t advice_len)
{
	struct loadavg_settings cfg;
	int fd, ret;

	if (access(LOADAVG_PATH, R_OK) < 0) {
		int err = -errno;

		snprintf(advice, advice_len, "cannot read %s: %s (is /proc mounted?)",
			 LOADAVG_PATH, strerror(-err));
		return err;
	}
	if ((ret = svc->run->config_bind(ctx, &cfg)) < 0)
		return ret;
	if (cfg.pressure == PRESSURE_NO)
		return 0;
	fd = open_pressure();
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (cfg.pressure == PRESSURE_YES) {
		snprintf(advice, advice_len, "cannot read %s: %s (needs a kernel with "
			 "CONFIG_PSI and without psi=0, or set pressure = auto)",
			 PRESSURE_PATH, strerror(-fd));
		return fd;
	}
	/* Usable, but say what will be missing. */
	snprintf(advice, advice_len, "no CPU pressure information (%s): its columns stay empty",
		 strerror(-fd));
	return 0;
}

static int loadavg_init(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			void **state)
{
	pthread_condattr_t attr;
	struct loadavg *la;
	int ret;

	la = calloc(1, sizeof(*la));
	if (!la)
		return -ENOMEM;
	la->svc = svc;
	la->ctx = ctx;
	la->pressure_fd = -1;
	/* Already parsed and range-checked against the key table: nothing
	 * to validate here. */
	ret = svc->run->config_bind(ctx, &la->cfg);
	if (ret < 0) {
		free(la);
		return ret;
	}

	la->loadavg_fd = open(LOADAVG_PATH, O_RDONLY | O_CLOEXEC);
	if (la->loadavg_fd < 0) {
		ret = -errno;
		svc->run->log(ctx, TRACERIG_LOG_ERROR, "cannot open %s: %s (is /proc mounted?)",
			      LOADAVG_PATH, strerror(-ret));
		goto free_state;
	}

	/* What the key table cannot say: whether this kernel has PSI. */
	if (la->cfg.pressure != PRESSURE_NO) {
		la->pressure_fd = open_pressure();
		if (la->pressure_fd < 0) {
			ret = la->pressure_fd;
			if (la->cfg.pressure == PRESSURE_YES) {
				svc->run->log(
					ctx, TRACERIG_LOG_ERROR,
					"cannot read %s: %s (needs a kernel with CONFIG_PSI and "
					"without psi=0, or set pressure = auto)",
					PRESSURE_PATH, strerror(-ret));
				goto close_loadavg;
			}
			svc->run->log(ctx, TRACERIG_LOG_INFO,
				      "no CPU pressure information (%s): its columns stay empty",
				      strerror(-ret));
		}
	}

	/* The wait deadlines are CLOCK_MONOTONIC, like the session clock, so
	 * setting the wall clock during a session cannot stretch it. */
	ret = -pthread_condattr_init(&attr);
	if (ret < 0)
		goto close_pressure;
	ret = -pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (ret == 0)
		ret = -pthread_cond_init(&la->wake, &attr);
	pthread_condattr_destroy(&attr);
	if (ret < 0)
		goto close_pressure;
	ret = -pthread_mutex_init(&la->lock, NULL);
	if (ret < 0)
		goto destroy_cond;
	ret = -pthread_mutex_init(&la->rows_lock, NULL);
	if (ret < 0)
		goto destroy_lock;
	if (svc->run->flight_window(ctx, &la->window_ns) != 1)
		la->window_ns = 0;

	*state = la;
	return 0;

destroy_lock:
	pthread_mutex_destroy(&la->lock);
destroy_cond:
	pthread_cond_destroy(&la->wake);
close_pressure:
	if (la->pressure_fd >= 0)
		close(la->pressure_fd);
close_loadavg:
	close(la->loadavg_fd);
free_state:
	free(la);
	return ret;
}

static int loadavg_start(void *state)
{
	struct loadavg *la = state;
	int ret;

	/* Listed in the manifest even when they stay 0. */
	la->svc->run->counter_set(la->ctx, "samples", 0);
	la->svc->run->counter_set(la->ctx, "dropped", 0);
	la->svc->run->counter_set(la->ctx, "read_errors", 0);

	la->stopping = 0;
	ret = pthread_create(&la->thread, NULL, sampler, la);
	if (ret != 0) {
		la->svc->run->log(la->ctx, TRACERIG_LOG_ERROR,
				  "cannot start the sampling thread: %s (too many threads? check "
				  "ulimit -u)",
				  strerror(ret));
		return -ret;
	}
	la->thread_running = 1;
	return 0;
}

static int loadavg_stop(void *state)
{
	struct loadavg *la = state;

	stop_sampler(la);
	/* The state at the very end, however short the session was. */
	take_sample(la);
	return 0;
}

static void write_row(FILE *out, const struct sample *s)
{
	const struct psi_line *psi[] = { &s->some, &s->full };

	fprintf(out, "%llu,%.2f,%.2f,%.2f,%u,%u,%d", (unsigned long long)s->time_ns, s->load1,
		s->load5, s->load15, s->runnable, s->entities, s->last_pid);
	/* Empty fields, not zeros, when the kernel did not say. */
	for (size_t p = 0; p < 2; p++) {
		if (psi[p]->valid)
			fprintf(out, ",%.2f,%.2f,%.2f,%llu", psi[p]->avg10, psi[p]->avg60,
				psi[p]->avg300, psi[p]->total_us);
		else
			fputs(",,,,", out);
	}
	fputc('\n', out);
}

/* loadavg.csv in `ar` with the rows of [from_ns, to_ns]: flush writes all
 * of them, a flight snapshot those of its window.  0 or a negative errno,
 * said. */
static int write_csv(struct loadavg *la, struct tracerig_archive *ar, uint64_t from_ns,
		     uint64_t to_ns)
{
	const struct tracerig_services *svc = la->svc;
	size_t rows = 0;
	FILE *out;
	int ret = 0;

	out = svc->archive->fopen(ar, ENTRY_NAME);
	if (!out) {
		ret = -errno;
		svc->run->log(la->ctx, TRACERIG_LOG_ERROR, "cannot create %s: %s", ENTRY_NAME,
			      strerror(-ret));
		return ret;
	}
	fputs("monotonic_ns,load1,load5,load15,runnable,entities,last_pid,"
	      "cpu_some_avg10,cpu_some_avg60,cpu_some_avg300,cpu_some_total_us,"
	      "cpu_full_avg10,cpu_full_avg60,cpu_full_avg300,cpu_full_total_us\n", out);
	pthread_mutex_lock(&la->rows_lock);
	for (size_t i = 0; i < la->n_samples; i++) {
		if (la->samples[i].time_ns < from_ns || la->samples[i].time_ns > to_ns)
			continue;
		write_row(out, &la->samples[i]);
		rows++;
	}
	pthread_mutex_unlock(&la->rows_lock);
	if (ferror(out))
		ret = -EIO;
	if (fclose(out) != 0 && ret == 0)
		ret = -errno;
	if (ret < 0) {
		svc->run->log(la->ctx, TRACERIG_LOG_ERROR,
			      "cannot write %s: %s (is the disk holding the output full?)",
			      ENTRY_NAME, strerror(-ret));
		return ret;
	}
	svc->run->log(la->ctx, TRACERIG_LOG_INFO, "%zu samples in %s", rows, ENTRY_NAME);
	return 0;
}

static int loadavg_flush(void *state, struct tracerig_archive *ar)
{
	return write_csv(state, ar, 0, UINT64_MAX);
}

/* Flight mode: on each trigger, on a thread of the core's while the
 * sampler goes on. */
static int loadavg_snapshot(void *state, struct tracerig_archive *ar, uint64_t from_ns,
			    uint64_t to_ns)
{
	return write_csv(state, ar, from_ns, to_ns);
}

static void loadavg_fini(void *state)
{
	struct loadavg *la = state;

	/* After a failed start or an abort, stop may never have run. */
	stop_sampler(la);
	pthread_mutex_destroy(&la->rows_lock);
	pthread_mutex_destroy(&la->lock);
	pthread_cond_destroy(&la->wake);
	if (la->pressure_fd >= 0)
		close(la->pressure_fd);
	close(la->loadavg_fd);
	free(la->samples);
	free(la);
}

/* One key per paragraph, as the reference lists them. */
/* clang-format off */
static const struct tracerig_key loadavg_keys[] = {
	{ .name = "interval", .type = TRACERIG_KEY_DURATION, .default_value = "1s",
	  .min = 10, .max = 3600 * 1000,
	  TRACERIG_BIND(struct loadavg_settings, interval_ms),
	  .description = "Time between two samples." },
	{ .name = "pressure", .type = TRACERIG_KEY_ENUM, .default_value = "auto",
	  .choices = "auto,yes,no",
	  TRACERIG_BIND(struct loadavg_settings, pressure),
	  .description = "Also sample /proc/pressure/cpu: auto = when the kernel has it, "
			 "yes = fail without it." },
	{ .name = "max_rows", .type = TRACERIG_KEY_INT, .default_value = "86400",
	  .min = 1, .max = 10000000,
	  TRACERIG_BIND(struct loadavg_settings, max_rows),
	  .description = "Samples kept in memory; later ones are dropped and counted.  In a "
			 "flight session it must hold the window." },
	{ .name = NULL },
};
/* clang-format on */

TRACERIG_PLUGIN = {
	.abi_version = TRACERIG_ABI_VERSION,
	.name = "loadavg",
	.version = "1.0",
	.kind = TRACERIG_PLUGIN_SOURCE,
	.description = "load average and CPU pressure, sampled into loadavg.csv",
	.package = NULL,
	.keys = loadavg_keys,
	.caps = TRACERIG_CAP_FLIGHT,
	.validate = loadavg_validate,
	.check = loadavg_check,
	.init = loadavg_init,
	.start = loadavg_start,
	.stop = loadavg_stop,
	.flush = loadavg_flush,
	.fini = loadavg_fini,
	.snapshot = loadavg_snapshot,
};
