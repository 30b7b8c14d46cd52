/* fuzz_gz.c - libFuzzer harness for util/gz.c on hostile gzip input:
 * gz__inflated_size() under a small limit and gz__decompress() into a
 * buffer of exactly that size must agree (same length, no -E2BIG), and
 * compressing the result again must round-trip. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/gz.h"

#define LIMIT (4u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf plain, again, back;
	size_t n = 0;
	int ret = gz__inflated_size(data, size, LIMIT, &n);

	if (ret) {
		if (ret != -E2BIG && ret != -EBADMSG && ret != -ENOMEM)
			abort();
		return 0;
	}
	if (n > LIMIT)
		abort();
	buf__init(&plain, n ? n : 1);
	buf__init(&again, LIMIT * 2);
	buf__init(&back, LIMIT);
	ret = gz__decompress(data, size, &plain);
	if (ret == 0 && plain.len != n)
		abort();
	if (ret && ret != -ENOMEM) {
		/* What measured fine must inflate fine. (A gzip of nothing needs
		 * no room: -E2BIG is then only from a cap of 0, not used here.) */
		fprintf(stderr, "size pass ok (%zu) but decompress %d\n", n, ret);
		abort();
	}
	if (!ret && !gz__compress(plain.data, plain.len, &again) &&
	    !gz__decompress(again.data, again.len, &back) &&
	    (back.len != plain.len || memcmp(back.data, plain.data, plain.len)))
		abort();
	buf__release(&plain);
	buf__release(&again);
	buf__release(&back);
	return 0;
}
