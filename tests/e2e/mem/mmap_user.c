/* mmap_user.c - anonymous mappings made by the program itself, for
 * test_memory.py (--memory-mmap): map_here maps 20 regions of 4 MiB and
 * unmaps every other one. Prints the truth as one JSON line. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define REGION (4u << 20)

static __attribute__((noinline, noipa)) char *map_here(void)
{
	char *p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(1);
	p[0] = 1; /* not a tail call */
	return p;
}

int main(int argc, char **argv)
{
	/* a first allocation announces the process (its tables are built
	 * while it waits) */
	char *volatile first = malloc(16);
	unsigned long long kept = 0;
	int i;

	free(first);
	usleep(argc > 1 ? atoi(argv[1]) * 1000 : 500000);
	for (i = 0; i < 20; i++) {
		char *p = map_here();

		if (i % 2)
			munmap(p, REGION);
		else
			kept += REGION;
	}
	printf("{\"mapped_bytes\": %llu, \"kept_bytes\": %llu}\n", 20ull * REGION, kept);
	fflush(stdout);
	_exit(0);
}
