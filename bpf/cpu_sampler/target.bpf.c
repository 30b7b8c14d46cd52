// SPDX-License-Identifier: GPL-2.0
/* target.bpf.c - the targeting filters (target.bpf.h) and the programs
 * that follow new processes of kept ones.
 *
 * User space loads exactly one fork program, or none (autoload):
 *   profcap_fork_raw  raw_tracepoint/sched_process_fork (kernel BTF, >= 4.17)
 *   profcap_fork_btf  tp_btf/sched_process_fork (kernel BTF, Linux >= 5.5)
 *   profcap_fork_tp   tracepoint/sched/sched_process_fork (tracefs)
 * The first two get the task pointers (parent, child) and read the child's
 * pid at fork_pid_off, the offset of task_struct.pid that user space found
 * in the kernel's BTF (no CO-RE relocations: the object must load on
 * kernels without BTF). The third reads child_pid from the tracepoint
 * record at fork_child_off, from the tracepoint's format file: 20 (comms as
 * __data_loc words, Linux >= 6.10) or 44 (comms inline).
 */
#include "target.bpf.h"

const volatile __u32 filter_pids = 0;
const volatile __u32 filter_tids = 0;
const volatile __u32 filter_comms = 0;
const volatile __u32 filter_cgroups = 0;
const volatile __u32 follow_forks = 0;
const volatile __u32 skip_idle = 0;
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
const volatile __u32 fork_child_off = 0;
const volatile __u32 fork_pid_off = 0;

struct u32_set_map pids SEC(".maps");
struct u32_set_map tids SEC(".maps");
struct comm_set_map comms SEC(".maps");
struct cgroups_map cgroups SEC(".maps");
struct followed_map followed SEC(".maps");

/* Runs in the parent: when it is a kept process, its child will be too.
 * @child is the child's global PID, the key of `followed`. */
static __always_inline int follow_child(__u32 child)
{
	__u32 tgid, tid;
	__u8 one = 1;

	if (current_ids(&tgid, &tid))
		return 0;
	if (!bpf_map_lookup_elem(&pids, &tgid) && !is_followed())
		return 0;
	bpf_map_update_elem(&followed, &child, &one, BPF_ANY);
	return 0;
}

static __always_inline int follow_task(__u64 task)
{
	__s32 pid = 0;

	if (!task || bpf_probe_read_kernel(&pid, sizeof(pid), (void *)(task + fork_pid_off)))
		return 0;
	return pid > 0 ? follow_child((__u32)pid) : 0;
}

SEC("tp_btf/sched_process_fork")
int profcap_fork_btf(__u64 *ctx)
{
	return follow_task(ctx[1]);
}

SEC("raw_tracepoint/sched_process_fork")
int profcap_fork_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return follow_task(ctx->args[1]);
}

SEC("tracepoint/sched/sched_process_fork")
int profcap_fork_tp(void *ctx)
{
	__u32 child;

	if (bpf_probe_read_kernel(&child, sizeof(child), (char *)ctx + fork_child_off))
		return 0;
	return follow_child(child);
}
