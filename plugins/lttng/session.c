/* The recording session, set up through liblttng-ctl the way `lttng create;
 * lttng enable-channel; lttng add-context; lttng enable-event; lttng track;
 * lttng start` would, but with every error checked and reported. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include "lib/procpid.h"
#include "session.h"

#define LOG(s, lvl, ...) (s)->svc->run->log((s)->ctx, (lvl), __VA_ARGS__)

/* liblttng-ctl returns negative lttng_error_code values; callers of this
 * file get a negative errno, the lttng text (lttng_strerror) is logged.
 * Only the daemon's own LTTNG_ERR_NOMEM becomes ENOMEM: an unknown code is
 * an I/O error with the daemon, never an invented out-of-memory. */
int lt_errno(int code)
{
	switch (code < 0 ? -code : code) {
	case LTTNG_OK: return 0;
	case LTTNG_ERR_NO_SESSIOND: return -ENOTCONN;
	case LTTNG_ERR_NOMEM: return -ENOMEM;
	case LTTNG_ERR_EPERM: return -EPERM;
	case LTTNG_ERR_KERN_NA: return -ENOTSUP;
	case LTTNG_ERR_NOT_SUPPORTED: return -ENOTSUP;
	case LTTNG_ERR_EXIST_SESS: return -EEXIST;
	case LTTNG_ERR_SESS_NOT_FOUND:
	case LTTNG_ERR_SESSION_NOT_EXIST:
	case LTTNG_ERR_NO_SESSION: return -ENOENT;
	case LTTNG_ERR_CREATE_DIR_FAIL: return -EACCES;
	case LTTNG_ERR_INVALID:
	case LTTNG_ERR_FILTER_INVAL: return -EINVAL;
	default: return -EIO;
	}
}

static int kernel_unavailable(int code)
{
	switch (-code) {
	case LTTNG_ERR_KERN_NA:
	case LTTNG_ERR_KERN_VERSION:
	case LTTNG_ERR_NO_KERNCONSUMERD:
	case LTTNG_ERR_KERN_SESS_FAIL:
	case LTTNG_ERR_KERN_CHAN_FAIL:
	case LTTNG_ERR_KERN_CONSUMER_FAIL:
		return 1;
	default:
		return 0;
	}
}

static int make_channel(struct lttng_handle *h, struct lttng_domain *dom,
			const struct lt_channel_config *cc)
{
	struct lttng_channel *chan = lttng_channel_create(dom);
	int ret;

	if (!chan)
		return -LTTNG_ERR_NOMEM;
	snprintf(chan->name, sizeof(chan->name), "%s", LT_CHANNEL_NAME);
	chan->attr.subbuf_size = cc->subbuf_size;
	chan->attr.num_subbuf = cc->subbuf_count;
	chan->attr.overwrite = cc->overwrite;
	chan->attr.switch_timer_interval = cc->switch_timer_us;
	if (cc->monitor_timer_us)
		lttng_channel_set_monitor_timer_interval(chan, cc->monitor_timer_us);
	ret = lttng_enable_channel(h, chan);
	lttng_channel_destroy(chan);
	return ret;
}

static int add_contexts(struct lt_session *s, struct lttng_handle *h,
			const enum lttng_event_context_type *types, size_t n, const char *domain)
{
	for (size_t i = 0; i < n; i++) {
		struct lttng_event_context c;
		int ret;

		memset(&c, 0, sizeof(c));
		c.ctx = types[i];
		ret = lttng_add_context(h, &c, NULL, LT_CHANNEL_NAME);
		if (ret < 0) {
			LOG(s, TRACERIG_LOG_ERROR, "adding context %d to the %s channel failed: %s",
			    (int)types[i], domain, lttng_strerror(ret));
			return ret;
		}
	}
	return 0;
}

