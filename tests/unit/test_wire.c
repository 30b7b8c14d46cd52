/* test_wire.c - the protobuf wire reader: fields of each wire type, nested
 * readers, packed lists, and every malformation it must refuse. */
#include <errno.h>

#include "test.h"
#include "util/wire.h"

#define W(bytes) wire__from(bytes, sizeof(bytes) - 1)

TEST(fields_of_each_type)
{
	/* 1: varint 300, 2: fixed64, 3: "ab", 4: fixed32 */
	static const char in[] = "\x08\xac\x02"
				 "\x11\x01\x02\x03\x04\x05\x06\x07\x08"
				 "\x1a\x02"
				 "ab"
				 "\x25\x01\x00\x00\x80";
	struct wire w = W(in);
	struct wire_field f;

	CHECK(wire__next(&w, &f) == 1);
	CHECK(f.num == 1 && f.wt == WIRE_VARINT);
	CHECK_EQ_U64(f.v, 300);
	CHECK(wire__next(&w, &f) == 1);
	CHECK(f.num == 2 && f.wt == WIRE_I64);
	CHECK_EQ_U64(f.v, 0x0807060504030201ull);
	CHECK(wire__next(&w, &f) == 1);
	CHECK(f.num == 3 && f.wt == WIRE_LEN);
	CHECK(wire__left(&f.sub) == 2 && !memcmp(wire__pos(&f.sub), "ab", 2));
	CHECK(wire__next(&w, &f) == 1);
	CHECK(f.num == 4 && f.wt == WIRE_I32);
	CHECK_EQ_U64(f.v, 0x80000001u);
	CHECK(wire__next(&w, &f) == 0);
	CHECK(wire__next(&w, &f) == 0);
}

TEST(nested_reader_is_bounded)
{
	/* 1: { 1: 7 } then 2: 9; the inner reader stops at its own end. */
	static const char in[] = "\x0a\x02\x08\x07\x10\x09";
	struct wire w = W(in), inner;
	struct wire_field f, g;

	CHECK(wire__next(&w, &f) == 1);
	inner = f.sub;
	CHECK(wire__next(&inner, &g) == 1);
	CHECK(g.num == 1 && g.v == 7);
	CHECK(wire__next(&inner, &g) == 0);
	CHECK(wire__next(&w, &f) == 1);
	CHECK(f.num == 2 && f.v == 9);
}

static int sum(void *arg, __u64 v)
{
	*(__u64 *)arg += v;
	return 0;
}

static int stop(void *arg, __u64 v)
{
	(void)arg;
	return v == 2 ? -E2BIG : 0;
}

TEST(packed_and_unpacked_lists)
{
	static const char packed[] = "\x0a\x03\x01\x02\x03";
	static const char one[] = "\x08\x05";
	static const char fixed[] = "\x12\x10"
				    "0123456789abcdef";
	static const char badfixed[] = "\x12\x03"
				       "abc";
	struct wire w = W(packed);
	struct wire_field f;
	__u64 total = 0;
	size_t n = 0;

	CHECK(wire__next(&w, &f) == 1);
	CHECK(wire__each_varint(&f, sum, &total) == 0);
	CHECK_EQ_U64(total, 6);
	CHECK(wire__each_varint(&f, stop, NULL) == -E2BIG);
	CHECK(wire__count_fixed64(&f, &n) == -EBADMSG);
	w = W(one);
	CHECK(wire__next(&w, &f) == 1);
	CHECK(wire__each_varint(&f, sum, &total) == 0);
	CHECK_EQ_U64(total, 11);
	CHECK(wire__count_fixed64(&f, &n) == -EPROTOTYPE);
	w = W(fixed);
	CHECK(wire__next(&w, &f) == 1);
	n = 0;
	CHECK(wire__count_fixed64(&f, &n) == 0);
	CHECK(n == 2);
	w = W(badfixed);
	CHECK(wire__next(&w, &f) == 1);
	CHECK(wire__count_fixed64(&f, &n) == -EBADMSG);
}

TEST(truncated_packed_varint)
{
	static const char in[] = "\x0a\x02\x01\x80";
	struct wire w = W(in);
	struct wire_field f;
	__u64 total = 0;

	CHECK(wire__next(&w, &f) == 1);
	CHECK(wire__each_varint(&f, sum, &total) == -EBADMSG);
}

/* Each malformed input fails with the reason given, and stays failed. */
TEST(malformed)
{
	static const struct {
		const char *in;
		size_t len;
		const char *why;
	} cases[] = {
		{"\x08", 1, "truncated: data ends inside a field"},
		{"\x08\x80", 2, "truncated: data ends inside a field"},
		{"\x80", 1, "truncated: data ends inside a field"},
		{"\x09\x01\x02", 3, "truncated: data ends inside a field"},
		{"\x0d\x01", 2, "truncated: data ends inside a field"},
		{"\x0a\x05"
		 "ab",
		 4, "a length runs past the end of its message"},
		{"\x00\x01", 2, "field number 0"},
		{"\x0b", 1, "group or invalid wire type"},
		{"\x0f", 1, "group or invalid wire type"},
		{"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12,
		 "varint overflow: longer than 10 bytes"},
		{"\xf8\xff\xff\xff\x7f\x00", 6, "field number too large"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wire w = wire__from(cases[i].in, cases[i].len);
		struct wire_field f;
		int ret;

		while ((ret = wire__next(&w, &f)) > 0)
			;
		CHECK(ret == -EBADMSG);
		CHECK_STR(wire__why(&w), cases[i].why);
		CHECK(wire__next(&w, &f) == -EBADMSG);
	}
}

TEST(limits)
{
	/* a 10-byte varint is the largest; the largest field number is fine */
	static const char in[] = "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
				 "\xf8\xff\xff\xff\x0f\x00";
	struct wire w = W(in), empty = wire__from(NULL, 0);
	struct wire_field f;

	CHECK(wire__next(&w, &f) == 1);
	CHECK_EQ_U64(f.v, ~0ull);
	CHECK(wire__next(&w, &f) == 1);
	CHECK_EQ_U64(f.num, (1u << 29) - 1);
	CHECK(wire__next(&empty, &f) == 0);
	CHECK_STR(wire__type_name(WIRE_LEN), "length-delimited");
	CHECK_STR(wire__why(&empty), "malformed");
}

int main(void)
{
	RUN(fields_of_each_type);
	RUN(nested_reader_is_bounded);
	RUN(packed_and_unpacked_lists);
	RUN(truncated_packed_varint);
	RUN(malformed);
	RUN(limits);
	return TEST_DONE();
}
