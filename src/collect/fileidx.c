#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collect/fileidx.h"

/* Open addressing with linear probing: ht[] holds slot + 1 (0: empty),
 * at least twice as many buckets as slots; deletion shifts the run back
 * (no tombstones). */
struct fileidx {
	pthread_mutex_t mu;
	__u32 nslots;
	__u32 mask; /* buckets - 1 */
	__u32 *ht;
	struct unwind_file_key *key; /* by slot; dev == 0 && ino == 0: no file */
	struct unwind_file *file;    /* by slot */
	__u32 *id;		     /* by slot: map id, 0 = none */
};

struct fileidx *fileidx__new(__u32 nslots)
{
	struct fileidx *x;
	__u32 n = 2;

	if (!nslots || nslots > (1u << 24))
		return NULL;
	while (n < 2 * nslots)
		n <<= 1;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	pthread_mutex_init(&x->mu, NULL);
	x->nslots = nslots;
	x->mask = n - 1;
	x->ht = calloc(n, sizeof(*x->ht));
	x->key = calloc(nslots, sizeof(*x->key));
	x->file = calloc(nslots, sizeof(*x->file));
	x->id = calloc(nslots, sizeof(*x->id));
	if (!x->ht || !x->key || !x->file || !x->id) {
		fileidx__free(x);
		return NULL;
	}
	return x;
}

void fileidx__free(struct fileidx *x)
{
	if (!x)
		return;
	pthread_mutex_destroy(&x->mu);
	free(x->ht);
	free(x->key);
	free(x->file);
	free(x->id);
	free(x);
}

static __u32 bucket_of(const struct fileidx *x, const struct unwind_file_key *k)
{
	__u64 h = (k->dev * 0x9e3779b97f4a7c15ull) ^ (k->ino * 0xc2b2ae3d27d4eb4full);

	return (__u32)(h ^ (h >> 29)) & x->mask;
}

static bool key_eq(const struct unwind_file_key *a, const struct unwind_file_key *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/* The bucket holding @k, or the empty bucket where it would go. */
static __u32 probe(const struct fileidx *x, const struct unwind_file_key *k)
{
	__u32 b = bucket_of(x, k);

	while (x->ht[b] && !key_eq(&x->key[x->ht[b] - 1], k))
		b = (b + 1) & x->mask;
	return b;
}

/* Empty bucket @b and move back the entries after it that probed past it. */
static void bucket_clear(struct fileidx *x, __u32 b)
{
	__u32 next = (b + 1) & x->mask;

	x->ht[b] = 0;
	while (x->ht[next]) {
		__u32 home = bucket_of(x, &x->key[x->ht[next] - 1]);

		/* Moves into the hole when its home is not after the hole
		 * (cyclically): probing from home passes the hole first. */
		if (((next - home) & x->mask) >= ((next - b) & x->mask)) {
			x->ht[b] = x->ht[next];
			x->ht[next] = 0;
			b = next;
		}
		next = (next + 1) & x->mask;
	}
}

/* Forget slot @slot's file (under mu). */
static void slot_forget(struct fileidx *x, __u32 slot)
{
	struct unwind_file_key *k = &x->key[slot];
	__u32 b;

	if (!k->dev && !k->ino)
		return;
	b = probe(x, k);
	if (x->ht[b] == slot + 1)
		bucket_clear(x, b);
	memset(k, 0, sizeof(*k));
}

int fileidx__set(struct fileidx *x, const struct unwind_file_key *k, const struct unwind_file *f)
{
	__u32 b;

	if (f->slot >= x->nslots || (!k->dev && !k->ino))
		return -EINVAL;
	pthread_mutex_lock(&x->mu);
	slot_forget(x, f->slot);
	b = probe(x, k);
	if (x->ht[b]) /* @k was in another slot: that one keeps its rows, not the key */
		memset(&x->key[x->ht[b] - 1], 0, sizeof(*k));
	x->key[f->slot] = *k;
	x->file[f->slot] = *f;
	x->ht[b] = f->slot + 1;
	pthread_mutex_unlock(&x->mu);
	return 0;
}

void fileidx__set_id(struct fileidx *x, __u32 slot, __u32 id)
{
	if (slot >= x->nslots)
		return;
	pthread_mutex_lock(&x->mu);
	x->id[slot] = id;
	pthread_mutex_unlock(&x->mu);
}

int fileidx__drop(struct fileidx *x, __u32 slot, struct unwind_file_key *key)
{
	int err;

	if (slot >= x->nslots)
		return -ENOENT;
	pthread_mutex_lock(&x->mu);
	err = x->key[slot].dev || x->key[slot].ino ? 0 : -ENOENT;
	if (!err && key)
		*key = x->key[slot];
	slot_forget(x, slot);
	x->id[slot] = 0;
	pthread_mutex_unlock(&x->mu);
	return err;
}

int fileidx__find(struct fileidx *x, const struct unwind_file_key *k, struct unwind_file *out)
{
	int err = -ENOENT;
	__u32 b;

	if (!k->dev && !k->ino)
		return -ENOENT;
	pthread_mutex_lock(&x->mu);
	b = probe(x, k);
	if (x->ht[b]) {
		*out = x->file[x->ht[b] - 1];
		err = 0;
	}
	pthread_mutex_unlock(&x->mu);
	return err;
}

__u32 fileidx__id(struct fileidx *x, __u32 slot)
{
	__u32 id;

	if (slot >= x->nslots)
		return 0;
	pthread_mutex_lock(&x->mu);
	id = x->id[slot];
	pthread_mutex_unlock(&x->mu);
	return id;
}
