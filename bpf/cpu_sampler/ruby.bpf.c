// SPDX-License-Identifier: GPL-2.0
/* ruby.bpf.c - the CRuby walker (ruby.bpf.h): the sampled thread's own
 * rb_thread_t, then its control frames, innermost first.
 *
 * The thread: the one in the main ractor's list of threads whose
 * thread_id is the thread's pthread_self(), its thread pointer
 * (task_struct.thread.fsbase, the offset threadctx.bpf.h reads it with),
 * or without kernel BTF whose tid is the thread's ID. Found by walking the
 * list (at most PROFCAP_RUBY_MAX_THREADS) and kept per thread in an LRU
 * (ruby_threads), checked again at every use: an rb_thread_t freed and
 * reused for another thread is not taken for this one's. A thread found in
 * no list is not looked for again for RUBY_RESCAN_NS.
 *
 * The frames: from the thread's execution context (its fiber's), cfp up to
 * the end of the VM stack (vm_stack + vm_stack_size words): per control
 * frame one read of its head and one of ep[0], the frame's flags. A Ruby
 * frame (no CFRAME flag) reads its iseq's body pointer and the body's head
 * (the encoded instructions, the first line: the fingerprint); a C
 * function frame its method entry (ep[-2]) and the entry's definition;
 * other C frames (ifunc blocks)
 * and the VM's dummy frames are not stored. A read that fails mid-walk ends the
 * stack there, flagged PROFCAP_F_RUBY_PARTIAL.
 */
#include "ruby.bpf.h"
#include "threadctx.bpf.h"

__u32 ruby_nprocs = 0;
const volatile __u32 want_ruby = 0;

struct ruby_procs_map ruby_procs SEC(".maps");
struct ruby_scratch_map ruby_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);   /* tgid << 32 | tid */
	__type(value, __u64); /* its rb_thread_t; low bit set: none, since that time */
	__uint(max_entries, PROFCAP_RUBY_THREADS);
} ruby_threads SEC(".maps");

#define RUBY_RESCAN_NS 200000000ull
/* Control frames read at most: the stored ones, C frames not stored
 * between them, and one to see that the stack goes on. */
#define RUBY_STEPS (PROFCAP_RUBY_MAX_FRAMES + 22)

/* Is rb_thread_t @th the current thread's? 1 yes, 0 no, -1 unreadable.
 * Reads land in the state, not on the stack: the off-CPU programs call
 * the walk deep in theirs. */
static __always_inline int ruby_is_thread(struct ruby_walk_state *w, __u64 th, __u64 fsbase,
					  __u32 tid)
{
	w->me = 0;
	if (fsbase) {
		if (bpf_probe_read_user(&w->me, sizeof(w->me), (void *)(th + w->p.thread_id)))
			return -1;
		return w->me == fsbase;
	}
	if (bpf_probe_read_user(&w->me, sizeof(__u32), (void *)(th + w->p.thread_tid)))
		return -1;
	return (__u32)w->me == tid;
}

/* One node of the ractor's thread list in slot @slot (w->body, the list's
 * head in w->ep0): 1 when it is the current thread's (w->val), 0 to go on
 * (w->body the next node), -1 when over (end, or unreadable). Global: the
 * verifier checks it once, not on every pass of the list's loop. */
__attribute__((noinline)) int ruby_thread_step(__u32 slot, __u64 fsbase, __u32 tid)
{
	struct ruby_walk_state *w = bpf_map_lookup_elem(&ruby_scratch, &slot);
	int m;

	if (!w || !w->body || w->body == w->ep0)
		return -1;
	w->val = w->body - w->p.thread_node;
	m = ruby_is_thread(w, w->val, fsbase, tid);
	if (m)
		return m;
	return bpf_probe_read_user(&w->body, sizeof(w->body), (void *)w->body) ? -1 : 0;
}

/* The current thread's rb_thread_t (slot @slot's state @w), 0 when it has
 * none. */
