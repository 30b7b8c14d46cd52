/* activity.h - the thread-activity view of a profile with times: per
 * thread, when it ran, waited or was preempted, and which spans it ran in.
 *
 * Sources, all from the profile's timed occurrences:
 * - running: CPU samples (type 0 with a cpu/nanoseconds period), each
 *   standing for its value times the period of CPU time around its time;
 * - waiting and runnable: off-CPU waits (type "off_cpu"), each an exact
 *   interval [start, start + value) in its profcap.off_cpu.state
 *   (runnable only when the capture had --off-cpu-runnable);
 * - unknown: the rest of the thread's time between its first and last
 *   piece (short waits below the off-CPU threshold, sampling gaps).
 *
 * Two readings of the same data:
 * - per interval (interval_ns > 0): nanoseconds of each state per thread,
 *   CPU samples counted at their time (an unbiased estimate of CPU time),
 *   waits split exactly across intervals; unknown is the interval's time
 *   not accounted for;
 * - segments: the thread's time line as non-overlapping [start, end)
 *   pieces in one state, for drawing: a sample covers half a period on
 *   each side of its time, neighbouring ones within half a period merge,
 *   and a wait (measured, not sampled) wins where the two overlap.
 * Spans (thread context links) cover, per thread, the first to the last
 * piece taken in them.
 *
 * Pure code. Bounded: ACTIVITY_MAX_THREADS threads shown (the most active;
 * the rest counted), ACTIVITY_MAX_INTERVALS intervals, ACTIVITY_MAX_SEGMENTS
 * segments and ACTIVITY_MAX_SPANS spans in all (further ones counted).
 */
#ifndef PROFCAP_MODEL_ACTIVITY_H
#define PROFCAP_MODEL_ACTIVITY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct profile;

enum activity_state {
	ACTIVITY_RUNNING = 0,
	ACTIVITY_RUNNABLE,	  /* preempted: off-CPU state runnable */
	ACTIVITY_INTERRUPTIBLE,	  /* waiting: S (sleep, futex, poll, ...) */
	ACTIVITY_UNINTERRUPTIBLE, /* waiting: D (mostly disk I/O) */
	ACTIVITY_OTHER_WAIT,	  /* waiting in another or an unknown state */
	ACTIVITY_UNKNOWN,	  /* nothing says what the thread did */
	ACTIVITY__STATES,
};

#define ACTIVITY_MAX_THREADS 256u
#define ACTIVITY_MAX_TRACKED 65536u /* threads counted before the most active are picked */
#define ACTIVITY_MAX_INTERVALS 2000u
#define ACTIVITY_MAX_SEGMENTS (1u << 20)
#define ACTIVITY_MAX_SPANS 65536u

struct activity_opts {
	__u64 interval_ns; /* 0: no per-interval values, unless @columns */
	size_t columns;	   /* interval_ns 0: a round interval for this many */
	__u32 max_threads; /* 0 = ACTIVITY_MAX_THREADS (and never more) */
	bool filter_pid;
	__s64 pid;
	const char *comm; /* only threads whose exe or thread name is this */
};

struct activity_segment {
	__u64 start, end; /* ns since the epoch, start < end */
	__u32 state;	  /* enum activity_state, never ACTIVITY_UNKNOWN */
	__u32 pad;
};

struct activity_span {
	__u64 start, end; /* first and last piece taken in the span */
	__u64 cpu_ns;	  /* CPU samples in it, times the period */
	__u64 wait_ns;	  /* off-CPU time in it (every state) */
	__u32 link;	  /* the profile's link index (profile__link()), never 0 */
	__u32 pad;
};

struct activity_thread {
	__s64 pid, tid;
	const char *name;	    /* thread name, else executable name, else "?"; borrowed */
	__u64 first, last;	    /* the thread's first and last piece */
	__u64 ns[ACTIVITY__STATES]; /* totals; unknown within [first, last) */
	__u64 *cells;		    /* nintervals * ACTIVITY__STATES ns, NULL without intervals */
	struct activity_segment *segs; /* in time order */
	size_t nsegs, segs_cap;
	struct activity_span *spans; /* by start */
	size_t nspans, spans_cap;
};

struct activity {
	__u64 start, end;		 /* first and last piece of every thread kept */
	__u64 period_ns;		 /* CPU time one sample stands for (0: no CPU samples) */
	__u64 interval_ns;		 /* as asked */
	size_t nintervals;		 /* from @start, ceil((end - start) / interval_ns) */
	struct activity_thread *threads; /* by pid, then tid */
	size_t nthreads;
	size_t threads_hidden; /* threads with time not shown (over the cap) */
	__u64 untimed;	       /* occurrences without time, left out */
	__u64 dropped;	       /* pieces of threads past ACTIVITY_MAX_TRACKED */
	__u64 segments_dropped;
	__u64 spans_dropped;
	bool has_wait;	   /* some off-CPU wait was timed */
	bool has_runnable; /* some wait was runnable */
};

/* Build the activity of @p's timed occurrences as @o says into *@out (free
 * with activity__free()). 0, -ENODATA (no timed CPU sample or wait kept),
 * -E2BIG (more than ACTIVITY_MAX_INTERVALS intervals) or -ENOMEM. */
int activity__build(const struct profile *p, const struct activity_opts *o, struct activity **out);
void activity__free(struct activity *a);

/* "running", "runnable", "interruptible", "uninterruptible", "waiting",
 * "unknown"; "?" out of range. */
const char *activity__state_name(unsigned int s);
/* One character per state for text rows: '#', '+', 'S', 'D', 'w', '.'. */
char activity__state_char(unsigned int s);

/* The state shown for interval @i of thread @t: the known state that held
 * most of it when that is at least a quarter of the thread's time in it,
 * else ACTIVITY_UNKNOWN; ACTIVITY__STATES when @i is outside the thread's
 * time (before its first or after its last piece). */
unsigned int activity__dominant(const struct activity *a, const struct activity_thread *t,
				size_t i);

/* A round interval (1, 2 or 5 times a power of ten ns, at least 1 ms) that
 * cuts @span_ns into at most @target intervals. */
__u64 activity__auto_interval(__u64 span_ns, size_t target);

#endif
