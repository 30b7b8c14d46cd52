#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/array.h"
#include "util/htab.h"
#include "util/intern.h"

struct entry {
	const unsigned char *key;
	__u32 len;
};

struct intern {
	struct entry *entries;
	size_t cap;
	__u32 n, max;
	struct htab slots; /* elements: __u32 entry index */
	struct arena keys; /* the stored keys, 8-byte aligned */
};

struct probe {
	const struct intern *t;
	const void *key;
	size_t len;
};

__u64 intern__hash(const void *data, size_t len)
{
	return htab__hash(data, len);
}

struct intern *intern__new(__u32 max_entries)
{
	struct intern *t;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->max = max_entries;
	htab__init(&t->slots, sizeof(__u32), max_entries);
	return t;
}

void intern__free(struct intern *t)
{
	if (!t)
		return;
	arena__release(&t->keys);
	free(t->entries);
	htab__release(&t->slots);
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

static bool entry_eq(const void *elem, const void *key, void *ctx)
{
	const struct probe *p = key;
	const struct entry *e = &p->t->entries[*(const __u32 *)elem];

	(void)ctx;
	return e->len == p->len && (!p->len || !memcmp(e->key, p->key, p->len));
}

static const __u32 *lookup(const struct intern *t, const void *key, size_t len, __u64 h)
{
	struct probe p = {.t = t, .key = key, .len = len};

	return htab__find(&t->slots, h, &p, entry_eq, NULL);
}

int intern__find(const struct intern *t, const void *key, size_t len, __u32 *idx)
{
	const __u32 *slot = lookup(t, key, len, htab__hash(key, len));

	if (!slot)
		return -ENOENT;
	*idx = *slot;
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
	__u64 h = htab__hash(key, len);
	const __u32 *found;
	unsigned char *copy;
	__u32 *slot;
	int err;

	if (len > 0xffffffffu)
		return -E2BIG;
	found = lookup(t, key, len, h);
	if (found) {
		*idx = *found;
		if (added)
			*added = false;
		return 0;
	}
	if (t->n >= t->max)
		return -E2BIG;
	err = array__grow((void **)&t->entries, &t->cap, t->n, sizeof(*t->entries), 64, t->max);
	if (err)
		return err;
	copy = store(t, key, len);
	if (!copy)
		return -ENOMEM;
	err = htab__add(&t->slots, h, (void **)&slot);
	if (err)
		return err;
	t->entries[t->n] = (struct entry){.key = copy, .len = (__u32)len};
	*slot = t->n;
	*idx = t->n++;
	if (added)
		*added = true;
	return 0;
}
