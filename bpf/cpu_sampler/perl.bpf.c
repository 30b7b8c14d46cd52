// SPDX-License-Identifier: GPL-2.0
/* perl.bpf.c - the Perl 5 walker (perl.bpf.h): the sub calls of the main
 * interpreter, innermost first.
 *
 * The interpreter: PL_curinterp for the main thread (my_perl of a
 * threaded build); another thread (an ithread, its own cloned
 * interpreter) by its thread-local PL_current_context, at tls_interp
 * below its thread pointer, when user space found it. Either must pass a
 * check before its contexts are taken for frames: its PL_curstack is
 * its current stackinfo's si_stack. Its current stackinfo holds
 * an array of contexts (cxstack, innermost at cxix); a sub call is a
 * CXt_SUB context whose blk_sub.cv is the sub and whose blk_oldcop is the
 * statement that called it, so each frame's statement is PL_curcop for
 * the innermost and the oldcop of the frame above for the others. Loops
 * and blocks are contexts too: read, not stored. A stackinfo pushed by C
 * (sort, magic, DESTROY, call_sv) ends at its first context; its
 * si_prev goes on below it; the main one (PERLSI_MAIN) ends with the
 * main program's frame. A sub called from C (call_sv, MULTICALL) has no
 * return op: it is the outermost frame of its runops call, and so is the
 * last frame of a stackinfo (PROFCAP_PERL_FRAME_ENTRY, for the merge).
 * One read per context, and per stored frame one of its statement's line
 * and two of the sub's glob (the fingerprint). A read that fails ends the
 * walk, flagged PROFCAP_F_PERL_PARTIAL.
 */
#include "perl.bpf.h"
#include "threadctx.bpf.h"

__u32 perl_nprocs = 0;
const volatile __u32 want_perl = 0;

struct perl_procs_map perl_procs SEC(".maps");
struct perl_scratch_map perl_scratch SEC(".maps");

/* Contexts and stackinfos read at most: the stored frames and the loops
 * and blocks between them. */
#define PERL_STEPS 192
#define PERL_BUF_MASK 0x7f /* user space keeps fields below PROFCAP_PERL_CX_READ */

static __always_inline __u64 buf_u64(const struct perl_walk_state *w, __u32 off)
{
	return *(const __u64 *)(w->buf + (off & PERL_BUF_MASK));
}

static __always_inline __s32 buf_s32(const struct perl_walk_state *w, __u32 off)
{
	return *(const __s32 *)(w->buf + (off & PERL_BUF_MASK));
}

/* Read the stackinfo at @si: 0, or -1 when unreadable. */
static __always_inline int perl_load_si(struct perl_walk_state *w, __u64 si)
{
	if (bpf_probe_read_user(w->buf, PROFCAP_PERL_SI_READ, (void *)si))
		return -1;
	w->si = si;
	w->cxstack = buf_u64(w, w->p.si_cxstack);
	w->ix = buf_s32(w, w->p.si_cxix);
	w->si_type = (__u32)buf_s32(w, w->p.si_type);
	w->si_frames = 0;
	return 0;
}

/* Store a frame of kind @kind running w->cop (sub @cv, 0 for none): 0, or
 * 1 when the stack is full. */
static __always_inline int perl_store(struct perl_walk_state *w, __u64 cv, __u32 kind, __u32 fl)
{
	__u32 n = w->nframes, line = 0, i;
	__u64 gv = 0, fp = 0;

	if (n >= PROFCAP_PERL_MAX_FRAMES) {
		w->flags |= PROFCAP_F_PERL_TRUNC;
		return 1;
	}
	if (w->cop)
		bpf_probe_read_user(&line, sizeof(line), (void *)(w->cop + w->p.cop_line));
	if (cv) {
		if (bpf_probe_read_user(&w->word, sizeof(w->word), (void *)cv) || !w->word ||
		    bpf_probe_read_user(&gv, sizeof(gv), (void *)(w->word + w->p.cv_gv)))
			fl |= PROFCAP_PERL_FRAME_NOCV;
		else
			fp = profcap_perl_fingerprint(gv);
	}
	/* n < PROFCAP_PERL_MAX_FRAMES: words 3n .. 3n + 2 are in st; a mask
	 * the verifier sees (the value holds more after st) */
	i = 3 * n;
	asm volatile("%0 &= 0x7f" : "+r"(i));
	w->st.ips[i] = (cv & PROFCAP_PERL_ADDR_MASK) | fp << PROFCAP_PERL_FP_SHIFT;
	w->st.ips[i + 1] = w->cop;
	w->st.ips[i + 2] = line | (__u64)kind << 32 | (__u64)fl << 40;
	w->nframes = n + 1;
	w->si_frames++;
	return 0;
}

/* The frame stored last is the outermost of its runops call. */
static __always_inline void perl_mark_entry(struct perl_walk_state *w)
{
	__u32 n = w->nframes, i;

	if (!w->si_frames || !n || n > PROFCAP_PERL_MAX_FRAMES)
		return;
	i = 3 * n - 1;
	asm volatile("%0 &= 0x7f" : "+r"(i));
	w->st.ips[i] |= (__u64)PROFCAP_PERL_FRAME_ENTRY << 40;
}

/* The stackinfo is done: the main program, or the one below. 0 to go on,
 * 1 when over. */
