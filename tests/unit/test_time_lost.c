/* test_time_lost.c - samples whose own time was lost (the capture's times
 * ring full): their count kept in the profile's loss counters through OTLP
 * (profcap.samples.untimed) and in report's header, the samples themselves
 * timed when drained and marked (profcap.time.lost) so the profile keeps
 * one sample shape, and the timeline marking the intervals that hold
 * them (text and JSON). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/timeline.h"
#include "formats/otlp.h"
#include "formats/otlp_read.h"
#include "model/profile.h"
#include "util/buf.h"
#include "test.h"

#define T0 1700000000000000000ull
#define MS 1000000ull

static const struct profile_mapping_desc map = {0x400000, 0x500000, 0, "/usr/bin/app", NULL, 0};
static const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};

/* @value samples of "main;work" at T0 + @ms; @lost: their time was lost. */
static int add(struct profile *p, long ms, __u64 value, bool lost)
{
	struct profile_frame f[2] = {
		{0x400104, &map, "work", PROFILE_FRAME_NATIVE, NULL, NULL, NULL, 0},
		{0x400010, &map, "main", PROFILE_FRAME_NATIVE, NULL, NULL, NULL, 0},
	};
	struct profile_num_attr mark = {.key = PROFILE_ATTR_TIME_LOST, .value = 1};
	struct profile_labels lab = {.has_cpu = !lost};

	if (lost) {
		lab.num = &mark;
		lab.nnum = 1;
	}
	return profile__add_timed_sample(p, 0, &app, 7, "worker", &lab, f, 2, value,
					 T0 + (__u64)ms * MS);
}

/* 1 s of samples every 10 ms, and 30 whose time was lost read at +1.2 s. */
static struct profile *with_lost(void)
{
	struct profile *p = profile__new();
	struct profile_meta m = {.time_unix_nano = T0,
				 .duration_nano = 2000 * MS,
				 .period_ns = 10 * MS,
				 .samples_untimed = 30,
				 .profile_id = {1}};
	long t;

	if (!p || profile__set_meta(p, &m))
		return NULL;
	for (t = 0; t < 1000; t += 10)
		if (add(p, t, 1, false))
			return NULL;
	return add(p, 1200, 30, true) ? NULL : p;
}

/* The timeline of @p by 500 ms (@json or text), or NULL. */
static char *timeline_text(const struct profile *p, bool json)
{
	struct timeline_opts o = {.file = "t", .interval_ns = 500 * MS, .json = json};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err;

	if (!f)
		return NULL;
	err = timeline__print(f, p, &o);
	fclose(f);
	if (err) {
		free(text);
		return NULL;
	}
	return text;
}

TEST(counted_through_otlp)
{
	struct profile *p = with_lost(), *q = NULL;
	struct buf b;
	char err[256];

	CHECK(p);
	if (!p)
		return;
	buf__init(&b, 1 << 20);
	CHECK_EQ_U64(otlp__encode(p, &b), 0);
	CHECK_EQ_U64(otlp_read__parse(b.data, b.len, &q, err, sizeof(err)), 0);
	CHECK(q && profile__meta(q)->samples_untimed == 30);
	CHECK(q && profile__time_count(q) == 101); /* every sample timed */
	buf__release(&b);
	profile__free(q);
	profile__free(p);
}

TEST(timeline_marks_intervals)
{
	struct profile *p = with_lost();
	char *text;

	CHECK(p);
	if (!p)
		return;
	text = timeline_text(p, true);
	CHECK(text && strstr(text, "\"untimed\":0,"));
	/* +0 and +0.5 s: none lost; +1.0 s: the 30 read then */
	CHECK(text && strstr(text, "\"offset_seconds\":0.000,\"total\":50,\"time_lost\":0,"));
	CHECK(text && strstr(text, "\"offset_seconds\":1.000,\"total\":30,\"time_lost\":30,"));
	free(text);
	text = timeline_text(p, false);
	CHECK(text && strstr(text, "[30 with time lost]"));
	/* only that interval is marked */
	CHECK(text && !strstr(strstr(text, "with time lost]") + 1, "with time lost]"));
	free(text);
	profile__free(p);
}

int main(void)
{
	RUN(counted_through_otlp);
	RUN(timeline_marks_intervals);
	return TEST_DONE();
}
