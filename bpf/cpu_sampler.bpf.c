// SPDX-License-Identifier: GPL-2.0
/* cpu_sampler.bpf.c - CPU sampling: on each cpu-clock tick, read the user and
 * kernel stacks of the running thread and count them in a hash map.
 *
 * UAPI headers only (no vmlinux.h, no CO-RE), so it loads without kernel BTF.
 * Configured through rodata before load; user space flips `gen` to swap the
 * map generation being filled, then drains the other one race-free.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "cpu_sampler.h"

const volatile __u32 filter_pids = 0;	 /* keep only tgids in `pids` (and followed ones) */
const volatile __u32 filter_tids = 0;	 /* keep only tids in `tids` */
const volatile __u32 filter_comms = 0;	 /* keep only task names in `comms` */
const volatile __u32 filter_cgroups = 0; /* keep only tasks under the first N of `cgroups` */
const volatile __u32 follow_forks = 0;	 /* children of kept processes are kept too */
const volatile __u32 fork_child_off = 0; /* offset of child_pid in the fork tracepoint record */
/* PID namespace of profcap when it is not the initial one: tgids and tids
 * are reported as seen there, and tasks outside it are skipped. */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
const volatile __u32 want_user = 1;
const volatile __u32 want_kernel = 1;
const volatile __u32 skip_idle = 0;

__u32 gen = 0;
__u64 first_sample_ns = 0; /* CLOCK_MONOTONIC of the first sample (start-up bench) */

struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct sample_key);
	__type(value, __u64);
	__uint(max_entries, 8192);
};

struct stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, struct stack_trace);
	__uint(max_entries, 8192);
};

struct counts_map counts0 SEC(".maps");
struct counts_map counts1 SEC(".maps");
struct stacks_map stacks0 SEC(".maps");
struct stacks_map stacks1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1); /* resized by user space when filtering */
} pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1); /* resized by user space when filtering */
} tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct comm_key);
	__type(value, __u8);
	__uint(max_entries, 1); /* resized by user space when filtering */
} comms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1); /* resized by user space when filtering */
} cgroups SEC(".maps");

/* Processes created by a kept process, keyed by their global PID (the fork
 * tracepoint knows no other); an LRU so a fork storm cannot fill it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1); /* sized by user space when following forks */
} followed SEC(".maps");

/* Processes already announced. An LRU: a process evicted from it is only
 * announced again; user space deletes exited ones (a reused PID is new). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 8192);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, STAT__COUNT);
} stats SEC(".maps");

struct scratch {
	struct stack_trace user;
	struct stack_trace kern;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct scratch);
	__uint(max_entries, 1);
} scratch SEC(".maps");

/* A global function, as stack_hash(): checked once, not again on every
 * path to each of its calls. */
__attribute__((noinline)) int stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		(*v)++;
	return 0;
}

/* Waking user space (profcap's notice thread) for each record costs more
 * than the record where a wake-up traps to the host: ~50 a second in a
 * compile loop. With lazy_wake (user space sets it while its side-band
 * records of mmap()s run, and clears it when those lose records), what
 * user space may take at its next drain goes without a wake-up: the notice
 * of a process exec()ed since (the side-band records hold its mappings:
 * execd) and a late walk of such a process whose files have tables. The
 * main thread takes both rings at each drain. Any other record, and one
 * that finds its ring a quarter full, wakes the notice thread at once:
 * FORCE, since a plain record only wakes it when the ring was empty. */
volatile __u32 lazy_wake = 0;

/* Processes exec()ed while profcap runs, until announced: tgid -> its
 * start time (a reused PID is another process). Filled by profcap_exec. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1024);
} execd SEC(".maps");

/* What `seen` holds for a process: announced, and announced lazily. */
#define SEEN_URGENT 1
#define SEEN_LAZY 2

