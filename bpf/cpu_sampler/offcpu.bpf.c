// SPDX-License-Identifier: GPL-2.0
/* offcpu.bpf.c - off-CPU time, linked into the sampler's object so it shares
 * the filters, stack tables, unwinder and generation switch of CPU samples.
 *
 * Tracepoints only (no kprobes, no fentry: kernels without them, or whose
 * policy forbids them, still work), attached through bpf(), not tracefs:
 *  - sched_switch, switch-out side (the thread leaving is `current`): a
 *    kept thread's time and state go into `offcpu_start`, keyed by its
 *    global thread ID, so a wake-up on another CPU finds it;
 *  - sched_switch, switch-in side (`next`, with kernel BTF; the same BTF
 *    tracepoint program does both sides, else a raw tracepoint does the
 *    switch-out side alone): the wait is measured; waits below `offcpu_min_ns` are only counted.
 *    A long wait gets `next`'s kernel stack (bpf_get_task_stack: the stack
 *    it blocked in) and stays pending in the thread's entry;
 *  - the thread returns to user space after the wait, in its own address
 *    space with its user registers those of the system call it blocked
 *    in: the user stack is walked there and the pending time added to
 *    (thread, stacks, state) -> {ns, switches} in the current generation.
 *    "There" is the raw tracepoint rseq_update, which runs on the way back
 *    to user space of a thread that was switched out, and only then, when
 *    the thread registered rseq (glibc >= 2.35 does for every thread); and
 *    raw tracepoint sys_exit for threads without rseq. sys_exit runs at
 *    every system call return on the host once attached (and makes every
 *    one take the slow path), so it is attached only when the switch-in
 *    side has seen a long wait of a thread without rseq (offcpu_norseq,
 *    polled by user space), or when the kernel has no rseq tracepoint. The
 *    same program serves both: the first to run completes the wait.
 *    On Linux >= 6.18 (profcap_switch_tw, chosen at load time by
 *    autoload) neither is attached: the switch-in of a long wait queues a
 *    BPF task work (a kfunc) that runs in the thread as it returns to user
 *    space, so nothing runs after the other switches.
 *    Kernel threads are added at switch-in; a wait outside a system call
 *    (page fault) keeps the user PC of switch-in as its user stack.
 * Without kernel BTF there is no switch-in side: sys_exit ends the wait
 * (the time also counts the few microseconds the thread ran before
 * returning) and there is no kernel stack nor state.
 */
#include "notice.bpf.h"
#include "offcpu_types.h"
#include "jvm.bpf.h"
#include "php.bpf.h"
#include "python.bpf.h"
#include "ruby.bpf.h"
#include "v8.bpf.h"
#include "perl.bpf.h"
#include "target.bpf.h"
#include "threadctx.bpf.h"
#include "timestamps.bpf.h"
#include "unwind.bpf.h"

const volatile __u64 offcpu_min_ns = 100000; /* waits walked and kept */
const volatile __u32 offcpu_runnable = 0;    /* also keep waits for a CPU */
const volatile __u32 offcpu_btf = 0;	     /* the switch-in program is loaded */
const volatile __u32 offcpu_state_arg = 0;   /* prev_state is raw_tp args[3] */
const volatile __u32 offcpu_state_off = 0;   /* else task_struct offset of the state, 0 = none */
const volatile __u32 offcpu_pid_off = 0;     /* task_struct offsets (BTF) */
const volatile __u32 offcpu_tgid_off = 0;
const volatile __u32 offcpu_comm_off = 0;
const volatile __u32 offcpu_rseq_off = 0; /* task_struct.rseq, 0 = sys_exit only */
const volatile __u32 offcpu_self = 0;	  /* profcap's process ID (in its namespace) */
/* The switch program's clock: the runqueue clock the scheduler has just
 * read in __schedule() (rq->clock, sched_clock_cpu()), reached from `prev`
 * as prev->se.cfs_rq->rq->clock with these offsets from kernel BTF (a
 * direct load each, no helper call, where bpf_ktime_get_ns() may trap to
 * the host on a VM). 0 = bpf_ktime_get_ns(). Both sides of a wait are read
 * from the same clock. */
const volatile __u32 offcpu_clk_cfs_rq_off = 0; /* task_struct.se + sched_entity.cfs_rq */
const volatile __u32 offcpu_clk_rq_off = 0;	/* cfs_rq.rq */
const volatile __u32 offcpu_clk_off = 0;	/* rq.clock */
const volatile __u32 offcpu_slot_mask = 0;	/* offcpu_slots entries - 1 (2^n - 1), 0 = none */
const volatile __u32 offcpu_work_mask = 0;	/* offcpu_work entries - 1 (2^n - 1) */
const volatile __u32 offcpu_stack_off = 0;	/* task_struct.stack (slots' tag) */
const volatile __u32 offcpu_flags_off = 0;	/* task_struct.flags, 0 = idle tasks by pid */

