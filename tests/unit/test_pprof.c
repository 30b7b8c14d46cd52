/* test_pprof.c - pprof encoder: gunzip the output, decode it with nanopb
 * (our profile.proto) and compare with the model: string table, sample
 * types and the cpu value, ids, mappings with build ids, locations, lines,
 * functions and labels; a non-CPU profile has one value; the size cap. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pb_decode.h>

#include "perftools/profiles/profile.pb.h"

#include "util/buf.h"
#include "util/gz.h"
#include "formats/pprof.h"
#include "model/profile.h"
#include "test.h"

#define PP(x) perftools_profiles_##x
#define MAXN 64

struct d_sample {
	__u64 locs[MAXN];
	size_t nlocs;
	__s64 values[4];
	size_t nvalues;
	PP(Label) labels[16];
	size_t nlabels;
};

struct decoded {
	char *strings[MAXN];
	size_t nstrings;
	PP(ValueType) types[4];
	size_t ntypes;
	struct d_sample samples[MAXN];
	size_t nsamples;
	PP(Mapping) mappings[MAXN];
	size_t nmappings;
	PP(Location) locations[MAXN];
	__u64 loc_fn[MAXN]; /* function id of the first line, 0 = none */
	PP(Line) loc_lines[MAXN][4];
	size_t loc_nlines[MAXN];
	size_t nlocations;
	PP(Function) functions[MAXN];
	size_t nfunctions;
	PP(Profile) prof;
};

static bool dec_string(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct decoded *d = *arg;
	size_t n = s->bytes_left;
	char *str;

	(void)f;
	if (d->nstrings >= MAXN || !(str = calloc(1, n + 1)))
		return false;
	if (!pb_read(s, (pb_byte_t *)str, n)) {
		free(str);
		return false;
	}
	d->strings[d->nstrings++] = str;
	return true;
}

static bool dec_type(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct decoded *d = *arg;

	(void)f;
	return d->ntypes < 4 && pb_decode(s, PP(ValueType_fields), &d->types[d->ntypes++]);
}

/* Packed or not, each varint of the field. */
static bool dec_u64s(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_sample *sm = *arg;
	uint64_t v;

	while (s->bytes_left) {
		if (!pb_decode_varint(s, &v))
			return false;
		if (f->tag == PP(Sample_location_id_tag)) {
			if (sm->nlocs >= MAXN)
				return false;
			sm->locs[sm->nlocs++] = v;
		} else {
			if (sm->nvalues >= 4)
				return false;
			sm->values[sm->nvalues++] = (__s64)v;
		}
	}
	return true;
}

static bool dec_label(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_sample *sm = *arg;

	(void)f;
	return sm->nlabels < 16 && pb_decode(s, PP(Label_fields), &sm->labels[sm->nlabels++]);
}

static bool dec_sample(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct decoded *d = *arg;
	PP(Sample) m = PP(Sample_init_zero);
	struct d_sample *sm;

	(void)f;
	if (d->nsamples >= MAXN)
		return false;
	sm = &d->samples[d->nsamples++];
	m.location_id.funcs.decode = dec_u64s;
	m.location_id.arg = sm;
	m.value.funcs.decode = dec_u64s;
	m.value.arg = sm;
	m.label.funcs.decode = dec_label;
	m.label.arg = sm;
	return pb_decode(s, PP(Sample_fields), &m);
}

static bool dec_mapping(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct decoded *d = *arg;

	(void)f;
	return d->nmappings < MAXN &&
	       pb_decode(s, PP(Mapping_fields), &d->mappings[d->nmappings++]);
}

static bool dec_line(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct decoded *d = *arg;
	size_t i = d->nlocations - 1;
	PP(Line) l = PP(Line_init_zero);

	(void)f;
	if (d->loc_nlines[i] >= 4 || !pb_decode(s, PP(Line_fields), &l))
		return false;
	if (!d->loc_nlines[i])
		d->loc_fn[i] = l.function_id;
	d->loc_lines[i][d->loc_nlines[i]++] = l;
	return true;
}

static bool dec_location(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct decoded *d = *arg;
	PP(Location) * l;

	(void)f;
	if (d->nlocations >= MAXN)
		return false;
	l = &d->locations[d->nlocations];
	l->line.funcs.decode = dec_line;
	l->line.arg = d;
	d->nlocations++;
	return pb_decode(s, PP(Location_fields), l);
}

