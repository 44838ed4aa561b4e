/* The flight recorder's automatic triggers (see triggers.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "exitwatch.h"
#include "flight.h"
#include "lib/pidset.h"
#include "lib/procpid.h"
#include "pids.h"
#include "triggers.h"

/* How often CPU use is measured: the share is over this interval. */
#define CPU_POLL_NS (500 * 1000000ull)

int tr_triggers_configure(struct tr_triggers *t, const char *cpu, long long for_ms, int crash,
			  char *why, size_t why_len)
{
	memset(t, 0, sizeof(*t));
	t->exit_fd = -1;
	t->crash_on = crash;
	if (cpu && *cpu) {
		char *end;
		double pct = strtod(cpu, &end);

		if (end == cpu || (*end && strcmp(end, "%") != 0) || !(pct > 0) || pct > 100000) {
			snprintf(why, why_len,
				 "trigger_cpu = %s: not a percentage (e.g. 80%%: of one CPU for "
				 "traced processes or a cgroup, of all CPUs for the whole machine)",
				 cpu);
			return -EINVAL;
		}
		t->cpu_on = 1;
		tr_cpu_trigger_init(&t->cpu, pct, (uint64_t)(for_ms > 0 ? for_ms : 0) * 1000000ull);
	}
	return 0;
}

void tr_triggers_start(struct tr_triggers *t, const struct tracerig_targets *targets,
		       struct tr_pids *pids, struct tr_flight *flight)
{
	t->targets = targets;
	t->pids = pids;
	t->flight = flight;
	if (!t->crash_on)
		return;
	t->exit_fd = tr_exitwatch_open();
	if (t->exit_fd < 0) {
		tr_warn("trigger_crash: cannot watch processes' exits (%s%s): no snapshot when a "
			"traced process crashes", strerror(-t->exit_fd),
			t->exit_fd == -EPROTONOSUPPORT ? ": the kernel lacks CONFIG_PROC_EVENTS" : "");
		t->exit_fd = -1;
	}
}

int tr_triggers_fd(const struct tr_triggers *t)
{
	return t->exit_fd;
}

static int traced(const struct tracerig_targets *targets, struct tr_pids *pids, pid_t pid)
{
	if (targets->system_wide && !targets->cgroup)
		return 1;
	for (size_t i = 0; i < targets->n_pids; i++)
		if (targets->pids[i] == pid)
			return 1;
	return tr_pids_known(pids, pid);
}

static void on_exit_status(void *arg, pid_t pid, int status)
{
	struct tr_triggers *t = arg;
	char how[96], why[256];

	/* The launched command's crash ends the session: its final snapshot
	 * says so (session.c), one archive rather than two. */
	if (!tr_exit_is_crash(status) || pid == t->targets->command_pid ||
	    !traced(t->targets, t->pids, pid))
		return;
	tr_exit_describe(status, how, sizeof(how));
	snprintf(why, sizeof(why), "PID %d %s", (int)pid, how);
	tr_info("trigger: %s: a snapshot of the last window", why);
	tr_flight_request_why(t->flight, TR_TRIGGER_CRASH, why);
}

/* usage_usec of a cgroup v2 directory's cpu.stat. */
static int cgroup_cpu_time(const char *cgroup, uint64_t *cpu_ns)
{
	char path[4096], text[1024];
	unsigned long long usec;
	const char *at;
	ssize_t len;

	if ((size_t)snprintf(path, sizeof(path), "%s/cpu.stat", cgroup) >= sizeof(path))
		return -ENAMETOOLONG;
	len = tr_read_text(path, text, sizeof(text));
	if (len < 0)
		return (int)len;
	at = strstr(text, "usage_usec ");
	if (!at || sscanf(at + 11, "%llu", &usec) != 1)
		return -EINVAL;
	*cpu_ns = (uint64_t)usec * 1000;
	return 0;
}

int tr_triggers_cpu_time(const struct tracerig_targets *targets, struct tr_pids *pids,
			 uint64_t *cpu_ns, uint64_t *total_ns)
{
	struct tr_pid_set set = { 0 };
	pid_t *observed;
	size_t n;
	int ret;

	*total_ns = 0;
	if (targets->cgroup)
		return cgroup_cpu_time(targets->cgroup, cpu_ns);
	if (targets->system_wide)
		return tr_cpu_time_machine(cpu_ns, total_ns);
	/* The targets and what sources saw of them (children), each once. */
	n = tr_pids_count(pids);
	observed = calloc(n + targets->n_pids + 1, sizeof(*observed));
	if (!observed)
		return -ENOMEM;
	n = tr_pids_list(pids, observed, n); /* at most n: more may have come since */
	for (size_t i = 0; i < targets->n_pids; i++)
		observed[n++] = targets->pids[i];
	if (targets->command_pid)
		observed[n++] = targets->command_pid;
	ret = 0;
	for (size_t i = 0; i < n && ret >= 0; i++)
		ret = tr_pid_set_add(&set, observed[i]);
	free(observed);
	if (ret < 0) {
		tr_pid_set_free(&set);
		return ret;
	}
	ret = tr_cpu_time_of(set.pids, set.n, cpu_ns);
	tr_pid_set_free(&set);
	return ret;
}

static void poll_cpu(struct tr_triggers *t, uint64_t now_ns)
{
	uint64_t cpu, total;
	char why[256];

	if (now_ns < t->next_poll_ns)
		return;
	t->next_poll_ns = now_ns + CPU_POLL_NS;
	if (tr_triggers_cpu_time(t->targets, t->pids, &cpu, &total) < 0)
		return; /* nothing alive to measure now */
	if (!tr_cpu_trigger_feed(&t->cpu, now_ns, cpu, total))
		return;
	snprintf(why, sizeof(why), "CPU %.0f%% (trigger_cpu = %g%%) for %.1f s", t->cpu.last_percent,
		 t->cpu.percent, (double)(now_ns - t->cpu.above_since_ns) / 1e9);
	tr_info("trigger: %s: a snapshot of the last window", why);
	tr_flight_request_why(t->flight, TR_TRIGGER_CPU, why);
}

void tr_triggers_poll(struct tr_triggers *t, uint64_t now_ns)
{
	if (t->exit_fd >= 0 && tr_exitwatch_read(t->exit_fd, on_exit_status, t) == -ENOBUFS)
		tr_warn("trigger_crash: process events were lost (too many at once): a crash "
			"among them may have gone unnoticed");
	if (t->cpu_on && t->targets)
		poll_cpu(t, now_ns);
}

void tr_triggers_stop(struct tr_triggers *t)
{
	if (t->exit_fd >= 0)
		close(t->exit_fd);
	t->exit_fd = -1;
}
