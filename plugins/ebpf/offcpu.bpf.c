// SPDX-License-Identifier: GPL-2.0
/* Off-CPU time, aggregated in the kernel.
 *
 * At every context switch the thread leaving the CPU (prev, which is still
 * `current`) gets a timestamp and, unless the sampler skips it, its kernel
 * and user stack ids; when that thread is switched back in, the interval is
 * measured and added to the (tgid, tid, kernel stack, user stack) entry of
 * the aggregation map.  User space reads that small map once, at flush.
 *
 * Stacks are stored under a 64-bit hash of their content rather than in a
 * BPF_MAP_TYPE_STACK_TRACE: that map keeps one stack per bucket and refuses
 * (or, with BPF_F_REUSE_STACKID, overwrites) a second stack hashing to the
 * same bucket, so with a few hundred distinct stacks some were lost in most
 * runs, and system-wide most of them.  A content hash loses a stack only
 * when the table is full (counted); two stacks sharing a 64-bit hash is
 * n^2/2^65 unlikely.
 *
 * Stacks must be taken at switch-out: the user stack of a task that is not
 * `current` cannot be walked.  Hence the sampler decides at switch-out with
 * a probability q predicted from the thread's recent blocked times, and the
 * recorded interval is weighted by 1/q (Horvitz-Thompson), which keeps the
 * expected total equal to the real blocked time.
 *
 * callchain = dwarf (dwarf_stack_bytes > 0): code built without frame
 * pointers cannot be walked here, so at switch-out a captured user thread's
 * registers and the top of its user stack are copied into a slot keyed by
 * thread id (ucopies); at switch-in a kept interval goes out through the
 * events ring with that copy, to be unwound by the objects' CFI in user
 * space (lib/unwind.c) and aggregated there, and the slot is freed.  Only
 * captured intervals pay for the copy: the sampler (sample_period_ns)
 * bounds the cost on busy machines.  An interval whose copy finds no slot
 * or no room in the ring is still counted, in the kernel's aggregation,
 * with its user stack lost (and counted).
 *
 * Two entry points for the same logic: tp_btf/sched_switch (typed
 * arguments, per-task storage) where the kernel has it, raw_tp otherwise
 * (hash map keyed by thread id).  User space disables the one not used.
 *
 * oncpu_sample, a cpu-clock perf_event program, adds on-CPU samples with
 * the same stacks into a map of their own (oncpu_agg): user stacks of code
 * without frame pointers walked whole by callchain = cfi's tables, no
 * stack copy leaving the kernel.  Not loaded unless asked for. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "offcpu.h"

#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000
#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_NOLOAD 0x0400
#define EFAULT 14
#define EEXIST 17

/* Set through the skeleton before load. */
const volatile bool filter_cgroup = false;
const volatile __u32 threads = OFFCPU_THREADS_ALL;
const volatile __u32 state_mask = OFFCPU_STATE_ALL;
const volatile __u64 min_block_ns = 1;
const volatile __u64 max_block_ns = ~0ull;
const volatile __u64 sample_period_ns = 0; /* 0: every interval */
const volatile __u32 stack_depth = OFFCPU_MAX_DEPTH; /* frames kept per stack */
const volatile __u32 dwarf_stack_bytes = 0; /* callchain = dwarf: stack copied; 0: fp */
const volatile __u64 events_bytes = 64 * 1024; /* the events ring's size */
const volatile bool cfi = false;               /* callchain = cfi: walk user stacks by the tables */
const volatile __u64 samples_bytes = 0;        /* oncpu: the samples ring's size; 0: no script */

/* Set after load, before attach: whether processes are selected is only
 * known once the launched command exists. */
volatile bool filter_tgids = false;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_start);
} task_start SEC(".maps");

