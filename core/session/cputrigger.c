/* The flight recorder's CPU trigger (see cputrigger.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cputrigger.h"
#include "lib/procpid.h"

void tr_cpu_trigger_init(struct tr_cpu_trigger *t, double percent, uint64_t for_ns)
{
	memset(t, 0, sizeof(*t));
	t->percent = percent;
	t->for_ns = for_ns;
}

static void remember(struct tr_cpu_trigger *t, uint64_t now_ns, uint64_t cpu_ns, uint64_t total_ns)
{
	t->primed = 1;
	t->last_ns = now_ns;
	t->last_cpu_ns = cpu_ns;
	t->last_total_ns = total_ns;
}

int tr_cpu_trigger_feed(struct tr_cpu_trigger *t, uint64_t now_ns, uint64_t cpu_ns,
			uint64_t total_ns)
{
	uint64_t since = t->last_ns, span;

	/* The first poll, or counters that went back (a traced process left
	 * the set): nothing to compare with, the measure starts over. */
	if (!t->primed || now_ns <= t->last_ns || cpu_ns < t->last_cpu_ns ||
	    total_ns < t->last_total_ns) {
		t->above_since_ns = 0;
		t->last_percent = 0;
		remember(t, now_ns, cpu_ns, total_ns);
		return 0;
	}
	span = total_ns ? total_ns - t->last_total_ns : now_ns - t->last_ns;
	t->last_percent = span ? 100.0 * (double)(cpu_ns - t->last_cpu_ns) / (double)span : 0;
	remember(t, now_ns, cpu_ns, total_ns);
	if (t->last_percent < t->percent) {
		t->above_since_ns = 0;
		t->fired = 0;
		return 0;
	}
	/* At or above over the whole interval just measured. */
	if (!t->above_since_ns)
		t->above_since_ns = since ? since : 1;
	if (t->fired || now_ns - t->above_since_ns < t->for_ns)
		return 0;
	t->fired = 1;
	return 1;
}

static uint64_t ticks_to_ns(unsigned long long ticks)
{
	static long hz;

	if (hz <= 0)
		hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		hz = 100;
	return (uint64_t)ticks * (1000000000ull / (uint64_t)hz);
}

int tr_cpu_time_of(const pid_t *pids, size_t n, uint64_t *cpu_ns)
{
	size_t alive = 0;

	*cpu_ns = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned long long utime, stime;
		char path[64], stat[1024];

		/* proc(5): 14 utime, 15 stime, the process's threads summed;
		 * both from one read. */
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pids[i]);
		if (tr_read_text(path, stat, sizeof(stat)) < 0 ||
		    tr_stat_field(stat, 14, &utime) < 0 || tr_stat_field(stat, 15, &stime) < 0)
			continue;
		*cpu_ns += ticks_to_ns(utime + stime);
		alive++;
	}
	return alive ? 0 : -ENOENT;
}

int tr_cpu_stat_line(const char *text, uint64_t *busy_ticks, uint64_t *total_ticks)
{
	/* user nice system idle iowait irq softirq steal (guest time is in
	 * user already). */
	unsigned long long v[8] = { 0 };
	int n;

	if (strncmp(text, "cpu ", 4) != 0)
		return -EINVAL;
	n = sscanf(text + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n < 4)
		return -EINVAL;
	*busy_ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	*total_ticks = *busy_ticks + v[3] + v[4];
	return 0;
}

int tr_cpu_time_machine(uint64_t *busy_ns, uint64_t *total_ns)
{
	char text[512]; /* the first line is the one */
	uint64_t busy, total;
	ssize_t len = tr_read_text("/proc/stat", text, sizeof(text));
	int ret;

	if (len < 0)
		return (int)len;
	ret = tr_cpu_stat_line(text, &busy, &total);
	if (ret < 0)
		return ret;
	*busy_ns = ticks_to_ns(busy);
	*total_ns = ticks_to_ns(total);
	return 0;
}
