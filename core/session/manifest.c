#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/archive/json.h"
#include "core/archive/sideband.h"
#include "core/archive/stream.h"
#include "ctx.h"
#include "flight.h"
#include "manifest.h"
#include "options.h"
#include "phase.h"
#include "pids.h"
#include "session.h"

static void write_section(struct tr_json *j, const struct tr_section *s)
{
	tr_json_object(j, s->name);
	for (size_t i = 0; i < s->n_entries; i++)
		tr_json_string(j, s->entries[i].key, s->entries[i].value);
	tr_json_end_object(j);
}

static void write_plugin(struct tr_json *j, struct tracerig_ctx *ctx)
{
	const char *status;

	if (ctx->phase == TR_PHASE_FAILED)
		status = ctx->required ? "failed" : "skipped";
	else if (ctx->phase == TR_PHASE_FLUSHED)
		status = "ok";
	else if (ctx->plugin->kind == TRACERIG_PLUGIN_PACKAGER)
		status = "ok"; /* the manifest is inside the archive it writes */
	else if (ctx->session->end_reason == TR_END_DIED)
		status = "not flushed"; /* what it wrote while collecting is all there is */
	else
		status = tr_phase_name(ctx->phase);
	tr_json_object(j, NULL);
	tr_json_string(j, "name", ctx->plugin->name);
	tr_json_string(j, "version", ctx->plugin->version);
	tr_json_string(j, "kind", ctx->plugin->kind == TRACERIG_PLUGIN_PACKAGER ? "packager"
									     : "source");
	tr_json_string(j, "file", ctx->loaded.file);
	tr_json_bool(j, "required", ctx->required);
	tr_json_string(j, "status", status);
	if (ctx->phase == TR_PHASE_FAILED) {
		tr_json_string(j, "failed_in", ctx->failed_in);
		if (ctx->fault_signal) {
			tr_json_string(j, "error", "crashed");
			char name[16];

			snprintf(name, sizeof(name), "SIG%s", sigabbrev_np(ctx->fault_signal)
				 ? sigabbrev_np(ctx->fault_signal) : "?");
			tr_json_string(j, "signal", name);
		} else if (ctx->hung_ms) {
			tr_json_string(j, "error", "hung");
			tr_json_i64(j, "abandoned_after_ms", ctx->hung_ms);
		} else if (ctx->error == -ENODATA && !strcmp(ctx->failed_in, "init")) {
			tr_json_string(j, "error", "nothing to record from these targets");
		} else {
			tr_json_string(j, "error",
				       ctx->reason ? ctx->reason : strerror(-ctx->error));
		}
	}
	/* When the source really collected: setup and teardown excluded. */
	if (ctx->window_start_ns) {
		tr_json_object(j, "window");
		tr_json_u64(j, "start_monotonic_ns", ctx->window_start_ns);
		tr_json_u64(j, "end_monotonic_ns", ctx->window_end_ns);
		tr_json_end_object(j);
	}
	tr_json_object(j, "counters");
	pthread_mutex_lock(&ctx->lock);
	for (size_t i = 0; i < ctx->n_counters; i++)
		tr_json_u64(j, ctx->counters[i].name, ctx->counters[i].value);
	tr_json_end_object(j);
	if (ctx->n_warnings) {
		tr_json_array(j, "warnings");
		for (size_t i = 0; i < ctx->n_warnings; i++)
			tr_json_string(j, NULL, ctx->warnings[i]);
		tr_json_end_array(j);
	}
	pthread_mutex_unlock(&ctx->lock);
	tr_json_end_object(j);
}

struct file_list {
	struct tr_json *j;
	struct tr_session *s;
	const char *dir; /* the staging area's */
};

/* What a source said of its pprof entry `name` (the pprof_entry service),
 * or the core of its wall.pb.gz: written as the entry's "pprof" object.
 * 0 when nobody said anything. */
