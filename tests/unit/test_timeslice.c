/* test_timeslice.c - time in the model (occurrences, CPUs, slices, the cap),
 * through OTLP, OTLP/JSON and pprof's "cannot hold" line, the --time range
 * parser, the timeline, and the time-ordered writers (perf script read back
 * by profcap's reader, speedscope's document). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/timeline.h"
#include "cli/timeslice.h"
#include "formats/otlp.h"
#include "formats/otlp_json.h"
#include "formats/otlp_json_read.h"
#include "formats/otlp_read.h"
#include "formats/perf_script.h"
#include "formats/perf_script_write.h"
#include "formats/pprof.h"
#include "formats/speedscope.h"
#include "model/profile.h"
#include "util/buf.h"
#include "test.h"

#define T0 1700000000000000000ull /* 2023-11-14T22:13:20Z */
#define MS 1000000ull

static const struct profile_mapping_desc map = {0x400000, 0x500000, 0, "/usr/bin/app", NULL, 0};
static const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};

/* One occurrence of a two-frame stack "main;@fn" of thread @tid on @cpu
 * (-1: none) at T0 + @ms milliseconds (ms < 0: without time). */
static int add(struct profile *p, const char *fn, __u32 tid, int cpu, long ms)
{
	struct profile_frame f[2] = {
		{0x400100 + strlen(fn), &map, fn, PROFILE_FRAME_NATIVE, NULL, NULL, NULL, 0},
		{0x400010, &map, "main", PROFILE_FRAME_NATIVE, NULL, NULL, NULL, 0},
	};
	struct profile_labels lab = {.has_cpu = cpu >= 0, .cpu = cpu >= 0 ? (__u32)cpu : 0};

	if (ms < 0)
		return profile__add_typed_sample(p, 0, &app, tid, "worker", &lab, f, 2, 1);
	return profile__add_timed_sample(p, 0, &app, tid, "worker", &lab, f, 2, 1,
					 T0 + (__u64)ms * MS);
}

static struct profile *two_phases(void)
{
	struct profile *p = profile__new();
	struct profile_meta m = {.time_unix_nano = T0,
				 .duration_nano = 2000 * MS,
				 .period_ns = 10 * MS,
				 .profile_id = {1}};
	long t;

	if (!p || profile__set_meta(p, &m))
		return NULL;
	for (t = 0; t < 1000; t += 10)
		if (add(p, "phase_a", 7, 0, t))
			return NULL;
	for (t = 1000; t < 2000; t += 10)
		if (add(p, "phase_b", 8, 1, t))
			return NULL;
	return p;
}

/* Sum of values in @p of samples whose leaf is @fn. */
static __u64 leaf_total(const struct profile *p, const char *fn)
{
	__u64 sum = 0;
	size_t i, j, n;

	for (i = 0; i < profile__process_count(p); i++)
		for (j = 0; j < profile__sample_count(p, i); j++) {
			const struct profile_sample_entry *s = profile__sample(p, i, j);
			const __u32 *locs = profile__stack(p, s->stack, &n);
			const struct profile_function_entry *f;

			if (!n)
				continue;
			f = profile__function(
				p, profile__location_function(p, profile__location(p, locs[0])));
			if (!strcmp(profile__string(p, f->name, NULL), fn))
				sum += s->value;
		}
	return sum;
}

