/* sampler_drain.c - the drain (main thread): switch the BPF programs to the
 * other generation, take every count of the idle one, hand each as a
 * record with its stacks to the caller (collect/drain.h), empty its stack
 * tables; then the late walks that can be finished. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "collect/late.h"
#include "collect/sampler_int.h"
#include "collect/sampler_times.h"
#include "collect/sampler_v8.h"
#include "util/array.h"
#include "util/clock.h"

/* Time for programs that read the old generation number to finish. A
 * perf_event program runs for microseconds with preemption disabled. */
#define SAMPLER_GEN_SETTLE_NS 2000000L
/* Entries a drain takes per bpf() call (room kept free in its arrays). */
#define SAMPLER_BATCH 256u
/* Stack entries dropped per bpf() call (the buffer grows for a longer
 * hash bucket). */
#define SAMPLER_STACK_BATCH 16u

/* Room in @b for @n entries (@ksz and @vsz bytes each), at most @max:
 * both arrays double. 0, -E2BIG past @max, or -ENOMEM. */
static int buf_grow(struct sampler_take_buf *b, size_t n, size_t ksz, size_t vsz, size_t first,
		    size_t max)
{
	int err = array__grow(&b->keys, &b->kcap, n - 1, ksz, first, max);

	return err ?: array__grow(&b->vals, &b->vcap, n * vsz - 1, 1, first * vsz, max * vsz);
}

/* Entries @b holds room for. */
static size_t buf_room(const struct sampler_take_buf *b, size_t vsz)
{
	return b->kcap < b->vcap / vsz ? b->kcap : b->vcap / vsz;
}

static void buf_free(struct sampler_take_buf *b)
{
	free(b->keys);
	free(b->vals);
	*b = (struct sampler_take_buf){0};
}

/* A hash map taken apart in batches: BPF_MAP_LOOKUP_AND_DELETE_BATCH (Linux
 * >= 5.6, below the 5.8 profcap needs) reads and deletes a buffer's worth
 * of entries per bpf() call, where walking it costs three calls an entry
 * (get_next_key, lookup, delete). */
struct take {
	int fd;
	bool started; /* @cursor holds the next bucket */
	bool done;    /* the map is empty */
	__u32 cursor;
};

/* Read and delete the next entries of @t's map: up to *@count keys and
 * values into @keys and @vals; *@count gets how many. 0 (t->done set once
 * the last entries are taken), -ENOSPC when one bucket holds more entries
 * than *@count (nothing taken: call again with more room), or -errno. */
static int take_next(struct take *t, void *keys, void *vals, __u32 *count)
{
	__u32 next = 0;
	int err;

	err = bpf_map_lookup_and_delete_batch(t->fd, t->started ? &t->cursor : NULL, &next, keys,
					      vals, count, NULL);
	if (err == -ENOENT) {
		t->done = true; /* *count: the last entries */
		return 0;
	}
	if (err) {
		*count = 0;
		return err;
	}
	t->cursor = next;
	t->started = true;
	return 0;
}

/* Every entry of hash map @m read and deleted into @b; *@n gets the count.
 * The map's size bounds the arrays. 0 or -errno. */
static int take_all(const struct bpf_map *m, struct sampler_take_buf *b, __u32 *n)
{
	size_t ksz = bpf_map__key_size(m), vsz = bpf_map__value_size(m);
	size_t max = (size_t)bpf_map__max_entries(m) + 2 * SAMPLER_BATCH;
	struct take t = {.fd = bpf_map__fd(m)};
	__u32 count;
	int err;

	*n = 0;
	while (!t.done) {
		if (buf_room(b, vsz) - *n < SAMPLER_BATCH &&
		    (err = buf_grow(b, *n + SAMPLER_BATCH, ksz, vsz, 1024, max)))
			return err;
		count = (__u32)(buf_room(b, vsz) - *n);
		err = take_next(&t, (char *)b->keys + (size_t)*n * ksz,
				(char *)b->vals + (size_t)*n * vsz, &count);
		if (err == -ENOSPC) /* a bucket longer than the room left */
			err = buf_grow(b, buf_room(b, vsz) + 1, ksz, vsz, 1024, max);
		else if (!err)
			*n += count;
		if (err)
			return err;
	}
	return 0;
}

