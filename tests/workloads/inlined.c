/* inlined.c - ground truth for source lines and inlined frames.
 *
 * hot_caller() spends nearly all its time in mix(), which the compiler must
 * inline (always_inline): a sample there is the frame pair
 *   mix (inlined, lines MIX_FIRST..MIX_LAST) <- hot_caller (line CALL_SITE)
 * The line numbers are found by the test from the markers in this file.
 * Prints "ready" once running; runs until killed. Built -O2 -g.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 4096; i++) { /* MIX_FIRST */
		x ^= x >> 13;
		x *= 0x9e3779b97f4a7c15ull;
		x ^= x >> 29;
	} /* MIX_LAST */
	return x;
}

__attribute__((noinline)) unsigned long hot_caller(unsigned long seed)
{
	return mix(seed); /* CALL_SITE */
}

int main(void)
{
	unsigned long i = 0;

	printf("ready\n");
	fflush(stdout);
	for (;;)
		sink = hot_caller(sink + i++);
}