static __always_inline int perl_next_si(struct perl_walk_state *w)
{
	__u64 prev = 0;

	if (bpf_probe_read_user(&prev, sizeof(prev), (void *)(w->si + w->p.si_prev))) {
		w->flags |= PROFCAP_F_PERL_PARTIAL;
		return 1;
	}
	if (!prev) {
		if (w->si_type == w->p.si_main)
			perl_store(w, 0, PROFCAP_PERL_KIND_MAIN, PROFCAP_PERL_FRAME_ENTRY);
		else
			perl_mark_entry(w);
		return 1;
	}
	perl_mark_entry(w);
	if (perl_load_si(w, prev)) {
		w->flags |= PROFCAP_F_PERL_PARTIAL;
		return 1;
	}
	return 0;
}

/* One context (or the end of a stackinfo): 0 to go on, 1 when over. */
static __always_inline int perl_step(struct perl_walk_state *w)
{
	__u32 span = PROFCAP_PERL_CX_READ, t;
	__u64 cx, cv = 0, fl;

	if (++w->steps > PERL_STEPS) {
		w->flags |= PROFCAP_F_PERL_TRUNC;
		return 1;
	}
	if (w->ix < 0)
		return perl_next_si(w);
	cx = w->cxstack + (__u64)(__u32)w->ix * w->p.cx_size;
	w->ix--;
	if (bpf_probe_read_user(w->buf, span, (void *)cx)) {
		w->flags |= PROFCAP_F_PERL_PARTIAL;
		return 1;
	}
	t = w->buf[0] & w->p.type_mask;
	if (t != w->p.type_sub && t != w->p.type_eval)
		return 0; /* a loop or a block: not a frame */
	fl = buf_u64(w, w->p.cx_retop) ? 0 : PROFCAP_PERL_FRAME_ENTRY;
	if (t == w->p.type_sub)
		cv = buf_u64(w, w->p.cx_cv);
	cx = buf_u64(w, w->p.cx_oldcop); /* the caller's statement */
	if (perl_store(w, cv, t == w->p.type_sub ? PROFCAP_PERL_KIND_SUB : PROFCAP_PERL_KIND_EVAL,
		       (__u32)fl))
		return 1;
	w->cop = cx;
	return 0;
}

/* The current thread's interpreter, 0 when it has none to walk. */
static __always_inline __u64 perl_interp(const struct perl_walk_state *w, __u32 tgid, __u32 tid)
{
	__u64 interp = 0, tp = 0;

	if (tid == tgid) {
		bpf_probe_read_user(&interp, sizeof(interp), (void *)w->p.curinterp);
		return interp;
	}
	if (!w->p.tls_interp || !tctx_fsbase_off ||
	    bpf_probe_read_kernel(&tp, sizeof(tp),
				  (void *)(bpf_get_current_task() + tctx_fsbase_off)) ||
	    tp <= w->p.tls_interp)
		return 0;
	bpf_probe_read_user(&interp, sizeof(interp), (void *)(tp - w->p.tls_interp));
	return interp;
}

/* Set up the walk of the current thread in slot @slot: 1, or 0 when it
 * has no Perl stack (not a Perl process, a thread without an interpreter
 * found, no interpreter yet, or one that does not check out). */
static __always_inline int perl_begin(__u32 tgid, __u32 tid, __u32 slot)
{
	const struct perl_proc *p;
	struct perl_walk_state *w;
	__u64 interp;

	p = bpf_map_lookup_elem(&perl_procs, &tgid);
	w = bpf_map_lookup_elem(&perl_scratch, &slot);
	if (!p || !w)
		return 0;
	__builtin_memcpy(&w->p, p, sizeof(w->p));
	interp = perl_interp(w, tgid, tid);
	/* Reads land in the scratch, not on the stack: the off-CPU task
	 * work calls this walk with little of its 512 bytes left. */
	if (!interp ||
	    bpf_probe_read_user(&w->si, sizeof(w->si), (void *)(interp + w->p.interp_curstackinfo)) ||
	    !w->si ||
	    bpf_probe_read_user(&w->word, sizeof(w->word), (void *)(interp + w->p.interp_curstack)) ||
	    bpf_probe_read_user(&w->cop, sizeof(w->cop), (void *)(interp + w->p.interp_curcop)))
		return 0;
	if (perl_load_si(w, w->si) || buf_u64(w, w->p.si_stack) != w->word || !w->word)
		return 0; /* not an interpreter's pointers */
	w->nframes = 0;
	w->flags = 0;
	w->steps = 0;
	return 1;
}

/* One step of the walk in slot @slot: 0 to go on, 1 when over. Global:
 * the verifier checks it once, not on every iteration of the loops. */
__attribute__((noinline)) int perl_frame_step(__u32 slot)
{
	struct perl_walk_state *w;

	w = bpf_map_lookup_elem(&perl_scratch, &slot);
	return !w || perl_step(w);
}

/* @data points to the slot. */
static long perl_loop_cb(__u32 i, void *data)
{
	(void)i;
	return perl_frame_step(*(__u32 *)data) ? 1 : 0;
}

__attribute__((noinline)) int perl_walk_loop(__u32 tgid, __u32 tid, __u32 slot)
{
	if (!perl_begin(tgid, tid, slot))
		return 0;
	bpf_loop(PERL_STEPS + 1, perl_loop_cb, &slot, 0);
	return 1;
}

__attribute__((noinline)) int perl_walk_bounded(__u32 tgid, __u32 tid, __u32 slot)
{
	__u32 i;

	if (!perl_begin(tgid, tid, slot))
		return 0;
	for (i = 0; i <= PERL_STEPS; i++)
		if (perl_frame_step(slot))
			break;
	return 1;
}
