/* drain.h - a drain's record assembly, apart from the BPF maps: the keys
 * and counts a drain took become struct sampler_record, whose stacks are
 * looked up by hash through struct drain_stacks (the idle generation's
 * maps in the sampler, fakes in tests) and a deep user stack joined to its
 * tail. Pure code; one drain_scratch per draining thread.
 */
#ifndef PROFCAP_DRAIN_H
#define PROFCAP_DRAIN_H

#include <stdbool.h>
#include <linux/types.h>

#include "cpu_sampler.h"
#include "offcpu_types.h"
#include "collect/record.h"

/* Where a record's stacks are found. */
struct drain_stacks {
	/* Stack @hash into @out. 0, or -ENOENT when it is not there. */
	int (*stack)(void *ctx, __u64 hash, struct stack_trace *out);
	/* Frames PROFCAP_MAX_STACK.. of deep user stack @hash into @tail
	 * (PROFCAP_MAX_USTACK - PROFCAP_MAX_STACK of them). 0 or -ENOENT.
	 * NULL: no deep stacks (no table unwinding). */
	int (*tail)(void *ctx, __u64 hash, __u64 *tail);
	void *ctx;
};

struct sampler_times;

/* The stacks a record borrows until the next record of the same scratch. */
struct drain_scratch {
	struct stack_trace ust, kst, pyst;
	__u64 uips[PROFCAP_MAX_USTACK];
	/* per-sample times joined to the records (collect/sampler_times.h);
	 * NULL: timestamps off */
	struct sampler_times *times;
};

/* Which generation a drain takes when the programs write @gen: the one
 * they write now, after the drain switched them to the other. */
static inline __u32 drain__idle(__u32 gen)
{
	return gen & 1;
}

/* A CPU record from key @k counted @count times (stacks not looked up). */
void drain__cpu_record(const struct sample_key *k, __u64 count, struct sampler_record *r);

/* An off-CPU record from key @k and its value @v. */
void drain__offcpu_record(const struct offcpu_key *k, const struct offcpu_val *v,
			  struct sampler_record *r);

/* Look up @r's user stack @ustack and kernel stack @kstack (hashes; 0 =
 * none) into @d and point @r at them. A stack that is not there flags @r
 * (PROFCAP_F_*_LOST); a deep user stack whose tail is not there is kept
 * to PROFCAP_MAX_STACK frames and flagged partial. Returns the samples
 * (CPU) or waits (off-CPU) whose stacks were missing, once per stack. */
__u64 drain__stacks(struct drain_scratch *d, const struct drain_stacks *src,
		    struct sampler_record *r, __u64 ustack, __u64 kstack);

/* Look up @r's Python stack @pystack (hash; 0 = none) into @d and point
 * @r at its words (an even number, at most 2 * PROFCAP_PY_MAX_FRAMES). One
 * that is not there flags @r SAMPLER_REC_PY_LOST. Returns the samples or
 * waits whose stack was missing. */
__u64 drain__pystack(struct drain_scratch *d, const struct drain_stacks *src,
		     struct sampler_record *r, __u64 pystack);

#endif
