/* test_intern.c - the dedup table and the capped buffer under the model. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/buf.h"
#include "util/intern.h"
#include "test.h"

TEST(dedup_and_stable_pointers)
{
	struct intern *t = intern__new(1u << 20);
	const void *first;
	char key[32];
	size_t len;
	bool added;
	__u32 idx, i;

	CHECK(t);
	CHECK(!intern__put(t, "", 0, &idx, &added));
	CHECK(added && idx == 0);
	CHECK(!intern__put(t, "alpha", 5, &idx, &added));
	CHECK(added && idx == 1);
	first = intern__get(t, 1, &len);
	/* Force many rehashes and new chunks. */
	for (i = 0; i < 100000; i++) {
		snprintf(key, sizeof(key), "k%u", i);
		CHECK(!intern__put(t, key, strlen(key), &idx, &added));
		CHECK(added && idx == i + 2);
	}
	CHECK(!intern__put(t, "alpha", 5, &idx, &added));
	CHECK(!added && idx == 1);
	CHECK(intern__get(t, 1, &len) == first);
	CHECK_EQ_U64(len, 5);
	CHECK(!memcmp(first, "alpha", 5));
	CHECK(!intern__find(t, "k77777", 6, &idx));
	CHECK_EQ_U64(idx, 77779);
	CHECK(intern__find(t, "nope", 4, &idx) == -ENOENT);
	CHECK_EQ_U64(intern__count(t), 100002);
	/* Stored keys are 8-byte aligned so structs can be read in place. */
	CHECK(((unsigned long)intern__get(t, 5, NULL) & 7) == 0);
	intern__free(t);
	intern__free(NULL);
}

TEST(cap)
{
	struct intern *t = intern__new(2);
	__u32 idx;

	CHECK(t);
	CHECK(!intern__put(t, "a", 1, &idx, NULL));
	CHECK(!intern__put(t, "b", 1, &idx, NULL));
	CHECK(intern__put(t, "c", 1, &idx, NULL) == -E2BIG);
	CHECK(!intern__put(t, "a", 1, &idx, NULL)); /* existing keys still found */
	CHECK_EQ_U64(idx, 0);
	intern__free(t);
}

TEST(buf_cap)
{
	struct buf b;
	char big[100] = {0};

	buf__init(&b, 150);
	CHECK(!buf__append(&b, big, 100));
	CHECK(buf__append(&b, big, 51) == -E2BIG);
	CHECK_EQ_U64(b.len, 100);
	CHECK(!buf__append(&b, big, 50));
	CHECK_EQ_U64(b.len, 150);
	CHECK(b.cap <= 150);
	buf__reset(&b);
	CHECK_EQ_U64(b.len, 0);
	buf__release(&b);
	CHECK(!b.data);
}

TEST(buf_read_file)
{
	struct buf b;

	buf__init(&b, 1 << 20);
	CHECK(!buf__read_file(&b, "/proc/self/stat"));
	CHECK(b.len > 10);
	CHECK(buf__read_file(&b, "/nonexistent") == -ENOENT);
	buf__release(&b);
	buf__init(&b, 8);
	CHECK(buf__read_file(&b, "/proc/self/maps") == -E2BIG);
	buf__release(&b);
}

int main(void)
{
	RUN(dedup_and_stable_pointers);
	RUN(cap);
	RUN(buf_cap);
	RUN(buf_read_file);
	return TEST_DONE();
}
