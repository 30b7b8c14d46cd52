/* ruby.bpf.h - the CRuby frames of the sampled thread (ruby.bpf.c): for a
 * process user space found a Ruby VM in (ruby_procs), find the thread's own
 * rb_thread_t, walk its execution context's control frames from the running
 * one to the end of its VM stack and store them as the sample's runtime
 * stack (bpf/ruby.h says how the words are laid out). One map lookup for
 * every other process, none while no process ever had an entry.
 */
#ifndef PROFCAP_BPF_RUBY_BPF_H
#define PROFCAP_BPF_RUBY_BPF_H

#include "stacks.bpf.h"
#include "ruby.h"

extern __u32 ruby_nprocs; /* entries user space ever added: 0 = skip the lookup */
extern const volatile __u32 want_ruby; /* 0: the walker is never run */

struct ruby_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct ruby_proc);
	__uint(max_entries, PROFCAP_RUBY_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

extern struct ruby_procs_map ruby_procs SEC(".maps");

/* Per-CPU walk state, one per enum scratch_slot: the stack first, so it is
 * stored straight from it. */
struct ruby_walk_state {
	struct stack_trace st;
	struct ruby_proc p;  /* the process's entry */
	__u64 cfp;	     /* next control frame to read */
	__u64 end;	     /* one past the outermost control frame */
	__u32 nframes;	     /* frames stored in st */
	__u32 flags;	     /* PROFCAP_F_RUBY_* of the walk */
	__u32 steps;	     /* control frames read */
	__u32 pad0;
	__u64 ep0, me, body; /* what single reads land in */
	__u64 key, val;	     /* ruby_threads' key and value */
	__u64 cf[PROFCAP_RUBY_CFP_READ / 8 + 1]; /* the control frame, slack */
	__u64 b[PROFCAP_RUBY_BODY_READ / 8 + 1]; /* the iseq body's head, slack */
};

struct ruby_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ruby_walk_state);
	__uint(max_entries, SCRATCH_SLOTS);
};

extern struct ruby_scratch_map ruby_scratch SEC(".maps");

/* Global functions of ruby.bpf.c: walk the current thread's Ruby stack
 * (process @tgid, thread @tid as profcap sees it) into slot @slot of
 * ruby_scratch. 1 when it has one, 0 when not (not a Ruby process or
 * thread, no frame running). ruby_walk_loop() steps with bpf_loop() (Linux
 * >= 5.17). */
int ruby_walk_loop(__u32 tgid, __u32 tid, __u32 slot);
int ruby_walk_bounded(__u32 tgid, __u32 tid, __u32 slot);
int ruby_frame_step(__u32 slot);
int ruby_thread_step(__u32 slot, __u64 fsbase, __u32 tid);

/* The Ruby stack of the current thread stored in @stacks: its hash (0 =
 * none), PROFCAP_F_RUBY_* into *@kflags. @loop (a constant) as for
 * unwind_user(); @slot (a constant) the caller's enum scratch_slot. */
static __always_inline __u64 ruby_stack_in(__u32 slot, void *stacks, __u32 tgid, __u32 tid,
					   __u32 *kflags, const int loop)
{
	struct ruby_walk_state *w;
	__u32 nr;

	if (!want_ruby || !ruby_nprocs || !tgid)
		return 0;
	w = bpf_map_lookup_elem(&ruby_scratch, &slot);
	if (!w)
		return 0;
	if (!(loop ? ruby_walk_loop(tgid, tid, slot) : ruby_walk_bounded(tgid, tid, slot)))
		return 0;
	nr = w->nframes;
	if (!nr || nr > PROFCAP_RUBY_MAX_FRAMES)
		return 0;
	*kflags |= w->flags;
	w->st.nr = PROFCAP_RUBY_WORDS * nr;
	return put_stack(stacks, &w->st, PROFCAP_F_RUBY_LOST, kflags);
}

/* ruby_stack_in() of a perf_event program (slot SCRATCH_SAMPLE). */
static __always_inline __u64 ruby_stack(void *stacks, __u32 tgid, __u32 tid, __u32 *kflags,
					const int loop)
{
	return ruby_stack_in(SCRATCH_SAMPLE, stacks, tgid, tid, kflags, loop);
}

#endif