/* raw_tp fallback: per-thread state by tid (sized by user space). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} tid_start SEC(".maps");

/* Stack id (content hash) -> stack.  Sizes without BTF types: user space
 * cuts value_size to the profile's depth and sets max_entries. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(struct offcpu_stack));
	__uint(max_entries, 16384);
} stacks SEC(".maps");

/* Where a stack is taken and hashed before it is stored: too big for the
 * BPF stack.  sched_switch does not nest on a CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_stack);
} stack_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct offcpu_key);
	__type(value, struct offcpu_val);
} agg SEC(".maps");

/* The on-CPU samples (oncpu_sample), keyed as agg: count is samples,
 * weighted_ns = real_ns their periods.  Sized by user space; tiny when
 * the sampler is off. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct offcpu_key);
	__type(value, struct offcpu_val);
} oncpu_agg SEC(".maps");

/* Traced processes when filtering by process; followed across fork. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OFFCPU_CNT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Processes already announced to user space. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} seen SEC(".maps");

/* New processes, execs and (callchain = dwarf) kept intervals with their
 * stack copies, in one ring so that user space learns of a process before
 * it unwinds the process's stacks.  Sized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} events SEC(".maps");

/* oncpu with a script: every sample (struct offcpu_sample), for
 * perf.data.txt.  Sized by user space; one page when unused. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} samples SEC(".maps");

/* callchain = dwarf: a thread's copy between switch-out and switch-in
 * (value: struct offcpu_ustack and dwarf_stack_bytes of data; user space
 * sets the size).  Not preallocated: only threads off-CPU right now hold
 * one, a few out of max_entries. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct offcpu_ustack) + 8);
	__uint(max_entries, 32768);
} ucopies SEC(".maps");

/* Where a copy is taken before it goes into ucopies: too big for the BPF
 * stack.  Same value size as ucopies. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct offcpu_ustack) + 8);
	__uint(max_entries, 1);
} ucopy_scratch SEC(".maps");

/* callchain = cfi: every loaded object's rows, and per process its
 * executable mappings (offcpu.h).  Sized by user space; tiny otherwise. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_cfi_row);
} cfi_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_cfi_proc);
} cfi_procs SEC(".maps");

/* callchain = cfi: the rules last found per (entry version, address),
 * per CPU and direct-mapped, so that a stack walked again (a thread that
 * blocks in the same place, a hot loop sampled) skips both binary
 * searches.  A copy of the row, not a pointer: valid for the entry
 * version (gen) it was found with, whatever happens to the rows later.
 * Walks do not nest on a CPU (sched_switch runs with interrupts off). */
struct cfi_cached {
	__u64 look;
	__u32 gen; /* 0: empty */
	__s32 cfa_offset;
	__s16 rbp_offset;
	__u8 kind;
	__u8 pad[5];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OFFCPU_CFI_CACHE);
	__type(key, __u32);
	__type(value, struct cfi_cached);
} cfi_cache SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		*c += 1; /* per-CPU: no atomics needed */
}

/* Kernels before 5.14 call the field `state`. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 state_class(struct task_struct *t)
{
	unsigned int s;

	if (bpf_core_field_exists(t->__state)) {
		s = BPF_CORE_READ(t, __state);
	} else {
		struct task_struct___pre514 *old = (void *)t;

		s = BPF_CORE_READ(old, state);
	}
	if (s == 0)
		return OFFCPU_STATE_PREEMPTED;
	if ((s & 0xff) == TASK_INTERRUPTIBLE)
		return OFFCPU_STATE_INTERRUPTIBLE;
	if ((s & 0xff) == TASK_UNINTERRUPTIBLE)
		return (s & TASK_NOLOAD) ? OFFCPU_STATE_IDLE : OFFCPU_STATE_UNINTERRUPTIBLE;
	return OFFCPU_STATE_OTHER;
}

/* Is `task` (current) one of the profile's processes and threads?
 * Cheapest tests first. */
static __always_inline bool selected(struct task_struct *task, __u32 tgid, __u32 pid)
{
	if (pid == 0) /* the idle task: its "off-CPU" time is the CPU being busy */
		return false;
	if (filter_tgids && !bpf_map_lookup_elem(&tgids, &tgid))
		return false;
	if (threads != OFFCPU_THREADS_ALL) {
		bool kthread = BPF_CORE_READ(task, flags) & PF_KTHREAD;

		if (kthread != (threads == OFFCPU_THREADS_KERNEL))
			return false;
	}
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup, 0) != 1)
		return false;
	return true;
}

/* Should the thread leaving the CPU (current) be traced? */
static __always_inline bool traced(struct task_struct *prev, __u32 tgid, __u32 pid)
{
	if (!selected(prev, tgid, pid))
		return false;
	return state_mask == OFFCPU_STATE_ALL || (state_class(prev) & state_mask);
}

