/* The timeline strip of SVG flame graphs: bars per interval, the embedded
 * per-stack data the script redraws ranges from, the cap on that data,
 * filters, the lanes hook, and no strip at all for a profile without time. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "formats/flamegraph.h"
#include "formats/flamegraph_timeline.h"
#include "model/profile.h"
#include "util/buf.h"
#include "test.h"

#define T0 1700000000000000000ull
#define MS 1000000ull

static const struct profile_mapping_desc map = {0x400000, 0x500000, 0, "/usr/bin/app", NULL, 0};
static const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};
static const struct profile_process_desc other = {200, "other", "/usr/bin/other", NULL, NULL};

/* One sample "main;@fn" of @proc at T0 + @ms (ms < 0: without time). */
static int add(struct profile *p, const struct profile_process_desc *proc, const char *fn, long ms)
{
	struct profile_frame f[2] = {
		{.address = 0x400100 + strlen(fn),
		 .mapping = &map,
		 .function = fn,
		 .type = PROFILE_FRAME_NATIVE},
		{.address = 0x400010,
		 .mapping = &map,
		 .function = "main",
		 .type = PROFILE_FRAME_NATIVE},
	};
	struct profile_labels lab = {0};

	if (ms < 0)
		return profile__add_typed_sample(p, 0, proc, 7, "worker", &lab, f, 2, 1);
	return profile__add_timed_sample(p, 0, proc, 7, "worker", &lab, f, 2, 1,
					 T0 + (__u64)ms * MS);
}

/* app: phase_a every 10 ms of the first second, phase_b of the next. */
static struct profile *phases(bool timed)
{
	struct profile *p = profile__new();
	struct profile_meta m = {
		.time_unix_nano = T0, .duration_nano = 2000 * MS, .period_ns = 10 * MS};
	long t;

	if (!p || profile__set_meta(p, &m))
		return NULL;
	for (t = 0; t < 2000; t += 10)
		if (add(p, &app, t < 1000 ? "phase_a" : "phase_b", timed ? t : -1))
			return NULL;
	return p;
}

static char *render(const struct profile *p, const struct flamegraph_opts *o)
{
	struct buf b;

	buf__init(&b, FG_MAX_BYTES);
	if (flamegraph__render(p, o, &b) || buf__append(&b, "", 1)) {
		buf__release(&b);
		return NULL;
	}
	return (char *)b.data;
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s += strlen(needle);
	}
	return n;
}

/* Sum of the bars' data-v. */
static unsigned long long bars_sum(const char *svg)
{
	unsigned long long sum = 0;
	const char *s = svg;

	while ((s = strstr(s, "<rect data-i=\""))) {
		s = strstr(s, "data-v=\"");
		if (!s)
			break;
		sum += strtoull(s + 8, NULL, 10);
		s += 8;
	}
	return sum;
}

/* The embedded items: per item its total, first interval and untimed part. */
struct item_sum {
	unsigned long long total, untimed;
	unsigned long first;
};

static int decode(const char *svg, struct item_sum *it, int max)
{
	const char *s = strstr(svg, "<metadata id=\"fg-tl-data\">"), *end;
	int n = 0;
	unsigned long b = 0;
	char *e;

	if (!s)
		return -1;
	s += strlen("<metadata id=\"fg-tl-data\">");
	end = strstr(s, "</metadata>");
	memset(it, 0, sizeof(*it) * (size_t)max);
	it[0].first = ULONG_MAX;
	while (s < end && n < max) {
		if (*s == ';') {
			n++;
			b = 0;
			if (n < max)
				it[n].first = ULONG_MAX;
			s++;
		} else if (*s == ' ') {
			s++;
		} else if (*s == '~') {
			unsigned long long v = strtoull(s + 1, &e, 36);

			it[n].untimed += v;
			it[n].total += v;
			s = e;
		} else {
			unsigned long long v = 1;

			b += strtoul(s, &e, 36);
			s = e;
			if (*s == ':') {
				v = strtoull(s + 1, &e, 36);
				s = e;
			}
			if (it[n].first == ULONG_MAX)
				it[n].first = b;
			it[n].total += v;
		}
	}
	return n;
}

