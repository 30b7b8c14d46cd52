/* cfi_sort.c - CFI rows in address order (see cfi.h). */
#include "collect/cfi_int.h"

static inline void swap_rows(struct cfi_row *a, struct cfi_row *b)
{
	struct cfi_row t = *a;

	*a = *b;
	*b = t;
}

static void insertion_sort(struct cfi_row *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct cfi_row v = a[i];
		__u64 k = cfi__row_key(&v);
		size_t j = i;

		while (j && cfi__row_key(&a[j - 1]) > k) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = v;
	}
}

/* In-place quicksort of @n rows by cfi__row_key() (median-of-three pivots,
 * insertion sort below 16, the smaller side first so the explicit stack
 * stays under 64 levels). The libc qsort() of musl (smoothsort, moving
 * 16-byte rows through memcpy) took 60 % of a large binary's parse. */
void cfi__sort_rows(struct cfi_row *a, size_t n)
{
	struct {
		size_t lo, n;
	} stack[64];
	int sp = 0;

	stack[sp].lo = 0;
	stack[sp++].n = n;
	while (sp) {
		size_t lo = stack[--sp].lo, len = stack[sp].n;

		while (len > 16) {
			struct cfi_row *b = a + lo;
			size_t mid = len / 2, i = 0, j = len - 1;
			__u64 pivot;

			/* median of three into b[mid] */
			if (cfi__row_key(&b[mid]) < cfi__row_key(&b[0]))
				swap_rows(&b[mid], &b[0]);
			if (cfi__row_key(&b[len - 1]) < cfi__row_key(&b[0]))
				swap_rows(&b[len - 1], &b[0]);
			if (cfi__row_key(&b[len - 1]) < cfi__row_key(&b[mid]))
				swap_rows(&b[len - 1], &b[mid]);
			pivot = cfi__row_key(&b[mid]);
			/* Hoare partition: [0, j] <= pivot <= [j + 1, len) */
			for (;;) {
				while (cfi__row_key(&b[i]) < pivot)
					i++;
				while (cfi__row_key(&b[j]) > pivot)
					j--;
				if (i >= j)
					break;
				swap_rows(&b[i], &b[j]);
				i++;
				j--;
			}
			/* Push the larger side, go on with the smaller one. */
			if (j + 1 < len - (j + 1)) {
				stack[sp].lo = lo + j + 1;
				stack[sp++].n = len - (j + 1);
				len = j + 1;
			} else {
				stack[sp].lo = lo;
				stack[sp++].n = j + 1;
				lo += j + 1;
				len -= j + 1;
			}
		}
		insertion_sort(a + lo, len);
	}
}

/* True when @a is in cfi__row_key() order already (FDEs read by address: a
 * function's end under the next one's start was replaced by push_row()). */
bool cfi__rows_sorted(const struct cfi_row *a, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (cfi__row_key(&a[i - 1]) > cfi__row_key(&a[i]))
			return false;
	return true;
}