static __always_inline __u64 ruby_find_thread(struct ruby_walk_state *w, __u32 slot, __u32 tgid,
					      __u32 tid)
{
	__u64 fsbase = 0, th, *c;
	int i, m = -1;

	if (tctx_fsbase_off)
		bpf_probe_read_kernel(&fsbase, sizeof(fsbase),
				      (void *)(bpf_get_current_task() + tctx_fsbase_off));
	w->key = (__u64)tgid << 32 | tid;
	c = bpf_map_lookup_elem(&ruby_threads, &w->key);
	if (c) {
		th = *c;
		if (th & 1) {
			if (bpf_ktime_get_ns() - (th & ~1ull) < RUBY_RESCAN_NS)
				return 0;
		} else if (ruby_is_thread(w, th, fsbase, tid) == 1) {
			return th;
		}
	}
	w->ep0 = 0;
	if (bpf_probe_read_user(&w->ep0, sizeof(w->ep0), (void *)w->p.vm_ptr) || !w->ep0 ||
	    bpf_probe_read_user(&w->ep0, sizeof(w->ep0), (void *)(w->ep0 + w->p.vm_main_ractor)) ||
	    !w->ep0)
		return 0;	       /* not initialized yet, or torn down: look again next time */
	w->ep0 += w->p.ractor_threads; /* the list's head */
	if (bpf_probe_read_user(&w->body, sizeof(w->body), (void *)w->ep0))
		return 0;
	for (i = 0; i < PROFCAP_RUBY_MAX_THREADS; i++) {
		m = ruby_thread_step(slot, fsbase, tid);
		if (m)
			break;
	}
	if (m == 1) {
		th = w->val;
		bpf_map_update_elem(&ruby_threads, &w->key, &w->val, BPF_ANY);
		return th;
	}
	w->val = bpf_ktime_get_ns() | 1;
	bpf_map_update_elem(&ruby_threads, &w->key, &w->val, BPF_ANY);
	return 0;
}

/* Store frame words at the state's next index: 0, or 1 when full. */
static __always_inline int ruby_store(struct ruby_walk_state *w, __u64 w0, __u64 w1, __u64 w2)
{
	__u32 n = w->nframes, i;

	if (n >= PROFCAP_RUBY_MAX_FRAMES)
		return 1;
	i = PROFCAP_RUBY_WORDS * n;
	asm volatile("" : "+r"(i)); /* the bound below, as the verifier sees it */
	if (i > PROFCAP_RUBY_WORDS * (PROFCAP_RUBY_MAX_FRAMES - 1))
		return 1;
	w->st.ips[i] = w0;
	w->st.ips[i + 1] = w1;
	w->st.ips[i + 2] = w2;
	w->nframes = n + 1;
	return 0;
}

/* A field of the control frame or body read into the state (offsets
 * checked by user space; the masks are what the verifier sees). */
#define CF(w, off) ((w)->cf[((off) >> 3) & 7])
#define BODY(w, off) ((w)->b[((off) >> 3) & 15])

/* The Ruby frame of control frame w->cf (its flags @ep0). */
static __always_inline int ruby_iseq_frame(struct ruby_walk_state *w, __u64 ep0)
{
	__u64 iseq = CF(w, w->p.cfp_iseq), pc = CF(w, w->p.cfp_pc), code, first, idx, fp;
	__u32 fl = ep0 & PROFCAP_RUBY_VM_FLAG_FINISH ? PROFCAP_RUBY_FRAME_FINISH : 0;

	w->body = 0;
	if (!iseq ||
	    bpf_probe_read_user(&w->body, sizeof(w->body), (void *)(iseq + w->p.iseq_body)) ||
	    !w->body || bpf_probe_read_user(w->b, PROFCAP_RUBY_BODY_READ, (void *)w->body)) {
		w->flags |= PROFCAP_F_RUBY_PARTIAL;
		return ruby_store(w, iseq & PROFCAP_RUBY_ADDR_MASK,
				  PROFCAP_RUBY_NO_PC | (__u64)PROFCAP_RUBY_KIND_ISEQ << 32 |
					  (__u64)(fl | PROFCAP_RUBY_FRAME_NOBODY) << 40,
				  0);
	}
	code = BODY(w, w->p.body_encoded);
	first = BODY(w, w->p.body_first_lineno);
	idx = PROFCAP_RUBY_NO_PC;
	if (pc >= code && pc && (pc - code) / 8 < PROFCAP_RUBY_NO_PC)
		idx = (pc - code) / 8;
	fp = profcap_ruby_fingerprint(w->body, first);
	return ruby_store(w, (iseq & PROFCAP_RUBY_ADDR_MASK) | fp << PROFCAP_RUBY_FP_SHIFT,
			  idx | (__u64)PROFCAP_RUBY_KIND_ISEQ << 32 | (__u64)fl << 40, w->body);
}

