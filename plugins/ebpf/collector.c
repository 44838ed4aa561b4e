/* Loading, attaching and reading the off-CPU BPF program (offcpu.bpf.c)
 * through its libbpf skeleton. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collector.h"
#include "offcpu.skel.h"
#include "lib/cpus.h"
#include "lib/vec.h"

#define VMLINUX_BTF_PATH "/sys/kernel/btf/vmlinux"
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

const char *const oc_counter_names[OFFCPU_CNT__MAX] = {
	[OFFCPU_CNT_SWITCHES] = "switches",
	[OFFCPU_CNT_INTERVALS] = "intervals",
	[OFFCPU_CNT_KEPT] = "intervals_kept",
	[OFFCPU_CNT_SHORT] = "intervals_below_min_block",
	[OFFCPU_CNT_LONG] = "intervals_above_max_block",
	[OFFCPU_CNT_SAMPLED_OUT] = "intervals_sampled_out",
	[OFFCPU_CNT_KSTACK_DROPPED] = "kernel_stacks_dropped",
	[OFFCPU_CNT_USTACK_DROPPED] = "user_stacks_dropped",
	[OFFCPU_CNT_AGG_FULL] = "intervals_lost_map_full",
	[OFFCPU_CNT_THREAD_FULL] = "intervals_lost_thread_state",
	[OFFCPU_CNT_EVENTS_LOST] = "process_notifications_lost",
	[OFFCPU_CNT_UCOPY_SLOT_FULL] = "dwarf_copies_lost_no_slot",
	[OFFCPU_CNT_UCOPY_RING_FULL] = "dwarf_copies_lost_ring_full",
	[OFFCPU_CNT_UCOPY_SENT] = "dwarf_copies_sent",
	[OFFCPU_CNT_RETURN_UNSEEN] = "intervals_lost_return_unseen",
	[OFFCPU_CNT_CFI_WALKS] = "cfi_walks",
	[OFFCPU_CNT_CFI_NO_TABLE] = "cfi_stacks_no_table",
	[OFFCPU_CNT_CFI_CUT_SHORT] = "cfi_stacks_cut_short",
	[OFFCPU_CNT_CFI_FP_FRAMES] = "cfi_frames_by_fp",
	[OFFCPU_CNT_CFI_READ_FAILED] = "cfi_stacks_read_failed",
	[OFFCPU_CNT_ONCPU_SAMPLES] = "oncpu_samples",
	[OFFCPU_CNT_ONCPU_AGG_FULL] = "oncpu_samples_lost_map_full",
	[OFFCPU_CNT_ONCPU_RING_FULL] = "oncpu_samples_not_in_script",
};

struct oc_collector {
	struct offcpu_bpf *skel;
	struct ring_buffer *rb;
	enum oc_hook hook;
	uint32_t depth;
	uint32_t stack_bytes; /* callchain = dwarf: bytes copied; 0: fp */
	int cfi;              /* callchain = cfi */
	int ncpus;
	int cgroup_fd;
	uint32_t oncpu_hz; /* 0: no on-CPU sampler */
	int *oncpu_fds;    /* its perf events, one per online CPU (-1: none) */
	struct bpf_link **oncpu_links;
	int n_oncpu;
	oc_event_fn cb;
	void *cb_arg;
	oc_ustack_fn ustack_cb;
	oc_sample_fn sample_cb;
	void *sample_arg;
	uint32_t samples_bytes; /* the samples ring's size; 0: no script */
	void *ustack_arg;
	int no_batch; /* the kernel has no BPF_MAP_LOOKUP_BATCH for the map (set at
	               * open, before any thread reads the map) */
};

/* libbpf's print hook is process-wide and takes no argument. */
static struct {
	pthread_mutex_t lock;
	oc_log_fn fn;
	void *arg;
} logger = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL };

#define LOG_KEEP 4096

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL;
	const char *text;
	int n;

	pthread_mutex_lock(&logger.lock);
	if (!logger.fn) {
		pthread_mutex_unlock(&logger.lock);
		return 0;
	}
	n = vasprintf(&msg, fmt, ap);
	if (n < 0) {
		pthread_mutex_unlock(&logger.lock);
		return 0;
	}
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	/* The verifier log comes as one long message: keep its end, where
	 * the reason is. */
	text = n > LOG_KEEP ? msg + n - LOG_KEEP : msg;
	logger.fn(logger.arg, level == LIBBPF_WARN ? 1 : 3, text);
	pthread_mutex_unlock(&logger.lock);
	free(msg);
	return 0;
}