TEST(strip_and_data)
{
	struct profile *p = phases(true);
	struct item_sum it[4];
	char *svg;

	CHECK(p);
	svg = render(p, NULL);
	CHECK(svg);
	/* 2 s over 1180 px in bars of at least 3 px and one period: 10 ms. */
	CHECK(strstr(svg, "<g id=\"fg-tl\" data-n=\"200\" data-interval=\"10000000\" "
			  "data-first=\"0\" data-t0=\"1700000000000000000\""));
	CHECK_EQ_U64(count(svg, "<rect data-i=\""), 200);
	CHECK_EQ_U64(bars_sum(svg), 200);
	CHECK(strstr(svg, "<rect data-i=\"150\" data-v=\"1\""));
	CHECK(strstr(svg, "samples per 10 ms (highest 1)"));
	CHECK(strstr(svg, "drag across it"));
	/* Items in drawing order: phase_a (intervals 0..99), phase_b (100..). */
	CHECK_EQ_U64(decode(svg, it, 4), 2);
	CHECK_EQ_U64(it[0].total, 100);
	CHECK_EQ_U64(it[0].first, 0);
	CHECK_EQ_U64(it[1].total, 100);
	CHECK_EQ_U64(it[1].first, 100);
	CHECK_EQ_U64(it[0].untimed + it[1].untimed, 0);
	/* The graph starts under the strip; the script's part is there. */
	CHECK(strstr(svg, "data-top=\"170\""));
	CHECK(strstr(svg, "api.onRange = function"));
	CHECK(strstr(svg, "id=\"fg-tl-reset\""));
	CHECK(strstr(svg, "+0.2s</text>"));
	free(svg);
	profile__free(p);
}

/* A value without time stays in its stack's item ("~"), out of the bars. */
TEST(untimed_part)
{
	struct profile *p = phases(true);
	struct item_sum it[4];
	char *svg;

	CHECK(p);
	CHECK_EQ_U64(add(p, &app, "phase_b", -1), 0);
	svg = render(p, NULL);
	CHECK(svg);
	CHECK_EQ_U64(bars_sum(svg), 200);
	CHECK_EQ_U64(decode(svg, it, 4), 2);
	CHECK_EQ_U64(it[1].total, 101);
	CHECK_EQ_U64(it[1].untimed, 1);
	CHECK(strstr(svg, "data-total=\"201\""));
	free(svg);
	profile__free(p);
}

TEST(no_time_no_strip)
{
	struct profile *p = phases(false);
	char *svg;

	CHECK(p);
	svg = render(p, NULL);
	CHECK(svg);
	CHECK(!strstr(svg, "fg-tl"));
	CHECK(!strstr(svg, "profcapFlamegraph.range"));
	CHECK(!strstr(svg, "api.onRange"));
	CHECK(strstr(svg, "data-top=\"68\""));
	free(svg);
	profile__free(p);
}

/* Only what the filters keep is counted, in the bars and the items. */
TEST(filters)
{
	struct profile *p = phases(true);
	struct flamegraph_opts o = {.filter_pid = true, .pid = 200};
	struct item_sum it[4];
	char *svg;
	long t;

	CHECK(p);
	for (t = 500; t < 600; t += 10)
		CHECK_EQ_U64(add(p, &other, "x", t), 0);
	svg = render(p, &o);
	CHECK(svg);
	CHECK_EQ_U64(bars_sum(svg), 10);
	CHECK_EQ_U64(decode(svg, it, 4), 1);
	CHECK_EQ_U64(it[0].first, 50);
	free(svg);
	profile__free(p);
}

/* Past the cap the strip stays, without range selection, and says so. */
TEST(cap)
{
	struct profile *p = phases(true);
	struct flamegraph_opts o = {.timeline_cap = 50};
	char *svg;

	CHECK(p);
	svg = render(p, &o);
	CHECK(svg);
	CHECK(!strstr(svg, "<metadata id=\"fg-tl-data\">"));
	CHECK(strstr(svg, "range selection off: more than 50 (stack, interval) values"));
	CHECK_EQ_U64(bars_sum(svg), 200);
	free(svg);
	profile__free(p);
}

struct lanes_seen {
	struct flamegraph_timegeom g;
	int calls;
};

static int lanes(void *arg, const struct profile *p, const struct flamegraph_timegeom *g,
		 struct buf_out *out, unsigned *height)
{
	struct lanes_seen *seen = arg;