/* The slot mask as an immediate, not a load of offcpu_slot_mask from
 * .rodata (a cold line at every switch); offcpu_slot_mask stays the switch
 * (0 = no slots), read where nothing waits on it. User space sizes
 * offcpu_slots to OFFCPU_SLOTS. */
static __always_inline __u32 offcpu_opaque(__u32 v)
{
	/* @v, which the compiler can no longer fold into the instruction using
	 * it: ANDed into a value read through a kernel pointer, a register
	 * holding it keeps the result a number for the verifier. */
	asm volatile("" : "+r"(v));
	return v;
}

#define OFFCPU_SLOT_MASK offcpu_opaque(OFFCPU_SLOTS - 1)

/* Offset @k (enum offcpu_off) in the switch programs: an immediate user
 * space writes before load (offcpu__link_offsets()), not a load from
 * .rodata, a line the host's own switch path never touches, on which the
 * address of a slot would wait. The .rodata values stay the switches
 * (0 = absent), and are what the other programs read. */
#define OFFCPU_IMM(k)                                                            \
	({                                                                       \
		__u64 v__;                                                       \
		asm volatile("%0 = %1" : "=r"(v__) : "i"(OFFCPU_OFF_IMM + (k))); \
		v__;                                                             \
	})

/* Long waits of threads without rseq seen at switch-in: user space then
 * attaches sys_exit too (offcpu_sysexit set), after which this stops
 * counting. */
__u64 offcpu_norseq = 0;
__u32 offcpu_sysexit = 0;
/* Threads with a wait pending (about: exited threads may keep it above
 * the truth), so sys_exit costs one load while there are none. */
__u64 offcpu_npending = 0;

/* With kernel BTF, per CPU: the task (pointer) last switched in there with a
 * wait pending. A thread that runs with a pending wait switched in last on
 * its CPU, so sys_exit of any other thread returns after one compare, even
 * while waits are pending elsewhere (or leaked by threads that exited). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} offcpu_cur SEC(".maps");

struct offcpu_counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct offcpu_key);
	__type(value, struct offcpu_val);
	__uint(max_entries, 1); /* sized by user space when enabled */
};

struct offcpu_counts_map offcpu_counts0 SEC(".maps");
struct offcpu_counts_map offcpu_counts1 SEC(".maps");

/* Threads off the CPU now, or with a wait pending. With kernel BTF, task
 * local storage: found through the task itself (no hashing, freed with the
 * task). Without, an LRU hash by thread ID: a thread that exits while off
 * the CPU never comes back to clear its entry. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_start);
} offcpu_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct offcpu_start);
	__uint(max_entries, 1); /* sized by user space when enabled */
} offcpu_start SEC(".maps");

/* With kernel BTF: the switch-out times of kept threads (struct offcpu_slot).
 * Mappable only for its layout: the values of such an array start on a
 * page, so each 64-byte slot is one cache line (never mapped). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct offcpu_slot);
	__uint(max_entries, 1); /* sized by user space when enabled */
} offcpu_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct offcpu_stats);
	__uint(max_entries, 1);
} offcpu_stats SEC(".maps");

/* Linux >= 6.18 (profcap_switch_tw): a task work queued at the switch-in
 * of a long wait completes it when the thread returns to user space, in
 * its context, so no program runs on the way back from the other switches
 * (rseq_update runs after every one). The kernel finds struct
 * bpf_task_work in a map value by its BTF name; an entry holds one queued
 * work at a time, so a thread tries two entries. */
struct bpf_task_work {
	__u64 opaque;
} __attribute__((aligned(8)));

struct offcpu_work {
	struct bpf_task_work tw;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct offcpu_work);
	__uint(max_entries, 1); /* sized by user space when used */
} offcpu_work SEC(".maps");

struct task_struct;
struct bpf_map;

/* bpf_task_work_schedule_resume_impl(), a kfunc (Linux >= 6.18), called
 * through a placeholder helper ID that user space rewrites into the kfunc
 * call (collect/offcpu.c) before it loads profcap_switch_tw, the only
 * program that calls it. Not an extern __ksym: libbpf (1.1) reads the
 * kernel's whole BTF at every load of an object with a kfunc extern, and
 * fails on a kernel without BTF, where this object must load too. */
static long (*const offcpu_task_work_schedule)(struct task_struct *task, struct bpf_task_work *tw,
					       void *map__map,
					       int (*callback)(struct bpf_map *map, void *key,
							       void *value),
					       void *aux__prog) = (void *)OFFCPU_TASK_WORK_CALL;

