/* burn.h - the CPU work shared by the single-file ground-truth workloads.
 *
 * BURN(units) does identical work per unit wherever it is inlined, so the
 * share of samples in each chain follows the units it burns. Each unit ends
 * with an out-of-line call (unit_done), which makes every burner a non-leaf
 * function: GCC keeps its frame even where it drops leaf frame pointers.
 * deep(DEPTH) burns in burn_r below DEPTH recursive frames, for stacks deeper
 * than a profiler's limit. Included once per program: it defines functions.
 */
#ifndef PROFCAP_WORKLOAD_BURN_H
#define PROFCAP_WORKLOAD_BURN_H

#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE void unit_done(void)
{
	__asm__ volatile("" ::: "memory");
}

#define BURN(units)                                                                    \
	do {                                                                           \
		unsigned long x = sink;                                                \
		for (long u = 0; u < (units); u++) {                                   \
			for (int i = 0; i < 20000; i++)                                \
				x = x * 6364136223846793005ul + 1442695040888963407ul; \
			unit_done();                                                   \
		}                                                                      \
		sink = x;                                                              \
	} while (0)

NOINLINE void burn_r(long n)
{
	BURN(n);
}

NOINLINE void deep(int depth)
{
	if (depth > 0)
		deep(depth - 1);
	else
		burn_r(10);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
