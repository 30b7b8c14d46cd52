/* test_times.c - per-sample times without the kernel: the key hash the BPF
 * programs and user space share (stable, whole-key, never 0), events
 * joined to drained records by hash, kind and generation (the other
 * generation's kept for the next drain, never more occurrences than a
 * record counts, bad events refused), the ring's size bounds; and ingest
 * adding each occurrence with its time and CPU (also after a record was
 * deferred), the rest untimed and counted; occurrences whose events were
 * lost joined at the drain's time and marked. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "timestamps.h"
#include "capture/ingest.h"
#include "collect/sampler_times.h"
#include "model/profile.h"
#include "symbolize/symbolizer.h"
#include "test.h"

static struct sample_key skey(__u32 tid, __u64 ustack)
{
	struct sample_key k;

	memset(&k, 0, sizeof(k));
	k.tgid = 100;
	k.tid = tid;
	k.ustack = ustack;
	return k;
}

static void put(struct sampler_times *t, __u64 key, __u64 ts, __u32 cpu, __u32 gen1)
{
	struct times_event ev = {.key = key, .ts = ts, .cpu = cpu, .flags = gen1};

	CHECK(!times__add_event(t, &ev, sizeof(ev)));
}

static void put_wait(struct sampler_times *t, __u64 key, __u64 ts, __u64 ns, __u32 gen1)
{
	struct times_wait w = {
		.ev = {.key = key, .ts = ts, .cpu = 1, .flags = gen1 | PROFCAP_TIMES_WAIT},
		.ns = ns};

	CHECK(!times__add_event(t, &w, sizeof(w)));
}

TEST(key_hash_stable_and_whole_key)
{
	struct sample_key a = skey(1, 0x1234), b;
	const __u64 w[2] = {1, 2};
	__u64 h = times__sample_hash(&a);

	/* The function both sides run: a fixed result for fixed words (worked
	 * out apart from this code, by its description), so a
	 * change to it is seen here (the BPF side is the same code). */
	CHECK_EQ_U64(profcap_key_hash(w, 2), 0x1595bbd1d254b8aeull);
	CHECK(h == profcap_key_hash((const __u64 *)&a, sizeof(a) / 8));
	CHECK(h != 0);
	/* every part of the key counts, the last bytes too */
	b = a;
	b.attrs[sizeof(b.attrs) - 1] = 1;
	CHECK(times__sample_hash(&b) != h);
	b = a;
	b.tid = 2;
	CHECK(times__sample_hash(&b) != h);
	b = a;
	CHECK(times__sample_hash(&b) == h);
	/* order matters */
	{
		const __u64 x[2] = {2, 1};

		CHECK(profcap_key_hash(x, 2) != profcap_key_hash(w, 2));
	}
}

