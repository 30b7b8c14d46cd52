#include <errno.h>
#include <lzma.h>
#include <stdlib.h>

#include "symbolize/minidebug.h"

/* liblzma's decoder memory cap (dictionaries of xz -9 need 64 MiB). */
#define MEMLIMIT (80u << 20)

int minidebug__decompress(const void *in, size_t len, size_t cap, void **out, size_t *out_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	unsigned char *buf = NULL, *nbuf;
	size_t size = 0;
	lzma_ret ret;
	int err = 0;

	*out = NULL;
	*out_len = 0;
	if (!in || !len)
		return -EBADMSG;
	if (lzma_stream_decoder(&strm, MEMLIMIT, 0) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = in;
	strm.avail_in = len;
	do {
		if (!strm.avail_out) {
			size_t nsize = size ? size * 2 : len * 4 + 4096;

			if (size >= cap) {
				err = -E2BIG;
				goto out;
			}
			if (nsize > cap)
				nsize = cap;
			nbuf = realloc(buf, nsize);
			if (!nbuf) {
				err = -ENOMEM;
				goto out;
			}
			buf = nbuf;
			strm.next_out = buf + (size_t)strm.total_out;
			strm.avail_out = nsize - (size_t)strm.total_out;
			size = nsize;
		}
		ret = lzma_code(&strm, LZMA_FINISH);
	} while (ret == LZMA_OK);
	if (ret != LZMA_STREAM_END) {
		err = ret == LZMA_MEM_ERROR ? -ENOMEM : -EBADMSG;
		goto out;
	}
	*out = buf;
	*out_len = (size_t)strm.total_out;
	buf = NULL;
out:
	lzma_end(&strm);
	free(buf);
	return err;
}