static int enable_ust_events(struct lt_session *s, const struct lt_config *cfg)
{
	for (size_t i = 0; i < cfg->ust_events->n; i++) {
		struct lttng_event *ev = lttng_event_create();
		const char *name = cfg->ust_events->names[i];
		int ret;

		if (!ev)
			return -LTTNG_ERR_NOMEM;
		ev->type = LTTNG_EVENT_TRACEPOINT;
		snprintf(ev->name, sizeof(ev->name), "%s", name);
		if (cfg->loglevel >= 0) {
			ev->loglevel_type = cfg->loglevel_only ? LTTNG_EVENT_LOGLEVEL_SINGLE
							       : LTTNG_EVENT_LOGLEVEL_RANGE;
			ev->loglevel = cfg->loglevel;
		} else {
			ev->loglevel_type = LTTNG_EVENT_LOGLEVEL_ALL;
			ev->loglevel = -1;
		}
		ret = lttng_enable_event_with_exclusions(s->ust, ev, LT_CHANNEL_NAME,
							 cfg->filter && *cfg->filter ? cfg->filter : NULL,
							 0, NULL);
		lttng_event_destroy(ev);
		if (ret < 0) {
			if (-ret == LTTNG_ERR_FILTER_INVAL || -ret == LTTNG_ERR_FILTER_EXIST ||
			    -ret == LTTNG_ERR_INVALID)
				LOG(s, TRACERIG_LOG_ERROR, "enabling userspace event '%s'%s%s%s failed: %s "
				    "(check the filter expression's syntax and the event name)",
				    name, cfg->filter ? " with filter '" : "",
				    cfg->filter ? cfg->filter : "", cfg->filter ? "'" : "",
				    lttng_strerror(ret));
			else
				LOG(s, TRACERIG_LOG_ERROR, "enabling userspace event '%s' failed: %s",
				    name, lttng_strerror(ret));
			return ret;
		}
	}
	return 0;
}

static int enable_kernel_events(struct lt_session *s, const struct lt_config *cfg)
{
	for (size_t i = 0; i < cfg->kernel_events->n; i++) {
		struct lttng_event *ev = lttng_event_create();
		const char *name = cfg->kernel_events->names[i];
		int ret;

		if (!ev)
			return -LTTNG_ERR_NOMEM;
		/* "syscall:NAME" selects system calls, like `lttng enable-event -k --syscall`. */
		if (strncmp(name, "syscall:", 8) == 0) {
			ev->type = LTTNG_EVENT_SYSCALL;
			name += 8;
		} else {
			ev->type = LTTNG_EVENT_TRACEPOINT;
		}
		snprintf(ev->name, sizeof(ev->name), "%s", name);
		ev->loglevel = -1;
		ret = lttng_enable_event_with_exclusions(s->kern, ev, LT_CHANNEL_NAME, NULL, 0, NULL);
		lttng_event_destroy(ev);
		if (ret < 0) {
			LOG(s, TRACERIG_LOG_ERROR, "enabling kernel event '%s' failed: %s",
			    cfg->kernel_events->names[i], lttng_strerror(ret));
			return ret;
		}
	}
	return 0;
}

/* Kernel events are optional unless the profile says otherwise: on a
 * machine without lttng-modules we say so once and go on with userspace. */
static int setup_kernel(struct lt_session *s, const struct lt_config *cfg)
{
	static const enum lttng_event_context_type kctx[] = {
		LTTNG_EVENT_CONTEXT_PID, LTTNG_EVENT_CONTEXT_TID, LTTNG_EVENT_CONTEXT_PROCNAME,
	};
	struct lttng_domain dom;
	struct lt_channel_config cc = cfg->channel;
	int ret;

	/* Asking a daemon without lttng-modules for a kernel channel makes it
	 * hang up mid-command; the loaded module is the reliable sign. */
	if (!lt_kernel_tracer_loaded()) {
		LOG(s, cfg->kernel_required ? TRACERIG_LOG_ERROR : TRACERIG_LOG_WARN,
		    "kernel tracer not available: lttng-modules is not loaded (install "
		    "lttng-modules-dkms for kernel events)%s",
		    cfg->kernel_required ? "" : "; continuing with userspace events only");
		return cfg->kernel_required ? -LTTNG_ERR_KERN_NA : 0;
	}
	memset(&dom, 0, sizeof(dom));
	dom.type = LTTNG_DOMAIN_KERNEL;
	dom.buf_type = LTTNG_BUFFER_GLOBAL;
	s->kern = lttng_create_handle(s->name, &dom);
	if (!s->kern)
		return -LTTNG_ERR_NOMEM;
	cc.per_pid = 0;
	ret = make_channel(s->kern, &dom, &cc);
	if (ret < 0) {
		if (kernel_unavailable(ret)) {
			LOG(s, cfg->kernel_required ? TRACERIG_LOG_ERROR : TRACERIG_LOG_WARN,
			    "kernel tracer not available: %s (install lttng-modules-dkms for "
			    "kernel events)%s", lttng_strerror(ret),
			    cfg->kernel_required ? "" : "; continuing with userspace events only");
			lttng_destroy_handle(s->kern);
			s->kern = NULL;
			return cfg->kernel_required ? ret : 0;
		}
		LOG(s, TRACERIG_LOG_ERROR, "creating the kernel channel failed: %s",
		    lttng_strerror(ret));
		return ret;
	}
	ret = add_contexts(s, s->kern, kctx, sizeof(kctx) / sizeof(kctx[0]), "kernel");
	if (ret == 0)
		ret = enable_kernel_events(s, cfg);
	if (ret == 0)
		s->kernel = 1;
	return ret;
}