TEST(join_by_hash_kind_and_generation)
{
	struct sampler_times *t = times__new();
	struct sample_key k1 = skey(1, 11), k2 = skey(2, 22);
	struct offcpu_key ok;
	struct sampler_record r = {.kind = SAMPLER_KIND_CPU, .count = 3};
	struct sampler_times_stats st;
	__u64 h1 = times__sample_hash(&k1), h2 = times__sample_hash(&k2), ho;

	CHECK(t != NULL);
	if (!t)
		return;
	memset(&ok, 0, sizeof(ok));
	ok.tgid = 100;
	ok.tid = 1;
	ho = times__wait_hash(&ok);
	/* generation 0, out of order; one of generation 1 among them */
	put(t, h1, 3000, 1, 0);
	put(t, h1, 1000, 0, 0);
	put(t, h2, 2000, 1, 0);
	put(t, h1, 5000, 0, 1);
	put(t, h1, 2000, 0, 0);
	put_wait(t, ho, 500, 700, 0);
	CHECK(!times__prepare(t, 0, 1000000));
	times__join(t, h1, &r);
	CHECK(r.ntimes == 3 && r.times != NULL);
	if (r.ntimes == 3) {
		CHECK_EQ_U64(r.times[0].time_ns, 1001000);
		CHECK_EQ_U64(r.times[1].time_ns, 1002000);
		CHECK_EQ_U64(r.times[2].time_ns, 1003000);
		CHECK(r.times[0].cpu == 0 && r.times[2].cpu == 1);
		CHECK(r.times[0].value == 1);
	}
	/* never more than the record counts */
	r.count = 1;
	times__join(t, h2, &r);
	CHECK(r.ntimes == 1 && r.times[0].cpu == 1);
	/* a CPU record does not take a wait's events, and the other way round:
	 * what lost its events is one occurrence at the drain's time */
	times__join(t, ho, &r);
	CHECK(r.ntimes == 1 && r.times[0].flags == SAMPLER_TIME_LOST && r.times[0].value == 1);
	CHECK(r.times[0].time_ns > 1000000);
	r = (struct sampler_record){.kind = SAMPLER_KIND_OFF_CPU, .count = 700, .switches = 1};
	times__join(t, ho, &r);
	CHECK(r.ntimes == 1 && r.times[0].value == 700 && r.times[0].time_ns == 1000500);
	CHECK(r.times[0].flags == 0);
	times__join(t, 12345, &r); /* a hash no event has: its events were lost */
	CHECK(r.ntimes == 1 && r.times[0].value == 700 && r.times[0].flags == SAMPLER_TIME_LOST);
	times__finish(t);
	times__stats(t, NULL, &st);
	CHECK_EQ_U64(st.events, 6);
	CHECK_EQ_U64(st.joined, 5);
	CHECK_EQ_U64(st.unmatched, 0);
	/* the next drain takes the other generation's */
	put(t, h2, 9000, 0, 0); /* a late one of 0: never joined, counted */
	CHECK(!times__prepare(t, 1, 0));
	r = (struct sampler_record){.kind = SAMPLER_KIND_CPU, .count = 5};
	times__join(t, h1, &r);
	CHECK(r.ntimes == 2 && r.times[0].time_ns == 5000 && !r.times[0].flags);
	/* the 4 whose events were lost, after the others */
	CHECK(r.ntimes == 2 && r.times[1].flags == SAMPLER_TIME_LOST && r.times[1].value == 4);
	CHECK(r.ntimes == 2 && r.times[1].time_ns >= r.times[0].time_ns);
	times__finish(t);
	CHECK(!times__prepare(t, 0, 0));
	times__finish(t);
	times__stats(t, NULL, &st);
	CHECK_EQ_U64(st.joined, 6);
	CHECK_EQ_U64(st.unmatched, 1);
	times__free(t);
}

TEST(bad_events_refused)
{
	struct sampler_times *t = times__new();
	struct times_event ev = {.key = 1, .flags = PROFCAP_TIMES_WAIT};
	char junk[5] = {0};

	CHECK(t != NULL);
	if (!t)
		return;
	CHECK(times__add_event(t, junk, sizeof(junk)) == -EINVAL);
	/* the size says CPU sample, the flags say wait */
	CHECK(times__add_event(t, &ev, sizeof(ev)) == -EINVAL);
	times__free(t);
	times__free(NULL);
}

TEST(held_events_capped)
{
	struct sampler_times *t = times__new();
	struct times_event ev = {.key = 7};
	struct sampler_times_stats st;
	size_t i;
	int err = 0;

	CHECK(t != NULL);
	if (!t)
		return;
	for (i = 0; i < SAMPLER_TIMES_MAX + 10 && !err; i++)
		err = times__add_event(t, &ev, sizeof(ev));
	CHECK(err == -E2BIG);
	times__stats(t, NULL, &st);
	CHECK_EQ_U64(st.dropped, 1);
	CHECK_EQ_U64(st.events, SAMPLER_TIMES_MAX + 1);
	times__free(t);
}

