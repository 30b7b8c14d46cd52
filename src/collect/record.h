/* record.h - the sampler's data types, for its users and its parts: the
 * options a capture sets, the aggregated records a drain hands over, and
 * the counters sampler__stats() and sampler__unwind_stats() fill. Types
 * only (collect/sampler.h has the functions).
 */
#ifndef PROFCAP_RECORD_H
#define PROFCAP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "offcpu_types.h"
#include "collect/unwind_table.h"

/* Filters are applied in BPF before any other work. A sample is kept when
 * it passes every filter that is set; within one filter, any entry matches. */
struct sampler_opts {
	__u32 freq_hz;	 /* samples per second per CPU */
	const int *pids; /* processes to keep (filtered in BPF); NULL = all */
	size_t npids;
	const int *tids; /* threads to keep; NULL = all */
	size_t ntids;
	const char *const *comms; /* task names (first 15 bytes) to keep; NULL = all */
	size_t ncomms;
	const int *cgroup_fds; /* open cgroup v2 directories: keep their tasks and
				* their descendants' (at most PROFCAP_MAX_CGROUPS) */
	size_t ncgroups;
	bool follow_forks; /* with pids: also keep every process they create */
	bool user;	   /* collect user stacks */
	bool kernel;	   /* collect kernel stacks */
	bool idle;	   /* keep samples of the idle task (pid 0) */
	/* table unwinding: walk user stacks with .eh_frame tables */
	bool unwind;
	__u32 unwind_rows; /* row store size; 0 = SAMPLER_UNWIND_ROWS */
	/* off-CPU time: time threads spend blocked, by stack */
	bool off_cpu;
	__u64 off_cpu_min_ns;  /* waits shorter than this are only counted */
	bool off_cpu_runnable; /* also record preempted threads (waiting for a CPU) */
	/* per-sample times and CPUs (collect/sampler_times.h) */
	bool timestamps;
};

/* Threads that can be off the CPU at once, all processes, without kernel BTF
 * (an LRU hash); with it, the thread slots (a power of two, which the
 * task-work object hashes with as a constant: offcpu_types.h). */
#define SAMPLER_OFFCPU_THREADS OFFCPU_SLOTS
/* Off-CPU counters per generation (at least; allocated as used). */
#define SAMPLER_OFFCPU_KEYS 16384u
#define SAMPLER_OFFCPU_MIN_NS 100000ull /* --off-cpu-threshold default: 100 us */

/* Row store cap: 8 bytes a row, 32 MiB; it grows file by file up to it. */
#define SAMPLER_UNWIND_ROWS (4u << 20)

/* Deepest stacks a record carries. */
#define SAMPLER_MAX_KSTACK 127
#define SAMPLER_MAX_USTACK 512 /* with table unwinding; else SAMPLER_MAX_KSTACK */
#define SAMPLER_MAX_PYFRAMES 63 /* Python frames (2 words each in @pystack) */

/* sampler_record.flags */
#define SAMPLER_REC_USTACK_ERR 0x1	/* the user stack could not be read */
/* A stack not stored (its table was full when the sample was taken) or
 * gone by the drain: the sample is kept without it. */
#define SAMPLER_REC_USTACK_LOST 0x4
#define SAMPLER_REC_KSTACK_LOST 0x8
#define SAMPLER_REC_USTACK_TRUNC 0x10	/* user stack cut at the depth limit */
#define SAMPLER_REC_KSTACK_TRUNC 0x20	/* kernel stack cut at the depth limit */
#define SAMPLER_REC_USTACK_PARTIAL 0x40 /* user stack not walked to its end */
/* The Python stack (@pystack): cut at its depth limit; cut by a read that
 * failed (its root end missing); walked but not stored (table full). */
#define SAMPLER_REC_PY_TRUNC 0x80
#define SAMPLER_REC_PY_PARTIAL 0x100
#define SAMPLER_REC_PY_LOST 0x200
/* The managed runtime stack (@rtstack: V8, or another runtime, one per
 * process), likewise. */
#define SAMPLER_MAX_JSFRAMES 42 /* JavaScript frames (3 words each in @rtstack) */
#define SAMPLER_REC_V8_TRUNC 0x400
#define SAMPLER_REC_V8_PARTIAL 0x800
#define SAMPLER_REC_V8_LOST 0x1000

enum sampler_kind {
	SAMPLER_KIND_CPU = 0, /* @count CPU samples */
	SAMPLER_KIND_OFF_CPU, /* @count nanoseconds off the CPU, in @switches waits */
};

