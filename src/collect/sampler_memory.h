/* sampler_memory.h - memory profiles in the kernel: uprobes on the
 * allocator entry points of the profiled processes, sampled by allocated
 * bytes in BPF (bpf/memory_types.h), stacks walked by the sampler's table
 * unwinder, aggregated per (process, thread, stack) with a bounded live
 * table of the sampled allocations not freed yet.
 *
 * The programs live in the sampler's BPF object (bpf/cpu_sampler/
 * memory.bpf.c) but are loaded only here, as a second instance of that
 * object that shares every map of the sampler's (stack walker tables,
 * filters, notices) but its own: a capture without --memory verifies and
 * attaches nothing of it. Main thread only.
 */
#ifndef PROFCAP_SAMPLER_MEMORY_H
#define PROFCAP_SAMPLER_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "collect/record.h"

struct sampler;
struct memsampler;

/* One sampled allocation with its time (capture --timestamps). */
struct memory_time {
	__u64 time_ns; /* ns since the epoch (UTC) */
	__u64 bytes;   /* its weighted bytes */
	__u64 objs;    /* its weighted objects (rounded) */
	__u32 cpu;
	__u32 pad;
};

#define MEMORY_RATE_DEFAULT (512ull << 10) /* mean bytes between samples */
#define MEMORY_LIVE_MAX (1u << 16)	   /* live sampled allocations, all processes */
#define MEMORY_COUNTS_MAX (1u << 14)	   /* (process, thread, stack) counters */
#define MEMORY_STACKS_MAX (1u << 14)
#define MEMORY_EVENTS_DEFAULT 20000u /* sampled calls per second before back-pressure */

struct memory_opts {
	__u64 rate;	  /* mean bytes between samples; 0 = MEMORY_RATE_DEFAULT */
	__u32 live_max;	  /* 0 = MEMORY_LIVE_MAX */
	__u32 max_events; /* sampled calls per second kept; 0 = MEMORY_EVENTS_DEFAULT */
	bool anon_mmap;	  /* also anonymous mmap()/munmap() outside the allocator */
	bool system_wide; /* every process (-a --memory), not the listed ones */
};

/* One (process, thread, user stack) of a window: sampled allocations made
 * in it (weighted: unbiased estimates) and those still live at its end.
 * @r carries the process, thread and stack (kind CPU, count 1); its stack
 * is borrowed for the callback. */
struct memory_record {
	struct sampler_record r;
	__u64 alloc_bytes, alloc_objects; /* those without time */
	__u64 inuse_bytes, inuse_objects;
	/* with timestamps: the sampled allocations with their time, in time
	 * order (beside alloc_*, which then holds those whose time was lost) */
	const struct memory_time *times;
	__u32 ntimes;
};

typedef int (*memory_record_fn)(void *ctx, const struct memory_record *r);

struct memory_stats {
	__u64 calls;	   /* allocation calls seen */
	__u64 sampled;	   /* ... sampled (kept) */
	__u64 frees;	   /* free calls seen */
	__u64 freed;	   /* ... of a live sampled allocation */
	__u64 counts_full; /* sampled allocations lost: counter table full */
	__u64 live_full;   /* ... not tracked live: table full */
	__u64 live_proc;   /* ... not tracked live: the process's share used */
	__u64 throttled;   /* sampled calls dropped by back-pressure (weighed into the kept) */
	__u64 walk_busy;   /* sampled calls counted without a stack (walk slot taken) */
	__u64 timed;	   /* sampled allocations read with their time (timestamps) */
	__u64 times_lost;  /* ... lost past profcap's caps on them */
	__u64 untimed;	   /* sampled allocations counted without time (ring full) */
	__u64 live;	   /* live entries at the last drain */
	__u32 probes;	   /* uprobes attached */
	__u32 files;	   /* allocator files probed */
	__u32 usdt;	   /* files whose otel_memory probes are used */
	__u64 keep_ppm;	   /* share of sampled calls kept now, per million */
};

/* Load the memory programs next to @s's (after sampler__start(); with a
 * quick start, waits for its hand-over). *@out gets the memory sampler. 0
 * or -errno after one logged line with a hint. */
int memsampler__new(struct sampler *s, const struct memory_opts *o, struct memsampler **out);

/* Probe the allocators process @pid maps now (its program, libc,
 * jemalloc, tcmalloc, mimalloc: the files that define malloc), those not
 * probed for it yet; and the OpenTelemetry contract's otel_memory:alloc
 * and :free probes in any of its files, which once found replace the
 * allocator probes for that process. With system_wide, @pid only says
 * which files: the probes are for every process. 0 (nothing to probe is
 * not an error), or -errno (logged once). */
int memsampler__attach_pid(struct memsampler *m, int pid);

/* Probe the allocators program @exe will load (itself and its DT_NEEDED
 * libraries found in the usual directories) for process @pid, which has
 * not run exec() yet (-- CMD held before its first instruction). Those it
 * maps later are probed at memsampler__attach_pid(). */
int memsampler__attach_exec(struct memsampler *m, int pid, const char *exe);

/* Is @pid followed through forks from a target (a child of -- CMD or of a
 * -p process)? */
bool memsampler__followed(const struct memsampler *m, int pid);

/* Probe followed process @pid: its allocators mapped now and those its
 * program needs (just exec()ed, its libraries may not be mapped yet).
 * Probes of processes that exited are let go first when half the caps
 * are used. 0 or -errno (logged once). */
int memsampler__attach_child(struct memsampler *m, int pid);

/* Hand every (process, thread, stack) to @fn: allocations since the last
 * drain (taken), and with @window_end the live ones now (kept; those of
 * processes that exited are dropped after: a window shows what a process
 * held at its exit). Adjusts back-pressure: call it about once a second.
 * 0, @fn's non-zero return, or -errno. */
int memsampler__drain(struct memsampler *m, bool window_end, memory_record_fn fn, void *ctx);

/* Detach every probe (what was counted stays drainable). */
void memsampler__stop(struct memsampler *m);

void memsampler__stats(const struct memsampler *m, struct memory_stats *st);

/* Accepts NULL. */
void memsampler__free(struct memsampler *m);

/* ---- pure parts (unit-tested) ---- */

/* Might the file at @path hold an allocator (by its name: libc, musl,
 * jemalloc, tcmalloc, mimalloc), or is it @exe (the program: static
 * allocators)? */
bool memsampler__candidate(const char *path, const char *exe);

/* The back-pressure share (MEM_FP_ONE units) that keeps about @max sampled
 * calls per second when @seen were kept in @ns at share @keep (the demand
 * was @seen / @keep); between 2^-16 and 1, 1 without a limit. */
__u64 memsampler__keep(__u64 keep, __u64 seen, __u64 ns, __u64 max);

#endif
