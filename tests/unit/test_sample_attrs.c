/* test_sample_attrs.c - where people look at sample attributes (the
 * OpenTelemetry thread context's http.route, ...): the view helpers
 * (view__sample_attr, view__sample_matches), the pprof and OTLP/JSON round
 * trips (labels and attributes come back under their keys, off-CPU labels
 * too), report --by attr:KEY and --attr KEY=VALUE, flamegraph --attr. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "formats/flamegraph.h"
#include "formats/otlp_json.h"
#include "formats/otlp_json_read.h"
#include "formats/otlp_read.h"
#include "formats/pprof.h"
#include "formats/pprof_read.h"
#include "model/profile.h"
#include "model/view.h"
#include "util/buf.h"
#include "report_text.h"
#include "test.h"

static const struct profile_mapping_desc map = {0x400000, 0x500000, 0, "/usr/bin/app", NULL, 0};
static const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};

/* One sample of @n in function @fn with the attributes @ctx (@nctx). */
static int add(struct profile *p, const char *fn, const struct profile_ctx_attr *ctx,
	       size_t nctx, __u64 n)
{
	struct profile_frame f = {0x400010 + strlen(fn), &map, fn, PROFILE_FRAME_NATIVE, NULL,
				  NULL, NULL, 0};
	struct profile_labels lab = {.ctx = ctx, .nctx = nctx};

	return profile__add_typed_sample(p, 0, &app, 101, "t", &lab, &f, 1, n);
}

/* users: route /users GET x5 (f) + POST x2 (g); /orders GET x3 (h);
 * none: x4 (i), 1 of them with only http.method (j). */
static struct profile *model(void)
{
	static const struct profile_ctx_attr users_get[] = {{"http.route", "/users"},
							    {"http.method", "GET"}};
	static const struct profile_ctx_attr users_post[] = {{"http.route", "/users"},
							     {"http.method", "POST"}};
	static const struct profile_ctx_attr orders_get[] = {{"http.route", "/orders"},
							     {"http.method", "GET"}};
	static const struct profile_ctx_attr get_only[] = {{"http.method", "GET"}};
	struct profile *p = profile__new();

