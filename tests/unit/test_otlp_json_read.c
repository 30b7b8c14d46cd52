/* test_otlp_json_read.c - OTLP/JSON -> protobuf transcoding: exact bytes
 * for small documents, the JSON mapping's variants, and errors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opentelemetry/proto/profiles/v1development/profiles.pb.h"

#include "formats/otlp_json_read.h"
#include "util/wire.h"
#include "test.h"

#define OTLP_TAG(msg, field) opentelemetry_proto_profiles_v1development_##msg##_##field##_tag
#define COMMON_TAG(msg, field) opentelemetry_proto_common_v1_##msg##_##field##_tag

/* Transcode @json; returns the error, the bytes in @out. */
static int tc(const char *json, struct buf *out, char *err, size_t errlen)
{
	buf__init(out, 1 << 20);
	return otlp_json_read__transcode(json, strlen(json), out, err, errlen);
}

static int same(const struct buf *b, const char *want, size_t n)
{
	return b->len == n && !memcmp(b->data, want, n);
}

TEST(strings_and_escapes)
{
	/* dictionary (2) { string_table (5): "", "a\u00e9", "\ud83d\ude00\n" } */
	const char want[] = "\x12\x0e"
			    "\x2a\x00"
			    "\x2a\x03" "a\xc3\xa9"
			    "\x2a\x05" "\xf0\x9f\x98\x80\n";
	char err[128];
	struct buf b;

	CHECK(!tc(" {\"dictionary\": {\"stringTable\": [\"\", \"a\\u00e9\", "
		  "\"\\ud83d\\ude00\\n\"]}}\n", &b, err, sizeof(err)));
	CHECK(same(&b, want, sizeof(want) - 1));
	buf__release(&b);
	/* snake_case names are the same fields. */
	CHECK(!tc("{\"dictionary\": {\"string_table\": [\"\", \"a\\u00e9\", "
		  "\"\\ud83d\\ude00\\n\"]}}", &b, err, sizeof(err)));
	CHECK(same(&b, want, sizeof(want) - 1));
	buf__release(&b);
}

TEST(numbers_packed_and_ids)
{
	/* resource_profiles (1) { scope_profiles (2) { profiles (2) {
	 *   samples (2) { stack_index (1) 3, values (4) packed [-1, 300] },
	 *   time_unix_nano (3) fixed64 5, period (6) 1000, profile_id (7) 0xab 0xcd
	 * } } } */
	const char sample[] = "\x08\x03"
			      "\x22\x0c" "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01" "\xac\x02";
	char prof[64], sp[80], rp[96];
	size_t np = 0, ns, nr;
	char err[128];
	struct buf b;

	prof[np++] = 0x12;
	prof[np++] = (char)(sizeof(sample) - 1);
	memcpy(prof + np, sample, sizeof(sample) - 1);
	np += sizeof(sample) - 1;
	memcpy(prof + np, "\x19\x05\x00\x00\x00\x00\x00\x00\x00" "\x30\xe8\x07" "\x3a\x02\xab\xcd",
	       9 + 3 + 4);
	np += 16;
	sp[0] = 0x12;
	sp[1] = (char)np;
	memcpy(sp + 2, prof, np);
	ns = np + 2;
	rp[0] = 0x12;
	rp[1] = (char)ns;
	memcpy(rp + 2, sp, ns);
	nr = ns + 2;
	{
		char all[128];

		all[0] = 0x0a;
		all[1] = (char)nr;
		memcpy(all + 2, rp, nr);
		/* 64-bit values as strings, 32-bit as numbers or strings, 1e3 is
		 * an integer, unknown fields and nulls skipped. */
		CHECK(!tc("{\"resourceProfiles\":[{\"scopeProfiles\":[{\"profiles\":[{"
			  "\"samples\":[{\"stackIndex\":\"3\",\"values\":[\"-1\",300],"
			  "\"future\":{\"x\":[1,{\"y\":null}]}}],"
			  "\"timeUnixNano\":\"5\",\"period\":1e3,\"profileId\":\"abcd\","
			  "\"originalPayload\":null}]}]}]}",
			  &b, err, sizeof(err)));
		CHECK(same(&b, all, nr + 2));
		buf__release(&b);
		/* The same id as base64. */
		CHECK(!tc("{\"resourceProfiles\":[{\"scopeProfiles\":[{\"profiles\":[{"
			  "\"samples\":[{\"stackIndex\":3,\"values\":[-1,\"300\"]}],"
			  "\"timeUnixNano\":5,\"period\":\"1000\",\"profileId\":\"q80=\"}]}]}]}",
			  &b, err, sizeof(err)));
		CHECK(same(&b, all, nr + 2));
		buf__release(&b);
	}
}