/* One control frame of the walk: 0 to go on, 1 when over. */
static __always_inline int ruby_step(struct ruby_walk_state *w)
{
	__u64 cfp = w->cfp, ep;
	__u32 fl;

	if (!cfp || cfp >= w->end)
		return 1;
	if (w->nframes >= PROFCAP_RUBY_MAX_FRAMES || ++w->steps >= RUBY_STEPS) {
		w->flags |= PROFCAP_F_RUBY_TRUNC;
		return 1;
	}
	w->ep0 = 0;
	if (bpf_probe_read_user(w->cf, PROFCAP_RUBY_CFP_READ, (void *)cfp) ||
	    !(ep = CF(w, w->p.cfp_ep)) ||
	    bpf_probe_read_user(&w->ep0, sizeof(w->ep0), (void *)ep)) {
		w->flags |= PROFCAP_F_RUBY_PARTIAL;
		return 1;
	}
	w->cfp = cfp + w->p.cfp_size;
	/* The dummy frame at the end of each stack runs no code, even where
	 * the VM gave it an iseq (the main thread's) */
	if ((w->ep0 & PROFCAP_RUBY_VM_MAGIC_MASK) == PROFCAP_RUBY_VM_MAGIC_DUMMY)
		return 0;
	if (!(w->ep0 & PROFCAP_RUBY_VM_FLAG_CFRAME))
		return ruby_iseq_frame(w, w->ep0);
	if ((w->ep0 & PROFCAP_RUBY_VM_MAGIC_MASK) != PROFCAP_RUBY_VM_MAGIC_CFUNC)
		return 0; /* the VM's own frames, C blocks: not stored */
	w->me = 0;
	w->body = 0;
	if (!bpf_probe_read_user(&w->me, sizeof(w->me), (void *)(ep + w->p.ep_me)) && w->me)
		bpf_probe_read_user(&w->body, sizeof(w->body), (void *)(w->me + w->p.me_def));
	fl = w->ep0 & PROFCAP_RUBY_VM_FLAG_FINISH ? PROFCAP_RUBY_FRAME_FINISH : 0;
	return ruby_store(w, w->me & PROFCAP_RUBY_ADDR_MASK,
			  PROFCAP_RUBY_NO_PC | (__u64)PROFCAP_RUBY_KIND_CFUNC << 32 |
				  (__u64)fl << 40,
			  w->body);
}

/* Set up the walk of the current thread in slot @slot of ruby_scratch: 1,
 * or 0 when it has no Ruby stack. */
static __always_inline int ruby_begin(__u32 tgid, __u32 tid, __u32 slot)
{
	const struct ruby_proc *p;
	struct ruby_walk_state *w;
	__u64 th, size;

	p = bpf_map_lookup_elem(&ruby_procs, &tgid);
	w = bpf_map_lookup_elem(&ruby_scratch, &slot);
	if (!p || !w)
		return 0;
	__builtin_memcpy(&w->p, p, sizeof(w->p));
	th = ruby_find_thread(w, slot, tgid, tid);
	w->me = 0;
	if (!th || bpf_probe_read_user(&w->me, sizeof(w->me), (void *)(th + w->p.thread_ec)) ||
	    !w->me)
		return 0;
	/* vm_stack, vm_stack_size and cfp: the first words of the context */
	if (bpf_probe_read_user(w->cf, 3 * 8, (void *)w->me))
		return 0;
	size = CF(w, w->p.ec_vm_stack_size);
	if (size > (1ull << 32))
		return 0;
	w->end = CF(w, w->p.ec_vm_stack) + 8 * size;
	w->cfp = CF(w, w->p.ec_cfp);
	w->nframes = 0;
	w->flags = 0;
	w->steps = 0;
	return w->cfp && w->cfp < w->end;
}

/* One control frame of the walk in slot @slot of ruby_scratch: 0 to go on,
 * 1 when over. Global: the verifier checks it once, not on every iteration
 * of the loops. */
__attribute__((noinline)) int ruby_frame_step(__u32 slot)
{
	struct ruby_walk_state *w;

	w = bpf_map_lookup_elem(&ruby_scratch, &slot);
	return !w || ruby_step(w);
}

/* @data points to the slot. */
static long ruby_loop_cb(__u32 i, void *data)
{
	(void)i;
	return ruby_frame_step(*(__u32 *)data) ? 1 : 0;
}

__attribute__((noinline)) int ruby_walk_loop(__u32 tgid, __u32 tid, __u32 slot)
{
	if (!ruby_begin(tgid, tid, slot))
		return 0;
	bpf_loop(RUBY_STEPS, ruby_loop_cb, &slot, 0);
	return 1;
}

__attribute__((noinline)) int ruby_walk_bounded(__u32 tgid, __u32 tid, __u32 slot)
{
	__u32 i;

	if (!ruby_begin(tgid, tid, slot))
		return 0;
	for (i = 0; i < RUBY_STEPS; i++)
		if (ruby_frame_step(slot))
			break;
	return 1;
}
