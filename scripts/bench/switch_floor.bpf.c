/* switch_floor.bpf.c - an empty BTF tracepoint program on sched_switch: the
 * floor any sched_switch program pays on a host (the tracepoint enabled, the
 * BPF trampoline, an indirect call per switch), measured by offcpu_bench.py's
 * `floor` configuration beside the off-CPU programs. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("tp_btf/sched_switch")
int floor_switch(__u64 *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
