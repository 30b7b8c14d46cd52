// SPDX-License-Identifier: GPL-2.0
/* python.bpf.c - the CPython walker (python.bpf.h): the sampled thread's
 * own thread state, then its frames, innermost first.
 *
 * The thread state: a thread's PyThreadState is the one whose thread_id is
 * the thread's pthread_self(), its thread pointer (task_struct.thread.
 * fsbase, the offset threadctx.bpf.h reads it with), or without kernel BTF
 * whose native_thread_id is the thread's ID. Found by walking the
 * interpreter's list of thread states (at most PROFCAP_PY_MAX_THREADS) and
 * kept per thread in an LRU (py_tstates), checked again at every use: a
 * thread state freed and reused for another thread is not taken for this
 * one's. A thread found in no list is not looked for again for
 * PY_RESCAN_NS (its entry holds the time, low bit set).
 *
 * The frames: one bpf_probe_read_user() of the frame's first frame_read
 * bytes, one of the code object's co_firstlineno (the fingerprint user
 * space checks the code object against). Frames the C stack or the
 * interpreter owns (owner >= owner_cstack; 3.12+: the shim each eval-loop
 * call pushes) are not stored; the frame before
 * one is the outermost of its call (PROFCAP_PY_FRAME_ENTRY). A read that
 * fails mid-walk ends the stack there, flagged PROFCAP_F_PY_PARTIAL.
 */
#include "python.bpf.h"
#include "threadctx.bpf.h"

const volatile __u32 want_python = 0;
__u32 py_nprocs = 0;

struct py_procs_map py_procs SEC(".maps");
struct py_scratch_map py_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);	/* tgid << 32 | tid */
	__type(value, __u64);	/* its thread state; low bit set: none, since that time */
	__uint(max_entries, 1); /* PROFCAP_PY_TSTATES when on */
} py_tstates SEC(".maps");

#define PY_RESCAN_NS 200000000ull
/* Frames read at most: the stored ones, the shims between them (one per
 * eval-loop call) and one to see that the stack goes on. */
#define PY_STEPS (PROFCAP_PY_MAX_FRAMES + 33)

/* A field of the frame read into w->buf (its offset below
 * PROFCAP_PY_FRAME_READ, user space checks). */
static __always_inline __u64 frame_u64(const struct py_walk_state *w, __u32 off)
{
	return *(const __u64 *)(w->buf + (off & (PROFCAP_PY_FRAME_READ - 1)));
}

static __always_inline __u32 frame_u32(const struct py_walk_state *w, __u32 off)
{
	return *(const __u32 *)(w->buf + (off & (PROFCAP_PY_FRAME_READ - 1)));
}

static __always_inline __u8 frame_u8(const struct py_walk_state *w, __u32 off)
{
	return w->buf[off & (PROFCAP_PY_FRAME_READ - 1)];
}

/* Is thread state @ts the current thread's? 1 yes, 0 no, -1 unreadable. */
static __always_inline int py_is_thread(const struct py_proc *p, __u64 ts, __u64 fsbase, __u32 tid)
{
	__u64 id = 0;
	__u32 ntid = 0;

	if (fsbase) {
		if (bpf_probe_read_user(&id, sizeof(id), (void *)(ts + p->tstate_thread_id)))
			return -1;
		return id == fsbase;
	}
	if (p->tstate_native_tid == 0xffff)
		return 0;
	if (bpf_probe_read_user(&ntid, sizeof(ntid), (void *)(ts + p->tstate_native_tid)))
		return -1;
	return ntid == tid;
}

/* The current thread's thread state, 0 when it has none. */
static __always_inline __u64 py_find_tstate(const struct py_proc *p, __u32 tgid, __u32 tid)
{
	__u64 key = (__u64)tgid << 32 | tid, fsbase = 0, interp = 0, ts = 0, *c, none;
	int i, m;

	if (tctx_fsbase_off)
		bpf_probe_read_kernel(&fsbase, sizeof(fsbase),
				      (void *)(bpf_get_current_task() + tctx_fsbase_off));
	c = bpf_map_lookup_elem(&py_tstates, &key);
	if (c) {
		ts = *c;
		if (ts & 1) {
			if (bpf_ktime_get_ns() - (ts & ~1ull) < PY_RESCAN_NS)
				return 0;
		} else if (py_is_thread(p, ts, fsbase, tid) == 1) {
			return ts;
		}
	}
	if (bpf_probe_read_user(&interp, sizeof(interp), (void *)p->interp_head) || !interp ||
	    bpf_probe_read_user(&ts, sizeof(ts), (void *)(interp + p->interp_tstate_head)))
		return 0; /* not initialized yet, or finalized: look again next time */
	for (i = 0; i < PROFCAP_PY_MAX_THREADS && ts; i++) {
		m = py_is_thread(p, ts, fsbase, tid);
		if (m < 0)
			return 0;
		if (m) {
			bpf_map_update_elem(&py_tstates, &key, &ts, BPF_ANY);
			return ts;
		}
		if (bpf_probe_read_user(&ts, sizeof(ts), (void *)(ts + p->tstate_next)))
			return 0;
	}
	none = bpf_ktime_get_ns() | 1;
	bpf_map_update_elem(&py_tstates, &key, &none, BPF_ANY);
	return 0;
}

/* The frame thread state @ts runs, 0 when none. */
static __always_inline __u64 py_current_frame(const struct py_proc *p, __u64 ts)
{
	__u64 f = 0;

	if (bpf_probe_read_user(&f, sizeof(f), (void *)(ts + p->tstate_frame)))
		return 0;
	if ((p->flags & PROFCAP_PY_CFRAME) && f &&
	    bpf_probe_read_user(&f, sizeof(f), (void *)(f + p->cframe_current_frame)))
		return 0;
	return f;
}

