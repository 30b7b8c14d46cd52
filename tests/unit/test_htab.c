/* test_htab.c - the one hash table: keys, growth, removal, cap, hash. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/htab.h"
#include "util/intern.h"
#include "test.h"

struct pid_elem {
	__u32 pid;
	__u32 val;
};

static bool pid_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct pid_elem *)elem)->pid == *(const __u32 *)key;
}

static struct pid_elem *pid_find(const struct htab *m, __u32 pid)
{
	return htab__find(m, htab__hash_u64(pid, 0), &pid, pid_eq, NULL);
}

static int pid_add(struct htab *m, __u32 pid, __u32 val)
{
	struct pid_elem *e;
	int err = htab__add(m, htab__hash_u64(pid, 0), (void **)&e);

	if (!err)
		*e = (struct pid_elem){.pid = pid, .val = val};
	return err;
}

TEST(add_find_grow)
{
	struct htab m;
	struct pid_elem *e;
	__u32 i;

	CHECK(!htab__init(&m, sizeof(struct pid_elem), 1u << 20));
	CHECK(!pid_find(&m, 1)); /* empty: no slots yet */
	for (i = 0; i < 100000; i++)
		CHECK(!pid_add(&m, i * 7, i));
	CHECK_EQ_U64(htab__count(&m), 100000);
	for (i = 0; i < 100000; i++) {
		e = pid_find(&m, i * 7);
		CHECK(e && e->val == i);
		CHECK(!pid_find(&m, i * 7 + 1));
	}
	htab__release(&m);
	CHECK(!pid_find(&m, 7));
	htab__release(&m);
}

TEST(remove_and_iterate)
{
	struct htab m;
	struct pid_elem *e;
	size_t it = 0, seen = 0;
	__u64 sum = 0;
	__u32 i, round;

	CHECK(!htab__init(&m, sizeof(struct pid_elem), 1000));
	for (i = 0; i < 1000; i++)
		CHECK(!pid_add(&m, i, i));
	/* Remove the odd ones while iterating. */
	while ((e = htab__next(&m, &it))) {
		seen++;
		if (e->pid & 1)
			htab__remove(&m, e);
	}
	CHECK_EQ_U64(seen, 1000);
	CHECK_EQ_U64(htab__count(&m), 500);
	for (i = 0; i < 1000; i++)
		CHECK((pid_find(&m, i) == NULL) == !!(i & 1));
	it = 0;
	while ((e = htab__next(&m, &it)))
		sum += e->pid;
	CHECK_EQ_U64(sum, 249500);
	/* Churn: tombstones are reused or rehashed away, never fill the table. */
	for (round = 0; round < 50; round++) {
		for (i = 0; i < 400; i++)
			CHECK(!pid_add(&m, 100000 + round * 1000 + i, i));
		for (i = 0; i < 400; i++) {
			e = pid_find(&m, 100000 + round * 1000 + i);
			CHECK(e);
			htab__remove(&m, e);
		}
	}
	CHECK_EQ_U64(htab__count(&m), 500);
	CHECK(m.mask + 1 <= 2048);
	htab__clear(&m);
	CHECK_EQ_U64(htab__count(&m), 0);
	CHECK(!pid_find(&m, 2));
	htab__release(&m);
}

TEST(cap)
{
	struct htab *m = htab__new(sizeof(struct pid_elem), 3);
	void *e;

	CHECK(m);
	CHECK(!pid_add(m, 1, 1));
	CHECK(!pid_add(m, 2, 2));
	CHECK(!pid_add(m, 3, 3));
	CHECK(htab__add(m, htab__hash_u64(4, 0), &e) == -E2BIG);
	CHECK(pid_find(m, 3));
	htab__remove(m, pid_find(m, 3));
	CHECK(!pid_add(m, 4, 4));
	CHECK(htab__reserve(m, 4) == -E2BIG);
	htab__free(m);
	htab__free(NULL);
	CHECK(!htab__new(6, 10)); /* not a multiple of 4 */
}

struct str_elem {
	const char *s;
};

static bool str_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return !strcmp(((const struct str_elem *)elem)->s, key);
}

TEST(pointer_elements_and_reserve)
{
	static const char *const words[] = {"alpha", "beta", "gamma", "delta", ""};
	struct htab m;
	struct str_elem *e;
	size_t i, slots;

	CHECK(!htab__init(&m, sizeof(struct str_elem), 100));
	CHECK(!htab__reserve(&m, 40));
	slots = m.mask + 1;
	for (i = 0; i < 5; i++) {
		CHECK(!htab__add(&m, htab__hash_str(words[i]), (void **)&e));
		e->s = words[i];
	}
	CHECK_EQ_U64(m.mask + 1, slots);
	for (i = 0; i < 5; i++) {
		e = htab__find(&m, htab__hash_str(words[i]), words[i], str_eq, NULL);
		CHECK(e && e->s == words[i]);
	}
	CHECK(!htab__find(&m, htab__hash_str("epsilon"), "epsilon", str_eq, NULL));
	htab__release(&m);
}

/* Every key under one hash: one long probe run, told apart by eq alone. */
TEST(collisions)
{
	struct htab m;
	struct pid_elem *e;
	__u32 i;

	CHECK(!htab__init(&m, sizeof(struct pid_elem), 1000));
	for (i = 1; i <= 200; i++) {
		CHECK(!htab__add(&m, 42, (void **)&e));
		*e = (struct pid_elem){.pid = i, .val = i * 2};
	}
	/* Remove from the middle of the run: later ones stay reachable. */
	for (i = 50; i <= 150; i++) {
		e = htab__find(&m, 42, &i, pid_eq, NULL);
		CHECK(e && e->val == i * 2);
		htab__remove(&m, e);
	}
	for (i = 1; i <= 200; i++) {
		e = htab__find(&m, 42, &i, pid_eq, NULL);
		CHECK((e != NULL) == (i < 50 || i > 150));
		if (e)
			CHECK_EQ_U64(e->val, i * 2);
	}
	CHECK_EQ_U64(htab__count(&m), 99);
	htab__release(&m);
}

TEST(hash)
{
	__u64 words[2] = {0x1234, 0x5678};

	/* The integer form is the byte form of the same 16 bytes. */
	CHECK_EQ_U64(htab__hash_u64(0x1234, 0x5678), htab__hash(words, 16));
	CHECK_EQ_U64(htab__hash_str("abc"), htab__hash("abc", 3));
	CHECK_EQ_U64(intern__hash("abcdefghij", 10), htab__hash("abcdefghij", 10));
	CHECK(htab__hash(NULL, 0) == htab__hash("", 0));
	CHECK(htab__hash("a", 1) != htab__hash("b", 1));
	/* Stable values: flame graph colours and dedup orders depend on them. */
	CHECK_EQ_U64(htab__hash("", 0), intern__hash("", 0));
	CHECK(htab__tag(0) > HTAB_REMOVED);
	CHECK(htab__tag(1) > HTAB_REMOVED);
}

int main(void)
{
	RUN(add_find_grow);
	RUN(remove_and_iterate);
	RUN(cap);
	RUN(pointer_elements_and_reserve);
	RUN(collisions);
	RUN(hash);
	return TEST_DONE();
}
