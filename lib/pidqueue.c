/* The queue is a small array scanned linearly: it holds the PIDs that
 * appeared since the worker last looked, rarely more than a few dozen. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "pidqueue.h"
#include "vec.h"

struct tr_pid_queue {
	pid_t *v;
	size_t n, cap;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	int stop;
	tr_pid_work_fn work;
	tr_pid_tick_fn tick;
	unsigned tick_ms;
	void *arg;
};

static void deadline_in(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void *worker(void *arg)
{
	struct tr_pid_queue *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		pid_t pid;

		while (!q->n && !q->stop) {
			struct timespec until;

			if (!q->tick) {
				pthread_cond_wait(&q->cond, &q->lock);
				continue;
			}
			deadline_in(&until, q->tick_ms);
			if (pthread_cond_timedwait(&q->cond, &q->lock, &until) == ETIMEDOUT) {
				pthread_mutex_unlock(&q->lock);
				q->tick(q->arg);
				pthread_mutex_lock(&q->lock);
			}
		}
		if (!q->n)
			break;
		pid = q->v[--q->n];
		pthread_mutex_unlock(&q->lock);
		q->work(q->arg, pid);
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int tr_pid_queue_start(struct tr_pid_queue **out, tr_pid_work_fn work, tr_pid_tick_fn tick,
		       unsigned tick_ms, void *arg)
{
	struct tr_pid_queue *q = calloc(1, sizeof(*q));
	pthread_condattr_t ca;
	int ret;

	if (!q)
		return -ENOMEM;
	q->work = work;
	q->tick = tick;
	q->tick_ms = tick_ms ? tick_ms : 500;
	q->arg = arg;
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&q->thread, NULL, worker, q);
	if (ret) {
		pthread_cond_destroy(&q->cond);
		pthread_mutex_destroy(&q->lock);
		free(q);
		return -ret;
	}
	(void)pthread_setname_np(q->thread, "tr-remember");
	*out = q;
	return 0;
}

int tr_pid_queue_push(struct tr_pid_queue *q, pid_t pid)
{
	pid_t *grown;
	int ret = 0;

	if (pid <= 0)
		return 0;
	pthread_mutex_lock(&q->lock);
	for (size_t i = 0; i < q->n; i++)
		if (q->v[i] == pid)
			goto out;
	grown = tr_vec_grow(q->v, &q->cap, q->n + 1, sizeof(*grown), 256);
	if (!grown) {
		ret = -ENOMEM;
		goto out;
	}
	q->v = grown;
	q->v[q->n++] = pid;
	pthread_cond_signal(&q->cond);
out:
	pthread_mutex_unlock(&q->lock);
	return ret;
}

void tr_pid_queue_stop(struct tr_pid_queue *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = 1;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	free(q->v);
	free(q);
}
