/* array.h - growth of a caller-owned array by doubling, under a hard cap.
 *
 * One helper for the many tables profcap builds whose size is unknown up
 * front (symbols, CFI rows, stack keys, folded lines): the caller keeps the
 * pointer, the count and the capacity; this only makes room.
 */
#ifndef PROFCAP_ARRAY_H
#define PROFCAP_ARRAY_H

#include <stddef.h>

/* Make room in *@v (elements of @size bytes, *@cap of them allocated) for
 * element @n, i.e. at least @n + 1 elements: doubles *@cap (from @first
 * when 0), never beyond @max elements. *@v and *@cap change only on
 * success. 0, -E2BIG when @n >= @max, -ENOMEM (the array is unchanged). */
int array__grow(void **v, size_t *cap, size_t n, size_t size, size_t first, size_t max);

#endif
