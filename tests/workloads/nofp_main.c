/* nofp_main.c - ground truth for stacks of code built without frame
 * pointers (-O2 -fomit-frame-pointer, as distributions build). Each round
 * burns the same per-unit work in three chains:
 *   main -> run_a -> nofp_lib_apply -> nofp_lib_step -> cb_a   40 units
 *       (libnofp.so, also without frame pointers, calls back into us)
 *   main -> run_b -> mid_b -> burn_b                           30 units
 *   main -> run_c -> qsort (Debian's libc) -> ... -> cmp_c      30 units
 * so a correct profiler attributes 40/30/30 % of the samples. With -r DEPTH
 * the process instead burns in burn_r below DEPTH frames of deep().
 * The same source is built with frame pointers as fp_main (an FP binary
 * called back from the no-FP library). Prints "ready PID", runs until
 * killed, for -d SECONDS, or for -n ROUNDS (fixed work, for benchmarks:
 * with -w it waits for a line on stdin before working, and prints
 * "done SECONDS" of work at the end).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "lib/burn.h"

typedef void (*nofp_cb)(long);
void nofp_lib_apply(nofp_cb cb, long units);

NOINLINE void cb_a(long unit)
{
	(void)unit;
	BURN(1);
}

NOINLINE void burn_b(long n)
{
	BURN(n);
}

NOINLINE int cmp_c(const void *a, const void *b)
{
	BURN(1);
	return *(const int *)a - *(const int *)b;
}

NOINLINE void run_a(void)
{
	nofp_lib_apply(cb_a, 40);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void mid_b(void)
{
	burn_b(30);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void run_b(void)
{
	mid_b();
	__asm__ volatile("" ::: "memory");
}

/* qsort of two elements compares exactly once: 30 callbacks, 30 units. */
NOINLINE void run_c(void)
{
	int v[2];

	for (int i = 0; i < 30; i++) {
		v[0] = i & 1;
		v[1] = 1;
		qsort(v, 2, sizeof(v[0]), cmp_c);
	}
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double deadline = 0;
	int c, depth = 0;
	long rounds = -1;
	int wait_go = 0;
	double t0;

	while ((c = getopt(argc, argv, "d:n:r:w")) != -1) {
		switch (c) {
		case 'd':
			deadline = now() + atof(optarg);
			break;
		case 'r':
			depth = atoi(optarg);
			break;
		case 'n':
			rounds = atol(optarg);
			break;
		case 'w':
			wait_go = 1;
			break;
		default:
			fprintf(stderr,
				"usage: nofp_main [-d SECONDS] [-n ROUNDS] [-r DEPTH] [-w]\n");
			return 2;
		}
	}
	prctl(PR_SET_NAME, "nofp-main");
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (wait_go && getchar() == EOF)
		return 1;
	t0 = now();
	while (depth > 0 && (!deadline || now() < deadline))
		deep(depth);
	while (!depth && (!deadline || now() < deadline) && rounds--) {
		run_a();
		run_b();
		run_c();
	}
	if (wait_go)
		printf("done %.6f\n", now() - t0);
	return 0;
}