/* Empty the idle generation's stack table @m in batches of
 * SAMPLER_STACK_BATCH, the values read only to be dropped (a copy is
 * cheaper than a system call); the buffer doubles for a hash bucket that
 * holds more (the map's size bounds it). 0 or -errno. */
static int clear_stacks(struct sampler *s, const struct bpf_map *m)
{
	struct sampler_take_buf *b = &s->d.stacks;
	size_t vsz = bpf_map__value_size(m), max = bpf_map__max_entries(m) + SAMPLER_STACK_BATCH;
	struct take t = {.fd = bpf_map__fd(m)};
	__u32 count;
	int err = buf_grow(b, SAMPLER_STACK_BATCH, sizeof(__u64), vsz, SAMPLER_STACK_BATCH, max);

	while (!err && !t.done) {
		count = (__u32)buf_room(b, vsz);
		err = take_next(&t, b->keys, b->vals, &count);
		if (err == -ENOSPC) /* a bucket longer than the buffer */
			err = buf_grow(b, buf_room(b, vsz) + 1, sizeof(__u64), vsz,
				       SAMPLER_STACK_BATCH, max);
	}
	return err;
}

/* The idle generation's stack maps as a drain_stacks source. */
struct gen_maps {
	int sfd, efd;
};

static int gen_stack(void *ctx, __u64 hash, struct stack_trace *out)
{
	const struct gen_maps *g = ctx;

	return bpf_map_lookup_elem(g->sfd, &hash, out) ? -ENOENT : 0;
}

static int gen_tail(void *ctx, __u64 hash, __u64 *tail)
{
	const struct gen_maps *g = ctx;

	return bpf_map_lookup_elem(g->efd, &hash, tail) ? -ENOENT : 0;
}

/* Look up the stacks of @r by hash and hand it to @fn. */
static int emit_record(struct sampler *s, const struct drain_stacks *src,
		       struct sampler_record *r, __u64 ustack, __u64 kstack, __u64 pystack,
		       __u64 rtstack, sampler_record_fn fn, void *ctx)
{
	struct stack_trace js; /* borrowed by @r for the callback only */

	s->d.stacks_missing += drain__stacks(&s->d.scratch, src, r, ustack, kstack);
	s->d.stacks_missing += drain__pystack(&s->d.scratch, src, r, pystack);
	s->d.stacks_missing += drain__rtstack(&js, src, r, rtstack);
	return fn(ctx, r);
}

/* The CPU counts of the idle generation @idle: take (read and delete), emit. */
static int drain_cpu(struct sampler *s, __u32 idle, const struct drain_stacks *src,
		     sampler_record_fn fn, void *ctx)
{
	const struct sample_key *keys;
	const __u64 *vals;
	__u32 n = 0, i;
	int err;

	err = take_all(idle ? s->skel->maps.counts1 : s->skel->maps.counts0, &s->d.counts, &n);
	keys = s->d.counts.keys;
	vals = s->d.counts.vals;
	for (i = 0; i < n && !err; i++) {
		struct sampler_record r;

		drain__cpu_record(&keys[i], vals[i], &r);
		if (s->d.scratch.times)
			times__join(s->d.scratch.times, times__sample_hash(&keys[i]), &r);
		err = emit_record(s, src, &r, keys[i].ustack, keys[i].kstack, keys[i].pystack,
				  keys[i].rtstack, fn, ctx);
	}
	return err;
}

/* The off-CPU counters of the idle generation: take (read and delete), emit. */
static int drain_offcpu(struct sampler *s, __u32 idle, const struct drain_stacks *src,
			sampler_record_fn fn, void *ctx)
{
	const struct bpf_map *m =
		idle ? s->skel->maps.offcpu_counts1 : s->skel->maps.offcpu_counts0;
	const struct offcpu_key *keys;
	const struct offcpu_val *vals;
	__u32 n = 0, i;
	int err;

	err = take_all(m, &s->d.ocounts, &n);
	keys = s->d.ocounts.keys;
	vals = s->d.ocounts.vals;
	for (i = 0; i < n && !err; i++) {
		struct sampler_record r;

		drain__offcpu_record(&keys[i], &vals[i], &r);
		if (s->d.scratch.times)
			times__join(s->d.scratch.times, times__wait_hash(&keys[i]), &r);
		err = emit_record(s, src, &r, keys[i].ustack, keys[i].kstack, keys[i].pystack,
				  keys[i].rtstack, fn, ctx);
	}
	return err;
}

