/* test_activity.c - the thread-activity view: per-interval states from CPU
 * samples and off-CPU waits, segments (waits win over sampled runs), spans
 * per thread, the caps and filters, and the text and JSON output of
 * `report --activity`. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/flamegraph.h"
#include "formats/flamegraph_activity.h"
#include "model/activity.h"
#include "model/profile.h"
#include "util/buf.h"
#include "test.h"

#define T0 1700000000000000000ull
#define MS 1000000ull

static const struct profile_mapping_desc map = {0x400000, 0x500000, 0, "/usr/bin/app", NULL, 0};
static const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};
static const struct profile_process_desc other = {200, "db", "/usr/bin/db", NULL, NULL};
static const struct profile_link span_a = {{0xaa, 1}, {0xa1}};
static const struct profile_link span_b = {{0xbb, 2}, {0xb2}};

static const struct profile_frame frames[2] = {
	{0x400100, &map, "work", PROFILE_FRAME_NATIVE, NULL, NULL, NULL, 0},
	{0x400010, &map, "main", PROFILE_FRAME_NATIVE, NULL, NULL, NULL, 0},
};

/* One CPU sample of @tid at T0 + @ms, in span @l (NULL: none). */
static int cpu(struct profile *p, const struct profile_process_desc *d, __u32 tid, const char *name,
	       long ms, const struct profile_link *l)
{
	struct profile_labels lab = {.has_cpu = true, .link = l};

	return profile__add_timed_sample(p, 0, d, tid, name, &lab, frames, 2, 1,
					 T0 + (__u64)ms * MS);
}

/* One off-CPU wait of @tid (@name) in @state from T0 + @ms for @len ms. */
static int wait_named(struct profile *p, __u32 tid, const char *name, const char *state, long ms,
		      long len, const struct profile_link *l)
{
	struct profile_labels lab = {.state = state, .has_cpu = true, .link = l};
	__u32 type;
	int err;

	err = profile__add_value_type(p, "off_cpu", "nanoseconds", "context_switch", "count", 1,
				      &type);
	return err
		       ?: profile__add_timed_sample(p, type, &app, tid, name, &lab, frames, 2,
						    (__u64)len * MS, T0 + (__u64)ms * MS);
}

static int wait(struct profile *p, __u32 tid, const char *state, long ms, long len,
		const struct profile_link *l)
{
	return wait_named(p, tid, tid == 8 ? "busy" : "worker", state, ms, len, l);
}

static struct profile *new_profile(void)
{
	struct profile *p = profile__new();
	struct profile_meta m = {.time_unix_nano = T0,
				 .duration_nano = 1000 * MS,
				 .period_ns = 10 * MS,
				 .profile_id = {1}};

