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
	OFFCPU_CNT_UCOPY_SLOT_FULL, /* callchain = dwarf: no slot for the stack copy (user stack lost) */
	OFFCPU_CNT_UCOPY_RING_FULL, /* callchain = dwarf: copy not sent, ring buffer full (lost) */
	OFFCPU_CNT_UCOPY_SENT,      /* callchain = dwarf: copies sent to user space to unwind */
	OFFCPU_CNT_RETURN_UNSEEN,   /* interval lost: the thread left a CPU again before its
	                               * return to one was seen (it took the CPU from an
	                               * untraced task) */
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
	__u64 first_ns;    /* when the entry was made: in flight mode an entry the
	                    * map evicted and made again is another entry */
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
	__u8 captured;
	__u8 ucopy;     /* callchain = dwarf: the user stack copy waits in the ucopies map */
	__u16 pad;
};

enum offcpu_event_kind {
	OFFCPU_EV_NEW_PROCESS = 1, /* first interval of a process: remember its maps */
	OFFCPU_EV_EXEC = 2,        /* a seen process exec'd: its maps changed */
	OFFCPU_EV_USTACK = 3,      /* a kept interval with its user stack copy (struct offcpu_ustack) */
};

/* Every record of the events ring starts with this. */
struct offcpu_event {
	__u32 tgid;
	__u32 kind;
};

/* callchain = dwarf: the most bytes of user stack copied per interval.  A
 * copy is taken in a per-CPU scratch value first, and per-CPU values are
 * at most 32 KiB (PCPU_MIN_UNIT_SIZE). */
#define OFFCPU_MAX_STACK_BYTES 28672
#define OFFCPU_N_REGS 17 /* x86_64 DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */

/* callchain = dwarf: one kept interval whose user stack is unwound in user
 * space.  Filled at switch-out (registers, stack) and switch-in (the
 * rest); sent as offsetof(data) + size bytes. */
struct offcpu_ustack {
	__u32 tgid;
	__u32 kind; /* OFFCPU_EV_USTACK */
	__u32 pid;
	__u32 size; /* bytes of data: the stack from regs[7] (rsp) up */
	__u64 kstack;
	__u64 weighted_ns;
	__u64 real_ns;
	__u64 regs[OFFCPU_N_REGS];
	char comm[OFFCPU_COMM_LEN];  /* the process's (group leader's) name */
	char tcomm[OFFCPU_COMM_LEN]; /* the thread's, for the folded root */
	__u8 data[];
};

#endif
