#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pids.h"

/* Open addressing on PIDs; a session sees at most a few hundred thousand. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t *slots;
static size_t n_slots, n_used;
static pid_t *order; /* insertion order, for stable listings */

struct subscriber {
	tracerig_pid_cb cb;
	void *arg;
};
static struct subscriber *subscribers;
static size_t n_subscribers;

void tr_pids_reset(void)
{
	pthread_mutex_lock(&lock);
	free(slots);
	free(order);
	free(subscribers);
	slots = order = NULL;
	subscribers = NULL;
	n_slots = n_used = n_subscribers = 0;
	pthread_mutex_unlock(&lock);
}

static size_t slot_of(pid_t pid, size_t mask)
{
	return ((size_t)pid * 2654435761u) & mask;
}

static int grow(void)
{
	size_t new_n = n_slots ? n_slots * 2 : 1024;
	pid_t *new_slots = calloc(new_n, sizeof(*new_slots));
	pid_t *new_order = realloc(order, new_n / 2 * sizeof(*new_order));

	if (!new_slots || !new_order) {
		free(new_slots);
		if (new_order)
			order = new_order;
		return -ENOMEM;
	}
	order = new_order;
	for (size_t i = 0; i < n_used; i++) {
		size_t s = slot_of(order[i], new_n - 1);

		while (new_slots[s])
			s = (s + 1) & (new_n - 1);
		new_slots[s] = order[i];
	}
	free(slots);
	slots = new_slots;
	n_slots = new_n;
	return 0;
}

int tr_pids_observe(pid_t pid)
{
	struct subscriber *subs = NULL;
	size_t n_subs = 0, s;

	if (pid <= 0)
		return 0;
	pthread_mutex_lock(&lock);
	if ((n_used + 1) * 2 > n_slots && grow() < 0) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	for (s = slot_of(pid, n_slots - 1); slots[s]; s = (s + 1) & (n_slots - 1)) {
		if (slots[s] == pid) {
			pthread_mutex_unlock(&lock);
			return 0;
		}
	}
	slots[s] = pid;
	order[n_used++] = pid;
	if (n_subscribers) {
		subs = malloc(n_subscribers * sizeof(*subs));
		if (subs) {
			memcpy(subs, subscribers, n_subscribers * sizeof(*subs));
			n_subs = n_subscribers;
		}
	}
	pthread_mutex_unlock(&lock);
	/* Called without the lock so a subscriber may list or observe. */
	for (size_t i = 0; i < n_subs; i++)
		subs[i].cb(subs[i].arg, pid);
	free(subs);
	return 1;
}

size_t tr_pids_list(pid_t *out, size_t max)
{
	size_t n;

	pthread_mutex_lock(&lock);
	n = n_used < max ? n_used : max;
	if (out && n)
		memcpy(out, order, n * sizeof(*out));
	if (!out)
		n = n_used;
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
