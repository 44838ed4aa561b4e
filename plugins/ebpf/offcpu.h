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
	OFFCPU_CNT_SWITCHES,       /* sched_switch events seen */
	OFFCPU_CNT_INTERVALS,      /* off-CPU intervals of traced threads that ended */
	OFFCPU_CNT_KEPT,           /* intervals added to the aggregation */
	OFFCPU_CNT_SHORT,          /* dropped: shorter than min_block */
	OFFCPU_CNT_LONG,           /* dropped: longer than max_block */
	OFFCPU_CNT_SAMPLED_OUT,    /* not chosen by the low-overhead sampler */
	OFFCPU_CNT_KSTACK_DROPPED, /* kernel stack not stored (stack table full) */
	OFFCPU_CNT_USTACK_DROPPED, /* user stack not stored (stack table full) */
	OFFCPU_CNT_AGG_FULL,       /* interval lost: aggregation map full */
	OFFCPU_CNT_THREAD_FULL,    /* interval lost: per-thread state unavailable */
	OFFCPU_CNT_EVENTS_LOST,    /* new-process notifications lost (ring buffer full) */
	OFFCPU_CNT_UCOPY_SLOT_FULL, /* callchain = dwarf: no slot for the stack copy (user stack lost) */
	OFFCPU_CNT_UCOPY_RING_FULL, /* callchain = dwarf: copy not sent, ring buffer full (lost) */
	OFFCPU_CNT_UCOPY_SENT,      /* callchain = dwarf: copies sent to user space to unwind */
	OFFCPU_CNT_RETURN_UNSEEN,   /* interval lost: the thread left a CPU again before its
	                               * return to one was seen (it took the CPU from an
	                               * untraced task) */
	OFFCPU_CNT_CFI_WALKS,       /* callchain = cfi: user stacks walked in the kernel */
	OFFCPU_CNT_CFI_NO_TABLE,    /* callchain = cfi: walks of a process with no tables yet
	                               * (only the innermost frame kept) */
	OFFCPU_CNT_CFI_CUT_SHORT,   /* callchain = cfi: walks stopped at an address no known
	                               * mapping holds (mapped after the tables were loaded) */
	OFFCPU_CNT_CFI_FP_FRAMES,   /* callchain = cfi: frames walked by frame pointers
	                               * (JIT code, objects without CFI, rules rows cannot hold) */
	OFFCPU_CNT_CFI_READ_FAILED, /* callchain = cfi: walks stopped by an unreadable stack word */
	OFFCPU_CNT_ONCPU_SAMPLES,   /* oncpu: samples of traced threads taken */
	OFFCPU_CNT_ONCPU_AGG_FULL,  /* oncpu: samples lost, their aggregation map full */
	OFFCPU_CNT_ONCPU_RING_FULL, /* oncpu: samples not in perf.data.txt, their ring full
	                               * (still in the aggregation) */
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
	OFFCPU_EV_USTACK = 3, /* a kept interval with its user stack copy (struct offcpu_ustack) */
	OFFCPU_EV_CFI_STALE = 4, /* callchain = cfi: a walk met an address the process's
	                            * tables do not cover: read its mappings again */
};

/* Every record of the events ring starts with this. */
struct offcpu_event {
	__u32 tgid;
	__u32 kind;
};

/* oncpu with a script: one sample as it was taken, for perf.data.txt
 * (the aggregation keeps no times).  The stacks are ids of the stacks
 * map, as in struct offcpu_key. */
struct offcpu_sample {
	__u64 time_ns; /* bpf_ktime_get_ns: CLOCK_MONOTONIC, the session clock */
	__u64 period_ns;
	__u64 kstack;
	__u64 ustack;
	__u32 tgid;
	__u32 pid;
	__u32 cpu;
	__u32 pad;
	char tcomm[OFFCPU_COMM_LEN]; /* the thread's name when it was sampled */
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

/* callchain = cfi: user stacks walked in the kernel by tables compiled
 * from the objects' CFI in user space (lib/cfi.h), so no stack copy leaves
 * the kernel.  Two maps: cfi_rows, every loaded object's rows one after
 * the other (an array user space sizes and allocates ranges of, an
 * object's range shared by every process mapping it), and cfi_procs, per
 * process its executable mappings sorted by address, each pointing at its
 * object's range.  User space replaces a process's entry whole. */
#define OFFCPU_CFI_MAX_MAPPINGS 512 /* a power of two: the binary search's bound */
#define OFFCPU_CFI_ROW_SEARCH 24    /* binary search steps: up to 2^24 rows per object */
#define OFFCPU_CFI_CACHE 1024       /* rows found, kept per CPU: a power of two */

/* The layout of lib/cfi.h's struct tr_cfi_row, kinds as enum tr_cfi_kind
 * (0 none, 1 CFA = RSP + offset, 2 CFA = RBP + offset, 3 fall back to
 * frame pointers, 4 signal frame: the walk stops). */
struct offcpu_cfi_row {
	__u64 pc; /* ELF address the row starts at */
	__s32 cfa_offset;
	__s16 rbp_offset; /* the caller's RBP at CFA + this; 0: left as it was */
	__u8 kind;
	__u8 pad;
};

struct offcpu_cfi_mapping {
	__u64 start, end; /* [start, end) in the process */
	__u64 bias;       /* ELF address = address - bias */
	__u32 row_start;  /* the object's first row in cfi_rows */
	__u32 row_count;  /* 0: no rows (JIT code, no CFI): walked by frame pointers */
};

struct offcpu_cfi_proc {
	__u32 n;     /* mappings used in m */
	__u32 stale; /* set by the walker once it asked for a reread (not again
	              * until user space replaces the entry) */
	__u32 gen;   /* this version of the entry, unique per write (0: none):
	              * the walker's cache of rows found is valid for it only */
	__u32 pad;
	struct offcpu_cfi_mapping m[OFFCPU_CFI_MAX_MAPPINGS];
};

#endif
