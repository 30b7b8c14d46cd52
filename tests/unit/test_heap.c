/* test_heap.c - the allocator this build links (make ALLOC=...): size
 * classes, reuse of freed blocks, realloc across the class/mapping
 * boundary, calloc of reused memory, aligned blocks, trims, threads. What
 * only heap.c promises (its counters, reuse of a given block, populated
 * spans) is skipped in builds that link another allocator. (Every unit
 * test links the allocator of its build: all of them run on it.) */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/heap.h"
#include "test.h"

/* heap.c is the allocator of this build. */
static bool ours(void)
{
	return !strcmp(heap__name(), "profcap");
}

/* Skip a test of heap.c's own behaviour in a build without it. */
#define NEED_HEAP_C()                                                           \
	do {                                                                    \
		if (!ours())                                                    \
			SKIP("tests heap.c; this build links %s", heap__name()); \
	} while (0)

TEST(name_and_stats_match_the_build)
{
	struct heap_stats st;
	const char *name = heap__name();

	CHECK(!strcmp(name, "profcap") || !strcmp(name, "mimalloc") || !strcmp(name, "libc"));
	memset(&st, 0xff, sizeof(st));
	if (ours()) {
		CHECK_EQ_U64(heap__stats(&st), 0);
		CHECK(st.chunk_bytes > 0); /* the harness itself allocated */
	} else {
		CHECK(heap__stats(&st) == -ENOTSUP);
		CHECK_EQ_U64(st.chunk_bytes, 0);
		CHECK_EQ_U64(st.released, 0);
	}
	heap__trim(); /* in every build */
}

TEST(classes_cover_every_size)
{
	unsigned int c, prev = 0;

	CHECK_EQ_U64(heap__class(0), 0);
	CHECK_EQ_U64(heap__class(1), 0);
	CHECK_EQ_U64(heap__class_size(0), 16);
	CHECK_EQ_U64(heap__class(HEAP_SMALL_MAX), HEAP_NCLASSES - 1);
	CHECK_EQ_U64(heap__class_size(HEAP_NCLASSES - 1), HEAP_SMALL_MAX);
	for (size_t n = 1; n <= HEAP_SMALL_MAX; n += n < 4096 ? 1 : 61) {
		c = heap__class(n);
		CHECK(c < HEAP_NCLASSES);
		CHECK(c >= prev); /* monotonic */
		CHECK(heap__class_size(c) >= n);
		/* the smallest class that fits */
		CHECK(c == 0 || heap__class_size(c - 1) < n);
		CHECK(heap__class_size(c) % 16 == 0);
		/* at most 25 % slack above 128 bytes */
		CHECK(n <= 128 || heap__class_size(c) * 4 <= (n - 1) * 5 + 4);
		prev = c;
	}
	for (c = 0; c < HEAP_NCLASSES; c++)
		CHECK_EQ_U64(heap__class(heap__class_size(c)), c);
}

TEST(freed_block_is_reused)
{
	struct heap_stats before, after;
	void *a, *b, *keep;

	NEED_HEAP_C();
	keep = malloc(1000); /* its span stays in use */
	a = malloc(1000);
	CHECK(keep && a && ((uintptr_t)a & 15) == 0);
	memset(a, 1, 1000);
	free(a);
	heap__stats(&before);
	b = malloc(990); /* the same class */
	CHECK(b == a);
	heap__stats(&after);
	CHECK_EQ_U64(after.chunk_bytes, before.chunk_bytes);
	CHECK_EQ_U64(before.free_bytes - after.free_bytes, heap__class_size(heap__class(1000)));
	CHECK(malloc_usable_size(b) >= 990);
	free(b);
	free(keep);
	free(NULL);
}

TEST(empty_span_serves_another_class)
{
	struct heap_stats before, after;
	void *p[64], *q;
	int i;

	NEED_HEAP_C();
	/* fill spans of one class, free them all: the spans go to the pool */
	for (i = 0; i < 64; i++)
		CHECK((p[i] = malloc(3000)));
	for (i = 0; i < 64; i++)
		free(p[i]);
	heap__stats(&before);
	/* another class takes them without new chunk memory */
	for (i = 0; i < 64; i++)
		CHECK((p[i] = malloc(200)));
	heap__stats(&after);
	CHECK_EQ_U64(after.chunk_bytes, before.chunk_bytes);
	q = malloc(5000);
	CHECK(q);
	for (i = 0; i < 64; i++)
		free(p[i]);
	free(q);
	/* a block of a medium class (beyond the spans) is reused as such */
	p[0] = malloc(HEAP_SPAN_MAX + 100);
	CHECK(p[0]);
	uintptr_t was = (uintptr_t)p[0];

	free(p[0]);
	p[0] = malloc(HEAP_SPAN_MAX + 50);
	CHECK((uintptr_t)p[0] == was);
	free(p[0]);
}