	if (!p || add(p, "f", users_get, 2, 5) || add(p, "g", users_post, 2, 2) ||
	    add(p, "h", orders_get, 2, 3) || add(p, "i", NULL, 0, 3) ||
	    add(p, "j", get_only, 1, 1)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

/* Sum of the values of samples carrying every pair of @m (@n) in @p. */
static __u64 sum_matching(const struct profile *p, const struct view_attr_match *m, size_t n)
{
	__u64 sum = 0;
	size_t i, j;

	for (i = 0; i < profile__process_count(p); i++)
		for (j = 0; j < profile__sample_count(p, i); j++)
			if (view__sample_matches(p, profile__sample(p, i, j), m, n))
				sum += profile__sample(p, i, j)->value;
	return sum;
}

/* The same attribute shares as model() has. */
static void check_shares(const struct profile *p)
{
	const struct view_attr_match users = {"http.route", "/users"},
				     orders = {"http.route", "/orders"},
				     get = {"http.method", "GET"},
				     post = {"http.method", "POST"};
	const struct view_attr_match users_get[] = {users, get};

	CHECK(p);
	CHECK_EQ_U64(profile__total(p), 14);
	CHECK_EQ_U64(sum_matching(p, &users, 1), 7);
	CHECK_EQ_U64(sum_matching(p, &orders, 1), 3);
	CHECK_EQ_U64(sum_matching(p, &get, 1), 9);
	CHECK_EQ_U64(sum_matching(p, &post, 1), 2);
	CHECK_EQ_U64(sum_matching(p, users_get, 2), 5);
}

TEST(view_helpers)
{
	struct profile *p = model();
	const struct view_attr_match tid = {"thread.id", "101"}, none = {"http.route", "/x"},
				     nokey = {"no.such", "1"};
	const struct profile_sample_entry *s = NULL;
	char scratch[24];
	size_t i;

	CHECK(p);
	check_shares(p);
	CHECK_EQ_U64(sum_matching(p, NULL, 0), 14);	 /* no filter: all */
	CHECK_EQ_U64(sum_matching(p, &tid, 1), 14);	 /* an integer attribute */
	CHECK_EQ_U64(sum_matching(p, &none, 1), 0);
	CHECK_EQ_U64(sum_matching(p, &nokey, 1), 0);
	for (i = 0; i < profile__sample_count(p, 0); i++) {
		s = profile__sample(p, 0, i);
		if (s->value == 3 && !view__sample_attr(p, s, "http.method", scratch, 24))
			break; /* i: no attribute at all */
	}
	CHECK(i < profile__sample_count(p, 0));
	CHECK(view__sample_attr(p, s, "http.route", scratch, sizeof(scratch)) == NULL);
	CHECK_STR(view__sample_attr(p, s, "thread.name", scratch, sizeof(scratch)), "t");
	CHECK_STR(view__sample_attr(p, s, "thread.id", scratch, sizeof(scratch)), "101");
	profile__free(p);
}

TEST(pprof_round_trip)
{
	struct profile *p = model(), *q = NULL;
	struct buf b;
	char err[256];

	CHECK(p);
	buf__init(&b, 1 << 20);
	CHECK(pprof__encode(p, &b) == 0);
	CHECK(pprof_read__parse(b.data, b.len, 1 << 24, &q, err, sizeof(err)) == 0);
	check_shares(q);
	CHECK_EQ_U64(profile__sample_count(q, 0), profile__sample_count(p, 0));
	profile__free(q);
	buf__release(&b);
	profile__free(p);
}

/* Off-CPU labels come back as labels of the model (state, switch count),
 * not as thread-context attributes. */
TEST(pprof_off_cpu_labels)
{
	static const struct profile_ctx_attr route[] = {{"http.route", "/users"}};
	struct profile_frame f = {0x400010, &map, "f", PROFILE_FRAME_NATIVE, NULL, NULL, NULL, 0};
	struct profile_labels lab = {.state = "interruptible", .switches = 7, .ctx = route,
				     .nctx = 1};
	struct profile *p = profile__new(), *off = NULL, *q = NULL;
	const struct profile_sample_entry *s;
	char scratch[24], err[256];
	__u32 type;
	struct buf b;

	CHECK(p);
	CHECK(profile__add_value_type(p, "off_cpu", "nanoseconds", "context_switch", "count", 1,
				      &type) == 0);
	CHECK(profile__add_typed_sample(p, type, &app, 101, "t", &lab, &f, 1, 5000) == 0);
	off = profile__extract_type(p, type);
	CHECK(off);
	buf__init(&b, 1 << 20);
	CHECK(pprof__encode(off, &b) == 0);
	CHECK(pprof_read__parse(b.data, b.len, 1 << 24, &q, err, sizeof(err)) == 0);
	CHECK(q && profile__sample_count(q, 0) == 1);
	s = profile__sample(q, 0, 0);
	CHECK_STR(view__sample_attr(q, s, PROFILE_ATTR_OFF_CPU_STATE, scratch, 24),
		  "interruptible");
	CHECK_STR(view__sample_attr(q, s, PROFILE_ATTR_OFF_CPU_SWITCHES, scratch, 24), "7");
	CHECK_STR(view__sample_attr(q, s, "http.route", scratch, 24), "/users");
	CHECK_EQ_U64(s->nattrs, 5); /* thread.id, thread.name, state, switches, route */
	profile__free(q);
	buf__release(&b);
	profile__free(off);
	profile__free(p);
}

TEST(otlp_json_round_trip)
{
	struct profile *p = model(), *q = NULL;
	struct buf j, pb;
	char err[256];

	CHECK(p);
	buf__init(&j, 1 << 20);
	buf__init(&pb, 1 << 20);
	CHECK(otlp_json__encode(p, &j) == 0);
	CHECK(memmem(j.data, j.len, "\"http.route\"", 12));
	CHECK(otlp_json_read__transcode((const char *)j.data, j.len, &pb, err, sizeof(err)) == 0);
	CHECK(otlp_read__parse(pb.data, pb.len, &q, err, sizeof(err)) == 0);
	check_shares(q);
	profile__free(q);
	buf__release(&j);
	buf__release(&pb);
	profile__free(p);
}

TEST(report_by_attr)
{
	struct profile *p = model();
	struct report_opts o;
	char *out;

	CHECK(p);
	report__default_opts(&o);
	o.by = BY_ATTR;
	o.by_attr = "http.route";
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "Values of http.route (3):"));
	/* sorted by value: /users 7, (none) 4, /orders 3 */
	CHECK(strstr(out, " 50.00%           7  /users\n"));
	CHECK(strstr(out, " 28.57%           4  (none)\n"));
	CHECK(strstr(out, " 21.43%           3  /orders\n"));
	CHECK(strstr(out, "/users") < strstr(out, "(none)"));
	CHECK(strstr(out, "(none)") < strstr(out, "/orders"));
	free(out);
	o.json = true;
	o.by_attr = "http.method";
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"by\":\"attr:http.method\""));
	CHECK(strstr(out, "{\"name\":\"GET\",\"self\":9,"));
	CHECK(strstr(out, "{\"name\":\"POST\",\"self\":2,"));
	CHECK(strstr(out, "{\"name\":null,\"self\":3,")); /* (none) */
	free(out);
	profile__free(p);
}