static bool dec_function(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct decoded *d = *arg;

	(void)f;
	return d->nfunctions < MAXN &&
	       pb_decode(s, PP(Function_fields), &d->functions[d->nfunctions++]);
}

static void decoded_free(struct decoded *d)
{
	size_t i;

	for (i = 0; i < d->nstrings; i++)
		free(d->strings[i]);
	free(d);
}

/* Gunzip and decode @gz; NULL on failure. */
static struct decoded *decode(const struct buf *gz)
{
	struct decoded *d = calloc(1, sizeof(*d));
	struct buf raw;
	pb_istream_t s;
	bool ok;

	buf__init(&raw, 1 << 24);
	if (!d || gz__decompress(gz->data, gz->len, &raw)) {
		free(d);
		buf__release(&raw);
		return NULL;
	}
	d->prof.sample_type.funcs.decode = dec_type;
	d->prof.sample_type.arg = d;
	d->prof.sample.funcs.decode = dec_sample;
	d->prof.sample.arg = d;
	d->prof.mapping.funcs.decode = dec_mapping;
	d->prof.mapping.arg = d;
	d->prof.location.funcs.decode = dec_location;
	d->prof.location.arg = d;
	d->prof.function.funcs.decode = dec_function;
	d->prof.function.arg = d;
	d->prof.string_table.funcs.decode = dec_string;
	d->prof.string_table.arg = d;
	s = pb_istream_from_buffer(raw.data, raw.len);
	ok = pb_decode(&s, PP(Profile_fields), &d->prof);
	buf__release(&raw);
	if (!ok) {
		decoded_free(d);
		return NULL;
	}
	return d;
}

static const char *str(const struct decoded *d, __s64 i)
{
	return i >= 0 && (size_t)i < d->nstrings ? d->strings[i] : "(bad index)";
}

static const PP(Location) * loc_by_id(const struct decoded *d, __u64 id, __u64 *fn)
{
	size_t i;

	for (i = 0; i < d->nlocations; i++)
		if (d->locations[i].id == id) {
			*fn = d->loc_fn[i];
			return &d->locations[i];
		}
	return NULL;
}

static const char *fn_name(const struct decoded *d, __u64 id)
{
	size_t i;

	for (i = 0; i < d->nfunctions; i++)
		if (d->functions[i].id == id)
			return str(d, d->functions[i].name);
	return NULL;
}

/* Label value of @key in @sm: string in *@s, or number in *@num. */
static bool label(const struct decoded *d, const struct d_sample *sm, const char *key,
		  const char **s, __s64 *num)
{
	size_t i;

	for (i = 0; i < sm->nlabels; i++)
		if (!strcmp(str(d, sm->labels[i].key), key)) {
			*s = sm->labels[i].str ? str(d, sm->labels[i].str) : NULL;
			*num = sm->labels[i].num;
			return true;
		}
	return false;
}

static const struct profile_mapping_desc app_map = {0x1000, 0x2000, 0, "/usr/bin/app", "0123abcd", 0};