void oc_set_log(oc_log_fn log, void *arg)
{
	static libbpf_print_fn_t saved;
	static int installed;

	pthread_mutex_lock(&logger.lock);
	logger.fn = log;
	logger.arg = arg;
	if (log && !installed) {
		saved = libbpf_set_print(libbpf_print);
		installed = 1;
	} else if (!log && installed) {
		libbpf_set_print(saved);
		installed = 0;
	}
	pthread_mutex_unlock(&logger.lock);
}

static unsigned long long effective_caps(void)
{
	unsigned long long caps = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps;
}

static int may_bpf(void)
{
	unsigned long long caps = effective_caps();

	if (caps & (1ull << CAP_SYS_ADMIN_BIT))
		return 1;
	return (caps & (1ull << CAP_BPF_BIT)) && (caps & (1ull << CAP_PERFMON_BIT));
}

int oc_check(char *advice, size_t advice_len)
{
	int ret;

	if (access(VMLINUX_BTF_PATH, R_OK) < 0) {
		snprintf(advice, advice_len, "the kernel exposes no BTF (%s: %s): the BPF program "
			 "needs a kernel built with CONFIG_DEBUG_INFO_BTF=y", VMLINUX_BTF_PATH,
			 strerror(errno));
		return -ENOENT;
	}
	if (!may_bpf()) {
		snprintf(advice, advice_len, "not allowed to load BPF programs: run as root or give "
			 "tracerig CAP_BPF and CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep)");
		return -EPERM;
	}
	ret = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL);
	if (ret <= 0) {
		snprintf(advice, advice_len, "the kernel cannot load raw tracepoint BPF programs (%s)",
			 ret < 0 ? strerror(-ret) : "not supported");
		return ret < 0 ? ret : -EOPNOTSUPP;
	}
	return 0;
}

int oc_check_cfi(char *advice, size_t advice_len)
{
	/* The walker's steps are bpf_loop callbacks (Linux 5.17), from the
	 * registers bpf_task_pt_regs gives (5.15). */
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_loop, NULL) <= 0 ||
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_task_pt_regs, NULL) <=
		    0) {
		snprintf(
			advice, advice_len,
			"callchain = cfi needs a kernel whose BPF programs can call bpf_loop and "
			"bpf_task_pt_regs (Linux 5.17 or later): use callchain = dwarf on this one");
		return -EOPNOTSUPP;
	}
	return 0;
}

/* tp_btf is a BPF_PROG_TYPE_TRACING program: load an empty one to learn
 * whether this kernel takes it (libbpf's type probe does not cover it). */
static int probe_tp_btf(const char *tp)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP);
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int id = libbpf_find_vmlinux_btf_id(tp, BPF_TRACE_RAW_TP);
	int fd;

	if (id <= 0)
		return 0;
	opts.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, 2, &opts);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static void why_load_failed(int err, char *why, size_t len)
{
	struct rlimit rl;

	if ((err == -EPERM || err == -EACCES) && !may_bpf()) {
		snprintf(why, len, "%s: not allowed (run as root or with CAP_BPF and CAP_PERFMON)",
			 strerror(-err));
	} else if (err == -EPERM && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
		   rl.rlim_cur != RLIM_INFINITY) {
		snprintf(why, len, "%s: locked-memory limit of %llu KiB too low for the maps "
			 "(raise it: ulimit -l unlimited, or LimitMEMLOCK=infinity in a unit)",
			 strerror(-err), (unsigned long long)rl.rlim_cur / 1024);
	} else if (err == -EACCES || err == -EINVAL || err == -E2BIG) {
		snprintf(why, len, "the kernel's verifier rejected the program: %s (its log is "
			 "above; -vv shows all of libbpf's messages)", strerror(-err));
	} else if (err == -ENOMEM) {
		snprintf(why, len, "%s (lower stack_storage_size or aggregation_size)", strerror(-err));
	} else {
		snprintf(why, len, "%s", strerror(-err));
	}
}

/* What loading needs from the machine, said before libbpf fails in less
 * helpful words. */
