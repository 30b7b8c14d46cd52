/* sampler_memory_drain.c - the drain of the memory sampler (see
 * sampler_memory.h): counters taken, the live table read at a window's
 * end, stacks no live allocation needs let go, back-pressure adjusted. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "timestamps.h"
#include "collect/sampler_int.h"
#include "collect/sampler_memory_int.h"
#include "collect/sampler_times.h"
#include "util/clock.h"
#include "util/log.h"

/* The counters summed over CPUs into @v (MEM_STAT__COUNT of them). */
static void read_stats(const struct memsampler *m, __u64 *v)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(m->skel->maps.mem_stats);
	__u64 *per = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*per)) : NULL;
	__u32 i;
	int c;

	memset(v, 0, MEM_STAT__COUNT * sizeof(*v));
	for (i = 0; per && i < MEM_STAT__COUNT; i++)
		if (!bpf_map_lookup_elem(fd, &i, per))
			for (c = 0; c < ncpu; c++)
				v[i] += per[c];
	free(per);
}

static bool agg_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return !memcmp(&((const struct mem_agg *)elem)->key, key, sizeof(struct mem_key));
}

/* The aggregate of @k (added zeroed when new), NULL when the table is full. */
static struct mem_agg *agg_of(struct memsampler *m, const struct mem_key *k)
{
	__u64 h = htab__hash(k, sizeof(*k));
	struct mem_agg *a = htab__find(&m->agg, h, k, agg_eq, NULL);

	if (a || htab__add(&m->agg, h, (void **)&a))
		return a;
	a->key = *k;
	return a;
}

/* Every entry of hash map @fd in batches (@del: taken out) to @fn. */
static int batches(struct memsampler *m, int fd, bool del, size_t ksz, size_t vsz,
		   void (*fn)(struct memsampler *m, const void *k, const void *v))
{
	void *keys = malloc(MEMORY_BATCH * ksz), *vals = malloc(MEMORY_BATCH * vsz);
	__u32 cursor = 0, next, count, i;
	bool started = false;
	int err = keys && vals ? 0 : -ENOMEM;

	while (!err) {
		count = MEMORY_BATCH;
		err = del ? bpf_map_lookup_and_delete_batch(fd, started ? &cursor : NULL, &next,
							    keys, vals, &count, NULL)
			  : bpf_map_lookup_batch(fd, started ? &cursor : NULL, &next, keys, vals,
						 &count, NULL);
		if (err && err != -ENOENT)
			break;
		for (i = 0; i < count; i++)
			fn(m, (char *)keys + i * ksz, (char *)vals + i * vsz);
		if (err == -ENOENT) {
			err = 0;
			break;
		}
		cursor = next;
		started = true;
	}
	free(keys);
	free(vals);
	return err;
}

static void add_count(struct memsampler *m, const void *k, const void *v)
{
	const struct mem_val *w = v;
	struct mem_agg *a = agg_of(m, k);

	if (a) {
		a->alloc_bytes += w->bytes;
		a->alloc_objs += w->objs;
	}
}

static void add_live(struct memsampler *m, const void *k, const void *v)
{
	const struct mem_live_val *lv = v;
	struct mem_agg *a = agg_of(m, &lv->key);

	(void)k;
	m->live++;
	if (a) {
		a->inuse_bytes += lv->w.bytes;
		a->inuse_objs += lv->w.objs;
	}
}

/* Live entries of processes that exited: their memory went with them. */
static void purge_gone(struct memsampler *m)
{
	int pfd = bpf_map__fd(m->skel->maps.mem_live_procs),
	    lfd = bpf_map__fd(m->skel->maps.mem_live);
	struct mem_live_key lk, lnext;
	__u32 tgid, next, gone[64];
	size_t ngone = 0, i;
	bool first = true;

	while (ngone < 64 && !bpf_map_get_next_key(pfd, first ? NULL : &tgid, &next)) {
		first = false;
		tgid = next;
		if (kill((pid_t)tgid, 0) && errno == ESRCH)
			gone[ngone++] = tgid;
	}
	if (!ngone)
		return;
	first = true;
	while (!bpf_map_get_next_key(lfd, first ? NULL : &lk, &lnext)) {
		first = false;
		lk = lnext;
		for (i = 0; i < ngone && gone[i] != lk.tgid; i++)
			;
		if (i < ngone)
			bpf_map_delete_elem(lfd, &lk); /* the walk goes on from the next bucket */
	}
	for (i = 0; i < ngone; i++)
		bpf_map_delete_elem(pfd, &gone[i]);
}