TEST(errors_name_the_place)
{
	static const char *const bad[] = {
		"",
		"[]",
		"{\"dictionary\": {\"stringTable\": [\"abc",
		"{\"dictionary\": {\"stringTable\": [1]}}",
		"{\"resourceProfiles\": [{\"scopeProfiles\": [{\"profiles\": [{\"period\": 1.5}]}]}]}",
		"{\"resourceProfiles\": [{\"scopeProfiles\": [{\"profiles\": [{\"durationNano\": -1}]}]}]}",
		"{\"dictionary\": {\"stackTable\": [{\"locationIndices\": [2147483648]}]}}",
		"{\"dictionary\": {}} x",
		"{\"dictionary\" {}}",
		"{\"dictionary\": {\"linkTable\": [{\"traceId\": \"*!\"}]}}",
	};
	char err[128];
	size_t i;
	struct buf b;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(tc(bad[i], &b, err, sizeof(err)) == -EBADMSG);
		CHECK(!strncmp(err, "OTLP/JSON at byte ", 18));
		buf__release(&b);
	}
}

TEST(depth_and_size_caps)
{
	char *deep = malloc(10000), err[128];
	size_t n = 0, i;
	struct buf b;

	CHECK(deep);
	n += (size_t)sprintf(deep, "{\"unknown\": ");
	for (i = 0; i < 1000; i++)
		deep[n++] = '[';
	for (i = 0; i < 1000; i++)
		deep[n++] = ']';
	deep[n++] = '}';
	deep[n] = '\0';
	CHECK(tc(deep, &b, err, sizeof(err)) == -EBADMSG);
	CHECK(strstr(err, "nested deeper"));
	buf__release(&b);
	free(deep);
	/* The output cap holds. */
	buf__init(&b, 4);
	CHECK(otlp_json_read__transcode("{\"dictionary\":{\"stringTable\":[\"abcdef\"]}}", 41, &b,
					err, sizeof(err)) == -E2BIG);
	buf__release(&b);
}

/* The only field of message @w, which must be numbered @num: its reader. */
static bool only_field(struct wire w, __u32 num, struct wire_field *f)
{
	struct wire_field rest;

	return wire__next(&w, f) == 1 && f->num == num && wire__next(&w, &rest) == 0;
}

/* The field numbers written are the generated headers' (the schema has one
 * source): a path through ProfilesData down to a oneof member of AnyValue. */
TEST(schema_from_generated_headers)
{
	struct wire_field f;
	struct wire w;
	char err[128];
	struct buf b;

	CHECK(!tc("{\"dictionary\": {\"attributeTable\": [{\"value\": "
		  "{\"arrayValue\": {\"values\": [{\"boolValue\": true}]}}}]}}",
		  &b, err, sizeof(err)));
	w = wire__from(b.data, b.len);
	CHECK(only_field(w, OTLP_TAG(ProfilesData, dictionary), &f));
	CHECK(only_field(f.sub, OTLP_TAG(ProfilesDictionary, attribute_table), &f));
	CHECK(only_field(f.sub, OTLP_TAG(KeyValueAndUnit, value), &f));
	CHECK(only_field(f.sub, COMMON_TAG(AnyValue, array_value), &f));
	CHECK(only_field(f.sub, COMMON_TAG(ArrayValue, values), &f));
	CHECK(only_field(f.sub, COMMON_TAG(AnyValue, bool_value), &f));
	CHECK(f.wt == WIRE_VARINT && f.v == 1);
	buf__release(&b);
}

TEST(looks_like)
{
	CHECK(otlp_json_read__looks_like(" \n{", 3));
	CHECK(!otlp_json_read__looks_like("\x0a\x05", 2));
	CHECK(!otlp_json_read__looks_like("   ", 3));
}

int main(void)
{
	RUN(strings_and_escapes);
	RUN(numbers_packed_and_ids);
	RUN(errors_name_the_place);
	RUN(depth_and_size_caps);
	RUN(looks_like);
	RUN(schema_from_generated_headers);
	return TEST_DONE();
}
