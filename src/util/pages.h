/* pages.h - give the pages of many ranges back to the kernel at once, and
 * map large buffers where huge pages can back them, on hosts where that
 * pays.
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

/* Small pages faulted in to time (pages__huge_pays()), and the CPU time
 * per fault from which huge pages pay. */
#define PAGES_PROBE 32
#define PAGES_DEAR_FAULT_NS 5000

/* Whether huge pages pay on this host, decided at the first call: when the
 * first write to a fresh small page costs PAGES_DEAR_FAULT_NS or more
 * (timed over PAGES_PROBE pages: ~0.5 ms there, ~50 us elsewhere), or
 * PROFCAP_HUGE_PAGES=1; not with PROFCAP_HUGE_PAGES=0. Two kinds of VM
 * were measured here (scripts/bench/page_touch.sh, "1st round" column):
 *  - shadow paging (PVM): a small page's first touch ~12-15 us as a fault,
 *    ~6 us populated, ~0.3 us per 4 KiB as part of a huge page. Huge
 *    pages cut the read of cc1's .eh_frame from ~7 to ~1 ms and its table
 *    compile from ~17 to ~10 ms.
 *  - hardware paging with free page reporting (virtio-balloon gives free
 *    blocks of 2 MiB and more back to the host): a fault ~1.5 us,
 *    populated ~1.2 us, but a huge page is most often such a block, backed
 *    again at its first touch: ~8 us per 4 KiB, 16 ms per huge page. A
 *    30 s compile-loop capture spent 14 % more CPU with them (and no less
 *    without them once memory had been recycled through the page cache).
 * Without them, pages__huge() does nothing, pages__map_huge() and
 * pages__grow_huge() are plain mmap() and mremap(). Safe from any thread;
 * allocates nothing (the allocator calls it). */
bool pages__huge_pays(void);

/* Decide pages__huge_pays() now (tests: both paths on one host). */
void pages__set_huge(bool on);

/* Back the page-aligned range [@p, @p + @len) of an anonymous private
 * mapping with transparent huge pages where the kernel allows it
 * (MADV_HUGEPAGE; THP "madvise" or "always"), for a buffer of megabytes
 * about to be written whole: its first touch then costs a fault per 2 MiB
 * instead of one per 4 KiB (in a VM with shadow paging, ~5 us each: 25 ms
 * for 6 MiB on this host, under 1 ms with huge pages). Advise a whole
 * mapping that may be mremap()ed later (a part splits it, and mremap() will
 * not move a range across mappings). Ignored where the kernel refuses, and
 * where huge pages do not pay (pages__huge_pays()). */
void pages__huge(void *p, size_t len);

/* A new anonymous private read-write mapping of @len bytes (a page
 * multiple) that starts on a 2 MiB boundary, so that every whole 2 MiB of
 * it can be a huge page (a mapping placed by the kernel has its first and
 * last block split at an arbitrary page). Nothing is allocated until
 * touched. The caller unmaps it (munmap()). NULL on failure (errno set). */
void *pages__map_aligned(size_t len);

/* pages__map_aligned(), advised as pages__huge(): a table of 8 MB placed
 * by the kernel faulted ~460 small pages, ~10 us each in a VM with shadow
 * paging against ~0.2 us per 4 KiB of a huge page. Where huge pages do not
 * pay, a plain mapping of @len bytes. */
void *pages__map_huge(size_t len);

/* Grow the mapping [@p, @p + @len) (from pages__map_huge(), or any
 * private anonymous one) to @nlen bytes (page multiples, @nlen > @len),
 * advised as pages__huge(): in place when it starts on a 2 MiB boundary
 * and the range after it is free, else moved without a copy (mremap())
 * onto a new 2 MiB-aligned range (where huge pages do not pay: mremap()
 * with MREMAP_MAYMOVE). Its contents stay; the old address is invalid
 * after a move. The new address, or NULL (errno set) with the
 * mapping unchanged. */
void *pages__grow_huge(void *p, size_t len, size_t nlen);

/* Fault in every page that [@p, @p + @len) touches, of a private writable
 * mapping, in one call (MADV_POPULATE_WRITE) rather than one fault per
 * page as it is written (in a VM with shadow paging, each ~5-17 us). Best
 * effort: a kernel before 5.14 refuses it, and the pages fault as before. */
void pages__populate(void *p, size_t len);

#endif
