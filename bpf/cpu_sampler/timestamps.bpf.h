/* timestamps.bpf.h - per-sample times (timestamps.bpf.c, bpf/timestamps.h):
 * with want_timestamps, each counted CPU sample and each kept off-CPU wait
 * also sends its time, CPU and key hash on the `times` ring, and each
 * sampled allocation its time, CPU, key and weights, which user space
 * reads at each drain. Off: one branch per sample. */
#ifndef PROFCAP_BPF_TIMESTAMPS_BPF_H
#define PROFCAP_BPF_TIMESTAMPS_BPF_H

#include "stacks.bpf.h"
#include "memory_types.h"
#include "offcpu_types.h"
#include "timestamps.h"

extern const volatile __u32 want_timestamps;

/* Global functions (verified once): send the event of one occurrence of
 * @key counted in generation @gen1 (0 or 1); a wait of @ns ending now.
 * 0, or -1 when the ring was full (counted in times_lost). */
int times_sample(const struct sample_key *key, __u32 gen1);
int times_wait(const struct offcpu_key *key, __u32 gen1, __u64 ns);
/* A sampled allocation of @key weighing @w, taken now. */
int times_mem(const struct mem_key *key, const struct mem_val *w);

static __always_inline void times_note_sample(const struct sample_key *key, __u32 gen1)
{
	if (want_timestamps)
		times_sample(key, gen1);
}

static __always_inline void times_note_wait(const struct offcpu_key *key, __u32 gen1, __u64 ns)
{
	if (want_timestamps)
		times_wait(key, gen1, ns);
}

/* With timestamps, a sampled allocation goes on the ring instead of its
 * counter: true when sent (the caller counts it only when not). */
static __always_inline int times_note_mem(const struct mem_key *key, const struct mem_val *w)
{
	return want_timestamps && !times_mem(key, w);
}

#endif
