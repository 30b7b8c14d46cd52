/* unwind.bpf.h - the user and kernel stacks of a sample: the table walker
 * of unwind.bpf.c (rows user space compiled from .eh_frame, see unwind.h)
 * where the process has tables, else the kernel's frame-pointer walk. */
#ifndef PROFCAP_BPF_UNWIND_BPF_H
#define PROFCAP_BPF_UNWIND_BPF_H

#include "stacks.bpf.h"
#include "unwind.h"

extern const volatile __u32 want_unwind;      /* walk user stacks with the tables */
extern const volatile __u32 unwind_task_regs; /* kernel BTF: user regs of kernel-mode samples */
extern const volatile __u32 unwind_vma;	      /* mappings found from VMAs (Linux >= 5.17) */
/* Late walking: a walk that stops at a PC whose mapping this sample could
 * not get goes to user space (struct late_sample, sample.bpf.c). */
extern const volatile __u32 want_late;

struct unwind_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);	/* number of mappings */
	__uint(max_entries, 1); /* sized by user space */
};

extern struct unwind_procs_map unwind_procs SEC(".maps");

/* Per-CPU walk state, one per enum scratch_slot. Starts like struct stack_trace, so the first
 * PROFCAP_MAX_STACK frames are stored straight from it. */
struct unwind_state {
	__u64 nr;
	__u64 ips[PROFCAP_MAX_USTACK];
	__u64 pc, sp, bp;
	__u64 hash;
	struct unwind_map m; /* mapping of the previous frame */
	__u32 tgid;
	__u32 nmaps;
	__u32 have_map;
	__u32 exact;	 /* pc is an exact PC (leaf, after a signal frame) */
	__u32 bp_ok;	 /* bp holds the real rbp */
	__u32 done;	 /* 1 complete, 2 partial */
	__u32 why;	 /* USTAT_* of a partial walk */
	__u32 vma_tried; /* bpf_find_vma() called in this sample (once only) */
	/* A PC needed a mapping this sample could not give (a second VMA, a
	 * file whose table is not built yet): user space can finish the walk
	 * (late walking, cpu_sampler.h struct late_sample). */
	__u32 late_ok;
	/* The sampled PC lies in no VMA at all: the registers are not of this
	 * address space (a sample inside execve(), after the old one went). */
	__u32 stale_regs;
	/* A VMA this sample found is of a file without a table (yet). */
	__u32 no_table;
	__u64 stack_lo; /* sp of the sampled frame */
};

struct unwind_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct unwind_state);
	__uint(max_entries, SCRATCH_SLOTS);
};

extern struct unwind_scratch_map unwind_scratch SEC(".maps");

/* Global functions of unwind.bpf.c. */
int ustat_inc(__u32 which);
/* One frame of the walk in slot @slot of unwind_scratch: 0 to go on, 1
 * when over. */
int unwind_step(__u32 slot);
/* At the exec of process @tgid (its own context): keep the mapping of its
 * program's text when that file has a table (unwind_exec_map). */
int unwind_exec_seed(__u32 tgid);

/* Register at byte @off of the sample's pt_regs. In asm: clang would
 * otherwise add the offset to the ctx pointer first, and the verifier only
 * accepts ctx loads with a constant offset in the instruction. */
#define unwind_ctx_reg(ctx, off)                                                         \
	({                                                                               \
		__u64 v__;                                                               \
		asm volatile("%0 = *(u64 *)(%1 + %2)" : "=r"(v__) : "r"(ctx), "i"(off)); \
		v__;                                                                     \
	})

/* bpf_loop() callback: one frame per call, 1 stops; @data points to the
 * slot. Inline only so that a unit which does not walk has no unused
 * function. */
static inline long unwind_loop_cb(__u32 i, void *data)
{
	(void)i;
	return unwind_step(*(__u32 *)data) ? 1 : 0;
}

/* The user registers of the sampled thread, 0 or -1. */
static __always_inline int unwind_user_regs(struct bpf_perf_event_data *ctx,
					    struct unwind_state *st)
{
	struct pt_regs regs;

	/* No @ctx (programs whose context is not pt_regs): the task's regs. */
	if (ctx && (unwind_ctx_reg(ctx, offsetof(struct pt_regs, cs)) & 3) == 3) {
		st->pc = unwind_ctx_reg(ctx, offsetof(struct pt_regs, rip));
		st->sp = unwind_ctx_reg(ctx, offsetof(struct pt_regs, rsp));
		st->bp = unwind_ctx_reg(ctx, offsetof(struct pt_regs, rbp));
		return 0;
	}
	if (!unwind_task_regs)
		return -1;
	ustat_inc(USTAT_KERNEL_REGS);
	if (bpf_probe_read_kernel(&regs, sizeof(regs),
				  (void *)bpf_task_pt_regs(bpf_get_current_task_btf())))
		return -1;
	if ((regs.cs & 3) != 3)
		return -1; /* a kernel thread */
	st->pc = regs.rip;
	st->sp = regs.rsp;
	st->bp = regs.rbp;
	return 0;
}

/* Walk the user stack of @tgid into @stacks (first PROFCAP_MAX_STACK frames)
 * and @ext (the rest). Returns the stack's hash, 0 when there is none, or
 * -1 (as __u64 ~0) when the tables cannot be used for this sample: the
 * caller then reads a frame-pointer stack and flags it partial. @loop (a
 * constant) 1: the frames are walked by bpf_loop() (Linux >= 5.17), so the
 * verifier checks one iteration, not PROFCAP_MAX_USTACK + 1 of them; 0: a
 * bounded loop (older kernels). @slot (a constant): the caller's
 * enum scratch_slot. */
