#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/pidset.h"
#include "lib/procpid.h"
#include "lib/strmap.h"
#include "pids.h"

struct subscriber {
	tracerig_pid_cb cb;
	void *arg;
};

/* A session sees at most a few hundred thousand PIDs. */
struct tr_pids {
	pthread_mutex_t lock;
	struct tr_pid_set seen; /* in order of observation, for stable listings */
	struct subscriber *subscribers;
	size_t n_subscribers;
	/* Callbacks running now: unsubscribe waits for them to return, so
	 * that a plugin may free what its callback uses. */
	size_t in_flight;
	pthread_cond_t returned;
	/* The cgroup of each observed process, read when it is first seen
	 * (alive, most likely): "PID" -> the path, strdup'ed, as a
	 * uintptr_t. */
	struct tr_strmap cgroups;
};

struct tr_pids *tr_pids_new(void)
{
	struct tr_pids *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->returned, NULL);
	return r;
}

static void free_cgroups(struct tr_pids *r)
{
	struct tr_strmap_entry *e;

	for (size_t i = 0; (e = tr_strmap_next(&r->cgroups, &i));)
		free((char *)(uintptr_t)e->value);
	tr_strmap_free(&r->cgroups);
}

/* Under the lock. */
static const char *cgroup_known(struct tr_pids *r, pid_t pid)
{
	char key[16];
	int len = snprintf(key, sizeof(key), "%d", (int)pid);
	const struct tr_strmap_entry *e = tr_strmap_find(&r->cgroups, key, (size_t)len);

	return e ? (const char *)(uintptr_t)e->value : NULL;
}

/* Reads the cgroup of `pid` and keeps it (the first answer stays). */
static const char *cgroup_read(struct tr_pids *r, pid_t pid)
{
	char path[4096], key[16];
	int len = snprintf(key, sizeof(key), "%d", (int)pid);
	struct tr_strmap_entry *e;
	const char *kept = NULL;

	if (tr_proc_cgroup(pid, path, sizeof(path)) < 0)
		return NULL;
	pthread_mutex_lock(&r->lock);
	e = tr_strmap_get(&r->cgroups, key, (size_t)len);
	if (e && !e->value)
		e->value = (uintptr_t)strdup(path);
	if (e)
		kept = (const char *)(uintptr_t)e->value;
	pthread_mutex_unlock(&r->lock);
	return kept;
}

void tr_pids_free(struct tr_pids *r)
{
	if (!r)
		return;
	tr_pid_set_free(&r->seen);
	free_cgroups(r);
	free(r->subscribers);
	pthread_cond_destroy(&r->returned);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

int tr_pids_observe(struct tr_pids *r, pid_t pid)
{
	struct subscriber *subs = NULL;
	size_t n_subs = 0;

	pthread_mutex_lock(&r->lock);
	if (tr_pid_set_add(&r->seen, pid) <= 0) {
		pthread_mutex_unlock(&r->lock);
		return 0;
	}
	if (r->n_subscribers) {
		subs = malloc(r->n_subscribers * sizeof(*subs));
		if (subs) {
			memcpy(subs, r->subscribers, r->n_subscribers * sizeof(*subs));
			n_subs = r->n_subscribers;
			r->in_flight++;
		}
	}
	pthread_mutex_unlock(&r->lock);
	/* While the process is there to be asked (one small /proc read per
	 * new process). */
	(void)cgroup_read(r, pid);
	/* Called without the lock so a subscriber may list or observe. */
	for (size_t i = 0; i < n_subs; i++)
		subs[i].cb(subs[i].arg, pid);
	free(subs);
	if (n_subs) {
		pthread_mutex_lock(&r->lock);
		if (--r->in_flight == 0)
			pthread_cond_broadcast(&r->returned);
		pthread_mutex_unlock(&r->lock);
	}
	return 1;
}

size_t tr_pids_list(struct tr_pids *r, pid_t *out, size_t max)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->seen.n < max ? r->seen.n : max;
	if (out && n)
		memcpy(out, r->seen.pids, n * sizeof(*out));
	if (!out)
		n = r->seen.n;
	pthread_mutex_unlock(&r->lock);
	return n;
}

size_t tr_pids_count(struct tr_pids *r)
{
	return tr_pids_list(r, NULL, 0);
}

pid_t *tr_pids_all(struct tr_pids *r, size_t *n)
{
	size_t count = tr_pids_count(r);
	pid_t *all = calloc(count + 1, sizeof(*all));

	*n = all ? tr_pids_list(r, all, count) : 0;
	return all;
}

int tr_pids_known(struct tr_pids *r, pid_t pid)
{
	int known;

	pthread_mutex_lock(&r->lock);
	known = tr_pid_set_has(&r->seen, pid);
	pthread_mutex_unlock(&r->lock);
	return known;
}

int tr_pids_subscribe(struct tr_pids *r, tracerig_pid_cb cb, void *arg)
{
	struct subscriber *grown;

	pthread_mutex_lock(&r->lock);
	grown = realloc(r->subscribers, (r->n_subscribers + 1) * sizeof(*grown));
	if (!grown) {
		pthread_mutex_unlock(&r->lock);
		return -ENOMEM;
	}
	r->subscribers = grown;
	r->subscribers[r->n_subscribers].cb = cb;
	r->subscribers[r->n_subscribers].arg = arg;
	r->n_subscribers++;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

int tr_pids_unsubscribe(struct tr_pids *r, tracerig_pid_cb cb, void *arg)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->n_subscribers; i++) {
		if (r->subscribers[i].cb == cb && r->subscribers[i].arg == arg) {
			memmove(&r->subscribers[i], &r->subscribers[i + 1],
				(r->n_subscribers - i - 1) * sizeof(*r->subscribers));
			r->n_subscribers--;
			ret = 0;
			break;
		}
	}
	/* A call that copied the list before the removal may still be on its
	 * way to cb. */
	while (ret == 0 && r->in_flight)
		pthread_cond_wait(&r->returned, &r->lock);
	pthread_mutex_unlock(&r->lock);
	return ret;
}

const char *tr_pids_cgroup(struct tr_pids *r, pid_t pid)
{
	const char *path;

	pthread_mutex_lock(&r->lock);
	path = cgroup_known(r, pid);
	pthread_mutex_unlock(&r->lock);
	/* A process no source observed (a -p target seen only through its
	 * samples) is asked now, if it is still there. */
	return path ? path : cgroup_read(r, pid);
}
