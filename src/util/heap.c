/* heap.c - profcap's malloc (see heap.h). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/heap.h"
#include "util/pages.h"

#define PAGE 4096u
#define ALIGN 16u

enum { KIND_SMALL = 0x5a11c0de, KIND_LARGE = 0x1a46e0de, KIND_ALIGNED = 0xa119e0de };

/* Before every block handed out; 16 bytes, so blocks stay 16-aligned. */
struct hdr {
	size_t size; /* SMALL: class size; LARGE: mapping length; ALIGNED:
		      * bytes from the block it lies in (its payload) to here */
	uint32_t kind;
	uint16_t cls;
	uint16_t released; /* medium, free: its whole pages were given back */
};

_Static_assert(sizeof(struct hdr) == ALIGN, "header keeps 16-byte alignment");

struct free_block {
	struct free_block *next;
};

/* Pages of a span to populate (pages__populate()) once the lock is
 * dropped; the block handed out then waits for its header until after it:
 * one call for a stretch of pages costs less than a fault for each. */
struct heap_pop {
	uintptr_t lo, hi; /* hi = 0: nothing */
};

/* A HEAP_SPAN-aligned span of blocks of one class up to HEAP_SPAN_MAX,
 * this header first. On its class's list while it has a free block; back
 * in the pool of empty spans (any class's next) when none is in use. */
struct span {
	struct span *next, *prev;
	struct free_block *free; /* freed blocks */
	uint32_t cls;
	uint32_t live;	   /* blocks in use */
	uint32_t carved;   /* blocks cut so far (from the start, in order) */
	uint32_t cap;	   /* blocks it holds */
	uint32_t released; /* in the pool, pages given back */
	uint32_t pop;	   /* bytes from its start whose pages are resident */
};

#define SPAN_HDR ((sizeof(struct span) + ALIGN - 1) & ~(size_t)(ALIGN - 1))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct span *partial[HEAP_NCLASSES];	    /* spans with a free block */
static struct span *pool;			    /* empty spans, resident */
static struct span *pool_released;		    /* empty spans, pages given back */
static size_t pool_resident;			    /* spans on @pool */
static struct free_block *free_list[HEAP_NCLASSES]; /* medium blocks */
static size_t kept;	/* bytes of free medium blocks of HEAP_RELEASE_MIN or more still resident */
static char *cur, *end; /* the unused rest of the newest chunk */
static struct heap_stats stats;

const char *heap__name(void)
{
	return "profcap";
}

int heap__stats(struct heap_stats *st)
{
	pthread_mutex_lock(&lock);
	*st = stats;
	pthread_mutex_unlock(&lock);
	return 0;
}

static struct hdr *hdr_of(void *p)
{
	struct hdr *h = (struct hdr *)p - 1;

	if (h->kind != KIND_SMALL && h->kind != KIND_LARGE && h->kind != KIND_ALIGNED)
		abort(); /* not ours, or overwritten */
	return h;
}

/* Stamp the header @h of a block: @size as struct hdr says for @kind. */
static void hdr_set(struct hdr *h, size_t size, uint32_t kind, unsigned int cls)
{
	h->size = size;
	h->kind = kind;
	h->cls = (uint16_t)cls;
	h->released = 0;
}

/* @len bytes aligned to @align from the chunks, NULL without memory.
 * Under the lock. */
