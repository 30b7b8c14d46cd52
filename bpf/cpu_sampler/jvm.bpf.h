/* jvm.bpf.h - the HotSpot (JVM) Java frames of the sampled thread (maps
 * and globals in jvm.bpf.c): for a process user space found a JVM in (jvm_procs), the
 * native walker hands each frame whose pc lies in the JVM's code cache to
 * jvm_step(), which records the Java frame (bpf/jvm.h says how the words
 * are laid out) and gives the walker its caller's registers: compiled code
 * keeps no frame pointer and has no CFI, so only HotSpot's own frame sizes
 * can cross it. After the walk the frames are stored as a stack of their
 * own. One load of jvm_nprocs per frame while no process has an entry,
 * then one per-CPU array lookup per frame of other processes.
 *
 * The step is inline in unwind_step(), deep in the sample's calls, whose
 * stacks add up to the verifier's 512 bytes (the off-CPU task work leaves
 * no room for another call): the hook copies registers in and out of the
 * per-CPU state and keeps nothing else live.
 */
#ifndef PROFCAP_BPF_JVM_BPF_H
#define PROFCAP_BPF_JVM_BPF_H

#include "stacks.bpf.h"
#include "unwind.bpf.h"
#include "jvm.h"

extern const volatile __u32 want_jvm; /* 0: the walk is compiled out (PROFCAP_JVM=0) */
extern __u32 jvm_nprocs;	      /* entries user space ever added: 0 = skip the lookup */
/* The scratch slots as keys in .rodata: a key on the stack would grow the
 * frames of the off-CPU task work, which has none to spare. */
extern const volatile __u32 jvm_slot_key[SCRATCH_SLOTS];

/* Per-CPU walk state, one per enum scratch_slot: the stack first, so it is
 * stored straight from it. */
struct jvm_walk_state {
	struct stack_trace st;
	__u64 slack;	   /* room for a masked index one word past st */
	struct jvm_proc p; /* the process's entry */
	__u64 id;	   /* bpf_get_current_pid_tgid() of the walk */
	__u32 active;	   /* a walk of a JVM process is under way */
	__u32 nframes;	   /* Java frames stored in st */
	__u32 flags;	   /* PROFCAP_F_JVM_* of the walk */
	/* the native walker's registers, in and out of jvm_step() */
	__u32 leaf; /* the sampled frame: pc exact, prologues possible */
	__u64 pc, sp, bp, stack_lo;
	__u32 done, why; /* out: 2 and USTAT_* when the walk stops */
	/* the frame being walked */
	__u64 addr;	       /* its pc, less 1 for a return address */
	__u32 fflags;	       /* PROFCAP_JVM_FRAME_* */
	__s32 fsize, complete; /* a blob's frame size (words), frame complete offset */
	__u64 blob, code, sender;
	__u64 lo, map, idx; /* the heap, its segment map, a segment */
	__u32 shift, pad2;
	/* what single reads land in */
	__u64 two[2];
	__u64 cm;
	__s32 cid;
	__u8 seg, pad[3];
	__u64 slots[PROFCAP_JVM_SLOTS_BELOW / 8 + 2 + 14]; /* [fp - 128, fp + 16), slack */
	__u8 head[PROFCAP_JVM_BLOB_READ + 8];		   /* a CodeBlob's head, slack */
};

struct jvm_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct jvm_walk_state);
	__uint(max_entries, SCRATCH_SLOTS);
};

extern struct jvm_scratch_map jvm_scratch SEC(".maps");

