/* array.c - growth by doubling under a cap (see array.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/array.h"

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
