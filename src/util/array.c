/* array.c - growth by doubling under a cap (see array.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/array.h"
#include "util/pages.h"

int array__grow(void **v, size_t *cap, size_t n, size_t size, size_t first, size_t max)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return 0;
	if (n >= max)
		return -E2BIG;
	ncap = *cap ? *cap : (first ? first : 1);
	while (ncap <= n)
		ncap = ncap > max / 2 ? max : ncap * 2;
	if (ncap > max)
		ncap = max;
	if (ncap > SIZE_MAX / size)
		return -ENOMEM;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

void array__populate(void *v, size_t n, size_t size, size_t cap)
{
	size_t off = n * size, win = off / ARRAY_POPULATE_BYTES;
	uintptr_t page, lo, hi;

	if (!v || n >= cap || cap * size < ARRAY_POPULATE_MIN || !size ||
	    !array__new_window(n, size))
		return; /* small, or within the window populated before */
	page = (uintptr_t)sysconf(_SC_PAGESIZE);
	lo = ((uintptr_t)v + off + page - 1) & ~(page - 1);
	hi = (uintptr_t)v + (win + 1) * ARRAY_POPULATE_BYTES;
	if (hi > (uintptr_t)v + cap * size)
		hi = (uintptr_t)v + cap * size;
	hi &= ~(page - 1);
	if (hi > lo)
		pages__populate((void *)lo, hi - lo);
}
