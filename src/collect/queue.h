/* queue.h - a bounded FIFO of fixed-size items in a ring.
 *
 * The sampler's threads hand each other work through these (new processes
 * to the table builder and to the main thread, processes to describe
 * later, files late walks wait for). A queue has no lock of its own: the
 * lock of the structure that holds it guards it (collect/sampler_int.h
 * says which), so a consumer can wait on one condition for several queues.
 */
#ifndef PROFCAP_QUEUE_H
#define PROFCAP_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

struct queue;

/* A queue of at most @cap items of @size bytes each (both > 0); NULL on
 * failure. */
struct queue *queue__new(size_t cap, size_t size);

/* Accepts NULL. The items are dropped as they are (the caller releases
 * what they hold first: queue__pop() until empty). */
void queue__free(struct queue *q);

size_t queue__len(const struct queue *q);
size_t queue__cap(const struct queue *q);

/* Append a copy of *@item. 0, or -ENOSPC when full (nothing changed). */
int queue__push(struct queue *q, const void *item);

/* Append a copy of *@item; when full, the oldest item goes first, copied
 * to @evicted when not NULL. True when one was evicted. */
bool queue__push_evict(struct queue *q, const void *item, void *evicted);

/* Remove the oldest item into @item (NULL: dropped). 0, -ENOENT when empty. */
int queue__pop(struct queue *q, void *item);

/* Remove up to @max of the oldest items, in order, into @items. The count. */
size_t queue__take(struct queue *q, void *items, size_t max);

/* Item @i (0: the oldest), NULL past the end. Valid until the queue changes. */
void *queue__at(const struct queue *q, size_t i);

#endif
