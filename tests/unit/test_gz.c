/* test_gz.c - gzip round trip, output caps, corrupt and truncated input;
 * zlib streams inflated to an exact size (ELF compressed sections). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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

/* A zlib stream (what an ELF SHF_COMPRESSED section holds after its
 * header) inflates into a buffer of exactly the recorded size; any other
 * size, truncation or corruption is -EBADMSG. */
TEST(zlib_exact_size)
{
	const size_t n = 200000;
	unsigned char *in = sample(n), *out = malloc(n + 1);
	uLongf zlen = compressBound(n);
	unsigned char *z = malloc(zlen);

	CHECK(in && out && z);
	CHECK_EQ_U64(compress(z, &zlen, in, n), Z_OK);
	memset(out, 0, n + 1);
	CHECK_EQ_U64(gz__inflate_zlib(z, zlen, out, n), 0);
	CHECK(!memcmp(out, in, n));
	CHECK_EQ_U64(gz__inflate_zlib(z, zlen, out, n - 1), -EBADMSG); /* larger than said */
	CHECK_EQ_U64(gz__inflate_zlib(z, zlen, out, n + 1), -EBADMSG); /* smaller than said */
	CHECK_EQ_U64(gz__inflate_zlib(z, zlen / 2, out, n), -EBADMSG); /* truncated */
	CHECK_EQ_U64(gz__inflate_zlib(in, 1000, out, n), -EBADMSG);    /* not zlib */
	z[zlen / 2] ^= 0xff;
	CHECK(gz__inflate_zlib(z, zlen, out, n) < 0); /* corrupt */
	free(z);
	free(out);
	free(in);
}

int main(void)
{
	RUN(round_trip);
	RUN(caps_and_corruption);
	RUN(zlib_exact_size);
	return TEST_DONE();
}