/* murmur3's 64-bit finalizer: every input bit reaches every output bit. */
static __always_inline __u64 mix64(__u64 k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

static __always_inline int announce(__u32 tgid, __u32 kind)
{
	struct offcpu_event ev = { .tgid = tgid, .kind = kind };

	if (bpf_ringbuf_output(&events, &ev, sizeof(ev), 0) < 0) {
		count(OFFCPU_CNT_EVENTS_LOST);
		return -1;
	}
	return 0;
}

/* Stores the `nr` frames in scratch `s` once per distinct content; returns
 * its id, or OFFCPU_STACK_LOST (counted) when the table is full. */
static __always_inline __u64 keep_stack(struct offcpu_stack *s, __u32 nr, __u32 lost_counter)
{
	__u64 id;
	__u32 i;
	long err;

	s->nr = nr;
	id = mix64(nr);
	for (i = 0; i < OFFCPU_MAX_DEPTH; i++) {
		if (i >= nr)
			break;
		id = mix64(id ^ s->ips[i]);
	}
	if (id < OFFCPU_STACK_FIRST_ID)
		id += OFFCPU_STACK_FIRST_ID;
	if (bpf_map_lookup_elem(&stacks, &id))
		return id;
	err = bpf_map_update_elem(&stacks, &id, s, BPF_NOEXIST);
	/* -EEXIST: another CPU stored the same stack meanwhile. */
	if (err < 0 && err != -EEXIST) {
		count(lost_counter);
		return OFFCPU_STACK_LOST;
	}
	return id;
}

/* The current task's kernel or user stack (flags), stored once per distinct
 * content; returns its id or OFFCPU_STACK_NONE / OFFCPU_STACK_LOST. */
static __always_inline __u64 store_stack(void *ctx, __u64 flags, __u32 lost_counter)
{
	__u32 zero = 0, depth = stack_depth;
	struct offcpu_stack *s;
	long len;

	s = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!s)
		return OFFCPU_STACK_LOST;
	if (depth > OFFCPU_MAX_DEPTH || depth == 0)
		depth = OFFCPU_MAX_DEPTH;
	len = bpf_get_stack(ctx, s->ips, depth * sizeof(__u64), flags);
	/* -EFAULT or nothing: no such stack (a kernel thread's user stack). */
	if (len == 0 || len == -EFAULT)
		return OFFCPU_STACK_NONE;
	if (len < 0) {
		count(lost_counter);
		return OFFCPU_STACK_LOST;
	}
	return keep_stack(s, len / sizeof(__u64), lost_counter);
}

/* callchain = cfi: what a walk carries from frame to frame (bpf_loop's
 * callback gets it by pointer). */
struct cfi_walk {
	__u64 pc, sp, bp;
	struct offcpu_stack *s;
	struct offcpu_cfi_proc *proc;
	__u32 tgid;
	__u32 n;     /* frames in s->ips */
	__u32 depth; /* frames wanted */
	__u32 gen;   /* proc's version, read once */
};

/* A binary search for the last entry at or below `key` among [lo, hi),
 * one bpf_loop step at a time: unrolled, its branches would multiply the
 * verifier's paths by two per step. */
struct cfi_search {
	__u64 key;
	__u32 lo, hi; /* lo ends as the first entry above key */
	struct offcpu_cfi_proc *proc;
};

static long mapping_step(__u32 i, void *arg)
{
	struct cfi_search *q = arg;
	__u32 mid;

	if (q->lo >= q->hi || !q->proc)
		return 1;
	mid = (q->lo + q->hi) / 2;
	if (q->proc->m[mid & (OFFCPU_CFI_MAX_MAPPINGS - 1)].start <= q->key)
		q->lo = mid + 1;
	else
		q->hi = mid;
	return 0;
}

static long row_step(__u32 i, void *arg)
{
	struct cfi_search *q = arg;
	struct offcpu_cfi_row *row;
	__u32 mid;

	if (q->lo >= q->hi)
		return 1;
	mid = q->lo + (q->hi - q->lo) / 2;
	row = bpf_map_lookup_elem(&cfi_rows, &mid);
	if (!row)
		return 1;
	if (row->pc <= q->key)
		q->lo = mid + 1;
	else
		q->hi = mid;
	return 0;
}

/* The mapping of `proc` holding `addr`, or NULL. */
static __always_inline struct offcpu_cfi_mapping *cfi_mapping(struct offcpu_cfi_proc *proc,
							      __u64 addr)
{
	struct cfi_search q = { .key = addr, .hi = proc->n, .proc = proc };
	__u32 k;

	if (q.hi > OFFCPU_CFI_MAX_MAPPINGS)
		q.hi = OFFCPU_CFI_MAX_MAPPINGS;
	bpf_loop(10, mapping_step, &q, 0);
	if (q.lo == 0)
		return NULL;
	k = (q.lo - 1) & (OFFCPU_CFI_MAX_MAPPINGS - 1);
	return addr < proc->m[k].end ? &proc->m[k] : NULL;
}

