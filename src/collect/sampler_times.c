/* sampler_times.c - per-sample times joined to the drain's records (see
 * sampler_times.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "memory_types.h"
#include "timestamps.h"
#include "collect/sampler_int.h"
#include "collect/sampler_times.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/log.h"

/* An event as held: its generation and kind in @flags (PROFCAP_TIMES_*). */
struct held {
	__u64 key;
	__u64 ts;
	__u64 ns; /* a wait's duration; 0 for a CPU sample */
	__u32 cpu;
	__u32 flags;
};

/* A sampled allocation as held: its key, then its time as records see it. */
struct held_mem {
	__u64 key[PROFCAP_TIMES_MEM_KEY_WORDS];
	struct memory_time tv;
};

struct sampler_times {
	struct ring_buffer *rb;
	bool warned;
	struct held *ev; /* read since the last prepare, and kept from it */
	size_t nev, evcap;
	struct held *ready;	 /* the prepared generation, sorted */
	struct sampler_time *tv; /* ... as the records see them, same order */
	size_t nready, readycap, tvcap;
	__u64 drain_real_ns;	   /* the prepared generation's end, on the epoch */
	struct sampler_time *rec;  /* the joined record's occurrences, and its rest */
	size_t reccap;
	struct held_mem *mem; /* sampled allocations, apart */
	__u64 *mkeys;
	struct memory_time *mtv;
	size_t nmem, memcap, mkeycap, mtvcap;
	struct sampler_times_stats st;
};

__u32 times__ring_bytes(__u32 freq_hz, __u32 ncpus, bool off_cpu)
{
	__u64 per_s = (__u64)freq_hz + (off_cpu ? SAMPLER_TIMES_WAITS_HZ : 0);
	__u64 want = per_s * (ncpus ? ncpus : 1) * SAMPLER_TIMES_RING_SECONDS *
		     (sizeof(struct times_wait) + 8);
	__u32 size = SAMPLER_TIMES_RING_MIN;

	while (size < want && size < SAMPLER_TIMES_RING_MAX)
		size <<= 1;
	return size;
}

__u32 times__mem_ring_bytes(__u32 events_per_s)
{
	__u64 want =
		(__u64)events_per_s * SAMPLER_TIMES_RING_SECONDS * (sizeof(struct times_mem) + 8);
	__u32 size = SAMPLER_TIMES_RING_MIN;

	while (size < want && size < SAMPLER_TIMES_RING_MAX)
		size <<= 1;
	return size;
}

__u32 times__ring_cap(__u32 size)
{
	const char *env = env__get(env__process(), "PROFCAP_TIMES_RING");
	unsigned long want = env ? strtoul(env, NULL, 10) : 0;
	long page = sysconf(_SC_PAGESIZE);
	__u32 min = page > 0 ? (__u32)page : 4096;

	if (want < min)
		want = min;
	while (env && size / 2 >= want)
		size >>= 1;
	return size;
}

void times__configure(struct cpu_sampler *skel, const struct sampler_opts *o)
{
	int ncpus;

	if (!o->timestamps)
		return;
	ncpus = libbpf_num_possible_cpus();
	skel->rodata->want_timestamps = 1;
	bpf_map__set_max_entries(skel->maps.times,
				 times__ring_cap(times__ring_bytes(
					 o->freq_hz, ncpus > 0 ? (__u32)ncpus : 1, o->off_cpu)));
}

struct sampler_times *times__new(void)
{
	return calloc(1, sizeof(struct sampler_times));
}

void times__free(struct sampler_times *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	free(t->ev);
	free(t->ready);
	free(t->tv);
	free(t->rec);
	free(t->mem);
	free(t->mkeys);
	free(t->mtv);
	free(t);
}

/* A sampled allocation's event into t->mem. */
static int add_mem(struct sampler_times *t, const void *data)
{
	struct times_mem e;
	struct held_mem *h;

	memcpy(&e, data, sizeof(e));
	if (!(e.ev.flags & PROFCAP_TIMES_MEM))
		return -EINVAL;
	t->st.mem_events++;
	if (array__grow((void **)&t->mem, &t->memcap, t->nmem, sizeof(*t->mem), 256,
			SAMPLER_TIMES_MEM_MAX)) {
		t->st.mem_dropped++;
		return -E2BIG;
	}
	h = &t->mem[t->nmem++];
	memcpy(h->key, e.key, sizeof(h->key));
	h->tv = (struct memory_time){
		.time_ns = e.ev.ts, .bytes = e.bytes, .objs = e.objs, .cpu = e.ev.cpu};
	return 0;
}

