/* htab.h - the one hash table of profcap, and its hash function.
 *
 * Open addressing with linear probing over a power of two of slots, at most
 * three quarters used. Each slot holds a 32-bit tag (a fold of the key's
 * 64-bit hash; 0 = empty, 1 = removed) and one caller-defined element of
 * elem_size bytes (a multiple of 4) stored in place: the key and whatever
 * goes with it (an index into the caller's own array, a pointer, a small
 * struct). The contract for a key type is small: the caller hashes the key
 * with htab__hash()/htab__hash_u64() and gives an equality function
 * eq(elem, key, ctx); htab__find() is inline, so a constant eq is
 * inlined too and a lookup allocates nothing.
 *
 * Element pointers stay valid until the next htab__add() (which may
 * rehash); removal leaves a tombstone, so removing while iterating with
 * htab__next() is safe. The table never holds more than its max entries
 * (-E2BIG).
 */
#ifndef PROFCAP_HTAB_H
#define PROFCAP_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>

struct htab {
	unsigned char *slots; /* (mask + 1) * stride bytes */
	__u32 mask;	      /* slots - 1, 0 before the first add */
	__u32 stride;	      /* bytes per slot: tag, padding, element */
	__u32 off;	      /* offset of the element in a slot */
	__u32 elem_size;
	__u32 n;    /* live elements */
	__u32 used; /* live elements and tombstones */
	__u32 max;  /* hard cap on n */
};

/* Is the element at @elem equal to @key? @ctx is the caller's. */
typedef bool (*htab_eq_fn)(const void *elem, const void *key, void *ctx);

#define HTAB_EMPTY 0u
#define HTAB_REMOVED 1u

/* Set up an empty table (embedded in the caller's struct) of elements of
 * @elem_size bytes (a multiple of 4), at most @max of them. No allocation
 * until the first add. 0 or -EINVAL. */
int htab__init(struct htab *m, size_t elem_size, __u32 max);

/* Free the slots of @m (set up by htab__init(), or zeroed); @m is empty
 * and usable again. Accepts NULL. */
void htab__release(struct htab *m);

/* The same on the heap: NULL on ENOMEM or a bad @elem_size. */
struct htab *htab__new(size_t elem_size, __u32 max);
void htab__free(struct htab *m);

/* Empty @m, keeping its slots. */
void htab__clear(struct htab *m);

/* Make room for @n elements in all without rehashing on the way.
 * 0, -E2BIG (over the cap), -ENOMEM. */
int htab__reserve(struct htab *m, __u32 n);

/* Add a slot for a key of hash @hash, known to be absent, and set *@elem
 * to its zeroed element for the caller to fill. 0, -E2BIG when the table
 * holds its max, -ENOMEM (the table is unchanged). */
int htab__add(struct htab *m, __u64 hash, void **elem);

/* Remove the element @elem (returned by find, add or next). */
void htab__remove(struct htab *m, void *elem);

/* Iterate: start with *@iter = 0; each call returns the next live element
 * or NULL at the end. */
void *htab__next(const struct htab *m, size_t *iter);

static inline size_t htab__count(const struct htab *m)
{
	return m->n;
}

/* ---- the hash function ------------------------------------------------------- */

#define HTAB_K0 0x9e3779b97f4a7c15ull
#define HTAB_K1 0xff51afd7ed558ccdull
#define HTAB_K2 0xc4ceb9fe1a85ec53ull

static inline __u64 htab__step(__u64 h, __u64 w)
{
	h = (h ^ w) * HTAB_K2;
	return h ^ (h >> 29);
}

/* The final round, after the last (zero-padded) word @w. */
static inline __u64 htab__finish(__u64 h, __u64 w)
{
	h = (h ^ w) * HTAB_K2;
	h ^= h >> 32;
	h *= HTAB_K1;
	return h ^ (h >> 29);
}

/* 64-bit hash of @len bytes at @data (NULL when @len is 0). */
__u64 htab__hash(const void *data, size_t len);

/* htab__hash() of the 16 bytes of @a then @b, without the memory. */
static inline __u64 htab__hash_u64(__u64 a, __u64 b)
{
	__u64 h = HTAB_K0 ^ (16 * HTAB_K1);

	h = htab__step(h, a);
	h = htab__step(h, b);
	return htab__finish(h, 0);
}

/* htab__hash() of the NUL-terminated string @s (not the NUL). */
static inline __u64 htab__hash_str(const char *s)
{
	return htab__hash(s, strlen(s));
}

/* ---- lookup ------------------------------------------------------------------ */

/* The slot tag of @hash: never HTAB_EMPTY nor HTAB_REMOVED. */
static inline __u32 htab__tag(__u64 hash)
{
	__u32 t = (__u32)(hash ^ (hash >> 32));

	return t > HTAB_REMOVED ? t : t + 2;
}

static inline __u32 htab__slot_tag(const struct htab *m, size_t i)
{
	__u32 t;

	memcpy(&t, m->slots + i * m->stride, sizeof(t));
	return t;
}

/* The element equal to @key (of hash @hash) or NULL. */
static inline __attribute__((always_inline)) void *
htab__find(const struct htab *m, __u64 hash, const void *key, htab_eq_fn eq, void *ctx)
{
	__u32 tag = htab__tag(hash), t;
	size_t i = tag & m->mask;

	if (!m->n)
		return NULL;
	for (;; i = (i + 1) & m->mask) {
		t = htab__slot_tag(m, i);
		if (t == HTAB_EMPTY)
			return NULL;
		if (t == tag && eq(m->slots + i * m->stride + m->off, key, ctx))
			return m->slots + i * m->stride + m->off;
	}
}

/* Start loading the slot where a lookup of @hash begins (a batch of
 * lookups hides the cache misses of the slots this way). */
static inline void htab__prefetch(const struct htab *m, __u64 hash)
{
	if (m->slots)
		__builtin_prefetch(m->slots + (size_t)(htab__tag(hash) & m->mask) * m->stride);
}

#endif
