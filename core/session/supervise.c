#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "ctx.h"
#include "services.h"
#include "supervise.h"
#include "watchdog.h"

struct tr_driver {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum tr_call call;    /* posted and not yet taken, or NONE */
	enum tr_call running; /* the call in progress, for messages */
	struct tracerig_archive *ar;
	enum tr_call_state state;
	int ret;
	uint64_t returned_ns; /* CLOCK_MONOTONIC when the last call returned */
	int quit;
	int abandoned;
	int joined;
};

/* Where each plugin's object is mapped.  Written before any driver runs,
 * then only read, so the fault handler may look at it. */
#define MAX_RANGES 128
static struct {
	uintptr_t lo, hi;
	struct tracerig_ctx *ctx;
} ranges[MAX_RANGES];
static volatile sig_atomic_t n_ranges;

static int wake_fd = -1;
static pthread_t main_thread;
static __thread struct tracerig_ctx *driver_ctx;
static volatile sig_atomic_t tainted, fault_pending, faulting_fatally;

static const int fault_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

const char *tr_call_name(enum tr_call call)
{
	static const char *const names[] = { "collect", "init", "start",   "stop",
					     "flush",   "fini", "validate" };

	return call <= TR_CALL_VALIDATE ? names[call] : "?";
}

static void wake(void)
{
	uint64_t one = 1;

	if (write(wake_fd, &one, sizeof(one)) < 0) {
		/* The counter is saturated: the main thread is awake anyway. */
	}
}

static struct tracerig_ctx *owner_of(uintptr_t pc)
{
	for (sig_atomic_t i = 0; i < n_ranges; i++)
		if (pc >= ranges[i].lo && pc < ranges[i].hi)
			return ranges[i].ctx;
	return NULL;
}

static uintptr_t fault_pc(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#else
	(void)uc;
	return 0;
#endif
}

static struct tracerig_ctx *blame(const ucontext_t *uc)
{
	struct tracerig_ctx *ctx = driver_ctx;
	void *frames[64];
	int n;

	if (ctx)
		return ctx;
	if ((ctx = owner_of(fault_pc(uc))))
		return ctx;
	/* abort() and faults inside a library the plugin called: the plugin
	 * is further up the stack.  backtrace() was primed at init, so it
	 * does not load libgcc_s from here. */
	n = backtrace(frames, 64);
	for (int i = 0; i < n; i++)
		if ((ctx = owner_of((uintptr_t)frames[i])))
			return ctx;
	return NULL;
}

/* Async-signal-safe message: write(2) of each part. */
static void say(const char *a, const char *b, const char *c)
{
	const char *parts[] = { a, b, c };

	for (size_t i = 0; i < 3; i++)
		if (parts[i] && write(STDERR_FILENO, parts[i], strlen(parts[i])) < 0)
			return;
}

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	struct tracerig_ctx *ctx;
	sigset_t all;

	(void)si;
	ctx = faulting_fatally ? NULL : blame(ucv);
	if (!ctx || pthread_equal(pthread_self(), main_thread)) {
		/* Nothing to isolate: let the process die of it, after telling
		 * the watchdog who did it so the archive can say. */
		faulting_fatally = 1;
		tr_watchdog_fault(ctx ? ctx->plugin->name : "tracerig", sig);
		say("tracerig: fatal ", sigabbrev_np(sig) ? sigabbrev_np(sig) : "signal",
		    ctx ? " in a plugin called from the main thread\n" : " in the core\n");
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	ctx->fault_signal = sig;
	tainted = 1;
	fault_pending = 1;
	if (ctx->driver && driver_ctx == ctx)
		ctx->driver->state = TR_CALL_CRASHED;
	wake();
	/* Frozen for good: its locks and stack stay as they are, nothing in
	 * this thread runs again. */
	sigfillset(&all);
	for (;;)
		sigsuspend(&all);
}

static int install_handlers(void)
{
	static char main_stack[64 * 1024];
	struct sigaction sa;
	stack_t ss = { .ss_sp = main_stack, .ss_size = sizeof(main_stack) };

	if (sigaltstack(&ss, NULL) < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fault_signals) / sizeof(fault_signals[0]); i++)
		if (sigaction(fault_signals[i], &sa, NULL) < 0)
			return -errno;
	return 0;
}

int tr_supervise_init(void)
{
	void *prime[2];
	int ret;

	if (wake_fd >= 0)
		return wake_fd;
	main_thread = pthread_self();
	backtrace(prime, 2);
	wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (wake_fd < 0)
		return -errno;
	if ((ret = install_handlers()) < 0)
		return ret;
	return wake_fd;
}

int tr_supervise_wake_fd(void)
{
	return wake_fd;
}