TEST(occurrences)
{
	struct profile *p = profile__new();
	const struct profile_occurrence *o;
	__u64 first, last;
	__u32 cpu;
	size_t n;

	CHECK(p);
	CHECK_EQ_U64(profile__time_span(p, &first, &last), -ENOENT);
	CHECK_EQ_U64(add(p, "f", 7, 3, 30), 0);
	CHECK_EQ_U64(add(p, "f", 7, 3, 10), 0);
	CHECK_EQ_U64(add(p, "f", 7, 3, 20), 0);
	CHECK_EQ_U64(add(p, "f", 7, 2, 40), 0); /* another CPU: another sample */
	CHECK_EQ_U64(profile__sample_count(p, 0), 2);
	CHECK_EQ_U64(profile__sample(p, 0, 0)->value, 3);
	o = profile__sample_times(p, 0, 0, &n);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(o[0].time_ns, T0 + 30 * MS); /* order of addition */
	CHECK_EQ_U64(o[1].time_ns, T0 + 10 * MS);
	CHECK_EQ_U64(o[2].value, 1);
	CHECK_EQ_U64(profile__sample_cpu(p, profile__sample(p, 0, 1), &cpu), 0);
	CHECK_EQ_U64(cpu, 2);
	CHECK_EQ_U64(profile__time_count(p), 4);
	CHECK_EQ_U64(profile__time_span(p, &first, &last), 0);
	CHECK_EQ_U64(first, T0 + 10 * MS);
	CHECK_EQ_U64(last, T0 + 40 * MS);
	/* samples without time keep no occurrence */
	CHECK_EQ_U64(add(p, "g", 7, -1, -1), 0);
	o = profile__sample_times(p, 0, 2, &n);
	CHECK(!o && !n);
	CHECK_EQ_U64(profile__sample_cpu(p, profile__sample(p, 0, 2), &cpu), -ENOENT);
	profile__free(p);
}

TEST(slice)
{
	struct profile *p = two_phases(), *a = NULL, *b = NULL;
	struct profile_slice_note note;
	__u64 first, last;

	CHECK(p);
	CHECK_EQ_U64(add(p, "untimed", 9, -1, -1), 0);
	CHECK_EQ_U64(profile__slice(p, T0 + 100 * MS, T0 + 900 * MS, &a, &note), 0);
	CHECK_EQ_U64(leaf_total(a, "phase_a"), 80);
	CHECK_EQ_U64(leaf_total(a, "phase_b"), 0);
	CHECK_EQ_U64(leaf_total(a, "untimed"), 0);
	CHECK_EQ_U64(note.untimed_dropped, 1);
	CHECK_EQ_U64(note.untimed_kept, 0);
	CHECK_EQ_U64(profile__meta(a)->time_unix_nano, T0 + 100 * MS);
	CHECK_EQ_U64(profile__meta(a)->duration_nano, 800 * MS);
	CHECK_EQ_U64(profile__time_span(a, &first, &last), 0);
	CHECK_EQ_U64(first, T0 + 100 * MS);
	CHECK_EQ_U64(last, T0 + 890 * MS);
	/* a slice of a slice; an empty range */
	CHECK_EQ_U64(profile__slice(a, T0 + 500 * MS, T0 + 2500 * MS, &b, NULL), 0);
	CHECK_EQ_U64(profile__total(b), 40);
	profile__free(b);
	CHECK_EQ_U64(profile__slice(p, T0, T0, &b, NULL), -EINVAL);
	CHECK(!b);
	profile__free(a);
	profile__free(p);
}

TEST(slice_untimed)
{
	struct profile *p = profile__new(), *s = NULL;
	struct profile_slice_note note;

	CHECK(p);
	CHECK_EQ_U64(add(p, "f", 7, -1, -1), 0);
	CHECK_EQ_U64(add(p, "f", 7, -1, -1), 0);
	CHECK_EQ_U64(profile__slice(p, 1, 2, &s, &note), 0);
	CHECK_EQ_U64(profile__total(s), 2);
	CHECK_EQ_U64(note.untimed_kept, 2);
	CHECK_EQ_U64(note.untimed_dropped, 0);
	profile__free(s);
	profile__free(p);
}

TEST(time_cap)
{
	struct profile *p = profile__new();
	size_t n;

	CHECK(p);
	profile__set_time_cap(p, 2);
	CHECK_EQ_U64(add(p, "f", 7, 0, 1), 0);
	CHECK_EQ_U64(add(p, "g", 7, 0, 2), 0);
	CHECK_EQ_U64(add(p, "h", 7, 0, 3), -E2BIG);
	CHECK_EQ_U64(profile__total(p), 2);
	CHECK_EQ_U64(profile__prune(p), 0);
	CHECK_EQ_U64(profile__sample_count(p, 0), 2);
	CHECK_EQ_U64(profile__time_count(p), 2);
	CHECK(profile__sample_times(p, 0, 1, &n) && n == 1);
	profile__free(p);
}

