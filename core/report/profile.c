#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

int rp_profile_begin(struct rp_profile *p, const char *comm, long pid, uint64_t weight)
{
	struct rp_count *proc;
	char key[32];
	int ret;

	ret = rp_profile_end(p);
	if (ret < 0)
		return ret;
	snprintf(key, sizeof(key), "%ld", pid);
	proc = rp_counts_get(&p->procs, key, strlen(key));
	if (!proc)
		return -ENOMEM;
	proc->pid = pid;
	proc->self = rp_add(proc->self, weight);
	p->samples = rp_add(p->samples, weight);
	p->current++;
	p->weight = weight;
	p->frames = 0;
	p->in_sample = 1;
	return rp_count_comm(proc, comm, weight);
}

int rp_profile_frame(struct rp_profile *p, const char *name, size_t len, int leaf)
{
	struct rp_count *f;

	if (!p->in_sample)
		return 0;
	f = rp_counts_get(&p->funcs, name, len);
	if (!f)
		return -ENOMEM;
	if (leaf)
		f->self = rp_add(f->self, p->weight);
	if (f->last_sample != p->current) {
		f->total = rp_add(f->total, p->weight);
		f->last_sample = p->current;
	}
	p->frames++;
	return 0;
}

int rp_profile_end(struct rp_profile *p)
{
	static const char no_stack[] = "[no stack]";
	int ret = 0;

	/* A sample without a stack still counts, as such. */
	if (p->in_sample && !p->frames)
		ret = rp_profile_frame(p, no_stack, sizeof(no_stack) - 1, 1);
	p->in_sample = 0;
	return ret;
}

int rp_profile_event(struct rp_profile *p, const char *name, size_t len)
{
	for (size_t i = 0; i < p->n_events; i++) {
		if (strlen(p->events[i]) == len && memcmp(p->events[i], name, len) == 0) {
			p->event_samples[i] = rp_add(p->event_samples[i], p->weight);
			return 0;
		}
	}
	if (p->n_events == RP_MAX_EVENTS)
		return 0;
	p->events[p->n_events] = strndup(name, len);
	if (!p->events[p->n_events])
		return -ENOMEM;
	p->event_samples[p->n_events++] = p->weight;
	return 0;
}

void rp_profile_free(struct rp_profile *p)
{
	rp_counts_free(&p->funcs);
	rp_counts_free(&p->procs);
	for (size_t i = 0; i < p->n_events; i++)
		free(p->events[i]);
	memset(p, 0, sizeof(*p));
}
