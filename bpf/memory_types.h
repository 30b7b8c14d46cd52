/* memory_types.h - types of the memory profiler shared by its BPF unit
 * (bpf/cpu_sampler/memory.bpf.c) and user space (collect/sampler_memory.c),
 * and the sampling arithmetic both use.
 *
 * Allocations are sampled as a Poisson process over allocated bytes with a
 * mean interval of R bytes: an allocation of S bytes holds at least one
 * point of the process with probability q = 1 - exp(-S/R), independently
 * of every other allocation, so it is sampled with that probability and
 * weighs S / q bytes and 1 / q objects (unbiased totals). The arithmetic is
 * fixed point (no floating point in BPF) and pure, so user space tests it.
 * Only __u32/__u64 here, so both sides agree on layout.
 */
#ifndef PROFCAP_BPF_MEMORY_TYPES_H
#define PROFCAP_BPF_MEMORY_TYPES_H

#include <linux/types.h>

#define MEM_FP_BITS 28
#define MEM_FP_ONE (1ull << MEM_FP_BITS)
/* Object weights carry this many extra fraction bits (1/q of a large
 * allocation lies between 1 and 2: rounding each to an integer biases). */
#define MEM_OBJ_BITS 10
#define MEM_RATE_DEFAULT (512ull << 10)
#define MEM_RATE_MAX (1ull << 32)
/* Above this many mean intervals an allocation is always sampled (q is 1
 * to within 2e-9); also the largest size the fixed point takes. */
#define MEM_ALWAYS_X 20
#define MEM_SIZE_MAX (1ull << 35)

/* q(x) = 1 - exp(-x) for 0 <= x < 1, x and result in MEM_FP_ONE units:
 * x (1 - x/2 (1 - x/3 (1 - ... (1 - x/12)))), error below x^13 / 13!. */
static inline __u64 mem__q_small(__u64 x)
{
	__u64 t = MEM_FP_ONE;
	__u32 k;

	for (k = 12; k >= 2; k--)
		t = MEM_FP_ONE - x * t / MEM_FP_ONE / k;
	return (x * t + MEM_FP_ONE / 2) / MEM_FP_ONE;
}

/* The probability (MEM_FP_ONE units, at most MEM_FP_ONE) that an allocation
 * of @size bytes is sampled at mean interval @rate bytes (1..MEM_RATE_MAX). */
static inline __u64 mem__prob(__u64 size, __u64 rate)
{
	/* exp(-1) in MEM_FP_ONE units */
	const __u64 e1 = 98751332ull;
	__u64 x, e = MEM_FP_ONE, n;
	__u32 i;

	if (!size)
		return 0;
	if (!rate || size >= MEM_SIZE_MAX || size >= MEM_ALWAYS_X * rate)
		return MEM_FP_ONE;
	x = (size << MEM_FP_BITS) / rate;
	if (x < MEM_FP_ONE)
		return mem__q_small(x) ?: 1;
	/* exp(-x) = exp(-n) exp(-r), n the integer part of x */
	n = x >> MEM_FP_BITS;
	for (i = 0; i < MEM_ALWAYS_X; i++)
		if (i < n)
			e = e * e1 / MEM_FP_ONE;
	e = e * (MEM_FP_ONE - mem__q_small(x & (MEM_FP_ONE - 1))) / MEM_FP_ONE;
	return MEM_FP_ONE - e;
}

/* Weights of a sampled allocation of @size bytes whose probability was
 * @q (mem__prob(), not 0): bytes, and objects in 2^-MEM_OBJ_BITS units. */
static inline __u64 mem__weight_bytes(__u64 size, __u64 q)
{
	return q >= MEM_FP_ONE ? size : (size << MEM_FP_BITS) / q;
}

static inline __u64 mem__weight_objs(__u64 q)
{
	return q >= MEM_FP_ONE ? 1ull << MEM_OBJ_BITS : (MEM_FP_ONE << MEM_OBJ_BITS) / q;
}

/* What an allocator entry point does with its arguments (struct
 * mem_probe_cfg, user space's table of symbols). */
enum mem_kind {
	MEM_MALLOC = 0,	    /* (size): a pointer */
	MEM_CALLOC,	    /* (n, size) */
	MEM_REALLOC,	    /* (ptr, size): frees ptr */
	MEM_MEMALIGN,	    /* (align, size): aligned_alloc, memalign */
	MEM_POSIX_MEMALIGN, /* (&ptr, align, size): the pointer written to *arg1, returns 0 */
	MEM_FREE,	    /* (ptr) */
	MEM_MMAP,	    /* (addr, len, prot, flags, fd, off): anonymous only */
	MEM_MUNMAP,	    /* (addr, len) */
	MEM_KIND__COUNT,
};

/* Aggregation key: one counter per (process, thread, user stack). */
struct mem_key {
	__u32 tgid;
	__u32 tid;
	__u64 ustack; /* hash of the user stack in mem_stacks, 0 = none */
	__u32 flags;  /* PROFCAP_F_* of the stack */
	__u32 pad;
	__u64 comm[2];
};

/* Sampled allocations of a key: weighted bytes and objects (objects in
 * 2^-MEM_OBJ_BITS units). */
struct mem_val {
	__u64 bytes;
	__u64 objs;
};

/* The live table: a sampled allocation not freed yet, by process and
 * address. */
struct mem_live_key {
	__u32 tgid;
	__u32 pad;
	__u64 ptr;
};

struct mem_live_val {
	struct mem_key key;
	struct mem_val w;
};

/* A sampled call between its entry and its return, by thread. */
struct mem_pending {
	struct mem_key key;
	struct mem_val w;
	__u64 outp; /* MEM_POSIX_MEMALIGN: where the pointer is written */
	__u32 kind;
	__u32 pad;
};

/* Configuration user space writes (mem_config[0]) after load. */
struct mem_config {
	__u64 rate;	     /* mean bytes between samples */
	__u64 live_max;	     /* live entries, all processes */
	__u64 live_per_proc; /* ... of one process */
	/* Back-pressure: sampled calls per second allowed (0 = no limit);
	 * past it a sampled call is kept with probability keep (MEM_FP_ONE
	 * units), set by user space each second, its weights divided by it. */
	__u64 keep;
	__u32 anon_mmap; /* record anonymous mmap()s */
	__u32 pad;
};

/* Per-CPU counters (mem_stats). */
enum mem_stat {
	MEM_STAT_CALLS = 0,    /* allocation calls seen */
	MEM_STAT_SAMPLED,      /* ... sampled */
	MEM_STAT_FREES,	       /* free calls seen */
	MEM_STAT_FREED,	       /* ... of a live sampled allocation */
	MEM_STAT_COUNTS_FULL,  /* sampled allocations lost: aggregation table full */
	MEM_STAT_LIVE_FULL,    /* ... not tracked live: the table full */
	MEM_STAT_LIVE_PROC,    /* ... not tracked live: the process's share used */
	MEM_STAT_PENDING_LOST, /* returns whose entry was gone */
	MEM_STAT_THROTTLED,    /* sampled calls dropped by back-pressure */
	MEM_STAT_WALK_BUSY,    /* ... counted without a stack: another walk held the slot */
	MEM_STAT__COUNT,
};

#endif
