/* test_queue.c - the bounded ring the sampler's threads hand work through:
 * order, full and empty, eviction, wrap-around, and a producer and a
 * consumer thread sharing one under a lock and a condition, as the
 * sampler uses it. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "collect/queue.h"
#include "test.h"

struct item {
	uint32_t id;
	uint64_t payload;
};

TEST(new_rejects_zero)
{
	CHECK(!queue__new(0, 4));
	CHECK(!queue__new(4, 0));
	CHECK(!queue__new(SIZE_MAX / 2, 16));
	queue__free(NULL);
}

TEST(fifo_full_empty)
{
	struct queue *q = queue__new(3, sizeof(struct item));
	struct item it;
	uint32_t i;

	CHECK(q);
	CHECK(queue__cap(q) == 3);
	CHECK(queue__pop(q, &it) == -ENOENT);
	CHECK(!queue__at(q, 0));
	for (i = 1; i <= 3; i++)
		CHECK(!queue__push(q, &(struct item){i, i * 10}));
	CHECK(queue__push(q, &(struct item){4, 40}) == -ENOSPC);
	CHECK(queue__len(q) == 3);
	CHECK(((struct item *)queue__at(q, 2))->id == 3);
	CHECK(!queue__at(q, 3));
	for (i = 1; i <= 3; i++) {
		CHECK(!queue__pop(q, &it));
		CHECK(it.id == i && it.payload == i * 10);
	}
	CHECK(queue__len(q) == 0);
	queue__free(q);
}

TEST(wraps_and_evicts)
{
	struct queue *q = queue__new(4, sizeof(uint32_t));
	uint32_t v, out[8], i;

	CHECK(q);
	/* move the head around the ring several times */
	for (i = 0; i < 10; i++) {
		CHECK(!queue__push(q, &i));
		CHECK(!queue__pop(q, &v));
		CHECK(v == i);
	}
	for (i = 0; i < 4; i++)
		CHECK(!queue__push(q, &i));
	v = 99;
	CHECK(queue__push_evict(q, &(uint32_t){4}, NULL));
	CHECK(queue__push_evict(q, &(uint32_t){5}, &v));
	CHECK(v == 1); /* 0 went first, then 1 */
	CHECK(queue__len(q) == 4);
	CHECK(queue__take(q, out, 3) == 3);
	CHECK(out[0] == 2 && out[1] == 3 && out[2] == 4);
	CHECK(queue__take(q, out, 8) == 1);
	CHECK(out[0] == 5);
	CHECK(queue__take(q, out, 8) == 0);
	CHECK(!queue__push_evict(q, &(uint32_t){6}, &v));
	CHECK(!queue__pop(q, NULL));
	queue__free(q);
}

/* A producer and a consumer, as the notice thread and the table builder:
 * one lock and one condition around the queue. */
#define NITEMS 200000u

struct shared {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct queue *q;
	bool done;
	uint64_t full; /* pushes refused: the producer waits and retries */
};

static void *producer(void *arg)
{
	struct shared *sh = arg;
	uint32_t i = 0;

	while (i < NITEMS) {
		struct item it = {i, (uint64_t)i * 3};

		pthread_mutex_lock(&sh->mu);
		if (!queue__push(sh->q, &it)) {
			i++;
			pthread_cond_signal(&sh->cv);
		} else {
			sh->full++;
			pthread_cond_wait(&sh->cv, &sh->mu);
		}
		pthread_mutex_unlock(&sh->mu);
	}
	pthread_mutex_lock(&sh->mu);
	sh->done = true;
	pthread_cond_signal(&sh->cv);
	pthread_mutex_unlock(&sh->mu);
	return NULL;
}

TEST(producer_consumer_threads)
{
	struct shared sh = {.q = queue__new(64, sizeof(struct item))};
	struct item batch[16];
	uint32_t next = 0;
	bool order_ok = true;
	pthread_t t;

	CHECK(sh.q);
	pthread_mutex_init(&sh.mu, NULL);
	pthread_cond_init(&sh.cv, NULL);
	CHECK(!pthread_create(&t, NULL, producer, &sh));
	pthread_mutex_lock(&sh.mu);
	for (;;) {
		size_t n = queue__take(sh.q, batch, 16), i;

		if (n)
			pthread_cond_signal(&sh.cv); /* room again */
		for (i = 0; i < n; i++) {
			order_ok &= batch[i].id == next && batch[i].payload == (uint64_t)next * 3;
			next++;
		}
		if (!n && sh.done)
			break;
		if (!n)
			pthread_cond_wait(&sh.cv, &sh.mu);
	}
	pthread_mutex_unlock(&sh.mu);
	pthread_join(t, NULL);
	CHECK(order_ok);
	CHECK(next == NITEMS);
	CHECK(queue__len(sh.q) == 0);
	queue__free(sh.q);
	pthread_cond_destroy(&sh.cv);
	pthread_mutex_destroy(&sh.mu);
}

int main(void)
{
	RUN(new_rejects_zero);
	RUN(fifo_full_empty);
	RUN(wraps_and_evicts);
	RUN(producer_consumer_threads);
	return TEST_DONE();
}