TEST(report_attr_filter)
{
	struct profile *p = model();
	struct report_opts o;
	char *out;

	CHECK(p);
	report__default_opts(&o);
	o.json = true;
	o.attrs[0] = (struct view_attr_match){"http.route", "/users"};
	o.nattrs = 1;
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"attrs\":{\"http.route\":\"/users\"}"));
	CHECK(strstr(out, "\"total\":7,"));
	CHECK(strstr(out, "\"name\":\"f\"") && strstr(out, "\"name\":\"g\""));
	CHECK(!strstr(out, "\"name\":\"h\"") && !strstr(out, "\"name\":\"i\""));
	free(out);
	o.attrs[1] = (struct view_attr_match){"http.method", "POST"};
	o.nattrs = 2;
	o.json = false;
	o.by = BY_ATTR;
	o.by_attr = "http.method";
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "filter      http.route=/users http.method=POST: 2 samples"));
	CHECK(strstr(out, "100.00%           2  POST\n"));
	CHECK(!strstr(out, "GET"));
	free(out);
	o.attrs[1].value = "DELETE";
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "No samples match the filter."));
	free(out);
	profile__free(p);
}

/* --comm filters the --by span/attr table too. */
TEST(report_by_attr_comm)
{
	struct profile *p = model();
	struct report_opts o;
	char *out;

	CHECK(p);
	report__default_opts(&o);
	o.by = BY_ATTR;
	o.by_attr = "http.route";
	o.comm = "not-this";
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "No samples match the filter."));
	CHECK(!strstr(out, "/users"));
	free(out);
	profile__free(p);
}

TEST(flamegraph_attr)
{
	struct profile *p = model();
	const struct view_attr_match m[] = {{"http.route", "/users"}};
	struct flamegraph_opts o = {0};
	struct buf b;

	CHECK(p);
	buf__init(&b, 1 << 24);
	o.attrs = m;
	o.nattrs = 1;
	CHECK(flamegraph__render(p, &o, &b) == 0);
	CHECK(memmem(b.data, b.len, "<title>f\n", 9) && memmem(b.data, b.len, "<title>g\n", 9));
	CHECK(!memmem(b.data, b.len, "<title>h\n", 9) && !memmem(b.data, b.len, "<title>i\n", 9));
	CHECK(memmem(b.data, b.len, "http.route=/users only", 22));
	buf__release(&b);
	profile__free(p);
}

int main(void)
{
	RUN(view_helpers);
	RUN(pprof_round_trip);
	RUN(pprof_off_cpu_labels);
	RUN(otlp_json_round_trip);
	RUN(report_by_attr);
	RUN(report_attr_filter);
	RUN(report_by_attr_comm);
	RUN(flamegraph_attr);
	return TEST_DONE();
}