static int check_can_load(char *why, size_t why_len)
{
	int ret;

	if (access(VMLINUX_BTF_PATH, R_OK) < 0) {
		ret = -errno;
		snprintf(why, why_len, "the kernel exposes no BTF (%s: %s): CO-RE needs a kernel "
			 "built with CONFIG_DEBUG_INFO_BTF=y", VMLINUX_BTF_PATH, strerror(errno));
		return ret;
	}
	/* Tracing programs need these whatever kernel.unprivileged_bpf_disabled
	 * says. */
	if (!may_bpf()) {
		snprintf(why, why_len, "not allowed to load BPF tracing programs (run as root or "
			 "give tracerig CAP_BPF and CAP_PERFMON: setcap cap_bpf,cap_perfmon+ep)");
		return -EPERM;
	}
	return 0;
}

/* The entry points of the hook used; the other's are not loaded. */
static int choose_hook(struct oc_collector *c, const struct oc_config *cfg)
{
	struct offcpu_bpf *skel = c->skel;

	c->hook = cfg->hook;
	if (!c->oncpu_hz)
		bpf_program__set_autoload(skel->progs.oncpu_sample, false);
	if (c->hook == OC_HOOK_AUTO)
		c->hook = probe_tp_btf("sched_switch") ? OC_HOOK_BTF : OC_HOOK_RAW;
	if (c->hook == OC_HOOK_BTF) {
		bpf_program__set_autoload(skel->progs.offcpu_switch_raw, false);
		bpf_program__set_autoload(skel->progs.offcpu_exit_raw, false);
		bpf_map__set_autocreate(skel->maps.tid_start, false);
		return 0;
	}
	bpf_program__set_autoload(skel->progs.offcpu_switch_btf, false);
	bpf_map__set_autocreate(skel->maps.task_start, false);
	return bpf_map__set_max_entries(skel->maps.tid_start, cfg->thread_entries);
}

/* callchain = dwarf: the events ring holds this many copies of the full
 * size before it is full (user space drains it every few milliseconds
 * while copies come at most once per context switch). */
#define RING_COPIES 512
#define RING_MIN (64 * 1024)
#define RING_MAX (64u << 20)

/* A ring's size for `want` bytes: a power of two of pages, within
 * [RING_MIN, RING_MAX]. */
static uint32_t ring_size(uint64_t want)
{
	uint32_t size = RING_MIN;

	while (size < want && size < RING_MAX)
		size *= 2;
	return size;
}

static uint32_t ring_bytes(uint32_t stack_bytes)
{
	if (!stack_bytes)
		return RING_MIN;
	return ring_size((uint64_t)RING_COPIES * (sizeof(struct offcpu_ustack) + stack_bytes + 8));
}

/* oncpu's samples ring: a second of samples at the profile's rate on
 * every possible CPU is more than the notification thread's timeout lets
 * pile up; a quarter full wakes it. */
static uint32_t samples_ring_bytes(const struct oc_collector *c)
{
	return ring_size((uint64_t)c->oncpu_hz * (uint64_t)c->ncpus * sizeof(struct offcpu_sample));
}

static int size_maps(struct oc_collector *c, const struct oc_config *cfg)
{
	struct offcpu_bpf *skel = c->skel;
	/* fp: the copy maps are never used, keep them tiny. */
	uint32_t copy_size = (uint32_t)sizeof(struct offcpu_ustack) +
		(c->stack_bytes ? c->stack_bytes : 8);
	int ret;

	/* Flight mode runs for days: what was not used for longest makes room
	 * (a snapshot's window needs only the recent entries). */
	ret = cfg->lru ? bpf_map__set_type(skel->maps.stacks, BPF_MAP_TYPE_LRU_HASH) : 0;
	if (!ret && cfg->lru)
		ret = bpf_map__set_type(skel->maps.agg, BPF_MAP_TYPE_LRU_HASH);
	if (!ret)
		ret = bpf_map__set_value_size(skel->maps.stacks,
					      offsetof(struct offcpu_stack, ips) +
					      c->depth * sizeof(uint64_t));
	if (!ret)
		ret = bpf_map__set_max_entries(skel->maps.stacks, cfg->stack_storage);
	if (!ret)
		ret = bpf_map__set_max_entries(skel->maps.agg, cfg->agg_entries);
	/* The sampler's entries as many as the intervals'; one when off. */
	if (!ret)
		ret = bpf_map__set_max_entries(skel->maps.oncpu_agg,
					       c->oncpu_hz ? cfg->agg_entries : 1);
	if (!ret)
		ret = bpf_map__set_value_size(skel->maps.ucopies, copy_size);
	if (!ret)
		ret = bpf_map__set_value_size(skel->maps.ucopy_scratch, copy_size);
	/* A slot per thread off-CPU at once, as for the per-thread state. */
	if (!ret)
		ret = bpf_map__set_max_entries(skel->maps.ucopies,
					       c->stack_bytes ? cfg->thread_entries : 1);
	if (!ret)
		ret = bpf_map__set_max_entries(skel->maps.events, ring_bytes(c->stack_bytes));
	if (!ret && c->samples_bytes)
		ret = bpf_map__set_max_entries(skel->maps.samples, c->samples_bytes);
	/* Without cfi, one entry each: never used. */
	if (!ret)
		ret = bpf_map__set_max_entries(skel->maps.cfi_rows, c->cfi ? cfg->cfi_rows : 1);
	if (!ret)
		ret = bpf_map__set_max_entries(skel->maps.cfi_procs,
					       c->cfi ? cfg->cfi_processes : 1);
	if (!ret && !c->cfi)
		ret = bpf_map__set_max_entries(skel->maps.cfi_cache, 1);
	return ret;
}

