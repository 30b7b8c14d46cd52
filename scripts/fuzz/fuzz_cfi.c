/* fuzz_cfi.c - libFuzzer harness for cfi__parse(), the .eh_frame/.debug_frame
 * compiler that reads every executable file a profiled process maps (files
 * from containers included, so: untrusted input).
 *
 * The first byte picks the mode: even, the rest is a whole ELF file; odd, the
 * rest is the contents of an .eh_frame (byte 1 bit 0: .debug_frame) wrapped
 * in a minimal valid ELF file, so mutations reach the CFA programs. Any input
 * must parse or fail with a documented error; rows must come out strictly
 * ascending with valid rule types, and cfi__find() must agree with them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/cfi.h"
#include "unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put(uint8_t *b, size_t at, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		b[at + i] = (uint8_t)(v >> (8 * i));
}

/* ELF header, the section, ".shstrtab", three section headers. */
static uint8_t *wrap(const uint8_t *sec, size_t len, int debug, size_t *out_len)
{
	const char *name = debug ? ".debug_frame" : ".eh_frame";
	size_t nl = strlen(name), stroff = 64 + len, strsz = 1 + nl + 1 + 10;
	size_t shoff = (stroff + strsz + 7) & ~(size_t)7, total = shoff + 3 * 64;
	uint8_t *b = calloc(1, total);

	if (!b)
		return NULL;
	memcpy(b, "\177ELF\2\1\1", 7);
	put(b, 16, 3, 2);
	put(b, 18, 62, 2);
	put(b, 40, shoff, 8);
	put(b, 58, 64, 2);
	put(b, 60, 3, 2);
	put(b, 62, 2, 2);
	memcpy(b + 64, sec, len);
	memcpy(b + stroff + 1, name, nl);
	memcpy(b + stroff + 2 + nl, ".shstrtab", 10);
	put(b, shoff + 64, 1, 4);
	put(b, shoff + 64 + 4, 1, 4);
	put(b, shoff + 64 + 16, 0x1000, 8);
	put(b, shoff + 64 + 24, 64, 8);
	put(b, shoff + 64 + 32, len, 8);
	put(b, shoff + 128, 2 + nl, 4);
	put(b, shoff + 128 + 4, 3, 4);
	put(b, shoff + 128 + 24, stroff, 8);
	put(b, shoff + 128 + 32, strsz, 8);
	*out_len = total;
	return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_table *t = NULL;
	const struct cfi_row *rows, *r;
	uint8_t *img = NULL;
	size_t len, n, i;
	int ret;

	if (size < 2)
		return 0;
	if (data[0] & 1) {
		img = wrap(data + 2, size - 2, data[1] & 1, &len);
		if (!img)
			return 0;
		ret = cfi__parse(img, len, &t);
	} else {
		/* An exact-size copy so ASan sees any read past the end. */
		img = malloc(size - 1);
		if (!img)
			return 0;
		memcpy(img, data + 1, size - 1);
		ret = cfi__parse(img, size - 1, &t);
	}
	if (ret) {
		if (t || (ret != -ENOEXEC && ret != -ENOENT && ret != -E2BIG && ret != -ENOMEM)) {
			fprintf(stderr, "bad failure %d (table %p)\n", ret, (void *)t);
			abort();
		}
		free(img);
		return 0;
	}
	rows = cfi__rows(t, &n);
	for (i = 0; i < n; i++) {
		if (rows[i].cfa_type < 0 || rows[i].cfa_type > UNWIND_CFA_UNSUPPORTED ||
		    rows[i].rbp_type < 0 || rows[i].rbp_type > UNWIND_RBP_UNKNOWN ||
		    (i && rows[i].pc <= rows[i - 1].pc)) {
			fprintf(stderr, "bad row %zu of %zu\n", i, n);
			abort();
		}
		r = cfi__find(t, rows[i].pc);
		if (r != &rows[i])
			abort();
		(void)cfi__pack(&rows[i]);
	}
	cfi__free(t);
	free(img);
	return 0;
}
