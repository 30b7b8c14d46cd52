/* array.h - growth of a caller-owned array by doubling, under a hard cap.
 *
 * One helper for the many tables profcap builds whose size is unknown up
 * front (symbols, CFI rows, stack keys, folded lines): the caller keeps the
 * pointer, the count and the capacity; this only makes room.
 */
#ifndef PROFCAP_ARRAY_H
#define PROFCAP_ARRAY_H

#include <stdbool.h>
#include <stddef.h>

/* Make room in *@v (elements of @size bytes, *@cap of them allocated) for
 * element @n, i.e. at least @n + 1 elements: doubles *@cap (from @first
 * when 0), never beyond @max elements. *@v and *@cap change only on
 * success. 0, -E2BIG when @n >= @max, -ENOMEM (the array is unchanged). */
int array__grow(void **v, size_t *cap, size_t n, size_t size, size_t first, size_t max);

/* Pages populated at once by array__populate(). */
#define ARRAY_POPULATE_BYTES (64u << 10)
/* Arrays smaller than this (capacity) fault as they are written. */
#define ARRAY_POPULATE_MIN (64u << 10)

/* For a large array written in order (@v, @cap elements of @size bytes):
 * when element @n starts a new ARRAY_POPULATE_BYTES window, populate the
 * pages of that window within @cap (MADV_POPULATE_WRITE) in one call: a
 * a page fault per 4 KiB of a table of megabytes costs several times more
 * than populating the window at once, the more in a VM.
 * Contents do not change; arrays under ARRAY_POPULATE_MIN, and kernels
 * without MADV_POPULATE_WRITE (< 5.14), fault as before. */
void array__populate(void *v, size_t n, size_t size, size_t cap);

/* Does element @n (of @size bytes) start a new ARRAY_POPULATE_BYTES
 * window, i.e. has array__populate() anything to do for it? */
static inline bool array__new_window(size_t n, size_t size)
{
	return !n || (n * size) / ARRAY_POPULATE_BYTES != (n * size - size) / ARRAY_POPULATE_BYTES;
}

#endif
