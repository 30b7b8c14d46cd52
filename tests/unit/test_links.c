/* test_links.c - span links (OpenTelemetry thread context) through the
 * model (dedup, zero link, cardinality cap, prune), the encoders (OTLP
 * link_table/link_index, OTLP/JSON, pprof labels) and back through the
 * readers, and report's --by span / --trace-id / --span-id. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "formats/flamegraph.h"
#include "formats/otlp.h"
#include "formats/otlp_json.h"
#include "formats/otlp_json_read.h"
#include "formats/otlp_read.h"
#include "formats/pprof.h"
#include "formats/pprof_read.h"
#include "model/profile.h"
#include "util/buf.h"
#include "report_text.h"
#include "test.h"

static const struct profile_mapping_desc map = {0x400000, 0x500000, 0, "/usr/bin/app", NULL, 0};
static const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};

static struct profile_link mk(int trace, int span)
{
	struct profile_link l;

	memset(l.trace_id, trace, sizeof(l.trace_id));
	memset(l.span_id, span, sizeof(l.span_id));
	return l;
}

static int add(struct profile *p, const char *fn, const struct profile_link *l, __u64 n)
{
	struct profile_frame f = {0x400010 + strlen(fn), &map, fn, PROFILE_FRAME_NATIVE, NULL,
				  NULL, NULL, 0};
	struct profile_labels lab = {.link = l};

	return profile__add_typed_sample(p, 0, &app, 101, "t", &lab, &f, 1, n);
}

/* span 1/1: f x3 (two adds), span 2/2: g x2, no span: h x1, zero link: h x4. */
static struct profile *model(void)
{
	struct profile *p = profile__new();
	struct profile_link a = mk(1, 1), b = mk(2, 2), z = mk(0, 0);

