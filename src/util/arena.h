/* arena.h - append-only memory for many small objects freed all at once.
 *
 * Objects live in chunks that never move, so pointers handed out stay valid
 * until arena__release(). A zeroed struct arena is an empty arena; it is
 * meant to be embedded in its owner.
 */
#ifndef PROFCAP_ARENA_H
#define PROFCAP_ARENA_H

#include <stddef.h>

/* Chunks double in size from the first to the largest. */
#define ARENA_FIRST_CHUNK 512u
#define ARENA_CHUNK_SIZE (64u << 10)

struct arena_chunk;

struct arena {
	struct arena_chunk *chunks; /* newest first */
	size_t bytes;		    /* bytes held in chunks, headers included */
};

/* @len bytes aligned to @align (a power of two, at most 16), uninitialised,
 * owned by @a. A request larger than a chunk gets a chunk of its own.
 * NULL on ENOMEM. */
void *arena__alloc(struct arena *a, size_t len, size_t align);

/* Free every chunk; @a is empty and reusable afterwards. Accepts NULL. */
void arena__release(struct arena *a);

#endif
