/* gz.c - whole-buffer gzip with zlib (see gz.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include <libdeflate.h>
#include <zlib.h>

#include "util/gz.h"

/* zlib's avail_in/avail_out are unsigned int: feed large buffers in slices. */
#define SLICE (1U << 30)

/* Make room in @out for more output: up to 64 KiB, less near the cap.
 * Sets *@next and *@avail to it. 0, -E2BIG (at the cap) or -ENOMEM. */
static int room(struct buf *out, Bytef **next, uInt *avail)
{
	size_t want = out->max - out->len;
	int err;

	if (!want)
		return -E2BIG;
	if (want > 64 * 1024)
		want = 64 * 1024;
	err = buf__reserve(out, want);
	if (err)
		return err;
	want = out->cap - out->len;
	if (want > out->max - out->len)
		want = out->max - out->len;
	*next = out->data + out->len;
	*avail = (uInt)(want > SLICE ? SLICE : want);
	return 0;
}

int gz__compress(const void *in, size_t len, struct buf *out)
{
	size_t start = out->len, left = len;
	z_stream z = {0};
	int err, zr, flush;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)in;
	do {
		z.avail_in = left > SLICE ? SLICE : (uInt)left;
		left -= z.avail_in;
		flush = left ? Z_NO_FLUSH : Z_FINISH;
		do {
			err = room(out, &z.next_out, &z.avail_out);
			if (err)
				goto err_out;
			zr = deflate(&z, flush);
			out->len = (size_t)(z.next_out - out->data);
			if (zr == Z_STREAM_ERROR) {
				err = -EIO;
				goto err_out;
			}
		} while (z.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
	} while (left);
	err = 0;
err_out:
	deflateEnd(&z);
	if (err)
		out->len = start;
	return err;
}

/* A gzip inflater reading @len bytes at @in. 0, -E2BIG or -ENOMEM. */
static int inflate_begin(z_stream *z, const void *in, size_t len)
{
	if (len > SLICE)
		return -E2BIG;
	if (inflateInit2(z, 15 + 16) != Z_OK)
		return -ENOMEM;
	z->next_in = (Bytef *)in;
	z->avail_in = (uInt)len;
	return 0;
}

int gz__decompress(const void *in, size_t len, struct buf *out)
{
	size_t start = out->len;
	z_stream z = {0};
	int err, zr;

	err = inflate_begin(&z, in, len);
	if (err)
		return err;
	for (;;) {
		err = room(out, &z.next_out, &z.avail_out);
		if (err)
			goto err_out;
		zr = inflate(&z, Z_NO_FLUSH);
		out->len = (size_t)(z.next_out - out->data);
		if (zr == Z_STREAM_END)
			break;
		if (zr == Z_MEM_ERROR) {
			err = -ENOMEM;
			goto err_out;
		}
		if (zr != Z_OK) {
			/* Z_BUF_ERROR with output room left: the input ended early. */
			err = -EBADMSG;
			goto err_out;
		}
		if (z.avail_out && !z.avail_in) {
			err = -EBADMSG;
			goto err_out;
		}
	}
	err = 0;
err_out:
	inflateEnd(&z);
	if (err)
		out->len = start;
	return err;
}

int gz__inflate_zlib(const void *in, size_t len, void *out, size_t out_len)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	enum libdeflate_result r;

	if (!d)
		return -ENOMEM;
	/* The whole stream in one call (libdeflate: ~3x zlib's inflate on
	 * debug sections). No actual-size pointer: anything but exactly
	 * @out_len bytes is an error; the Adler-32 is checked. */
	r = libdeflate_zlib_decompress(d, in, len, out, out_len, NULL);
	libdeflate_free_decompressor(d);
	return r == LIBDEFLATE_SUCCESS ? 0 : -EBADMSG;
}

size_t gz__plausible_size(size_t len, size_t max)
{
	size_t n = len > SIZE_MAX / GZ_PLAUSIBLE_RATIO ? SIZE_MAX : len * GZ_PLAUSIBLE_RATIO;

	if (n < GZ_PLAUSIBLE_FLOOR)
		n = GZ_PLAUSIBLE_FLOOR;
	return n < max ? n : max;
}

int gz__inflated_size(const void *in, size_t len, size_t limit, size_t *size)
{
	unsigned char scratch[16384];
	z_stream z = {0};
	size_t total = 0;
	int err = 0, zr;

	*size = 0;
	err = inflate_begin(&z, in, len);
	if (err)
		return err;
	for (;;) {
		z.next_out = scratch;
		z.avail_out = sizeof(scratch);
		zr = inflate(&z, Z_NO_FLUSH);
		total += sizeof(scratch) - z.avail_out;
		if (total > limit) {
			err = -E2BIG;
			break;
		}
		if (zr == Z_STREAM_END)
			break;
		if (zr == Z_MEM_ERROR) {
			err = -ENOMEM;
			break;
		}
		/* Z_BUF_ERROR, or no progress with output room: input ended early. */
		if (zr != Z_OK || (z.avail_out && !z.avail_in)) {
			err = -EBADMSG;
			break;
		}
	}
	inflateEnd(&z);
	if (!err)
		*size = total;
	return err;
}

bool gz__is_gzip(const void *in, size_t len)
{
	const unsigned char *b = in;

	return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

int gz__inflate_input(const void *in, size_t len, size_t max, struct buf *out, char *why,
		      size_t whylen)
{
	size_t cap = gz__plausible_size(len, max), size = 0;
	int err = gz__inflated_size(in, len, cap, &size);

	if (err == -E2BIG) {
		snprintf(why, whylen,
			 "gzip data of %zu bytes inflates past %zu bytes, more than a profile of "
			 "that size can hold (a gzip bomb?)",
			 len, cap);
		return err;
	}
	if (!err && !size) {
		snprintf(why, whylen, "empty input (gzip of 0 bytes): no profile");
		return -EBADMSG;
	}
	out->max = size;
	err = err ?: gz__decompress(in, len, out);
	if (err)
		snprintf(why, whylen, "%s",
			 err == -EBADMSG ? "corrupt or truncated gzip data"
					 : "cannot decompress (out of memory)");
	return err;
}

int gz__reader_input(const void **data, size_t *len, size_t max, struct buf *plain, char *why,
		     size_t whylen)
{
	int err;

	if (!gz__is_gzip(*data, *len)) {
		if (*len <= max)
			return 0;
		snprintf(why, whylen, "input of %zu bytes is larger than %zu", *len, max);
		return -E2BIG;
	}
	err = gz__inflate_input(*data, *len, max, plain, why, whylen);
	if (!err) {
		*data = plain->data;
		*len = plain->len;
	}
	return err;
}
