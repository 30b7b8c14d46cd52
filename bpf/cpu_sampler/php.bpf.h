/* php.bpf.h - the PHP frames of the sampled thread (php.bpf.c): for a
 * process user space found PHP in (php_procs), walk the executor's frames
 * from executor_globals.current_execute_data to the outermost and store
 * them as a stack of their own (bpf/php.h says how the words are laid
 * out). One map lookup for every other process, none while no process
 * ever had an entry.
 *
 * PHP without threads (NTS, the CLI and FPM builds) keeps one executor per
 * process, run by its main thread: only that thread is walked.
 */
#ifndef PROFCAP_BPF_PHP_BPF_H
#define PROFCAP_BPF_PHP_BPF_H

#include "stacks.bpf.h"
#include "unwind.bpf.h"
#include "php.h"

#define PHP_FBUF 256 /* a power of two: field offsets are masked with it */

extern const volatile __u32 want_php; /* 0: the walker is never run */
extern __u32 php_nprocs;	      /* entries user space ever added: 0 = skip the lookup */

struct php_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct php_proc);
	__uint(max_entries, PROFCAP_PHP_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

extern struct php_procs_map php_procs SEC(".maps");

/* Per-CPU walk state, one per enum scratch_slot: the stack first, so it
 * is stored straight from it. */
struct php_walk_state {
	struct stack_trace st;
	struct php_proc p;  /* the process's entry */
	__u64 ex;	    /* next frame to read, 0 = none */
	__u64 ip, r14, r15; /* the interrupted user registers, 0s when unknown */
	__u64 leaf_ex;	    /* the running frame, when the executor's registers hold it */
	__u64 leaf_opline;  /* ... its opline, from the register */
	__u32 nframes;	    /* frames stored in st */
	__u32 flags;	    /* PROFCAP_F_PHP_* of the walk */
	__u32 steps;	    /* frames read */
	__u32 pad;
	__u8 exbuf[PROFCAP_PHP_EX_READ + 8];
	__u8 fbuf[PHP_FBUF + 8];
};

struct php_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct php_walk_state);
	__uint(max_entries, SCRATCH_SLOTS);
};

extern struct php_scratch_map php_scratch SEC(".maps");

/* Global functions of php.bpf.c: walk the PHP stack of process @tgid
 * into slot @slot of php_scratch (the state's ip, r14, r15: the
 * interrupted user registers, 0 when unknown) and store it in stacks1
 * when @g1, else stacks0: its hash, 0 when there is none (not a PHP
 * process, no PHP code running, or not stored: the state's flags say).
 * php_walk_loop() steps with bpf_loop() (Linux >= 5.17). Global, so the
 * verifier checks the walk and the store once, not at each caller. */
__u64 php_walk_loop(__u32 tgid, __u32 slot, __u32 g1);
__u64 php_walk_bounded(__u32 tgid, __u32 slot, __u32 g1);
int php_frame_step(__u32 slot);

/* The PHP stack of the current thread stored in @stacks: its hash (0 =
 * none), PROFCAP_F_PHP_* into *@kflags. @ctx: the perf event's (its user
 * registers, when it interrupted user code, place the running line), or
 * NULL. @loop (a constant) as for unwind_user(); @slot (a constant) the
 * caller's enum scratch_slot. */
static __always_inline __u64 php_stack_in(__u32 slot, void *ctx, void *stacks, __u32 tgid,
					  __u32 tid, __u32 *kflags, const int loop)
{
	struct php_walk_state *w;
	__u32 g1 = stacks == (void *)&stacks1;
	__u64 h;

	if (!want_php || !php_nprocs || !tgid || tid != tgid)
		return 0;
	w = bpf_map_lookup_elem(&php_scratch, &slot);
	if (!w)
		return 0;
	w->flags = 0;
	w->ip = w->r14 = w->r15 = 0;
	if (ctx && (unwind_ctx_reg(ctx, offsetof(struct pt_regs, cs)) & 3) == 3) {
		w->ip = unwind_ctx_reg(ctx, offsetof(struct pt_regs, rip));
		w->r14 = unwind_ctx_reg(ctx, offsetof(struct pt_regs, r14));
		w->r15 = unwind_ctx_reg(ctx, offsetof(struct pt_regs, r15));
	}
	h = loop ? php_walk_loop(tgid, slot, g1) : php_walk_bounded(tgid, slot, g1);
	*kflags |= w->flags;
	return h;
}

/* php_stack_in() of a perf_event program (slot SCRATCH_SAMPLE). */
static __always_inline __u64 php_stack(void *ctx, void *stacks, __u32 tgid, __u32 tid,
				       __u32 *kflags, const int loop)
{
	return php_stack_in(SCRATCH_SAMPLE, ctx, stacks, tgid, tid, kflags, loop);
}

#endif