/* bpf_ringbuf_output() flags for a record to @ring that may wait (@lazy). */
static __always_inline __u64 wake_flags(void *ring, int lazy)
{
	if (!lazy_wake)
		return 0;
	if (lazy && bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) <
			    bpf_ringbuf_query(ring, BPF_RB_RING_SIZE) / 4) {
		stat_inc(STAT_QUIET);
		return BPF_RB_NO_WAKEUP;
	}
	return BPF_RB_FORCE_WAKEUP;
}

/* A global function (BTF-checked, Linux >= 5.8 like the rest): the verifier
 * walks its loop once, not once per call site and path. */
__attribute__((noinline)) __u64 stack_hash(const struct stack_trace *st)
{
	__u64 h;
	__u32 i;

	if (!st)
		return 0;
	h = 0x9e3779b97f4a7c15ull ^ st->nr;

	for (i = 0; i < PROFCAP_MAX_STACK; i++) {
		if (i >= st->nr)
			break;
		h = (h ^ st->ips[i]) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

/* Read one stack into @st; returns its hash, 0 when there is none. */
static __always_inline __u64 read_stack(void *ctx, struct stack_trace *st, __u64 flags,
					void *stacks, __u32 err_flag, __u32 lost_flag,
					__u32 trunc_flag, __u32 *kflags)
{
	long n;
	__u64 h;

#ifdef PROFCAP_TASKWORK
	/* No @ctx: a task work callback, in the current task's context. */
	if (!ctx)
		n = bpf_get_task_stack(bpf_get_current_task_btf(), st->ips, sizeof(st->ips),
				       flags);
	else
#endif
		n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), flags);
	if (n < 0) {
		*kflags |= err_flag;
		return 0;
	}
	st->nr = (__u64)n / sizeof(__u64);
	if (!st->nr)
		return 0;
	if (st->nr >= PROFCAP_MAX_STACK)
		*kflags |= trunc_flag;
	h = stack_hash(st);
	if (!bpf_map_lookup_elem(stacks, &h)) {
		long err = bpf_map_update_elem(stacks, &h, st, BPF_NOEXIST);

		if (err && err != -17 /* EEXIST: another CPU stored it */) {
			*kflags |= lost_flag;
			stat_inc(STAT_STACKS_FULL);
			return 0;
		}
	}
	return h;
}

/* Late walking (issue 13): see struct late_sample and late_send(). */
const volatile __u32 want_late = 0;

/* ---- table unwinding (issue 4): bpf/unwind_bpf.h ---- */
#include "unwind_bpf.h"

/* Read the user and kernel stacks of the current thread into @stacks (and
 * @ext, deep user stacks) and set their hashes and flags. @regs is @ctx when
 * it is a struct pt_regs, NULL when not (the unwinder then takes the task's
 * saved user registers). @kstack NULL: no kernel stack. @tables (a constant)
 * 0: frame pointers only, as for a process without tables (the start-up
 * program, see profcap_quick); 1: the table unwinder; 2: the table unwinder
 * looping with bpf_loop() (see unwind_user()). */
static __always_inline void fill_stacks(void *ctx, void *regs, void *stacks, void *ext, __u32 tgid,
					__u64 *ustack, __u64 *kstack, __u32 *flags, int tables)
{
	__u32 zero = 0;
	struct scratch *s;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return;
	/* A task without an address space (a kernel thread; a process past
	 * exit_mm() in exit, freeing its memory) has no user stack: its PC
	 * alone would be a one-frame "partial" stack. */
	if (want_user && tgid && task_mm_off) {
		__u64 mm = 0;

		bpf_probe_read_kernel(&mm, sizeof(mm), (char *)bpf_get_current_task() + task_mm_off);
		if (!mm)
			tgid = 0;
	}
	if (want_user && tgid) {
		*ustack = tables && want_unwind
				  ? unwind_user(regs, stacks, ext, tgid, flags, tables == 2)
				  : ~0ull;
		if (*ustack == ~0ull) {
			*ustack = read_stack(ctx, &s->user, BPF_F_USER_STACK, stacks,
					     PROFCAP_F_USTACK_ERR, PROFCAP_F_USTACK_LOST,
					     PROFCAP_F_USTACK_TRUNC, flags);
			/* Frame pointers only, where tables were wanted: unverified. */
			if (want_unwind)
				*flags |= PROFCAP_F_USTACK_PARTIAL;
		}
	}
	if (want_kernel && kstack)
		*kstack = read_stack(ctx, &s->kern, 0, stacks, PROFCAP_F_KSTACK_ERR,
				     PROFCAP_F_KSTACK_LOST, PROFCAP_F_KSTACK_TRUNC, flags);
	if (*flags & PROFCAP_F_USTACK_ERR)
		stat_inc(STAT_USTACK_ERR);
	if (*flags & PROFCAP_F_KSTACK_ERR)
		stat_inc(STAT_KSTACK_ERR);
}

