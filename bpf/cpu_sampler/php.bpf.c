// SPDX-License-Identifier: GPL-2.0
/* php.bpf.c - the PHP walker (php.bpf.h): the executor's current frame,
 * then each frame's caller (prev_execute_data), innermost first.
 *
 * Per frame: one bpf_probe_read_user() of the zend_execute_data (opline,
 * func, call info, prev), one of the function's head (type, name, class;
 * for user code its file and first line too, the fingerprint user space
 * checks the function against). A frame without a function (a dummy the
 * engine pushes for internal calls) is skipped; a function whose type is
 * none of internal, user or eval code ends the walk, flagged
 * PROFCAP_F_PHP_PARTIAL, as a read that fails does: a layout that does not
 * fit the process gives no frames, not wrong ones.
 *
 * The opline a frame holds is saved by the executor before each call, so
 * callers' lines are exact; the running frame's is in a register while
 * the executor runs (r14 the frame, r15 the opline: PHP's global register
 * variables on x86-64), taken when the sample interrupted execute_ex with
 * r14 pointing at that frame.
 */
#include "php.bpf.h"

const volatile __u32 want_php = 0;
__u32 php_nprocs = 0;

struct php_procs_map php_procs SEC(".maps");
struct php_scratch_map php_scratch SEC(".maps");

/* Frames read at most: the stored ones, skipped dummies, and one to see
 * that the stack goes on. */
#define PHP_STEPS (PROFCAP_PHP_MAX_FRAMES + 16)

_Static_assert(PROFCAP_PHP_FUNC_READ <= PHP_FBUF, "a function's read fits its buffer");

static __always_inline __u64 ex_u64(const struct php_walk_state *w, __u32 off)
{
	return *(const __u64 *)(w->exbuf + (off & (PROFCAP_PHP_EX_READ - 1)));
}

static __always_inline __u32 ex_u32(const struct php_walk_state *w, __u32 off)
{
	return *(const __u32 *)(w->exbuf + (off & (PROFCAP_PHP_EX_READ - 1)));
}

static __always_inline __u64 fn_u64(const struct php_walk_state *w, __u32 off)
{
	return *(const __u64 *)(w->fbuf + (off & (PHP_FBUF - 1)));
}

static __always_inline __u32 fn_u32(const struct php_walk_state *w, __u32 off)
{
	return *(const __u32 *)(w->fbuf + (off & (PHP_FBUF - 1)));
}

/* Read function @fn's head into w->fbuf: its type (0 when unreadable).
 * A user function's head is read up to its first line; an internal one's
 * is shorter, so its name and class only. */
static __always_inline __u8 php_read_func(struct php_walk_state *w, __u64 fn)
{
	__u32 span = w->p.func_read;

	if (span > PROFCAP_PHP_FUNC_READ)
		span = PROFCAP_PHP_FUNC_READ;
	if (span < 24)
		span = 24;
	if (!bpf_probe_read_user(w->fbuf, span, (void *)fn))
		return w->fbuf[0];
	if (bpf_probe_read_user(w->fbuf, 24, (void *)fn) || w->fbuf[0] != PROFCAP_PHP_INTERNAL)
		return 0;
	return PROFCAP_PHP_INTERNAL;
}

