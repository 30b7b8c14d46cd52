/* fuzz_gopclntab.c - libFuzzer harness for gopclntab__parse(), which reads
 * the .gopclntab section of every Go binary without a .symtab that a
 * profiled process maps (untrusted input, containers included).
 *
 * Any input must parse or fail with a documented error. A parse that
 * succeeds must return functions sorted by entry, each non-empty, with a
 * NUL-terminated name inside the input.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/gopclntab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopclntab_func *f = NULL;
	size_t n = 0, i;
	int err = gopclntab__parse(data, size, 0x401000, 1u << 16, &f, &n);

	if (err) {
		if (err != -EBADMSG && err != -ENOTSUP && err != -ENOMEM)
			abort();
		if (f || n)
			abort();
		return 0;
	}
	for (i = 0; i < n; i++) {
		const char *name = f[i].name;

		if (f[i].end <= f[i].entry)
			abort();
		if (i && f[i].entry < f[i - 1].entry)
			abort();
		if (name < (const char *)data || name >= (const char *)data + size)
			abort();
		if (!memchr(name, '\0', size - (size_t)(name - (const char *)data)))
			abort();
	}
	free(f);
	return 0;
}
