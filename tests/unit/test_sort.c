/* test_sort.c - the build's qsort (util/sort.c, or the C library's with
 * `make SORT=libc`) against a plain insertion sort: sizes 0 to
 * 2000, element sizes 1 to 48 bytes, aligned and not, random keys with
 * many duplicates, sorted, reversed, constant and organ-pipe inputs, and
 * a bound on comparisons (no quadratic input, heapsort takes over). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "util/sort.h"
#include "test.h"

static size_t esize;	/* bytes per element of the current run */
static size_t ncmp;	/* comparisons made */

/* Elements compare by all their bytes, first byte most significant: equal
 * means identical, so the sorted result is unique. */
static int cmp_bytes(const void *a, const void *b)
{
	ncmp++;
	return memcmp(a, b, esize);
}

static void reference(unsigned char *v, size_t n)
{
	unsigned char t[64];

	for (size_t i = 1; i < n; i++) {
		size_t j = i;

		memcpy(t, v + i * esize, esize);
		while (j > 0 && memcmp(v + (j - 1) * esize, t, esize) > 0) {
			memcpy(v + j * esize, v + (j - 1) * esize, esize);
			j--;
		}
		memcpy(v + j * esize, t, esize);
	}
}

static __u64 rng = 0x9e3779b97f4a7c15ull;

static unsigned int next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)(rng >> 11);
}

enum shape { RANDOM, FEW, SORTED, REVERSED, CONSTANT, ORGAN, SHAPES };

static void fill(unsigned char *v, size_t n, enum shape sh)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char *e = v + i * esize;
		unsigned int k;

		switch (sh) {
		case RANDOM:
			k = next();
			break;
		case FEW:
			k = next() % 5;
			break;
		case SORTED:
			k = (unsigned int)i;
			break;
		case REVERSED:
			k = (unsigned int)(n - i);
			break;
		case CONSTANT:
			k = 7;
			break;
		default:
			k = (unsigned int)(i < n / 2 ? i : n - i);
			break;
		}
		memset(e, 0, esize);
		/* the key, big-endian, in the first bytes */
		for (size_t b = 0; b < esize && b < 4; b++)
			e[b] = (unsigned char)(k >> (8 * (esize < 4 ? esize - 1 - b : 3 - b)));
		/* payload after it (equal keys, different bytes: FEW only) */
		if (sh == FEW && esize > 4)
			e[esize - 1] = (unsigned char)next();
	}
}

static void one(size_t n, size_t size, size_t misalign, enum shape sh)
{
	unsigned char *mem = malloc(n * size + 16), *exp = malloc(n * size + 1);
	unsigned char *v = mem + misalign;
	double lg = 1;

	CHECK(mem && exp);
	if (!mem || !exp)
		goto out;
	esize = size;
	fill(v, n, sh);
	memcpy(exp, v, n * size);
	reference(exp, n);
	ncmp = 0;
	qsort(v, n, size, cmp_bytes);
	CHECK(!memcmp(v, exp, n * size));
	for (size_t k = n; k > 1; k >>= 1)
		lg++;
	/* introsort: at most a few n log2 n comparisons, whatever the input */
	CHECK(ncmp <= (size_t)(4 * n * lg) + 64);
out:
	free(mem);
	free(exp);
}

TEST(matches_insertion_sort)
{
	static const size_t sizes[] = {1, 2, 3, 4, 8, 12, 16, 24, 48};
	static const size_t counts[] = {0, 1, 2, 3, 12, 13, 14, 31, 100, 257, 1000, 2000};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
			for (int sh = 0; sh < SHAPES; sh++)
				for (size_t mis = 0; mis < 8; mis += sizes[s] >= 4 ? 4 : 1)
					one(counts[c], sizes[s], mis, (enum shape)sh);
}

/* A median-of-three killer: keys arranged so that every pivot is the
 * second smallest (Musser's construction), which drives plain quicksort to
 * n^2 / 4 comparisons; the depth limit hands it to heapsort. */
TEST(no_quadratic_input)
{
	const size_t n = 4096;
	__u32 *v = malloc(n * sizeof(*v)), *exp = malloc(n * sizeof(*v));
	double lg = 1;

	CHECK(v && exp);
	if (!v || !exp)
		goto out;
	for (size_t i = 0; i < n / 2; i++) {
		v[i] = (__u32)(i % 2 ? n / 2 + i : i + 1);
		v[n / 2 + i] = (__u32)(2 * (i + 1));
	}
	/* keys big-endian, as cmp_bytes() reads them */
	for (size_t i = 0; i < n; i++)
		v[i] = __builtin_bswap32(v[i]);
	esize = sizeof(*v);
	memcpy(exp, v, n * sizeof(*v));
	reference((unsigned char *)exp, n);
	ncmp = 0;
	qsort(v, n, sizeof(*v), cmp_bytes);
	CHECK(!memcmp(v, exp, n * sizeof(*v)));
	for (size_t k = n; k > 1; k >>= 1)
		lg++;
	CHECK(ncmp <= (size_t)(4 * n * lg));
out:
	free(v);
	free(exp);
}

int main(void)
{
	RUN(matches_insertion_sort);
	RUN(no_quadratic_input);
	return TEST_DONE();
}