static __always_inline struct offcpu_stats *ostats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&offcpu_stats, &zero);
}

/* TASK_* bits of prev_state (include/linux/sched.h). */
static __always_inline __u32 offcpu_state(__u64 preempt, __u64 st)
{
	if (preempt & 1)
		return OFFCPU_STATE_RUNNABLE;
	st &= 0xffff;
	if (!st)
		return OFFCPU_STATE_RUNNABLE; /* TASK_RUNNING: yield */
	if ((st & 0x0402) == 0x0402)
		return OFFCPU_STATE_IDLE; /* TASK_IDLE = UNINTERRUPTIBLE | NOLOAD */
	if (st & 0x0002)
		return OFFCPU_STATE_UNINTERRUPTIBLE;
	if (st & 0x0001)
		return OFFCPU_STATE_INTERRUPTIBLE;
	return OFFCPU_STATE_OTHER;
}

/* Does the current thread pass the targeting filters? profcap's own
 * threads never do: their waits are the profiler's, and as a static musl
 * program it has no rseq, so keeping them would attach sys_exit. */
static __always_inline int offcpu_keep(__u32 tgid, __u32 tid)
{
	struct comm_key comm = {};

	if (tgid == offcpu_self)
		return 0;
	if (filter_pids && !bpf_map_lookup_elem(&pids, &tgid) && !is_followed())
		return 0;
	if (filter_tids && !bpf_map_lookup_elem(&tids, &tid))
		return 0;
	if (filter_comms) {
		bpf_get_current_comm(comm.w, sizeof(comm.w));
		if (!bpf_map_lookup_elem(&comms, &comm))
			return 0;
	}
	if (filter_cgroups && !under_cgroups())
		return 0;
	return 1;
}

/* The state @prev (a task_struct pointer) leaves the CPU in. */
static __always_inline __u32 offcpu_out_state(__u64 preempt, __u64 prev, __u64 raw)
{
	__u32 state;

	if (!offcpu_state_arg && offcpu_state_off)
		bpf_probe_read_kernel(&raw, sizeof(__u32), (void *)(prev + offcpu_state_off));
	state = offcpu_state_arg || offcpu_state_off ? offcpu_state(preempt, raw)
						     : OFFCPU_STATE_UNKNOWN;
	if (state == OFFCPU_STATE_UNKNOWN && (preempt & 1))
		state = OFFCPU_STATE_RUNNABLE;
	return state;
}

/* Without kernel BTF: the current thread (`prev`, thread @gtid, whose LRU
 * entry is @e or NULL) leaves the CPU: note when, if it is kept. A kept
 * thread has an entry, so the filters run only for threads without one.
 * (With BTF, offcpu_switch_out() does this with slots and task storage.) */
static __always_inline void offcpu_out(__u32 gtid, struct offcpu_start *e, __u64 preempt,
				       __u64 prev, __u64 raw)
{
	struct offcpu_start v = {};
	__u32 tgid, tid;

	v.state = offcpu_out_state(preempt, prev, raw);
	if (v.state == OFFCPU_STATE_RUNNABLE && !offcpu_runnable)
		return;
	if (e) {
		/* Kept before: a pending wait stays pending. */
		e->state = v.state;
		e->ts = bpf_ktime_get_ns();
		return;
	}
	if (current_ids(&tgid, &tid) || !tgid /* the idle task */ || !offcpu_keep(tgid, tid))
		return;
	v.ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&offcpu_start, &gtid, &v, BPF_ANY);
}

/* Without kernel BTF: raw_tp args bool preempt, task_struct *prev, *next[,
 * unsigned int prev_state (Linux >= 5.18)]. */
SEC("raw_tp/sched_switch")
int profcap_switch_out(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 gtid = (__u32)bpf_get_current_pid_tgid();

	if (!gtid)
		return 0; /* the idle task */
	offcpu_out(gtid, bpf_map_lookup_elem(&offcpu_start, &gtid), ctx->args[0], ctx->args[1],
		   offcpu_state_arg ? ctx->args[3] : 0);
	return 0;
}

/* The managed runtime's stack of @key's thread into generation @g1's
 * table, as key->rtstack: V8's or the JVM's frames the native walk just
 * noted, else an interpreter's (PHP, Ruby, Perl) walked now. Global: the
 * off-CPU programs' own stacks are deep already (the walkers' frames must
 * fit under theirs within 512 bytes), and the verifier checks the walkers
 * once. */
