/* test_scan.c - bounded hex/decimal scanning, scan__all, hex bytes. */
#include <ctype.h>
#include <string.h>

#include "util/hex.h"
#include "util/scan.h"
#include "test.h"

static bool hex(const char *s, size_t len, __u64 *v, size_t *used)
{
	const char *p = s;
	bool ok = scan__hex(&p, s + len, v);

	*used = (size_t)(p - s);
	return ok;
}

TEST(hex)
{
	__u64 v = 7;
	size_t used;

	CHECK(hex("ffffffff81000000 T _stext", 25, &v, &used));
	CHECK_EQ_U64(v, 0xffffffff81000000ULL);
	CHECK_EQ_U64(used, 16);
	CHECK(hex("DeadBeef-1", 10, &v, &used));
	CHECK_EQ_U64(v, 0xdeadbeef);
	CHECK_EQ_U64(used, 8);
	/* the end bound is honoured: only "12" is visible */
	CHECK(hex("1234", 2, &v, &used));
	CHECK_EQ_U64(v, 0x12);
	/* no digit, or 17 digits: refused and nothing changed */
	v = 7;
	CHECK(!hex("xyz", 3, &v, &used));
	CHECK(!hex("", 0, &v, &used));
	CHECK(!hex("10000000000000000", 17, &v, &used));
	CHECK_EQ_U64(v, 7);
	CHECK_EQ_U64(used, 0);
}

TEST(dec)
{
	const char *s = "18446744073709551615 x", *p = s;
	__u64 v = 0;

	CHECK(scan__dec(&p, s + strlen(s), &v));
	CHECK_EQ_U64(v, ~0ULL);
	CHECK_EQ_U64(p - s, 20);
	s = "18446744073709551616";
	p = s;
	v = 3;
	CHECK(!scan__dec(&p, s + strlen(s), &v));
	CHECK(p == s);
	CHECK_EQ_U64(v, 3);
	p = s = "0042:";
	CHECK(scan__dec(&p, s + strlen(s), &v) && v == 42 && *p == ':');
	p = s = "-1";
	CHECK(!scan__dec(&p, s + 2, &v));
}

TEST(all)
{
	CHECK(scan__all("4711", isdigit));
	CHECK(!scan__all("", isdigit));
	CHECK(!scan__all("12a", isdigit));
	CHECK(!scan__all("-1", isdigit));
	/* bytes above 127 reach the test as unsigned char, never negative */
	CHECK(!scan__all("1\xe9", isdigit));
}

TEST(hex_bytes)
{
	const __u8 id[4] = {0x00, 0x9f, 0xa0, 0xff};
	char out[9];
	__u8 back[4] = {0};

	hex__encode(out, id, sizeof(id));
	CHECK(!strcmp(out, "009fa0ff"));
	CHECK(hex__decode("009FA0ff", back, sizeof(back)));
	CHECK(!memcmp(back, id, sizeof(id)));
	CHECK(!hex__decode("009fa0f", back, sizeof(back)));   /* too short */
	CHECK(!hex__decode("009fa0ff0", back, sizeof(back))); /* too long */
	CHECK(!hex__decode("009fa0fg", back, sizeof(back)));  /* not a digit */
	hex__encode(out, id, 0);
	CHECK(!strcmp(out, ""));
}

int main(void)
{
	RUN(hex);
	RUN(dec);
	RUN(all);
	RUN(hex_bytes);
	return TEST_DONE();
}