static struct profile *model(void)
{
	const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};
	const struct profile_frame frames[] = {
		{0x1234, &app_map, "work", PROFILE_FRAME_NATIVE, NULL, NULL, 0},
		{0x1100, &app_map, "main", PROFILE_FRAME_NATIVE, NULL, NULL, 0},
		{0x1555, &app_map, NULL, PROFILE_FRAME_NATIVE, NULL, NULL, 0},
	};
	const struct profile_meta meta = {
		.time_unix_nano = 1700000000000000000ull,
		.duration_nano = 2000000000ull,
		.period_ns = 1001001,
		.profile_id = {1},
	};
	struct profile *p = profile__new();

	if (!p)
		return NULL;
	if (profile__set_meta(p, &meta) ||
	    profile__add_sample(p, &app, 101, "worker", frames, 2, 3) ||
	    profile__add_sample(p, &app, 100, NULL, frames + 1, 2, 5)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

TEST(roundtrip)
{
	struct profile *p = model();
	struct decoded *d = NULL;
	const char *s;
	__s64 num;
	__u64 fn;
	struct buf out;
	size_t i;

	CHECK(p);
	buf__init(&out, 1 << 20);
	CHECK_EQ_U64(pprof__encode(p, &out), 0);
	profile__free(p);
	CHECK(out.len > 2 && out.data[0] == 0x1f && out.data[1] == 0x8b);
	d = decode(&out);
	buf__release(&out);
	CHECK(d);
	CHECK_STR(d->strings[0], "");
	CHECK_EQ_U64(d->ntypes, 2);
	CHECK_STR(str(d, d->types[0].type), "samples");
	CHECK_STR(str(d, d->types[0].unit), "count");
	CHECK_STR(str(d, d->types[1].type), "cpu");
	CHECK_STR(str(d, d->types[1].unit), "nanoseconds");
	CHECK_STR(str(d, d->prof.period_type.type), "cpu");
	CHECK_EQ_U64(d->prof.period, 1001001);
	CHECK_EQ_U64(d->prof.time_nanos, 1700000000000000000ull);
	CHECK_EQ_U64(d->prof.duration_nanos, 2000000000ull);

	CHECK_EQ_U64(d->nmappings, 1);
	CHECK_EQ_U64(d->mappings[0].id, 1);
	CHECK_EQ_U64(d->mappings[0].memory_start, 0x1000);
	CHECK_EQ_U64(d->mappings[0].memory_limit, 0x2000);
	CHECK_STR(str(d, d->mappings[0].filename), "/usr/bin/app");
	CHECK_STR(str(d, d->mappings[0].build_id), "0123abcd");
	CHECK(!d->mappings[0].has_functions); /* the model states no flags */
	CHECK_EQ_U64(d->nlocations, 3);
	CHECK_EQ_U64(d->nfunctions, 2);

	CHECK_EQ_U64(d->nsamples, 2);
	for (i = 0; i < d->nsamples; i++) {
		const struct d_sample *sm = &d->samples[i];
		const PP(Location) * l;

		CHECK_EQ_U64(sm->nvalues, 2);
		CHECK_EQ_U64(sm->values[1], sm->values[0] * 1001001);
		CHECK_EQ_U64(sm->nlocs, 2);
		CHECK(label(d, sm, "pid", &s, &num) && num == 100 && !s);
		CHECK(label(d, sm, "process", &s, &num) && s);
		CHECK_STR(s, "app");
		l = loc_by_id(d, sm->locs[0], &fn);
		CHECK(l && l->mapping_id == 1);
		if (sm->values[0] == 3) {
			CHECK_EQ_U64(l->address, 0x1234);
			CHECK_STR(fn_name(d, fn), "work");
			CHECK(loc_by_id(d, sm->locs[1], &fn));
			CHECK_STR(fn_name(d, fn), "main");
			CHECK(label(d, sm, "tid", &s, &num) && num == 101);
			CHECK(label(d, sm, "thread", &s, &num) && s);
			CHECK_STR(s, "worker");
		} else {
			CHECK_EQ_U64(sm->values[0], 5);
			CHECK_STR(fn_name(d, fn), "main");
			CHECK(loc_by_id(d, sm->locs[1], &fn));
			CHECK_EQ_U64(fn, 0); /* no function: no line */
			CHECK(!label(d, sm, "thread", &s, &num));
		}
	}
	decoded_free(d);
}

/* A location with an inlined function: two Lines, innermost first, with
 * their line numbers; functions with file and start line; the mapping's
 * has_* flags. */
TEST(inlined_lines)
{
	static const struct profile_mapping_desc map = {0x1000, 0x2000, 0, "/usr/bin/app", NULL,
							 PROFILE_MAPPING_HAS__ALL};
	const struct profile_line lines[] = {
		{"mix", NULL, "/src/app.c", 14, 17, 5},
		{"hot_caller", "_Z10hot_callerm", "/src/app.c", 23, 25, 9},
	};
	struct profile_frame f = {0x1234, &map, NULL, PROFILE_FRAME_NATIVE, NULL, NULL, lines, 2};
	const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};
	struct profile *p = profile__new();
	struct decoded *d = NULL;
	struct buf out;
	size_t i;

	buf__init(&out, 1 << 20);
	CHECK(p);
	CHECK(!profile__add_sample(p, &app, 100, NULL, &f, 1, 3));
	CHECK(!pprof__encode(p, &out));
	d = decode(&out);
	CHECK(d);
	CHECK_EQ_U64(d->nlocations, 1);
	CHECK_EQ_U64(d->loc_nlines[0], 2);
	CHECK_EQ_U64(d->loc_lines[0][0].line, 17);
	CHECK_EQ_U64(d->loc_lines[0][1].line, 25);
	for (i = 0; i < d->nfunctions; i++)
		if (d->functions[i].id == d->loc_lines[0][1].function_id)
			break;
	CHECK(i < d->nfunctions);
	CHECK_STR(d->strings[d->functions[i].name], "hot_caller");
	CHECK_STR(d->strings[d->functions[i].system_name], "_Z10hot_callerm");
	CHECK_STR(d->strings[d->functions[i].filename], "/src/app.c");
	CHECK_EQ_U64(d->functions[i].start_line, 23);
	CHECK(d->mappings[0].has_functions && d->mappings[0].has_filenames);
	CHECK(d->mappings[0].has_line_numbers && d->mappings[0].has_inline_frames);
	decoded_free(d);
	profile__free(p);
	buf__release(&out);
}

