/* target.bpf.h - which tasks are kept: the targeting filters and the
 * processes followed through forks (defined in target.bpf.c), and the
 * checks the sampling and off-CPU programs make with them. */
#ifndef PROFCAP_BPF_TARGET_BPF_H
#define PROFCAP_BPF_TARGET_BPF_H

#include "stacks.bpf.h"

extern const volatile __u32 filter_pids;    /* keep only tgids in `pids` (and followed ones) */
extern const volatile __u32 filter_tids;    /* keep only tids in `tids` */
extern const volatile __u32 filter_comms;   /* keep only task names in `comms` */
extern const volatile __u32 filter_cgroups; /* keep only tasks under the first N of `cgroups` */
extern const volatile __u32 follow_forks;   /* children of kept processes are kept too */
extern const volatile __u32 skip_idle;
/* PID namespace of profcap when it is not the initial one: tgids and tids
 * are reported as seen there, and tasks outside it are skipped. */
extern const volatile __u64 pidns_dev;
extern const volatile __u64 pidns_ino;

/* The filter maps: one entry each until user space resizes them. */
struct u32_set_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1);
};

struct comm_set_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct comm_key);
	__type(value, __u8);
	__uint(max_entries, 1);
};

struct cgroups_map {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
};

/* Processes created by a kept process, keyed by their global PID (the fork
 * tracepoint knows no other); an LRU so a fork storm cannot fill it. */
struct followed_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1); /* sized by user space when following forks */
};

extern struct u32_set_map pids SEC(".maps");
extern struct u32_set_map tids SEC(".maps");
extern struct comm_set_map comms SEC(".maps");
extern struct cgroups_map cgroups SEC(".maps");
extern struct followed_map followed SEC(".maps");

/* The current task's process and thread IDs as profcap sees them: global
 * ones, or those of profcap's PID namespace. -1 for a task outside it. */
static __always_inline int current_ids(__u32 *tgid, __u32 *tid)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct bpf_pidns_info ns;

	*tgid = id >> 32;
	*tid = (__u32)id;
	if (!pidns_ino || !*tgid)
		return 0; /* the idle task is everybody's */
	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)))
		return -1;
	*tgid = ns.tgid;
	*tid = ns.pid;
	return 0;
}

static __always_inline int is_followed(void)
{
	__u32 gtgid = bpf_get_current_pid_tgid() >> 32;

	return follow_forks && bpf_map_lookup_elem(&followed, &gtgid);
}

static __always_inline int under_cgroups(void)
{
	__u32 i;

	for (i = 0; i < PROFCAP_MAX_CGROUPS; i++) {
		if (i >= filter_cgroups)
			break;
		if (bpf_current_task_under_cgroup(&cgroups, i) == 1)
			return 1;
	}
	return 0;
}

#endif