static char *carve(size_t len, size_t align)
{
	char *p = (char *)(((uintptr_t)cur + align - 1) & ~(uintptr_t)(align - 1));

	if (!cur || p > end || (size_t)(end - p) < len) {
		char *chunk = mmap(NULL, HEAP_CHUNK, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (chunk == MAP_FAILED)
			return NULL;
		stats.chunk_bytes += HEAP_CHUNK;
		cur = chunk;
		end = chunk + HEAP_CHUNK;
		p = (char *)(((uintptr_t)cur + align - 1) & ~(uintptr_t)(align - 1));
	}
	cur = p + len;
	return p;
}

static void list_del(struct span **head, struct span *sp)
{
	if (sp->prev)
		sp->prev->next = sp->next;
	else
		*head = sp->next;
	if (sp->next)
		sp->next->prev = sp->prev;
	sp->next = sp->prev = NULL;
}

static void list_add(struct span **head, struct span *sp)
{
	sp->prev = NULL;
	sp->next = *head;
	if (*head)
		(*head)->prev = sp;
	*head = sp;
}

/* Ranges whose pages go back, queued: given back together (one
 * pages__release(), one TLB flush) when PAGES_BATCH of them or
 * HEAP_PENDING bytes are queued, and at heap__trim(), rather than a
 * madvise() and a page-by-page flush for each span. A range is taken off
 * the queue when its block or span is handed out again first. */
static struct {
	struct iovec iov[PAGES_BATCH];
	size_t n;
	size_t bytes;
} pending;

static void flush_pending(void)
{
	pages__release(pending.iov, pending.n);
	pending.n = 0;
	pending.bytes = 0;
}

/* Queue the pages of [@lo, @hi) to be given back. Under the lock. */
static void give_back(uintptr_t lo, uintptr_t hi)
{
	if (hi <= lo)
		return;
	pending.iov[pending.n++] = (struct iovec){.iov_base = (void *)lo, .iov_len = hi - lo};
	pending.bytes += hi - lo;
	if (pending.n == PAGES_BATCH || pending.bytes >= HEAP_PENDING)
		flush_pending();
}

/* The range starting at @lo is in use again: off the queue if still on
 * it (its pages were not given back yet). Under the lock. */
static void take_back(uintptr_t lo)
{
	size_t i;

	for (i = 0; i < pending.n; i++)
		if ((uintptr_t)pending.iov[i].iov_base == lo) {
			pending.bytes -= pending.iov[i].iov_len;
			pending.iov[i] = pending.iov[--pending.n];
			return;
		}
}

/* The pages of empty span @sp a release gives back: all but its header's. */
static uintptr_t span_pages(const struct span *sp)
{
	return (uintptr_t)sp + PAGE;
}

/* A span for class @c, from the pool or new. Under the lock. */
static struct span *new_span(unsigned int c)
{
	struct span *sp;

	if ((sp = pool)) {
		list_del(&pool, sp);
		pool_resident--;
	} else if ((sp = pool_released)) {
		list_del(&pool_released, sp);
		take_back(span_pages(sp));
		sp->pop = PAGE; /* the header's page stays */
	} else {
		sp = (struct span *)carve(HEAP_SPAN, HEAP_SPAN);
		if (!sp)
			return NULL;
		sp->pop = PAGE; /* this write faults it in */
	}
	sp->next = sp->prev = NULL;
	sp->free = NULL;
	sp->cls = c;
	sp->live = sp->carved = sp->released = 0;
	sp->cap = (uint32_t)((HEAP_SPAN - SPAN_HDR) / (sizeof(struct hdr) + heap__class_size(c)));
	list_add(&partial[c], sp);
	return sp;
}

/* Block @h (@len bytes with its header) was cut from span @sp: when it
 * reaches past the pages resident, the next HEAP_POP_STEP-aligned stretch
 * of the span goes into *@pop, populated once the lock is dropped. */
static void span_grow_resident(struct span *sp, const struct hdr *h, size_t len,
			       struct heap_pop *pop)
{
	uintptr_t base = (uintptr_t)sp, end = (uintptr_t)h + len - base, to;

	if (end <= sp->pop)
		return;
	to = (end + HEAP_POP_STEP - 1) & ~(uintptr_t)(HEAP_POP_STEP - 1);
	if (to > HEAP_SPAN)
		to = HEAP_SPAN;
	pop->lo = base + sp->pop;
	pop->hi = base + to;
	sp->pop = (uint32_t)to;
}

/* A block of span class @c; pages to populate in *@pop. Under the lock. */
static void *span_alloc(unsigned int c, struct heap_pop *pop)
{
	struct span *sp = partial[c];
	struct free_block *f;
	struct hdr *h;

	if (!sp && !(sp = new_span(c)))
		return NULL;
	if (sp->free) {
		f = sp->free;
		sp->free = f->next;
		stats.free_bytes -= heap__class_size(c);
	} else {
		h = (struct hdr *)((char *)sp + SPAN_HDR +
				   (size_t)sp->carved++ *
					   (sizeof(struct hdr) + heap__class_size(c)));
		f = (struct free_block *)(h + 1);
		span_grow_resident(sp, h, sizeof(*h) + heap__class_size(c), pop);
		if (!pop->hi) /* else alloc() stamps it after the populate */
			hdr_set(h, heap__class_size(c), KIND_SMALL, c);
	}
	if (++sp->live == sp->cap)
		list_del(&partial[c], sp); /* full */
	return f;
}

/* Give back the pages of empty span @sp (queued, see give_back()) and put
 * it on the released pool. Under the lock. */
static void span_release(struct span *sp)
{
	give_back(span_pages(sp), (uintptr_t)sp + HEAP_SPAN);
	sp->released = 1;
	stats.released++;
	list_add(&pool_released, sp);
}

/* Free block @h of a span. Under the lock. */
static void span_free(struct hdr *h)
{
	struct span *sp = (struct span *)((uintptr_t)h & ~(uintptr_t)(HEAP_SPAN - 1));
	struct free_block *f = (struct free_block *)(h + 1);

	if (sp->live-- == sp->cap)
		list_add(&partial[sp->cls], sp); /* had no free block */
	if (sp->live) {
		f->next = sp->free;
		sp->free = f;
		stats.free_bytes += h->size;
		return;
	}
	/* empty: to the pool, for any class; past HEAP_KEEP (with what is
	 * queued to go back), without its pages */
	stats.free_bytes -= (size_t)(sp->carved - 1) * h->size;
	list_del(&partial[sp->cls], sp);
	if (kept + (pool_resident + 1) * HEAP_SPAN > HEAP_KEEP - HEAP_PENDING) {
		span_release(sp);
	} else {
		pool_resident++;
		list_add(&pool, sp);
	}
}

/* The whole pages of free medium block @h past its list link. */
static uintptr_t block_pages(const struct hdr *h)
{
	return ((uintptr_t)(h + 1) + sizeof(struct free_block) + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
}

/* Give back those pages (queued, see give_back(); they read as zeros when
 * next touched). Under the lock. */
static void release(struct hdr *h)
{
	give_back(block_pages(h), ((uintptr_t)(h + 1) + h->size) & ~(uintptr_t)(PAGE - 1));
	h->released = 1;
	stats.released++;
}

/* A block of class @c, NULL without memory; pages to populate (and a
 * header to stamp) in *@pop. Under the lock. */
static void *small_alloc(unsigned int c, struct heap_pop *pop)
{
	size_t need = sizeof(struct hdr) + heap__class_size(c);
	struct free_block *f;
	struct hdr *h;

	if (heap__class_size(c) <= HEAP_SPAN_MAX)
		return span_alloc(c, pop);
	f = free_list[c];
	if (f) {
		h = (struct hdr *)f - 1;
		free_list[c] = f->next;
		stats.free_bytes -= h->size;
		if (h->size >= HEAP_RELEASE_MIN && !h->released)
			kept -= h->size;
		if (h->released)
			take_back(block_pages(h));
		h->released = 0;
		return f;
	}
	h = (struct hdr *)carve(need, ALIGN);
	if (!h)
		return NULL;
	hdr_set(h, heap__class_size(c), KIND_SMALL, c);
	return h + 1;
}

static void *large_alloc(size_t n)
{
	size_t len = (n + sizeof(struct hdr) + PAGE - 1) & ~(size_t)(PAGE - 1);
	struct hdr *h;

	if (len >= HEAP_HUGE_MIN) {
		h = pages__map_huge(len); /* huge pages in a HUGE_PAGES=on build */
		if (!h)
			return NULL;
	} else {
		h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (h == MAP_FAILED)
			return NULL;
	}
	hdr_set(h, len, KIND_LARGE, 0);
	pthread_mutex_lock(&lock);
	stats.large_bytes += len;
	stats.large_maps++;
	pthread_mutex_unlock(&lock);
	return h + 1;
}

/* malloc() by another name: gcc would turn calloc()'s malloc() + memset()
 * into a call to calloc(). */
static void *alloc(size_t n)
{
	void *p;

	if (n > HEAP_SMALL_MAX) {
		if (n > PTRDIFF_MAX - PAGE) {
			errno = ENOMEM;
			return NULL;
		}
		p = large_alloc(n);
	} else {
		struct heap_pop pop = {0};
		unsigned int c = heap__class(n);

		pthread_mutex_lock(&lock);
		p = small_alloc(c, &pop);
		pthread_mutex_unlock(&lock);
		if (pop.hi) {
			/* another thread may already write a block cut after
			 * this one in these pages: a populate leaves resident
			 * pages as they are */
			pages__populate((void *)pop.lo, pop.hi - pop.lo);
			hdr_set((struct hdr *)p - 1, heap__class_size(c), KIND_SMALL, c);
		}
	}
	if (!p)
		errno = ENOMEM;
	return p;
}

void *malloc(size_t n)
{
	return alloc(n);
}

void free(void *p)
{
	struct free_block *f;
	struct hdr *h;

	if (!p)
		return;
	h = hdr_of(p);
	if (h->kind == KIND_ALIGNED) {
		free((char *)p - h->size);
		return;
	}
	if (h->kind == KIND_LARGE) {
		pthread_mutex_lock(&lock);
		stats.large_bytes -= h->size;
		pthread_mutex_unlock(&lock);
		munmap(h, h->size);
		return;
	}
	f = p;
	pthread_mutex_lock(&lock);
	if (h->size <= HEAP_SPAN_MAX) {
		span_free(h);
		pthread_mutex_unlock(&lock);
		return;
	}
	f->next = free_list[h->cls];
	free_list[h->cls] = f;
	stats.free_bytes += h->size;
	if (h->size >= HEAP_RELEASE_MIN) {
		if (kept + pool_resident * HEAP_SPAN + h->size > HEAP_KEEP - HEAP_PENDING)
			release(h);
		else
			kept += h->size;
	}
	pthread_mutex_unlock(&lock);
}

/* One call for all the ranges (pages__release()): the close of a capture
 * trims many spans and blocks, and each madvise() would be a TLB flush. */
void heap__trim(void)
{
	struct free_block *f;
	struct span *sp;
	unsigned int c;

	pthread_mutex_lock(&lock);
	while ((sp = pool)) {
		list_del(&pool, sp);
		span_release(sp);
	}
	pool_resident = 0;
	for (c = 0; c < HEAP_NCLASSES; c++)
		for (f = free_list[c]; f; f = f->next)
			if (!((struct hdr *)f - 1)->released)
				release((struct hdr *)f - 1);
	flush_pending();
	kept = 0;
	pthread_mutex_unlock(&lock);
}

void *calloc(size_t m, size_t n)
{
	size_t len;
	void *p;

	if (__builtin_mul_overflow(m, n, &len)) {
		errno = ENOMEM;
		return NULL;
	}
	p = alloc(len);
	/* a mapping of its own is fresh: already zero */
	if (p && len <= HEAP_SMALL_MAX) {
		/* every page of it is written now: in one call, not a fault each */
		if (len > HEAP_SPAN_MAX)
			pages__populate(p, len);
		memset(p, 0, len);
	}
	return p;
}

size_t malloc_usable_size(void *p)
{
	struct hdr *h;

	if (!p)
		return 0;
	h = hdr_of(p);
	if (h->kind == KIND_ALIGNED)
		return malloc_usable_size((char *)p - h->size) - h->size;
	return h->kind == KIND_LARGE ? h->size - sizeof(*h) : h->size;
}

void *realloc(void *p, size_t n)
{
	size_t have, len;
	struct hdr *h;
	void *q;

	if (!p)
		return malloc(n);
	h = hdr_of(p);
	have = malloc_usable_size(p);
	if (h->kind == KIND_SMALL && n <= have && (h->cls == 0 || n > have / 2))
		return p;
	if (h->kind == KIND_LARGE && n > HEAP_SMALL_MAX) {
		if (n > PTRDIFF_MAX - PAGE) {
			errno = ENOMEM;
			return NULL;
		}
		len = (n + sizeof(*h) + PAGE - 1) & ~(size_t)(PAGE - 1);
		if (len == h->size)
			return p;
		if (len > h->size && len >= HEAP_HUGE_MIN)
			q = pages__grow_huge(h, h->size, len); /* to a 2 MiB boundary if it moves */
		else if ((q = mremap(h, h->size, len, MREMAP_MAYMOVE)) == MAP_FAILED)
			q = NULL;
		if (!q) {
			errno = ENOMEM;
			return NULL;
		}
		pthread_mutex_lock(&lock);
		stats.large_bytes += len - ((struct hdr *)q)->size;
		pthread_mutex_unlock(&lock);
		((struct hdr *)q)->size = len;
		return (struct hdr *)q + 1;
	}
	q = malloc(n);
	if (!q)
		return NULL;
	len = n < have ? n : have;
	/* a grown table (array__grow() doubles) copied into pages of a new
	 * block: in one call, not a fault per page (spans did theirs) */
	if (len > HEAP_SPAN_MAX)
		pages__populate(q, len);
	memcpy(q, p, len);
	free(p);
	return q;
}

void *aligned_alloc(size_t align, size_t n)
{
	struct hdr *h;
	char *p, *a;

	if (!align || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	if (align <= ALIGN)
		return malloc(n);
	if (n > PTRDIFF_MAX - align - ALIGN) {
		errno = ENOMEM;
		return NULL;
	}
	/* room for a header in front of the aligned address */
	p = malloc(n + align + ALIGN);
	if (!p)
		return NULL;
	a = (char *)(((uintptr_t)p + ALIGN + align - 1) & ~(uintptr_t)(align - 1));
	h = (struct hdr *)a - 1;
	hdr_set(h, (size_t)(a - p), KIND_ALIGNED, 0);
	return a;
}

void *memalign(size_t align, size_t n)
{
	return aligned_alloc(align, n);
}

int posix_memalign(void **res, size_t align, size_t n)
{
	void *p;

	if (align < sizeof(void *))
		return EINVAL;
	p = aligned_alloc(align, n);
	if (!p)
		return errno;
	*res = p;
	return 0;
}

/* A fork() while another thread holds the lock would leave the child's
 * allocator locked for good: hold it across the fork. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void fork_done(void)
{
	pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void heap_init(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
}
