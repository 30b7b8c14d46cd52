/* sort.c - profcap's qsort (see sort.h). */
#include <stdint.h>
#include <string.h>

#include "util/sort.h"

typedef int (*sort_cmp)(const void *, const void *);

/* How elements are swapped: in words of @word bytes (8, 4 or 1). */
struct sorter {
	size_t size;
	size_t word;
	sort_cmp cmp;
};

static inline void swap(const struct sorter *s, char *a, char *b)
{
	size_t i;

	if (a == b)
		return;
	if (s->word == 8) {
		for (i = 0; i < s->size; i += 8) {
			uint64_t t;

			memcpy(&t, a + i, 8);
			memcpy(a + i, b + i, 8);
			memcpy(b + i, &t, 8);
		}
	} else if (s->word == 4) {
		for (i = 0; i < s->size; i += 4) {
			uint32_t t;

			memcpy(&t, a + i, 4);
			memcpy(a + i, b + i, 4);
			memcpy(b + i, &t, 4);
		}
	} else {
		for (i = 0; i < s->size; i++) {
			char t = a[i];

			a[i] = b[i];
			b[i] = t;
		}
	}
}

static void insertion(const struct sorter *s, char *b, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && s->cmp(b + (j - 1) * s->size, b + j * s->size) > 0; j--)
			swap(s, b + (j - 1) * s->size, b + j * s->size);
}

static void sift_down(const struct sorter *s, char *b, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;

		if (child >= n)
			return;
		if (child + 1 < n && s->cmp(b + child * s->size, b + (child + 1) * s->size) < 0)
			child++;
		if (s->cmp(b + root * s->size, b + child * s->size) >= 0)
			return;
		swap(s, b + root * s->size, b + child * s->size);
		root = child;
	}
}

static void heap_sort(const struct sorter *s, char *b, size_t n)
{
	size_t i;

	for (i = n / 2; i-- > 0;)
		sift_down(s, b, i, n);
	for (i = n - 1; i > 0; i--) {
		swap(s, b, b + i * s->size);
		sift_down(s, b, 0, i);
	}
}

/* Partition @b (@n > SORT_SMALL elements) around the median of its first,
 * middle and last: returns the pivot's final index j, with [0, j) <= it
 * <= (j, n). */
static size_t partition(const struct sorter *s, char *b, size_t n)
{
	char *mid = b + (n / 2) * s->size, *hi = b + (n - 1) * s->size;
	size_t i = 1, j = n - 1;

	if (s->cmp(mid, b) < 0)
		swap(s, mid, b);
	if (s->cmp(hi, mid) < 0) {
		swap(s, hi, mid);
		if (s->cmp(mid, b) < 0)
			swap(s, mid, b);
	}
	/* The median goes first, where it stays while the rest is split;
	 * the largest of the three, last, stops the upward scan. */
	swap(s, b, mid);
	for (;;) {
		while (s->cmp(b + i * s->size, b) < 0)
			i++;
		while (s->cmp(b + j * s->size, b) > 0)
			j--;
		if (i >= j)
			break;
		swap(s, b + i * s->size, b + j * s->size);
		i++;
		j--;
	}
	swap(s, b, b + j * s->size);
	return j;
}

/* The smaller side recursively (depth <= log2 n), the larger in the loop;
 * heapsort once @depth levels are used up. */
static void intro(const struct sorter *s, char *b, size_t n, unsigned int depth)
{
	while (n > SORT_SMALL) {
		size_t j;

		if (!depth--) {
			heap_sort(s, b, n);
			return;
		}
		j = partition(s, b, n);
		if (j < n - j - 1) {
			intro(s, b, j, depth);
			b += (j + 1) * s->size;
			n -= j + 1;
		} else {
			intro(s, b + (j + 1) * s->size, n - j - 1, depth);
			n = j;
		}
	}
	insertion(s, b, n);
}

void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	struct sorter s = {.size = size, .word = 1, .cmp = cmp};
	unsigned int depth = 0;
	size_t k;

	if (n < 2 || !size)
		return;
	if (!(size % 8) && !((uintptr_t)base % 8))
		s.word = 8;
	else if (!(size % 4) && !((uintptr_t)base % 4))
		s.word = 4;
	for (k = n; k > 1; k >>= 1)
		depth += 2;
	intro(&s, base, n, depth);
}
