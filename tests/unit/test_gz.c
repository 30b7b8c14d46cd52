/* test_gz.c - gzip round trip, output caps, corrupt and truncated input. */
#include <errno.h>
#include <stdlib.h>

#include "util/buf.h"
#include "util/gz.h"
#include "test.h"

static unsigned char *sample(size_t n)
{
	unsigned char *p = malloc(n);
	unsigned int x = 12345;

	for (size_t i = 0; p && i < n; i++) {
		x = x * 1103515245 + 12345;
		/* compressible: small alphabet */
		p[i] = (unsigned char)('a' + (x >> 16) % 8);
	}
	return p;
}

TEST(round_trip)
{
	const size_t n = 300000;
	unsigned char *in = sample(n);
	struct buf z, out;

	CHECK(in);
	buf__init(&z, n * 2);
	buf__init(&out, n);
	CHECK_EQ_U64(gz__compress(in, n, &z), 0);
	CHECK(z.len < n / 2);
	/* gzip magic */
	CHECK_EQ_U64(z.data[0], 0x1f);
	CHECK_EQ_U64(z.data[1], 0x8b);
	CHECK_EQ_U64(gz__decompress(z.data, z.len, &out), 0);
	CHECK_EQ_U64(out.len, n);
	CHECK(!memcmp(out.data, in, n));

	/* Empty input is a valid gzip member. */
	buf__reset(&z);
	buf__reset(&out);
	CHECK_EQ_U64(gz__compress("", 0, &z), 0);
	CHECK(z.len >= 18);
	CHECK_EQ_U64(gz__decompress(z.data, z.len, &out), 0);
	CHECK_EQ_U64(out.len, 0);
	buf__release(&z);
	buf__release(&out);
	free(in);
}

TEST(caps_and_corruption)
{
	const size_t n = 100000;
	unsigned char *in = sample(n);
	struct buf z, small, out;

	CHECK(in);
	buf__init(&z, n * 2);
	CHECK_EQ_U64(gz__compress(in, n, &z), 0);

	/* Output past the cap: -E2BIG and the buffer keeps its length. */
	buf__init(&small, n - 1);
	CHECK_EQ_U64(buf__append(&small, "ab", 2), 0);
	CHECK_EQ_U64(gz__decompress(z.data, z.len, &small), -E2BIG);
	CHECK_EQ_U64(small.len, 2);
	buf__release(&small);
	buf__init(&small, 100);
	CHECK_EQ_U64(gz__compress(in, n, &small), -E2BIG);
	CHECK_EQ_U64(small.len, 0);
	buf__release(&small);

	buf__init(&out, n);
	CHECK_EQ_U64(gz__decompress(z.data, z.len / 2, &out), -EBADMSG); /* truncated */
	CHECK_EQ_U64(out.len, 0);
	CHECK_EQ_U64(gz__decompress(in, 100, &out), -EBADMSG); /* not gzip */
	z.data[z.len / 2] ^= 0xff;
	CHECK(gz__decompress(z.data, z.len, &out) < 0); /* corrupt */
	CHECK_EQ_U64(out.len, 0);
	buf__release(&out);
	buf__release(&z);
	free(in);
}

int main(void)
{
	RUN(round_trip);
	RUN(caps_and_corruption);
	return TEST_DONE();
}
