/* fuzz_procctx.c - libFuzzer harness for the OpenTelemetry process-context
 * reader (proc/procctx): bytes another process put in its OTEL_CTX mapping,
 * so untrusted input.
 *
 * The input is a 32-byte header followed by the payload bytes. The header
 * goes through procctx__parse_header() (for a mapping at 0x1000-0x2000);
 * the rest through procctx__decode(). Any input must decode or fail with a
 * documented error; a decoded context must hold at most PROCCTX_MAX_ATTRS
 * unique, non-empty, bounded, NUL-free keys with bounded values, and a
 * thread-context key map of at most PROCCTX_MAX_THREAD_KEYS bounded names.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/procctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procctx_header h;
	struct procctx c;
	size_t i, j;
	int err;

	if (size >= PROCCTX_HEADER_SIZE) {
		err = procctx__parse_header(data, size, 0x1000, 0x2000, &h);
		if (err != 0 && err != -EINVAL && err != -EPROTONOSUPPORT && err != -EFBIG &&
		    err != -EAGAIN)
			abort();
		if (!err && (h.payload_size > PROCCTX_MAX_PAYLOAD || !h.payload ||
			     (h.payload >= 0x1000 && h.payload < 0x2000 &&
			      h.payload + h.payload_size > 0x2000)))
			abort();
		data += PROCCTX_HEADER_SIZE;
		size -= PROCCTX_HEADER_SIZE;
	}
	err = procctx__decode(data, size, &c);
	if (err != 0 && err != -EBADMSG)
		abort();
	if (err && c.n)
		abort();
	if (c.n > PROCCTX_MAX_ATTRS)
		abort();
	for (i = 0; i < c.n; i++) {
		if (!c.kv[i].key[0] || strlen(c.kv[i].key) > PROCCTX_MAX_KEY ||
		    strlen(c.kv[i].value) > PROCCTX_MAX_VALUE)
			abort();
		for (j = 0; j < i; j++)
			if (!strcmp(c.kv[i].key, c.kv[j].key))
				abort();
	}
	if (c.nthread_keys > PROCCTX_MAX_THREAD_KEYS || (err && c.nthread_keys))
		abort();
	for (i = 0; i < c.nthread_keys; i++)
		if (c.thread_keys[i] &&
		    (!c.thread_keys[i][0] || strlen(c.thread_keys[i]) > PROCCTX_MAX_KEY))
			abort();
	procctx__clear(&c);
	return 0;
}
