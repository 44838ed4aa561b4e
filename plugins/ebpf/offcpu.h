/* Structures shared by the BPF program (offcpu.bpf.c) and user space.
 * Kept to fixed-width types so that both sides agree on the layout. */
#ifndef TR_EBPF_OFFCPU_H
#define TR_EBPF_OFFCPU_H

#define OFFCPU_COMM_LEN 16
#define OFFCPU_MAX_DEPTH 127 /* kernel.perf_event_max_stack's default */

/* Stack ids are 64-bit hashes of the stack's content; these two values are
 * never a hash (the program moves a hash that falls on them). */
#define OFFCPU_STACK_NONE 0 /* no such stack: a kernel thread's user stack */
#define OFFCPU_STACK_LOST 1 /* not stored: the stack table is full */
#define OFFCPU_STACK_FIRST_ID 2

/* Sampling probabilities are fixed point: OFFCPU_Q_ONE means "always". */
#define OFFCPU_Q_SHIFT 20
#define OFFCPU_Q_ONE (1u << OFFCPU_Q_SHIFT)

/* Thread states (the class of prev's state at the switch), as filter bits. */
enum offcpu_state {
	OFFCPU_STATE_PREEMPTED = 1u << 0,       /* still runnable (TASK_RUNNING) */
	OFFCPU_STATE_INTERRUPTIBLE = 1u << 1,   /* S: sleeps, waits on pipes, locks, poll */
	OFFCPU_STATE_UNINTERRUPTIBLE = 1u << 2, /* D: disk I/O, page faults, some locks */
	OFFCPU_STATE_IDLE = 1u << 3,            /* D with TASK_NOLOAD: idle kernel threads */
	OFFCPU_STATE_OTHER = 1u << 4,           /* stopped, traced, parked, dead */
	OFFCPU_STATE_ALL = (1u << 5) - 1,
};

enum offcpu_threads {
	OFFCPU_THREADS_ALL = 0,
	OFFCPU_THREADS_USER = 1,
	OFFCPU_THREADS_KERNEL = 2,
};

/* Per-CPU counters, summed by user space. */
enum offcpu_counter {
	OFFCPU_CNT_SWITCHES,        /* sched_switch events seen */
	OFFCPU_CNT_INTERVALS,       /* off-CPU intervals of traced threads that ended */
	OFFCPU_CNT_KEPT,            /* intervals added to the aggregation */
	OFFCPU_CNT_SHORT,           /* dropped: shorter than min_block */
	OFFCPU_CNT_LONG,            /* dropped: longer than max_block */
	OFFCPU_CNT_SAMPLED_OUT,     /* not chosen by the low-overhead sampler */
	OFFCPU_CNT_KSTACK_DROPPED,  /* kernel stack not stored (stack table full) */
	OFFCPU_CNT_USTACK_DROPPED,  /* user stack not stored (stack table full) */
	OFFCPU_CNT_AGG_FULL,        /* interval lost: aggregation map full */
	OFFCPU_CNT_THREAD_FULL,     /* interval lost: per-thread state unavailable */
	OFFCPU_CNT_EVENTS_LOST,     /* new-process notifications lost (ring buffer full) */
	OFFCPU_CNT__MAX,
};

/* Aggregation key: one off-CPU call path of one thread. */
struct offcpu_key {
	__u32 tgid;
	__u32 pid;
	__u64 kstack; /* stack id: OFFCPU_STACK_NONE, OFFCPU_STACK_LOST or a content hash */
	__u64 ustack;
};

/* A stored stack; the table's value size is cut to the profile's depth. */
struct offcpu_stack {
	__u32 nr; /* frames in ips */
	__u32 pad;
	__u64 ips[OFFCPU_MAX_DEPTH];
};

struct offcpu_val {
	__u64 weighted_ns; /* blocked time, each interval divided by its sampling probability */
	__u64 real_ns;     /* blocked time of the recorded intervals as measured */
	__u64 count;       /* recorded intervals */
	char comm[OFFCPU_COMM_LEN]; /* the process's (group leader's) name */
	char tcomm[OFFCPU_COMM_LEN]; /* the thread's name, for the folded root */
};

/* Per-thread state between switch-out and switch-in. */
struct offcpu_start {
	__u64 start_ns; /* 0: not off-CPU (or not traced) */
	__u64 ewma_ns;  /* recent blocked times, for the sampler */
	__u64 kstack;
	__u64 ustack;
	__u32 tgid;
	__u32 pid;
	__u32 q;        /* probability this interval was captured with, OFFCPU_Q_ONE = 1 */
	__u32 captured;
};

enum offcpu_event_kind {
	OFFCPU_EV_NEW_PROCESS = 1, /* first interval of a process: remember its maps */
	OFFCPU_EV_EXEC = 2,        /* a seen process exec'd: its maps changed */
};

struct offcpu_event {
	__u32 tgid;
	__u32 kind;
};

#endif