/* Occurrences and CPUs survive a rebuild (prune, extract). */
TEST(rebuild_keeps_times)
{
	struct profile *p = two_phases(), *q = NULL;
	__u64 first, last;
	__u32 cpu;
	size_t n;

	CHECK(p);
	CHECK_EQ_U64(profile__rebuild(p, NULL, NULL, &q), 0);
	CHECK_EQ_U64(profile__time_count(q), 200);
	CHECK_EQ_U64(profile__time_span(q, &first, &last), 0);
	CHECK_EQ_U64(last, T0 + 1990 * MS);
	CHECK(profile__sample_times(q, 0, 1, &n) && n == 100);
	CHECK_EQ_U64(profile__sample_cpu(q, profile__sample(q, 0, 1), &cpu), 0);
	CHECK_EQ_U64(cpu, 1);
	profile__free(q);
	q = profile__extract_type(p, 0);
	CHECK(q);
	CHECK_EQ_U64(profile__time_count(q), 200);
	profile__free(q);
	profile__free(p);
}

static void check_same_times(const struct profile *p, const struct profile *q)
{
	__u64 a0, a1, b0, b1;
	__u32 cpu;

	CHECK_EQ_U64(profile__time_count(q), profile__time_count(p));
	CHECK_EQ_U64(profile__time_span(p, &a0, &a1), 0);
	CHECK_EQ_U64(profile__time_span(q, &b0, &b1), 0);
	CHECK_EQ_U64(a0, b0);
	CHECK_EQ_U64(a1, b1);
	CHECK_EQ_U64(leaf_total(q, "phase_a"), 100);
	CHECK_EQ_U64(leaf_total(q, "phase_b"), 100);
	CHECK_EQ_U64(profile__sample_cpu(q, profile__sample(q, 0, 1), &cpu), 0);
	CHECK_EQ_U64(cpu, 1);
}

TEST(otlp_roundtrip)
{
	struct profile *p = two_phases(), *q = NULL;
	struct buf b;
	char err[256];

	CHECK(p);
	buf__init(&b, 1 << 24);
	CHECK_EQ_U64(otlp__encode(p, &b), 0);
	CHECK_EQ_U64(otlp_read__parse(b.data, b.len, &q, err, sizeof(err)), 0);
	check_same_times(p, q);
	profile__free(q);
	buf__reset(&b);
	CHECK_EQ_U64(otlp_json__encode(p, &b), 0);
	CHECK(strstr((const char *)b.data, "\"timestampsUnixNano\":[\""));
	{
		struct buf pb;

		buf__init(&pb, 1 << 24);
		CHECK_EQ_U64(otlp_json_read__transcode((const char *)b.data, b.len, &pb, err,
						       sizeof(err)),
			     0);
		CHECK_EQ_U64(otlp_read__parse(pb.data, pb.len, &q, err, sizeof(err)), 0);
		buf__release(&pb);
	}
	check_same_times(p, q);
	profile__free(q);
	buf__release(&b);
	profile__free(p);
}

/* OTLP wants timestamps within the Profile's range: a meta range that holds
 * none of them gives way, one that holds some is widened. */
TEST(time_range)
{
	struct profile *p = two_phases();
	struct profile_meta m = {.time_unix_nano = T0 + 500 * MS, .duration_nano = 100 * MS};
	__u64 start, dur;

	CHECK(p);
	profile__time_range(p, &start, &dur);
	CHECK_EQ_U64(start, T0);
	CHECK_EQ_U64(dur, 2000 * MS);
	CHECK_EQ_U64(profile__set_meta(p, &m), 0);
	profile__time_range(p, &start, &dur);
	CHECK_EQ_U64(start, T0);
	CHECK_EQ_U64(dur, 1990 * MS + 1);
	m.time_unix_nano = T0 + 3600 * 1000 * MS; /* a guess an hour late */
	CHECK_EQ_U64(profile__set_meta(p, &m), 0);
	profile__time_range(p, &start, &dur);
	CHECK_EQ_U64(start, T0);
	CHECK_EQ_U64(dur, 1990 * MS + 1);
	profile__free(p);
}