static void set_tunables(struct oc_collector *c, const struct oc_config *cfg)
{
	struct offcpu_bpf *skel = c->skel;

	skel->rodata->filter_cgroup = cfg->cgroup != NULL;
	skel->rodata->threads = cfg->threads;
	skel->rodata->state_mask = cfg->state_mask;
	skel->rodata->min_block_ns = cfg->min_block_ns;
	skel->rodata->max_block_ns = cfg->max_block_ns ? cfg->max_block_ns : ~0ull;
	skel->rodata->sample_period_ns = cfg->sample_period_ns;
	skel->rodata->stack_depth = c->depth;
	skel->rodata->dwarf_stack_bytes = c->stack_bytes;
	skel->rodata->cfi = c->cfi;
	skel->rodata->events_bytes = ring_bytes(c->stack_bytes);
	skel->rodata->samples_bytes = c->samples_bytes;
}

static int filter_cgroup(struct oc_collector *c, const char *cgroup, char *why, size_t why_len)
{
	__u32 zero = 0;
	int ret;

	c->cgroup_fd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->cgroup_fd < 0) {
		ret = -errno;
		snprintf(why, why_len, "cannot open cgroup %s: %s", cgroup, strerror(-ret));
		return ret;
	}
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.cgroup), &zero, &c->cgroup_fd,
				BPF_ANY) < 0) {
		ret = -errno;
		snprintf(why, why_len, "cannot filter on cgroup %s: %s (it must be a cgroup v2 "
			 "directory, e.g. under /sys/fs/cgroup on a unified hierarchy)", cgroup,
			 strerror(-ret));
		return ret;
	}
	return 0;
}

static int batch_supported(struct oc_collector *c);

/* The stacks' depth and callchain = dwarf's copy size, within what the
 * BPF program is built for. */
static void clamp_sizes(struct oc_collector *c, const struct oc_config *cfg)
{
	c->depth = cfg->stack_depth ? cfg->stack_depth : OFFCPU_MAX_DEPTH;
	if (c->depth > OFFCPU_MAX_DEPTH)
		c->depth = OFFCPU_MAX_DEPTH;
	c->stack_bytes = (cfg->dwarf_stack_bytes + 7) & ~7u;
	if (c->stack_bytes > OFFCPU_MAX_STACK_BYTES)
		c->stack_bytes = OFFCPU_MAX_STACK_BYTES;
	c->cfi = cfg->cfi && !c->stack_bytes && cfg->cfi_rows && cfg->cfi_processes;
	c->oncpu_hz = cfg->oncpu_hz;
	c->samples_bytes = c->oncpu_hz && cfg->oncpu_script ? samples_ring_bytes(c) : 0;
}

