/* fuzz_threadctx_attrs.c - libFuzzer harness for the thread-context
 * attributes decoder (threadctx__decode_attrs()): the attrs-data bytes of
 * another process's record, as the BPF program copied them, so untrusted.
 *
 * The first input byte is the key map's size, the rest the attrs-data. Any
 * input must decode without reading outside it (ASan), keep at most
 * THREADCTX_MAX_ATTRS entries with distinct key indexes below the map size,
 * each value inside the input, UTF-8 without NUL.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/threadctx.h"
#include "util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct threadctx_attrs a;
	size_t nkeys, i, j, off;
	uint8_t *copy;

	if (!size)
		return 0;
	nkeys = data[0];
	/* An exact-size heap copy, so ASan sees any read past the end. */
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	threadctx__decode_attrs(copy, size - 1, nkeys, &a);
	if (a.n > THREADCTX_MAX_ATTRS)
		abort();
	for (i = 0; i < a.n; i++) {
		const char *v = a.attr[i].value;

		if (a.attr[i].key >= nkeys || v < (const char *)copy ||
		    (size_t)(v - (const char *)copy) + a.attr[i].len > size - 1)
			abort();
		for (off = 0; off < a.attr[i].len; off += j) {
			j = v[off] ? utf8__decode(v + off, a.attr[i].len - off, NULL) : 0;
			if (!j)
				abort();
		}
		for (j = 0; j < i; j++)
			if (a.attr[j].key == a.attr[i].key)
				abort();
	}
	free(copy);
	return 0;
}