TEST(non_cpu_profile_has_one_value)
{
	struct profile *p = model();
	struct decoded *d;
	struct buf out;

	CHECK(p);
	CHECK_EQ_U64(profile__set_value_types(p, "alloc", "bytes", "space", "bytes"), 0);
	buf__init(&out, 1 << 20);
	CHECK_EQ_U64(pprof__encode(p, &out), 0);
	profile__free(p);
	d = decode(&out);
	buf__release(&out);
	CHECK(d);
	CHECK_EQ_U64(d->ntypes, 1);
	CHECK_STR(str(d, d->types[0].type), "alloc");
	CHECK_EQ_U64(d->samples[0].nvalues, 1);
	decoded_free(d);
}

/* Thread-context attributes (OTEP 4947) are string labels under their own
 * keys, next to the span's trace_id/span_id; a sample without them has none. */
TEST(ctx_attr_labels)
{
	static const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};
	static const struct profile_ctx_attr ctx[] = {{"http.route", "/users/{id}"},
						      {"http.method", "GET"}};
	const struct profile_frame f = {0x1234, &app_map, "work", PROFILE_FRAME_NATIVE, NULL,
					NULL, 0};
	struct profile_link link;
	struct profile_labels lab = {.link = &link, .ctx = ctx, .nctx = 2};
	struct profile *p = profile__new();
	struct decoded *d = NULL;
	const char *v = NULL;
	size_t i, with = 0, without = 0;
	__s64 num;
	struct buf out;

	memset(link.trace_id, 0xab, sizeof(link.trace_id));
	memset(link.span_id, 0xcd, sizeof(link.span_id));
	buf__init(&out, 1 << 20);
	CHECK(p);
	CHECK(profile__add_typed_sample(p, 0, &app, 101, "w", &lab, &f, 1, 4) == 0);
	CHECK(profile__add_typed_sample(p, 0, &app, 101, "w", NULL, &f, 1, 1) == 0);
	CHECK_EQ_U64(pprof__encode(p, &out), 0);
	d = decode(&out);
	CHECK(d);
	CHECK_EQ_U64(d->nsamples, 2);
	for (i = 0; i < d->nsamples; i++) {
		const struct d_sample *sm = &d->samples[i];

		if (sm->values[0] == 4) {
			with++;
			CHECK(label(d, sm, "http.route", &v, &num));
			CHECK_STR(v, "/users/{id}");
			CHECK(label(d, sm, "http.method", &v, &num));
			CHECK_STR(v, "GET");
			CHECK(label(d, sm, "span_id", &v, &num));
			CHECK_STR(v, "cdcdcdcdcdcdcdcd");
		} else {
			without++;
			CHECK(!label(d, sm, "http.route", &v, &num));
			CHECK(!label(d, sm, "span_id", &v, &num));
		}
	}
	CHECK(with == 1 && without == 1);
	decoded_free(d);
	buf__release(&out);
	profile__free(p);
}

TEST(cap)
{
	struct profile *p = model();
	struct buf out;
	int err;

	CHECK(p);
	buf__init(&out, 16);
	err = pprof__encode(p, &out);
	profile__free(p);
	CHECK_EQ_U64(err, (unsigned long long)-E2BIG);
	CHECK_EQ_U64(out.len, 0);
	buf__release(&out);
}

int main(void)
{
	RUN(roundtrip);
	RUN(inlined_lines);
	RUN(non_cpu_profile_has_one_value);
	RUN(ctx_attr_labels);
	RUN(cap);
	return TEST_DONE();
}
