#include <stdint.h>
#include <stdlib.h>

#include "util/arena.h"

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

void *arena__alloc(struct arena *a, size_t len, size_t align)
{
	struct arena_chunk *c = a->chunks;
	size_t at = 0;

	if (c)
		at = (c->used + align - 1) & ~(align - 1);
	if (!c || at > c->size || c->size - at < len) {
		/* Twice the last chunk, from ARENA_FIRST_CHUNK up to
		 * ARENA_CHUNK_SIZE: most arenas hold a few objects (a table per
		 * process), and a whole chunk each cost a 64 KiB allocation. */
		size_t size = !c				? ARENA_FIRST_CHUNK
			      : c->size >= ARENA_CHUNK_SIZE / 2 ? ARENA_CHUNK_SIZE
								: c->size * 2;

		if (len > size)
			size = len;

		if (size > SIZE_MAX - sizeof(*c))
			return NULL;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = a->chunks;
		a->chunks = c;
		a->bytes += sizeof(*c) + size;
		at = 0;
	}
	c->used = at + len;
	return c->data + at;
}

void arena__release(struct arena *a)
{
	struct arena_chunk *c, *next;

	if (!a)
		return;
	for (c = a->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	a->chunks = NULL;
	a->bytes = 0;
}