__attribute__((noinline)) int offcpu_rt_stack(struct offcpu_key *key, __u32 g1)
{
	void *stacks = g1 ? (void *)&stacks1 : (void *)&stacks0;

	if (!key)
		return 0;
	key->rtstack = v8_stack(stacks, &key->flags, 0)
			       ?: jvm_stack(stacks, &key->flags, SCRATCH_OFFCPU);
	if (!key->rtstack)
		key->rtstack = php_stack_in(SCRATCH_OFFCPU, NULL, stacks, key->tgid, key->tid,
					    &key->flags, 0);
	if (!key->rtstack)
		key->rtstack = ruby_stack_in(SCRATCH_OFFCPU, stacks, key->tgid, key->tid,
					     &key->flags, 0);
	if (!key->rtstack)
		key->rtstack = perl_stack_in(SCRATCH_OFFCPU, stacks, key->tgid, key->tid,
					     &key->flags, 0);
	return 0;
}

/* Add @ns (@switches waits) to the current thread's counter. @ustack == ~0:
 * walk the user stack now. */
static __always_inline void offcpu_add(void *ctx, struct offcpu_key *key, __u64 ustack, __u64 ns,
				       __u64 switches)
{
	struct offcpu_val one = {.ns = ns, .switches = switches}, *v;
	__u32 g1 = gen & 1;
	void *counts = g1 ? (void *)&offcpu_counts1 : (void *)&offcpu_counts0;
	if (ustack == ~0ull) {
		v8_walk_begin(key->tgid); /* the walk below notes V8's frames */
		jvm_walk_begin(&key->tgid, SCRATCH_OFFCPU); /* ... and walks the JVM's */
		if (gen & 1)
			fill_stacks_in(SCRATCH_OFFCPU, ctx, NULL, &stacks1, &ustack_ext1, key->tgid,
				       &key->ustack, NULL, &key->flags, 1);
		else
			fill_stacks_in(SCRATCH_OFFCPU, ctx, NULL, &stacks0, &ustack_ext0, key->tgid,
				       &key->ustack, NULL, &key->flags, 1);
		/* the JavaScript frames of that walk */
		offcpu_rt_stack(key, g1);
	} else {
		key->ustack = ustack;
	}
	v = bpf_map_lookup_elem(counts, key);
	if (!v && bpf_map_update_elem(counts, key, &one, BPF_NOEXIST) == 0) {
		times_note_wait(key, g1, ns);
		return;
	}
	if (!v)
		v = bpf_map_lookup_elem(counts, key); /* another CPU inserted it */
	if (!v) {
		struct offcpu_stats *os = ostats();

		if (os)
			os->counts_full++;
		return;
	}
	__sync_fetch_and_add(&v->ns, ns);
	__sync_fetch_and_add(&v->switches, switches);
	times_note_wait(key, g1, ns);
}

/* Store @st under its hash in the current generation's stack table. */
static __always_inline __u64 offcpu_put_stack(struct stack_trace *st, __u32 *flags)
{
	void *stacks = gen & 1 ? (void *)&stacks1 : (void *)&stacks0;

	if (!st->nr)
		return 0;
	return put_stack(stacks, st, PROFCAP_F_KSTACK_LOST, flags);
}

/* The time at sched_switch (see offcpu_clk_off), @prev the BTF pointer of
 * the thread leaving this CPU; 0 when the runqueue could not be read. */
static __always_inline __u64 offcpu_now(struct task_struct *prev)
{
	char *p;

	if (!offcpu_clk_cfs_rq_off || !offcpu_clk_rq_off || !offcpu_clk_off)
		return bpf_ktime_get_ns();
	p = *(char **)((char *)prev + OFFCPU_IMM(OFFCPU_OFF_CFS_RQ));
	if (!p)
		return 0;
	p = *(char **)(p + OFFCPU_IMM(OFFCPU_OFF_RQ));
	if (!p)
		return 0;
	return *(__u64 *)(p + OFFCPU_IMM(OFFCPU_OFF_CLOCK));
}

/* The time of this switch in *@now, read once (0: not read yet). */
static __always_inline __u64 offcpu_clock(__u64 *now, struct task_struct *prev)
{
	if (!*now)
		*now = offcpu_now(prev);
	return *now;
}

/* Fields of a task_struct (BTF pointer) at offsets from kernel BTF: direct
 * loads. @off 64 bits wide: an immediate needs no zero-extension. */
static __always_inline __u32 task_u32(struct task_struct *t, __u64 off)
{
	return *(__u32 *)((char *)t + off);
}

static __always_inline __u64 task_u64(struct task_struct *t, __u64 off)
{
	return *(__u64 *)((char *)t + off);
}

/* Is @t (BTF pointer) a CPU's idle task? PF_IDLE in its flags, on the
 * task's first cache line with __state and stack, which the scheduler has
 * just touched; else pid 0, on a line it does not touch (for `next`, a
 * miss on most switches). */
