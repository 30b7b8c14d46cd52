/* groundtruth.c - a CPU workload with a known split across call chains.
 *
 * Each round burns the same per-unit work in three chains:
 *   main -> chain_a -> burn_a                 50 units
 *   main -> chain_b -> middle_b -> burn_b     30 units
 *   main -> chain_c -> burn_c                 20 units
 * so a correct profiler attributes 50/30/20 % of the main thread's samples.
 * With -t, a second thread named "gt-worker" runs worker_loop -> burn_w only.
 * With -r DEPTH, the main thread instead burns in burn_r below DEPTH frames
 * of deep() (stacks deeper than a profiler's depth limit).
 * Runs until killed, or for -d SECONDS. Built with frame pointers and without
 * sibling-call optimisation, so every chain_* frame really exists.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

/* An out-of-line call per unit makes every burn_* a non-leaf function, so
 * GCC gives it a frame (it drops the frame pointer of leaf functions even
 * with -mno-omit-leaf-frame-pointer). */
NOINLINE void unit_done(void)
{
	__asm__ volatile("" ::: "memory");
}

/* Identical work per unit in every chain, inlined into each burn_* function
 * so the leaf frame is the burn_* function itself. */
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

NOINLINE void burn_a(long n)
{
	BURN(n);
}
NOINLINE void burn_b(long n)
{
	BURN(n);
}
NOINLINE void burn_c(long n)
{
	BURN(n);
}
NOINLINE void burn_w(long n)
{
	BURN(n);
}

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

NOINLINE void chain_a(void)
{
	burn_a(50);
}
NOINLINE void middle_b(void)
{
	burn_b(30);
}
NOINLINE void chain_b(void)
{
	middle_b();
}
NOINLINE void chain_c(void)
{
	burn_c(20);
}

static double deadline;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE void *worker_loop(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "gt-worker");
	while (!deadline || now() < deadline)
		burn_w(25);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	int c, threads = 0, depth = 0;

	while ((c = getopt(argc, argv, "d:r:t")) != -1) {
		switch (c) {
		case 'd':
			deadline = now() + atof(optarg);
			break;
		case 't':
			threads = 1;
			break;
		case 'r':
			depth = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: groundtruth [-d SECONDS] [-r DEPTH] [-t]\n");
			return 2;
		}
	}
	prctl(PR_SET_NAME, "gt-main");
	if (threads && pthread_create(&th, NULL, worker_loop, NULL)) {
		perror("pthread_create");
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (depth > 0 && (!deadline || now() < deadline))
		deep(depth);
	while (!depth && (!deadline || now() < deadline)) {
		chain_a();
		chain_b();
		chain_c();
	}
	if (threads)
		pthread_join(th, NULL);
	return 0;
}