/* The row of `m`'s object whose range holds ELF address `rel`, or NULL. */
static __always_inline struct offcpu_cfi_row *cfi_row(struct offcpu_cfi_mapping *m, __u64 rel)
{
	struct cfi_search q = { .key = rel, .lo = m->row_start, .hi = m->row_start + m->row_count };

	bpf_loop(OFFCPU_CFI_ROW_SEARCH, row_step, &q, 0);
	if (q.lo == m->row_start)
		return NULL;
	q.lo--;
	return bpf_map_lookup_elem(&cfi_rows, &q.lo);
}

static __always_inline int read_word(__u64 addr, __u64 *value)
{
	if (bpf_probe_read_user(value, sizeof(*value), (const void *)addr) == 0)
		return 0;
	count(OFFCPU_CNT_CFI_READ_FAILED);
	return -1;
}

/* The rules for `look` into *r (kind 0: none, by frame pointers): from
 * the cache, else by the two binary searches, then cached.  -1: no
 * mapping holds it. */
static __always_inline int cfi_rules(struct cfi_walk *w, __u64 look, struct cfi_cached *r)
{
	__u32 slot = (__u32)((look ^ (look >> 17) ^ ((__u64)w->gen * 0x9e3779b1u)) &
			     (OFFCPU_CFI_CACHE - 1));
	struct cfi_cached *c = bpf_map_lookup_elem(&cfi_cache, &slot);
	struct offcpu_cfi_mapping *m;
	struct offcpu_cfi_row *row = NULL;

	if (c && w->gen && c->gen == w->gen && c->look == look) {
		*r = *c;
		return 0;
	}
	m = cfi_mapping(w->proc, look);
	if (!m)
		return -1;
	if (m->row_count)
		row = cfi_row(m, look - m->bias);
	r->look = look;
	r->gen = w->gen;
	r->kind = row ? row->kind : 0;
	r->cfa_offset = row ? row->cfa_offset : 0;
	r->rbp_offset = row ? row->rbp_offset : 0;
	if (c)
		*c = *r;
	return 0;
}

/* One frame: records the PC, then finds the caller's registers by the
 * row of the PC (lib/cfi.c's tr_cfi_step, which the tests compare with)
 * or, where no row says, by frame pointers.  1 stops the walk. */
static long cfi_frame(__u32 i, void *arg)
{
	struct cfi_walk *w = arg;
	struct cfi_cached r = {};
	__u64 look, cfa, ra, bp = w->bp;
	__u32 n = w->n;
	__u8 kind;

	if (n >= OFFCPU_MAX_DEPTH || n >= w->depth || !w->s || !w->proc)
		return 1;
	w->s->ips[n] = w->pc;
	w->n = n + 1;
	/* A return address is the instruction after the call: the call's
	 * rules are those of the byte before. */
	look = i ? w->pc - 1 : w->pc;
	if (cfi_rules(w, look, &r) < 0) {
		/* Code mapped after the tables were loaded: cut short, never
		 * guessed; user space is asked once to read the maps again. */
		count(OFFCPU_CNT_CFI_CUT_SHORT);
		if (!w->proc->stale) {
			w->proc->stale = 1;
			announce(w->tgid, OFFCPU_EV_CFI_STALE);
		}
		return 1;
	}
	kind = r.kind;
	if (kind == 4) /* a signal frame */
		return 1;
	if (kind == 1 || kind == 2) {
		cfa = (kind == 1 ? w->sp : w->bp) + (__s64)r.cfa_offset;
		if (read_word(cfa - 8, &ra) < 0)
			return 1;
		if (r.rbp_offset && read_word(cfa + (__s64)r.rbp_offset, &bp) < 0)
			return 1;
	} else {
		/* JIT code, an object without CFI, rules a row cannot hold:
		 * [saved RBP, return address] at RBP.  RBP 0 is the end. */
		if (!w->bp || read_word(w->bp + 8, &ra) < 0 || read_word(w->bp, &bp) < 0)
			return 1;
		cfa = w->bp + 16;
		if (ra)
			count(OFFCPU_CNT_CFI_FP_FRAMES);
	}
	if (!ra || cfa <= w->sp)
		return 1;
	w->pc = ra;
	w->sp = cfa;
	w->bp = bp;
	return 0;
}

/* callchain = cfi: the current thread's user stack walked here, by the
 * tables user space compiled from its objects' CFI. */