/* The session itself, in the daemon: a negative errno on failure. */
static int create_in_daemon(struct lt_session *s, const struct lt_config *cfg)
{
	struct lttng_session_descriptor *desc;
	enum lttng_error_code code;

	/* LTTng accepts only an absolute path here and says nothing more than
	 * NULL when it refuses one. */
	if (cfg->output_dir[0] != '/') {
		LOG(s, TRACERIG_LOG_ERROR, "creating session %s failed: the output directory %s is "
		    "not an absolute path (LTTng needs one)", s->name, cfg->output_dir);
		return -EINVAL;
	}
	/* A snapshot session has no output of its own: each snapshot names
	 * its directory (lt_session_snapshot), and the rings are read only
	 * then. */
	desc = cfg->snapshot ? lttng_session_descriptor_snapshot_create(s->name)
			     : lttng_session_descriptor_local_create(s->name, cfg->output_dir);
	if (!desc) {
		LOG(s, TRACERIG_LOG_ERROR, "creating session %s failed: liblttng-ctl refused the "
		    "output directory %s (an absolute path shorter than PATH_MAX)", s->name,
		    cfg->output_dir);
		return -EINVAL;
	}
	code = lttng_create_session_ext(desc);
	lttng_session_descriptor_destroy(desc);
	if (code != LTTNG_OK) {
		LOG(s, TRACERIG_LOG_ERROR, "creating session %s in %s failed: %s", s->name,
		    cfg->output_dir, lttng_strerror(-(int)code));
		return lt_errno(-(int)code);
	}
	s->created = 1;
	s->snapshot = cfg->snapshot;
	return 0;
}

/* The userspace channel, its contexts and events: a negative lttng error
 * code on failure. */
static int setup_ust(struct lt_session *s, const struct lt_config *cfg)
{
	/* What TraceEvent/PerfView need on every userspace event. */
	static const enum lttng_event_context_type uctx[] = {
		LTTNG_EVENT_CONTEXT_VPID,
		LTTNG_EVENT_CONTEXT_VTID,
		LTTNG_EVENT_CONTEXT_PROCNAME,
	};
	struct lttng_domain dom;
	int ret;

	memset(&dom, 0, sizeof(dom));
	dom.type = LTTNG_DOMAIN_UST;
	dom.buf_type = cfg->channel.per_pid ? LTTNG_BUFFER_PER_PID : LTTNG_BUFFER_PER_UID;
	s->ust = lttng_create_handle(s->name, &dom);
	if (!s->ust) {
		/* lttng_create_handle fails only on allocation. */
		return -LTTNG_ERR_NOMEM;
	}
	ret = make_channel(s->ust, &dom, &cfg->channel);
	if (ret < 0) {
		LOG(s, TRACERIG_LOG_ERROR, "creating the userspace channel (%llu x %llu bytes, %s) "
		    "failed: %s (sub-buffer size and count must be powers of two)",
		    (unsigned long long)cfg->channel.subbuf_count,
		    (unsigned long long)cfg->channel.subbuf_size,
		    cfg->channel.overwrite ? "overwrite" : "discard", lttng_strerror(ret));
		return ret;
	}
	ret = add_contexts(s, s->ust, uctx, sizeof(uctx) / sizeof(uctx[0]), "userspace");
	if (ret < 0)
		return ret;
	return enable_ust_events(s, cfg);
}