static void write_pprof(struct tr_json *j, uint64_t samples, uint64_t total)
{
	tr_json_object(j, "pprof");
	tr_json_u64(j, "samples", samples);
	tr_json_u64(j, "total", total);
	tr_json_end_object(j);
}

static int add_pprof(struct tr_json *j, struct tr_session *s, const char *name)
{
	if (s->wall_pprof.written && strcmp(name, "wall.pb.gz") == 0) {
		write_pprof(j, s->wall_pprof.samples, s->wall_pprof.total);
		return 1;
	}
	for (size_t i = 0; i < s->n_sources; i++) {
		struct tracerig_ctx *ctx = s->sources[i];
		int found = 0;

		pthread_mutex_lock(&ctx->lock);
		/* The latest: a flight session declares one per snapshot. */
		for (size_t k = ctx->n_pprof; k-- > 0 && !found;) {
			if (strcmp(ctx->pprof[k].name, name) != 0)
				continue;
			write_pprof(j, ctx->pprof[k].samples, ctx->pprof[k].total);
			found = 1;
		}
		pthread_mutex_unlock(&ctx->lock);
		if (found)
			return 1;
	}
	return 0;
}

/* How much of an entry was deflated before packaging (stream.h): the
 * bytes the packager did not have to compress, or 0 when the stream broke
 * (it deflated them all).  Nothing for an entry not streamed. */
static void add_streamed(struct tr_json *j, struct tr_stream *stream, const char *dir,
			 const char *name)
{
	struct tracerig_streamed sd;
	int ret = tr_stream_result(stream, dir, name, &sd);

	if (ret == 0)
		tr_json_u64(j, "deflated_before_packaging", sd.to - sd.from);
	else if (ret == -EIO)
		tr_json_u64(j, "deflated_before_packaging", 0);
}

static int add_file(void *arg, const char *name, const char *path, uint64_t size)
{
	struct file_list *fl = arg;

	(void)path;
	if (strcmp(name, "manifest.json") == 0)
		return 0;
	tr_json_object(fl->j, NULL);
	tr_json_string(fl->j, "name", name);
	tr_json_u64(fl->j, "size", size);
	add_pprof(fl->j, fl->s, name);
	add_streamed(fl->j, fl->s->stream, fl->dir, name);
	tr_json_end_object(fl->j);
	return 0;
}

static void write_time(struct tr_json *j, const char *key, uint64_t real_ns)
{
	time_t t = (time_t)(real_ns / 1000000000ull);
	struct tm tm;
	char buf[64];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	tr_json_string(j, key, buf);
}

/* Where the mappings frames were named against came from: a source's own
 * recording, the core's side-band recording, or /proc read while alive. */
static void write_process_model(struct tr_json *j, const struct tr_session *s)
{
	const char *fed_by = s->sideband ? "side-band recorded by the core" : NULL;
	struct tr_sideband_counts c;

	for (size_t i = 0; i < s->n_sources && !fed_by; i++)
		if (s->sources[i]->model == TRACERIG_MODEL_RECORDED &&
		    s->sources[i]->phase == TR_PHASE_FLUSHED)
			fed_by = s->sources[i]->plugin->name;
	tr_json_object(j, "process_model");
	tr_json_string(j, "fed_by", fed_by ? fed_by : "/proc/PID/maps read while alive");
	if (s->sideband) {
		tr_sideband_counts(s->sideband, &c);
		tr_json_u64(j, "sideband_records", c.records);
		tr_json_u64(j, "sideband_lost", c.lost);
		tr_json_u64(j, "sideband_dropped", c.dropped);
		tr_json_u64(j, "sideband_replayed", c.replayed);
		tr_json_u64(j, "processes_read_while_alive", c.remembered);
	}
	tr_json_end_object(j);
}