static __always_inline __u64 walk_user_stack(__u32 tgid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct cfi_walk w = { .tgid = tgid };
	struct pt_regs *regs, r;
	__u32 zero = 0;
	__u8 one = 1;

	if (task->flags & PF_KTHREAD)
		return OFFCPU_STACK_NONE;
	w.s = bpf_map_lookup_elem(&stack_scratch, &zero);
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!w.s || bpf_probe_read_kernel(&r, sizeof(r), regs) < 0)
		return OFFCPU_STACK_LOST;
	w.pc = r.ip;
	w.sp = r.sp;
	w.bp = r.bp;
	w.depth = stack_depth;
	count(OFFCPU_CNT_CFI_WALKS);
	w.proc = bpf_map_lookup_elem(&cfi_procs, &tgid);
	if (!w.proc) {
		/* Not loaded yet: the innermost frame only, and user space
		 * told of the process if it was not yet. */
		count(OFFCPU_CNT_CFI_NO_TABLE);
		w.s->ips[0] = w.pc;
		if (bpf_map_update_elem(&seen, &tgid, &one, BPF_NOEXIST) == 0 &&
		    announce(tgid, OFFCPU_EV_NEW_PROCESS) < 0)
			bpf_map_delete_elem(&seen, &tgid);
		return keep_stack(w.s, 1, OFFCPU_CNT_USTACK_DROPPED);
	}
	w.gen = w.proc->gen;
	bpf_loop(OFFCPU_MAX_DEPTH, cfi_frame, &w, 0);
	if (!w.n)
		return OFFCPU_STACK_NONE;
	return keep_stack(w.s, w.n, OFFCPU_CNT_USTACK_DROPPED);
}

/* callchain = dwarf: the current thread's user registers and the top of
 * its user stack into its ucopies slot.  Returns the user stack id to
 * record when there is no copy to unwind: none for a kernel thread, lost
 * when no slot was free. */
static __always_inline __u64 copy_user_stack(struct offcpu_start *st)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct offcpu_ustack *u;
	struct pt_regs *regs, r;
	__u32 zero = 0, tid = st->pid, i;
	/* 64 bits: a 32-bit copy would be bounded apart from the one the
	 * helper gets, which the verifier then refuses. */
	__u64 sp, size = dwarf_stack_bytes;

	/* A dying thread's last switch has no switch-in to free the slot. */
	if (task->flags & (PF_KTHREAD | PF_EXITING))
		return OFFCPU_STACK_NONE;
	u = bpf_map_lookup_elem(&ucopy_scratch, &zero);
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	/* The registers as the thread entered the kernel: its user state. */
	if (!u || bpf_probe_read_kernel(&r, sizeof(r), regs) < 0)
		return OFFCPU_STACK_LOST;
	u->regs[0] = r.ax;
	u->regs[1] = r.dx;
	u->regs[2] = r.cx;
	u->regs[3] = r.bx;
	u->regs[4] = r.si;
	u->regs[5] = r.di;
	u->regs[6] = r.bp;
	u->regs[7] = r.sp;
	u->regs[8] = r.r8;
	u->regs[9] = r.r9;
	u->regs[10] = r.r10;
	u->regs[11] = r.r11;
	u->regs[12] = r.r12;
	u->regs[13] = r.r13;
	u->regs[14] = r.r14;
	u->regs[15] = r.r15;
	u->regs[16] = r.ip;
	sp = r.sp;
	/* The copy may not go past the end of the stack's mapping, which
	 * ends at a page boundary: on a fault, retry up to each page
	 * boundary below (a page fault cannot be taken here, and the pages
	 * a stack used are present). */
	if (size > OFFCPU_MAX_STACK_BYTES)
		size = OFFCPU_MAX_STACK_BYTES;
	for (i = 0; i < OFFCPU_MAX_STACK_BYTES / 4096 + 1; i++) {
		if (size == 0 || size > OFFCPU_MAX_STACK_BYTES || size > dwarf_stack_bytes)
			break;
		if (bpf_probe_read_user(u->data, size, (const void *)sp) == 0)
			break;
		/* The page boundary below sp + size, then a page lower each time. */
		if (((sp + size) & 4095) != 0)
			size = ((sp + size) & ~4095ull) - sp;
		else
			size = size > 4096 ? size - 4096 : 0;
	}
	if (i == OFFCPU_MAX_STACK_BYTES / 4096 + 1 || size > dwarf_stack_bytes)
		size = 0;
	u->size = size;
	if (bpf_map_update_elem(&ucopies, &tid, u, BPF_ANY) < 0) {
		count(OFFCPU_CNT_UCOPY_SLOT_FULL);
		return OFFCPU_STACK_LOST;
	}
	st->ucopy = 1;
	return OFFCPU_STACK_NONE;
}

