/* test_otlp_json.c - OTLP/JSON encoder: well-formed JSON (a small
 * structural checker), the expected keys and value encodings (64-bit
 * integers as strings, hex ids, base64 payload), string escaping including
 * invalid UTF-8, the empty profile and the size cap. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "formats/otlp.h"
#include "formats/otlp_json.h"
#include "formats/otlp_json_read.h"
#include "model/profile.h"
#include "test.h"

/* 0 when @s (@n bytes) nests {} and [] correctly outside strings, has no raw
 * control character or unknown escape inside strings, and ends at depth 0. */
static int json_shape(const char *s, size_t n)
{
	char stack[64];
	size_t i, depth = 0;
	bool in_str = false;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (in_str) {
			if ((unsigned char)c < 0x20)
				return -1;
			if (c == '\\') {
				if (i + 1 >= n || !strchr("\"\\/bfnrtu", s[i + 1]))
					return -2;
				i++;
			} else if (c == '"') {
				in_str = false;
			}
			continue;
		}
		if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			if (depth >= sizeof(stack))
				return -3;
			stack[depth++] = c == '{' ? '}' : ']';
		} else if (c == '}' || c == ']') {
			if (!depth || stack[--depth] != c)
				return -4;
		}
	}
	return in_str || depth ? -5 : 0;
}

static bool has(const struct buf *b, const char *needle)
{
	return memmem(b->data, b->len, needle, strlen(needle)) != NULL;
}

static struct profile *model(void)
{
	static const struct profile_mapping_desc map = {0x1000, 0x2000, 0, "/usr/bin/app", "beef", 0};
	const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};
	const struct profile_frame frames[] = {
		{0x1234, &map, "quote\"back\\slash\x01tab\t", PROFILE_FRAME_NATIVE, NULL, NULL, 0},
		{0x1100, &map, "bad\xff utf8 \xc3\xa9", PROFILE_FRAME_KERNEL, NULL, NULL, 0},
	};
	const struct profile_meta meta = {
		.time_unix_nano = 1700000000000000000ull,
		.duration_nano = 2000000000ull,
		.period_ns = 1001001,
		.profile_id = {0x01, 0x02, 0xab, [15] = 0xff},
		.host_name = "h",
		.scope_name = "profcap",
		.original_payload = "hello",
		.original_payload_len = 5,
		.original_payload_format = "linux_perf",
	};
	struct profile *p = profile__new();

	if (!p)
		return NULL;
	if (profile__set_meta(p, &meta) ||
	    profile__add_sample(p, &app, 101, "worker", frames, 2, 3)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

/* OTLP -> OTLP/JSON -> OTLP gives the very bytes: inline chains with
 * system names, files, start lines and columns; mapping flags; numeric
 * attributes with units; links; loss counts and pprof's fields. */
TEST(every_field_through_json)
{
	static const struct profile_mapping_desc exe = {0x1000, 0x9000, 0x200, "/usr/bin/app",
							"0123abcd", PROFILE_MAPPING_HAS__ALL};
	static const struct profile_line chain[] = {
		{"mix", NULL, "/src/app.c", 14, 17, 5},
		{"hot_caller", "_Z10hot_callerm", "/src/app.c", 23, 25, 9},
	};
	const struct profile_frame f = {0x1234, &exe, NULL, PROFILE_FRAME_NATIVE, NULL, NULL,
					chain, 2};
	static const struct profile_link span = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
						  16},
						 {0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 1, 2}};
	static const struct profile_num_attr num[] = {{"bytes", "bytes", 4096}};
	static const struct profile_ctx_attr ctx[] = {{"http.route", "/users/{id}"}};
	const struct profile_labels lab = {.link = &span, .ctx = ctx, .nctx = 1, .num = num,
					   .nnum = 1};
	const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};
	const struct profile_meta meta = {
		.time_unix_nano = 1700000000000000000ull,
		.duration_nano = 2000000000ull,
		.period_ns = 1001001,
		.profile_id = {9},
		.samples_truncated = 355,
		.pprof_comment = "a\nb",
		.pprof_drop_frames = "x.*",
		.pprof_default_sample_type = "samples",
	};
	struct profile *p = profile__new();
	struct buf js, want, got;
	char why[256];

	buf__init(&js, 1 << 20);
	buf__init(&want, 1 << 20);
	buf__init(&got, 1 << 20);
	CHECK(p);
	CHECK(!profile__set_meta(p, &meta));
	CHECK(!profile__add_typed_sample(p, 0, &app, 101, "worker", &lab, &f, 1, 3));
	CHECK_EQ_U64(otlp_json__encode(p, &js), 0);
	CHECK_EQ_U64(otlp__encode(p, &want), 0);
	CHECK_EQ_U64(otlp_json_read__transcode((const char *)js.data, js.len, &got, why, sizeof(why)), 0);
	CHECK_EQ_U64(got.len, want.len);
	CHECK(!memcmp(got.data, want.data, want.len));
	CHECK(has(&js, "\"pprof.profile.comment\""));
	buf__release(&js);
	buf__release(&want);
	buf__release(&got);
	profile__free(p);
}

