/* page_touch.c - what the first write to a fresh anonymous page costs here,
 * per 4 KiB, by how the memory was prepared (see page_touch.sh):
 *   fault     nothing: one page fault per page
 *   populate  MADV_POPULATE_WRITE first (one call), then the writes
 *   huge      MADV_HUGEPAGE on a 2 MiB-aligned range: a fault per 2 MiB
 *   huge+pop  both
 * Each figure is thread CPU time per page of a SIZE-MiB buffer, the median
 * of ROUNDS fresh mappings, preparation and first writes apart; a second
 * pass over the same pages shows the touch itself. "1st round" is the
 * first mapping's preparation and first writes together: after a pause of
 * PAUSE seconds before each kind, the memory the host took back meanwhile
 * (a VM's free page reporting: page_reporting_order) is in it, as it is
 * for a profiler that starts on an idle host; the later rounds reuse what
 * the previous one freed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define HUGE (2ul << 20)
#define PAGE 4096ul

static double cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {"fault", "populate", "huge", "huge+pop"};
	size_t len = (size_t)(argc > 1 ? atoi(argv[1]) : 16) << 20, pages;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	int pause = argc > 3 ? atoi(argv[3]) : 0;
	double prep[64], first[64], again[64], round0;

	if (!len || rounds < 1 || rounds > 64 || pause < 0) {
		fprintf(stderr, "usage: page_touch [SIZE_MIB] [ROUNDS <= 64] [PAUSE_S]\n");
		return 2;
	}
	pages = len / PAGE;
	printf("%-9s %12s %16s %12s %12s   (us per 4 KiB, median of %d, %zu MiB)\n", "memory",
	       "prepare", "first write", "again", "1st round", rounds, len >> 20);
	for (int mode = 0; mode < 4; mode++) {
		if (pause)
			sleep((unsigned)pause);
		for (int r = 0; r < rounds; r++) {
			char *m = mmap(NULL, len + HUGE, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			char *p;
			double t0, t1, t2, t3;

			if (m == MAP_FAILED) {
				perror("mmap");
				return 1;
			}
			p = (char *)(((uintptr_t)m + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
			t0 = cpu_us();
			if (mode >= 2)
				madvise(p, len, MADV_HUGEPAGE);
			if (mode & 1)
				madvise(p, len, MADV_POPULATE_WRITE);
			t1 = cpu_us();
			for (size_t i = 0; i < len; i += PAGE)
				p[i] = 1;
			t2 = cpu_us();
			for (size_t i = 0; i < len; i += PAGE)
				p[i] = 2;
			t3 = cpu_us();
			prep[r] = (t1 - t0) / pages;
			first[r] = (t2 - t1) / pages;
			again[r] = (t3 - t2) / pages;
			if (!r)
				round0 = (t2 - t0) / pages;
			munmap(m, len + HUGE);
		}
		qsort(prep, rounds, sizeof(double), cmp_double);
		qsort(first, rounds, sizeof(double), cmp_double);
		qsort(again, rounds, sizeof(double), cmp_double);
		printf("%-9s %12.2f %16.2f %12.3f %12.2f\n", names[mode], prep[rounds / 2],
		       first[rounds / 2], again[rounds / 2], round0);
	}
	return 0;
}