static int stack_of(void *ctx, __u64 hash, struct stack_trace *out)
{
	const struct memsampler *m = ctx;

	return bpf_map_lookup_elem(m->stacks_fd, &hash, out) ? -ENOENT : 0;
}

static int tail_of(void *ctx, __u64 hash, __u64 *tail)
{
	const struct memsampler *m = ctx;

	return bpf_map_lookup_elem(m->ext_fd, &hash, tail) ? -ENOENT : 0;
}

/* With timestamps, this drain's sampled allocations from the ring, each
 * key's in a row of m->tv (sorted by key, then time). */
static void add_timed(struct memsampler *m)
{
	const __u64 *keys;
	size_t n, i;

	m->tv = NULL;
	if (!m->times || times__read_ring(m->times, m->skel))
		return;
	n = times__mem_prepare(m->times, (__s64)(clock__ns(CLOCK_REALTIME) - clock__mono_ns()),
			       &keys, &m->tv);
	for (i = 0; i < n; i++) {
		struct mem_agg *a =
			agg_of(m, (const struct mem_key *)(keys + i * PROFCAP_TIMES_MEM_KEY_WORDS));

		if (!a) {
			m->times_lost++;
			continue;
		}
		if (!a->ntimes)
			a->t0 = (__u32)i;
		a->ntimes++;
	}
}

/* Aggregates of the window to @fn. */
static int emit(struct memsampler *m, memory_record_fn fn, void *ctx)
{
	const struct drain_stacks src = {.stack = stack_of, .tail = tail_of, .ctx = m};
	struct memory_record rec;
	struct mem_agg *a;
	size_t it = 0;
	int err = 0;

	while (!err && (a = htab__next(&m->agg, &it))) {
		if (!a->alloc_objs && !a->inuse_objs && !a->ntimes)
			continue;
		memset(&rec, 0, sizeof(rec));
		rec.r.kind = SAMPLER_KIND_CPU;
		rec.r.tgid = a->key.tgid;
		rec.r.tid = a->key.tid;
		rec.r.flags = a->key.flags;
		rec.r.count = 1;
		memcpy(rec.r.comm, a->key.comm, 16);
		drain__stacks(&m->scratch, &src, &rec.r, a->key.ustack, 0);
		rec.alloc_bytes = a->alloc_bytes;
		rec.alloc_objects = (a->alloc_objs + (1u << (MEM_OBJ_BITS - 1))) >> MEM_OBJ_BITS;
		rec.inuse_bytes = a->inuse_bytes;
		rec.inuse_objects = (a->inuse_objs + (1u << (MEM_OBJ_BITS - 1))) >> MEM_OBJ_BITS;
		rec.times = a->ntimes ? m->tv + a->t0 : NULL;
		rec.ntimes = a->ntimes;
		err = fn(ctx, &rec);
	}
	return err;
}

/* Back-pressure for the next interval, from the sampled calls of this one. */
static void adjust(struct memsampler *m)
{
	__u64 v[MEM_STAT__COUNT], now = clock__mono_ns(), keep;

	read_stats(m, v);
	keep = memsampler__keep(m->keep, v[MEM_STAT_SAMPLED] - m->last_sampled, now - m->last_ns,
				m->o.max_events);
	m->last_sampled = v[MEM_STAT_SAMPLED];
	m->last_ns = now;
	if (keep != m->keep) {
		pr_debug("--memory: back-pressure: %.4f of sampled calls kept (was %.4f)",
			 (double)keep / MEM_FP_ONE, (double)m->keep / MEM_FP_ONE);
		m->keep = keep;
		memsampler__write_config(m);
	}
}

static bool u64_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return *(const __u64 *)elem == *(const __u64 *)key;
}