/* The BPF object opened, its hook chosen, its maps sized and loaded. */
static int load_skeleton(struct oc_collector *c, const struct oc_config *cfg, char *why,
			 size_t why_len)
{
	int ret;

	c->skel = offcpu_bpf__open();
	if (!c->skel) {
		ret = -errno;
		snprintf(why, why_len, "cannot open the BPF object: %s", strerror(-ret));
		return ret;
	}
	ret = choose_hook(c, cfg);
	if (!ret)
		ret = size_maps(c, cfg);
	if (ret < 0) {
		snprintf(why, why_len, "cannot size the BPF maps: %s", strerror(-ret));
		return ret;
	}
	set_tunables(c, cfg);
	ret = offcpu_bpf__load(c->skel);
	if (ret < 0) {
		char reason[512];

		why_load_failed(ret, reason, sizeof(reason));
		snprintf(why, why_len, "cannot load the BPF program (%s hook): %s",
			 c->hook == OC_HOOK_BTF ? "tp_btf" : "raw_tp", reason);
		return ret;
	}
	return 0;
}

int oc_open(const struct oc_config *cfg, struct oc_collector **out, char *why, size_t why_len)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	struct oc_collector *c;
	int ret;

	*out = NULL;
	ret = check_can_load(why, why_len);
	if (ret < 0)
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	c->cgroup_fd = -1;
	c->ncpus = libbpf_num_possible_cpus();
	if (c->ncpus <= 0) {
		ret = c->ncpus ? c->ncpus : -EINVAL;
		snprintf(why, why_len, "cannot count the possible CPUs: %s", strerror(-ret));
		goto fail;
	}
	clamp_sizes(c, cfg);
	/* Kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK; later ones
	 * to the memory cgroup, where this is harmless.  Failure is only
	 * fatal if the maps then cannot be created (reported below). */
	(void)setrlimit(RLIMIT_MEMLOCK, &rl);

	ret = load_skeleton(c, cfg, why, why_len);
	if (ret < 0)
		goto fail;
	c->skel->bss->filter_tgids = cfg->filter_tgids != 0;
	c->no_batch = !batch_supported(c);
	if (cfg->cgroup && (ret = filter_cgroup(c, cfg->cgroup, why, why_len)) < 0)
		goto fail;
	*out = c;
	return 0;

fail:
	oc_close(c);
	return ret;
}

const char *oc_hook_name(const struct oc_collector *c)
{
	return c->hook == OC_HOOK_BTF ? "tp_btf/sched_switch" : "raw_tp/sched_switch";
}

uint32_t oc_stack_depth(const struct oc_collector *c)
{
	return c->depth;
}

int oc_add_tgid(struct oc_collector *c, uint32_t tgid)
{
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.tgids), &tgid, &one, BPF_ANY) < 0)
		return -errno;
	return 0;
}

void oc_filter_tgids(struct oc_collector *c, int on)
{
	c->skel->bss->filter_tgids = on != 0;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct oc_collector *c = ctx;
	const struct offcpu_event *ev = data;
	const struct offcpu_ustack *u = data;

	if (size < sizeof(*ev))
		return 0;
	if (ev->kind != OFFCPU_EV_USTACK) {
		if (c->cb)
			c->cb(c->cb_arg, ev);
		return 0;
	}
	/* The ring's records are padded to 8 bytes: size is what was sent
	 * or a little more, never less. */
	if (size >= sizeof(*u) && u->size <= size - sizeof(*u) && c->ustack_cb)
		c->ustack_cb(c->ustack_arg, u);
	return 0;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct oc_collector *c = ctx;

	if (size >= sizeof(struct offcpu_sample) && c->sample_cb)
		c->sample_cb(c->sample_arg, data);
	return 0;
}

void oc_on_sample(struct oc_collector *c, oc_sample_fn fn, void *arg)
{
	c->sample_cb = fn;
	c->sample_arg = arg;
}

void oc_on_ustack(struct oc_collector *c, oc_ustack_fn fn, void *arg)
{
	c->ustack_cb = fn;
	c->ustack_arg = arg;
}

uint32_t oc_stack_bytes(const struct oc_collector *c)
{
	return c->stack_bytes;
}

int oc_cfi_rows_fd(const struct oc_collector *c)
{
	return c->cfi ? bpf_map__fd(c->skel->maps.cfi_rows) : -1;
}

int oc_cfi_procs_fd(const struct oc_collector *c)
{
	return c->cfi ? bpf_map__fd(c->skel->maps.cfi_procs) : -1;
}

static void detach_oncpu(struct oc_collector *c)
{
	for (int i = 0; i < c->n_oncpu; i++) {
		bpf_link__destroy(c->oncpu_links[i]);
		if (c->oncpu_fds[i] >= 0)
			close(c->oncpu_fds[i]);
	}
	free(c->oncpu_links);
	free(c->oncpu_fds);
	c->oncpu_links = NULL;
	c->oncpu_fds = NULL;
	c->n_oncpu = 0;
}