/* ---- late walking (issue 13): see struct late_sample ---- */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* sized by user space when late walking is on */
} late SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct late_sample);
	__uint(max_entries, 1);
} late_scratch SEC(".maps");

/* Fill @ls with the sample of @key (its kernel stack in the scratch when it
 * has one) and a copy of the user stack above @sp, and send it. 0 when
 * sent, -1 otherwise. */
static __always_inline int late_output(struct late_sample *ls, const struct sample_key *key,
				       __u64 sp, int lazy)
{
	__u32 zero = 0, first, len = 0, i;
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);

	if (!s)
		return -1;
	bpf_probe_read_kernel(&ls->key, sizeof(ls->key), key); /* as the stacks below */
	ls->key.ustack = 0;
	ls->key.kstack = 0;
	ls->sp = sp;
	ls->nkern = 0;
	if (key->kstack && s->kern.nr <= PROFCAP_MAX_STACK) {
		ls->nkern = (__u32)s->kern.nr;
		/* One helper call: the builtin is 254 instructions, which the
		 * verifier walks again on every path that gets here. */
		bpf_probe_read_kernel(ls->kips, sizeof(ls->kips), s->kern.ips);
	}
	/* The stack above sp, a page at a time: the first read ends at a page
	 * boundary, so a copy stops at the top of the stack's mapping, not
	 * before it. */
	first = 4096 - (__u32)(sp & 4095);
	if (first > 4096)
		return -1;
	if (!bpf_probe_read_user(ls->stack, first, (void *)sp)) {
		len = first;
		for (i = 0; i < PROFCAP_LATE_STACK / 4096 - 1; i++) {
			__u32 off = len;

			if (len > PROFCAP_LATE_STACK - 4096)
				break;
			/* A bound the verifier sees (the array has a page of slack). */
			asm volatile("%0 &= 0x3fff" : "+r"(off));
			if (bpf_probe_read_user(ls->stack + off, 4096, (void *)(sp + off)))
				break;
			len += 4096;
		}
	}
	if (len > PROFCAP_LATE_STACK)
		return -1;
	ls->len = len;
	if (bpf_ringbuf_output(&late, ls, offsetof(struct late_sample, stack) + len,
			       wake_flags(&late, lazy))) {
		stat_inc(STAT_LATE_LOST);
		return -1;
	}
	stat_inc(STAT_LATE);
	return 0;
}

/* Send the sample of @key to user space to be walked late, when its walk
 * stopped at a PC whose mapping this sample could not get (see late_ok).
 * 0 when sent (the sample is not counted here), -1 otherwise. */
