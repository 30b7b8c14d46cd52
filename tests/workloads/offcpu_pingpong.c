/* offcpu_pingpong.c - a context-switch-heavy workload for the off-CPU
 * overhead benchmark: two threads pass a byte back and forth over two
 * pipes, so every hop blocks one thread and wakes the other.
 * Usage: offcpu_pingpong [-n ROUNDS] [-g GOFILE]
 * Prints "ready PID", waits for GOFILE when given, runs ROUNDS round trips,
 * prints "elapsed SECONDS rounds ROUNDS cpu SECONDS" (user + system time of
 * both threads: the tracepoint programs run on their time, and it moves
 * less than wall time on a shared machine).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static long rounds = 200000;

static void *pong(void *arg)
{
	char c;

	(void)arg;
	while (read(ab[0], &c, 1) == 1)
		if (write(ba[1], &c, 1) != 1)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1, nap = {0, 10000000};
	const char *go = NULL;
	pthread_t th;
	char c = 'p';
	long i;
	int o;

	while ((o = getopt(argc, argv, "n:g:")) != -1) {
		if (o == 'n')
			rounds = atol(optarg);
		else if (o == 'g')
			go = optarg;
		else
			return 2;
	}
	if (pipe(ab) || pipe(ba) || pthread_create(&th, NULL, pong, NULL))
		return 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (go && access(go, F_OK))
		nanosleep(&nap, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(ab[1]);
	pthread_join(th, NULL);
	{
		struct rusage ru;
		double cpu;

		getrusage(RUSAGE_SELF, &ru);
		cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		      ru.ru_stime.tv_usec / 1e6;
		printf("elapsed %.6f rounds %ld cpu %.6f\n",
		       t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9, rounds, cpu);
	}
	return 0;
}
