/* fuzz_dwarf.c - libFuzzer harness for symbolize/dwarf.c: libdw's decoding
 * of whatever DWARF a mapped file or a debug file found for it holds
 * (files of containers included, so: untrusted input), and our own indexes
 * over it (unit ranges, scope segments, the address cache).
 *
 * The input is a whole ELF file (seeds: small -g binaries). It is opened
 * from a memfd as the symbolizer opens files; then addresses are looked up:
 * 256 spread over the low 64 KiB (where the seeds' code is) and 64 taken
 * from the input itself, each twice (the second from the cache, which must
 * give the same answer). Any input must open or fail with a documented
 * error; every line returned must be well formed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/dwarf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(struct dwarf_lines *d, __u64 a)
{
	const struct profile_line *l, *l2;
	size_t n, n2, i;
	bool ok = dwarf_lines__lookup(d, a, (a & 1) ? "outer" : NULL, &l, &n);

	if (ok != (n > 0) || n > PROFILE_MAX_LINES || (n && !l))
		abort();
	for (i = 0; i < n; i++)
		if (l[i].line < 0 || l[i].column < 0 || l[i].start_line < 0 ||
		    (l[i].function && strlen(l[i].function) > (1u << 30)) ||
		    (l[i].filename && strlen(l[i].filename) > (1u << 30)))
			abort();
	if (dwarf_lines__lookup(d, a, NULL, &l2, &n2) != ok || n2 != n || l2 != l)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarf_lines *d = NULL;
	int fd = memfd_create("fuzz_dwarf", MFD_CLOEXEC), err;
	size_t i;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	err = dwarf_lines__open_fd(fd, &d);
	close(fd);
	if (err) {
		if ((err != -ENOENT && err != -ENOEXEC && err != -ENOMEM && err != -EMFILE) || d)
			abort();
		return 0;
	}
	for (i = 0; i < 256; i++)
		check(d, i * 256 + (i % 7));
	for (i = 0; i + 8 <= size && i < 64 * 8; i += 8) {
		__u64 a;

		memcpy(&a, data + i, 8);
		check(d, a & 0xffffff);
	}
	dwarf_lines__free(d);
	return 0;
}