/* A cpu-clock event on `cpu` sampling every thread there oncpu_hz times a
 * second, its samples handed to oncpu_sample; the event's own ring is
 * never mapped, the program is all it feeds. */
static int attach_cpu(struct oc_collector *c, int cpu, int *fd, struct bpf_link **link)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = c->oncpu_hz,
	};

	*fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (*fd < 0)
		return -errno;
	*link = bpf_program__attach_perf_event(c->skel->progs.oncpu_sample, *fd);
	if (!*link)
		return -errno;
	return 0;
}

static int attach_oncpu(struct oc_collector *c, char *why, size_t why_len)
{
	int *cpus = NULL, ret;
	size_t n = 0;

	ret = tr_online_cpus(&cpus, &n);
	if (ret < 0) {
		snprintf(why, why_len, "oncpu: cannot list the online CPUs: %s", strerror(-ret));
		return ret;
	}
	c->oncpu_fds = malloc(n * sizeof(*c->oncpu_fds));
	c->oncpu_links = calloc(n, sizeof(*c->oncpu_links));
	if (!c->oncpu_fds || !c->oncpu_links) {
		free(cpus);
		snprintf(why, why_len, "oncpu: out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		c->oncpu_fds[i] = -1;
		c->n_oncpu = (int)i + 1;
		ret = attach_cpu(c, cpus[i], &c->oncpu_fds[i], &c->oncpu_links[i]);
		if (ret < 0) {
			snprintf(why, why_len,
				 "oncpu: cannot sample CPU %d at %u Hz (cpu-clock): %s", cpus[i],
				 c->oncpu_hz, strerror(-ret));
			break;
		}
	}
	free(cpus);
	return ret;
}

int oc_attach(struct oc_collector *c, char *why, size_t why_len)
{
	int ret;

	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), on_event, c, NULL);
	if (!c->rb) {
		ret = -errno;
		snprintf(why, why_len, "cannot map the BPF ring buffer: %s", strerror(-ret));
		return ret;
	}
	if (c->samples_bytes &&
	    ring_buffer__add(c->rb, bpf_map__fd(c->skel->maps.samples), on_sample, c) < 0) {
		ret = -errno;
		snprintf(why, why_len, "cannot map the samples' BPF ring buffer: %s",
			 strerror(-ret));
		return ret;
	}
	ret = offcpu_bpf__attach(c->skel);
	if (ret < 0) {
		snprintf(why, why_len, "cannot attach to %s: %s%s", oc_hook_name(c), strerror(-ret),
			 c->hook == OC_HOOK_BTF ? " (try hook = raw_tp)" : "");
		return ret;
	}
	if (c->oncpu_hz && (ret = attach_oncpu(c, why, why_len)) < 0) {
		oc_detach(c);
		return ret;
	}
	return 0;
}

void oc_detach(struct oc_collector *c)
{
	if (!c)
		return;
	detach_oncpu(c);
	if (c->skel)
		offcpu_bpf__detach(c->skel);
}

int oc_poll(struct oc_collector *c, int timeout_ms, int wake_fd, oc_event_fn cb, void *arg)
{
	struct pollfd pfd[2] = { { .fd = c->rb ? ring_buffer__epoll_fd(c->rb) : -1, .events = POLLIN },
				 { .fd = wake_fd, .events = POLLIN } };
	int ret;

	if (!c->rb)
		return -EINVAL;
	ret = poll(pfd, wake_fd >= 0 ? 2 : 1, timeout_ms);
	if (ret < 0 && errno != EINTR)
		return -errno;
	/* Whatever is there, woken or not: records sent without a wakeup
	 * (callchain = dwarf's copies) do not end the poll. */
	c->cb = cb;
	c->cb_arg = arg;
	ret = ring_buffer__consume(c->rb);
	c->cb = NULL;
	return ret == -EINTR ? 0 : ret;
}

void oc_counters(struct oc_collector *c, uint64_t out[OFFCPU_CNT__MAX])
{
	uint64_t *percpu = calloc((size_t)c->ncpus, sizeof(*percpu));
	int fd = bpf_map__fd(c->skel->maps.counters);

	memset(out, 0, OFFCPU_CNT__MAX * sizeof(*out));
	if (!percpu)
		return;
	for (__u32 i = 0; i < OFFCPU_CNT__MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, percpu) < 0)
			continue;
		for (int cpu = 0; cpu < c->ncpus; cpu++)
			out[i] += percpu[cpu];
	}
	free(percpu);
}