static __always_inline int offcpu_idle(struct task_struct *t)
{
	if (offcpu_flags_off)
		return task_u32(t, OFFCPU_IMM(OFFCPU_OFF_FLAGS)) & 0x00000002 /* PF_IDLE */;
	return !task_u32(t, offcpu_pid_off);
}

/* The tag of task @t (BTF pointer) in the slots: the address of its
 * kernel stack (task_struct.stack, a void *: a number to the verifier,
 * where the task's own address cannot be hashed), its own while it lives,
 * on a line the scheduler has just touched. In the switch programs. */
static __always_inline __u64 offcpu_tag(struct task_struct *t)
{
	return task_u64(t, OFFCPU_IMM(OFFCPU_OFF_STACK));
}

/* The slot of the task tagged @tag, when it holds it; its slot (held by
 * another thread, or free) in *@any. Stacks are KiBs apart: the tag is
 * hashed, not masked. */
static __always_inline struct offcpu_slot *offcpu_slot_of(__u64 tag, struct offcpu_slot **any)
{
	__u32 k = OFFCPU_SLOT_MASK & (__u32)((tag * 0x9e3779b97f4a7c15ull) >> 32);
	struct offcpu_slot *sl;

	*any = NULL;
	if (!offcpu_slot_mask || !tag)
		return NULL;
	sl = bpf_map_lookup_elem(&offcpu_slots, &k);
	*any = sl;
	return sl && sl->task == tag ? sl : NULL;
}

static __always_inline void offcpu_set_cur(struct task_struct *next)
{
	__u32 zero = 0;
	__u64 *cur = bpf_map_lookup_elem(&offcpu_cur, &zero);

	if (cur)
		*cur = (__u64)next;
}

/* @prev (BTF pointer, holding slot @ps or NULL, task storage entry looked
 * up only when it has no slot) leaves the CPU at @now in state @raw
 * (prev_state): note when, if it is kept. The filters run only for threads
 * that hold neither. */
static __always_inline void offcpu_switch_out(struct task_struct *prev, struct offcpu_slot *ps,
					      struct offcpu_slot *pany, __u64 preempt,
					      __u64 raw, __u64 *now)
{
	struct offcpu_start *pe;
	__u32 state, tgid, tid;

	if (!offcpu_state_arg && offcpu_state_off)
		bpf_probe_read_kernel(&raw, sizeof(__u32), (char *)prev + offcpu_state_off);
	if ((offcpu_state_arg || offcpu_state_off) && (raw & 0x80 /* TASK_DEAD */)) {
		/* Its last switch: the slot is free again (task storage goes
		 * with the task). */
		if (ps)
			ps->task = 0;
		return;
	}
	state = offcpu_out_state(preempt, (__u64)prev, raw);
	if (state == OFFCPU_STATE_RUNNABLE && !offcpu_runnable)
		return;
	if (ps) {
		ps->state = state;
		ps->ts = offcpu_clock(now, prev);
		return;
	}
	pe = bpf_task_storage_get(&offcpu_task, prev, NULL, 0);
	if (pe) {
		/* Kept before, without a slot: a pending wait stays pending. */
		pe->state = state;
		pe->ts = offcpu_clock(now, prev);
		return;
	}
	if (current_ids(&tgid, &tid) || !tgid /* the idle task */ || !offcpu_keep(tgid, tid))
		return;
	if (pany && (!pany->task || !pany->ts)) {
		/* Free, or its holder runs: this thread takes it (the holder
		 * takes it back, or goes to task storage, at its next switch). */
		pany->task = offcpu_tag(prev);
		pany->state = state;
		pany->ts = offcpu_clock(now, prev);
		pany->pend = 0;
		return;
	}
	{
		/* Here, not at the top: the stores are off the fast path. */
		struct offcpu_start v = {.state = state, .ts = offcpu_clock(now, prev)};

		bpf_task_storage_get(&offcpu_task, prev, &v, BPF_LOCAL_STORAGE_GET_F_CREATE);
	}
}

static int offcpu_work_cb(struct bpf_map *map, void *key, void *value);

/* Queue the task work that completes @next's pending wait @e when it
 * returns to user space (profcap_switch_tw). A wait whose work cannot be
 * queued (both entries busy with other threads' works) stays pending: the
 * thread's next long wait tries again. */