TEST(calloc_zeroes_reused_memory)
{
	unsigned char *p = malloc(4000), *q;

	CHECK(p);
	memset(p, 0xff, 4000);
	free(p);
	q = calloc(1000, 4);
	CHECK(q);
	CHECK(q == p || !ours()); /* heap.c reuses the block */
	for (int i = 0; i < 4000; i++)
		CHECK(q[i] == 0);
	free(q);
	volatile size_t huge = SIZE_MAX / 2; /* overflows m * n */
	CHECK(!calloc(huge, 3));
}

TEST(realloc_keeps_contents)
{
	struct heap_stats st0, st;
	size_t sizes[] = {1,
			  17,
			  300,
			  5000,
			  70000,
			  HEAP_SMALL_MAX,
			  HEAP_SMALL_MAX + 1,
			  3 * HEAP_SMALL_MAX,
			  9 << 20,
			  2 * HEAP_SMALL_MAX,
			  100000,
			  40,
			  8};
	unsigned char *p = NULL;
	size_t have = 0;

	heap__stats(&st0); /* zeros without heap.c */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i], keep = have < n ? have : n;

		p = realloc(p, n);
		CHECK(p);
		for (size_t j = 0; j < keep; j++)
			CHECK(p[j] == (unsigned char)(j * 7));
		for (size_t j = 0; j < n; j++)
			p[j] = (unsigned char)(j * 7);
		CHECK(malloc_usable_size(p) >= n);
		have = n;
	}
	/* a shrink keeps the contents; heap.c's, within the class, in place */
	volatile uintptr_t was = (uintptr_t)p; /* an address only, not read through */
	unsigned char *r = realloc(p, 6);

	CHECK(r && r[5] == (unsigned char)(5 * 7));
	CHECK((uintptr_t)r == was || !ours());
	free(r);
	heap__stats(&st);
	CHECK_EQ_U64(st.large_bytes, st0.large_bytes); /* mappings of their own are gone */
	CHECK(st.large_maps > st0.large_maps || !ours());
}

TEST(aligned_blocks)
{
	size_t aligns[] = {8, 16, 32, 64, 4096, 65536};
	void *p;

	for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
		p = aligned_alloc(aligns[i], 100);
		CHECK(p && ((uintptr_t)p & (aligns[i] - 1)) == 0);
		CHECK(malloc_usable_size(p) >= 100);
		memset(p, 3, 100);
		p = realloc(p, 5000);
		CHECK(p && ((unsigned char *)p)[99] == 3);
		free(p);
		CHECK(posix_memalign(&p, aligns[i] < 8 ? 8 : aligns[i], 1 << 20) == 0);
		CHECK(((uintptr_t)p & (aligns[i] - 1)) == 0);
		free(p);
	}
	CHECK(!aligned_alloc(24, 10));
	CHECK(posix_memalign(&p, 2, 10) != 0);
}

TEST(trim_gives_back_and_keeps_blocks_usable)
{
	struct heap_stats before, after;
	unsigned char *p[40], *q;
	int i;

	for (i = 0; i < 40; i++) {
		CHECK((p[i] = malloc(40000)));
		memset(p[i], 0xee, 40000);
	}
	for (i = 0; i < 40; i++)
		free(p[i]);
	heap__trim();
	heap__stats(&before);
	/* a released block is handed out again, zeroed by calloc */
	q = calloc(1, 40000);
	CHECK(q);
	for (i = 0; i < 40000; i++)
		CHECK(q[i] == 0);
	heap__stats(&after);
	CHECK_EQ_U64(after.chunk_bytes, before.chunk_bytes);
	CHECK(after.released > 0 || !ours());
	free(q);
	heap__trim();
}

/* Past HEAP_KEEP, freed blocks and spans are queued to be given back in
 * one batch; one handed out again before the batch goes must come off the
 * queue, or the batch zeroes memory in use. */
TEST(queued_release_spares_reused_memory)
{
	enum { NB = 120, NS = 1200 }; /* 3.8 MB of medium blocks; 75 spans of 4 KiB objects */
	struct heap_stats before, after;
	unsigned char *b[NB], *o[NS];
	int i, bad = 0;
	size_t k;

	heap__trim();
	heap__stats(&before);
	for (i = 0; i < NB; i++)
		CHECK((b[i] = malloc(32000)));
	for (i = 0; i < NS; i++)
		CHECK((o[i] = malloc(4000)));
	for (i = 0; i < NB; i++)
		free(b[i]);
	for (i = 0; i < NS; i++)
		free(o[i]);
	heap__stats(&after);
	CHECK(after.released > before.released || !ours()); /* some went past HEAP_KEEP */
	for (i = 0; i < NB; i++) {
		CHECK((b[i] = malloc(32000)));
		memset(b[i], 0x5a, 32000);
	}
	for (i = 0; i < NS; i++) {
		CHECK((o[i] = malloc(4000)));
		memset(o[i], 0xa5, 4000);
	}
	heap__trim(); /* gives back whatever is still queued */
	for (i = 0; i < NB; i++)
		for (k = 0; k < 32000; k += 97)
			bad += b[i][k] != 0x5a;
	for (i = 0; i < NS; i++)
		for (k = 0; k < 4000; k += 97)
			bad += o[i][k] != 0xa5;
	CHECK_EQ_U64(bad, 0);
	for (i = 0; i < NB; i++)
		free(b[i]);
	for (i = 0; i < NS; i++)
		free(o[i]);
	heap__trim();
}

