/* pages.h - give the pages of many ranges back to the kernel at once, and
 * fault in a buffer about to be written whole in one call.
 *
 * Each madvise(MADV_DONTNEED) call ends with a TLB flush, and for a range
 * of up to 33 pages x86 flushes page by page: in a VM every one of those
 * is an exit to the hypervisor (this host: ~60 us for a 64 KiB range, as
 * much as 250 of a 16 MiB one). Linux >= 6.15 takes a vector of ranges in
 * one process_madvise() call on the caller's own pidfd and flushes once
 * for all of them; before that (or where it is refused), one madvise() per
 * range, as before.
 *
 * No transparent huge pages (MADV_HUGEPAGE). In a VM a huge page is a
 * 2 MiB block of guest memory the host may not back yet: untouched since
 * boot, or given back (virtio-balloon free page reporting, for blocks of
 * 2^9 pages and more here). Its first touch then costs ~8 us per 4 KiB,
 * against ~1.5 us for a small page's fault and ~1.2 us populated; only
 * once the block is backed does it cost ~0.3 us
 * (scripts/bench/page_touch.sh). A 30 s compile-loop capture spent 14 %
 * more CPU with them on a fresh machine, and no less once memory had
 * been recycled through the page cache.
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

/* Fault in every page that [@p, @p + @len) touches, of a private writable
 * mapping, in one call (MADV_POPULATE_WRITE) rather than one fault per
 * page as it is written (in a VM with shadow paging, each ~5-17 us). Best
 * effort: a kernel before 5.14 refuses it, and the pages fault as before. */
void pages__populate(void *p, size_t len);

#endif