TEST(ring_size_bounded)
{
	__u32 small = times__ring_bytes(99, 2, false), big = times__ring_bytes(10000, 4096, true);
	__u32 mid = times__ring_bytes(999, 64, false);

	CHECK(small == SAMPLER_TIMES_RING_MIN);
	CHECK(big == SAMPLER_TIMES_RING_MAX);
	CHECK((mid & (mid - 1)) == 0);
	/* two seconds of events fit */
	CHECK((__u64)mid >= 999ull * 64 * 2 * (sizeof(struct times_event) + 8));
	CHECK(times__ring_bytes(99, 0, false) == SAMPLER_TIMES_RING_MIN);
}

__attribute__((noinline)) static int timed_leaf(int x)
{
	return x * 5 + 1;
}

static __u64 ustack[1];

/* The occurrences of the only sample of process entry 0 with CPU @cpu:
 * their count, and the sum of their values in *@sum. */
static size_t occurrences(const struct profile *p, __u32 type, __u32 cpu, __u64 *first, __u64 *sum)
{
	size_t proc, i, n = 0, k, total = 0;

	*sum = 0;
	for (proc = 0; proc < profile__process_count(p); proc++) {
		if (profile__process_type(p, proc) != type)
			continue;
		for (i = 0; i < profile__sample_count(p, proc); i++) {
			const struct profile_occurrence *o = profile__sample_times(p, proc, i, &n);
			__u32 c;

			if (!o || profile__sample_cpu(p, profile__sample(p, proc, i), &c) ||
			    c != cpu)
				continue;
			*first = o[0].time_ns;
			for (k = 0; k < n; k++)
				*sum += o[k].value;
			total += n;
		}
	}
	return total;
}

TEST(ingest_adds_occurrences_with_cpu)
{
	static struct ingest in;
	struct symbolizer *sym = symbolizer__new("/proc");
	struct profile *prof = profile__new();
	const struct sampler_time tv[3] = {
		{.time_ns = 1000, .value = 1, .cpu = 0},
		{.time_ns = 2000, .value = 1, .cpu = 1},
		{.time_ns = 3000, .value = 1, .cpu = 1},
	};
	const struct sampler_time wv[1] = {{.time_ns = 500, .value = 400, .cpu = 1}};
	struct sampler_time copy[3];
	__u64 kstack[1] = {0xffffffff81000010ull};
	struct sampler_record r = {
		.kind = SAMPLER_KIND_CPU,
		.tgid = (__u32)getpid(),
		.tid = (__u32)getpid(),
		.ustack = ustack,
		.nustack = 1,
		.count = 5,
	};
	__u64 first = 0, sum = 0;

	CHECK(timed_leaf(1) == 6);
	CHECK(sym && prof);
	if (!sym || !prof)
		goto out;
	memset(&in, 0, sizeof(in));
	in.sym = sym;
	in.timestamps = true;
	ingest__window(&in, prof);
	CHECK(!symbolizer__add_process(sym, getpid()));
	ustack[0] = (__u64)(uintptr_t)&timed_leaf + 4;
	strcpy(r.comm, "test_times");
	/* kernel frames: deferred to the flush, the times copied */
	memcpy(copy, tv, sizeof(copy));
	r.times = copy;
	r.ntimes = 3;
	r.kstack = kstack;
	r.nkstack = 1;
	CHECK(!ingest__record(&in, &r));
	CHECK(in.ndefer == 1);
	memset(copy, 0, sizeof(copy)); /* the drain's buffers are reused */
	/* an off-CPU record: 2 waits, one timed */
	r = (struct sampler_record){.kind = SAMPLER_KIND_OFF_CPU,
				    .tgid = (__u32)getpid(),
				    .tid = (__u32)getpid(),
				    .ustack = ustack,
				    .nustack = 1,
				    .count = 1000,
				    .switches = 2,
				    .times = wv,
				    .ntimes = 1};
	strcpy(r.comm, "test_times");
	CHECK(!ingest__record(&in, &r));
	CHECK(!ingest__flush(&in));
	/* 5 samples: 3 timed (1 on CPU 0, 2 on CPU 1), 2 without time */
	CHECK_EQ_U64(profile__type_total(prof, 0), 5);
	CHECK(occurrences(prof, 0, 0, &first, &sum) == 1 && first == 1000 && sum == 1);
	CHECK(occurrences(prof, 0, 1, &first, &sum) == 2 && first == 2000 && sum == 2);
	/* the wait: 400 ns timed, 600 ns in one untimed wait */
	CHECK(occurrences(prof, 1, 1, &first, &sum) == 1 && first == 500 && sum == 400);
	CHECK_EQ_U64(profile__time_count(prof), 4);
	CHECK_EQ_U64(in.c.timed, 4);
	CHECK_EQ_U64(in.c.untimed, 2 + 1);
out:
	ingest__release(&in);
	profile__free(prof);
	symbolizer__free(sym);
}

