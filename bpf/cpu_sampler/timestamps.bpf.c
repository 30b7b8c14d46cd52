// SPDX-License-Identifier: GPL-2.0
/* timestamps.bpf.c - the `times` ring of per-sample events (see
 * bpf/timestamps.h): user space sizes it from the sampling rate and the
 * drain interval, and reads it at each drain without being woken. */
#include "timestamps.bpf.h"

const volatile __u32 want_timestamps = 0;
__u64 times_lost = 0;	  /* events not sent: the ring was full */
__u64 times_mem_lost = 0; /* ... of which sampled allocations (counted without time) */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* sized by user space when timestamps are on */
} times SEC(".maps");

__attribute__((noinline)) int times_sample(const struct sample_key *key, __u32 gen1)
{
	struct times_event ev;

	if (!key)
		return -1;
	ev.key = profcap_key_hash((const __u64 *)key, sizeof(*key) / sizeof(__u64));
	ev.ts = bpf_ktime_get_ns();
	ev.cpu = bpf_get_smp_processor_id();
	ev.flags = gen1 & PROFCAP_TIMES_GEN;
	if (bpf_ringbuf_output(&times, &ev, sizeof(ev), BPF_RB_NO_WAKEUP)) {
		__sync_fetch_and_add(&times_lost, 1);
		return -1;
	}
	return 0;
}

__attribute__((noinline)) int times_wait(const struct offcpu_key *key, __u32 gen1, __u64 ns)
{
	struct times_wait w;

	if (!key)
		return -1;
	w.ev.key = profcap_key_hash((const __u64 *)key, sizeof(*key) / sizeof(__u64));
	w.ev.ts = bpf_ktime_get_ns() - ns;
	w.ev.cpu = bpf_get_smp_processor_id();
	w.ev.flags = (gen1 & PROFCAP_TIMES_GEN) | PROFCAP_TIMES_WAIT;
	w.ns = ns;
	if (bpf_ringbuf_output(&times, &w, sizeof(w), BPF_RB_NO_WAKEUP)) {
		__sync_fetch_and_add(&times_lost, 1);
		return -1;
	}
	return 0;
}

__attribute__((noinline)) int times_mem(const struct mem_key *key, const struct mem_val *w)
{
	struct times_mem e;

	if (!key || !w)
		return -1;
	__builtin_memcpy(e.key, key, sizeof(e.key));
	e.ev.key = 0;
	e.ev.ts = bpf_ktime_get_ns();
	e.ev.cpu = bpf_get_smp_processor_id();
	e.ev.flags = PROFCAP_TIMES_MEM;
	e.bytes = w->bytes;
	e.objs = w->objs;
	if (bpf_ringbuf_output(&times, &e, sizeof(e), BPF_RB_NO_WAKEUP)) {
		__sync_fetch_and_add(&times_lost, 1);
		__sync_fetch_and_add(&times_mem_lost, 1);
		return -1;
	}
	return 0;
}

_Static_assert(sizeof(struct mem_key) == PROFCAP_TIMES_MEM_KEY_WORDS * sizeof(__u64),
	       "times_mem: the whole mem_key");
