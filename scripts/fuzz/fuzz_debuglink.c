/* fuzz_debuglink.c - libFuzzer harness for debuglink__parse(), the
 * reader of the .gnu_debuglink section of binaries a profiled process maps
 * (untrusted input: its name becomes part of a path profcap opens).
 *
 * Byte 0 bit 0 picks the byte order. Any input must parse or fail with
 * -EBADMSG; a parsed name is non-empty, NUL-terminated within the buffer,
 * has no '/' and is neither "." nor "..".
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/debuglink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[DEBUGLINK_MAX_NAME];
	__u32 crc = 0;
	int err;

	if (!size)
		return 0;
	err = debuglink__parse(data + 1, size - 1, data[0] & 1, name, sizeof(name), &crc);
	if (err) {
		if (err != -EBADMSG)
			abort();
		return 0;
	}
	if (!memchr(name, '\0', sizeof(name)) || !name[0] || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		abort();
	return 0;
}