static void write_tool(struct tr_json *j, const struct tr_session *s)
{
	tr_json_object(j, "tool");
	tr_json_string(j, "name", PACKAGE_NAME);
	tr_json_string(j, "version", PACKAGE_VERSION);
	tr_json_u64(j, "plugin_abi", TRACERIG_ABI_VERSION);
	tr_json_array(j, "command_line");
	for (int i = 0; i < s->opts->argc; i++)
		tr_json_string(j, NULL, s->opts->argv[i]);
	tr_json_end_array(j);
	tr_json_end_object(j);
}

static void write_host(struct tr_json *j)
{
	struct utsname uts;
	char host[256] = "";

	uname(&uts);
	gethostname(host, sizeof(host) - 1);
	tr_json_object(j, "host");
	tr_json_string(j, "hostname", host);
	tr_json_string(j, "kernel", uts.release);
	tr_json_string(j, "kernel_version", uts.version);
	tr_json_string(j, "arch", uts.machine);
	tr_json_i64(j, "cpus_online", sysconf(_SC_NPROCESSORS_ONLN));
	tr_json_end_object(j);
}

static void write_profile(struct tr_json *j, const struct tr_session *s)
{
	tr_json_object(j, "profile");
	tr_json_string(j, "path", s->profile_path);
	tr_json_object(j, "sections");
	for (size_t i = 0; i < s->profile.n_sections; i++)
		write_section(j, &s->profile.sections[i]);
	tr_json_end_object(j);
	tr_json_end_object(j);
}

/* Every source timestamps with CLOCK_MONOTONIC; the realtime pair lets a
 * reader put wall-clock dates on them. */
static void write_clock(struct tr_json *j, const struct tr_session *s)
{
	tr_json_object(j, "clock");
	tr_json_string(j, "source", "CLOCK_MONOTONIC");
	tr_json_u64(j, "start_monotonic_ns", s->start_mono_ns);
	tr_json_u64(j, "start_realtime_ns", s->start_real_ns);
	tr_json_i64(j, "realtime_minus_monotonic_ns",
		    (int64_t)(s->start_real_ns - s->start_mono_ns));
	tr_json_u64(j, "end_monotonic_ns", s->end_mono_ns);
	write_time(j, "start_utc", s->start_real_ns);
	tr_json_end_object(j);
}

/* A snapshot: the trigger and the range it covers, in both clocks. */
static void write_flight(struct tr_json *j, const struct tr_session *s,
			 const struct tr_snapshot *snap)
{
	tr_json_object(j, "flight");
	tr_json_string(j, "mode", "flight");
	tr_json_u64(j, "snapshot", snap->seq);
	tr_json_string(j, "trigger", tr_trigger_name(snap->trigger));
	if (snap->why[0])
		tr_json_string(j, "trigger_detail", snap->why);
	if (snap->final)
		tr_json_string(j, "session_ended_by", tr_end_reason_name(s->end_reason));
	tr_json_u64(j, "window_ms", tr_flight_window_ns(s->flight) / 1000000);
	tr_json_u64(j, "from_monotonic_ns", snap->from_ns);
	tr_json_u64(j, "to_monotonic_ns", snap->to_ns);
	write_time(j, "from_utc", snap->from_real_ns);
	write_time(j, "to_utc", snap->to_real_ns);
	tr_json_u64(j, "duration_ms", (snap->to_ns - snap->from_ns) / 1000000);
	tr_json_end_object(j);
}

static void write_session(struct tr_json *j, const struct tr_session *s)
{
	tr_json_object(j, "session");
	tr_json_i64(j, "duration_ms_requested", s->duration_ms);
	/* The window: from the moment every source had started to the
	 * moment all were asked to stop; -d measures this. */
	tr_json_u64(j, "window_start_monotonic_ns", s->window_start_ns);
	tr_json_u64(j, "window_end_monotonic_ns", s->end_mono_ns);
	tr_json_u64(j, "duration_ms", s->end_mono_ns > s->window_start_ns
					      ? (s->end_mono_ns - s->window_start_ns) / 1000000 : 0);
	tr_json_string(j, "ended_by", tr_end_reason_name(s->end_reason));
	if (s->died_why[0]) {
		tr_json_object(j, "salvaged");
		tr_json_i64(j, "collector_pid", s->died_pid);
		tr_json_string(j, "why", s->died_why);
		tr_json_string(j, "by", "the watchdog: the collecting process ended without "
					"finishing, so plugins did not flush");
		tr_json_end_object(j);
	}
	tr_json_end_object(j);
}

