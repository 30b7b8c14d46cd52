/* fuzz_elfsym.c - libFuzzer harness for elfsym__open_mem(), the ELF symbol
 * table reader (.symtab/.dynsym, build-id note, program headers) that runs
 * on files of profiled processes: hostile input. Every symbol lookup of a
 * parsed image returns a NUL-terminated name at or below the address;
 * offset-to-vaddr and the build-id note reader are exercised too. Built
 * against the system libelf (libelf-dev). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
