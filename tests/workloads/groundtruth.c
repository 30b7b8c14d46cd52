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
#include <unistd.h>

#include "lib/burn.h"

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