static __always_inline int late_send(const struct sample_key *key)
{
	struct unwind_state *st;
	struct late_sample *ls;
	__u32 zero = 0, tgid = key->tgid;
	__u8 *seen_as;

	if (!want_late || !(key->flags & PROFCAP_F_USTACK_PARTIAL))
		return -1;
	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!st || st->done != 2 || st->why != USTAT_NO_MAPPING || !st->late_ok || !st->nr ||
	    st->nr > PROFCAP_LATE_PREFIX)
		return -1;
	ls = bpf_map_lookup_elem(&late_scratch, &zero);
	if (!ls)
		return -1;
	ls->pc = st->pc;
	ls->bp = st->bp;
	ls->bp_ok = st->bp_ok;
	ls->exact = st->exact;
	ls->nuser = (__u32)st->nr;
	bpf_probe_read_kernel(ls->uips, sizeof(ls->uips), st->ips); /* see late_output() */
	/* It may wait for a drain unless a file it stopped in has no table:
	 * user space builds that from the live process's files. */
	seen_as = bpf_map_lookup_elem(&seen, &tgid);
	return late_output(ls, key, st->sp, seen_as && *seen_as == SEEN_LAZY && !st->no_table);
}

/* The start-up program (frame pointers only, see profcap_quick): a sample
 * taken in user mode goes to user space whole, its registers and stack,
 * to be walked with the tables once they exist. 0 when sent. */
static __always_inline int late_send_quick(struct bpf_perf_event_data *ctx,
					   const struct sample_key *key)
{
	struct late_sample *ls;
	__u32 zero = 0;

	if (!want_late || !key->tgid || !(key->flags & PROFCAP_F_USTACK_PARTIAL) ||
	    (unwind_ctx_reg(ctx, offsetof(struct pt_regs, cs)) & 3) != 3)
		return -1;
	ls = bpf_map_lookup_elem(&late_scratch, &zero);
	if (!ls)
		return -1;
	ls->pc = unwind_ctx_reg(ctx, offsetof(struct pt_regs, rip));
	ls->bp = unwind_ctx_reg(ctx, offsetof(struct pt_regs, rbp));
	ls->bp_ok = 1;
	ls->exact = 1;
	ls->nuser = 1;
	ls->uips[0] = ls->pc;
	return late_output(ls, key, unwind_ctx_reg(ctx, offsetof(struct pt_regs, rsp)), 0);
}

/* ---- OpenTelemetry thread context (OTEP 4947) ----
 * For a process user space found `otel_thread_ctx_v1` in (threadctx_procs:
 * tgid -> where the variable is: at an offset from the thread pointer, or
 * in a module's block of the dynamic thread vector), read the thread
 * pointer (task_struct.thread.fsbase, at tctx_fsbase_off, from kernel BTF
 * found by user space: 0 = unknown, read nothing), the record pointer there,
 * then the record's 28-byte head. Only a record whose valid byte is 1 and
 * whose ids are not all zero gives ids; everything else (no pointer,
 * unmapped memory, a page not resident, valid 0 while the writer changes
 * it, garbage, zero ids) gives none. One map lookup for every other process,
 * none while no process has an entry. */
const volatile __u32 want_threadctx = 0;
__u64 tctx_fsbase_off = 0;
__u32 tctx_nprocs = 0; /* entries user space added: 0 = skip the lookup */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct threadctx_proc);
	__uint(max_entries, 1); /* PROFCAP_THREADCTX_PROCS when on */
} threadctx_procs SEC(".maps");

struct threadctx_head {
	__u64 trace_id[2];
	__u64 span_id;
	__u8 valid;
	__u8 trace_flags;
	__u16 attrs_size;
};

/* Where the thread whose thread pointer is @fsbase keeps the variable of
 * process entry @p: 0 and *@addr, 1 when the thread has no block for the
 * module (not allocated, or its dtv predates the module), -1 on a read
 * error. */
static __always_inline int threadctx_addr(const struct threadctx_proc *p, __u64 fsbase,
					  __u64 *addr)
{
	__u64 dtv = 0, count = 0, block = 0;
	__u32 musl = p->flags & PROFCAP_TCTX_DTV_MUSL;

	if (!p->modid) {
		*addr = fsbase + p->off;
		return 0;
	}
	if (bpf_probe_read_user(&dtv, sizeof(dtv), (void *)(fsbase + 8)) || !dtv ||
	    bpf_probe_read_user(&count, sizeof(count), (void *)(musl ? dtv : dtv - 16)))
		return -1;
	if (p->modid > count)
		return 1;
	if (bpf_probe_read_user(&block, sizeof(block),
				(void *)(dtv + (__u64)p->modid * (musl ? 8 : 16))))
		return -1;
	if (!block || block == ~0ull)
		return 1;
	*addr = block + p->off;
	return 0;
}