int times__add_event(struct sampler_times *t, const void *data, size_t size)
{
	struct times_wait w = {0};
	struct held *h;

	if (size == sizeof(struct times_mem))
		return add_mem(t, data);
	if (size == sizeof(struct times_event))
		memcpy(&w.ev, data, sizeof(w.ev));
	else if (size == sizeof(struct times_wait))
		memcpy(&w, data, sizeof(w));
	else
		return -EINVAL;
	if ((size == sizeof(w)) != !!(w.ev.flags & PROFCAP_TIMES_WAIT))
		return -EINVAL;
	t->st.events++;
	if (array__grow((void **)&t->ev, &t->evcap, t->nev, sizeof(*t->ev), 1024,
			SAMPLER_TIMES_MAX)) {
		t->st.dropped++;
		return -E2BIG;
	}
	h = &t->ev[t->nev++];
	h->key = w.ev.key;
	h->ts = w.ev.ts;
	h->ns = w.ns;
	h->cpu = w.ev.cpu;
	h->flags = w.ev.flags;
	return 0;
}

static int ring_event(void *ctx, void *data, size_t size)
{
	times__add_event(ctx, data, size); /* a bad size or past the cap: counted */
	return 0;
}

int times__read_ring(struct sampler_times *t, struct cpu_sampler *skel)
{
	int n;

	if (!t->rb) {
		t->rb = ring_buffer__new(bpf_map__fd(skel->maps.times), ring_event, t, NULL);
		if (!t->rb) {
			int err = -errno;

			if (!t->warned)
				pr_warn("cannot read the timestamps ring (%s): samples carry no "
					"time; check the memlock limit (ulimit -l)",
					strerror(-err));
			t->warned = true;
			return err;
		}
	}
	n = ring_buffer__consume(t->rb);
	return n < 0 ? n : 0;
}

/* Order: key hash, kind (CPU samples before waits), time. */
static int held_cmp(const void *a, const void *b)
{
	const struct held *x = a, *y = b;
	__u32 kx = x->flags & PROFCAP_TIMES_WAIT, ky = y->flags & PROFCAP_TIMES_WAIT;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (kx != ky)
		return kx < ky ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return 0;
}

int times__prepare(struct sampler_times *t, __u32 gen1, __s64 mono_to_real)
{
	size_t i, keep = 0;
	int err;

	t->nready = 0;
	t->drain_real_ns = (__u64)((__s64)clock__mono_ns() + mono_to_real);
	if (!t->nev)
		return 0;
	err = array__grow((void **)&t->ready, &t->readycap, t->nev - 1, sizeof(*t->ready), 1024,
			  SAMPLER_TIMES_MAX);
	err = err
		      ?: array__grow((void **)&t->tv, &t->tvcap, t->nev - 1, sizeof(*t->tv), 1024,
				     SAMPLER_TIMES_MAX);
	if (err)
		return err;
	/* Split: this generation's to @ready, the other's stay (in order). */
	for (i = 0; i < t->nev; i++) {
		if ((t->ev[i].flags & PROFCAP_TIMES_GEN) == (gen1 & 1))
			t->ready[t->nready++] = t->ev[i];
		else
			t->ev[keep++] = t->ev[i];
	}
	t->nev = keep;
	qsort(t->ready, t->nready, sizeof(*t->ready), held_cmp);
	for (i = 0; i < t->nready; i++) {
		const struct held *h = &t->ready[i];

		t->tv[i] = (struct sampler_time){
			.time_ns = (__u64)((__s64)h->ts + mono_to_real),
			.value = h->flags & PROFCAP_TIMES_WAIT ? h->ns : 1,
			.cpu = h->cpu,
		};
	}
	return 0;
}

/* @r's occurrences @occ (@n of them, borrowed) and what they miss of its
 * value, at the drain's time (SAMPLER_TIME_LOST), into t->rec. */
static void join_rest(struct sampler_times *t, struct sampler_record *r,
		      const struct sampler_time *occ, size_t n)
{
	__u64 sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += occ[i].value;
	if (sum >= r->count)
		return; /* all timed */
	if (array__grow((void **)&t->rec, &t->reccap, n, sizeof(*t->rec), 64, SAMPLER_TIMES_MAX))
		return; /* the rest stays without time */
	if (n)
		memcpy(t->rec, occ, n * sizeof(*occ));
	t->rec[n] = (struct sampler_time){
		.time_ns = t->drain_real_ns, .value = r->count - sum, .flags = SAMPLER_TIME_LOST};
	r->times = t->rec;
	r->ntimes = (__u32)(n + 1);
}