	if (!p || profile__set_meta(p, &m)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

/* Thread 7 runs 300 ms and sleeps 200 ms, twice; its first run's middle
 * is in span A and its second sleep in span B. Thread 8 (the same
 * process) runs every other 10 ms and is runnable in between. */
static struct profile *rhythm(void)
{
	struct profile *p = new_profile();
	long t;

	if (!p)
		return NULL;
	for (t = 5; t < 300; t += 10)
		if (cpu(p, &app, 7, "worker", t, t >= 100 && t < 200 ? &span_a : NULL))
			goto fail;
	if (wait(p, 7, "interruptible", 300, 200, NULL))
		goto fail;
	for (t = 505; t < 800; t += 10)
		if (cpu(p, &app, 7, "worker", t, NULL))
			goto fail;
	if (wait(p, 7, "interruptible", 800, 200, &span_b))
		goto fail;
	for (t = 0; t < 1000; t += 20)
		if (cpu(p, &app, 8, "busy", t + 5, NULL) ||
		    wait(p, 8, "runnable", t + 10, 10, NULL))
			goto fail;
	return p;
fail:
	profile__free(p);
	return NULL;
}

static const struct activity_thread *thread(const struct activity *a, __s64 tid)
{
	size_t i;

	for (i = 0; i < a->nthreads; i++)
		if (a->threads[i].tid == tid)
			return &a->threads[i];
	return NULL;
}

TEST(states_per_interval)
{
	struct profile *p = rhythm();
	struct activity_opts o = {.interval_ns = 100 * MS};
	const struct activity_thread *t;
	struct activity *a = NULL;
	const __u64 *c;

	CHECK(p);
	CHECK_EQ_U64(activity__build(p, &o, &a), 0);
	CHECK_EQ_U64(a->period_ns, 10 * MS);
	CHECK_EQ_U64(a->start, T0);
	CHECK_EQ_U64(a->end, T0 + 1000 * MS);
	CHECK_EQ_U64(a->nintervals, 10);
	CHECK_EQ_U64(a->nthreads, 2);
	CHECK(a->has_wait && a->has_runnable);
	t = thread(a, 7);
	CHECK(t && !strcmp(t->name, "worker") && t->pid == 100);
	CHECK_EQ_U64(t->ns[ACTIVITY_RUNNING], 60 * 10 * MS);
	CHECK_EQ_U64(t->ns[ACTIVITY_INTERRUPTIBLE], 400 * MS);
	CHECK_EQ_U64(t->ns[ACTIVITY_UNKNOWN], 0);
	c = &t->cells[0];
	CHECK_EQ_U64(c[ACTIVITY_RUNNING], 100 * MS);
	c = &t->cells[3 * ACTIVITY__STATES];
	CHECK_EQ_U64(c[ACTIVITY_INTERRUPTIBLE], 100 * MS);
	CHECK_EQ_U64(c[ACTIVITY_RUNNING], 0);
	CHECK_EQ_U64(activity__dominant(a, t, 2), ACTIVITY_RUNNING);
	CHECK_EQ_U64(activity__dominant(a, t, 4), ACTIVITY_INTERRUPTIBLE);
	CHECK_EQ_U64(activity__dominant(a, t, 9), ACTIVITY_INTERRUPTIBLE);
	/* the preempted thread: half running, half runnable */
	t = thread(a, 8);
	CHECK(t);
	CHECK_EQ_U64(t->ns[ACTIVITY_RUNNING], 500 * MS);
	CHECK_EQ_U64(t->ns[ACTIVITY_RUNNABLE], 500 * MS);
	CHECK_EQ_U64(t->cells[5 * ACTIVITY__STATES + ACTIVITY_RUNNABLE], 50 * MS);
	activity__free(a);
	profile__free(p);
}

TEST(segments)
{
	struct profile *p = rhythm();
	struct activity_opts o = {0};
	const struct activity_thread *t;
	struct activity *a = NULL;

	CHECK(p);
	CHECK_EQ_U64(activity__build(p, &o, &a), 0);
	CHECK(!a->nintervals);
	t = thread(a, 7);
	CHECK(t && !t->cells);
	CHECK_EQ_U64(t->nsegs, 4);
	CHECK_EQ_U64(t->segs[0].state, ACTIVITY_RUNNING);
	CHECK_EQ_U64(t->segs[0].start, T0);
	CHECK_EQ_U64(t->segs[0].end, T0 + 300 * MS);
	CHECK_EQ_U64(t->segs[1].state, ACTIVITY_INTERRUPTIBLE);
	CHECK_EQ_U64(t->segs[1].start, T0 + 300 * MS);
	CHECK_EQ_U64(t->segs[1].end, T0 + 500 * MS);
	CHECK_EQ_U64(t->segs[2].start, T0 + 500 * MS);
	CHECK_EQ_U64(t->segs[3].end, T0 + 1000 * MS);
	/* thread 8 alternates every 10 ms */
	t = thread(a, 8);
	CHECK(t);
	CHECK_EQ_U64(t->nsegs, 100);
	CHECK_EQ_U64(t->segs[1].state, ACTIVITY_RUNNABLE);
	CHECK_EQ_U64(t->segs[1].start, T0 + 10 * MS);
	CHECK_EQ_U64(t->segs[2].start, T0 + 20 * MS);
	activity__free(a);
	profile__free(p);
}

TEST(wait_wins_over_samples)
{
	struct profile *p = new_profile();
	struct activity_opts o = {0};
	const struct activity_thread *t;
	struct activity *a = NULL;

	CHECK(p);
	/* samples at 0..40 cover [-5, 45); a wait measured at [32, 60) */
	CHECK_EQ_U64(cpu(p, &app, 7, "worker", 0, NULL), 0);
	CHECK_EQ_U64(cpu(p, &app, 7, "worker", 10, NULL), 0);
	CHECK_EQ_U64(cpu(p, &app, 7, "worker", 20, NULL), 0);
	CHECK_EQ_U64(cpu(p, &app, 7, "worker", 30, NULL), 0);
	CHECK_EQ_U64(cpu(p, &app, 7, "worker", 40, NULL), 0);
	CHECK_EQ_U64(wait(p, 7, "uninterruptible", 32, 28, NULL), 0);
	CHECK_EQ_U64(cpu(p, &app, 7, "worker", 62, NULL), 0);
	CHECK_EQ_U64(activity__build(p, &o, &a), 0);
	t = thread(a, 7);
	CHECK(t);
	CHECK_EQ_U64(t->nsegs, 3);
	CHECK_EQ_U64(t->segs[0].start, T0 - 5 * MS);
	CHECK_EQ_U64(t->segs[0].end, T0 + 32 * MS);
	CHECK_EQ_U64(t->segs[1].state, ACTIVITY_UNINTERRUPTIBLE);
	CHECK_EQ_U64(t->segs[2].state, ACTIVITY_RUNNING);
	CHECK_EQ_U64(t->segs[2].start, T0 + 60 * MS);
	CHECK_EQ_U64(t->segs[2].end, T0 + 67 * MS);
	/* the estimate of CPU time keeps every sample */
	CHECK_EQ_U64(t->ns[ACTIVITY_RUNNING], 60 * MS);
	activity__free(a);
	profile__free(p);
}

TEST(spans_where_they_ran)
{
	struct profile *p = rhythm();
	struct activity_opts o = {0};
	const struct activity_thread *t;
	const struct profile_link *l;
	struct activity *a = NULL;

	CHECK(p);
	CHECK_EQ_U64(activity__build(p, &o, &a), 0);
	t = thread(a, 7);
	CHECK(t);
	CHECK_EQ_U64(t->nspans, 2);
	l = profile__link(p, t->spans[0].link);
	CHECK(!memcmp(l, &span_a, sizeof(*l)));
	CHECK_EQ_U64(t->spans[0].start, T0 + 100 * MS);
	CHECK_EQ_U64(t->spans[0].end, T0 + 200 * MS);
	CHECK_EQ_U64(t->spans[0].cpu_ns, 100 * MS);
	CHECK_EQ_U64(t->spans[0].wait_ns, 0);
	l = profile__link(p, t->spans[1].link);
	CHECK(!memcmp(l, &span_b, sizeof(*l)));
	CHECK_EQ_U64(t->spans[1].start, T0 + 800 * MS);
	CHECK_EQ_U64(t->spans[1].end, T0 + 1000 * MS);
	CHECK_EQ_U64(t->spans[1].wait_ns, 200 * MS);
	CHECK_EQ_U64(thread(a, 8)->nspans, 0);
	activity__free(a);
	profile__free(p);
}

TEST(caps_and_filters)
{
	struct profile *p = rhythm();
	struct activity_opts o = {.max_threads = 1, .interval_ns = 100 * MS};
	struct activity *a = NULL;

	CHECK(p);
	CHECK_EQ_U64(cpu(p, &other, 9, "db", 400, NULL), 0);
	CHECK_EQ_U64(cpu(p, &app, 7, "worker", 1005, NULL), 0);
	/* the most active thread is kept, the others counted */
	CHECK_EQ_U64(activity__build(p, &o, &a), 0);
	CHECK_EQ_U64(a->nthreads, 1);
	CHECK_EQ_U64(a->threads[0].tid, 7);
	CHECK_EQ_U64(a->threads_hidden, 2);
	activity__free(a);
	o = (struct activity_opts){.filter_pid = true, .pid = 200};
	CHECK_EQ_U64(activity__build(p, &o, &a), 0);
	CHECK_EQ_U64(a->nthreads, 1);
	CHECK_EQ_U64(a->threads[0].tid, 9);
	CHECK_EQ_U64(a->threads_hidden, 0);
	activity__free(a);
	o = (struct activity_opts){.comm = "worker"};
	CHECK_EQ_U64(activity__build(p, &o, &a), 0);
	CHECK_EQ_U64(a->nthreads, 1);
	CHECK_EQ_U64(a->threads[0].tid, 7);
	activity__free(a);
	o = (struct activity_opts){.comm = "nobody"};
	CHECK_EQ_U64(activity__build(p, &o, &a), -ENODATA);
	CHECK(!a);
	/* too many intervals are refused */
	o = (struct activity_opts){.interval_ns = MS / 10};
	CHECK_EQ_U64(activity__build(p, &o, &a), -E2BIG);
	CHECK(!a);
	profile__free(p);
}

TEST(without_time)
{
	struct profile *p = new_profile();
	struct activity_opts o = {.interval_ns = 100 * MS};
	struct profile_labels lab = {0};
	struct activity *a = NULL;

	CHECK(p);
	CHECK_EQ_U64(profile__add_typed_sample(p, 0, &app, 7, "w", &lab, frames, 2, 5), 0);
	CHECK_EQ_U64(activity__build(p, &o, &a), -ENODATA);
	CHECK_EQ_U64(cpu(p, &app, 7, "w", 10, NULL), 0);
	CHECK_EQ_U64(activity__build(p, &o, &a), 0);
	CHECK_EQ_U64(a->untimed, 1);
	CHECK_EQ_U64(a->nthreads, 1);
	activity__free(a);
	activity__free(NULL);
	profile__free(p);
}

TEST(dominant_from_a_quarter)
{
	struct profile *p = new_profile();
	struct activity_opts o = {.interval_ns = 100 * MS};
	struct activity *a = NULL;

	CHECK(p);
	/* 100-200 ms: 2 samples (20 %); 200-300 ms: 3 (30 %); a wait at the end */
	CHECK_EQ_U64(cpu(p, &app, 7, "worker", 105, NULL), 0);
	CHECK_EQ_U64(cpu(p, &app, 7, "worker", 155, NULL), 0);
	CHECK_EQ_U64(cpu(p, &app, 7, "worker", 205, NULL), 0);
	CHECK_EQ_U64(cpu(p, &app, 7, "worker", 235, NULL), 0);
	CHECK_EQ_U64(cpu(p, &app, 7, "worker", 265, NULL), 0);
	CHECK_EQ_U64(wait(p, 7, "uninterruptible", 300, 100, NULL), 0);
	CHECK_EQ_U64(activity__build(p, &o, &a), 0);
	CHECK_EQ_U64(a->nintervals, 3);
	CHECK_EQ_U64(activity__dominant(a, &a->threads[0], 0), ACTIVITY_UNKNOWN);
	CHECK_EQ_U64(activity__dominant(a, &a->threads[0], 1), ACTIVITY_RUNNING);
	CHECK_EQ_U64(activity__dominant(a, &a->threads[0], 2), ACTIVITY_UNINTERRUPTIBLE);
	CHECK_EQ_U64(activity__dominant(a, &a->threads[0], 3), ACTIVITY__STATES);
	CHECK_EQ_U64(a->threads[0].cells[ACTIVITY_UNKNOWN], 80 * MS);
	activity__free(a);
	profile__free(p);
}

TEST(hostile_values)
{
	struct profile *p = new_profile();
	struct profile_labels lab = {.has_cpu = true};
	struct activity_opts o = {.columns = 60};
	struct activity *a = NULL;
	size_t i;

	CHECK(p);
	/* values a file may hold: a wait past the end of time, a sample
	 * count whose CPU time overflows */
	CHECK_EQ_U64(wait(p, 9, "interruptible", 10, 1, NULL), 0);
	CHECK_EQ_U64(profile__add_timed_sample(p, 1, &app, 7, "worker", &lab, frames, 2,
					       UINT64_MAX - 1, T0 + 20 * MS),
		     0);
	CHECK_EQ_U64(profile__add_timed_sample(p, 0, &app, 8, "w", &lab, frames, 2, 1ull << 62,
					       T0 + 30 * MS),
		     0);
	CHECK_EQ_U64(activity__build(p, &o, &a), 0);
	CHECK(a->nintervals <= 60 && a->end == UINT64_MAX);
	for (i = 0; i < a->nthreads; i++)
		CHECK(a->threads[i].nsegs == 1 &&
		      a->threads[i].segs[0].start < a->threads[i].segs[0].end);
	activity__free(a);
	profile__free(p);
}

TEST(auto_interval)
{
	CHECK_EQ_U64(activity__auto_interval(1000 * MS, 60), 20 * MS);
	CHECK_EQ_U64(activity__auto_interval(10 * MS, 60), MS);
	CHECK_EQ_U64(activity__auto_interval(60ull * 1000 * MS, 60), 2000 * MS);
	CHECK_EQ_U64(activity__auto_interval(0, 60), MS);
	CHECK_STR(activity__state_name(ACTIVITY_RUNNABLE), "runnable");
	CHECK_EQ_U64(activity__state_char(ACTIVITY_UNKNOWN), '.');
	/* from the view's own span (waits' ends included) */
	{
		struct profile *p = rhythm();
		struct activity_opts o = {.columns = 60};
		struct activity *a = NULL;

		CHECK(p);
		CHECK_EQ_U64(activity__build(p, &o, &a), 0);
		CHECK_EQ_U64(a->interval_ns, 20 * MS);
		CHECK_EQ_U64(a->nintervals, 50);
		activity__free(a);
		profile__free(p);
	}
}

/* The SVG of @p's CPU samples with lanes from all of @p (NULL: none), as a
 * NUL-terminated string in @b. */
static const char *render(struct profile *p, struct fg_activity_arg *arg, struct buf *b)
{
	struct profile *cpu = profile__extract_type(p, 0);
	struct flamegraph_opts o = {.width = 1000};
	int err;

	if (arg) {
		o.lanes = fg_activity__lanes;
		o.lanes_arg = arg;
	}
	buf__init(b, 1 << 26);
	err = cpu ? flamegraph__render(cpu, &o, b) : -ENOMEM;
	profile__free(cpu);
	if (err || buf__append(b, "", 1))
		return NULL;
	return (const char *)b->data;
}

TEST(svg_lanes)
{
	struct profile *p = rhythm();
	struct fg_activity_arg arg = {0};
	const char *svg;
	struct buf b;

	CHECK(p);
	arg.full = p;
	svg = render(p, &arg, &b);
	CHECK(svg);
	/* one lane per thread; times from the graph's first sample (+5 ms) */
	CHECK(strstr(svg, "<g class=\"act-thread\" data-tid=\"7\" data-name=\"100/7 worker\">"));
	CHECK(strstr(svg, "<g class=\"act-thread\" data-tid=\"8\" data-name=\"100/8 busy\">"));
	CHECK(strstr(svg,
		     "<title>100/7 worker: interruptible +0.295s to +0.495s (200.0 ms)</title>"));
	CHECK(strstr(svg, "<title>100/7 worker: running -0.005s to +0.295s (300.0 ms)</title>"));
	CHECK(strstr(svg, "<title>100/8 busy: runnable +0.005s to +0.015s (10.0 ms)</title>"));
	CHECK(strstr(svg, "<title>span aa010000000000000000000000000000/a100000000000000 on "
			  "100/7: +0.095s to +0.195s, cpu 0.100 s, off-CPU 0.000 s</title>"));
	/* the caption sums what the lane shows: within the strip, T0 to T0 + 990 ms */
	CHECK(strstr(svg,
		     "100/7 worker: running 0.600 s, runnable 0.000 s, waiting 0.390 s</text>"));
	CHECK(strstr(svg, "api.onRange(function (sel)"));
	CHECK(strstr(svg, "data-s=\"interruptible\""));
	buf__release(&b);
	/* the pid filter applies; without waits, the caption says how to get them */
	arg.opts.filter_pid = true;
	arg.opts.pid = 200;
	svg = render(p, &arg, &b);
	CHECK(svg && !strstr(svg, "act-thread"));
	buf__release(&b);
	arg = (struct fg_activity_arg){0}; /* the graph's own profile: CPU samples only */
	svg = render(p, &arg, &b);
	CHECK(svg && strstr(svg, "(no off-CPU waits: capture with --off-cpu)"));
	CHECK(!strstr(svg, "interruptible +"));
	buf__release(&b);
	/* past the cap on pieces, the lanes stop and say so */
	arg = (struct fg_activity_arg){.full = p, .max_rects = 10};
	svg = render(p, &arg, &b);
	CHECK(svg && strstr(svg, "lanes cut short: more than 10 pieces"));
	CHECK(strstr(svg, "<title>100/7 worker: interruptible +0.295s"));
	CHECK(strstr(svg, "<title>100/8 busy: runnable +0.025s"));
	CHECK(!strstr(svg, "<title>100/8 busy: runnable +0.045s"));
	buf__release(&b);
	svg = render(p, NULL, &b);
	CHECK(svg && !strstr(svg, "fg-act"));
	buf__release(&b);
	profile__free(p);
}

int main(void)
{
	RUN(states_per_interval);
	RUN(segments);
	RUN(wait_wins_over_samples);
	RUN(spans_where_they_ran);
	RUN(caps_and_filters);
	RUN(without_time);
	RUN(dominant_from_a_quarter);
	RUN(hostile_values);
	RUN(auto_interval);
	RUN(svg_lanes);
	return TEST_DONE();
}