int lt_session_create(struct lt_session *s, const struct tracerig_services *svc,
		      struct tracerig_ctx *ctx, const struct lt_config *cfg)
{
	char name[sizeof(s->name)];
	int ret;

	memcpy(name, s->name, sizeof(name));
	memset(s, 0, sizeof(*s));
	memcpy(s->name, name, sizeof(name));
	s->svc = svc;
	s->ctx = ctx;
	if (!s->name[0]) {
		ret = lt_session_name_self(svc, ctx, s->name, sizeof(s->name), cfg->name_suffix);
		if (ret < 0)
			return ret;
	}

	ret = create_in_daemon(s, cfg);
	if (ret < 0)
		return ret;
	ret = setup_ust(s, cfg);
	if (ret < 0)
		goto fail;
	if (cfg->kernel_events && cfg->kernel_events->n) {
		ret = setup_kernel(s, cfg);
		if (ret < 0)
			goto fail;
	}
	return 0;

fail:
	lt_session_destroy(s);
	return lt_errno(ret);
}

int lt_session_track_vpids(struct lt_session *s, const pid_t *vpids, size_t n)
{
	enum lttng_process_attr_tracker_handle_status st;
	enum lttng_error_code code;

	if (!s->vpid_tracker) {
		code = lttng_session_get_tracker_handle(s->name, LTTNG_DOMAIN_UST,
							LTTNG_PROCESS_ATTR_VIRTUAL_PROCESS_ID,
							&s->vpid_tracker);
		if (code != LTTNG_OK) {
			LOG(s, TRACERIG_LOG_ERROR, "getting the process tracker failed: %s",
			    lttng_strerror(-(int)code));
			return lt_errno(-(int)code);
		}
		/* An empty inclusion set first: from here on only the listed
		 * processes are recorded. */
		st = lttng_process_attr_tracker_handle_set_tracking_policy(
			s->vpid_tracker, LTTNG_TRACKING_POLICY_INCLUDE_SET);
		if (st != LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_OK) {
			LOG(s, TRACERIG_LOG_ERROR, "restricting the session to chosen processes "
			    "failed (tracker status %d)", (int)st);
			return -EIO;
		}
	}
	for (size_t i = 0; i < n; i++) {
		st = lttng_process_attr_virtual_process_id_tracker_handle_add_pid(s->vpid_tracker,
										  vpids[i]);
		if (st != LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_OK &&
		    st != LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_EXISTS) {
			LOG(s, TRACERIG_LOG_ERROR, "tracking virtual PID %d failed (tracker status %d)",
			    (int)vpids[i], (int)st);
			return -EIO;
		}
	}
	return 0;
}

int lt_session_start(struct lt_session *s)
{
	int ret = lttng_start_tracing(s->name);

	if (ret < 0) {
		LOG(s, TRACERIG_LOG_ERROR, "starting session %s failed: %s", s->name,
		    lttng_strerror(ret));
		return lt_errno(ret);
	}
	s->started = 1;
	return 0;
}

static void read_counters(struct lt_session *s)
{
	struct lttng_channel *chans = NULL;
	int n = lttng_list_channels(s->ust, &chans);

	s->discarded_events = 0;
	s->lost_packets = 0;
	if (n < 0) {
		LOG(s, TRACERIG_LOG_WARN, "cannot read the channel statistics: %s "
		    "(discarded event counts unknown)", lttng_strerror(n));
		return;
	}
	for (int i = 0; i < n; i++) {
		uint64_t discarded = 0, lost = 0;

		if (lttng_channel_get_discarded_event_count(&chans[i], &discarded) == 0)
			s->discarded_events += discarded;
		if (lttng_channel_get_lost_packet_count(&chans[i], &lost) == 0)
			s->lost_packets += lost;
	}
	free(chans);
}