static __always_inline void switch_out(void *ctx, __u64 pid_tgid, struct offcpu_start *st,
				       __u64 now)
{
	__u32 q = OFFCPU_Q_ONE;

	/* The thread came back on a CPU without a sched_switch into it: the
	 * task it took the CPU from is one the kernel does not trace (some
	 * kernels hide their own agents: no tracer sees those tasks'
	 * sched_switch, ftrace's event included).  The interval that started
	 * at start_ns has no known end: counted, not guessed. */
	if (st->start_ns) {
		count(OFFCPU_CNT_RETURN_UNSEEN);
		if (st->ucopy) {
			__u32 tid = (__u32)pid_tgid;

			bpf_map_delete_elem(&ucopies, &tid);
		}
	}
	st->start_ns = now;
	st->tgid = pid_tgid >> 32;
	st->pid = (__u32)pid_tgid;
	if (sample_period_ns) {
		/* q = recent blocked time / period, at most 1; a new thread
		 * starts at ewma = period, i.e. is always captured first. */
		if (!st->ewma_ns)
			st->ewma_ns = sample_period_ns;
		if (st->ewma_ns < sample_period_ns) {
			q = (__u32)((st->ewma_ns << OFFCPU_Q_SHIFT) / sample_period_ns);
			if (q == 0)
				q = 1;
		}
	}
	st->q = q;
	st->ucopy = 0;
	st->captured = q >= OFFCPU_Q_ONE || (bpf_get_prandom_u32() & (OFFCPU_Q_ONE - 1)) < q;
	if (!st->captured)
		return;
	st->kstack = store_stack(ctx, 0, OFFCPU_CNT_KSTACK_DROPPED);
	if (dwarf_stack_bytes) {
		st->ustack = copy_user_stack(st);
		return;
	}
	if (cfi) {
		st->ustack = walk_user_stack(st->tgid);
		return;
	}
	/* A kernel thread has no user stack: found without a walk. */
	st->ustack = store_stack(ctx, BPF_F_USER_STACK, OFFCPU_CNT_USTACK_DROPPED);
}

/* callchain = dwarf: sends the kept interval with its stack copy.  0, or
 * -1 when it could not (then its user stack counts as lost). */
static __always_inline int send_ustack(struct task_struct *next, struct offcpu_start *st,
				       __u64 delta, __u64 weight)
{
	__u32 tid = st->pid, size;
	struct offcpu_ustack *u = bpf_map_lookup_elem(&ucopies, &tid);
	__u64 wake;
	__u8 one = 1;

	if (!u)
		return -1;
	u->tgid = st->tgid;
	u->kind = OFFCPU_EV_USTACK;
	u->pid = st->pid;
	u->kstack = st->kstack;
	u->weighted_ns = weight;
	u->real_ns = delta;
	BPF_CORE_READ_STR_INTO(&u->comm, next, group_leader, comm);
	BPF_CORE_READ_STR_INTO(&u->tcomm, next, comm);
	/* Announced first, in the same ring: user space remembers the
	 * process's mappings before it unwinds this stack. */
	if (bpf_map_update_elem(&seen, &u->tgid, &one, BPF_NOEXIST) == 0 &&
	    announce(u->tgid, OFFCPU_EV_NEW_PROCESS) < 0)
		bpf_map_delete_elem(&seen, &u->tgid); /* the next interval tries again */
	size = u->size;
	if (size > dwarf_stack_bytes)
		size = dwarf_stack_bytes;
	if (size > OFFCPU_MAX_STACK_BYTES)
		size = OFFCPU_MAX_STACK_BYTES;
	/* Waking the reader at every copy would cost a wakeup (and a context
	 * switch of our own, traced too) per interval: it is woken once an
	 * eighth of the ring is used, and polls often enough otherwise. */
	wake = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= events_bytes / 8 ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(&events, u, sizeof(*u) + size, wake) < 0) {
		count(OFFCPU_CNT_UCOPY_RING_FULL);
		return -1;
	}
	count(OFFCPU_CNT_UCOPY_SENT);
	return 0;
}

