/* heap_extern.c - heap.h's functions over an allocator profcap does not own:
 * mimalloc (built with HEAP_MIMALLOC, `make ALLOC=mimalloc`) or the C
 * library's malloc (`make ALLOC=libc`). Its malloc() and friends come from
 * that allocator; this file only names it and trims it. */
#include <errno.h>
#include <string.h>

#include "util/heap.h"

#ifdef HEAP_MIMALLOC
#include <mimalloc.h>
#endif

const char *heap__name(void)
{
#ifdef HEAP_MIMALLOC
	return "mimalloc";
#else
	return "libc";
#endif
}

void heap__trim(void)
{
#ifdef HEAP_MIMALLOC
	mi_collect(true); /* free pages and segments back to the kernel */
#endif
}

int heap__stats(struct heap_stats *st)
{
	memset(st, 0, sizeof(*st));
	return -ENOTSUP;
}