static void *churn(void *arg)
{
	uintptr_t seed = (uintptr_t)arg;
	void *slot[64] = {0};

	for (int i = 0; i < 20000; i++) {
		unsigned int k;
		size_t n;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		k = (unsigned int)(seed >> 33) % 64;
		n = (size_t)(seed >> 40) % 3000 + 1;
		if (slot[k]) {
			if (*(uintptr_t *)slot[k] != (uintptr_t)slot[k])
				return (void *)1; /* someone else wrote it */
			free(slot[k]);
		}
		slot[k] = malloc(n < 8 ? 8 : n);
		if (!slot[k])
			return (void *)1;
		*(uintptr_t *)slot[k] = (uintptr_t)slot[k];
	}
	for (int k = 0; k < 64; k++)
		free(slot[k]);
	return NULL;
}

TEST(threads)
{
	pthread_t t[4];
	void *res;

	for (uintptr_t i = 0; i < 4; i++)
		CHECK(!pthread_create(&t[i], NULL, churn, (void *)(i + 1)));
	for (int i = 0; i < 4; i++) {
		CHECK(!pthread_join(t[i], &res));
		CHECK(!res);
	}
}

/* Pages of span @base resident: [0, @upto) yes, the rest of the span no. */
static void check_resident(const unsigned char *base, size_t upto)
{
	unsigned char vec[HEAP_SPAN / 4096];
	size_t i;

	CHECK(!mincore((void *)base, HEAP_SPAN, vec));
	for (i = 0; i < HEAP_SPAN / 4096; i++)
		if (i < upto / 4096)
			CHECK(vec[i] & 1); /* resident before it was written */
		else
			CHECK(!(vec[i] & 1));
}

/* The end of the HEAP_POP_STEP-aligned stretch holding offset @off. */
static size_t step_end(size_t off)
{
	return (off + HEAP_POP_STEP - 1) / HEAP_POP_STEP * HEAP_POP_STEP;
}

/* A span's pages are populated HEAP_POP_STEP at a time as its blocks are
 * first cut (not one fault per page), and no further: after a trim (every
 * empty span's pages given back), the first block of a fresh class leaves
 * the span resident up to the end of the step that holds its end, and the
 * rest of the span untouched; a block cut past that brings the next step. */
TEST(span_populated_a_step_ahead)
{
	unsigned char *blk[8], *base;
	size_t i, n = 0, size = 6000, upto; /* a class of its own here, over a page */
	void *probe;
	int err;

	NEED_HEAP_C();
	if (sysconf(_SC_PAGESIZE) != 4096)
		SKIP("pages of %ld bytes: the test counts 4 KiB ones", sysconf(_SC_PAGESIZE));
	probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(probe != MAP_FAILED);
	err = madvise(probe, 4096, 23 /* MADV_POPULATE_WRITE */) ? errno : 0;
	munmap(probe, 4096);
	if (err)
		SKIP("no MADV_POPULATE_WRITE (Linux < 5.14): spans fault page by page");
	heap__trim();
	blk[n++] = malloc(size);
	CHECK(blk[0]);
	base = (unsigned char *)((uintptr_t)blk[0] & ~(uintptr_t)(HEAP_SPAN - 1));
	CHECK(blk[0] < base + 4096 + 16); /* the span's first block */
	upto = step_end((size_t)(blk[0] + size - base));
	CHECK(upto < HEAP_SPAN);
	check_resident(base, upto);
	/* blocks up to the first that ends past it: then the next step */
	do {
		blk[n] = malloc(size);
		CHECK(blk[n] && blk[n] > blk[n - 1] && blk[n] + size <= base + HEAP_SPAN);
	} while (blk[n++] + size <= base + upto && n < 8);
	CHECK(blk[n - 1] + size > base + upto);
	upto = step_end((size_t)(blk[n - 1] + size - base));
	check_resident(base, upto);
	memset(blk[0], 7, size);
	CHECK(blk[0][size - 1] == 7);
	for (i = 0; i < n; i++)
		free(blk[i]);
}

int main(void)
{
	RUN(name_and_stats_match_the_build);
	RUN(classes_cover_every_size);
	RUN(freed_block_is_reused);
	RUN(empty_span_serves_another_class);
	RUN(calloc_zeroes_reused_memory);
	RUN(realloc_keeps_contents);
	RUN(aligned_blocks);
	RUN(trim_gives_back_and_keeps_blocks_usable);
	RUN(queued_release_spares_reused_memory);
	RUN(span_populated_a_step_ahead);
	RUN(threads);
	return TEST_DONE();
}