static __always_inline void switch_in(struct task_struct *next, struct offcpu_start *st, __u64 now)
{
	struct offcpu_key key;
	struct offcpu_val *val;
	__u64 delta, weight;
	__u32 tid = st->pid;
	int ucopy = st->ucopy;

	delta = now - st->start_ns;
	st->start_ns = 0;
	st->ucopy = 0;
	count(OFFCPU_CNT_INTERVALS);
	if (sample_period_ns) {
		/* Mean of the last ~8 intervals (shifts: no signed division in BPF). */
		if (delta >= st->ewma_ns)
			st->ewma_ns += (delta - st->ewma_ns) >> 3;
		else
			st->ewma_ns -= (st->ewma_ns - delta) >> 3;
		if (!st->ewma_ns)
			st->ewma_ns = 1;
	}
	if (!st->captured) {
		count(OFFCPU_CNT_SAMPLED_OUT);
		return;
	}
	if (delta < min_block_ns || delta > max_block_ns) {
		count(delta < min_block_ns ? OFFCPU_CNT_SHORT : OFFCPU_CNT_LONG);
		if (ucopy)
			bpf_map_delete_elem(&ucopies, &tid);
		return;
	}
	weight = delta;
	if (st->q < OFFCPU_Q_ONE)
		weight = (delta << OFFCPU_Q_SHIFT) / st->q;
	if (ucopy) {
		int sent = send_ustack(next, st, delta, weight);

		bpf_map_delete_elem(&ucopies, &tid);
		if (sent == 0) {
			count(OFFCPU_CNT_KEPT);
			return;
		}
		st->ustack = OFFCPU_STACK_LOST;
	}

	key.tgid = st->tgid;
	key.pid = st->pid;
	key.kstack = st->kstack;
	key.ustack = st->ustack;
	val = bpf_map_lookup_elem(&agg, &key);
	if (!val) {
		struct offcpu_val zero = {};
		__u8 one = 1;

		BPF_CORE_READ_STR_INTO(&zero.comm, next, group_leader, comm);
		BPF_CORE_READ_STR_INTO(&zero.tcomm, next, comm);
		zero.first_ns = now;
		if (bpf_map_update_elem(&agg, &key, &zero, BPF_NOEXIST) == 0 &&
		    bpf_map_update_elem(&seen, &key.tgid, &one, BPF_NOEXIST) == 0)
			announce(key.tgid, OFFCPU_EV_NEW_PROCESS);
		val = bpf_map_lookup_elem(&agg, &key);
		if (!val) {
			count(OFFCPU_CNT_AGG_FULL);
			return;
		}
	}
	/* The key holds the thread id and a thread is switched in on one CPU
	 * at a time: nobody else updates this entry now, no atomics needed. */
	val->weighted_ns += weight;
	val->real_ns += delta;
	val->count++;
	count(OFFCPU_CNT_KEPT);
}

/* The sample for perf.data.txt.  User space drains the ring on a timer
 * too: a wakeup once it is a quarter full, not one per sample. */
static __always_inline void send_sample(const struct offcpu_key *key, __u64 period)
{
	struct offcpu_sample *s = bpf_ringbuf_reserve(&samples, sizeof(*s), 0);
	__u64 wake;

	if (!s) {
		count(OFFCPU_CNT_ONCPU_RING_FULL);
		return;
	}
	s->time_ns = bpf_ktime_get_ns();
	s->period_ns = period;
	s->kstack = key->kstack;
	s->ustack = key->ustack;
	s->tgid = key->tgid;
	s->pid = key->pid;
	s->cpu = bpf_get_smp_processor_id();
	s->pad = 0;
	bpf_get_current_comm(s->tcomm, sizeof(s->tcomm));
	wake = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= samples_bytes / 4
		       ? BPF_RB_FORCE_WAKEUP
		       : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(s, wake);
}

/* oncpu_hz > 0: where threads run, sampled by a cpu-clock perf event per
 * CPU, user stacks walked as at switch-out (by the CFI tables with
 * callchain = cfi, else by frame pointers).  Runs in the timer's hardirq,
 * which cannot interrupt sched_switch (it runs with interrupts off), so
 * the per-CPU stack scratch is never used by both at once. */
