/* timestamps.h - per-sample times, shared by the BPF programs
 * (bpf/cpu_sampler/timestamps.bpf.c) and user space
 * (src/collect/sampler_times.c).
 *
 * With timestamps on, samples are still counted in the kernel by key; each
 * counted occurrence also sends a small event (its time, its CPU and a hash
 * of its key) on the `times` ring buffer. At the drain user space hashes
 * each drained key with profcap_key_hash() below, the one function both
 * sides use, and joins the events of that hash and generation to the
 * record. Only __u32/__u64 here, so both sides agree on layout.
 */
#ifndef PROFCAP_BPF_TIMESTAMPS_H
#define PROFCAP_BPF_TIMESTAMPS_H

#include <linux/types.h>

/* times_event.flags */
#define PROFCAP_TIMES_GEN 0x1  /* counted in generation 1 (else 0) */
#define PROFCAP_TIMES_WAIT 0x2 /* an off-CPU wait: the event is a struct times_wait */
#define PROFCAP_TIMES_MEM 0x4  /* a sampled allocation: the event is a struct times_mem */

/* One CPU sample: 24 bytes (32 on the ring with its header). */
struct times_event {
	__u64 key; /* profcap_key_hash() of its sample_key / offcpu_key */
	__u64 ts;  /* bpf_ktime_get_ns() (CLOCK_MONOTONIC); a wait: when it began */
	__u32 cpu; /* bpf_get_smp_processor_id(); a wait: the CPU it ended on */
	__u32 flags;
};

/* One off-CPU wait kept above the threshold (a pending wait that summed
 * several switches in one system call is one event, their total). */
struct times_wait {
	struct times_event ev;
	__u64 ns; /* its duration */
};

/* Words of a struct mem_key (bpf/memory_types.h) in a struct times_mem. */
#define PROFCAP_TIMES_MEM_KEY_WORDS 5

/* One sampled allocation (memory profiles): its whole key rather than a
 * hash, as it is not counted in the kernel when its event is sent (the
 * event carries its weights). 80 bytes (88 on the ring). ev.key is 0. */
struct times_mem {
	struct times_event ev;
	__u64 bytes; /* its weights, as struct mem_val */
	__u64 objs;
	__u64 key[PROFCAP_TIMES_MEM_KEY_WORDS]; /* its struct mem_key */
};

/* A 64-bit hash of a key of @nwords 64-bit words (the whole key, padding
 * included: map keys are compared byte for byte, so the same bytes). Each
 * word is mixed in by multiply and shift (the MurmurHash3 finaliser's
 * constants), then the result is finalised the same way; never 0.
 * @nwords is a constant on the BPF side (the loop is unrolled). */
static inline __u64 profcap_key_hash(const __u64 *w, __u32 nwords)
{
	__u64 h = 0x9e3779b97f4a7c15ull ^ nwords;
	__u32 i;

	for (i = 0; i < nwords; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
	}
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h ? h : 1;
}

#endif
