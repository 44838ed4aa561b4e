#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/pidset.h"
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

void tr_pids_reset(void)
{
	pthread_mutex_lock(&lock);
	tr_pid_set_free(&seen);
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
