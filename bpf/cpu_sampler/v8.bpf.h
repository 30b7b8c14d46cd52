/* v8.bpf.h - the V8 (Node.js) JavaScript frames of the sampled thread
 * (v8.bpf.c): for a process user space found V8 in (v8_procs), each frame
 * the native walk crosses by frame pointer is checked for a JavaScript
 * frame, and those found are stored as a stack of their own (bpf/v8.h says
 * how the words are laid out). One map lookup per walk for every other
 * process, none while no process has an entry.
 */
#ifndef PROFCAP_BPF_V8_BPF_H
#define PROFCAP_BPF_V8_BPF_H

#include "stacks.bpf.h"
#include "v8.h"

extern __u32 v8_nprocs; /* entries user space added: 0 = skip the lookup */

/* Per-CPU walk state: the stack first, so it is stored straight from it. */
struct v8_walk_state {
	struct stack_trace st;
	struct v8_proc p; /* the process's entry */
	__u64 id;	  /* bpf_get_current_pid_tgid() of the walk */
	__u32 active;	  /* a walk of a V8 process is under way */
	__u32 nframes;	  /* frames stored in st */
	__u32 flags;	  /* PROFCAP_F_V8_* of the walk */
	__u32 pad;
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

/* Global functions of v8.bpf.c, called by the native walker (unwind.bpf.c):
 * start the walk of process @tgid (at the walk's first frame), and look at
 * the frame with frame pointer @fp running @pc. Both return 0. */
int v8_walk_begin(__u32 tgid);
int v8_frame_step(__u64 fp, __u64 pc);

/* The JavaScript stack of the walk just done, stored in @stacks: its hash
 * (0 = none), PROFCAP_F_V8_* into *@kflags. Ends the walk. */
static __always_inline __u64 v8_stack(void *stacks, __u32 *kflags)
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
	if (w->id != bpf_get_current_pid_tgid())
		return 0;
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
