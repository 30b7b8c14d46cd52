/* notice.bpf.h - telling user space about processes (notice.bpf.c): the
 * first time one of a process's threads is recorded, a notice on the
 * `events` ring so it reads the process's maps (and unwind tables) while
 * it lives. */
#ifndef PROFCAP_BPF_NOTICE_BPF_H
#define PROFCAP_BPF_NOTICE_BPF_H

#include "stacks.bpf.h"

/* Waking user space (profcap's notice thread) for each record costs more
 * than the record where a wake-up traps to the host. With lazy_wake (user
 * space sets it while its side-band records of mmap()s run, and clears it
 * when those lose records), what user space may take at its next drain
 * goes without a wake-up: the notice of a process exec()ed since (the
 * side-band records hold its mappings: execd) and a late walk of such a
 * process whose files have tables. The main thread takes both rings at
 * each drain. Any other record, and one that finds its ring a quarter
 * full, wakes the notice thread at once: FORCE, since a plain record only
 * wakes it when the ring was empty. */
extern volatile __u32 lazy_wake;

/* task_struct.group_leader, .start_boottime and .cgroups, mm_struct.arg_start
 * and .arg_end (kernel BTF; 0 = none): a notice carries its process's start
 * time and command line, which user space otherwise reads from /proc. */
extern const volatile __u32 task_leader_off;
extern const volatile __u32 task_start_off;
extern const volatile __u32 task_cgroups_off;
extern const volatile __u32 mm_arg_start_off;
extern const volatile __u32 mm_arg_end_off;

/* What `seen` holds for a process: announced, and announced lazily. */
#define SEEN_URGENT 1
#define SEEN_LAZY 2

/* Processes already announced. An LRU: a process evicted from it is only
 * announced again; user space deletes exited ones (a reused PID is new). */
struct seen_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 8192);
};

/* Processes exec()ed while profcap runs, until announced: tgid -> its
 * start time (a reused PID is another process). Filled by profcap_exec. */
struct execd_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1024);
};

struct events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
};

struct notice_buf {
	struct proc_event e;
	char cmdline[PROFCAP_NOTICE_CMDLINE];
};

struct notice_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct notice_buf);
	__uint(max_entries, 1);
};

extern struct seen_map seen SEC(".maps");
extern struct execd_map execd SEC(".maps");
extern struct events_map events SEC(".maps");
extern struct notice_scratch_map notice_scratch SEC(".maps");

/* bpf_ringbuf_output() flags for a record to @ring that may wait (@lazy). */
static __always_inline __u64 wake_flags(void *ring, int lazy)
{
	if (!lazy_wake)
		return 0;
	if (lazy && bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) <
			    bpf_ringbuf_query(ring, BPF_RB_RING_SIZE) / 4) {
		stat_inc(STAT_QUIET);
		return BPF_RB_NO_WAKEUP;
	}
	return BPF_RB_FORCE_WAKEUP;
}

/* The current process's command line into @n (n->e.cmdline_len bytes),
 * when it is process @tgid (an off-CPU record may be another's). */
static __always_inline void read_cmdline(struct notice_buf *n, __u32 tgid)
{
	__u64 mm = 0, lo = 0, hi = 0;
	__u32 len;

	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != tgid || !task_mm_off ||
	    !mm_arg_start_off || !mm_arg_end_off ||
	    bpf_probe_read_kernel(&mm, sizeof(mm), (char *)bpf_get_current_task() + task_mm_off) ||
	    !mm || bpf_probe_read_kernel(&lo, sizeof(lo), (char *)mm + mm_arg_start_off) ||
	    bpf_probe_read_kernel(&hi, sizeof(hi), (char *)mm + mm_arg_end_off) || hi <= lo ||
	    hi - lo > PROFCAP_NOTICE_CMDLINE)
		return;
	len = (__u32)(hi - lo);
	if (len > PROFCAP_NOTICE_CMDLINE)
		return;
	if (!bpf_probe_read_user(n->cmdline, len, (const void *)lo))
		n->e.cmdline_len = len;
}

/* Tell user space about process @tgid the first time one of its threads is
 * recorded. */
static __always_inline void notice_process(__u32 tgid)
{
	struct notice_buf *n;
	struct proc_event *e;
	__u64 leader = 0, ns = 0, *exec_ns;
	__u32 zero = 0, len;
	__u8 seen_as = SEEN_URGENT;

	if (!tgid || bpf_map_lookup_elem(&seen, &tgid))
		return;
	n = bpf_map_lookup_elem(&notice_scratch, &zero);
	if (!n)
		return;
	e = &n->e;
	e->tgid = tgid;
	e->pad = 0;
	e->start = 0;
	e->cgroup = bpf_get_current_cgroup_id();
	e->css = 0;
	e->cmdline_len = 0;
	e->pad2 = 0;
	if (task_cgroups_off)
		bpf_probe_read_kernel(&e->css, sizeof(e->css),
				      (char *)bpf_get_current_task() + task_cgroups_off);
	if (task_leader_off && task_start_off &&
	    !bpf_probe_read_kernel(&leader, sizeof(leader),
				   (char *)bpf_get_current_task() + task_leader_off) &&
	    leader && !bpf_probe_read_kernel(&ns, sizeof(ns), (char *)leader + task_start_off))
		e->start = ns / 10000000; /* USER_HZ (100), as /proc/PID/stat */
	exec_ns = bpf_map_lookup_elem(&execd, &tgid);
	if (exec_ns) {
		if (ns && *exec_ns == ns)
			seen_as = SEEN_LAZY; /* exec()ed since: see lazy_wake */
		bpf_map_delete_elem(&execd, &tgid);
	}
	bpf_map_update_elem(&seen, &tgid, &seen_as, BPF_ANY);
	read_cmdline(n, tgid);
	len = e->cmdline_len;
	if (len > PROFCAP_NOTICE_CMDLINE)
		len = 0;
	if (bpf_ringbuf_output(&events, n, sizeof(*e) + len,
			       wake_flags(&events, seen_as == SEEN_LAZY)))
		stat_inc(STAT_EVENTS_LOST);
}

#endif
