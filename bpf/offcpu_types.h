/* offcpu_types.h - types shared by the off-CPU BPF programs
 * (bpf/cpu_sampler/offcpu.bpf.c) and user space (src/collect/offcpu.c).
 *
 * A thread that leaves the CPU gets its timestamp and state noted in
 * `offcpu_start`, keyed by its global thread ID (not per CPU: it may wake on
 * another CPU). When it runs again the elapsed time is added, in the kernel,
 * to a counter keyed like a CPU sample plus the wait state; waits shorter
 * than a threshold are only counted. Same two generations as CPU samples.
 * Only __u32/__u64 here, so both sides agree on layout.
 */
#ifndef PROFCAP_BPF_OFFCPU_TYPES_H
#define PROFCAP_BPF_OFFCPU_TYPES_H

/* Why a thread was off the CPU (from sched_switch's prev_state/preempt). */
#define OFFCPU_STATE_RUNNABLE 0	       /* preempted or yielded: waiting for a CPU */
#define OFFCPU_STATE_INTERRUPTIBLE 1   /* S: sleep, poll, futex, pipe, socket */
#define OFFCPU_STATE_UNINTERRUPTIBLE 2 /* D: mostly disk I/O */
#define OFFCPU_STATE_IDLE 3	       /* I: TASK_IDLE (kernel workers waiting) */
#define OFFCPU_STATE_OTHER 4	       /* stopped, traced, ... */
#define OFFCPU_STATE_UNKNOWN 5	       /* state not readable (no BTF, old kernel) */
#define OFFCPU_STATE__COUNT 6

/* Entries of offcpu_slots (a power of two): user space sizes the map to
 * it, and the switch program hashes with its mask as a constant. */
#define OFFCPU_SLOTS 16384u

/* Per thread, keyed by global thread ID. */
struct offcpu_start {
	__u64 ts;	     /* bpf_ktime_get_ns() at switch-out, 0 = on a CPU */
	__u32 state;	     /* OFFCPU_STATE_* of that switch-out */
	__u32 pend_state;    /* state of the first pending wait */
	__u64 pend_ns;	     /* long waits not yet added (user stack pending) */
	__u64 pend_switches; /* ... their number */
	__u64 kstack;	     /* kernel stack hash at the first pending switch-in */
	__u64 uip;	     /* user PC then */
	__u64 usp;	     /* user stack pointer then (task works: is it still there?) */
	__u32 kgen;	     /* generation @kstack was stored in */
	__u32 kflags;	     /* PROFCAP_F_* of @kstack; OFFCPU_F_* */
};

/* With kernel BTF, the hot part of a kept thread's state: its last
 * switch-out, in an array indexed by a hash of the address of its kernel
 * stack (task_struct.stack, on the line the scheduler has just written; an
 * inlined lookup, cheaper than a task storage lookup), tagged with that
 * address: a live task's is its own, and a slot is freed at its task's
 * last switch (TASK_DEAD), before the stack can be reused. The slot also
 * counts the short waits of the threads that held it, so a
 * short wait touches only its slot's cache line (one slot per line); user
 * space sums them. A thread whose slot another kept thread holds while
 * off the CPU keeps its times in task storage (struct offcpu_start)
 * instead; so does every long wait's pending part. */
struct offcpu_slot {
	__u64 task;	   /* tag of the holder (its kernel stack's address), 0 = free */
	__u64 ts;	   /* time of the switch-out, 0 = on a CPU (or not timed) */
	__u32 state;	   /* OFFCPU_STATE_* of the last switch-out */
	__u32 pend;	   /* a long wait is pending in the thread's task storage */
	__u64 short_waits; /* waits below the threshold timed in this slot */
	__u64 short_ns;	   /* ... their total time */
	__u64 pad[3];
};

/* offcpu_start.kflags: the wait did not happen in a system call (page
 * fault): its user stack is the single PC @uip. */
#define OFFCPU_F_NO_SYSCALL 0x80000000u
/* offcpu_start.kflags: a task work completes the pending wait. */
#define OFFCPU_F_WORK 0x40000000u

/* The helper ID profcap_switch_tw calls in place of the task-work kfunc
 * (bpf_task_work_schedule_resume_impl): user space rewrites each such call
 * into the kfunc's before load. No helper has it. */
#define OFFCPU_TASK_WORK_CALL 0x70667477

/* The kernel offsets the switch programs (profcap_switch,
 * profcap_switch_tw) compute addresses with, as immediates: each is a
 * placeholder OFFCPU_OFF_IMM + its index here, which user space replaces
 * with the offset from kernel BTF before load. */
#define OFFCPU_OFF_IMM 0x70660000
enum offcpu_off {
	OFFCPU_OFF_STACK,  /* task_struct.stack */
	OFFCPU_OFF_FLAGS,  /* task_struct.flags */
	OFFCPU_OFF_CFS_RQ, /* task_struct.se + sched_entity.cfs_rq */
	OFFCPU_OFF_RQ,	   /* cfs_rq.rq */
	OFFCPU_OFF_CLOCK,  /* rq.clock */
	OFFCPU_OFF__COUNT,
};

/* The counter key: a CPU sample's, plus the wait state. */
struct offcpu_key {
	__u32 tgid;
	__u32 tid;
	__u64 ustack; /* hash of the user stack, 0 = none */
	__u64 kstack; /* hash of the kernel stack, 0 = none */
	__u64 pystack; /* hash of the Python stack (python.h), 0 = none */
	__u32 flags;  /* PROFCAP_F_* */
	__u32 state;  /* OFFCPU_STATE_* */
	__u64 comm[2];
	/* OpenTelemetry thread context of the waiting thread (as in
	 * sample_key; attributes are not kept for waits); zeros = none */
	__u64 trace_id[2];
	__u64 span_id;
	/* hash of the managed runtime's stack (V8: v8.h), 0 = none; a process
	 * runs at most one such runtime, so they share this slot */
	__u64 rtstack;
};

struct offcpu_val {
	__u64 ns;	/* time off the CPU */
	__u64 switches; /* waits it sums */
};

/* Per-CPU counters (one struct: one lookup per switch). */
struct offcpu_stats {
	__u64 waits;	   /* switch-ins of tracked threads, but for slot ones */
	__u64 short_waits; /* ... below the threshold: counted only */
	__u64 short_ns;	   /* their total time (slots count the rest) */
	__u64 long_ns;	   /* time of the waits with a stack */
	__u64 counts_full; /* long waits lost: counter table full */
	__u64 work_busy;   /* long waits whose task work could not be queued */
	__u64 work_late;   /* ... whose work ran after the thread had left the call */
};

#endif
