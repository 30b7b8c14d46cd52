/* sampler_memory_int.h - the memory sampler's state, shared by its loading
 * and probes (sampler_memory.c) and its drain (sampler_memory_drain.c).
 * Main thread only. */
#ifndef PROFCAP_SAMPLER_MEMORY_INT_H
#define PROFCAP_SAMPLER_MEMORY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "memory_types.h"
#include "collect/drain.h"
#include "collect/sampler_memory.h"
#include "util/htab.h"

#define MEMORY_BATCH 1024u /* map entries per bpf() call */
#define MEMORY_AGG_MAX (1u << 18)

/* An attached probe, of process @pid (-1: every process). */
struct sampler_times;

struct mem_link {
	struct bpf_link *link;
	__s32 pid;
	bool usdt; /* an otel_memory probe, else an allocator's */
};

/* One aggregated (key) of a drain. */
struct mem_agg {
	struct mem_key key;
	__u64 alloc_bytes, alloc_objs, inuse_bytes, inuse_objs;
	__u32 t0, ntimes; /* its sampled allocations with time: memsampler.tv[t0..] */
};

struct memsampler {
	struct sampler *s; /* borrowed */
	struct cpu_sampler *skel;
	struct memory_opts o;
	struct mem_link *links;
	size_t nlinks, links_cap;
	struct htab files; /* struct mem_file */
	struct htab agg;   /* struct mem_agg */
	struct htab refs;  /* __u64: stacks live allocations need (collect_stacks()) */
	struct drain_scratch scratch;
	int stacks_fd, ext_fd;
	__u64 keep;	    /* back-pressure share, MEM_FP_ONE units */
	__u64 last_ns;	    /* last drain (back-pressure) */
	__u64 last_sampled; /* MEM_STAT_SAMPLED + THROTTLED then */
	__u64 live;
	__u32 nfiles;
	__u32 usdt;	 /* files whose otel_memory probes are attached */
	__s32 first_pid; /* the first process probed */
	bool shared;	 /* more than one: each gets a share of the live table */
	bool warned;
	struct bpf_link *exec_link; /* profcap_mem_exec */
	/* with timestamps: the sampled allocations come on a ring of their own */
	struct sampler_times *times;
	const struct memory_time *tv; /* this drain's, borrowed from @times */
	__u64 times_lost;	      /* ... not in the aggregate (its table full) */
};

/* The programs' configuration (mem_config) from @m: 0 or -errno. */
int memsampler__write_config(struct memsampler *m);

#endif