static __always_inline void offcpu_queue_work(struct task_struct *next, struct offcpu_start *e)
{
	struct offcpu_stats *os;
	__u32 tid = task_u32(next, offcpu_pid_off), k[2];
	struct offcpu_work *w;
	int i;

	/* Two entries per thread: by its ID, and by a hash of it. */
	k[0] = tid & offcpu_work_mask;
	k[1] = ((tid * 0x9e3779b1u) >> 11) & offcpu_work_mask;
	for (i = 0; i < 2; i++) {
		w = bpf_map_lookup_elem(&offcpu_work, &k[i]);
		if (w && !offcpu_task_work_schedule(next, &w->tw, &offcpu_work, offcpu_work_cb,
						    NULL)) {
			e->kflags |= OFFCPU_F_WORK;
			return;
		}
	}
	os = ostats();
	if (os)
		os->work_busy++;
}

/* A wait of @ns (>= the threshold) of @next in @state ended: add it to the
 * pending wait of its task storage entry @e (kernel stack now, user stack
 * when it returns to user space); @nslot its slot or NULL. */
static __always_inline void offcpu_long_wait(void *ctx, struct task_struct *next,
					     struct offcpu_start *e, struct offcpu_slot *nslot,
					     __u64 ns, __u32 state, const int tw)
{
	struct pt_regs regs;
	struct scratch *s;
	__u32 gtid = 0, slot = SCRATCH_OFFCPU;
	long n;

	e->pend_ns += ns;
	e->pend_switches++;
	if (nslot)
		nslot->pend = 1;
	if (!tw)
		offcpu_set_cur(next);
	if (e->pend_switches > 1) {
		/* Woke within the same system call: keeps the first stack. */
		if (tw && !(e->kflags & OFFCPU_F_WORK))
			offcpu_queue_work(next, e);
		return;
	}
	__sync_fetch_and_add(&offcpu_npending, 1);
	e->pend_state = state;
	e->kgen = gen & 1;
	e->kflags = 0;
	e->kstack = 0;
	e->uip = e->usp = 0;
	s = bpf_map_lookup_elem(&scratch, &slot);
	if (want_kernel && s) {
		n = bpf_get_task_stack(next, s->kern.ips, sizeof(s->kern.ips), 0);
		if (n > 0) {
			s->kern.nr = (__u64)n / sizeof(__u64);
			if (s->kern.nr >= PROFCAP_MAX_STACK)
				e->kflags |= PROFCAP_F_KSTACK_TRUNC;
			e->kstack = offcpu_put_stack(&s->kern, &e->kflags);
		} else {
			e->kflags |= PROFCAP_F_KSTACK_ERR;
		}
	}
	if (bpf_probe_read_kernel(&regs, sizeof(regs), (void *)bpf_task_pt_regs(next)) ||
	    (regs.cs & 3) != 3) {
		/* A kernel thread: no system call to return from, add it now. */
		struct offcpu_key key = {
			.state = e->pend_state, .flags = e->kflags, .kstack = e->kstack};

		if (pidns_ino ||
		    bpf_probe_read_kernel(&gtid, sizeof(gtid), (char *)next + offcpu_pid_off))
			goto drop; /* cannot name it in our namespace */
		key.tid = gtid;
		bpf_probe_read_kernel(&key.tgid, sizeof(key.tgid), (char *)next + offcpu_tgid_off);
		bpf_probe_read_kernel(key.comm, sizeof(key.comm), (char *)next + offcpu_comm_off);
		key.tgid = key.tgid ? key.tgid : gtid;
		offcpu_add(ctx, &key, 0, e->pend_ns, e->pend_switches);
		goto drop;
	}
	e->uip = regs.rip;
	e->usp = regs.rsp;
	if ((long)regs.orig_rax < 0) {
		/* Not in a system call (a page fault): the user PC it stopped at. */
		e->kflags |= OFFCPU_F_NO_SYSCALL;
	}
	if (tw) {
		offcpu_queue_work(next, e);
		return;
	}
	if (!offcpu_sysexit) {
		__u64 rseq = 0;

		/* Completed at its return to user space only through rseq:
		 * else wake user space at once to attach sys_exit (until then
		 * the thread's waits add up under this first one). */
		if ((!offcpu_rseq_off ||
		     bpf_probe_read_kernel(&rseq, sizeof(rseq), (char *)next + offcpu_rseq_off) ||
		     !rseq) &&
		    !offcpu_norseq++) {
			struct proc_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);

			if (ev) {
				ev->tgid = 0;
				ev->pad = PROFCAP_EVENT_NORSEQ;
				ev->start = 0;
				ev->cgroup = ev->css = 0;
				ev->cmdline_len = ev->pad2 = 0;
				bpf_ringbuf_submit(ev, wake_flags(&events, 0));
			}
		}
	}
	return;
drop:
	e->pend_ns = e->pend_switches = 0;
	if (nslot)
		nslot->pend = 0;
	__sync_fetch_and_add(&offcpu_npending, -1);
}