TEST(keys_and_values)
{
	struct profile *p = model();
	struct buf out;

	CHECK(p);
	buf__init(&out, 1 << 20);
	CHECK_EQ_U64(otlp_json__encode(p, &out), 0);
	profile__free(p);
	CHECK_EQ_U64(json_shape((const char *)out.data, out.len), 0);
	CHECK(out.len && out.data[out.len - 1] == '\n');
	CHECK(!memcmp(out.data, "{\"resourceProfiles\":[{\"resource\":{\"attributes\":[", 47));
	CHECK(has(&out, "{\"key\":\"process.pid\",\"value\":{\"intValue\":\"100\"}}"));
	CHECK(has(&out, "{\"key\":\"host.name\",\"value\":{\"stringValue\":\"h\"}}"));
	CHECK(has(&out, "\"scope\":{\"name\":\"profcap\"}"));
	CHECK(has(&out, "\"timeUnixNano\":\"1700000000000000000\""));
	CHECK(has(&out, "\"durationNano\":\"2000000000\""));
	CHECK(has(&out, "\"period\":\"1001001\""));
	CHECK(has(&out, "\"profileId\":\"0102ab000000000000000000000000ff\""));
	CHECK(has(&out, "\"originalPayloadFormat\":\"linux_perf\""));
	CHECK(has(&out, "\"originalPayload\":\"aGVsbG8=\""));
	CHECK(has(&out, "\"values\":[\"3\"]"));
	CHECK(has(&out, "\"sampleType\":{\"typeStrindex\":"));
	CHECK(has(&out, "\"stringTable\":[\"\","));
	CHECK(has(&out,
		  "\"mappingTable\":[{},{\"memoryStart\":\"4096\",\"memoryLimit\":\"8192\","));
	CHECK(has(&out, "\"address\":\"4660\""));
	CHECK(has(&out, "\"lines\":[{\"functionIndex\":"));
	CHECK(has(&out, "\"linkTable\":[{}],"));
	CHECK(has(&out, "\"stackTable\":[{},{\"locationIndices\":[1,2]}]"));
	CHECK(has(&out, "{\"stringValue\":\"beef\"}"));
	CHECK(has(&out, "{\"intValue\":\"101\"}"));
	/* escaping */
	CHECK(has(&out, "\"quote\\\"back\\\\slash\\u0001tab\\t\""));
	CHECK(has(&out, "\"bad\\ufffd utf8 \xc3\xa9\""));
	buf__release(&out);
}

TEST(payload_only_in_first_profile)
{
	const struct profile_process_desc other = {200, "other", NULL, NULL, NULL};
	struct profile *p = model();
	struct buf out;
	const char *first;

	CHECK(p);
	CHECK_EQ_U64(profile__add_sample(p, &other, 200, NULL, NULL, 0, 1), 0);
	buf__init(&out, 1 << 20);
	CHECK_EQ_U64(otlp_json__encode(p, &out), 0);
	profile__free(p);
	CHECK_EQ_U64(json_shape((const char *)out.data, out.len), 0);
	first = memmem(out.data, out.len, "originalPayload\"", 16);
	CHECK(first);
	CHECK(!memmem(first + 1, out.len - (size_t)(first + 1 - (const char *)out.data),
		      "originalPayload\"", 16));
	CHECK(has(&out, "{\"key\":\"process.pid\",\"value\":{\"intValue\":\"200\"}}"));
	buf__release(&out);
}

TEST(empty_profile)
{
	struct profile *p = profile__new();
	struct buf out;

	CHECK(p);
	buf__init(&out, 1 << 16);
	CHECK_EQ_U64(otlp_json__encode(p, &out), 0);
	profile__free(p);
	CHECK_EQ_U64(json_shape((const char *)out.data, out.len), 0);
	CHECK(has(&out, "\"resourceProfiles\":[{\"resource\":{\"attributes\":[]}"));
	CHECK(has(&out, "\"locationTable\":[{}]"));
	buf__release(&out);
}

TEST(cap)
{
	struct profile *p = model();
	struct buf out;
	int err;

	CHECK(p);
	buf__init(&out, 100);
	CHECK_EQ_U64(buf__append(&out, "x", 1), 0);
	err = otlp_json__encode(p, &out);
	profile__free(p);
	CHECK_EQ_U64(err, (unsigned long long)-E2BIG);
	CHECK_EQ_U64(out.len, 1);
	buf__release(&out);
}

int main(void)
{
	RUN(keys_and_values);
	RUN(every_field_through_json);
	RUN(payload_only_in_first_profile);
	RUN(empty_profile);
	RUN(cap);
	return TEST_DONE();
}
