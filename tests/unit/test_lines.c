/* test_lines.c - lines and inlined frames through the model and every
 * encoder: one location of an inlined helper (mix, inlined into hot_caller)
 * and one plain location, then OTLP (and the reader, round trip), OTLP-JSON,
 * folded, report --lines and the flame graph. */
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "cli/report.h"
#include "formats/flamegraph.h"
#include "formats/folded.h"
#include "formats/otlp.h"
#include "formats/otlp_json.h"
#include "formats/otlp_read.h"
#include "model/profile.h"
#include "model/view.h"
#include "test.h"

static const struct profile_mapping_desc map = {0x1000, 0x2000, 0, "/usr/bin/app", "beef",
						 PROFILE_MAPPING_HAS__ALL};
static const struct profile_line inl[] = {
	{"mix", NULL, "/src/app.c", 14, 17, 5},
	{"hot_caller", "_Z10hot_callerm", "/src/app.c", 23, 25, 9},
};
static const struct profile_line mainl[] = {{"main", NULL, "/src/app.c", 30, 35, 0}};

static struct profile *model(void)
{
	const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};
	const struct profile_frame frames[] = {
		{0x1234, &map, NULL, PROFILE_FRAME_NATIVE, NULL, NULL, inl, 2},
		{0x1400, &map, "main", PROFILE_FRAME_NATIVE, NULL, NULL, mainl, 1},
	};
	struct profile *p = profile__new();

	if (p && profile__add_sample(p, &app, 100, NULL, frames, 2, 7)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

/* The leaf location of @p's only sample reads like inl[]. */
static int leaf_ok(const struct profile *p)
{
	const struct profile_sample_entry *s = profile__sample(p, 0, 0);
	const struct profile_line_entry *le;
	const struct profile_function_entry *f0, *f1;
	const __u32 *locs;
	size_t n;

	locs = profile__stack(p, s->stack, &n);
	if (n != 2)
		return 0;
	le = profile__lines(p, profile__location(p, locs[0])->lines, &n);
	if (n != 2 || le[0].line != 17 || le[0].column != 5 || le[1].line != 25 ||
	    le[1].column != 9)
		return 0;
	f0 = profile__function(p, le[0].function);
	f1 = profile__function(p, le[1].function);
	return !strcmp(profile__string(p, f0->name, NULL), "mix") &&
	       !strcmp(profile__string(p, f0->system_name, NULL), "mix") &&
	       !strcmp(profile__string(p, f1->name, NULL), "hot_caller") &&
	       !strcmp(profile__string(p, f1->system_name, NULL), "_Z10hot_callerm") &&
	       !strcmp(profile__string(p, f1->filename, NULL), "/src/app.c") &&
	       f0->start_line == 14 && f1->start_line == 23;
}

TEST(model)
{
	struct profile *p = model();
	const struct profile_mapping_entry *m;
	size_t i, nbool = 0;
	char scratch[64];
	__s64 line;

	CHECK(p);
	CHECK(leaf_ok(p));
	m = profile__mapping(p, 1);
	CHECK_EQ_U64(m->flags, PROFILE_MAPPING_HAS__ALL);
	CHECK_EQ_U64(m->nattrs, 5);
	CHECK(m->attr == m->attrs[0]);
	for (i = 1; i < m->nattrs; i++) {
		const struct profile_attr_entry *a = profile__attr(p, m->attrs[i]);

		nbool += a->kind == PROFILE_ATTR_BOOL && a->int_value == 1;
		CHECK(!strncmp(profile__string(p, a->key, NULL), "pprof.mapping.has_", 18));
	}
	CHECK_EQ_U64(nbool, 4);
	/* The view: the innermost line names the location; 2 frames. */
	CHECK_STR(view__location_name(p, 1, scratch, sizeof(scratch)), "mix");
	CHECK_EQ_U64(view__line_count(p, 1), 2);
	CHECK_STR(view__line_name(p, 1, 1, scratch, sizeof(scratch)), "hot_caller");
	CHECK_STR(view__line_source(p, 1, 1, &line), "/src/app.c");
	CHECK_EQ_U64(line, 25);
	/* Prune keeps lines (an orphan stack forces a rebuild). */
	{
		const struct profile_frame orphan = {0x1500, &map, "x", PROFILE_FRAME_NATIVE, NULL, NULL,
						     NULL, 0};
		__u32 st;

		CHECK(!profile__add_stack(p, &orphan, 1, &st));
		CHECK(!profile__prune(p));
		CHECK(leaf_ok(p));
	}
	profile__free(p);
}

TEST(otlp_roundtrip)
{
	struct profile *p = model(), *q = NULL;
	struct buf a, b;
	char err[256];

	buf__init(&a, 1 << 20);
	buf__init(&b, 1 << 20);
	CHECK(p);
	CHECK(!otlp__encode(p, &a));
	CHECK(!otlp_read__parse(a.data, a.len, &q, err, sizeof(err)));
	CHECK(leaf_ok(q));
	CHECK_EQ_U64(profile__mapping(q, 1)->flags, PROFILE_MAPPING_HAS__ALL);
	/* Read back and written again: the same bytes. */
	CHECK(!otlp__encode(q, &b));
	CHECK_EQ_U64(a.len, b.len);
	CHECK(!memcmp(a.data, b.data, a.len));
	profile__free(q);
	profile__free(p);
	buf__release(&a);
	buf__release(&b);
}

TEST(otlp_json)
{
	struct profile *p = model();
	struct buf out;
	char *s;

	buf__init(&out, 1 << 20);
	CHECK(p);
	CHECK(!otlp_json__encode(p, &out));
	CHECK(!buf__append(&out, "", 1));
	s = (char *)out.data;
	CHECK(strstr(s, "\"lines\":[{\"functionIndex\":"));
	CHECK(strstr(s, "\"line\":\"17\",\"column\":\"5\"},{\"functionIndex\":"));
	CHECK(strstr(s, "\"line\":\"25\",\"column\":\"9\"}]"));
	CHECK(strstr(s, "\"startLine\":\"23\""));
	CHECK(strstr(s, "{\"boolValue\":true}"));
	profile__free(p);
	buf__release(&out);
}

TEST(folded)
{
	struct profile *p = model();
	struct buf out;

	buf__init(&out, 1 << 20);
	CHECK(p);
	CHECK(!folded__encode(p, &out));
	CHECK(!buf__append(&out, "", 1));
	CHECK_STR((char *)out.data, "app;main;hot_caller;mix_[i] 7\n");
	profile__free(p);
	buf__release(&out);
}

TEST(report)
{
	struct profile *p = model();
	struct report_opts o;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(p);
	report__default_opts(&o);
	o.lines = true;
	f = open_memstream(&text, &len);
	CHECK(f);
	CHECK(!report__print(f, p, &o));
	fclose(f);
	CHECK(strstr(text, "mix [inlined] /src/app.c:17\n"));
	CHECK(strstr(text, "hot_caller /src/app.c:25\n"));
	CHECK(strstr(text, "main /src/app.c:35\n"));
	free(text);
	text = NULL;
	o.lines = false;
	f = open_memstream(&text, &len);
	CHECK(f);
	CHECK(!report__print(f, p, &o));
	fclose(f);
	CHECK(strstr(text, "mix [inlined]\n"));
	CHECK(strstr(text, "hot_caller\n"));
	free(text);
	profile__free(p);
}

TEST(flamegraph)
{
	struct profile *p = model();
	struct flamegraph_opts o = {0};
	struct buf out;
	char *s;

	buf__init(&out, 1 << 22);
	CHECK(p);
	CHECK(!flamegraph__render(p, &o, &out));
	CHECK(!buf__append(&out, "", 1));
	s = (char *)out.data;
	CHECK(strstr(s, "<title>mix\n7 samples, 100.00% of all, type native, inlined\n/src/app.c:17"));
	CHECK(strstr(s, "<title>hot_caller\n7 samples, 100.00% of all, type native\n/src/app.c:25"));
	profile__free(p);
	buf__release(&out);
}

int main(void)
{
	RUN(model);
	RUN(otlp_roundtrip);
	RUN(otlp_json);
	RUN(folded);
	RUN(report);
	RUN(flamegraph);
	return TEST_DONE();
}