struct jvm_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct jvm_proc);
	__uint(max_entries, PROFCAP_JVM_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

extern struct jvm_procs_map jvm_procs SEC(".maps");

/* ---- the walk of one frame (inline: a call would take a frame of
 * stack the deepest programs do not have) ---- */

#define JVM_MAX_FRAME_WORDS (1 << 16) /* a larger frame size is not HotSpot's */
#define JVM_MAX_STACK (512ull << 20)  /* callers' sp this far above the sampled sp */

/* The code below keeps nothing but @w live across a helper call: every
 * value a read needs after it is in the state (a spilled register would
 * grow unwind_step()'s stack past what its deepest callers leave). */

static __always_inline int jvm_stop(struct jvm_walk_state *w, __u32 flag, __u32 why)
{
	w->flags |= flag;
	w->done = 2;
	w->why = why;
	return 1;
}

/* Record the next frame (w->nframes below PROFCAP_JVM_MAX_FRAMES). */
static __always_inline void jvm_record(struct jvm_walk_state *w, __u64 obj, __u64 fpr, __u64 pos,
				       __u64 kind)
{
	__u32 k = 2 * w->nframes;

	asm volatile("%0 &= 0x7e" : "+r"(k)); /* a bound the verifier sees (slack after st) */
	w->st.ips[k] = (obj & PROFCAP_JVM_ADDR_MASK) | (fpr & 0xffff) << PROFCAP_JVM_FP_SHIFT;
	w->st.ips[k + 1] = (pos & 0xffffffffull) | kind << 32 | (__u64)w->fflags << 40;
	w->nframes++;
}

/* Is @sp a plausible caller's sp: above the frame's, within the stack? */
static __always_inline int jvm_sp_ok(const struct jvm_walk_state *w, __u64 sp)
{
	return sp > w->sp && !(sp & 7) && sp - w->stack_lo < JVM_MAX_STACK;
}

static __always_inline int jvm_in_code(const struct jvm_walk_state *w, __u64 pc)
{
	return pc >= w->p.code_lo && pc < w->p.code_hi;
}

/* The interpreter slot at @off from fp (user space checks: a multiple of
 * 8 in [-PROFCAP_JVM_SLOTS_BELOW, 8]). */
static __always_inline __u64 jvm_slot(const struct jvm_walk_state *w, __s32 off)
{
	__u32 i = (__u32)(off + PROFCAP_JVM_SLOTS_BELOW) / 8;

	return w->slots[i & 31];
}

/* An interpreted frame at fp: Method* and bcp from its slots. */
static __always_inline int jvm_interp(struct jvm_walk_state *w)
{
	if (!w->bp || (w->bp & 7) || w->bp < w->sp || w->bp - w->stack_lo >= JVM_MAX_STACK ||
	    bpf_probe_read_user(w->slots, PROFCAP_JVM_SLOTS_BELOW + 16,
				(void *)(w->bp - PROFCAP_JVM_SLOTS_BELOW)))
		return jvm_stop(w, w->nframes ? PROFCAP_F_JVM_PARTIAL : 0, USTAT_READ_ERR);
	if (bpf_probe_read_user(&w->cm, sizeof(w->cm),
				(void *)(jvm_slot(w, w->p.interp_method) + w->p.m_const_method))) {
		w->fflags |= PROFCAP_JVM_FRAME_NOREAD;
		jvm_record(w, jvm_slot(w, w->p.interp_method), 0, 0, PROFCAP_JVM_KIND_INTERP);
	} else {
		jvm_record(w, jvm_slot(w, w->p.interp_method), w->cm >> 3,
			   jvm_slot(w, w->p.interp_bcp) - w->cm - w->p.cm_size,
			   PROFCAP_JVM_KIND_INTERP);
	}
	/* its caller runs in the code cache: the interpreter, compiled code
	 * or the call stub */
	if (!jvm_sp_ok(w, jvm_slot(w, -8)) || !jvm_in_code(w, jvm_slot(w, 8)))
		return jvm_stop(w, PROFCAP_F_JVM_PARTIAL, USTAT_NO_ROW);
	w->pc = jvm_slot(w, 8);
	w->sp = jvm_slot(w, -8);
	w->bp = jvm_slot(w, 0);
	return 0;
}

/* The CodeBlob holding w->addr into w->blob: 0, or -1 when none (free
 * space, a map longer than PROFCAP_JVM_SEGMAP_STEPS hops, a failed read). */
static __always_inline int jvm_find_blob(struct jvm_walk_state *w)
{
	__u32 i;

	w->map = 0;
	for (i = 0; i < PROFCAP_JVM_MAX_HEAPS; i++) {
		if (i < w->p.nheaps && w->addr >= w->p.heaps[i].lo && w->addr < w->p.heaps[i].hi) {
			w->lo = w->p.heaps[i].lo;
			w->map = w->p.heaps[i].segmap;
			w->shift = w->p.heaps[i].log2_seg & 31;
		}
	}
	if (!w->map)
		return -1;
	w->idx = (w->addr - w->lo) >> w->shift;
	for (i = 0; i < PROFCAP_JVM_SEGMAP_STEPS; i++) {
		if (bpf_probe_read_user(&w->seg, 1, (void *)(w->map + w->idx)) || w->seg == 0xff ||
		    w->seg > w->idx)
			return -1;
		if (!w->seg) {
			w->blob = w->lo + (w->idx << w->shift) + w->p.heapblock_size;
			return 0;
		}
		w->idx -= w->seg;
	}
	return -1;
}

static __always_inline __s64 jvm_head_s32(const struct jvm_walk_state *w, __u16 off)
{
	return *(const __s32 *)(w->head + (off & (PROFCAP_JVM_BLOB_READ - 1)));
}

/* The blob's frame size (words), frame complete offset and code start
 * into the state, from its head. */
static __always_inline void jvm_blob_fields(struct jvm_walk_state *w)
{
	w->fsize = jvm_head_s32(w, w->p.blob_frame_size);
	if (w->p.flags & PROFCAP_JVM_FCO_S16)
		w->complete = *(const __s16 *)(w->head + (w->p.blob_frame_complete &
							  (PROFCAP_JVM_BLOB_READ - 1)));
	else
		w->complete = jvm_head_s32(w, w->p.blob_frame_complete);
	if (w->p.flags & PROFCAP_JVM_BLOB_OFFSETS)
		w->code = w->blob + jvm_head_s32(w, w->p.blob_code_begin);
	else
		w->code = *(const __u64 *)(w->head +
					   (w->p.blob_code_begin & (PROFCAP_JVM_BLOB_READ - 1)));
}

/* The call stub's frame ends Java: its rbp frame returns to C++. */
static __always_inline int jvm_call_stub(struct jvm_walk_state *w)
{
	if (!w->bp || (w->bp & 7) || w->bp < w->sp ||
	    bpf_probe_read_user(w->two, sizeof(w->two), (void *)w->bp) || !w->two[1])
		return jvm_stop(w, PROFCAP_F_JVM_PARTIAL, USTAT_READ_ERR);
	w->pc = w->two[1];
	w->sp = w->bp + 16;
	w->bp = w->two[0];
	return 0;
}

/* A leaf frame whose blob has not built its frame yet or has torn it down
 * (a prologue, an epilogue, a stub without one): its return address is at
 * sp, or above the caller's rbp pushed first or not popped yet. Java code
 * is called from the code cache only (the call stub included), which
 * tells the two apart. */
static __always_inline int jvm_frameless(struct jvm_walk_state *w)
{
	if (bpf_probe_read_user(w->two, sizeof(w->two), (void *)w->sp))
		return jvm_stop(w, PROFCAP_F_JVM_PARTIAL, USTAT_READ_ERR);
	if (jvm_in_code(w, w->two[0])) {
		w->pc = w->two[0];
		w->sp += 8;
	} else if (jvm_in_code(w, w->two[1])) {
		w->pc = w->two[1];
		w->bp = w->two[0];
		w->sp += 16;
	} else {
		return jvm_stop(w, PROFCAP_F_JVM_PARTIAL, USTAT_NO_ROW);
	}
	return 0;
}

/* A frame of a compiled method, a stub or the call stub. */
static __always_inline int jvm_blob(struct jvm_walk_state *w)
{
	__u32 size = w->p.blob_read;

	if (size < 8 || size >= PROFCAP_JVM_BLOB_READ || jvm_find_blob(w))
		return jvm_stop(w, w->nframes ? PROFCAP_F_JVM_PARTIAL : 0, USTAT_NO_ROW);
	size = w->p.blob_read;
	asm volatile("%0 &= 0x7f" : "+r"(size)); /* a bound the verifier sees */
	if (bpf_probe_read_user(w->head, size, (void *)w->blob))
		return jvm_stop(w, w->nframes ? PROFCAP_F_JVM_PARTIAL : 0, USTAT_READ_ERR);
	if (bpf_probe_read_user(&w->cid, sizeof(w->cid), (void *)(w->blob + w->p.nm_compile_id)))
		w->cid = 0;
	jvm_blob_fields(w);
	if (w->pc == w->p.call_stub_ret) {
		jvm_record(w, w->blob, w->cid, w->pc - w->blob, PROFCAP_JVM_KIND_BLOB);
		return jvm_call_stub(w);
	}
	if (w->fsize <= 0 || w->fsize > JVM_MAX_FRAME_WORDS ||
	    (w->complete > 0 && w->pc < w->code + w->complete)) {
		if (w->leaf)
			w->fflags |= PROFCAP_JVM_FRAME_PROLOGUE;
		jvm_record(w, w->blob, w->cid, w->pc - w->blob, PROFCAP_JVM_KIND_BLOB);
		if (!w->leaf)
			return jvm_stop(w, PROFCAP_F_JVM_PARTIAL, USTAT_NO_ROW);
		return jvm_frameless(w);
	}
	jvm_record(w, w->blob, w->cid, w->pc - w->blob, PROFCAP_JVM_KIND_BLOB);
	w->sender = w->sp + (__u64)w->fsize * 8;
	if (!jvm_sp_ok(w, w->sender) ||
	    bpf_probe_read_user(w->two, sizeof(w->two), (void *)(w->sender - 16)))
		return jvm_stop(w, PROFCAP_F_JVM_PARTIAL, USTAT_READ_ERR);
	/* a caller outside the code cache: not the frame's return address (a
	 * leaf in its epilogue, its frame popped already), or a bad walk */
	if (!jvm_in_code(w, w->two[1]))
		return w->leaf ? jvm_frameless(w)
			       : jvm_stop(w, PROFCAP_F_JVM_PARTIAL, USTAT_NO_ROW);
	w->pc = w->two[1];
	w->sp = w->sender;
	w->bp = w->two[0];
	return 0;
}

/* One Java frame of the walk in @w (its registers in the state). 0 to go
 * on (the caller's registers in the state), 1 when the walk stops (done,
 * why set). */
static __always_inline int jvm_step(struct jvm_walk_state *w)
{
	if (w->nframes >= PROFCAP_JVM_MAX_FRAMES)
		return jvm_stop(w, PROFCAP_F_JVM_TRUNC, USTAT_DEPTH);
	w->addr = w->leaf ? w->pc : w->pc - 1;
	w->fflags = w->leaf ? PROFCAP_JVM_FRAME_LEAF : 0;
	if (w->addr >= w->p.interp_lo && w->addr < w->p.interp_hi)
		return jvm_interp(w);
	return jvm_blob(w);
}

/* The native walk of process *@tgid in slot @slot (a constant) begins. */
static __always_inline void jvm_walk_begin(const __u32 *tgid, __u32 slot)
{
	struct jvm_walk_state *w;
	struct jvm_proc *p;

	if (!want_jvm || !jvm_nprocs)
		return;
	w = bpf_map_lookup_elem(&jvm_scratch, (const void *)&jvm_slot_key[slot]);
	if (!w)
		return;
	w->active = 0;
	p = bpf_map_lookup_elem(&jvm_procs, tgid);
	if (!p)
		return;
	__builtin_memcpy(&w->p, p, sizeof(w->p));
	w->id = bpf_get_current_pid_tgid();
	w->st.nr = 0;
	w->nframes = 0;
	w->flags = 0;
	w->active = 1;
}

/* The native walk @st (slot @slot) is at a frame: a pc in the code cache
 * of the walked JVM is a Java frame, walked by jvm_step(). -1 when it is
 * not (the native walk goes on as usual), else unwind_step()'s result. */
static __always_inline int jvm_hook(struct unwind_state *st, __u32 slot)
{
	struct jvm_walk_state *w;
	__u64 a;
	int r;

	if (!want_jvm || !jvm_nprocs)
		return -1;
	w = bpf_map_lookup_elem(&jvm_scratch, &slot);
	if (!w || !w->active)
		return -1;
	a = st->exact ? st->pc : st->pc - 1;
	if (a < w->p.code_lo || a >= w->p.code_hi)
		return -1;
	w->pc = st->pc;
	w->sp = st->sp;
	w->bp = st->bp_ok ? st->bp : 0;
	w->stack_lo = st->stack_lo;
	w->leaf = st->nr == 1;
	r = jvm_step(w);
	if (r) {
		st->done = w->done;
		st->why = w->why;
		return 1;
	}
	st->pc = w->pc;
	st->sp = w->sp;
	st->bp = w->bp;
	st->bp_ok = 1;
	st->exact = 0;
	return 0;
}

/* The Java stack of the walk just done in slot @slot, stored in @stacks:
 * its hash (0 = none), PROFCAP_F_JVM_* into *@kflags. Ends the walk. */
static __always_inline __u64 jvm_stack(void *stacks, __u32 *kflags, __u32 slot)
{
	struct jvm_walk_state *w;
	__u32 n, k, i;

	if (!want_jvm || !jvm_nprocs)
		return 0;
	w = bpf_map_lookup_elem(&jvm_scratch, (const void *)&jvm_slot_key[slot]);
	if (!w || !w->active)
		return 0;
	w->active = 0;
	/* a walk of another program run on this CPU is not this sample's */
	if (w->id != bpf_get_current_pid_tgid())
		return 0;
	n = w->nframes;
	if (!n || n > PROFCAP_JVM_MAX_FRAMES)
		return 0;
	*kflags |= w->flags;
	/* zero words up to a multiple of PROFCAP_JVM_NR_ALIGN (bpf/jvm.h) */
	k = 2 * n;
	for (i = 0; i < PROFCAP_JVM_NR_ALIGN; i++) {
		if (!(k % PROFCAP_JVM_NR_ALIGN))
			break;
		asm volatile("%0 &= 0x7f" : "+r"(k)); /* a bound the verifier sees */
		w->st.ips[k] = 0;
		k++;
	}
	w->st.nr = k;
	return put_stack(stacks, &w->st, PROFCAP_F_JVM_LOST, kflags);
}

/* The words of the Java stack the current thread's walk in slot @slot
 * stored (jvm_stack()) into @ips (room for 2 * PROFCAP_JVM_MAX_FRAMES),
 * how many into *@n. 1 when it stored one, 0 when not (another runtime's
 * stack). */
static __always_inline int jvm_copy_stack(__u64 *ips, __u32 *n, __u32 slot)
{
	struct jvm_walk_state *w;

	if (!want_jvm || !jvm_nprocs)
		return 0;
	w = bpf_map_lookup_elem(&jvm_scratch, (const void *)&jvm_slot_key[slot]);
	if (!w || w->id != bpf_get_current_pid_tgid() || !w->st.nr ||
	    w->st.nr > 2 * PROFCAP_JVM_MAX_FRAMES)
		return 0;
	*n = (__u32)w->st.nr;
	bpf_probe_read_kernel(ips, 2 * PROFCAP_JVM_MAX_FRAMES * sizeof(__u64), w->st.ips);
	return 1;
}

#endif