/* Why an off-CPU record's thread waited (the BPF program's OFFCPU_STATE_*). */
enum sampler_state {
	SAMPLER_STATE_RUNNABLE = 0,	/* preempted: waiting for a CPU */
	SAMPLER_STATE_INTERRUPTIBLE,	/* S: sleep, futex, pipe, socket, poll */
	SAMPLER_STATE_UNINTERRUPTIBLE, /* D: mostly disk I/O */
	SAMPLER_STATE_IDLE,		/* I: kernel worker waiting */
	SAMPLER_STATE_OTHER,		/* stopped, traced, ... */
	SAMPLER_STATE_UNKNOWN,		/* not readable on this kernel */
	SAMPLER_STATE__COUNT,
};

/* Name of @st as carried in profiles ("interruptible", ...). */
const char *sampler__state_name(enum sampler_state st);

#define SAMPLER_TCTX_ATTRS 48 /* = PROFCAP_TCTX_ATTRS (bpf/cpu_sampler.h) */

/* One timed occurrence of a record (with sampler_opts.timestamps). */
struct sampler_time {
	__u64 time_ns; /* ns since the epoch (UTC); a wait: when it began */
	__u64 value;   /* 1 (a CPU sample) or the wait's nanoseconds */
	__u32 cpu;     /* the logical CPU it ran on (a wait: ended on) */
	__u32 flags;   /* SAMPLER_TIME_* */
};

/* sampler_time.flags: the occurrences whose own times were lost (the times
 * ring was full), at the time of the drain that read them: taken within
 * the drain interval before it; no CPU. */
#define SAMPLER_TIME_LOST 0x1

/* One aggregated record: @count samples (or nanoseconds, see @kind) with
 * identical key. The stack arrays are leaf first and borrowed for the
 * duration of the callback. */
struct sampler_record {
	enum sampler_kind kind;
	enum sampler_state state; /* SAMPLER_KIND_OFF_CPU only */
	__u64 switches;		  /* SAMPLER_KIND_OFF_CPU: waits summed in @count */
	__u32 tgid, tid;
	char comm[17];
	__u32 flags; /* SAMPLER_REC_* */
	const __u64 *ustack;
	__u32 nustack;
	const __u64 *kstack;
	__u32 nkstack;
	/* CPython frames of the thread, as the BPF walker encodes them (2
	 * words a frame, innermost first: bpf/python.h), NULL/0 = none */
	const __u64 *pystack;
	__u32 npystack;
	/* V8 JavaScript frames of the thread, as the BPF walker encodes them
	 * (3 words a frame, innermost first: bpf/v8.h), NULL/0 = none */
	const __u64 *rtstack;
	__u32 nrtstack;
	__u64 count;
	/* OpenTelemetry thread context of the samples (OTEP 4947), as the
	 * record's bytes; all zero = none. CPU samples and off-CPU waits. */
	__u8 trace_id[16];
	__u8 span_id[8];
	/* ... and its attrs-data (proc/threadctx.h decodes it; CPU samples
	 * only, 0 for waits): the record's
	 * attrs-data-size, of which the first min(attrs_size,
	 * SAMPLER_TCTX_ATTRS) bytes are in @attrs. */
	__u32 attrs_size;
	__u8 attrs[SAMPLER_TCTX_ATTRS];
	/* The occurrences whose time is known, oldest first (with
	 * timestamps; NULL/0 = none): at most @count samples (CPU) or
	 * @switches waits (off-CPU); the rest carry no time. */
	const struct sampler_time *times;
	__u32 ntimes;
};