TEST(pprof_unheld)
{
	struct profile *p = two_phases();
	struct buf line;

	CHECK(p);
	buf__init(&line, 4096);
	CHECK(pprof__unheld(p, 0, &line) > 0);
	CHECK(!buf__append(&line, "", 1));
	CHECK(strstr((const char *)line.data, "sample timestamps (200 occurrences)"));
	buf__release(&line);
	profile__free(p);
}

TEST(parse_bounds)
{
	__u64 ns, from, to, start = T0;

	setenv("TZ", "UTC", 1);
	tzset();
	CHECK_EQ_U64(timeslice__parse_bound("+2.5s", 5, start, &ns), 0);
	CHECK_EQ_U64(ns, T0 + 2500 * MS);
	CHECK_EQ_U64(timeslice__parse_bound("+2.5", 4, start, &ns), 0);
	CHECK_EQ_U64(ns, T0 + 2500 * MS);
	CHECK_EQ_U64(timeslice__parse_bound("+250ms", 6, start, &ns), 0);
	CHECK_EQ_U64(ns, T0 + 250 * MS);
	CHECK_EQ_U64(timeslice__parse_bound("1700000001000000000", 19, start, &ns), 0);
	CHECK_EQ_U64(ns, T0 + 1000 * MS);
	CHECK_EQ_U64(timeslice__parse_bound("22:13:21.5", 10, start, &ns), 0);
	CHECK_EQ_U64(ns, T0 + 1500 * MS);
	CHECK_EQ_U64(timeslice__parse_bound("2023-11-14T22:13:22", 19, start, &ns), 0);
	CHECK_EQ_U64(ns, T0 + 2000 * MS);
	CHECK_EQ_U64(timeslice__parse_bound("2023-11-14T22:13:22Z", 20, start, &ns), 0);
	CHECK_EQ_U64(ns, T0 + 2000 * MS);
	/* a clock time after midnight of a capture started the day before */
	CHECK_EQ_U64(timeslice__parse_bound("00:00:01", 8, start, &ns), 0);
	CHECK_EQ_U64(ns, T0 + (3600 + 46 * 60 + 41) * 1000 * MS);
	CHECK_EQ_U64(timeslice__parse_bound("+x", 2, start, &ns), -EINVAL);
	CHECK_EQ_U64(timeslice__parse_bound("25:00:00", 8, start, &ns), -EINVAL);
	CHECK_EQ_U64(timeslice__parse_bound("3", 1, start, &ns), -EINVAL);

	CHECK_EQ_U64(timeslice__parse("+2.5s-+4s", start, &from, &to), 0);
	CHECK_EQ_U64(from, T0 + 2500 * MS);
	CHECK_EQ_U64(to, T0 + 4000 * MS);
	CHECK_EQ_U64(timeslice__parse("2023-11-14T22:13:21-2023-11-14T22:13:22", start, &from, &to),
		     0);
	CHECK_EQ_U64(from, T0 + 1000 * MS);
	CHECK_EQ_U64(to, T0 + 2000 * MS);
	CHECK_EQ_U64(timeslice__parse("22:13:21-22:13:22", start, &from, &to), 0);
	CHECK_EQ_U64(to - from, 1000 * MS);
	CHECK_EQ_U64(timeslice__parse("+4-+2", start, &from, &to), -EINVAL);
	CHECK_EQ_U64(timeslice__parse("+4", start, &from, &to), -EINVAL);
	CHECK_EQ_U64(timeslice__parse_duration("100ms", &ns), 0);
	CHECK_EQ_U64(ns, 100 * MS);
	CHECK_EQ_U64(timeslice__parse_duration("0", &ns), -EINVAL);
}

