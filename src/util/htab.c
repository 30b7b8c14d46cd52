/* htab.c - open addressing with tombstones under a hard cap (see htab.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/htab.h"

#define FIRST_SLOTS 16u
#define MAX_SLOTS (1u << 31)

__u64 htab__hash(const void *data, size_t len)
{
	const unsigned char *p = data;
	__u64 h = HTAB_K0 ^ (len * HTAB_K1);
	__u64 w;

	while (len >= 8) {
		memcpy(&w, p, 8);
		h = htab__step(h, w);
		p += 8;
		len -= 8;
	}
	w = 0;
	if (len)
		memcpy(&w, p, len);
	return htab__finish(h, w);
}

int htab__init(struct htab *m, size_t elem_size, __u32 max)
{
	__u32 align = elem_size % 8 ? 4 : 8;

	memset(m, 0, sizeof(*m));
	if (!elem_size || elem_size % 4 || elem_size > (1u << 16))
		return -EINVAL;
	m->off = align; /* the tag, padded to the element's alignment */
	m->stride = align + (__u32)elem_size;
	m->elem_size = (__u32)elem_size;
	m->max = max < MAX_SLOTS / 4 * 3 ? max : MAX_SLOTS / 4 * 3;
	return 0;
}

void htab__release(struct htab *m)
{
	if (!m)
		return;
	free(m->slots);
	m->slots = NULL;
	m->mask = m->n = m->used = 0;
}

struct htab *htab__new(size_t elem_size, __u32 max)
{
	struct htab *m = malloc(sizeof(*m));

	if (!m)
		return NULL;
	if (htab__init(m, elem_size, max)) {
		free(m);
		return NULL;
	}
	return m;
}

void htab__free(struct htab *m)
{
	if (!m)
		return;
	htab__release(m);
	free(m);
}

void htab__clear(struct htab *m)
{
	if (m->slots)
		memset(m->slots, 0, ((size_t)m->mask + 1) * m->stride);
	m->n = m->used = 0;
}

static size_t slot_of(const struct htab *m, const void *elem)
{
	return (size_t)((const unsigned char *)elem - m->off - m->slots) / m->stride;
}

/* Move every live element into a fresh array of @nslots slots. */
static int rehash(struct htab *m, size_t nslots)
{
	size_t mask = nslots - 1, i, j;
	unsigned char *slots, *from;
	__u32 t, u;

	slots = calloc(nslots, m->stride);
	if (!slots)
		return -ENOMEM;
	for (i = 0; m->slots && i <= m->mask; i++) {
		from = m->slots + i * m->stride;
		memcpy(&t, from, sizeof(t));
		if (t <= HTAB_REMOVED)
			continue;
		for (j = t & mask;; j = (j + 1) & mask) {
			memcpy(&u, slots + j * m->stride, sizeof(u));
			if (u == HTAB_EMPTY)
				break;
		}
		memcpy(slots + j * m->stride, from, m->stride);
	}
	free(m->slots);
	m->slots = slots;
	m->mask = (__u32)mask;
	m->used = m->n;
	return 0;
}

/* Slots needed to hold @n entries under the load limit (3/4). */
static size_t slots_for(size_t n)
{
	size_t s = FIRST_SLOTS;

	while (s < MAX_SLOTS && s * 3 < n * 4)
		s *= 2;
	return s;
}

int htab__reserve(struct htab *m, __u32 n)
{
	size_t want;

	if (n > m->max)
		return -E2BIG;
	want = slots_for(n + 1);
	if (m->slots && want <= (size_t)m->mask + 1)
		return 0;
	return rehash(m, want);
}

int htab__add(struct htab *m, __u64 hash, void **elem)
{
	__u32 tag = htab__tag(hash), t;
	size_t i, nslots, want;
	unsigned char *s;
	int err;

	if (m->n >= m->max)
		return -E2BIG;
	nslots = m->slots ? (size_t)m->mask + 1 : 0;
	if (((size_t)m->used + 1) * 4 > nslots * 3) {
		/* Grown when the live elements need it, else rehashed in
		 * place to drop the tombstones. */
		want = slots_for((size_t)m->n + 1);
		err = rehash(m, want > nslots ? want : nslots);
		if (err)
			return err;
	}
	for (i = tag & m->mask;; i = (i + 1) & m->mask) {
		t = htab__slot_tag(m, i);
		if (t <= HTAB_REMOVED)
			break;
	}
	s = m->slots + i * m->stride;
	if (t == HTAB_EMPTY)
		m->used++;
	memcpy(s, &tag, sizeof(tag));
	memset(s + m->off, 0, m->elem_size);
	m->n++;
	*elem = s + m->off;
	return 0;
}

void htab__remove(struct htab *m, void *elem)
{
	size_t i = slot_of(m, elem), next = (i + 1) & m->mask;
	__u32 t = HTAB_REMOVED;

	/* Before an empty slot no probe run goes on: empty it outright. */
	if (htab__slot_tag(m, next) == HTAB_EMPTY) {
		t = HTAB_EMPTY;
		m->used--;
	}
	memcpy(m->slots + i * m->stride, &t, sizeof(t));
	m->n--;
}

void *htab__next(const struct htab *m, size_t *iter)
{
	size_t i;

	for (i = *iter; m->slots && i <= m->mask; i++) {
		if (htab__slot_tag(m, i) > HTAB_REMOVED) {
			*iter = i + 1;
			return m->slots + i * m->stride + m->off;
		}
	}
	*iter = i;
	return NULL;
}
