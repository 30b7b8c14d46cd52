/* stacks.bpf.h - what every unit of the sampler's BPF object counts into:
 * the map generation, the stack tables, the per-CPU scratch stacks and the
 * counters (defined in stacks.bpf.c). Also task_struct.mm, which the walk,
 * the notices and the off-CPU side all read.
 *
 * UAPI headers only (no vmlinux.h, no CO-RE), so the object loads without
 * kernel BTF. The units are linked into one object (bpftool gen object):
 * a map or global shared between units is defined in one and declared
 * extern in its header; helpers shared between units are static
 * __always_inline here, so each program is the code the verifier sees.
 */
#ifndef PROFCAP_BPF_STACKS_BPF_H
#define PROFCAP_BPF_STACKS_BPF_H

#include <stddef.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/types.h>
#include <asm/ptrace.h>
#include <bpf/bpf_helpers.h>

#include "cpu_sampler.h"
#include "unwind.h"

/* User space flips `gen` to swap the map generation being filled, then
 * drains the other one race-free. */
extern __u32 gen;
extern const volatile __u32 want_user;
extern const volatile __u32 want_kernel;
extern const volatile __u32 task_mm_off; /* task_struct.mm (kernel BTF), 0 = unknown */

struct stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, struct stack_trace);
	__uint(max_entries, 8192);
};

extern struct stacks_map stacks0 SEC(".maps");
extern struct stacks_map stacks1 SEC(".maps");

/* Deep user stacks: the frames past PROFCAP_MAX_STACK, under the hash of
 * the stack in stacks0/1. */
struct ustack_ext {
	__u64 ips[PROFCAP_USTACK_EXT];
};

struct ustack_ext_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, struct ustack_ext);
	__uint(max_entries, 1); /* sized by user space when unwinding */
};

extern struct ustack_ext_map ustack_ext0 SEC(".maps");
extern struct ustack_ext_map ustack_ext1 SEC(".maps");

struct stats_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, STAT__COUNT);
};

extern struct stats_map stats SEC(".maps");

struct scratch {
	struct stack_trace user;
	struct stack_trace kern;
};

/* The per-CPU walk states (scratch, unwind_scratch, py_scratch) have one
 * slot per kind of program: a program may interrupt another on the same
 * CPU (a cpu-clock tick lands while an uprobe or a tracepoint program
 * walks: the kernel does not keep those from nesting), and each must
 * walk in a slot no program it can interrupt uses. */
enum scratch_slot {
	SCRATCH_SAMPLE = 0, /* perf_event programs: interrupts, nothing nests in them */
	SCRATCH_OFFCPU,	    /* off-CPU programs: tracepoints and task works */
	SCRATCH_MEMORY,	    /* memory uprobes: preemptible, so guarded (memory.bpf.c) */
	SCRATCH_SLOTS,
};

struct scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct scratch);
	__uint(max_entries, SCRATCH_SLOTS);
};

extern struct scratch_map scratch SEC(".maps");

/* Global functions: the verifier checks each once, not again on every
 * path to each of its calls. */
int stat_inc(__u32 which);
__u64 stack_hash(const struct stack_trace *st);

#define PROFCAP_EEXIST 17 /* another CPU stored the same key first */

/* Store @st (its nr set) in @stacks under its hash; returns the hash, 0
 * when the table is full (@lost_flag set in *@kflags). */
static __always_inline __u64 put_stack(void *stacks, struct stack_trace *st, __u32 lost_flag,
				       __u32 *kflags)
{
	__u64 h = stack_hash(st);

	if (!bpf_map_lookup_elem(stacks, &h)) {
		long err = bpf_map_update_elem(stacks, &h, st, BPF_NOEXIST);

		if (err && err != -PROFCAP_EEXIST) {
			*kflags |= lost_flag;
			stat_inc(STAT_STACKS_FULL);
			return 0;
		}
	}
	return h;
}

#endif