/* The current thread's context record of process @tgid: its address (0:
 * none), its ids into @trace_id (2 words) and @span_id, its attrs-data-size
 * into *@attrs_size. @count: add to the STAT_TCTX_* counters (CPU samples
 * only; the off-CPU path passes 0). */
static __always_inline __u64 threadctx_ids(__u32 tgid, __u64 *trace_id, __u64 *span_id,
					   __u32 *attrs_size, const __u32 count)
{
	struct threadctx_head h;
	__u64 fsbase = 0, rec = 0, off, addr = 0;
	const struct threadctx_proc *p;
	int err;

	if (!want_threadctx || !tctx_nprocs)
		return 0;
	p = bpf_map_lookup_elem(&threadctx_procs, &tgid);
	if (!p)
		return 0;
	off = tctx_fsbase_off;
	err = !off || bpf_probe_read_kernel(&fsbase, sizeof(fsbase),
					    (void *)(bpf_get_current_task() + off)) || !fsbase;
	err = err ? -1 : threadctx_addr(p, fsbase, &addr);
	if (!err && bpf_probe_read_user(&rec, sizeof(rec), (void *)addr))
		err = -1;
	if (!err && rec && (bpf_probe_read_user(&h, 28, (void *)rec) || h.valid != 1))
		err = -1;
	if (err < 0) {
		if (count)
			stat_inc(STAT_TCTX_BAD);
		return 0;
	}
	if (err || !rec || !(h.trace_id[0] | h.trace_id[1]) || !h.span_id) {
		if (count)
			stat_inc(STAT_TCTX_NONE); /* no record, no block, or zero ids */
		return 0;
	}
	trace_id[0] = h.trace_id[0];
	trace_id[1] = h.trace_id[1];
	*span_id = h.span_id;
	*attrs_size = h.attrs_size;
	if (count)
		stat_inc(STAT_TCTX_LINKED);
	return rec;
}

static __always_inline void read_threadctx(__u32 tgid, struct sample_key *key)
{
	__u32 asz = 0, n;
	__u64 rec = threadctx_ids(tgid, key->trace_id, &key->span_id, &asz, 1);

	if (!rec)
		return;
	n = asz;
	if (n > PROFCAP_TCTX_ATTRS)
		n = PROFCAP_TCTX_ATTRS;
	/* A failed read leaves no attributes (size 0), the ids still count. */
	if (n && !bpf_probe_read_user(key->attrs, n & 0x3f, (void *)(rec + 28)))
		key->attrs_size = asz;
	else if (n)
		__builtin_memset(key->attrs, 0, sizeof(key->attrs));
}

/* Count one sample. @full (a constant) 0: the start-up program's record,
 * without the table unwinder and thread context (see profcap_quick); else
 * fill_stacks()'s @tables. */
static __always_inline int record(void *ctx, void *counts, void *stacks, void *ext, __u32 tgid,
				  __u32 tid, const struct comm_key *comm, int full)
{
	struct sample_key key = {.tgid = tgid, .tid = tid};
	__u64 one = 1, *cnt;

	key.comm[0] = comm->w[0];
	key.comm[1] = comm->w[1];
	if (full)
		read_threadctx(tgid, &key);
	fill_stacks(ctx, ctx, stacks, ext, tgid, &key.ustack, &key.kstack, &key.flags, full);
	if (full ? !late_send(&key) : !late_send_quick(ctx, &key))
		return 0;

	cnt = bpf_map_lookup_elem(counts, &key);
	if (cnt) {
		__sync_fetch_and_add(cnt, 1);
		return 0;
	}
	if (bpf_map_update_elem(counts, &key, &one, BPF_NOEXIST)) {
		/* Another CPU may have inserted it meanwhile. */
		cnt = bpf_map_lookup_elem(counts, &key);
		if (cnt)
			__sync_fetch_and_add(cnt, 1);
		else
			stat_inc(STAT_COUNTS_FULL);
	}
	return 0;
}

