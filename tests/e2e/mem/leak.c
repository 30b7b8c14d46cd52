/* leak.c - a leak among churn, for test_memory.py: every 100 ms,
 * leak_here keeps 100 KiB (1 MiB/s, never freed) and churn_here allocates
 * and frees 1 MiB. Runs for the seconds given (default 30). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static __attribute__((noinline, noipa)) void *leak_here(size_t n)
{
	char *p = malloc(n);

	if (p)
		memset(p, 1, n);
	return p;
}

static __attribute__((noinline, noipa)) void churn_here(size_t n)
{
	char *p = malloc(n);

	if (p)
		p[n - 1] = 1;
	free(p);
}

int main(int argc, char **argv)
{
	int ticks = (argc > 1 ? atoi(argv[1]) : 30) * 10, t, i;

	for (t = 0; t < ticks; t++) {
		for (i = 0; i < 25; i++)
			leak_here(4096);
		for (i = 0; i < 256; i++)
			churn_here(4096);
		usleep(100000);
	}
	return 0;
}
