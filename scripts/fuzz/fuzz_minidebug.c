/* fuzz_minidebug.c - libFuzzer harness for minidebug__decompress(), which
 * inflates the xz-compressed .gnu_debugdata (MiniDebugInfo) of binaries a
 * profiled process maps (untrusted input).
 *
 * Any input must decompress or fail with a documented error; output never
 * exceeds the cap (1 MiB here, so bombs stay cheap).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "symbolize/minidebug.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	void *out = NULL;
	size_t len = 0;
	int err = minidebug__decompress(data, size, 1u << 20, &out, &len);

	if (err) {
		if ((err != -EBADMSG && err != -E2BIG && err != -ENOMEM) || out || len)
			abort();
		return 0;
	}
	if (len > (1u << 20) || (len && !out))
		abort();
	free(out);
	return 0;
}