	(void)p;
	seen->g = *g;
	seen->calls++;
	fg_timeline__scale_open(out, g, g->y, 20, "id=\"lane\"");
	buf__puts(out, "<rect x=\"0\" y=\"0\" width=\"100\" height=\"20\"/></svg>\n");
	*height = 20;
	return 0;
}

static int lanes_fail(void *arg, const struct profile *p, const struct flamegraph_timegeom *g,
		      struct buf_out *out, unsigned *height)
{
	(void)arg, (void)p, (void)g, (void)out, (void)height;
	return -ENOMEM;
}

TEST(lanes_hook)
{
	struct profile *p = phases(true);
	struct lanes_seen seen = {0};
	struct flamegraph_opts o = {.lanes = lanes, .lanes_arg = &seen};
	struct buf b;
	char *svg;

	CHECK(p);
	svg = render(p, &o);
	CHECK(svg);
	CHECK_EQ_U64(seen.calls, 1);
	CHECK_EQ_U64(seen.g.t0_ns, T0);
	CHECK_EQ_U64(seen.g.interval_ns, 10 * MS);
	CHECK_EQ_U64(seen.g.nintervals, 200);
	CHECK_EQ_U64(seen.g.first_ns, T0);
	CHECK_EQ_U64(seen.g.last_ns, T0 + 1990 * MS);
	CHECK_EQ_U64(seen.g.x, 10);
	CHECK_EQ_U64(seen.g.width, 1180);
	CHECK_EQ_U64(seen.g.y, 68 + 18 + 48 + 28);
	CHECK(fg_timeline__x(&seen.g, T0 + 25 * MS) == 2.5 * FG_TL_UNITS);
	/* The lane is in the strip's group, the shade covers it, the graph
	 * starts below it. */
	CHECK(strstr(svg, "y=\"162\" width=\"1180\" height=\"20\" viewBox=\"0 0 20000 20\" "
			  "preserveAspectRatio=\"none\" id=\"lane\">"));
	CHECK(strstr(svg, "id=\"fg-tl-shade-l\" class=\"tl-shade\" x=\"0\" y=\"0\" width=\"0\" "
			  "height=\"96\""));
	CHECK(strstr(svg, "data-top=\"190\""));
	CHECK(strstr(svg, "</svg>\n</g>\n"));
	free(svg);
	o.lanes = lanes_fail;
	buf__init(&b, FG_MAX_BYTES);
	CHECK_EQ_U64(flamegraph__render(p, &o, &b), (__u64)-ENOMEM);
	buf__release(&b);
	profile__free(p);
}

/* Off-CPU: bars are time blocked, no sampling period sets the interval. */
TEST(off_cpu)
{
	struct profile *p = profile__new();
	struct profile_frame f = {.address = 0x400100,
				  .mapping = &map,
				  .function = "nap",
				  .type = PROFILE_FRAME_NATIVE};
	struct profile_labels lab = {0};
	char *svg;
	long t;

	CHECK(p);
	CHECK_EQ_U64(profile__set_value_types(p, "off_cpu", "nanoseconds", "", ""), 0);
	/* 200 ms asleep every 500 ms for 2 s */
	for (t = 0; t < 2000; t += 500)
		CHECK_EQ_U64(profile__add_timed_sample(p, 0, &app, 7, "sleeper", &lab, &f, 1,
						       200 * MS, T0 + (__u64)t * MS),
			     0);
	svg = render(p, NULL);
	CHECK(svg);
	/* 1.5 s on 1180 px, bars of 3 px at least: 5 ms. */
	CHECK(strstr(svg, "data-n=\"301\" data-interval=\"5000000\""));
	CHECK(strstr(svg, "data-off-cpu=\"1\""));
	CHECK(strstr(svg, "ms off-CPU per 5 ms (highest 200)"));
	CHECK(strstr(svg, "<rect data-i=\"100\" data-v=\"200000000\""));
	CHECK(strstr(svg, ": 200.000 ms off-CPU</title>"));
	CHECK_EQ_U64(bars_sum(svg), 800 * MS);
	free(svg);
	profile__free(p);
}

int main(void)
{
	RUN(strip_and_data);
	RUN(untimed_part);
	RUN(no_time_no_strip);
	RUN(filters);
	RUN(cap);
	RUN(lanes_hook);
	RUN(off_cpu);
	return TEST_DONE();
}
