// SPDX-License-Identifier: GPL-2.0
/* v8.bpf.c - the V8 walker (v8.bpf.h): JavaScript frames recognised among
 * the frames the native walker crosses by frame pointer (V8 keeps rbp
 * frames in all the code it generates, which has no CFI).
 *
 * The native walker notes the frames (v8.bpf.h); each is checked here
 * after the walk (docs/v8.md "Per frame"): one read of the slots below fp; a
 * marker slot with bit 0 clear is a typed frame (entry, exit, stub: no
 * JavaScript function). Else the word in the function slot is taken for a
 * JSFunction, its SharedFunctionInfo read and checked by its map's instance
 * type: a native frame whose slots hold anything else records nothing. The
 * function's head gives the fingerprint user space checks before naming
 * it; a BytecodeArray in its slot and a Smi offset make the frame
 * interpreted, a pc outside V8's file JIT code, else a builtin. Only values
 * are recorded; nothing is written to the process.
 */
#include "v8.bpf.h"

__u32 v8_nprocs = 0;

struct v8_procs_map v8_procs SEC(".maps");
struct v8_scratch_map v8_scratch SEC(".maps");

/* The frame slot at @off from fp (user space checks: a multiple of 8 in
 * [-PROFCAP_V8_SLOTS_BELOW, -8]). */
static __always_inline __u64 v8_slot(const struct v8_walk_state *w, __s16 off)
{
	__u32 i = (__u32)((__s32)off + PROFCAP_V8_SLOTS_BELOW) / 8;

	return w->slots[i & 7];
}

static __always_inline int v8_is_heap(const struct v8_walk_state *w, __u64 v)
{
	return (v & w->p.heap_tag_mask) == w->p.heap_tag;
}

static __always_inline __u64 v8_untag(const struct v8_walk_state *w, __u64 v)
{
	return v & ~(__u64)w->p.heap_tag_mask;
}

/* Is tagged object @v of instance type @type? Its map is kept in *@known
 * once seen: an object with that map needs no read of the type. */
static __always_inline int v8_is_type(struct v8_walk_state *w, __u64 v, __u16 type,
				      __u64 *known)
{
	if (!v8_is_heap(w, v) ||
	    bpf_probe_read_user(&w->map, sizeof(w->map), (void *)(v8_untag(w, v) + w->p.obj_map)) ||
	    !v8_is_heap(w, w->map))
		return 0;
	if (w->map == *known)
		return 1;
	if (bpf_probe_read_user(&w->type, sizeof(w->type),
				(void *)(v8_untag(w, w->map) + w->p.map_instance_type)) ||
	    w->type != type)
		return 0;
	*known = w->map;
	return 1;
}

static __always_inline int v8_in_text(const struct v8_walk_state *w, __u64 pc)
{
	int i;

	for (i = 0; i < PROFCAP_V8_TEXT; i++)
		if (pc >= w->p.text[i][0] && pc < w->p.text[i][1])
			return 1;
	return 0;
}

/* A field of the function's head (its offset checked by user space). */
static __always_inline __u16 v8_sfi_u16(const struct v8_walk_state *w, __u16 off)
{
	return *(const __u16 *)(w->sfi + (off & (PROFCAP_V8_SFI_READ - 1)));
}

static __always_inline __u64 v8_sfi_u64(const struct v8_walk_state *w, __u16 off)
{
	return *(const __u64 *)(w->sfi + (off & (PROFCAP_V8_SFI_READ - 1)));
}

/* Kind and offset of the JavaScript frame whose slots were read, running
 * @pc. */
