#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/intern.h"

struct entry {
	const unsigned char *key;
	__u32 len;
	__u32 hash; /* low bits of the key's hash, to skip most compares */
};

struct intern {
	struct entry *entries;
	__u32 n, cap, max;
	__u32 *slots;	   /* open addressing, entry index + 1, 0 = empty */
	__u32 nslots;	   /* power of two */
	struct arena keys; /* the stored keys, 8-byte aligned */
};

__u64 intern__hash(const void *data, size_t len)
{
	const unsigned char *p = data;
	__u64 h = 0x9e3779b97f4a7c15ull ^ (len * 0xff51afd7ed558ccdull);
	__u64 w;

	while (len >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
		p += 8;
		len -= 8;
	}
	w = 0;
	if (len) /* @data may be NULL for an empty key */
		memcpy(&w, p, len);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 32;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 29;
	return h;
}

struct intern *intern__new(__u32 max_entries)
{
	struct intern *t;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->max = max_entries;
	return t;
}

void intern__free(struct intern *t)
{
	if (!t)
		return;
	arena__release(&t->keys);
	free(t->entries);
	free(t->slots);
	free(t);
}

size_t intern__count(const struct intern *t)
{
	return t->n;
}

const void *intern__get(const struct intern *t, __u32 idx, size_t *len)
{
	if (len)
		*len = t->entries[idx].len;
	return t->entries[idx].key;
}

static int lookup(const struct intern *t, const void *key, size_t len, __u32 h, __u32 *slot)
{
	__u32 mask = t->nslots - 1, i = h & mask, s;

	for (;; i = (i + 1) & mask) {
		s = t->slots[i];
		if (!s) {
			*slot = i;
			return -ENOENT;
		}
		const struct entry *e = &t->entries[s - 1];
		if (e->hash == h && e->len == len && (!len || !memcmp(e->key, key, len))) {
			*slot = i;
			return 0;
		}
	}
}

int intern__find(const struct intern *t, const void *key, size_t len, __u32 *idx)
{
	__u32 slot;

	if (!t->nslots || lookup(t, key, len, (__u32)intern__hash(key, len), &slot))
		return -ENOENT;
	*idx = t->slots[slot] - 1;
	return 0;
}

static int grow_slots(struct intern *t)
{
	__u32 nslots = t->nslots ? t->nslots * 2 : 64, mask = nslots - 1, i, j;
	__u32 *slots;

	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		for (j = t->entries[i].hash & mask; slots[j]; j = (j + 1) & mask)
			;
		slots[j] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

static unsigned char *store(struct intern *t, const void *key, size_t len)
{
	unsigned char *p = arena__alloc(&t->keys, len ? len : 1, 8);

	if (p && len)
		memcpy(p, key, len);
	return p;
}

int intern__put(struct intern *t, const void *key, size_t len, __u32 *idx, bool *added)
{
	__u32 h = (__u32)intern__hash(key, len), slot;
	unsigned char *copy;
	int err;

	if (len > 0xffffffffu)
		return -E2BIG;
	if (t->nslots && !lookup(t, key, len, h, &slot)) {
		*idx = t->slots[slot] - 1;
		if (added)
			*added = false;
		return 0;
	}
	if (t->n >= t->max)
		return -E2BIG;
	if ((t->n + 1) * 4 > t->nslots * 3) {
		err = grow_slots(t);
		if (err)
			return err;
	}
	if (t->n == t->cap) {
		__u32 ncap = t->cap ? t->cap * 2 : 64;
		struct entry *e = realloc(t->entries, (size_t)ncap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		t->entries = e;
		t->cap = ncap;
	}
	copy = store(t, key, len);
	if (!copy)
		return -ENOMEM;
	lookup(t, key, len, h, &slot);
	t->entries[t->n] = (struct entry){.key = copy, .len = (__u32)len, .hash = h};
	t->slots[slot] = ++t->n;
	*idx = t->n - 1;
	if (added)
		*added = true;
	return 0;
}
