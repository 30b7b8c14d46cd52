/* status.h - what capture and agent tell the operator: the progress line on
 * a terminal, the capture summary, and the agent's per-window status line
 * (text, or one JSON object per line with --json).
 */
#ifndef PROFCAP_STATUS_H
#define PROFCAP_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "collect/record.h"
#include "collect/sampler_times.h"
#include "capture/delivery.h"

/* Facts about one finished window (or the whole capture). */
struct status_window {
	__u64 samples;	      /* in the profile */
	__u64 dropped;	      /* lost: aggregation table or profile full */
	__u64 model_dropped;  /* of which: the profile was full */
	__u64 overrun_lost;   /* ... drained too long after the capture's end */
	__u64 ustack_missing; /* samples of user processes without a user stack */
	__u64 stack_lost;     /* samples kept without a stack the kernel did not store */
	__u64 truncated;      /* stacks cut at the root end (any cause) */
	__u64 partial;	      /* of which: user stack not unwound to the end */
	__u64 late_transit;   /* sampled, walked late, not in the profile yet (or lost at its cap) */
	__u64 py_samples;     /* with Python frames (off-CPU: waits) */
	__u64 py_partial;     /* ... whose Python stack was cut */
	__u64 py_unknown;     /* ... with Python frames not named */
	size_t nproc, nstacks;
	__s64 dur_ns;
	__u32 freq_hz;
	bool unwind;
	bool off_cpu;		 /* --off-cpu: the kernel's wait counters below */
	__u64 off_cpu_min_ns;	 /* its threshold */
	bool off_cpu_runnable;	 /* preemption counted */
	__u64 off_cpu_dropped;	 /* waits the profile could not hold */
	__u64 links_capped;	 /* samples kept without their span link: over the cap */
	__u64 attrs_kept;	 /* samples with thread-context attributes */
	__u64 attrs_unknown;	 /* thread-context attributes dropped: key index not in the
				  * process context's key map (x samples) */
	__u64 attrs_bad;	 /* samples whose attrs-data was cut or malformed */
	__u32 links_cap;	 /* distinct links a window keeps */
	bool timestamps;	 /* --timestamps: the counts below */
	__u64 timed, untimed;	 /* occurrences kept with their time, samples without */
	struct sampler_times_stats times; /* the times ring's counters (cumulative) */
	const struct sampler_stats *st;	       /* cumulative kernel counters */
	const struct sampler_unwind_stats *us; /* NULL without table unwinding */
};

/* @one when @n is 1, else @many: "%llu %s" of a count and its noun. */
const char *status__noun(unsigned long long n, const char *one, const char *many);

/* The progress line's text into @buf (@len bytes): elapsed time, of
 * @seconds when the capture has a length (0: until CMD exits), and the
 * samples so far. snprintf()'s return. */
int status__progress_text(char *buf, size_t len, __s64 elapsed_ns, double seconds, __u64 samples);

/* The progress line ("\r"-rewritten on stderr); @final clears it. */
void status__progress(__s64 elapsed_ns, double seconds, __u64 samples, bool final);

/* The end-of-capture summary: counts, losses, unwinding. */
void status__summary(const struct status_window *w);

/* Agent totals since the start, for the status line. */
struct status_totals {
	__u64 windows, samples, dropped;
	struct delivery_stats delivery;
};

/* One agent status line for window @w (exit code @ret of its delivery). */
void status__window(const struct status_window *w, const struct status_totals *t, int ret,
		    bool json, bool quiet);

/* The agent samples now: one line ("event":"start" with --json) so
 * supervisors and tests know when the first window began. */
void status__start(double interval, bool json, bool quiet);

/* --json: the closing line of an agent run ("event":"exit"), with every
 * window's delivery counted, and the exit code @ret. */
void status__totals(const struct status_totals *t, int ret);

#endif