int lt_session_stop(struct lt_session *s)
{
	struct lttng_destruction_handle *dh = NULL;
	enum lttng_destruction_handle_status st;
	enum lttng_error_code code, result = LTTNG_OK;
	int ret = 0;

	s->last_error = 0;
	if (!s->created)
		return 0;
	if (s->started) {
		/* Waits until the consumer has written every buffer out. */
		ret = lttng_stop_tracing(s->name);
		if (ret < 0) {
			LOG(s, TRACERIG_LOG_ERROR, "stopping session %s failed: %s", s->name,
			    lttng_strerror(ret));
			s->last_error = -ret;
			ret = lt_errno(ret);
		}
		s->started = 0;
	}
	read_counters(s);
	/* A snapshot session's rings are still read by the final snapshot,
	 * after stop: it is destroyed by lt_session_destroy (fini). */
	if (s->snapshot)
		return ret;
	code = lttng_destroy_session_ext(s->name, &dh);
	if (code != LTTNG_OK) {
		LOG(s, TRACERIG_LOG_ERROR, "destroying session %s failed: %s", s->name,
		    lttng_strerror(-(int)code));
		if (!s->last_error)
			s->last_error = (int)code;
		if (ret == 0)
			ret = lt_errno(-(int)code);
	} else {
		/* Destruction closes the trace chunk: only then are the files final. */
		st = lttng_destruction_handle_wait_for_completion(dh, 60000);
		if (st != LTTNG_DESTRUCTION_HANDLE_STATUS_COMPLETED ||
		    lttng_destruction_handle_get_result(dh, &result) !=
			    LTTNG_DESTRUCTION_HANDLE_STATUS_OK ||
		    result != LTTNG_OK) {
			LOG(s, TRACERIG_LOG_ERROR, "session %s did not finish writing its trace: %s",
			    s->name, st == LTTNG_DESTRUCTION_HANDLE_STATUS_TIMEOUT ? "timed out"
				     : lttng_strerror(-(int)result));
			if (!s->last_error)
				s->last_error = result != LTTNG_OK ? (int)result : LTTNG_ERR_UNK;
			if (ret == 0)
				ret = st == LTTNG_DESTRUCTION_HANDLE_STATUS_TIMEOUT
					      ? -ETIMEDOUT : lt_errno(-(int)result);
		}
		lttng_destruction_handle_destroy(dh);
	}
	s->created = 0;
	lt_session_destroy(s);
	return ret;
}

int lt_snapshot_record_local(const char *session, const char *dir, const char *name)
{
	struct lttng_snapshot_output *out = lttng_snapshot_output_create();
	int ret;

	if (!out)
		return -LTTNG_ERR_NOMEM;
	ret = lttng_snapshot_output_set_name(name, out);
	if (ret == 0)
		ret = lttng_snapshot_output_set_local_path(dir, out);
	/* Waits until the consumer has written every ring buffer's content
	 * (the current, partly filled sub-buffers flushed first). */
	if (ret == 0)
		ret = lttng_snapshot_record(session, out, 1);
	lttng_snapshot_output_destroy(out);
	return ret < 0 ? ret : 0;
}

int lt_session_snapshot(struct lt_session *s, const char *dir, char *written, size_t len)
{
	char name[64];
	int ret;

	s->last_error = 0;
	if (!s->created || !s->snapshot)
		return -EINVAL;
	/* LTTng writes the snapshot into DIR/NAME-YYYYMMDD-HHMMSS-N/: a name
	 * of our own tells the caller which directory is the one. */
	snprintf(name, sizeof(name), "tracerig-snapshot-%u", ++s->n_snapshots);
	ret = lt_snapshot_record_local(s->name, dir, name);
	if (ret < 0) {
		LOG(s, TRACERIG_LOG_ERROR, "snapshot of session %s into %s failed: %s", s->name, dir,
		    lttng_strerror(ret));
		s->last_error = -ret;
		return lt_errno(ret);
	}
	if (written)
		snprintf(written, len, "%s", name);
	return 0;
}

static int not_dot(const struct dirent *e)
{
	return strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
}