void times__join(struct sampler_times *t, __u64 hash, struct sampler_record *r)
{
	__u32 kind = r->kind == SAMPLER_KIND_OFF_CPU ? PROFCAP_TIMES_WAIT : 0;
	__u64 most = r->kind == SAMPLER_KIND_OFF_CPU ? r->switches : r->count;
	size_t lo = 0, hi = t->nready, end;

	r->times = NULL;
	r->ntimes = 0;
	/* First entry not below (hash, kind). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct held *h = &t->ready[mid];

		if (h->key < hash || (h->key == hash && (h->flags & PROFCAP_TIMES_WAIT) < kind))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < t->nready && t->ready[end].key == hash &&
		       (t->ready[end].flags & PROFCAP_TIMES_WAIT) == kind;
	     end++)
		;
	/* Never more occurrences than the record counts (a hash shared by two
	 * keys would give one the other's). */
	if (end - lo > most)
		end = lo + (size_t)most;
	if (end > lo) {
		r->times = t->tv + lo;
		r->ntimes = (__u32)(end - lo);
		t->st.joined += r->ntimes;
	}
	if (t->drain_real_ns)
		join_rest(t, r, r->times, r->ntimes);
}

__u64 times__sample_hash(const struct sample_key *k)
{
	return profcap_key_hash((const __u64 *)k, sizeof(*k) / sizeof(__u64));
}

__u64 times__wait_hash(const struct offcpu_key *k)
{
	return profcap_key_hash((const __u64 *)k, sizeof(*k) / sizeof(__u64));
}

/* Order: key words, then time. */
static int held_mem_cmp(const void *a, const void *b)
{
	const struct held_mem *x = a, *y = b;
	int c = memcmp(x->key, y->key, sizeof(x->key));

	if (c)
		return c;
	if (x->tv.time_ns != y->tv.time_ns)
		return x->tv.time_ns < y->tv.time_ns ? -1 : 1;
	return 0;
}

size_t times__mem_prepare(struct sampler_times *t, __s64 mono_to_real, const __u64 **keys,
			  const struct memory_time **tv)
{
	size_t i, n = t->nmem;

	*keys = NULL;
	*tv = NULL;
	if (!n)
		return 0;
	if (array__grow((void **)&t->mkeys, &t->mkeycap, n * PROFCAP_TIMES_MEM_KEY_WORDS - 1,
			sizeof(*t->mkeys), 1024,
			(size_t)SAMPLER_TIMES_MEM_MAX * PROFCAP_TIMES_MEM_KEY_WORDS) ||
	    array__grow((void **)&t->mtv, &t->mtvcap, n - 1, sizeof(*t->mtv), 256,
			SAMPLER_TIMES_MEM_MAX)) {
		t->st.mem_dropped += n; /* cannot sort them: let them go */
		t->nmem = 0;
		return 0;
	}
	qsort(t->mem, n, sizeof(*t->mem), held_mem_cmp);
	for (i = 0; i < n; i++) {
		memcpy(t->mkeys + i * PROFCAP_TIMES_MEM_KEY_WORDS, t->mem[i].key,
		       sizeof(t->mem[i].key));
		t->mtv[i] = t->mem[i].tv;
		t->mtv[i].time_ns = (__u64)((__s64)t->mtv[i].time_ns + mono_to_real);
		t->mtv[i].objs = (t->mtv[i].objs + (1u << (MEM_OBJ_BITS - 1))) >> MEM_OBJ_BITS;
	}
	*keys = t->mkeys;
	*tv = t->mtv;
	return n;
}

void times__mem_done(struct sampler_times *t)
{
	t->nmem = 0;
}

void times__finish(struct sampler_times *t)
{
	t->st.unmatched = t->st.events - t->st.dropped - t->st.joined - t->nev;
	t->nready = 0;
}

void times__stats(const struct sampler_times *t, const struct cpu_sampler *skel,
		  struct sampler_times_stats *out)
{
	*out = t ? t->st : (struct sampler_times_stats){0};
	if (skel && skel->bss) {
		out->ring_lost = skel->bss->times_lost;
		out->ring_mem_lost = skel->bss->times_mem_lost;
	}
}

void sampler__times_stats(struct sampler *s, struct sampler_times_stats *out)
{
	/* before the hand-over the loader thread has the full object */
	bool on = s && !s->l.on && s->skel->rodata->want_timestamps;

	times__stats(on ? s->d.scratch.times : NULL, on ? s->skel : NULL, out);
}

_Static_assert(sizeof(struct sample_key) % sizeof(__u64) == 0, "profcap_key_hash: whole words");
_Static_assert(sizeof(struct offcpu_key) % sizeof(__u64) == 0, "profcap_key_hash: whole words");
