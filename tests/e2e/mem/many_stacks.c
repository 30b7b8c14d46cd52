/* many_stacks.c - more distinct allocation stacks than profcap's stack
 * table holds, for test_memory.py: allocation i (64 KiB, freed at once)
 * is made at the end of a chain of 15 calls of left() and right() spelling
 * i in binary, 32768 stacks in all, 4096 a second. */
#include <stdlib.h>
#include <unistd.h>

static void *left(unsigned bits, int depth);
static void *right(unsigned bits, int depth);

static __attribute__((noinline, noipa)) void *leaf(void)
{
	char *p = malloc(65536);

	if (p)
		p[1] = 1; /* not a tail call */
	return p;
}

static __attribute__((noinline, noipa)) void *step(unsigned bits, int depth)
{
	return !depth ? leaf() : bits & 1 ? right(bits >> 1, depth - 1) : left(bits >> 1, depth - 1);
}

static __attribute__((noinline, noipa)) void *left(unsigned bits, int depth)
{
	void *volatile p = step(bits, depth);

	return p;
}

static __attribute__((noinline, noipa)) void *right(unsigned bits, int depth)
{
	void *volatile p = step(bits, depth);

	return p;
}

int main(int argc, char **argv)
{
	char *volatile first = malloc(16); /* announces the process */
	unsigned i;

	free(first);
	usleep(argc > 1 ? atoi(argv[1]) * 1000 : 1500000);
	for (i = 0; i < 32768; i++) {
		free(step(i, 15));
		if (i % 4096 == 4095)
			sleep(1);
	}
	return 0;
}