static __always_inline __u64 v8_kind(struct v8_walk_state *w, __u64 pc)
{
	__u64 bc = v8_slot(w, w->p.fp_bytecode_array), off = v8_slot(w, w->p.fp_bytecode_offset);
	int has_bc = v8_is_type(w, bc, w->p.type_bytecode, &w->bc_map);
	__s64 o;

	if (has_bc && !(off & 1)) {
		o = ((__s64)off >> (w->p.smi_shift & 63)) - (w->p.bytecode_data - w->p.heap_tag);
		if (o < 0 || o >= (1ll << 30))
			o = PROFCAP_V8_NO_OFFSET;
		return (__u64)(__u32)o | (__u64)PROFCAP_V8_KIND_INTERPRETED << 32;
	}
	if (!v8_in_text(w, pc)) /* baseline: the slot holds the feedback vector */
		return PROFCAP_V8_NO_OFFSET | (__u64)PROFCAP_V8_KIND_JIT << 32;
	/* the interpreter writes the offset before a call: until the first
	 * one the slot holds the feedback vector */
	if (has_bc)
		return PROFCAP_V8_NO_OFFSET | (__u64)PROFCAP_V8_KIND_INTERPRETED << 32;
	return PROFCAP_V8_NO_OFFSET | (__u64)PROFCAP_V8_KIND_BUILTIN << 32;
}

/* Noted frame @i: a JavaScript frame is stored. 0 to go on, 1 when over. */
__attribute__((noinline)) int v8_frame_check(__u32 i)
{
	struct v8_walk_state *w;
	__u64 fp, pc, func, head, fl = 0;
	__u32 zero = 0, n, k, size;

	w = bpf_map_lookup_elem(&v8_scratch, &zero);
	if (!w || i >= w->nnoted || i >= V8_NOTED)
		return 1;
	asm volatile("%0 &= 0x7f" : "+r"(i)); /* a bound the verifier sees */
	fp = w->fp[i];
	pc = w->pc[i];
	if (bpf_probe_read_user(w->slots, PROFCAP_V8_SLOTS_BELOW,
				(void *)(fp - PROFCAP_V8_SLOTS_BELOW))) {
		if (w->nframes)
			w->flags |= PROFCAP_F_V8_PARTIAL;
		return 0;
	}
	if (!(v8_slot(w, w->p.fp_marker) & 1))
		return 0; /* a typed frame: no JavaScript function */
	func = v8_slot(w, w->p.fp_function);
	if (!v8_is_heap(w, func) ||
	    bpf_probe_read_user(&w->shared, sizeof(w->shared),
				(void *)(v8_untag(w, func) + w->p.jsfunc_shared)) ||
	    !v8_is_type(w, w->shared, w->p.type_sfi, &w->sfi_map))
		return 0; /* a native frame */
	n = w->nframes;
	if (n >= PROFCAP_V8_MAX_FRAMES) {
		w->flags |= PROFCAP_F_V8_TRUNC;
		return 1;
	}
	size = w->p.sfi_read;
	if (size < 8 || size > PROFCAP_V8_SFI_READ)
		return 1;
	head = v8_untag(w, w->shared) & PROFCAP_V8_ADDR_MASK;
	if (bpf_probe_read_user(w->sfi, size, (void *)v8_untag(w, w->shared))) {
		w->flags |= PROFCAP_F_V8_PARTIAL;
		fl = (__u64)PROFCAP_V8_FRAME_NOSFI << 40;
	} else {
		head |= (__u64)profcap_v8_fingerprint(
				v8_sfi_u16(w, w->p.sfi_length), v8_sfi_u16(w, w->p.sfi_param_count),
				v8_sfi_u16(w, w->p.sfi_token_offset), v8_sfi_u64(w, w->p.sfi_script))
			<< PROFCAP_V8_FP_SHIFT;
	}
	/* n < PROFCAP_V8_MAX_FRAMES: words 3n .. 3n + 2 are in st. A mask the
	 * verifier sees, whatever the compiler made of the check above (the
	 * value holds more after st). */
	k = PROFCAP_V8_WORDS * n;
	asm volatile("%0 &= 0x7f" : "+r"(k));
	w->st.ips[k] = head;
	w->st.ips[k + 1] = pc;
	w->st.ips[k + 2] = v8_kind(w, pc) | fl;
	w->nframes = n + 1;
	return 0;
}

static long v8_loop_cb(__u32 i, void *data)
{
	(void)data;
	return v8_frame_check(i) ? 1 : 0;
}

__attribute__((noinline)) int v8_walk_loop(void)
{
	bpf_loop(V8_NOTED, v8_loop_cb, NULL, 0);
	return 0;
}

__attribute__((noinline)) int v8_walk_bounded(void)
{
	__u32 i;

	for (i = 0; i < V8_NOTED; i++)
		if (v8_frame_check(i))
			break;
	return 0;
}