/* A live allocation's stack into m->refs. */
static void add_ref(struct memsampler *m, const void *k, const void *v)
{
	const struct mem_live_val *lv = v;
	__u64 h = htab__hash_u64(lv->key.ustack, 0), *slot;

	(void)k;
	if (lv->key.ustack && !htab__find(&m->refs, h, &lv->key.ustack, u64_eq, NULL) &&
	    !htab__add(&m->refs, h, (void **)&slot))
		*slot = lv->key.ustack;
}

/* Stacks no live allocation needs any more (the counters of this drain
 * taken): out of the stack tables once they are half full, so a long run
 * keeps room for new stacks. A sampled allocation counted between the
 * drain and this may lose its stack. */
static void collect_stacks(struct memsampler *m)
{
	__u64 key, next, *gone;
	size_t n = 0, ngone = 0, i;
	bool first;

	for (first = true; !bpf_map_get_next_key(m->stacks_fd, first ? NULL : &key, &next);
	     first = false, key = next)
		n++;
	if (n < MEMORY_STACKS_MAX / 2)
		return;
	htab__clear(&m->refs);
	if (batches(m, bpf_map__fd(m->skel->maps.mem_live), false, sizeof(struct mem_live_key),
		    sizeof(struct mem_live_val), add_ref))
		return; /* not knowing which are needed, keep all */
	gone = malloc(n * sizeof(*gone));
	for (first = true;
	     gone && ngone < n && !bpf_map_get_next_key(m->stacks_fd, first ? NULL : &key, &next);
	     first = false, key = next)
		if (!htab__find(&m->refs, htab__hash_u64(next, 0), &next, u64_eq, NULL))
			gone[ngone++] = next;
	for (i = 0; i < ngone; i++) {
		bpf_map_delete_elem(m->stacks_fd, &gone[i]);
		bpf_map_delete_elem(m->ext_fd, &gone[i]);
	}
	pr_debug("--memory: %zu of %zu stacks no live allocation needs dropped", ngone, n);
	free(gone);
}

int memsampler__drain(struct memsampler *m, bool window_end, memory_record_fn fn, void *ctx)
{
	int err;

	adjust(m);
	htab__clear(&m->agg);
	err = batches(m, bpf_map__fd(m->skel->maps.mem_counts), true, sizeof(struct mem_key),
		      sizeof(struct mem_val), add_count);
	if (!err)
		add_timed(m);
	if (!err && window_end) {
		m->live = 0;
		err = batches(m, bpf_map__fd(m->skel->maps.mem_live), false,
			      sizeof(struct mem_live_key), sizeof(struct mem_live_val), add_live);
	}
	err = err ?: emit(m, fn, ctx);
	if (m->times)
		times__mem_done(m->times);
	m->tv = NULL;
	/* A process that exited in this window shows what it held at its
	 * exit (its leaks) once, then no more. */
	if (!err && window_end)
		purge_gone(m);
	if (!err)
		collect_stacks(m);
	return err;
}

void memsampler__stats(const struct memsampler *m, struct memory_stats *st)
{
	__u64 v[MEM_STAT__COUNT];

	memset(st, 0, sizeof(*st));
	if (!m)
		return;
	read_stats(m, v);
	st->calls = v[MEM_STAT_CALLS];
	st->sampled = v[MEM_STAT_SAMPLED];
	st->frees = v[MEM_STAT_FREES];
	st->freed = v[MEM_STAT_FREED];
	st->counts_full = v[MEM_STAT_COUNTS_FULL];
	if (m->times) {
		struct sampler_times_stats ts;

		times__stats(m->times, NULL, &ts);
		st->times_lost = ts.mem_dropped + m->times_lost;
		st->timed = ts.mem_events - ts.mem_dropped;
		times__stats(NULL, m->s->skel, &ts); /* the sampler's globals, shared */
		st->untimed = ts.ring_mem_lost;
	}
	st->live_full = v[MEM_STAT_LIVE_FULL];
	st->live_proc = v[MEM_STAT_LIVE_PROC];
	st->throttled = v[MEM_STAT_THROTTLED];
	st->walk_busy = v[MEM_STAT_WALK_BUSY];
	st->live = m->live;
	st->probes = (__u32)m->nlinks;
	st->files = m->nfiles;
	st->usdt = m->usdt;
	st->keep_ppm = m->keep * 1000000 / MEM_FP_ONE;
}