	if (!p || add(p, "f", &a, 2) || add(p, "f", &a, 1) || add(p, "g", &b, 2) ||
	    add(p, "h", NULL, 1) || add(p, "h", &z, 4)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

/* Total of the samples linked to link @l in @p (0 for none). */
static __u64 linked(const struct profile *p, const struct profile_link *l)
{
	__u64 sum = 0;
	size_t i, j;

	for (i = 0; i < profile__process_count(p); i++)
		for (j = 0; j < profile__sample_count(p, i); j++) {
			const struct profile_sample_entry *s = profile__sample(p, i, j);

			if (l ? s->link && !memcmp(profile__link(p, s->link), l, sizeof(*l))
			      : !s->link)
				sum += s->value;
		}
	return sum;
}

TEST(model_links)
{
	struct profile *p = model();
	struct profile_link a = mk(1, 1), b = mk(2, 2);

	CHECK(p);
	CHECK(profile__link_count(p) == 3); /* zero, a, b */
	CHECK(linked(p, &a) == 3 && linked(p, &b) == 2 && linked(p, NULL) == 5);
	CHECK(profile__sample_count(p, 0) == 3); /* h's two adds merge: no link */
	CHECK(profile__prune(p) == 0);
	CHECK(profile__link_count(p) == 3 && linked(p, &a) == 3);
	profile__free(p);
}

TEST(cap)
{
	struct profile *p = profile__new();
	struct profile_link l;
	int i;

	CHECK(p);
	profile__set_link_cap(p, 2);
	for (i = 1; i <= 5; i++) {
		l = mk(i, i);
		CHECK(add(p, "f", &l, (__u64)i) == 0);
	}
	CHECK(profile__link_count(p) == 3);
	CHECK(profile__links_capped(p) == 3 + 4 + 5);
	CHECK(linked(p, NULL) == 12);
	l = mk(1, 1);
	CHECK(add(p, "f", &l, 1) == 0); /* known: still linked past the cap */
	CHECK(linked(p, &l) == 2);
	CHECK(profile__prune(p) == 0);
	CHECK(profile__links_capped(p) == 12 && profile__link_cap(p) == 2);
	profile__free(p);
}

/* The value of string sample attribute @key of sample @i of process 0, or
 * NULL. */
static const char *sattr(const struct profile *p, size_t i, const char *key)
{
	const struct profile_sample_entry *s = profile__sample(p, 0, i);

	for (__u32 k = 0; k < s->nattrs; k++) {
		const struct profile_attr_entry *a = profile__attr(p, s->attrs[k]);

		if (!strcmp(profile__string(p, a->key, NULL), key))
			return a->kind == PROFILE_ATTR_STR ? a->str_value : "?";
	}
	return NULL;
}

/* Thread-context attributes: sample identity, order, skipped keys, and the
 * OTLP round trip. */
TEST(ctx_attrs)
{
	static const struct profile_ctx_attr a1[] = {
		{"http.route", "/a"}, {"http.method", "GET"}, {"http.route", "/dup"},
		{"thread.id", "7"},   {"", "x"},	      {"empty", ""},
		{"k3", "3"},	      {"k4", "4"},	      {"k5", "5"}};
	static const struct profile_ctx_attr a2[] = {{"http.route", "/b"}};
	struct profile_frame f = {0x400010, &map, "f", PROFILE_FRAME_NATIVE, NULL, NULL, NULL, 0};
	struct profile_labels l1 = {.ctx = a1, .nctx = 9}, l2 = {.ctx = a2, .nctx = 1};
	struct profile *p = profile__new(), *q = NULL;
	const struct profile_sample_entry *s;
	struct buf b;
	char err[256];

	CHECK(p);
	CHECK(profile__add_typed_sample(p, 0, &app, 101, "t", &l1, &f, 1, 2) == 0);
	CHECK(profile__add_typed_sample(p, 0, &app, 101, "t", &l1, &f, 1, 1) == 0);
	CHECK(profile__add_typed_sample(p, 0, &app, 101, "t", &l2, &f, 1, 5) == 0);
	CHECK(profile__sample_count(p, 0) == 2);
	s = profile__sample(p, 0, 0);
	CHECK(s->value == 3);
	/* thread.id, thread.name + the first 4 usable: route, method, k3, k4 */
	CHECK_EQ_U64(s->nattrs, 2 + PROFILE_MAX_CTX_ATTRS);
	CHECK_STR(sattr(p, 0, "http.route"), "/a");
	CHECK_STR(sattr(p, 0, "http.method"), "GET");
	CHECK_STR(sattr(p, 0, "k4"), "4");
	CHECK(sattr(p, 0, "k5") == NULL && sattr(p, 0, "empty") == NULL);
	CHECK_STR(sattr(p, 1, "http.route"), "/b");
	CHECK(!profile__ctx_key_ok("thread.name") && profile__ctx_key_ok("http.route"));
	buf__init(&b, 1 << 20);
	CHECK(otlp__encode(p, &b) == 0);
	CHECK(otlp_read__parse(b.data, b.len, &q, err, sizeof(err)) == 0);
	CHECK(q && profile__sample_count(q, 0) == 2);
	if (q) {
		for (size_t i = 0; i < 2; i++) {
			const char *r = sattr(q, i, "http.route");

			CHECK(r && (!strcmp(r, "/a") ? profile__sample(q, 0, i)->value == 3 &&
							       !strcmp(sattr(q, i, "k3"), "3")
						     : profile__sample(q, 0, i)->value == 5));
		}
	}
	profile__free(q);
	buf__release(&b);
	profile__free(p);
}

static void check_same_links(const struct profile *p)
{
	struct profile_link a = mk(1, 1), b = mk(2, 2);

	CHECK(profile__link_count(p) == 3);
	CHECK(linked(p, &a) == 3);
	CHECK(linked(p, &b) == 2);
	CHECK(linked(p, NULL) == 5);
}

TEST(otlp_round_trip)
{
	struct profile *p = model(), *q = NULL;
	struct buf b;
	char err[256];

	CHECK(p);
	buf__init(&b, 1 << 20);
	CHECK(otlp__encode(p, &b) == 0);
	CHECK(otlp_read__parse(b.data, b.len, &q, err, sizeof(err)) == 0);
	check_same_links(q);
	profile__free(q);
	buf__release(&b);
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
	CHECK(otlp_json_read__transcode((const char *)j.data, j.len, &pb, err, sizeof(err)) == 0);
	CHECK(otlp_read__parse(pb.data, pb.len, &q, err, sizeof(err)) == 0);
	check_same_links(q);
	profile__free(q);
	buf__release(&j);
	buf__release(&pb);
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
	check_same_links(q);
	profile__free(q);
	buf__release(&b);
	profile__free(p);
}

TEST(report)
{
	struct profile *p = model();
	struct report_opts o;
	char *out;

	CHECK(p);
	report__default_opts(&o);
	o.by = BY_SPAN;
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "01010101010101010101010101010101/0101010101010101"));
	CHECK(strstr(out, "02020202020202020202020202020202/0202020202020202"));
	CHECK(strstr(out, "(no span)"));
	free(out);
	report__default_opts(&o);
	o.json = true;
	o.filter_trace = true;
	memset(o.trace_id, 2, sizeof(o.trace_id));
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"total\":2,"));
	CHECK(strstr(out, "\"name\":\"g\""));
	CHECK(!strstr(out, "\"name\":\"f\""));
	free(out);
	o.filter_trace = false;
	o.filter_span = true;
	memset(o.span_id, 1, sizeof(o.span_id));
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"total\":3,"));
	CHECK(strstr(out, "\"name\":\"f\""));
	free(out);
	profile__free(p);
}

TEST(flamegraph_trace)
{
	struct profile *p = model();
	struct flamegraph_opts o = {0};
	struct buf b;

	CHECK(p);
	buf__init(&b, 1 << 24);
	CHECK(flamegraph__render(p, &o, &b) == 0); /* unfiltered: f and h drawn */
	CHECK(memmem(b.data, b.len, "<title>f\n", 9) && memmem(b.data, b.len, "<title>h\n", 9));
	b.len = 0;
	o.filter_trace = true;
	memset(o.trace_id, 2, sizeof(o.trace_id));
	CHECK(flamegraph__render(p, &o, &b) == 0);
	CHECK(memmem(b.data, b.len, "<title>g\n", 9));
	CHECK(!memmem(b.data, b.len, "<title>f\n", 9) && !memmem(b.data, b.len, "<title>h\n", 9));
	CHECK(memmem(b.data, b.len, "trace 02020202020202020202020202020202 only", 43));
	buf__release(&b);
	profile__free(p);
}

int main(void)
{
	RUN(model_links);
	RUN(cap);
	RUN(ctx_attrs);
	RUN(otlp_round_trip);
	RUN(otlp_json_round_trip);
	RUN(pprof_round_trip);
	RUN(report);
	RUN(flamegraph_trace);
	return TEST_DONE();
}
