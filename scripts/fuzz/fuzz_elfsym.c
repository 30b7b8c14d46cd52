/* fuzz_elfsym.c - libFuzzer harness for elfsym__open_mem(), the ELF symbol
 * table reader (.symtab/.dynsym, build-id note, program headers) that runs
 * on files of profiled processes: hostile input. An image without a .symtab
 * gets the symbols it embeds too (elfsym__add_embedded_fd(), through a
 * memfd: MiniDebugInfo, Go's pclntab in its sections or in .data.rel.ro).
 * Every symbol lookup of a parsed image returns a NUL-terminated name at or
 * below the address; offset-to-vaddr and the build-id note reader are
 * exercised too. Built against the system libelf (libelf-dev). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* elfsym__add_embedded_fd() of @e on a memfd holding @data. */
static void add_embedded(struct elfsym *e, const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz_elfsym", MFD_CLOEXEC), err;

	if (fd < 0)
		return;
	if (write(fd, data, size) == (ssize_t)size) {
		err = elfsym__add_embedded_fd(e, fd);
		if (err && err != -ENOENT && err != -ENOEXEC && err != -EBADMSG &&
		    err != -ENOTSUP && err != -ENOMEM && err != -E2BIG) {
			fprintf(stderr, "bad failure %d\n", err);
			abort();
		}
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfsym *e = NULL;
	char hex[128];
	__u64 vaddr, sym, addr;
	size_t i;
	int ret;

	(void)elfsym__note_build_id(data, size, hex, sizeof(hex));
	ret = elfsym__open_mem(data, size, &e);
	if (ret) {
		if (e)
			abort();
		return 0;
	}
	if (elfsym__build_id(e))
		(void)strlen(elfsym__build_id(e));
	if (!elfsym__has_symtab(e))
		add_embedded(e, data, size);
	for (i = 0; i + 8 <= size && i < 64 * 8; i += 8) {
		const char *name;

		memcpy(&addr, data + i, 8);
		name = elfsym__lookup(e, addr, &sym);
		if (name && (strlen(name) > (size_t)-2 || sym > addr))
			abort();
		(void)elfsym__offset_to_vaddr(e, addr, &vaddr);
	}
	(void)elfsym__symbol_count(e);
	(void)elfsym__truncated(e);
	elfsym__free(e);
	return 0;
}