/* One frame of the walk: 0 to go on, 1 when over. */
static __always_inline int php_step(struct php_walk_state *w)
{
	__u64 ex = w->ex, fn, opline, file = 0, head;
	__u32 n = w->nframes, span = w->p.ex_read, info, line = 0, fl = 0, k;
	__u8 type;

	if (!ex)
		return 1;
	if (n >= PROFCAP_PHP_MAX_FRAMES || ++w->steps >= PHP_STEPS) {
		w->flags |= PROFCAP_F_PHP_TRUNC;
		return 1;
	}
	if (span > PROFCAP_PHP_EX_READ)
		span = PROFCAP_PHP_EX_READ;
	if (!span || bpf_probe_read_user(w->exbuf, span, (void *)ex)) {
		w->flags |= PROFCAP_F_PHP_PARTIAL;
		return 1;
	}
	w->ex = ex_u64(w, w->p.ex_prev);
	fn = ex_u64(w, w->p.ex_func);
	if (!fn)
		return 0; /* a dummy frame: no function of its own */
	opline = ex_u64(w, w->p.ex_opline);
	info = ex_u32(w, w->p.ex_call_info);
	type = php_read_func(w, fn);
	if (type != PROFCAP_PHP_INTERNAL && type != PROFCAP_PHP_USER && type != PROFCAP_PHP_EVAL) {
		w->flags |= PROFCAP_F_PHP_PARTIAL;
		return 1;
	}
	if (type != PROFCAP_PHP_INTERNAL) {
		file = fn_u64(w, w->p.op_filename);
		line = fn_u32(w, w->p.op_line_start);
		if (info & w->p.call_top)
			fl |= PROFCAP_PHP_FRAME_ENTRY;
		if (ex == w->leaf_ex && w->leaf_opline) {
			opline = w->leaf_opline;
			fl |= PROFCAP_PHP_FRAME_REGLINE;
		}
	} else {
		opline = 0;
	}
	head = (fn & PROFCAP_PHP_ADDR_MASK) |
	       ((__u64)profcap_php_fingerprint(fn_u64(w, w->p.fn_name), fn_u64(w, w->p.fn_scope),
					       file, line)
		<< PROFCAP_PHP_FP_SHIFT);
	/* n < PROFCAP_PHP_MAX_FRAMES: words 3n .. 3n + 2 are in st. A mask the
	 * verifier sees, whatever the compiler made of the check above. */
	k = PROFCAP_PHP_WORDS * n;
	asm volatile("%0 &= 0x7f" : "+r"(k));
	w->st.ips[k] = head;
	w->st.ips[k + 1] = opline;
	w->st.ips[k + 2] = info | ((__u64)fl << 32) | ((__u64)type << 40);
	w->nframes = n + 1;
	return 0;
}

/* Set up the walk of process @tgid in @w: 1, or 0 when it runs no PHP
 * code now. */
static __always_inline int php_begin(struct php_walk_state *w, __u32 tgid)
{
	const struct php_proc *p;
	__u64 ex = 0;

	p = bpf_map_lookup_elem(&php_procs, &tgid);
	if (!p)
		return 0;
	__builtin_memcpy(&w->p, p, sizeof(w->p));
	if (bpf_probe_read_user(&ex, sizeof(ex), (void *)w->p.current_execute_data) || !ex)
		return 0;
	w->ex = ex;
	w->leaf_ex = w->leaf_opline = 0;
	if (w->ip >= w->p.exec_lo && w->ip < w->p.exec_hi && w->r14 == ex) {
		w->leaf_ex = ex;
		w->leaf_opline = w->r15;
	}
	w->nframes = 0;
	w->flags = 0;
	w->steps = 0;
	return 1;
}

/* The frames walked into @w stored in stacks1 (@g1) or stacks0: the hash,
 * 0 when none. */
static __always_inline __u64 php_put(struct php_walk_state *w, __u32 g1)
{
	__u32 nr = w->nframes;

	if (!nr || nr > PROFCAP_PHP_MAX_FRAMES)
		return 0;
	w->st.nr = PROFCAP_PHP_WORDS * nr;
	if (g1)
		return put_stack(&stacks1, &w->st, PROFCAP_F_PHP_LOST, &w->flags);
	return put_stack(&stacks0, &w->st, PROFCAP_F_PHP_LOST, &w->flags);
}

/* One frame of the walk in slot @slot: 0 to go on, 1 when over. Global:
 * the verifier checks it once, not on every iteration of the loops. */
__attribute__((noinline)) int php_frame_step(__u32 slot)
{
	struct php_walk_state *w;

	w = bpf_map_lookup_elem(&php_scratch, &slot);
	return !w || php_step(w);
}

/* @data points to the slot. */
static long php_loop_cb(__u32 i, void *data)
{
	(void)i;
	return php_frame_step(*(__u32 *)data) ? 1 : 0;
}

__attribute__((noinline)) __u64 php_walk_loop(__u32 tgid, __u32 slot, __u32 g1)
{
	struct php_walk_state *w = bpf_map_lookup_elem(&php_scratch, &slot);

	if (!w || !php_begin(w, tgid))
		return 0;
	bpf_loop(PHP_STEPS, php_loop_cb, &slot, 0);
	return php_put(w, g1);
}

__attribute__((noinline)) __u64 php_walk_bounded(__u32 tgid, __u32 slot, __u32 g1)
{
	struct php_walk_state *w = bpf_map_lookup_elem(&php_scratch, &slot);
	__u32 i;

	if (!w || !php_begin(w, tgid))
		return 0;
	for (i = 0; i < PHP_STEPS; i++)
		if (php_frame_step(slot))
			break;
	return php_put(w, g1);
}