int lt_snapshot_hoist(const char *dir, const char *prefix)
{
	size_t plen = strlen(prefix);
	struct dirent **subs = NULL, **items = NULL;
	char sub[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	int n_subs, n_items, found = -1, ret = 0;

	n_subs = scandir(dir, &subs, not_dot, alphasort);
	if (n_subs < 0)
		return -errno;
	for (int i = 0; i < n_subs && found < 0; i++)
		if (strncmp(subs[i]->d_name, prefix, plen) == 0 && subs[i]->d_name[plen] == '-')
			found = i;
	if (found < 0)
		ret = -ENOENT;
	else if (snprintf(sub, sizeof(sub), "%s/%s", dir, subs[found]->d_name) >= (int)sizeof(sub))
		ret = -ENAMETOOLONG;
	for (int i = 0; i < n_subs; i++)
		free(subs[i]);
	free(subs);
	if (ret < 0)
		return ret;
	/* Read whole before anything is renamed out of it. */
	n_items = scandir(sub, &items, not_dot, alphasort);
	if (n_items < 0)
		return -errno;
	for (int i = 0; i < n_items; i++) {
		if (ret == 0 &&
		    (snprintf(from, sizeof(from), "%s/%s", sub, items[i]->d_name) >= (int)sizeof(from) ||
		     snprintf(to, sizeof(to), "%s/%s", dir, items[i]->d_name) >= (int)sizeof(to)))
			ret = -ENAMETOOLONG;
		if (ret == 0 && rename(from, to) < 0)
			ret = -errno;
		free(items[i]);
	}
	free(items);
	if (ret == 0 && rmdir(sub) < 0)
		ret = -errno;
	return ret;
}

static int rmdir_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path); /* only ever removes an empty directory */
	return 0;
}

void lt_remove_empty_dirs(const char *dir)
{
	/* Best effort: what is not empty stays, and says why by being there. */
	(void)nftw(dir, rmdir_one, 16, FTW_DEPTH | FTW_PHYS);
}


void lt_session_destroy(struct lt_session *s)
{
	if (s->vpid_tracker)
		lttng_process_attr_tracker_handle_destroy(s->vpid_tracker);
	s->vpid_tracker = NULL;
	if (s->ust)
		lttng_destroy_handle(s->ust);
	s->ust = NULL;
	if (s->kern)
		lttng_destroy_handle(s->kern);
	s->kern = NULL;
	if (s->created) {
		int ret = lttng_destroy_session(s->name);

		if (ret < 0)
			LOG(s, TRACERIG_LOG_WARN, "destroying session %s failed: %s (remove it "
			    "with 'lttng destroy %s')", s->name, lttng_strerror(ret), s->name);
		s->created = 0;
	}
}

void lt_session_name(char *buf, size_t len, pid_t pid, unsigned long long starttime,
		     const char *suffix)
{
	snprintf(buf, len, "%s%d-%llu%s%s", LT_SESSION_PREFIX, (int)pid, starttime,
		 suffix && *suffix ? "-" : "", suffix ? suffix : "");
}

int lt_session_name_self(const struct tracerig_services *svc, struct tracerig_ctx *ctx, char *buf,
			 size_t len, const char *suffix)
{
	unsigned long long start;
	int ret = lt_proc_starttime(getpid(), &start);

	if (ret < 0) {
		svc->run->log(ctx, TRACERIG_LOG_ERROR,
			      "reading this process's start time from /proc/self/stat failed: %s "
			      "(is /proc mounted?)",
			      strerror(-ret));
		return ret;
	}
	lt_session_name(buf, len, getpid(), start, suffix);
	return 0;
}

int lt_session_name_owner(const char *name, pid_t *pid, unsigned long long *starttime)
{
	const char *p = name;
	char *end;
	long v;

	if (strncmp(p, LT_SESSION_PREFIX, strlen(LT_SESSION_PREFIX)) != 0)
		return -EINVAL;
	p += strlen(LT_SESSION_PREFIX);
	errno = 0;
	v = strtol(p, &end, 10);
	if (end == p || *end != '-' || v <= 0 || errno)
		return -EINVAL;
	*pid = (pid_t)v;
	p = end + 1;
	*starttime = strtoull(p, &end, 10);
	if (end == p || (*end && *end != '-') || errno)
		return -EINVAL;
	return 0;
}

