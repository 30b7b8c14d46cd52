/* clock.h - the time sources: monotonic and wall-clock nanoseconds, and an
 * injectable clock for the modules whose deadlines and rate limits tests
 * must drive without sleeping (exporter retries, symbolizer refreshes).
 */
#ifndef PROFCAP_UTIL_CLOCK_H
#define PROFCAP_UTIL_CLOCK_H

#include <time.h>
#include <linux/types.h>

/* Nanoseconds of clock @clk (CLOCK_MONOTONIC, CLOCK_REALTIME, ...); 0 when
 * the clock cannot be read. */
__u64 clock__ns(clockid_t clk);

/* clock__ns(CLOCK_MONOTONIC). */
__u64 clock__mono_ns(void);

/* CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), nanoseconds. */
__u64 clock__thread_cpu_ns(void);

/* A clock a module reads instead of the system one. @now_ns returns
 * monotonic nanoseconds; @sleep_ns waits that long (a test's fake clock just
 * advances). Both get @ctx. */
struct clock {
	__u64 (*now_ns)(void *ctx);
	void (*sleep_ns)(void *ctx, __u64 ns);
	void *ctx;
};

/* The system clock: CLOCK_MONOTONIC and nanosleep (restarted on EINTR). */
extern const struct clock clock__system;

#endif