/* With kernel BTF, one program does both sides: args bool preempt,
 * task_struct *prev, task_struct *next[, unsigned int prev_state]. A
 * switch between two kept threads with slots and a short wait touches
 * only their two slots and the per-CPU counters. */
static __always_inline int offcpu_switch(__u64 *ctx, const int tw)
{
	struct task_struct *prev = (struct task_struct *)ctx[1];
	struct task_struct *next = (struct task_struct *)ctx[2];
	struct offcpu_slot *ps, *pany, *nsl, *nany;
	struct offcpu_start *e = NULL;
	struct offcpu_stats *os;
	__u64 now = 0, ns, ts;
	__u32 state, pend;

	/* The runqueue clock costs three loads: read it first. */
	if (offcpu_clk_off && !offcpu_clock(&now, prev))
		return 0; /* never seen: the wait of @next stays open */
	/* A CPU going idle, or woken from idle (most switches of a host that
	 * is not saturated), times one thread: the idle task (PF_IDLE, in the
	 * line the scheduler just read) has no slot, no task storage and no
	 * wait, so its side is skipped before any lookup. */
	if (!offcpu_idle(prev)) {
		ps = offcpu_slot_of(offcpu_tag(prev), &pany);
		offcpu_switch_out(prev, ps, pany, ctx[0], offcpu_state_arg ? ctx[3] : 0, &now);
	}
	if (offcpu_idle(next))
		return 0;
	nsl = offcpu_slot_of(offcpu_tag(next), &nany);
	if (nsl) {
		ts = nsl->ts;
		state = nsl->state;
		pend = nsl->pend;
		nsl->ts = 0;
	} else {
		e = bpf_task_storage_get(&offcpu_task, next, NULL, 0);
		if (!e)
			return 0;
		ts = e->ts;
		state = e->state;
		pend = e->pend_ns != 0;
		e->ts = 0;
	}
	if (!ts) {
		/* Back from a preemption not timed: a wait may still be pending. */
		if (pend && !tw)
			offcpu_set_cur(next);
		return 0;
	}
	ns = offcpu_clock(&now, prev) - ts;
	if (ns < offcpu_min_ns && nsl) {
		/* Counted in the slot's line, already written. */
		nsl->short_waits++;
		nsl->short_ns += ns;
		if (pend && !tw)
			offcpu_set_cur(next);
		return 0;
	}
	os = ostats();
	if (!os)
		return 0;
	os->waits++;
	if (ns < offcpu_min_ns) {
		os->short_waits++;
		os->short_ns += ns;
		if (pend && !tw)
			offcpu_set_cur(next);
		return 0;
	}
	os->long_ns += ns;
	if (!e) {
		struct offcpu_start zero_e = {};

		e = bpf_task_storage_get(&offcpu_task, next, &zero_e,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);
	}
	if (!e) {
		os->counts_full++;
		return 0;
	}
	offcpu_long_wait(ctx, next, e, nsl, ns, state, tw);
	return 0;
}

/* Waits completed on the way back to user space by rseq_update, or
 * sys_exit (profcap_sys_exit). */
SEC("tp_btf/sched_switch")
int profcap_switch(__u64 *ctx)
{
	return offcpu_switch(ctx, 0);
}

/* Waits completed by task works (offcpu_work_cb), Linux >= 6.18: the only
 * program that calls the kfunc, loaded only where the kernel has it. */
SEC("tp_btf/sched_switch")
int profcap_switch_tw(__u64 *ctx)
{
	return offcpu_switch(ctx, 1);
}

/* Add the pending wait of @e (the current thread's, global thread ID
 * @gtid) to its counter with the user stack walked now. @ctx NULL: from a
 * task work. */
