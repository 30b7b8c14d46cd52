/* v8.bpf.h - the V8 (Node.js) JavaScript frames of the sampled thread
 * (v8.bpf.c): for a process user space found V8 in (v8_procs), the native
 * walker notes each frame it crosses by frame pointer (its fp and pc);
 * after the walk, each noted frame is checked for a JavaScript frame and
 * those found are stored as a stack of their own (bpf/v8.h says how the
 * words are laid out). One map lookup per walk for every other process,
 * none while no process ever had an entry.
 *
 * Noting is all the walker's step does (inline, nothing but stores): that
 * step runs deep in the sample's calls, whose stacks add up to the
 * verifier's 512 bytes. The reads come after, from the program's top.
 */
#ifndef PROFCAP_BPF_V8_BPF_H
#define PROFCAP_BPF_V8_BPF_H

#include "stacks.bpf.h"
#include "unwind.bpf.h"
#include "v8.h"

/* Frames crossed by frame pointer a walk notes: JavaScript frames and
 * V8's typed frames (entry, exit, stubs) between them. */
#define V8_NOTED 128

extern __u32 v8_nprocs; /* entries user space ever added: 0 = skip the lookup */

/* Per-CPU walk state: the stack first, so it is stored straight from it. */
struct v8_walk_state {
	struct stack_trace st;
	struct v8_proc p; /* the process's entry */
	__u64 id;	  /* bpf_get_current_pid_tgid() of the walk */
	__u32 active;	  /* a walk of a V8 process is under way */
	__u32 nnoted;	  /* frames noted (more than V8_NOTED: cut) */
	__u32 nframes;	  /* JavaScript frames stored in st */
	__u32 flags;	  /* PROFCAP_F_V8_* of the walk */
	__u64 fp[V8_NOTED], pc[V8_NOTED];
	/* The maps of SharedFunctionInfo and BytecodeArray objects (V8's
	 * read-only space: one each, for the process's life) once seen in
	 * process @maps_tgid: a frame then costs a read less for each. */
	__u64 sfi_map, bc_map;
	__u32 maps_tgid, pad2;
	/* what single reads land in */
	__u64 shared, map;
	__u16 type, pad[3];
	__u64 slots[PROFCAP_V8_SLOTS_BELOW / 8 + 2]; /* [fp - 48, fp), slack */
	__u8 sfi[PROFCAP_V8_SFI_READ + 8];	      /* the function's head, slack */
};

struct v8_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct v8_walk_state);
	__uint(max_entries, 1);
};

extern struct v8_scratch_map v8_scratch SEC(".maps");

struct v8_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct v8_proc);
	__uint(max_entries, PROFCAP_V8_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

extern struct v8_procs_map v8_procs SEC(".maps");

/* Global functions of v8.bpf.c: check the noted frames, store the
 * JavaScript ones in the state's stack. v8_walk_loop() steps with
 * bpf_loop() (Linux >= 5.17). */
int v8_walk_loop(void);
int v8_walk_bounded(void);
int v8_frame_check(__u32 i);

/* The native walk of process @tgid begins (its first frame). */
static __always_inline void v8_walk_begin(__u32 tgid)
{
	struct v8_walk_state *w;
	struct v8_proc *p;
	__u32 zero = 0;

	if (!v8_nprocs)
		return;
	w = bpf_map_lookup_elem(&v8_scratch, &zero);
	if (!w)
		return;
	w->active = 0;
	p = bpf_map_lookup_elem(&v8_procs, &tgid);
	if (!p)
		return;
	__builtin_memcpy(&w->p, p, sizeof(w->p));
	if (w->maps_tgid != tgid) {
		w->maps_tgid = tgid;
		w->sfi_map = w->bc_map = 0;
	}
	w->id = bpf_get_current_pid_tgid();
	w->nnoted = 0;
	w->active = 1;
}

/* The native walk @st crosses its current frame (st->bp, st->pc) by frame
 * pointer. Nothing is kept live across the lookup but @st, and its key is
 * st->done (0 while the walk goes on): a key of its own would take a stack
 * slot in the walker's step. */
static __always_inline void v8_note(struct unwind_state *st)
{
	struct v8_walk_state *w;
	__u32 n;

	if (!v8_nprocs)
		return;
	w = bpf_map_lookup_elem(&v8_scratch, &st->done);
	if (!w || !w->active)
		return;
	n = w->nnoted;
	if (n < V8_NOTED) {
		asm volatile("%0 &= 0x7f" : "+r"(n)); /* a bound the verifier sees */
		w->fp[n] = st->bp;
		w->pc[n] = st->pc;
	}
	w->nnoted = w->nnoted + 1;
}

/* The JavaScript stack of the walk just done, stored in @stacks: its hash
 * (0 = none), PROFCAP_F_V8_* into *@kflags. Ends the walk. @loop (a
 * constant) as for unwind_user(). */
static __always_inline __u64 v8_stack(void *stacks, __u32 *kflags, const int loop)
{
	struct v8_walk_state *w;
	__u32 zero = 0, nr;

	if (!v8_nprocs)
		return 0;
	w = bpf_map_lookup_elem(&v8_scratch, &zero);
	if (!w || !w->active)
		return 0;
	w->active = 0;
	/* a walk of another program run on this CPU is not this sample's */
	if (w->id != bpf_get_current_pid_tgid() || !w->nnoted)
		return 0;
	w->nframes = 0;
	w->flags = w->nnoted > V8_NOTED ? PROFCAP_F_V8_TRUNC : 0;
	if (loop)
		v8_walk_loop();
	else
		v8_walk_bounded();
	nr = w->nframes;
	if (!nr || nr > PROFCAP_V8_MAX_FRAMES)
		return 0;
	*kflags |= w->flags;
	stat_inc(STAT_V8_STACKS);
	if (w->flags & PROFCAP_F_V8_PARTIAL)
		stat_inc(STAT_V8_PARTIAL);
	if (w->flags & PROFCAP_F_V8_TRUNC)
		stat_inc(STAT_V8_TRUNC);
	w->st.nr = PROFCAP_V8_WORDS * nr;
	return put_stack(stacks, &w->st, PROFCAP_F_V8_LOST, kflags);
}

#endif
