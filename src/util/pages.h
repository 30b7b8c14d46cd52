/* pages.h - give the pages of many ranges back to the kernel at once.
 *
 * Each madvise(MADV_DONTNEED) call ends with a TLB flush, and for a range
 * of up to 33 pages x86 flushes page by page: in a VM every one of those
 * is an exit to the hypervisor (this host: ~60 us for a 64 KiB range, as
 * much as 250 of a 16 MiB one). Linux >= 6.15 takes a vector of ranges in
 * one process_madvise() call on the caller's own pidfd and flushes once
 * for all of them; before that (or where it is refused), one madvise() per
 * range, as before.
 */
#ifndef PROFCAP_UTIL_PAGES_H
#define PROFCAP_UTIL_PAGES_H

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

/* Back the page-aligned range [@p, @p + @len) of an anonymous private
 * mapping with transparent huge pages where the kernel allows it
 * (MADV_HUGEPAGE; THP "madvise" or "always"), for a buffer of megabytes
 * about to be written whole: its first touch then costs a fault per 2 MiB
 * instead of one per 4 KiB (in a VM with shadow paging, ~5 us each: 25 ms
 * for 6 MiB on this host, under 1 ms with huge pages). Advise a whole
 * mapping that may be mremap()ed later (a part splits it, and mremap() will
 * not move a range across mappings). Ignored where the kernel refuses. */
void pages__huge(void *p, size_t len);

/* Fault in every page that [@p, @p + @len) touches, of a private writable
 * mapping, in one call (MADV_POPULATE_WRITE) rather than one fault per
 * page as it is written (in a VM with shadow paging, each ~5-17 us). Best
 * effort: a kernel before 5.14 refuses it, and the pages fault as before. */
void pages__populate(void *p, size_t len);

#endif
