/* clock.c - time sources (see clock.h). */
#include <errno.h>

#include "util/clock.h"

__u64 clock__ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return 0;
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

__u64 clock__mono_ns(void)
{
	return clock__ns(CLOCK_MONOTONIC);
}

__u64 clock__thread_cpu_ns(void)
{
	return clock__ns(CLOCK_THREAD_CPUTIME_ID);
}

static __u64 system_now(void *ctx)
{
	(void)ctx;
	return clock__mono_ns();
}

static void system_sleep(void *ctx, __u64 ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
			      .tv_nsec = (long)(ns % 1000000000ull)};

	(void)ctx;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

const struct clock clock__system = {system_now, system_sleep, NULL};
