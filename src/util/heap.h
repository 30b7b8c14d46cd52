/* heap.h - the program's allocator, chosen at build time, and what profcap
 * asks of it beyond malloc().
 *
 * `make ALLOC=profcap` (the default) links heap.c, which defines malloc,
 * free, calloc, realloc, aligned_alloc, memalign, posix_memalign and
 * malloc_usable_size for the whole program (libelf, libdw, libbpf and
 * libc's callers of the public functions included; libc's internal
 * allocations stay with musl's). Its point: freed memory is kept for reuse
 * rather than unmapped. musl's allocator unmaps a group of slots as soon
 * as its last slot is freed and maps a new one at the next allocation of
 * that size, and a capture builds and drops many tables (CFI rows, symbol
 * tables, libdw's line lists): each munmap is a TLB flush across CPUs and
 * each new page a fault.
 * Sizes up to HEAP_SMALL_MAX round up to one of HEAP_NCLASSES size classes
 * (16-byte steps to 128, then four per power of two: at most 25 % slack)
 * and are cut from HEAP_CHUNK mappings that are never unmapped: classes up
 * to HEAP_SPAN_MAX from spans of one class (an empty span serves any class
 * next), larger ones as blocks kept on their class's free list. Up to
 * HEAP_KEEP bytes of empty spans and free blocks of HEAP_RELEASE_MIN or
 * more stay resident; past that their pages go back (madvise), in batches
 * of up to HEAP_PENDING bytes, as all of them do at heap__trim().
 * Larger requests are mappings of their own (munmap at free, mremap at
 * realloc). A span's pages are populated a few at a time as its blocks
 * are first cut, and a medium calloc()'s pages at once (pages__populate():
 * one system call, not a fault per page). One lock; held across fork().
 *
 * `make ALLOC=mimalloc` or `ALLOC=libc` links heap_extern.c instead: the
 * functions below over mimalloc or musl's malloc.
 */
#ifndef PROFCAP_HEAP_H
#define PROFCAP_HEAP_H

#include <stddef.h>

#define HEAP_SMALL_MAX (256u << 10)
#define HEAP_CHUNK (4u << 20)
#define HEAP_NCLASSES 52
#define HEAP_SPAN (64u << 10) /* aligned to its size */
#define HEAP_SPAN_MAX (8u << 10)
/* Empty spans and free blocks of HEAP_RELEASE_MIN bytes or more stay
 * resident up to HEAP_KEEP bytes in all; past that, the pages of the next
 * one go back to the kernel (it stays usable: its pages read as zeros). */
#define HEAP_RELEASE_MIN (16u << 10)
#define HEAP_KEEP (2u << 20)
/* Of those HEAP_KEEP bytes, up to this many are pages queued to go back,
 * given back together in one call when the queue holds this much (or
 * PAGES_BATCH ranges): free memory stays within HEAP_KEEP. */
#define HEAP_PENDING (512u << 10)
/* Blocks mapped on their own of this size or more are mapped by
 * pages__map_huge() (huge pages in a HUGE_PAGES=on build): a table of
 * megabytes is written whole, one fault per 2 MiB instead of per 4 KiB.
 * What is resident rounds up to 2 MiB as such a block is written. */
#define HEAP_HUGE_MIN (4u << 20)
/* The pages of a span are populated (pages__populate()) this many bytes
 * at a time, as its blocks are first cut from it, instead of faulting in
 * one by one as they are written: at most this much of a span is resident
 * before it is used. */
#define HEAP_POP_STEP (8u << 10)

/* The size class of a request of @n bytes (n <= HEAP_SMALL_MAX; 0 counts
 * as 1): the smallest class whose size is at least @n. */
static inline unsigned int heap__class(size_t n)
{
	unsigned int b;
	size_t step, k;

	if (n <= 128)
		return n ? (unsigned int)((n + 15) / 16 - 1) : 0;
	b = 63 - (unsigned int)__builtin_clzll((unsigned long long)(n - 1)); /* 2^b < n <= 2^(b+1) */
	step = (size_t)1 << (b - 2);
	k = (n - ((size_t)1 << b) + step - 1) / step; /* 1 .. 4 */
	return 8 + (b - 7) * 4 + (unsigned int)(k - 1);
}

/* The usable bytes of a block of class @c (< HEAP_NCLASSES). */
static inline size_t heap__class_size(unsigned int c)
{
	unsigned int b;

	if (c < 8)
		return (size_t)(c + 1) * 16;
	b = 7 + (c - 8) / 4;
	return ((size_t)1 << b) + (size_t)((c - 8) % 4 + 1) * ((size_t)1 << (b - 2));
}

struct heap_stats {
	size_t chunk_bytes; /* mapped for the classes (never returned) */
	size_t free_bytes;  /* of that, in free blocks of spans in use and larger free blocks */
	size_t large_bytes; /* in blocks mapped on their own, now */
	size_t large_maps;  /* such mappings made, ever */
	size_t released;    /* free blocks and empty spans whose pages were given back, ever */
};

/* The allocator this build links: "profcap", "mimalloc" or "libc". */
const char *heap__name(void);

/* Give back the pages of every free block and empty span now (at the end
 * of a phase whose memory the next one will not reuse); mimalloc: collect
 * its free memory; musl: nothing (it gives memory back as it is freed). */
void heap__trim(void);

/* A snapshot of heap.c's counters into *@st: 0, or -ENOTSUP (*@st zeroed)
 * when the build links another allocator. */
int heap__stats(struct heap_stats *st);

#endif
