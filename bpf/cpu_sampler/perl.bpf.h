/* perl.bpf.h - the Perl frames of the sampled thread (perl.bpf.c): for a
 * process user space found a Perl interpreter in (perl_procs), walk the
 * main interpreter's context stacks from the innermost context to the
 * main program and store the sub calls as a stack of their own (bpf/perl.h
 * says how the words are laid out). One map lookup for every other
 * process, none while no process ever had an entry.
 */
#ifndef PROFCAP_BPF_PERL_BPF_H
#define PROFCAP_BPF_PERL_BPF_H

#include "stacks.bpf.h"
#include "v8.bpf.h"
#include "perl.h"

extern __u32 perl_nprocs; /* entries user space ever added: 0 = skip the lookup */
extern const volatile __u32 want_perl; /* 0: the walker is never run */

struct perl_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct perl_proc);
	__uint(max_entries, PROFCAP_PERL_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

extern struct perl_procs_map perl_procs SEC(".maps");

/* Per-CPU walk state, one per enum scratch_slot: the stack first, so it is
 * stored straight from it. */
struct perl_walk_state {
	struct stack_trace st;
	struct perl_proc p; /* the process's entry */
	__u64 si;	    /* the stackinfo walked */
	__u64 cxstack;	    /* its context array */
	__u64 cop;	    /* the statement the next frame stored runs */
	__s32 ix;	    /* next context to read, -1: the stackinfo is done */
	__u32 si_type;	    /* PERLSI_* of si */
	__u32 nframes;	    /* frames stored in st */
	__u32 si_frames;    /* ... of them from si */
	__u32 flags;	    /* PROFCAP_F_PERL_* of the walk */
	__u32 steps;	    /* contexts and stackinfos read */
	__u64 word;	    /* what single-word reads land in */
	/* the context or stackinfo being read, with slack for an 8-byte
	 * field at any offset below the read */
	__u8 buf[128 + 8];
};

struct perl_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct perl_walk_state);
	__uint(max_entries, SCRATCH_SLOTS);
};

extern struct perl_scratch_map perl_scratch SEC(".maps");

/* Global functions of perl.bpf.c: walk the current thread's Perl stack
 * (process @tgid, thread @tid as profcap sees it) into slot @slot of
 * perl_scratch. 1 when it has one, 0 when not. perl_walk_loop() steps
 * with bpf_loop() (Linux >= 5.17). */
int perl_walk_loop(__u32 tgid, __u32 tid, __u32 slot);
int perl_walk_bounded(__u32 tgid, __u32 tid, __u32 slot);
int perl_frame_step(__u32 slot);

/* The Perl stack of the current thread stored in @stacks: its hash (0 =
 * none), PROFCAP_F_PERL_* into *@kflags. @loop (a constant) as for
 * unwind_user(); @slot (a constant) the caller's enum scratch_slot. */
static __always_inline __u64 perl_stack_in(__u32 slot, void *stacks, __u32 tgid, __u32 tid,
					   __u32 *kflags, const int loop)
{
	struct perl_walk_state *w;
	__u32 nr;

	if (!want_perl || !perl_nprocs || !tgid)
		return 0;
	if (!(loop ? perl_walk_loop(tgid, tid, slot) : perl_walk_bounded(tgid, tid, slot)))
		return 0;
	w = bpf_map_lookup_elem(&perl_scratch, &slot);
	if (!w)
		return 0;
	nr = w->nframes;
	if (!nr || nr > PROFCAP_PERL_MAX_FRAMES)
		return 0;
	*kflags |= w->flags;
	w->st.nr = PROFCAP_PERL_WORDS * nr;
	return put_stack(stacks, &w->st, PROFCAP_F_PERL_LOST, kflags);
}

#endif