/* The current task's process and thread IDs as profcap sees them: global
 * ones, or those of profcap's PID namespace. -1 for a task outside it. */
static __always_inline int current_ids(__u32 *tgid, __u32 *tid)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct bpf_pidns_info ns;

	*tgid = id >> 32;
	*tid = (__u32)id;
	if (!pidns_ino || !*tgid)
		return 0; /* the idle task is everybody's */
	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)))
		return -1;
	*tgid = ns.tgid;
	*tid = ns.pid;
	return 0;
}

static __always_inline int is_followed(void)
{
	__u32 gtgid = bpf_get_current_pid_tgid() >> 32;

	return follow_forks && bpf_map_lookup_elem(&followed, &gtgid);
}

static __always_inline int under_cgroups(void)
{
	__u32 i;

	for (i = 0; i < PROFCAP_MAX_CGROUPS; i++) {
		if (i >= filter_cgroups)
			break;
		if (bpf_current_task_under_cgroup(&cgroups, i) == 1)
			return 1;
	}
	return 0;
}

/* task_struct.group_leader and .start_boottime (kernel BTF; 0 = none): a
 * notice carries its process's start time, which user space otherwise
 * reads from /proc/PID/stat (costly for a running process: ~60 us each in
 * a compile loop). */
const volatile __u32 task_leader_off = 0;
const volatile __u32 task_start_off = 0;
const volatile __u32 task_cgroups_off = 0; /* task_struct.cgroups: its css_set */

/* mm_struct.arg_start and .arg_end (kernel BTF; 0 = none, with task_mm_off
 * of bpf/unwind_bpf.h): a notice carries its process's command line, which
 * user space otherwise reads from /proc/PID/cmdline (in a compile loop,
 * the lookup of a new process's /proc directory costs more than the read). */
const volatile __u32 mm_arg_start_off = 0;
const volatile __u32 mm_arg_end_off = 0;

struct notice_buf {
	struct proc_event e;
	char cmdline[PROFCAP_NOTICE_CMDLINE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct notice_buf);
	__uint(max_entries, 1);
} notice_scratch SEC(".maps");

/* The current process's command line into @n (n->e.cmdline_len bytes),
 * when it is process @tgid (an off-CPU record may be another's). */
static __always_inline void read_cmdline(struct notice_buf *n, __u32 tgid)
{
	__u64 mm = 0, lo = 0, hi = 0;
	__u32 len;

	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != tgid || !task_mm_off ||
	    !mm_arg_start_off || !mm_arg_end_off ||
	    bpf_probe_read_kernel(&mm, sizeof(mm), (char *)bpf_get_current_task() + task_mm_off) ||
	    !mm || bpf_probe_read_kernel(&lo, sizeof(lo), (char *)mm + mm_arg_start_off) ||
	    bpf_probe_read_kernel(&hi, sizeof(hi), (char *)mm + mm_arg_end_off) || hi <= lo ||
	    hi - lo > PROFCAP_NOTICE_CMDLINE)
		return;
	len = (__u32)(hi - lo);
	if (len > PROFCAP_NOTICE_CMDLINE)
		return;
	if (!bpf_probe_read_user(n->cmdline, len, (const void *)lo))
		n->e.cmdline_len = len;
}

/* Tell user space about a process the first time one of its threads is
 * recorded, so it reads its maps (and unwind tables) while it lives. */
