// SPDX-License-Identifier: GPL-2.0
/* stacks.bpf.c - the stack tables and counters every unit of the sampler's
 * BPF object shares (declared in stacks.bpf.h). */
#include "stacks.bpf.h"

__u32 gen = 0;
const volatile __u32 want_user = 1;
const volatile __u32 want_kernel = 1;
const volatile __u32 task_mm_off = 0;

struct stacks_map stacks0 SEC(".maps");
struct stacks_map stacks1 SEC(".maps");
struct ustack_ext_map ustack_ext0 SEC(".maps");
struct ustack_ext_map ustack_ext1 SEC(".maps");
struct stats_map stats SEC(".maps");
struct scratch_map scratch SEC(".maps");

__attribute__((noinline)) int stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		(*v)++;
	return 0;
}

__attribute__((noinline)) __u64 stack_hash(const struct stack_trace *st)
{
	__u64 h;
	__u32 i;

	if (!st)
		return 0;
	h = 0x9e3779b97f4a7c15ull ^ st->nr;

	for (i = 0; i < PROFCAP_MAX_STACK; i++) {
		if (i >= st->nr)
			break;
		h = (h ^ st->ips[i]) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}