static __always_inline __u64 unwind_user(struct bpf_perf_event_data *ctx, void *stacks, void *ext,
					 __u32 tgid, __u32 *kflags, int loop, __u32 slot)
{
	__u32 *nmaps, i;
	struct unwind_state *st;
	long err;

	st = bpf_map_lookup_elem(&unwind_scratch, &slot);
	if (!st)
		return ~0ull;
	st->done = 0; /* no walk in this sample (yet): nothing for late walking */
	nmaps = bpf_map_lookup_elem(&unwind_procs, &tgid);
	if (!nmaps) {
		ustat_inc(USTAT_NO_PROC);
		if (!unwind_vma) /* else every mapping comes from the VMAs */
			return ~0ull;
	}
	if (unwind_user_regs(ctx, st))
		return ~0ull;
	st->nr = 0;
	st->hash = 0x9e3779b97f4a7c15ull;
	st->tgid = tgid;
	st->nmaps = nmaps ? *nmaps : 0;
	st->have_map = 0;
	st->vma_tried = 0;
	st->late_ok = 0;
	st->stale_regs = 0;
	st->no_table = 0;
	st->exact = 1;
	st->bp_ok = 1;
	st->stack_lo = st->sp;
	st->done = 0;
	st->why = 0;
	if (loop)
		bpf_loop(PROFCAP_MAX_USTACK + 1, unwind_loop_cb, &slot, 0);
	else
		for (i = 0; i < PROFCAP_MAX_USTACK + 1; i++)
			if (unwind_step(slot))
				break;
	if (st->stale_regs)
		return 0; /* no user stack to speak of */
	if (st->done == 1) {
		ustat_inc(USTAT_COMPLETE);
	} else {
		*kflags |= PROFCAP_F_USTACK_PARTIAL;
		if (st->why == USTAT_DEPTH)
			*kflags |= PROFCAP_F_USTACK_TRUNC;
		ustat_inc(USTAT_PARTIAL);
		ustat_inc(st->why ? st->why : USTAT_NO_ROW);
	}
	if (!st->nr)
		return 0;
	st->hash ^= st->nr;
	if (!st->hash)
		st->hash = 1;
	if (!bpf_map_lookup_elem(stacks, &st->hash)) {
		err = bpf_map_update_elem(stacks, &st->hash, st, BPF_NOEXIST);
		if (err && err != -PROFCAP_EEXIST) {
			*kflags |= PROFCAP_F_USTACK_LOST;
			stat_inc(STAT_STACKS_FULL);
			return 0;
		}
		if (st->nr > PROFCAP_MAX_STACK) {
			err = bpf_map_update_elem(ext, &st->hash, &st->ips[PROFCAP_MAX_STACK],
						  BPF_NOEXIST);
			if (err && err != -PROFCAP_EEXIST) {
				/* The head is stored; the tail is lost. */
				*kflags |= PROFCAP_F_USTACK_PARTIAL;
				ustat_inc(USTAT_EXT_FULL);
			}
		}
	}
	return st->hash;
}

/* Read one stack with the kernel's walker into @st; returns its hash, 0
 * when there is none. @ctx NULL: a task work callback, in the current
 * task's context. */
static __always_inline __u64 read_stack(void *ctx, struct stack_trace *st, __u64 flags,
					void *stacks, __u32 err_flag, __u32 lost_flag,
					__u32 trunc_flag, __u32 *kflags)
{
	long n;

	if (!ctx)
		n = bpf_get_task_stack(bpf_get_current_task_btf(), st->ips, sizeof(st->ips),
				       flags);
	else
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
	return put_stack(stacks, st, lost_flag, kflags);
}

/* Read the user and kernel stacks of the current thread into @stacks (and
 * @ext, deep user stacks) and set their hashes and flags. @regs is @ctx when
 * it is a struct pt_regs, NULL when not (the unwinder then takes the task's
 * saved user registers). @kstack NULL: no kernel stack. @tables (a constant)
 * 0: frame pointers only, as for a process without tables (the start-up
 * program, see profcap_quick); 1: the table unwinder; 2: the table unwinder
 * looping with bpf_loop() (see unwind_user()). @slot (a constant): the
 * caller's enum scratch_slot. */
static __always_inline void fill_stacks_in(__u32 slot, void *ctx, void *regs, void *stacks,
					   void *ext, __u32 tgid, __u64 *ustack, __u64 *kstack,
					   __u32 *flags, int tables)
{
	struct scratch *s;

	s = bpf_map_lookup_elem(&scratch, &slot);
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
				  ? unwind_user(regs, stacks, ext, tgid, flags, tables == 2, slot)
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

/* fill_stacks_in() of a perf_event program (slot SCRATCH_SAMPLE). */
static __always_inline void fill_stacks(void *ctx, void *regs, void *stacks, void *ext, __u32 tgid,
					__u64 *ustack, __u64 *kstack, __u32 *flags, int tables)
{
	fill_stacks_in(SCRATCH_SAMPLE, ctx, regs, stacks, ext, tgid, ustack, kstack, flags, tables);
}

#endif
