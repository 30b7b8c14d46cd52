/* fuzz_threadctx.c - libFuzzer harness for the thread-context TLS offset
 * reader (proc/threadctx): the executable of a profiled process, so
 * untrusted input.
 *
 * The input is the whole file (in a memfd). It must give an offset or fail
 * with a documented error; an offset found is negative (the executable's
 * block ends at the thread pointer) and the 8-byte variable lies inside it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proc/threadctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz_threadctx", MFD_CLOEXEC), err;
	__s64 off = 0;

	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	err = threadctx__elf_offset(fd, &off);
	close(fd);
	if (err != 0 && err != -ENOENT && err != -ENOEXEC && err != -EFBIG && err != -ENOMEM)
		abort();
	if (!err && off > -8)
		abort();
	return 0;
}
