/* python.bpf.h - the CPython frames of the sampled thread (python.bpf.c):
 * for a process user space found an interpreter in (py_procs), find the
 * thread's own PyThreadState, walk its frames from the running one to the
 * outermost and store them as a stack of their own (bpf/python.h says how
 * the words are laid out). One map lookup for every other process, none
 * while no process has an entry.
 */
#ifndef PROFCAP_BPF_PYTHON_BPF_H
#define PROFCAP_BPF_PYTHON_BPF_H

#include "stacks.bpf.h"
#include "python.h"

extern const volatile __u32 want_python;
extern __u32 py_nprocs; /* entries user space added: 0 = skip the lookup */

struct py_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct py_proc);
	__uint(max_entries, 1); /* PROFCAP_PY_PROCS when on */
};

extern struct py_procs_map py_procs SEC(".maps");

/* Per-CPU walk state, one per enum scratch_slot: the stack first, so it is
 * stored straight from it. */
struct py_walk_state {
	struct stack_trace st;
	struct py_proc p; /* the process's entry */
	__u64 frame;	  /* next frame to read, 0 = none */
	__u32 nframes;	  /* frames stored in st */
	__u32 flags;	  /* PROFCAP_F_PY_* of the walk */
	__u32 steps;	  /* frames read, shims included */
	__u32 pad;
	/* the frame being read, with room for an 8-byte field at any offset
	 * below PROFCAP_PY_FRAME_READ */
	__u8 buf[PROFCAP_PY_FRAME_READ + 8];
};

struct py_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct py_walk_state);
	__uint(max_entries, SCRATCH_SLOTS);
};

extern struct py_scratch_map py_scratch SEC(".maps");

/* Global functions of python.bpf.c: walk the current thread's Python
 * stack (process @tgid, thread @tid as profcap sees it) into slot @slot of
 * py_scratch. 1 when it has one, 0 when not (not a Python process or
 * thread, no frame running). py_walk_loop() steps with bpf_loop() (Linux
 * >= 5.17). */
int py_walk_loop(__u32 tgid, __u32 tid, __u32 slot);
int py_walk_bounded(__u32 tgid, __u32 tid, __u32 slot);
int py_frame_step(__u32 slot);

/* The Python stack of the current thread stored in @stacks: its hash (0 =
 * none), PROFCAP_F_PY_* into *@kflags. @loop (a constant) as for
 * unwind_user(); @slot (a constant) the caller's enum scratch_slot. */
static __always_inline __u64 py_stack_in(__u32 slot, void *stacks, __u32 tgid, __u32 tid,
					 __u32 *kflags, const int loop)
{
	struct py_walk_state *w;
	__u32 nr;

	if (!want_python || !py_nprocs || !tgid)
		return 0;
	if (!(loop ? py_walk_loop(tgid, tid, slot) : py_walk_bounded(tgid, tid, slot)))
		return 0;
	w = bpf_map_lookup_elem(&py_scratch, &slot);
	if (!w)
		return 0;
	*kflags |= w->flags;
	nr = w->nframes;
	if (!nr || nr > PROFCAP_PY_MAX_FRAMES)
		return 0;
	stat_inc(STAT_PY_STACKS);
	if (w->flags & PROFCAP_F_PY_PARTIAL)
		stat_inc(STAT_PY_PARTIAL);
	if (w->flags & PROFCAP_F_PY_TRUNC)
		stat_inc(STAT_PY_TRUNC);
	w->st.nr = 2 * nr;
	return put_stack(stacks, &w->st, PROFCAP_F_PY_LOST, kflags);
}

/* py_stack_in() of a perf_event program (slot SCRATCH_SAMPLE). */
static __always_inline __u64 py_stack(void *stacks, __u32 tgid, __u32 tid, __u32 *kflags,
				      const int loop)
{
	return py_stack_in(SCRATCH_SAMPLE, stacks, tgid, tid, kflags, loop);
}

#endif