static void write_command(struct tr_json *j, const struct tr_session *s)
{
	tr_json_object(j, "command");
	tr_json_array(j, "argv");
	for (char **a = s->opts->command; *a; a++)
		tr_json_string(j, NULL, *a);
	tr_json_end_array(j);
	tr_json_i64(j, "pid", s->targets.command_pid);
	if (s->command_exec_errno)
		tr_json_string(j, "exec_error", strerror(s->command_exec_errno));
	else if (s->command.reaped && WIFEXITED(s->command.status))
		tr_json_i64(j, "exit_status", WEXITSTATUS(s->command.status));
	else if (s->command.reaped && WIFSIGNALED(s->command.status))
		tr_json_i64(j, "killed_by_signal", WTERMSIG(s->command.status));
	else
		tr_json_string(j, "state", "still running at the end of the session");
	if (s->command_ended)
		tr_json_string(j, "ended_by", "tracerig: SIGTERM once collection stopped");
	tr_json_end_object(j);
}

static void write_targets(struct tr_json *j, const struct tr_session *s)
{
	tr_json_object(j, "targets");
	tr_json_bool(j, "system_wide", s->targets.system_wide);
	tr_json_array(j, "pids");
	for (size_t i = 0; i < s->targets.n_pids; i++)
		tr_json_i64(j, NULL, s->targets.pids[i]);
	tr_json_end_array(j);
	if (s->opts->command)
		write_command(j, s);
	tr_json_string(j, "cgroup", s->targets.cgroup);
	tr_json_u64(j, "observed_processes", tr_pids_count(s->pids));
	tr_json_end_object(j);
}

static int write_manifest(struct tr_session *s, struct tracerig_archive *ar,
			  const struct tr_snapshot *snap)
{
	struct file_list fl;
	struct tr_json j;
	FILE *out;
	int fd, ret;

	fd = tr_staging_create_entry(ar, "manifest.json");
	if (fd < 0)
		return fd;
	out = fdopen(fd, "w");
	if (!out) {
		ret = -errno;
		close(fd);
		return ret;
	}
	tr_json_init(&j, out);
	tr_json_object(&j, NULL);
	tr_json_u64(&j, "manifest_version", 1);
	write_tool(&j, s);
	write_host(&j);
	write_profile(&j, s);
	write_clock(&j, s);
	write_session(&j, s);
	if (snap)
		write_flight(&j, s, snap);
	write_process_model(&j, s);
	write_targets(&j, s);

	tr_json_array(&j, "plugins");
	for (size_t i = 0; i < s->n_sources; i++)
		write_plugin(&j, s->sources[i]);
	if (s->packager)
		write_plugin(&j, s->packager);
	tr_json_end_array(&j);

	tr_json_array(&j, "files");
	fl.j = &j;
	fl.s = s;
	fl.dir = ar->dir;
	tr_staging_foreach(ar, add_file, &fl);
	tr_json_end_array(&j);
	tr_json_end_object(&j);
	tr_json_finish(&j);

	if (fclose(out) != 0)
		return -errno;
	return 0;
}

int tr_manifest_write(struct tr_session *s)
{
	return write_manifest(s, &s->archive, NULL);
}

int tr_manifest_write_snapshot(struct tr_session *s, struct tracerig_archive *ar,
			       const struct tr_snapshot *snap)
{
	int ret = write_manifest(s, ar, snap);

	if (ret < 0)
		errno = -ret;
	return ret;
}