/* The late-walking queue: what has tables, and everything once stopped
 * (after what the ring still holds, and the table build under way). */
static int drain_late(struct sampler *s, sampler_record_fn fn, void *ctx)
{
	const struct timespec tick = {0, 5000000};
	struct late_tables t;
	int i;

	if (!s->late_on)
		return 0;
	tables__late(s, &t);
	if (s->halted) {
		if (!s->nt.on)
			ring_buffer__consume(s->nt.lrb);
		for (i = 0; i < 100 && s->b.on && late__pending(s->late); i++) {
			if (!builder__busy(s))
				break;
			nanosleep(&tick, NULL);
		}
	}
	if (!late__pending(s->late))
		return 0;
	return late__flush(s->late, &t, clock__mono_ns(), s->halted, fn, ctx);
}

/* Switch the programs to the other generation; the idle one's number. */
static __u32 switch_generation(struct sampler *s)
{
	const struct timespec settle = {0, SAMPLER_GEN_SETTLE_NS};
	__u32 idle = drain__idle(s->skel->bss->gen);
	__u64 mem;

	__atomic_store_n(&s->skel->bss->gen, idle ^ 1, __ATOMIC_SEQ_CST);
	nanosleep(&settle, NULL);
	s->d.drains++;
	/* the full generation is the high-water mark (before it is taken) */
	mem = tables__bpf_memory(s, s->skel, &s->d.fixed_mem);
	if (mem > s->d.bpf_peak)
		s->d.bpf_peak = mem;
	return idle;
}

/* The times of generation @idle's samples, from the ring, ready to join
 * (the first drain with timestamps on starts the join). A failure leaves
 * the records without times (logged once). */
static void drain_times(struct sampler *s, __u32 idle)
{
	struct sampler_times *t = s->d.scratch.times;

	if (!s->skel->rodata->want_timestamps)
		return;
	if (!t && !(t = s->d.scratch.times = times__new()))
		return;
	if (!times__read_ring(t, s->skel))
		times__prepare(t, idle, (__s64)(clock__ns(CLOCK_REALTIME) - clock__mono_ns()));
}

int sampler__drain(struct sampler *s, sampler_record_fn fn, void *ctx)
{
	struct gen_maps g;
	struct drain_stacks src = {.stack = gen_stack, .ctx = &g};
	__u32 idle;
	int err;

	/* A failed hand-over is logged; the start-up object's samples are
	 * still drained. */
	if (s->l.on)
		quick__wait(s, -1);
	idle = switch_generation(s);
	drain_times(s, idle);
	g.sfd = bpf_map__fd(idle ? s->skel->maps.stacks1 : s->skel->maps.stacks0);
	g.efd = bpf_map__fd(idle ? s->skel->maps.ustack_ext1 : s->skel->maps.ustack_ext0);
	if (s->t.unwind)
		src.tail = gen_tail;
	/* Every key and count first: the generation is idle, so nothing
	 * changes under us. */
	err = drain_cpu(s, idle, &src, fn, ctx);
	if (!err && offcpu__enabled(s->skel)) {
		offcpu__poll(s->skel, s->offcpu); /* a failure is warned, not fatal */
		err = drain_offcpu(s, idle, &src, fn, ctx);
	}
	if (!err)
		err = clear_stacks(s, idle ? s->skel->maps.stacks1 : s->skel->maps.stacks0);
	if (!err && s->t.unwind)
		err = clear_stacks(s, idle ? s->skel->maps.ustack_ext1 : s->skel->maps.ustack_ext0);
	if (s->d.scratch.times)
		times__finish(s->d.scratch.times);
	if (!err)
		err = drain_late(s, fn, ctx);
	return err;
}

void drainer__free(struct sampler *s)
{
	buf_free(&s->d.counts);
	buf_free(&s->d.ocounts);
	buf_free(&s->d.stacks);
	times__free(s->d.scratch.times);
	s->d.scratch.times = NULL;
}