struct sampler_stats {
	__u64 samples;	      /* samples taken (after filters) */
	__u64 counts_full;    /* samples lost: aggregation table full */
	__u64 ustack_err;     /* samples whose user stack could not be read */
	__u64 kstack_err;     /* samples whose kernel stack could not be read */
	__u64 stacks_full;    /* stacks not stored: stack table full */
	__u64 stacks_missing; /* records whose stack vanished before the drain */
	__u64 events_lost;    /* new-process notices lost: their ring buffer full */
	__u64 notices_lost;   /* ... read, but lost: the queue to the main thread full */
	__u64 foreign;	      /* samples of tasks outside profcap's PID namespace */
	__u64 drains;
	__u64 bpf_bytes;      /* kernel memory of the BPF maps now (memlock) */
	__u64 bpf_peak_bytes; /* ... the most seen at a drain */
	__u64 first_sample_ns; /* CLOCK_MONOTONIC of the first sample, 0: none yet */
	__u32 ncpus;
	/* off-CPU (zeros when off) */
	__u64 off_cpu_waits;	   /* switch-ins of kept threads measured */
	__u64 off_cpu_short;	   /* ... below the threshold: not in the profile */
	__u64 off_cpu_short_ns;	   /* their time */
	__u64 off_cpu_long_ns;	   /* time of the waits in the profile */
	__u64 off_cpu_counts_full; /* waits lost: aggregation table full */
	__u64 off_cpu_work_busy;   /* long waits left pending: no task work entry free */
	__u64 off_cpu_work_late;   /* ... whose task work ran after the thread left the call */
	/* thread context: samples of processes that publish it */
	__u64 tctx_linked; /* with a valid record (trace and span ids) */
	__u64 tctx_none;   /* with no record attached (or zero ids) */
	__u64 tctx_bad;	   /* record unreadable or not valid: no link */
	/* late walking: samples sent to user space, and those handed to the
	 * drain callback since (the difference is in transit, or lost at the
	 * queue's cap: late_dropped of sampler_unwind_stats) */
	__u64 late_sent;
	__u64 late_emitted;
	/* notices and late samples the BPF programs sent without waking the
	 * notice thread (the main thread took them at its next drain) */
	__u64 quiet;
	/* Python stacks the BPF walker read (CPU samples and waits), and of
	 * those cut by a read that failed, or at the depth limit */
	__u64 py_stacks, py_partial, py_trunc;
	/* CPU of profcap's own threads so far (CLOCK_THREAD_CPUTIME_ID), ns;
	 * 0 for one that never ran. The table builder's share in compiling
	 * new files is parse_cpu_ns of sampler_unwind_stats. */
	__u64 cpu_notice_ns; /* the notice thread: rings, snapshots of new processes */
	__u64 cpu_snap_ns;   /* ... of which reading those snapshots (/proc; -v only, else 0) */
	__u64 cpu_snap_main_ns; /* snapshots the main thread read (lazy notices; -v only) */
	__u64 cpu_builder_ns; /* the unwind table builder */
	__u64 cpu_loader_ns;  /* the quick start's loader of the table unwinder */
	/* New processes' snapshots: mappings from the side-band records
	 * (collect/sideband.h) or from /proc/PID/maps; records read and lost
	 * (sideband false: not available, maps files only). */
	bool sideband;
	__u64 snaps_sideband, snaps_proc;
	/* New processes left to the BPF walker alone (no entries of their own:
	 * their program's table was built, bpf_find_vma() finds the rest). */
	__u64 walked_alone;
	__u64 sideband_records, sideband_lost;
};

/* A record for the drain's caller; a non-zero return stops the drain. */
typedef int (*sampler_record_fn)(void *ctx, const struct sampler_record *r);

struct sampler_unwind_stats {
	struct unwind_table_stats tables; /* the row store */
	/* the BPF walker, summed over CPUs */
	__u64 frames;	   /* frames unwound from tables */
	__u64 fp_frames;   /* frames unwound with frame pointers */
	__u64 complete;	   /* stacks walked to the outermost frame */
	__u64 partial;	   /* stacks stopped early: */
	__u64 no_mapping;  /* ... a PC in no known mapping */
	__u64 no_row;	   /* ... no row or an unsupported rule */
	__u64 read_err;	   /* ... stack memory could not be read */
	__u64 depth;	   /* ... SAMPLER_MAX_USTACK frames */
	__u64 ext_full;	   /* deep stacks whose tail could not be stored */
	__u64 kernel_regs; /* samples in kernel mode (user regs from the task) */
	__u64 no_proc;	   /* samples of processes without tables yet */
	__u64 vma;	   /* mappings found from the kernel's VMAs */
	__u64 vma_exec;	   /* ... of which programs' text, at their exec */
	/* late walking (collect/late.h); complete/partial above include its
	 * outcome */
	__u64 late_sent;     /* samples the BPF walker sent to be finished here */
	__u64 late_lost;     /* ... not sent, its ring buffer full (stayed partial) */
	__u64 late_complete; /* ... walked to the outermost frame here */
	__u64 late_partial;  /* ... emitted partial (no tables in time, walk stopped) */
	__u64 late_dropped;  /* ... lost: queue full */
	__u64 late_maps_read;	 /* process maps read for them */
	__u64 late_maps_offered; /* ... and taken from the notice's snapshot */
	__u64 late_no_tables; /* ... partial because the process had no tables in time */
	__u64 late_ends[5];  /* ... partial walks by how they ended (collect/stackwalk.h) */
};

#endif
