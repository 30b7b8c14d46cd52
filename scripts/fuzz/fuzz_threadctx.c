/* fuzz_threadctx.c - libFuzzer harness for the thread-context TLS offset
 * reader (proc/threadctx): the executable of a profiled process, so
 * untrusted input.
 *
 * The input is the whole file (in a memfd). It must give an offset or fail
 * with a documented error; an offset found is negative (the executable's
 * block ends at the thread pointer) and the 8-byte variable lies inside it.
 * As a library, its GOT words are then read from the same bytes (address
 * = offset in the input, as if the file were the process's memory): the
 * location found must pass the reader's own range checks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proc/threadctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
	const uint8_t *data;
	size_t size;
};

static int input_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	const struct input *in = ctx;

	if (addr > in->size || len > in->size - addr)
		return -EFAULT;
	memcpy(buf, in->data + addr, len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz_threadctx", MFD_CLOEXEC), err;
	struct input in = {data, size};
	struct threadctx_module m;
	struct threadctx_loc loc;
	__s64 off = 0;

	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	err = threadctx__elf_offset(fd, &off);
	if (err != 0 && err != -ENOENT && err != -ENOEXEC && err != -EFBIG && err != -ENOMEM)
		abort();
	if (!err && off > -8)
		abort();
	if (!err && !threadctx__elf_module(fd, &m)) {
		err = threadctx__module_locate(&m, 0, input_read, &in, &loc);
		if (err && err != -EAGAIN && err != -ENOENT)
			abort();
		if (!err && (loc.modid > THREADCTX_MAX_MODID || (!loc.modid && loc.off >= 0)))
			abort();
	}
	close(fd);
	return 0;
}
