/* cpu_sampler.h - types shared by the CPU-sampling BPF program and user space.
 *
 * Samples are aggregated in the kernel: one counter per distinct key (process,
 * thread, thread name, user stack, kernel stack). Stacks are stored once per
 * content, keyed by a 64-bit hash of their frames. Two generations of maps let
 * user space drain one while the program fills the other.
 * Only __u32/__u64 here, so both sides agree on layout.
 */
#ifndef PROFCAP_BPF_CPU_SAMPLER_H
#define PROFCAP_BPF_CPU_SAMPLER_H

#include "python.h"
#include "v8.h"

#define PROFCAP_MAX_STACK 127 /* the kernel's default perf_event_max_stack */
#define PROFCAP_COMM_WORDS 2  /* 16-byte comm as two __u64 */
/* attrs-data bytes of a thread-context record kept in the sample key: two
 * short string attributes (e.g. a route and a method: 2 + 2 header bytes
 * and 44 of values), the size the OTEP expects a record's attributes to
 * take ("a single cache line of 64 bytes" with the 28-byte head). Each byte
 * grows every key of the count table, so this is kept a multiple of 8 and
 * small; longer attrs-data is cut (user space counts it). */
#define PROFCAP_TCTX_ATTRS 48

/* sample_key.flags */
#define PROFCAP_F_USTACK_ERR 0x1    /* user stack could not be read */
#define PROFCAP_F_KSTACK_ERR 0x2    /* kernel stack could not be read */
#define PROFCAP_F_USTACK_LOST 0x4   /* user stack read but its table was full */
#define PROFCAP_F_KSTACK_LOST 0x8   /* kernel stack read but its table was full */
#define PROFCAP_F_USTACK_TRUNC 0x10 /* user stack hit PROFCAP_MAX_STACK frames */
#define PROFCAP_F_KSTACK_TRUNC 0x20 /* kernel stack hit PROFCAP_MAX_STACK frames */

struct sample_key {
	__u32 tgid;
	__u32 tid;
	__u64 ustack; /* hash of the user stack, 0 = none */
	__u64 kstack; /* hash of the kernel stack, 0 = none */
	__u64 pystack; /* hash of the Python stack (python.h), 0 = none */
	__u32 flags;
	__u32 attrs_size; /* thread context: the record's attrs-data-size */
	__u64 comm[PROFCAP_COMM_WORDS];
	/* OpenTelemetry thread context (OTEP 4947) of the sampled thread when
	 * its record was valid: trace id and span id as the record's bytes;
	 * all zero = none. */
	__u64 trace_id[2];
	__u64 span_id;
	/* ... and the first min(attrs_size, PROFCAP_TCTX_ATTRS) bytes of its
	 * attrs-data (zeros after them), decoded in user space. */
	__u8 attrs[PROFCAP_TCTX_ATTRS];
	/* hash of the managed runtime's stack (V8: v8.h), 0 = none; a process
	 * runs at most one such runtime, so they share this slot */
	__u64 rtstack;
};

/* Processes whose thread context the program reads (threadctx_procs). */
#define PROFCAP_THREADCTX_PROCS 1024

/* threadctx_procs value: where a process's threads keep the pointer
 * `otel_thread_ctx_v1` (src/proc/threadctx.h). modid 0: at the thread
 * pointer + off (two's complement); else at off in the TLS block of module
 * modid, found in the thread's dtv (at the thread pointer + 8). */
#define PROFCAP_TCTX_DTV_MUSL 0x1 /* 8-byte dtv slots, count in slot 0 (else glibc) */
struct threadctx_proc {
	__u64 off;
	__u32 modid;
	__u32 flags;
};

struct stack_trace {
	__u64 nr;
	__u64 ips[PROFCAP_MAX_STACK];
};

