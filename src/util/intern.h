/* intern.h - a deduplicating table: byte strings in, dense indices out.
 *
 * intern__put() returns the index of an equal key when one exists, otherwise
 * copies the key into the table and gives it the next index (0, 1, 2, ...).
 * Stored keys live in fixed chunks that never move, so pointers returned by
 * intern__get() stay valid until intern__free(). Keys are stored 8-byte
 * aligned, so fixed-size structs can be read back in place.
 */
#ifndef PROFCAP_INTERN_H
#define PROFCAP_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct intern;

/* New empty table holding at most @max_entries keys. NULL on ENOMEM. */
struct intern *intern__new(__u32 max_entries);

/* Free @t and every stored key. Accepts NULL. */
void intern__free(struct intern *t);

/* Find or add @key (@len bytes, may be 0). On success *@idx is its index and
 * *@added (if not NULL) says whether it was new. 0, -E2BIG when the table is
 * full, -ENOMEM. */
int intern__put(struct intern *t, const void *key, size_t len, __u32 *idx, bool *added);

/* Index of @key, or -ENOENT. */
int intern__find(const struct intern *t, const void *key, size_t len, __u32 *idx);

/* Borrowed pointer to stored key @idx (< intern__count()); *@len gets its
 * length when @len is not NULL. */
const void *intern__get(const struct intern *t, __u32 idx, size_t *len);

size_t intern__count(const struct intern *t);

/* htab__hash() under the name the formats use for colours. */
__u64 intern__hash(const void *data, size_t len);

#endif
