/* sampler_times.h - per-sample times and CPUs joined to the drain's
 * records (see bpf/timestamps.h).
 *
 * The BPF programs keep counting by key; with timestamps each counted
 * occurrence also sends {key hash, time, CPU} (a wait: its start and
 * duration) on the `times` ring. At a drain, after the generation switch,
 * the ring is read: events of the drained generation are sorted by key
 * hash then time and each drained record gets its slice (times__join()),
 * found by hashing its key with profcap_key_hash(); events of the other
 * generation wait for the next drain. Bounded: at most SAMPLER_TIMES_MAX
 * events are held, the rest are counted lost (so are the ring's own
 * losses). The join is pure code; times__configure() and the ring reading
 * touch the BPF object.
 */
#ifndef PROFCAP_SAMPLER_TIMES_H
#define PROFCAP_SAMPLER_TIMES_H

#include <stddef.h>
#include <linux/types.h>

#include "cpu_sampler.h"
#include "offcpu_types.h"
#include "collect/record.h"
#include "collect/sampler_memory.h"
#include "util/clock.h"

/* Events held between drains at most (32 bytes each, twice while sorted). */
#define SAMPLER_TIMES_MAX (2u << 20)
/* The ring: room for this many seconds of events at the sampling rate
 * (drains come about once a second), within these bounds (bytes). */
#define SAMPLER_TIMES_RING_SECONDS 2u
#define SAMPLER_TIMES_RING_MIN (64u << 10)
#define SAMPLER_TIMES_RING_MAX (32u << 20)
/* Off-CPU waits a CPU is expected to keep per second, for the ring size. */
#define SAMPLER_TIMES_WAITS_HZ 2000u
/* Sampled allocations held between drains at most (72 bytes each). */
#define SAMPLER_TIMES_MEM_MAX (1u << 18)

struct sampler;
struct sampler_times;
struct cpu_sampler;

struct sampler_times_stats {
	__u64 events;	     /* events read from the ring */
	__u64 joined;	     /* ... given to a record */
	__u64 unmatched;     /* ... of a drained generation no record had (quick start) */
	__u64 dropped;	     /* ... not held: SAMPLER_TIMES_MAX reached */
	__u64 ring_lost;     /* not sent: the ring was full (the BPF counter) */
	__u64 ring_mem_lost; /* ... of which sampled allocations (memory) */
	__u64 mem_events;    /* sampled allocations read from the ring */
	__u64 mem_dropped;   /* ... not held: SAMPLER_TIMES_MEM_MAX reached (lost) */
};

/* The ring size for @freq_hz per CPU on @ncpus CPUs (with @off_cpu waits):
 * a power of two within SAMPLER_TIMES_RING_MIN..MAX. */
__u32 times__ring_bytes(__u32 freq_hz, __u32 ncpus, bool off_cpu);

/* The memory sampler's ring: @events_per_s sampled allocations a second
 * (its back-pressure budget) for SAMPLER_TIMES_RING_SECONDS, within the
 * same bounds. */
__u32 times__mem_ring_bytes(__u32 events_per_s);

/* @size, or smaller with the test switch PROFCAP_TIMES_RING=BYTES (halved
 * while not below BYTES, never below a page): losses on demand. */
__u32 times__ring_cap(__u32 size);

/* Before load: turn timestamps on in @skel for options @o (nothing when
 * o->timestamps is off). */
void times__configure(struct cpu_sampler *skel, const struct sampler_opts *o);

/* A join with nothing held; NULL on allocation failure. */
struct sampler_times *times__new(void);
void times__free(struct sampler_times *t);

/* Read @skel's `times` ring (the first call opens it): every event into
 * @t. 0 or -errno (logged once). */
int times__read_ring(struct sampler_times *t, struct cpu_sampler *skel);

/* Hold one event of @size bytes (struct times_event, times_wait or
 * times_mem; a sampled allocation is held apart, past
 * SAMPLER_TIMES_MEM_MAX counted dropped). 0,
 * -EINVAL for a size that is neither (ignored), or -E2BIG past the cap
 * (counted dropped). */
int times__add_event(struct sampler_times *t, const void *data, size_t size);

/* Make the held events of generation @gen1 (0 or 1) ready to join, their
 * CLOCK_MONOTONIC times moved to the epoch by adding @mono_to_real; the
 * other generation's are kept for the next drain. 0 or -ENOMEM. */
int times__prepare(struct sampler_times *t, __u32 gen1, __s64 mono_to_real);

/* Give @r (kind and key as drained) its occurrences: those of key hash
 * @hash of the prepared generation, and what they miss of its value (their
 * events lost) as one more at the drain's time, flagged SAMPLER_TIME_LOST.
 * Borrowed until the next times__join() or times__finish(). */
void times__join(struct sampler_times *t, __u64 hash, struct sampler_record *r);

/* Hash of a drained key (profcap_key_hash() over the whole key). */
__u64 times__sample_hash(const struct sample_key *k);
__u64 times__wait_hash(const struct offcpu_key *k);

/* @r as one occurrence taken at @mono_ns (CLOCK_MONOTONIC) on @cpu, in
 * @t (the caller's, for as long as @r): a sample walked late. */
static inline void times__one(struct sampler_record *r, struct sampler_time *t, __u64 mono_ns,
			      __u32 cpu)
{
	__s64 to_real = (__s64)(clock__ns(CLOCK_REALTIME) - clock__mono_ns());

	*t = (struct sampler_time){
		.time_ns = (__u64)((__s64)mono_ns + to_real), .value = 1, .cpu = cpu};
	r->times = t;
	r->ntimes = 1;
}

/* The sampled allocations held, sorted by key then time, their times
 * moved to the epoch by adding @mono_to_real: *@keys (struct mem_key each,
 * PROFCAP_TIMES_MEM_KEY_WORDS words) and *@tv (same order), borrowed until
 * times__mem_done(). Returns how many. */
size_t times__mem_prepare(struct sampler_times *t, __s64 mono_to_real, const __u64 **keys,
			  const struct memory_time **tv);
/* The prepared allocations are given out: let them go. */
void times__mem_done(struct sampler_times *t);

/* End the drain: what was prepared and not joined is counted unmatched
 * and freed. */
void times__finish(struct sampler_times *t);

/* Counters so far (@skel may be NULL: no ring counter). */
void times__stats(const struct sampler_times *t, const struct cpu_sampler *skel,
		  struct sampler_times_stats *out);

/* Counters so far of sampler @s (all 0 with timestamps off). */
void sampler__times_stats(struct sampler *s, struct sampler_times_stats *out);

#endif