TEST(apply)
{
	struct profile *p = two_phases(), *u = profile__new();

	CHECK(p && u);
	CHECK_EQ_U64(timeslice__apply("report", "+1-+2", &p), 0);
	CHECK_EQ_U64(leaf_total(p, "phase_b"), 100);
	CHECK_EQ_U64(leaf_total(p, "phase_a"), 0);
	CHECK_EQ_U64(timeslice__apply("report", "+5-+6", &p), -EINVAL);
	CHECK_EQ_U64(timeslice__apply("report", "later", &p), -EINVAL);
	CHECK_EQ_U64(add(u, "f", 7, -1, -1), 0);
	CHECK_EQ_U64(timeslice__apply("report", "+0-+1", &u), -EINVAL);
	profile__free(u);
	profile__free(p);
}

TEST(timeline)
{
	struct profile *p = two_phases();
	struct timeline_opts o = {
		.file = "t", .interval_ns = 500 * MS, .by_thread = true, .json = true};
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(p);
	f = open_memstream(&text, &len);
	CHECK(f);
	CHECK_EQ_U64(timeline__print(f, p, &o), 0);
	fclose(f);
	/* four intervals: thread 7 alone in the first two, thread 8 after */
	CHECK(strstr(text, "\"offset_seconds\":0.000,\"total\":50,\"time_lost\":0,\"rows\":["
			   "{\"pid\":100,\"tid\":7,\"name\":\"worker\",\"value\":50,"
			   "\"share\":1.000000}]"));
	CHECK(strstr(text, "\"offset_seconds\":1.500,\"total\":50,\"time_lost\":0,\"rows\":["
			   "{\"pid\":100,\"tid\":8,"));
	CHECK(strstr(text, "\"untimed\":0,\"intervals\":["));
	free(text);
	o.interval_ns = 1;
	CHECK_EQ_U64(timeline__print(stdout, p, &o), -E2BIG);
	profile__free(p);
}

TEST(perf_script_roundtrip)
{
	struct profile *p = two_phases(), *q = NULL;
	struct perf_script_stats st;
	struct buf b;
	char err[256];

	CHECK(p);
	buf__init(&b, 1 << 24);
	CHECK_EQ_U64(perf_script_write__encode(p, &b), 0);
	CHECK(strstr((const char *)b.data,
		     "worker 100/7 [000] 1700000000.000000000: 10000000 "
		     "cpu-clock:\n\t          400107 phase_a (/usr/bin/app)\n"));
	CHECK_EQ_U64(perf_script__parse(b.data, b.len, &q, &st, err, sizeof(err)), 0);
	CHECK_EQ_U64(st.period, 10 * MS);
	check_same_times(p, q);
	profile__free(q);
	buf__release(&b);
	profile__free(p);
}

TEST(speedscope)
{
	struct profile *p = two_phases();
	struct buf b;
	const char *s;

	CHECK(p);
	buf__init(&b, 1 << 24);
	CHECK_EQ_U64(speedscope__encode(p, &b), 0);
	CHECK(!buf__append(&b, "", 1));
	s = (const char *)b.data;
	CHECK(strstr(s, "\"frames\":[{\"name\":\"phase_a\"},{\"name\":\"main\"},"
			"{\"name\":\"phase_b\"}]"));
	/* thread 7: 100 samples root first, each 10 ms apart and one period */
	CHECK(strstr(s, "{\"type\":\"sampled\",\"name\":\"worker (100/7)\",\"unit\":"
			"\"nanoseconds\",\"samples\":[[1,0],[1,0],"));
	CHECK(strstr(s, "\"weights\":[10000000,10000000,"));
	CHECK(strstr(s, "\"startValue\":0,\"endValue\":1000000000}"));
	CHECK(strstr(s, "\"startValue\":1000000000,\"endValue\":2000000000}"));
	buf__release(&b);
	profile__free(p);
}

int main(void)
{
	RUN(occurrences);
	RUN(slice);
	RUN(slice_untimed);
	RUN(time_cap);
	RUN(rebuild_keeps_times);
	RUN(otlp_roundtrip);
	RUN(time_range);
	RUN(pprof_unheld);
	RUN(parse_bounds);
	RUN(apply);
	RUN(timeline);
	RUN(perf_script_roundtrip);
	RUN(speedscope);
	return TEST_DONE();
}