/* The map key by key: two system calls an entry. */
static int read_walk(int fd, struct oc_entry **out, size_t *n)
{
	struct offcpu_key key, next;
	struct oc_entry *v = NULL;
	size_t len = 0, cap = 0;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct oc_entry *grown = tr_vec_grow(v, &cap, len + 1, sizeof(*v), 256);

		if (!grown) {
			free(v);
			return -ENOMEM;
		}
		v = grown;
		v[len].key = next;
		if (bpf_map_lookup_elem(fd, &next, &v[len].val) == 0)
			len++;
		key = next;
		prev = &key;
	}
	*out = v;
	*n = len;
	return 0;
}

#define BATCH 4096

/* The map BATCH entries a system call (BPF_MAP_LOOKUP_BATCH, Linux 5.6):
 * about five times faster than the walk, which matters to flight mode's
 * reading at every bucket.  -EOPNOTSUPP when the kernel cannot. */
static int read_batch(int fd, struct oc_entry **out, size_t *n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct offcpu_key *keys = malloc(BATCH * sizeof(*keys));
	struct offcpu_val *vals = malloc(BATCH * sizeof(*vals));
	struct oc_entry *v = NULL;
	size_t len = 0, cap = 0;
	__u64 batch = 0;
	int ret = 0, first = 1;

	while (keys && vals) {
		__u32 count = BATCH;
		struct oc_entry *grown;

		ret = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch, keys, vals, &count,
					   &opts);
		if (ret < 0 && (ret = -errno) != -ENOENT && !(count && ret == -ENOSPC)) {
			if (first && ret != -ENOMEM)
				ret = -EOPNOTSUPP;
			break;
		}
		first = 0;
		grown = count ? tr_vec_grow(v, &cap, len + count, sizeof(*v), BATCH) : v;
		if (count && !grown) {
			ret = -ENOMEM;
			break;
		}
		v = grown;
		for (__u32 i = 0; i < count; i++) {
			v[len + i].key = keys[i];
			v[len + i].val = vals[i];
		}
		len += count;
		if (ret == -ENOENT) { /* the end */
			ret = 0;
			break;
		}
	}
	if (!keys || !vals)
		ret = -ENOMEM;
	free(keys);
	free(vals);
	if (ret < 0) {
		free(v);
		return ret;
	}
	*out = v;
	*n = len;
	return 0;
}

int oc_read(struct oc_collector *c, struct oc_entry **out, size_t *n)
{
	int fd = bpf_map__fd(c->skel->maps.agg);

	*out = NULL;
	*n = 0;
	return c->no_batch ? read_walk(fd, out, n) : read_batch(fd, out, n);
}

int oc_read_oncpu(struct oc_collector *c, struct oc_entry **out, size_t *n)
{
	int fd = bpf_map__fd(c->skel->maps.oncpu_agg);

	*out = NULL;
	*n = 0;
	if (!c->oncpu_hz)
		return 0;
	return c->no_batch ? read_walk(fd, out, n) : read_batch(fd, out, n);
}

/* Whether the kernel reads the aggregation in batches: asked of the map
 * while it is still empty. */
static int batch_supported(struct oc_collector *c)
{
	struct oc_entry *v = NULL;
	size_t n = 0;
	int ret = read_batch(bpf_map__fd(c->skel->maps.agg), &v, &n);

	free(v);
	return ret != -EOPNOTSUPP;
}

size_t oc_stack(struct oc_collector *c, uint64_t id, uint64_t *ips, size_t max)
{
	struct offcpu_stack stack;
	__u64 key = id;
	size_t n;

	if (id < OFFCPU_STACK_FIRST_ID)
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.stacks), &key, &stack) < 0)
		return 0;
	for (n = 0; n < stack.nr && n < c->depth && n < max; n++)
		ips[n] = stack.ips[n];
	return n;
}

void oc_close(struct oc_collector *c)
{
	if (!c)
		return;
	detach_oncpu(c);
	ring_buffer__free(c->rb);
	offcpu_bpf__destroy(c->skel);
	if (c->cgroup_fd >= 0)
		close(c->cgroup_fd);
	free(c);
}
