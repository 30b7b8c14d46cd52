/* pages.h - give the pages of many ranges back to the kernel at once, and
 * map large buffers where huge pages can back them, in builds that ask for
 * them (`make HUGE_PAGES=on`).
 *
 * Each madvise(MADV_DONTNEED) call ends with a TLB flush, and for a range
 * of up to 33 pages x86 flushes page by page: in a VM every one of those
 * can be an exit to the hypervisor. Linux >= 6.15 takes a vector of ranges
 * in one process_madvise() call on the caller's own pidfd and flushes once
 * for all of them; on older kernels (or where it is refused), one
 * madvise() per range.
 */
#ifndef PROFCAP_UTIL_PAGES_H
#define PROFCAP_UTIL_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

/* Ranges per process_madvise() call (UIO_MAXIOV is 1024). */
#define PAGES_BATCH 256

/* Give back the pages of the @n ranges of @iov (page-aligned starts and
 * lengths, in private mappings of the calling process; any order): they
 * read as zeros afterwards (anonymous) or as the file again (file-backed).
 * Allocates nothing, so it may run under the allocator's lock. Best
 * effort: a range the kernel refuses stays resident. Returns the number
 * of ranges given back. */
size_t pages__release(const struct iovec *iov, size_t n);

/* Size of a transparent huge page (x86-64 PMD). */
#define PAGES_HUGE (2u << 20)

/* Whether large buffers get huge pages: the build's choice (HUGE_PAGES=on
 * or off; PAGES_HUGE_DEFAULT), unless pages__set_huge() said otherwise.
 * Huge pages make the first touch of a buffer of megabytes one fault per
 * 2 MiB instead of one per 4 KiB, which pays where a fault is dear (a VM
 * with shadow paging); where the host backs a fresh huge page lazily (a
 * VM with free page reporting) each costs more than the small faults it
 * saves. Without them, pages__huge() does nothing, pages__map_huge() and
 * pages__grow_huge() are plain mmap() and mremap(). Safe from any thread;
 * allocates nothing (the allocator calls it). */
bool pages__huge_pays(void);

/* Override the build's choice from now on (tests: both paths in one
 * binary). */
void pages__set_huge(bool on);

/* Back the page-aligned range [@p, @p + @len) of an anonymous private
 * mapping with transparent huge pages where the kernel allows it
 * (MADV_HUGEPAGE; THP "madvise" or "always"), for a buffer of megabytes
 * about to be written whole: its first touch then costs a fault per 2 MiB
 * instead of one per 4 KiB. Advise a whole mapping that may be mremap()ed
 * later (a part splits it, and mremap() will not move a range across
 * mappings). Ignored where the kernel refuses, and without huge pages
 * (pages__huge_pays()). */
void pages__huge(void *p, size_t len);

/* A new anonymous private read-write mapping of @len bytes (a page
 * multiple) that starts on a 2 MiB boundary, so that every whole 2 MiB of
 * it can be a huge page (a mapping placed by the kernel has its first and
 * last block split at an arbitrary page). Nothing is allocated until
 * touched. The caller unmaps it (munmap()). NULL on failure (errno set). */
void *pages__map_aligned(size_t len);

/* pages__map_aligned(), advised as pages__huge(): every whole 2 MiB of
 * it can be a huge page. Without huge pages (pages__huge_pays()), a plain
 * mapping of @len bytes. */
void *pages__map_huge(size_t len);

/* Grow the mapping [@p, @p + @len) (from pages__map_huge(), or any
 * private anonymous one) to @nlen bytes (page multiples, @nlen > @len),
 * advised as pages__huge(): in place when it starts on a 2 MiB boundary
 * and the range after it is free, else moved without a copy (mremap())
 * onto a new 2 MiB-aligned range (without huge pages: mremap() with
 * MREMAP_MAYMOVE). Its contents stay; the old address is invalid
 * after a move. The new address, or NULL (errno set) with the
 * mapping unchanged. */
void *pages__grow_huge(void *p, size_t len, size_t nlen);

/* Fault in every page that [@p, @p + @len) touches, of a private writable
 * mapping, in one call (MADV_POPULATE_WRITE) rather than one fault per
 * page as it is written. Best effort: a kernel older than 5.14 refuses it,
 * and the pages fault one by one when written. */
void pages__populate(void *p, size_t len);

#endif