static __always_inline void offcpu_complete(void *ctx, struct offcpu_start *e, __u32 gtid)
{
	struct offcpu_key key = {};
	__u64 ustack = ~0ull, ns, sw;
	__u32 slot = SCRATCH_OFFCPU, asz;

	if (!e->pend_ns)
		return;
	ns = e->pend_ns;
	sw = e->pend_switches;
	e->pend_ns = e->pend_switches = 0;
	if (offcpu_btf) {
		struct task_struct *task = bpf_get_current_task_btf();
		struct offcpu_slot *sl, *any;

		/* Not a switch program: the offset from .rodata. */
		sl = offcpu_slot_of(task_u64(task, offcpu_stack_off), &any);
		if (sl)
			sl->pend = 0;
		__sync_fetch_and_add(&offcpu_npending, -1);
	}
	if (current_ids(&key.tgid, &key.tid))
		return;
	key.state = e->pend_state;
	key.flags = e->kflags & ~(OFFCPU_F_NO_SYSCALL | OFFCPU_F_WORK);
	key.kstack = e->kstack;
	if (key.kstack && e->kgen != (gen & 1)) {
		/* The generation changed since switch-in: copy the stack over. */
		struct stack_trace *st = bpf_map_lookup_elem(
			e->kgen ? (void *)&stacks1 : (void *)&stacks0, &key.kstack);

		if (st) {
			struct scratch *s = bpf_map_lookup_elem(&scratch, &slot);

			if (s) {
				__builtin_memcpy(&s->kern, st, sizeof(*st));
				key.kstack = offcpu_put_stack(&s->kern, &key.flags);
			}
		} else {
			key.kstack = 0;
			key.flags |= PROFCAP_F_KSTACK_LOST;
		}
	}
	if (e->kflags & OFFCPU_F_NO_SYSCALL) {
		struct scratch *s = bpf_map_lookup_elem(&scratch, &slot);

		ustack = 0;
		if (s && e->uip) {
			s->user.nr = 1;
			s->user.ips[0] = e->uip;
			ustack = offcpu_put_stack(&s->user, &key.flags);
			key.flags |= PROFCAP_F_USTACK_PARTIAL;
		}
	}
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	/* The span the thread waited in: its context cannot change while it
	 * is off the CPU, so the one it returns with. */
	threadctx_ids(key.tgid, key.trace_id, &key.span_id, &asz, 0);
	/* Where its Python code waited: the frames are as it left them. */
	key.pystack = py_stack_in(SCRATCH_OFFCPU, gen & 1 ? (void *)&stacks1 : (void *)&stacks0,
				  key.tgid, key.tid, &key.flags, 0);
	notice_process(key.tgid);
	offcpu_add(ctx, &key, ustack, ns, sw);
}

/* The current thread returns to user space (rseq_update or sys_exit). */
SEC("raw_tp/sys_exit")
int profcap_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 gtid = (__u32)bpf_get_current_pid_tgid();
	struct offcpu_start *e;
	__u32 zero = 0;
	__u64 ns;

	__builtin_assume(ctx != NULL); /* no task-context stack reads (read_stack()) */
	if (offcpu_btf) {
		struct task_struct *task;
		__u64 *cur;

		if (!offcpu_npending)
			return 0;
		/* Only the thread switched in last on this CPU with a wait pending. */
		cur = bpf_map_lookup_elem(&offcpu_cur, &zero);
		task = bpf_get_current_task_btf();
		if (!cur || *cur != (__u64)task)
			return 0;
		*cur = 0;
		e = bpf_task_storage_get(&offcpu_task, task, NULL, 0);
	} else {
		e = bpf_map_lookup_elem(&offcpu_start, &gtid);
	}
	if (!e)
		return 0;
	if (!offcpu_btf && e->ts) {
		/* No switch-in side: the wait ends here. */
		struct offcpu_stats *os = ostats();

		ns = bpf_ktime_get_ns() - e->ts;
		e->ts = 0;
		if (!os)
			return 0;
		os->waits++;
		if (ns < offcpu_min_ns) {
			os->short_waits++;
			os->short_ns += ns;
			return 0;
		}
		os->long_ns += ns;
		e->pend_ns += ns;
		if (!e->pend_switches++)
			e->pend_state = e->state;
	}
	offcpu_complete(ctx, e, gtid);
	return 0;
}

/* The task work of a long wait (offcpu_queue_work()), run as the thread
 * returns to user space: no context, the current task's registers. */
static int offcpu_work_cb(struct bpf_map *map, void *key, void *value)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct offcpu_start *e;
	char *regs;
	__u64 ip = 0, sp = 0;

	e = bpf_task_storage_get(&offcpu_task, task, NULL, 0);
	if (!e)
		return 0;
	e->kflags &= ~OFFCPU_F_WORK;
	/* The work is queued through an irq_work: it may run at a later
	 * return to user space, the thread gone on. Not at the place it
	 * blocked (user PC and stack pointer): its stack is that PC alone. */
	regs = (char *)bpf_task_pt_regs(task);
	bpf_probe_read_kernel(&ip, sizeof(ip), regs + offsetof(struct pt_regs, rip));
	bpf_probe_read_kernel(&sp, sizeof(sp), regs + offsetof(struct pt_regs, rsp));
	if (e->pend_ns && !(e->kflags & OFFCPU_F_NO_SYSCALL) && (ip != e->uip || sp != e->usp)) {
		struct offcpu_stats *os = ostats();

		e->kflags |= OFFCPU_F_NO_SYSCALL;
		if (os)
			os->work_late++;
	}
	offcpu_complete(NULL, e, (__u32)bpf_get_current_pid_tgid());
	return 0;
}
