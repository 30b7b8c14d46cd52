/* queue.c - a bounded FIFO of fixed-size items in a ring (see queue.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/queue.h"

struct queue {
	size_t cap, size;
	size_t head; /* index of the oldest item */
	size_t n;
	unsigned char items[];
};

struct queue *queue__new(size_t cap, size_t size)
{
	struct queue *q;

	if (!cap || !size || cap > (SIZE_MAX - sizeof(*q)) / size)
		return NULL;
	q = malloc(sizeof(*q) + cap * size);
	if (!q)
		return NULL;
	q->cap = cap;
	q->size = size;
	q->head = q->n = 0;
	return q;
}

void queue__free(struct queue *q)
{
	free(q);
}

size_t queue__len(const struct queue *q)
{
	return q->n;
}

size_t queue__cap(const struct queue *q)
{
	return q->cap;
}

void *queue__at(const struct queue *q, size_t i)
{
	if (i >= q->n)
		return NULL;
	return (void *)(q->items + ((q->head + i) % q->cap) * q->size);
}

int queue__push(struct queue *q, const void *item)
{
	if (q->n == q->cap)
		return -ENOSPC;
	q->n++;
	memcpy(queue__at(q, q->n - 1), item, q->size);
	return 0;
}

bool queue__push_evict(struct queue *q, const void *item, void *evicted)
{
	bool full = q->n == q->cap;

	if (full)
		queue__pop(q, evicted);
	queue__push(q, item);
	return full;
}

int queue__pop(struct queue *q, void *item)
{
	if (!q->n)
		return -ENOENT;
	if (item)
		memcpy(item, queue__at(q, 0), q->size);
	q->head = (q->head + 1) % q->cap;
	q->n--;
	return 0;
}

size_t queue__take(struct queue *q, void *items, size_t max)
{
	size_t i;

	for (i = 0; i < max && !queue__pop(q, (unsigned char *)items + i * q->size); i++)
		;
	return i;
}
