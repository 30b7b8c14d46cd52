/* sort.h - profcap's qsort: an introsort for the whole program, in builds
 * made with `make SORT=profcap` (the default; SORT=libc links the C
 * library's qsort() instead, and not sort.c).
 *
 * musl's qsort() is a smoothsort that moves every element through memcpy
 * calls of its size, byte count by byte count, and symbol tables, libdw's
 * line tables and libbpf's BTF are sorted with it. sort.c defines qsort()
 * for the whole program (as heap.c does malloc(); libc's own qsort object
 * is then never linked): quicksort with a median of three, insertion sort
 * for short runs, heapsort past 2 log2(n) levels so that no input is
 * quadratic, and swaps in 8- or 4-byte words when size and base allow.
 * Not stable, as qsort() never is.
 */
#ifndef PROFCAP_UTIL_SORT_H
#define PROFCAP_UTIL_SORT_H

#include <stddef.h>

/* Runs of this many elements or fewer are insertion-sorted. */
#define SORT_SMALL 12

/* The standard qsort(): sort @n elements of @size bytes at @base in place,
 * in the order of @cmp (negative, 0, positive). Never fails; O(n log n)
 * comparisons for every input. */
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
