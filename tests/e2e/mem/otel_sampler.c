/* otel_sampler.c - a tiny in-process memory sampler that fires the
 * OpenTelemetry contract's USDT probes, for test_memory.py and
 * memory_bench.py: otel_sampler_malloc() samples allocations as a Poisson
 * process over bytes (a per-thread countdown of exponentially distributed
 * intervals, mean OTEL_SAMPLER_RATE bytes, default 512 KiB) and fires
 * otel_memory:alloc(ptr, size, weighted_bytes) for the sampled ones, weighed
 * size / (1 - exp(-size / rate)); otel_sampler_free() fires
 * otel_memory:free(ptr) for every pointer (the profiler keeps only those it
 * saw sampled). Built as a shared library (-lm). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/sdt.h>

static double rate;
static __thread int64_t until = -1; /* bytes to the next sample */
static __thread uint64_t seed;

static double mean_rate(void)
{
	const char *env;

	if (rate == 0) {
		env = getenv("OTEL_SAMPLER_RATE");
		rate = env && atof(env) > 0 ? atof(env) : 512 * 1024;
	}
	return rate;
}

/* Uniform in (0, 1]. */
static double uniform(void)
{
	if (!seed)
		seed = (uint64_t)(uintptr_t)&seed * 0x9e3779b97f4a7c15ull | 1;
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return ((seed >> 11) + 1) / 9007199254740992.0;
}

static int64_t next_interval(void)
{
	return (int64_t)(-log(uniform()) * mean_rate()) + 1;
}

void *otel_sampler_malloc(size_t n)
{
	void *p = malloc(n);
	long weighted;

	if (!p)
		return p;
	if (until < 0)
		until = next_interval();
	until -= (int64_t)n;
	if (until < 0) {
		until = next_interval();
		weighted = (long)((double)n / (1.0 - exp(-(double)n / mean_rate())) + 0.5);
		DTRACE_PROBE3(otel_memory, alloc, p, (long)n, weighted);
	}
	return p;
}

void otel_sampler_free(void *p)
{
	if (p)
		DTRACE_PROBE1(otel_memory, free, p);
	free(p);
}