/* Whether sample @s of @p carries PROFILE_ATTR_TIME_LOST. */
static bool time_lost(const struct profile *p, const struct profile_sample_entry *s)
{
	__u32 i;

	for (i = 0; i < s->nattrs && i < PROFILE_SAMPLE_MAX_ATTRS; i++)
		if (!strcmp(profile__string(p, profile__attr(p, s->attrs[i])->key, NULL),
			    PROFILE_ATTR_TIME_LOST))
			return true;
	return false;
}

TEST(ingest_times_lost_at_the_drain)
{
	static struct ingest in;
	struct symbolizer *sym = symbolizer__new("/proc");
	struct profile *prof = profile__new();
	const struct sampler_time tv[2] = {
		{.time_ns = 1000, .value = 1, .cpu = 1},
		{.time_ns = 9000, .value = 6, .flags = SAMPLER_TIME_LOST},
	};
	struct sampler_record r = {
		.kind = SAMPLER_KIND_CPU,
		.tgid = (__u32)getpid(),
		.tid = (__u32)getpid(),
		.ustack = ustack,
		.nustack = 1,
		.count = 7,
		.times = tv,
		.ntimes = 2,
	};
	size_t i, n, lost = 0, untimed = 0;

	CHECK(sym && prof);
	if (!sym || !prof)
		goto out;
	memset(&in, 0, sizeof(in));
	in.sym = sym;
	in.timestamps = true;
	ingest__window(&in, prof);
	CHECK(!symbolizer__add_process(sym, getpid()));
	ustack[0] = (__u64)(uintptr_t)&timed_leaf + 4;
	strcpy(r.comm, "test_times");
	CHECK(!ingest__record(&in, &r));
	CHECK(!ingest__flush(&in));
	/* every sample timed (the OTLP shapes); the lost 6 at the drain's
	 * time, marked, without a CPU, and counted untimed */
	CHECK_EQ_U64(profile__type_total(prof, 0), 7);
	for (i = 0; profile__process_count(prof) && i < profile__sample_count(prof, 0); i++) {
		const struct profile_sample_entry *s = profile__sample(prof, 0, i);
		const struct profile_occurrence *o = profile__sample_times(prof, 0, i, &n);
		__u32 c;

		untimed += !o;
		if (time_lost(prof, s)) {
			lost++;
			CHECK(o && n == 1 && o[0].time_ns == 9000 && o[0].value == 6);
			CHECK(profile__sample_cpu(prof, s, &c) != 0);
		}
	}
	CHECK(lost == 1 && untimed == 0);
	CHECK_EQ_U64(in.c.timed, 1);
	CHECK_EQ_U64(in.c.untimed, 6);
out:
	ingest__release(&in);
	profile__free(prof);
	symbolizer__free(sym);
}

int main(void)
{
	RUN(key_hash_stable_and_whole_key);
	RUN(join_by_hash_kind_and_generation);
	RUN(bad_events_refused);
	RUN(held_events_capped);
	RUN(ring_size_bounded);
	RUN(ingest_adds_occurrences_with_cpu);
	RUN(ingest_times_lost_at_the_drain);
	return TEST_DONE();
}
