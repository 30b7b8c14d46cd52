#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collect/fileidx.h"
#include "util/htab.h"

/* The index maps a file (dev, ino) to its slot; the slots' keys, tables
 * and map ids are arrays by slot. */
struct fileidx {
	pthread_mutex_t mu;
	__u32 nslots;
	struct htab ht;		     /* struct fileidx_elem */
	struct unwind_file_key *key; /* by slot; dev == 0 && ino == 0: no file */
	struct unwind_file *file;    /* by slot */
	__u32 *id;		     /* by slot: map id, 0 = none */
};

struct fileidx_elem {
	__u64 dev, ino;
	__u32 slot, pad;
};

struct fileidx *fileidx__new(__u32 nslots)
{
	struct fileidx *x;

	if (!nslots || nslots > (1u << 24))
		return NULL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	pthread_mutex_init(&x->mu, NULL);
	x->nslots = nslots;
	x->key = calloc(nslots, sizeof(*x->key));
	x->file = calloc(nslots, sizeof(*x->file));
	x->id = calloc(nslots, sizeof(*x->id));
	if (htab__init(&x->ht, sizeof(struct fileidx_elem), nslots) ||
	    htab__reserve(&x->ht, nslots) || !x->key || !x->file || !x->id) {
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
	htab__release(&x->ht);
	free(x->key);
	free(x->file);
	free(x->id);
	free(x);
}

static bool elem_eq(const void *elem, const void *key, void *ctx)
{
	const struct fileidx_elem *e = elem;
	const struct unwind_file_key *k = key;

	(void)ctx;
	return e->dev == k->dev && e->ino == k->ino;
}

/* The index entry of @k, or NULL. */
static struct fileidx_elem *lookup(const struct fileidx *x, const struct unwind_file_key *k)
{
	return htab__find(&x->ht, htab__hash_u64(k->dev, k->ino), k, elem_eq, NULL);
}

/* Forget slot @slot's file (under mu). */
static void slot_forget(struct fileidx *x, __u32 slot)
{
	struct unwind_file_key *k = &x->key[slot];
	struct fileidx_elem *e;

	if (!k->dev && !k->ino)
		return;
	e = lookup(x, k);
	if (e && e->slot == slot)
		htab__remove(&x->ht, e);
	memset(k, 0, sizeof(*k));
}

int fileidx__set(struct fileidx *x, const struct unwind_file_key *k, const struct unwind_file *f)
{
	struct fileidx_elem *e;
	int err = 0;

	if (f->slot >= x->nslots || (!k->dev && !k->ino))
		return -EINVAL;
	pthread_mutex_lock(&x->mu);
	slot_forget(x, f->slot);
	e = lookup(x, k);
	if (e) /* @k was in another slot: that one keeps its rows, not the key */
		memset(&x->key[e->slot], 0, sizeof(*k));
	else
		err = htab__add(&x->ht, htab__hash_u64(k->dev, k->ino), (void **)&e);
	if (!err) {
		e->dev = k->dev;
		e->ino = k->ino;
		e->slot = f->slot;
		x->key[f->slot] = *k;
		x->file[f->slot] = *f;
	}
	pthread_mutex_unlock(&x->mu);
	return err;
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
	const struct fileidx_elem *e;
	int err = -ENOENT;

	if (!k->dev && !k->ino)
		return -ENOENT;
	pthread_mutex_lock(&x->mu);
	e = lookup(x, k);
	if (e) {
		*out = x->file[e->slot];
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