static __always_inline void notice_process(__u32 tgid)
{
	struct notice_buf *n;
	struct proc_event *e;
	__u64 leader = 0, ns = 0, *exec_ns;
	__u32 zero = 0, len;
	__u8 seen_as = SEEN_URGENT;

	if (!tgid || bpf_map_lookup_elem(&seen, &tgid))
		return;
	n = bpf_map_lookup_elem(&notice_scratch, &zero);
	if (!n)
		return;
	e = &n->e;
	e->tgid = tgid;
	e->pad = 0;
	e->start = 0;
	e->cgroup = bpf_get_current_cgroup_id();
	e->css = 0;
	e->cmdline_len = 0;
	e->pad2 = 0;
	if (task_cgroups_off)
		bpf_probe_read_kernel(&e->css, sizeof(e->css),
				      (char *)bpf_get_current_task() + task_cgroups_off);
	if (task_leader_off && task_start_off &&
	    !bpf_probe_read_kernel(&leader, sizeof(leader),
				   (char *)bpf_get_current_task() + task_leader_off) &&
	    leader && !bpf_probe_read_kernel(&ns, sizeof(ns), (char *)leader + task_start_off))
		e->start = ns / 10000000; /* USER_HZ (100), as /proc/PID/stat */
	exec_ns = bpf_map_lookup_elem(&execd, &tgid);
	if (exec_ns) {
		if (ns && *exec_ns == ns)
			seen_as = SEEN_LAZY; /* exec()ed since: see lazy_wake */
		bpf_map_delete_elem(&execd, &tgid);
	}
	bpf_map_update_elem(&seen, &tgid, &seen_as, BPF_ANY);
	read_cmdline(n, tgid);
	len = e->cmdline_len;
	if (len > PROFCAP_NOTICE_CMDLINE)
		len = 0;
	if (bpf_ringbuf_output(&events, n, sizeof(*e) + len,
			       wake_flags(&events, seen_as == SEEN_LAZY)))
		stat_inc(STAT_EVENTS_LOST);
}

/* One cpu-clock tick: filter, announce, count. @full as for record(). */
static __always_inline int sample(struct bpf_perf_event_data *ctx, int full)
{
	struct comm_key comm = {};
	__u32 tgid, tid;

	if (current_ids(&tgid, &tid)) {
		stat_inc(STAT_FOREIGN);
		return 0;
	}
	if (skip_idle && !tgid)
		return 0;
	if (filter_pids && !bpf_map_lookup_elem(&pids, &tgid) && !is_followed())
		return 0;
	if (filter_tids && !bpf_map_lookup_elem(&tids, &tid))
		return 0;
	bpf_get_current_comm(comm.w, sizeof(comm.w));
	if (filter_comms && !bpf_map_lookup_elem(&comms, &comm))
		return 0;
	if (filter_cgroups && !under_cgroups())
		return 0;
	stat_inc(STAT_SAMPLES);
	if (!first_sample_ns)
		first_sample_ns = bpf_ktime_get_ns();

	notice_process(tgid);

	/* The start-up program counts into generation 0: user space drains
	 * (and swaps generations) only after the hand-over. */
	if (full && (gen & 1))
		return record(ctx, &counts1, &stacks1, &ustack_ext1, tgid, tid, &comm, full);
	return record(ctx, &counts0, &stacks0, &ustack_ext0, tgid, tid, &comm, full);
}

/* User space loads one of these two: the first on Linux >= 5.17. */
SEC("perf_event")
int profcap_sample(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, 2);
}

SEC("perf_event")
int profcap_sample_bounded(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, 1);
}

