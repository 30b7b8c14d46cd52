/* symwork.c - a workload whose hot function only debug information names.
 *
 * Default: main -> hot_static_work, a static function (so a stripped copy
 * of this binary keeps no symbol for it: only a debug file, a debuglink
 * target or MiniDebugInfo can name it). tests/e2e/test_symbols.py makes
 * the stripped variants from this binary.
 * With -q: main -> sort_round -> qsort of a fresh array, over and over, so
 * most time is inside glibc's qsort internals (msort_with_tmp), which only
 * libc6-dbg's debug file names.
 * Prints "ready PID" once running; runs until killed or -d SECONDS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/burn.h"

static double deadline;

/* Not BURN(): identical code would be folded into burn_r (gcc -fipa-icf)
 * and named after it. */
static __attribute__((noinline, noclone)) void hot_static_work(long n)
{
	unsigned long x = sink;

	for (long u = 0; u < n; u++) {
		for (int i = 0; i < 20000; i++)
			x = (x ^ (x >> 7)) * 0x9e3779b97f4a7c15ul + (unsigned long)i;
		unit_done();
	}
	sink = x;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

static NOINLINE void sort_round(long *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = (long)((i * 2654435761u) % 1000003u);
	qsort(v, n, sizeof(*v), cmp_long);
}

int main(int argc, char **argv)
{
	int c, sort = 0;
	size_t n = 1 << 16;
	long *v = NULL;

	while ((c = getopt(argc, argv, "d:q")) != -1) {
		switch (c) {
		case 'd':
			deadline = now() + atof(optarg);
			break;
		case 'q':
			sort = 1;
			break;
		default:
			fprintf(stderr, "usage: symwork [-d SECONDS] [-q]\n");
			return 2;
		}
	}
	if (sort && !(v = malloc(n * sizeof(*v)))) {
		perror("malloc");
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!deadline || now() < deadline) {
		if (sort)
			sort_round(v, n);
		else
			hot_static_work(50);
	}
	free(v);
	return 0;
}
