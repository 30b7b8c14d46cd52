/* test_arena.c - alignment, stable pointers, big requests, chunk growth and release. */
#include <stdint.h>
#include <string.h>

#include "util/arena.h"
#include "test.h"

TEST(alignment_and_stability)
{
	struct arena a = {0};
	char *first, *p;

	first = arena__alloc(&a, 3, 1);
	CHECK(first);
	memcpy(first, "ab", 3);
	for (int i = 0; i < 100000; i++) {
		size_t align = (size_t)1 << (i % 5);

		p = arena__alloc(&a, (size_t)(i % 37) + 1, align);
		CHECK(p);
		CHECK(((uintptr_t)p & (align - 1)) == 0);
		memset(p, 0x5a, (size_t)(i % 37) + 1);
	}
	/* chunks never move: the first object is intact */
	CHECK_STR(first, "ab");
	CHECK(a.bytes > ARENA_CHUNK_SIZE);
	arena__release(&a);
	CHECK(!a.chunks && a.bytes == 0);
	arena__release(&a);
	arena__release(NULL);
}

TEST(large_request_gets_its_own_chunk)
{
	struct arena a = {0};
	unsigned char *big, *small;

	small = arena__alloc(&a, 8, 8);
	big = arena__alloc(&a, 3 * ARENA_CHUNK_SIZE, 16);
	CHECK(small && big);
	memset(big, 1, 3 * ARENA_CHUNK_SIZE);
	CHECK(a.bytes >= 3 * ARENA_CHUNK_SIZE + ARENA_FIRST_CHUNK);
	CHECK(!arena__alloc(&a, SIZE_MAX - 8, 1));
	arena__release(&a);
}

TEST(chunks_grow_from_small)
{
	struct arena a = {0};
	size_t before;

	/* one small object takes a small chunk */
	CHECK(arena__alloc(&a, 8, 8));
	CHECK(a.bytes < 2 * ARENA_FIRST_CHUNK);
	/* chunks double up to ARENA_CHUNK_SIZE, then stay there */
	for (int i = 0; i < 64; i++)
		CHECK(arena__alloc(&a, 4096, 8));
	before = a.bytes;
	CHECK(arena__alloc(&a, ARENA_CHUNK_SIZE - 8, 1)); /* never fits the current one */
	CHECK(a.bytes - before <= ARENA_CHUNK_SIZE + 64);
	CHECK(a.bytes - before >= ARENA_CHUNK_SIZE);
	arena__release(&a);
}

int main(void)
{
	RUN(alignment_and_stability);
	RUN(large_request_gets_its_own_chunk);
	RUN(chunks_grow_from_small);
	return TEST_DONE();
}
