/* search.h - the one binary search of sorted ranges: "the last entry whose
 * start is <= addr", used by every address lookup (maps, symbols, CFI rows,
 * perf maps).
 */
#ifndef PROFCAP_UTIL_SEARCH_H
#define PROFCAP_UTIL_SEARCH_H

#include <stddef.h>
#include <linux/types.h>

/* Number of the @n entries of @base (@size bytes each, sorted by the __u64
 * key at byte @off, ascending) whose key is <= @key. The candidate entry is
 * the one before that index; 0 means none. Inline so that lookups on hot
 * paths keep a constant stride. */
static inline size_t search__upto(const void *base, size_t n, size_t size, size_t off, __u64 key)
{
	const unsigned char *b = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (*(const __u64 *)(const void *)(b + mid * size + off) <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