enum profcap_stat {
	STAT_SAMPLES = 0, /* program runs that passed the filters */
	STAT_COUNTS_FULL, /* samples lost: count table full */
	STAT_USTACK_ERR,
	STAT_KSTACK_ERR,
	STAT_STACKS_FULL, /* stacks not stored: stack table full */
	STAT_EVENTS_LOST, /* new-process notices lost: ring buffer full */
	STAT_FOREIGN,	  /* samples of tasks outside profcap's PID namespace (skipped) */
	STAT_TCTX_LINKED, /* samples of a process in threadctx_procs with a valid record */
	STAT_TCTX_NONE,	  /* ... with no record (pointer 0) */
	STAT_TCTX_BAD,	  /* ... unreadable or invalid (valid != 1, ids 0) */
	STAT_LATE,	  /* samples sent to user space to be walked late (struct late_sample) */
	STAT_LATE_LOST,	  /* ... not sent: ring buffer full (counted partial instead) */
	STAT_QUIET,	  /* notices and late samples sent without waking user space */
	STAT_PY_STACKS,	  /* Python stacks walked (CPU samples and waits) */
	STAT_PY_PARTIAL,  /* ... cut by a failed read (PROFCAP_F_PY_PARTIAL) */
	STAT_PY_TRUNC,	  /* ... cut at PROFCAP_PY_MAX_FRAMES */
	STAT_V8_STACKS,	  /* JavaScript stacks walked (CPU samples and waits) */
	STAT_V8_PARTIAL,  /* ... cut by a failed read (PROFCAP_F_V8_PARTIAL) */
	STAT_V8_TRUNC,	  /* ... cut at PROFCAP_V8_MAX_FRAMES */
	STAT__COUNT,
};

#define PROFCAP_MAX_CGROUPS 64 /* --cgroup/--container targets */
#define PROFCAP_COMM_LEN 16

/* Key of the comm filter map: the 16-byte task name, zero padded. */
struct comm_key {
	__u64 w[PROFCAP_COMM_WORDS];
};

/* Ring-buffer notice: a process was sampled for the first time. */
struct proc_event {
	__u32 tgid;
	__u32 pad; /* 0: a new process @tgid; PROFCAP_EVENT_NORSEQ (tgid 0) */
	/* when the process started, as field 22 of /proc/PID/stat (clock ticks
	 * since boot), from its task_struct; 0 = unknown */
	__u64 start;
	/* its cgroup v2 ID (bpf_get_current_cgroup_id()) and css_set (the
	 * address of its set of cgroups in every hierarchy, 0 = unknown):
	 * processes of one set share a container, read once (proc/procsnap.h) */
	__u64 cgroup;
	__u64 css;
	/* the process's command line follows (its arguments as
	 * /proc/PID/cmdline has them), this many bytes; 0 = not read (no
	 * kernel BTF, unreadable, or longer than PROFCAP_NOTICE_CMDLINE) */
	__u32 cmdline_len;
	__u32 pad2;
};

/* The longest command line a notice carries. */
#define PROFCAP_NOTICE_CMDLINE 2048

/* Late walking. A sample whose walk stops at a PC the BPF walker
 * could not map (it looks up one VMA per sample, and the mappings user
 * space described may predate a library; or the file's table is still
 * being built) goes to user space instead of being counted partial: its
 * key, the frames walked so far, the registers where the walk stopped and a
 * copy of the stack above them. User space finishes the walk with the same
 * tables (src/collect/late.h). */
#define PROFCAP_LATE_PREFIX 64	 /* frames walked before the stop, at most */
#define PROFCAP_LATE_STACK 16384 /* stack bytes copied above the stop's sp, at most */

struct late_sample {
	struct sample_key key; /* ustack, kstack: 0 (the frames are below) */
	__u64 pc, sp, bp;      /* where the walk stopped: pc is uips[nuser - 1] */
	__u32 bp_ok, exact;
	__u32 nuser, nkern;
	__u32 len; /* stack bytes copied from sp: the record ends there */
	__u32 npy; /* words of @pyips: the Python stack (key.pystack's) */
	/* with want_timestamps (bpf/timestamps.h): when and where it was taken
	 * (bpf_ktime_get_ns(), CPU); @timed 0 = not */
	__u64 time;
	__u32 cpu, timed;
	__u64 kips[PROFCAP_MAX_STACK];
	__u64 uips[PROFCAP_LATE_PREFIX];
	__u64 pyips[2 * PROFCAP_PY_MAX_FRAMES];
	__u64 rtips[PROFCAP_V8_WORDS * PROFCAP_V8_MAX_FRAMES]; /* key.rtstack's words */
	__u32 nrt, pad3;				       /* ... how many */
	__u8 stack[PROFCAP_LATE_STACK + 4096]; /* sent: the first len bytes */
};

/* The off-CPU switch-in side saw the first long wait of a thread without
 * rseq: user space attaches sys_exit (bpf/cpu_sampler/offcpu.bpf.c). */
#define PROFCAP_EVENT_NORSEQ 1

#endif
