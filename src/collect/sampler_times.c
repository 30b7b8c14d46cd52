/* sampler_times.c - per-sample times joined to the drain's records (see
 * sampler_times.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "timestamps.h"
#include "collect/sampler_times.h"
#include "util/array.h"
#include "util/log.h"

/* An event as held: its generation and kind in @flags (PROFCAP_TIMES_*). */
struct held {
	__u64 key;
	__u64 ts;
	__u64 ns; /* a wait's duration; 0 for a CPU sample */
	__u32 cpu;
	__u32 flags;
};

struct sampler_times {
	struct ring_buffer *rb;
	bool warned;
	struct held *ev; /* read since the last prepare, and kept from it */
	size_t nev, evcap;
	struct held *ready;	 /* the prepared generation, sorted */
	struct sampler_time *tv; /* ... as the records see them, same order */
	size_t nready, readycap, tvcap;
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

void times__configure(struct cpu_sampler *skel, const struct sampler_opts *o)
{
	int ncpus;

	if (!o->timestamps)
		return;
	ncpus = libbpf_num_possible_cpus();
	skel->rodata->want_timestamps = 1;
	bpf_map__set_max_entries(
		skel->maps.times,
		times__ring_bytes(o->freq_hz, ncpus > 0 ? (__u32)ncpus : 1, o->off_cpu));
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
	free(t);
}

int times__add_event(struct sampler_times *t, const void *data, size_t size)
{
	struct times_wait w = {0};
	struct held *h;

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
	if (end == lo)
		return;
	/* Never more occurrences than the record counts (a hash shared by two
	 * keys would give one the other's). */
	if (end - lo > most)
		end = lo + (size_t)most;
	r->times = t->tv + lo;
	r->ntimes = (__u32)(end - lo);
	t->st.joined += r->ntimes;
}

__u64 times__sample_hash(const struct sample_key *k)
{
	return profcap_key_hash((const __u64 *)k, sizeof(*k) / sizeof(__u64));
}

__u64 times__wait_hash(const struct offcpu_key *k)
{
	return profcap_key_hash((const __u64 *)k, sizeof(*k) / sizeof(__u64));
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
	if (skel && skel->bss)
		out->ring_lost = skel->bss->times_lost;
}

_Static_assert(sizeof(struct sample_key) % sizeof(__u64) == 0, "profcap_key_hash: whole words");
_Static_assert(sizeof(struct offcpu_key) % sizeof(__u64) == 0, "profcap_key_hash: whole words");
