// SPDX-License-Identifier: GPL-2.0
/* notice.bpf.c - the notice maps (notice.bpf.h) and the exec hook that
 * makes a process announce itself again. */
#include "notice.bpf.h"
#include "target.bpf.h"
#include "unwind.bpf.h"

volatile __u32 lazy_wake = 0;
const volatile __u32 task_leader_off = 0;
const volatile __u32 task_start_off = 0;
const volatile __u32 task_cgroups_off = 0;
const volatile __u32 mm_arg_start_off = 0;
const volatile __u32 mm_arg_end_off = 0;

struct seen_map seen SEC(".maps");
struct execd_map execd SEC(".maps");
struct events_map events SEC(".maps");
struct notice_scratch_map notice_scratch SEC(".maps");

/* A process that exec()s is another program with the same PID: forget that
 * it was announced, so its next sample announces it again and user space
 * reads its new mappings (unwind tables, symbols) at once. A raw tracepoint:
 * attached by name, no tracefs needed (Linux >= 4.17). */
SEC("raw_tp/sched_process_exec")
int profcap_exec(void *ctx)
{
	__u64 task, ns = 0;
	__u32 tgid, tid;

	if (current_ids(&tgid, &tid) || !tgid)
		return 0;
	bpf_map_delete_elem(&seen, &tgid);
	/* After the exec, this thread leads its group, with the leader's
	 * start time: the one notice_process() reads. */
	task = bpf_get_current_task();
	if (task_start_off &&
	    !bpf_probe_read_kernel(&ns, sizeof(ns), (char *)task + task_start_off) && ns)
		bpf_map_update_elem(&execd, &tgid, &ns, BPF_ANY);
	unwind_exec_seed(tgid);
	return 0;
}