/* ---- quick start (issue 13) ----
 * Verifying profcap_sample (the table unwinder) and reading the kernel BTF
 * its configuration needs take a few hundred ms. So user space first loads
 * profcap_quick alone, in a second object whose maps are the sample maps of
 * the first (counts, stacks, seen, events, stats, filters), and samples with
 * it at once: frame-pointer user stacks, flagged partial when tables were
 * wanted, exactly what profcap_sample records for a process whose tables are
 * not loaded yet, into generation 0 (nothing is drained before the
 * hand-over). profcap_sample is then loaded in the background and put
 * into `handover`: from that update on, every tick of profcap_quick tail-
 * calls it before doing anything, so a tick is counted by one program or
 * the other, never both and never neither (same perf events, no gap). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} handover SEC(".maps");

SEC("perf_event")
int profcap_quick(struct bpf_perf_event_data *ctx)
{
	bpf_tail_call(ctx, &handover, 0);
	return sample(ctx, 0); /* not handed over yet */
}

/* ---- following new processes: three ways onto sched_process_fork --------
 * User space loads exactly one of these (bpf_program__set_autoload):
 *   profcap_fork_raw  raw_tracepoint/sched_process_fork (kernel BTF, >= 4.17)
 *   profcap_fork_btf  tp_btf/sched_process_fork (kernel BTF, Linux >= 5.5)
 *   profcap_fork_tp   tracepoint/sched/sched_process_fork (tracefs)
 * The first two get the task pointers (parent, child) and read the child's
 * pid at fork_pid_off, the offset of task_struct.pid that user space found
 * in the kernel's BTF (no CO-RE relocations: the object must load on
 * kernels without BTF). The third reads child_pid from the tracepoint
 * record at fork_child_off, from the tracepoint's format file: 20 (comms as
 * __data_loc words, Linux >= 6.10) or 44 (comms inline). */
const volatile __u32 fork_pid_off = 0;

/* Runs in the parent: when it is a kept process, its child will be too.
 * @child is the child's global PID, the key of `followed`. */
static __always_inline int follow_child(__u32 child)
{
	__u32 tgid, tid;
	__u8 one = 1;

	if (current_ids(&tgid, &tid))
		return 0;
	if (!bpf_map_lookup_elem(&pids, &tgid) && !is_followed())
		return 0;
	bpf_map_update_elem(&followed, &child, &one, BPF_ANY);
	return 0;
}

static __always_inline int follow_task(__u64 task)
{
	__s32 pid = 0;

	if (!task || bpf_probe_read_kernel(&pid, sizeof(pid), (void *)(task + fork_pid_off)))
		return 0;
	return pid > 0 ? follow_child((__u32)pid) : 0;
}

SEC("tp_btf/sched_process_fork")
int profcap_fork_btf(__u64 *ctx)
{
	return follow_task(ctx[1]);
}

SEC("raw_tracepoint/sched_process_fork")
int profcap_fork_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return follow_task(ctx->args[1]);
}

SEC("tracepoint/sched/sched_process_fork")
int profcap_fork_tp(void *ctx)
{
	__u32 child;

	if (bpf_probe_read_kernel(&child, sizeof(child), (char *)ctx + fork_child_off))
		return 0;
	return follow_child(child);
}

/* A process that exec()s is another program with the same PID: forget that
 * it was announced, so its next sample announces it again and user space
 * reads its new mappings (unwind tables, symbols) at once. A raw tracepoint:
 * attached by name, no tracefs needed (Linux >= 4.17). */
SEC("raw_tp/sched_process_exec")
int profcap_exec(void *ctx)
{
	__u64 task, ns = 0;
	__u32 tgid, tid;

	if (current_ids(&tgid, &tid) || !tgid)
		return 0;
	bpf_map_delete_elem(&seen, &tgid);
	/* After the exec, this thread leads its group, with the leader's
	 * start time: the one notice_process() reads. */
	task = bpf_get_current_task();
	if (task_start_off &&
	    !bpf_probe_read_kernel(&ns, sizeof(ns), (char *)task + task_start_off) && ns)
		bpf_map_update_elem(&execd, &tgid, &ns, BPF_ANY);
	unwind_exec_seed(tgid);
	return 0;
}

/* ---- off-CPU time (issue 15): bpf/offcpu_bpf.h ---- */
#include "offcpu_bpf.h"

char LICENSE[] SEC("license") = "GPL";