void tr_supervise_drain(void)
{
	uint64_t n;

	if (read(wake_fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: nothing was pending. */
	}
}

int tr_supervise_tainted(void)
{
	return tainted;
}

int tr_supervise_fault_pending(void)
{
	int was = fault_pending;

	fault_pending = 0;
	return was;
}

struct range_search {
	uintptr_t base;
	struct tracerig_ctx *ctx;
};

static int add_object_ranges(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct range_search *rs = arg;

	(void)size;
	if (info->dlpi_addr != rs->base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && n_ranges < MAX_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		ranges[n_ranges].lo = info->dlpi_addr + ph->p_vaddr;
		ranges[n_ranges].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		ranges[n_ranges].ctx = rs->ctx;
		n_ranges++;
	}
	return 1;
}

static int call_plugin(struct tracerig_ctx *ctx, enum tr_call call, struct tracerig_archive *ar)
{
	const struct tracerig_plugin *p = ctx->plugin;
	int ret = 0;

	switch (call) {
	case TR_CALL_VALIDATE: ret = p->validate ? p->validate(&tr_services, ctx) : 0; break;
	case TR_CALL_INIT:
		ctx->in_init = 1;
		ret = p->init(&tr_services, ctx, &ctx->state);
		ctx->in_init = 0;
		break;
	case TR_CALL_START:
		ret = p->start ? p->start(ctx->state) : 0;
		break;
	case TR_CALL_STOP:
		ret = p->stop ? p->stop(ctx->state) : 0;
		break;
	case TR_CALL_FLUSH:
		ret = p->flush ? p->flush(ctx->state, ar) : 0;
		break;
	case TR_CALL_FINI:
		if (p->fini && ctx->state)
			p->fini(ctx->state);
		ctx->state = NULL;
		break;
	case TR_CALL_NONE:
		break;
	}
	return ret;
}

static void *driver_main(void *arg)
{
	struct tracerig_ctx *ctx = arg;
	struct tr_driver *d = ctx->driver;
	stack_t ss = { .ss_size = 64 * 1024 };

	driver_ctx = ctx;
	/* A plugin that overflows its stack still gets a handler to run on. */
	ss.ss_sp = mmap(NULL, ss.ss_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	if (ss.ss_sp != MAP_FAILED)
		sigaltstack(&ss, NULL);
	pthread_mutex_lock(&d->lock);
	for (;;) {
		enum tr_call call;
		struct tracerig_archive *ar;
		struct timespec now;
		int ret;

		while (d->call == TR_CALL_NONE && !d->quit)
			pthread_cond_wait(&d->cond, &d->lock);
		if (d->call == TR_CALL_NONE)
			break;
		call = d->call;
		ar = d->ar;
		d->call = TR_CALL_NONE;
		pthread_mutex_unlock(&d->lock);

		ret = call_plugin(ctx, call, ar);

		pthread_mutex_lock(&d->lock);
		clock_gettime(CLOCK_MONOTONIC, &now);
		d->returned_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
		d->ret = ret;
		if (d->state == TR_CALL_PENDING)
			d->state = TR_CALL_RETURNED;
		wake();
	}
	pthread_mutex_unlock(&d->lock);
	if (ss.ss_sp != MAP_FAILED) {
		stack_t off = { .ss_flags = SS_DISABLE };

		sigaltstack(&off, NULL);
		munmap(ss.ss_sp, ss.ss_size);
	}
	return NULL;
}

int tr_driver_start(struct tracerig_ctx *ctx)
{
	struct range_search rs = { .ctx = ctx };
	struct tr_driver *d;
	Dl_info info;
	int ret;

	if (dladdr(ctx->plugin, &info) && info.dli_fbase) {
		rs.base = (uintptr_t)info.dli_fbase;
		/* dlpi_addr is the load bias, dli_fbase the lowest mapping:
		 * equal for the shared objects plugins are. */
		dl_iterate_phdr(add_object_ranges, &rs);
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	d->state = TR_CALL_RETURNED;
	ctx->driver = d;
	ret = pthread_create(&d->thread, NULL, driver_main, ctx);
	if (ret != 0) {
		ctx->driver = NULL;
		pthread_cond_destroy(&d->cond);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return -ret;
	}
	{
		/* "tr:perf_events" in top -H and perf's comm: whose thread is busy. */
		char name[16];

		snprintf(name, sizeof(name), "tr:%s", ctx->plugin->name);
		(void)pthread_setname_np(d->thread, name);
	}
	return 0;
}

int tr_driver_post(struct tracerig_ctx *ctx, enum tr_call call, struct tracerig_archive *ar)
{
	struct tr_driver *d = ctx->driver;

	if (!d || d->abandoned || ctx->fault_signal)
		return -EOWNERDEAD;
	pthread_mutex_lock(&d->lock);
	d->call = call;
	d->running = call;
	d->ar = ar;
	d->state = TR_CALL_PENDING;
	d->ret = 0;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

enum tr_call_state tr_driver_poll(struct tracerig_ctx *ctx, int *ret)
{
	struct tr_driver *d = ctx->driver;
	enum tr_call_state state;

	if (ctx->fault_signal)
		return TR_CALL_CRASHED;
	if (!d)
		return TR_CALL_CRASHED;
	pthread_mutex_lock(&d->lock);
	state = d->abandoned ? TR_CALL_HUNG : d->state;
	if (ret)
		*ret = d->ret;
	pthread_mutex_unlock(&d->lock);
	return state;
}

uint64_t tr_driver_returned_ns(struct tracerig_ctx *ctx)
{
	struct tr_driver *d = ctx->driver;
	uint64_t ns;

	if (!d)
		return 0;
	pthread_mutex_lock(&d->lock);
	ns = d->returned_ns;
	pthread_mutex_unlock(&d->lock);
	return ns;
}

void tr_driver_abandon(struct tracerig_ctx *ctx)
{
	struct tr_driver *d = ctx->driver;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->abandoned = 1;
	pthread_mutex_unlock(&d->lock);
	tainted = 1;
}

void tr_driver_join(struct tracerig_ctx *ctx)
{
	struct tr_driver *d = ctx->driver;

	if (!d || d->joined)
		return;
	if (d->abandoned || ctx->fault_signal)
		return; /* it may never come back: leave it, and leave with _exit */
	pthread_mutex_lock(&d->lock);
	d->quit = 1;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	d->joined = 1;
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	ctx->driver = NULL;
	free(d);
}