int lt_proc_starttime(pid_t pid, unsigned long long *out)
{
	return tr_proc_stat_field(pid, 22, out);
}

int lt_owner_alive(pid_t pid, unsigned long long starttime)
{
	unsigned long long now;

	return lt_proc_starttime(pid, &now) == 0 && now == starttime;
}

int lt_destroy_session_wait(const char *name, int timeout_ms)
{
	struct lttng_destruction_handle *dh = NULL;
	enum lttng_destruction_handle_status st;
	enum lttng_error_code code, result = LTTNG_OK;

	code = lttng_destroy_session_ext(name, &dh);
	if (code != LTTNG_OK)
		return -(int)code;
	st = lttng_destruction_handle_wait_for_completion(dh, timeout_ms);
	if (st == LTTNG_DESTRUCTION_HANDLE_STATUS_COMPLETED &&
	    lttng_destruction_handle_get_result(dh, &result) == LTTNG_DESTRUCTION_HANDLE_STATUS_OK)
		code = result;
	else
		code = st == LTTNG_DESTRUCTION_HANDLE_STATUS_TIMEOUT ? LTTNG_ERR_UNK : LTTNG_ERR_FATAL;
	lttng_destruction_handle_destroy(dh);
	return code == LTTNG_OK ? 0 : -(int)code;
}

int lt_reap_orphans(const struct tracerig_services *svc, struct tracerig_ctx *ctx)
{
	struct lttng_session *sessions = NULL;
	int n = lttng_list_sessions(&sessions), reaped = 0;

	if (n < 0) {
		svc->run->log(ctx, TRACERIG_LOG_WARN,
			      "listing the daemon's sessions (to find ones left "
			      "by a killed tracerig) failed: %s",
			      lttng_strerror(n));
		return lt_errno(n);
	}
	for (int i = 0; i < n; i++) {
		unsigned long long start;
		pid_t owner;
		int ret;

		if (lt_session_name_owner(sessions[i].name, &owner, &start) < 0 ||
		    lt_owner_alive(owner, start))
			continue;
		ret = lt_destroy_session_wait(sessions[i].name, 10000);
		if (ret < 0) {
			svc->run->log(
				ctx, TRACERIG_LOG_WARN,
				"destroying session %s, left by tracerig "
				"pid %d that no longer runs, failed: %s (remove it with 'lttng "
				"destroy %s')",
				sessions[i].name, (int)owner, lttng_strerror(ret),
				sessions[i].name);
			continue;
		}
		svc->run->log(ctx, TRACERIG_LOG_WARN,
			      "destroyed session %s%s: it was left by tracerig "
			      "pid %d, which no longer runs (killed before it could clean up)",
			      sessions[i].name, sessions[i].enabled ? " (still recording)" : "",
			      (int)owner);
		reaped++;
	}
	free(sessions);
	return reaped;
}

int lt_kernel_tracer_loaded(void)
{
	struct stat st;

	return stat("/sys/module/lttng_tracer", &st) == 0;
}

void lt_sigpipe_block(struct lt_sigpipe *g)
{
	sigset_t pipe_only;

	sigemptyset(&pipe_only);
	sigaddset(&pipe_only, SIGPIPE);
	sigpending(&g->pending_before);
	g->blocked = pthread_sigmask(SIG_BLOCK, &pipe_only, &g->old_mask) == 0;
}

void lt_sigpipe_restore(struct lt_sigpipe *g)
{
	static const struct timespec zero = { 0, 0 };
	sigset_t pending, pipe_only;

	if (!g->blocked)
		return;
	sigemptyset(&pipe_only);
	sigaddset(&pipe_only, SIGPIPE);
	/* Swallow the SIGPIPE we caused, not one that was already pending. */
	if (!sigismember(&g->pending_before, SIGPIPE) && sigpending(&pending) == 0 &&
	    sigismember(&pending, SIGPIPE))
		while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &g->old_mask, NULL);
}
