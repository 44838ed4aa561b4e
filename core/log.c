#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/sanitize.h"
#include "log.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int verbosity = TRACERIG_LOG_WARN;
static FILE *log_file;
static void (*tty_hook)(void);
/* Lines logged before the staging area exists, replayed into tracerig.log. */
static char *early_lines;
static size_t early_len;

static const char *const level_names[] = { "error", "warning", "info", "debug" };

void tr_log_set_verbosity(int level)
{
	if (level < TRACERIG_LOG_ERROR - 1)
		level = TRACERIG_LOG_ERROR - 1;
	if (level > TRACERIG_LOG_DEBUG)
		level = TRACERIG_LOG_DEBUG;
	verbosity = level;
}

int tr_log_verbosity(void)
{
	return verbosity;
}

void tr_log_set_tty_hook(void (*before_line)(void))
{
	pthread_mutex_lock(&log_lock);
	tty_hook = before_line;
	pthread_mutex_unlock(&log_lock);
}

int tr_log_open_file(const char *path)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	pthread_mutex_lock(&log_lock);
	if (early_lines)
		fwrite(early_lines, 1, early_len, f);
	free(early_lines);
	early_lines = NULL;
	early_len = 0;
	log_file = f;
	fflush(f);
	pthread_mutex_unlock(&log_lock);
	return 0;
}

void tr_log_close_file(void)
{
	pthread_mutex_lock(&log_lock);
	if (log_file)
		fclose(log_file);
	log_file = NULL;
	free(early_lines);
	early_lines = NULL;
	early_len = 0;
	pthread_mutex_unlock(&log_lock);
}

static void keep_early(const char *line, size_t len)
{
	char *grown = realloc(early_lines, early_len + len);

	if (!grown)
		return;
	memcpy(grown + early_len, line, len);
	early_lines = grown;
	early_len += len;
}

void tr_logv(enum tracerig_log_level level, const char *who, const char *fmt, va_list ap)
{
	char msg[4096], line[4352];
	struct timespec ts;
	int len;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Messages quote paths and names that traced processes chose: none
	 * of their control characters reaches the terminal or the log. */
	tr_sanitize_text(msg, sizeof(msg), msg);
	clock_gettime(CLOCK_MONOTONIC, &ts);

	pthread_mutex_lock(&log_lock);
	if ((int)level <= verbosity) {
		if (tty_hook)
			tty_hook();
		if (level <= TRACERIG_LOG_WARN)
			fprintf(stderr, "tracerig: %s%s%s%s\n", who ? who : "", who ? ": " : "",
				level == TRACERIG_LOG_WARN ? "warning: " : "", msg);
		else
			fprintf(stderr, "tracerig: %s%s%s\n", who ? who : "", who ? ": " : "", msg);
	}
	len = snprintf(line, sizeof(line), "%lld.%06ld %-7s %s%s%s\n", (long long)ts.tv_sec,
		       ts.tv_nsec / 1000, level_names[level], who ? who : "tracerig",
		       ": ", msg);
	if (len > (int)sizeof(line) - 1)
		len = sizeof(line) - 1;
	if (log_file) {
		fwrite(line, 1, len, log_file);
		fflush(log_file);
	} else {
		keep_early(line, len);
	}
	pthread_mutex_unlock(&log_lock);
}

void tr_log(enum tracerig_log_level level, const char *who, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tr_logv(level, who, fmt, ap);
	va_end(ap);
}