SEC("perf_event")
int oncpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct task_struct *task = bpf_get_current_task_btf();
	struct offcpu_key key = { .tgid = pid_tgid >> 32, .pid = (__u32)pid_tgid };
	struct offcpu_val *val;

	if (!selected(task, key.tgid, key.pid))
		return 0;
	count(OFFCPU_CNT_ONCPU_SAMPLES);
	/* Empty when the sample interrupted user mode. */
	key.kstack = store_stack(ctx, 0, OFFCPU_CNT_KSTACK_DROPPED);
	if (cfi)
		key.ustack = walk_user_stack(key.tgid);
	else
		key.ustack = store_stack(ctx, BPF_F_USER_STACK, OFFCPU_CNT_USTACK_DROPPED);
	val = bpf_map_lookup_elem(&oncpu_agg, &key);
	if (!val) {
		struct offcpu_val zero = {};
		__u8 one = 1;

		BPF_CORE_READ_STR_INTO(&zero.comm, task, group_leader, comm);
		BPF_CORE_READ_STR_INTO(&zero.tcomm, task, comm);
		zero.first_ns = bpf_ktime_get_ns();
		/* A process that only runs is announced here (its tables,
		 * its mappings), as switch_in announces one that blocks. */
		if (bpf_map_update_elem(&oncpu_agg, &key, &zero, BPF_NOEXIST) == 0 &&
		    bpf_map_update_elem(&seen, &key.tgid, &one, BPF_NOEXIST) == 0 &&
		    announce(key.tgid, OFFCPU_EV_NEW_PROCESS) < 0)
			bpf_map_delete_elem(&seen, &key.tgid);
		val = bpf_map_lookup_elem(&oncpu_agg, &key);
		if (!val) {
			count(OFFCPU_CNT_ONCPU_AGG_FULL);
			return 0;
		}
	}
	/* The thread in the key is current here, on this CPU only: nobody
	 * else updates this entry now.  The period is nanoseconds of cpu-clock
	 * (the kernel adjusts it to keep the frequency). */
	val->count++;
	val->weighted_ns += ctx->sample_period;
	val->real_ns += ctx->sample_period;
	if (samples_bytes)
		send_sample(&key, ctx->sample_period);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	struct offcpu_start *st;

	count(OFFCPU_CNT_SWITCHES);
	if (traced(prev, pid_tgid >> 32, (__u32)pid_tgid)) {
		st = bpf_task_storage_get(&task_start, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (st)
			switch_out(ctx, pid_tgid, st, now);
		else
			count(OFFCPU_CNT_THREAD_FULL);
	}
	st = bpf_task_storage_get(&task_start, next, NULL, 0);
	if (st && st->start_ns)
		switch_in(next, st, now);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(offcpu_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	struct offcpu_start *st;
	__u32 tid;

	count(OFFCPU_CNT_SWITCHES);
	if (traced(prev, pid_tgid >> 32, (__u32)pid_tgid)) {
		tid = (__u32)pid_tgid;
		st = bpf_map_lookup_elem(&tid_start, &tid);
		if (!st) {
			struct offcpu_start zero = {};

			bpf_map_update_elem(&tid_start, &tid, &zero, BPF_NOEXIST);
			st = bpf_map_lookup_elem(&tid_start, &tid);
		}
		if (st)
			switch_out(ctx, pid_tgid, st, now);
		else
			count(OFFCPU_CNT_THREAD_FULL);
	}
	tid = BPF_CORE_READ(next, pid);
	st = bpf_map_lookup_elem(&tid_start, &tid);
	if (st && st->start_ns)
		switch_in(next, st, now);
	return 0;
}

/* raw_tp only: the per-thread entry goes with the thread. */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(offcpu_exit_raw, struct task_struct *p)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&tid_start, &tid);
	return 0;
}

/* Children of traced processes are traced too (the launched command's
 * shell pipelines, workers, ...). */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(offcpu_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, ctgid;
	__u8 one = 1;

	ptgid = BPF_CORE_READ(parent, tgid);
	ctgid = BPF_CORE_READ(child, tgid);
	/* callchain = cfi: a new process maps what its parent maps, so it
	 * walks by the parent's tables until user space, told of it at its
	 * first interval, loads its own. */
	if (cfi && ctgid != ptgid) {
		struct offcpu_cfi_proc *p = bpf_map_lookup_elem(&cfi_procs, &ptgid);

		if (p)
			bpf_map_update_elem(&cfi_procs, &ctgid, p, BPF_NOEXIST);
	}
	if (!filter_tgids || !bpf_map_lookup_elem(&tgids, &ptgid))
		return 0;
	bpf_map_update_elem(&tgids, &ctgid, &one, BPF_ANY);
	return 0;
}

/* A process user space already remembered exec'd: its mappings changed. */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(offcpu_exec, struct task_struct *p)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	/* callchain = cfi: the old mappings' tables must not walk the new
	 * image; until user space loads its own, stacks keep one frame. */
	if (cfi)
		bpf_map_delete_elem(&cfi_procs, &tgid);
	if (bpf_map_lookup_elem(&seen, &tgid))
		announce(tgid, OFFCPU_EV_EXEC);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