/* The frame stored last is the outermost of its eval-loop call, when the
 * version marks no entry frames itself (3.12+: a shim follows it, or the
 * stack ends). */
static __always_inline void py_mark_entry(struct py_walk_state *w)
{
	__u32 n = w->nframes, i;

	if (w->p.flags & (PROFCAP_PY_IS_ENTRY | PROFCAP_PY_ONE_PER_CALL))
		return;
	if (!n || n > PROFCAP_PY_MAX_FRAMES)
		return;
	i = 2 * n - 1;
	if (i < PROFCAP_MAX_STACK)
		w->st.ips[i] |= (__u64)PROFCAP_PY_FRAME_ENTRY << 32;
}

/* One frame of the walk: 0 to go on, 1 when over. */
static __always_inline int py_step(struct py_walk_state *w)
{
	__u64 frame = w->frame, code, ins;
	__u32 n = w->nframes, span = w->p.frame_read, fl = 0, i;
	__s32 first = 0;

	if (!frame) {
		py_mark_entry(w);
		return 1;
	}
	if (n >= PROFCAP_PY_MAX_FRAMES || ++w->steps >= PY_STEPS) {
		w->flags |= PROFCAP_F_PY_TRUNC;
		return 1;
	}
	if (span > PROFCAP_PY_FRAME_READ)
		span = PROFCAP_PY_FRAME_READ;
	if (!span || bpf_probe_read_user(w->buf, span, (void *)frame)) {
		w->flags |= PROFCAP_F_PY_PARTIAL;
		return 1;
	}
	w->frame = frame_u64(w, w->p.frame_back);
	code = frame_u64(w, w->p.frame_code);
	if (w->p.flags & PROFCAP_PY_CODE_TAGGED)
		code &= ~7ull;
	if ((w->p.flags & PROFCAP_PY_OWNER) && frame_u8(w, w->p.frame_owner) >= w->p.owner_cstack) {
		py_mark_entry(w); /* a shim: not a frame of Python's */
		return 0;
	}
	if (w->p.flags & PROFCAP_PY_INSTR_PTR)
		ins = frame_u64(w, w->p.frame_instr) - code;
	else
		ins = frame_u32(w, w->p.frame_instr);
	if (w->p.flags & PROFCAP_PY_ONE_PER_CALL)
		fl |= PROFCAP_PY_FRAME_ENTRY;
	else if ((w->p.flags & PROFCAP_PY_IS_ENTRY) && frame_u8(w, w->p.frame_entry))
		fl |= PROFCAP_PY_FRAME_ENTRY;
	if (!code ||
	    bpf_probe_read_user(&first, sizeof(first), (void *)(code + w->p.code_firstlineno))) {
		fl |= PROFCAP_PY_FRAME_NOCODE;
		first = 0;
	}
	/* n < PROFCAP_PY_MAX_FRAMES: words 2n and 2n + 1 are in st. A mask
	 * the verifier sees, whatever the compiler made of the check above
	 * (the value holds more after st). */
	i = 2 * n;
	asm volatile("%0 &= 0x7e" : "+r"(i));
	w->st.ips[i] = (code & PROFCAP_PY_ADDR_MASK) |
		       ((__u64)((__u32)first & 0xffff) << PROFCAP_PY_FP_SHIFT);
	w->st.ips[i + 1] = (ins & 0xffffffffull) | ((__u64)fl << 32);
	w->nframes = n + 1;
	return 0;
}

/* Set up the walk of the current thread in slot @slot of py_scratch: 1,
 * or 0 when it has no Python stack. */
static __always_inline int py_begin(__u32 tgid, __u32 tid, __u32 slot)
{
	const struct py_proc *p;
	struct py_walk_state *w;
	__u64 ts;

	p = bpf_map_lookup_elem(&py_procs, &tgid);
	w = bpf_map_lookup_elem(&py_scratch, &slot);
	if (!p || !w)
		return 0;
	__builtin_memcpy(&w->p, p, sizeof(w->p));
	ts = py_find_tstate(&w->p, tgid, tid);
	if (!ts)
		return 0;
	w->frame = py_current_frame(&w->p, ts);
	w->nframes = 0;
	w->flags = 0;
	w->steps = 0;
	return w->frame != 0;
}

/* One frame of the walk in slot @slot of py_scratch: 0 to go on, 1 when
 * over. Global: the verifier checks it once, not on every iteration of the
 * loops. */
__attribute__((noinline)) int py_frame_step(__u32 slot)
{
	struct py_walk_state *w;

	w = bpf_map_lookup_elem(&py_scratch, &slot);
	return !w || py_step(w);
}

/* @data points to the slot. */
static long py_loop_cb(__u32 i, void *data)
{
	(void)i;
	return py_frame_step(*(__u32 *)data) ? 1 : 0;
}

__attribute__((noinline)) int py_walk_loop(__u32 tgid, __u32 tid, __u32 slot)
{
	if (!py_begin(tgid, tid, slot))
		return 0;
	bpf_loop(PY_STEPS, py_loop_cb, &slot, 0);
	return 1;
}

__attribute__((noinline)) int py_walk_bounded(__u32 tgid, __u32 tid, __u32 slot)
{
	__u32 i;

	if (!py_begin(tgid, tid, slot))
		return 0;
	for (i = 0; i < PY_STEPS; i++)
		if (py_frame_step(slot))
			break;
	return 1;
}
