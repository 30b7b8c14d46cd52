/* memory.bpf.h - the memory profiler's maps (memory.bpf.c): sampled
 * allocations by (process, thread, user stack), the live table of those not
 * freed yet, and the calls between entry and return. Its stacks go to
 * tables of their own (mem_stacks, mem_ustack_ext), not the CPU samples'
 * generations: a live allocation keeps its stack across drains. Every map
 * is sized by user space when --memory loads the programs, and is one
 * entry otherwise. */
#ifndef PROFCAP_BPF_MEMORY_BPF_H
#define PROFCAP_BPF_MEMORY_BPF_H

#include "memory_types.h"
#include "stacks.bpf.h"

struct mem_counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct mem_key);
	__type(value, struct mem_val);
	__uint(max_entries, 1);
};

struct mem_stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct stack_trace);
	__uint(max_entries, 1);
};

struct mem_ext_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct ustack_ext);
	__uint(max_entries, 1);
};

struct mem_live_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct mem_live_key);
	__type(value, struct mem_live_val);
	__uint(max_entries, 1);
};

/* Live entries of each process (per-process share of mem_live). */
struct mem_live_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
};

/* A thread's sampled call from its entry to its return; an LRU, so a
 * thread that never returns (longjmp, exit) cannot fill it. */
struct mem_pending_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct mem_pending);
	__uint(max_entries, 1);
};

/* Processes that fire the otel_memory probes: their allocator probes are
 * ignored (the process's own sampler is preferred). */
struct mem_usdt_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1);
};

struct mem_config_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct mem_config);
	__uint(max_entries, 1);
};

/* Per CPU: a memory program walks a stack in slot SCRATCH_MEMORY. Uprobe
 * programs may be preempted (kernels with full preemption), so another
 * thread's call on the same CPU could enter the walk of the first. */
struct mem_walking_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
};

struct mem_stats_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, MEM_STAT__COUNT);
};

extern struct mem_counts_map mem_counts SEC(".maps");
extern struct mem_stacks_map mem_stacks SEC(".maps");
extern struct mem_ext_map mem_ustack_ext SEC(".maps");
extern struct mem_live_map mem_live SEC(".maps");
extern struct mem_live_procs_map mem_live_procs SEC(".maps");
extern struct mem_pending_map mem_pending SEC(".maps");
extern struct mem_usdt_procs_map mem_usdt_procs SEC(".maps");
extern struct mem_config_map mem_config SEC(".maps");
extern struct mem_stats_map mem_stats SEC(".maps");
extern struct mem_walking_map mem_walking SEC(".maps");

#endif
