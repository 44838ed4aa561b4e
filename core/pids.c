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

/* A session sees at most a few hundred thousand PIDs. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tr_pid_set seen; /* in order of observation, for stable listings */

struct subscriber {
	tracerig_pid_cb cb;
	void *arg;
};
static struct subscriber *subscribers;
static size_t n_subscribers;
/* Callbacks running now: unsubscribe waits for them to return, so that a
 * plugin may free what its callback uses. */
static size_t in_flight;
static pthread_cond_t returned = PTHREAD_COND_INITIALIZER;

/* The cgroup of each observed process, read when it is first seen (alive,
 * most likely): "PID" -> the path, strdup'ed, as a uintptr_t. */
static struct tr_strmap cgroups;

static void free_cgroups(void)
{
	struct tr_strmap_entry *e;

	for (size_t i = 0; (e = tr_strmap_next(&cgroups, &i));)
		free((char *)(uintptr_t)e->value);
	tr_strmap_free(&cgroups);
	memset(&cgroups, 0, sizeof(cgroups));
}

/* Under the lock. */
static const char *cgroup_known(pid_t pid)
{
	char key[16];
	int len = snprintf(key, sizeof(key), "%d", (int)pid);
	const struct tr_strmap_entry *e = tr_strmap_find(&cgroups, key, (size_t)len);

	return e ? (const char *)(uintptr_t)e->value : NULL;
}

/* Reads the cgroup of `pid` and keeps it (the first answer stays). */
static const char *cgroup_read(pid_t pid)
{
	char path[4096], key[16];
	int len = snprintf(key, sizeof(key), "%d", (int)pid);
	struct tr_strmap_entry *e;
	const char *kept = NULL;

	if (tr_proc_cgroup(pid, path, sizeof(path)) < 0)
		return NULL;
	pthread_mutex_lock(&lock);
	e = tr_strmap_get(&cgroups, key, (size_t)len);
	if (e && !e->value)
		e->value = (uintptr_t)strdup(path);
	if (e)
		kept = (const char *)(uintptr_t)e->value;
	pthread_mutex_unlock(&lock);
	return kept;
}

void tr_pids_reset(void)
{
	pthread_mutex_lock(&lock);
	tr_pid_set_free(&seen);
	free_cgroups();
	free(subscribers);
	subscribers = NULL;
	n_subscribers = 0;
	pthread_mutex_unlock(&lock);
}

int tr_pids_observe(pid_t pid)
{
	struct subscriber *subs = NULL;
	size_t n_subs = 0;

	pthread_mutex_lock(&lock);
	if (tr_pid_set_add(&seen, pid) <= 0) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	if (n_subscribers) {
		subs = malloc(n_subscribers * sizeof(*subs));
		if (subs) {
			memcpy(subs, subscribers, n_subscribers * sizeof(*subs));
			n_subs = n_subscribers;
			in_flight++;
		}
	}
	pthread_mutex_unlock(&lock);
	/* While the process is there to be asked (one small /proc read per
	 * new process). */
	(void)cgroup_read(pid);
	/* Called without the lock so a subscriber may list or observe. */
	for (size_t i = 0; i < n_subs; i++)
		subs[i].cb(subs[i].arg, pid);
	free(subs);
	if (n_subs) {
		pthread_mutex_lock(&lock);
		if (--in_flight == 0)
			pthread_cond_broadcast(&returned);
		pthread_mutex_unlock(&lock);
	}
	return 1;
}

size_t tr_pids_list(pid_t *out, size_t max)
{
	size_t n;

	pthread_mutex_lock(&lock);
	n = seen.n < max ? seen.n : max;
	if (out && n)
		memcpy(out, seen.pids, n * sizeof(*out));
	if (!out)
		n = seen.n;
	pthread_mutex_unlock(&lock);
	return n;
}

size_t tr_pids_count(void)
{
	return tr_pids_list(NULL, 0);
}

int tr_pids_known(pid_t pid)
{
	int known;

	pthread_mutex_lock(&lock);
	known = tr_pid_set_has(&seen, pid);
	pthread_mutex_unlock(&lock);
	return known;
}

int tr_pids_subscribe(tracerig_pid_cb cb, void *arg)
{
	struct subscriber *grown;

	pthread_mutex_lock(&lock);
	grown = realloc(subscribers, (n_subscribers + 1) * sizeof(*grown));
	if (!grown) {
		pthread_mutex_unlock(&lock);
		return -ENOMEM;
	}
	subscribers = grown;
	subscribers[n_subscribers].cb = cb;
	subscribers[n_subscribers].arg = arg;
	n_subscribers++;
	pthread_mutex_unlock(&lock);
	return 0;
}

int tr_pids_unsubscribe(tracerig_pid_cb cb, void *arg)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_subscribers; i++) {
		if (subscribers[i].cb == cb && subscribers[i].arg == arg) {
			memmove(&subscribers[i], &subscribers[i + 1],
				(n_subscribers - i - 1) * sizeof(*subscribers));
			n_subscribers--;
			ret = 0;
			break;
		}
	}
	/* A call that copied the list before the removal may still be on its
	 * way to cb. */
	while (ret == 0 && in_flight)
		pthread_cond_wait(&returned, &lock);
	pthread_mutex_unlock(&lock);
	return ret;
}

const char *tr_pids_cgroup(pid_t pid)
{
	const char *path;

	pthread_mutex_lock(&lock);
	path = cgroup_known(pid);
	pthread_mutex_unlock(&lock);
	/* A process no source observed (a -p target seen only through its
	 * samples) is asked now, if it is still there. */
	return path ? path : cgroup_read(pid);
}
