/* fuzz_cfi.c - libFuzzer harness for cfi__parse(), the unwind table compiler
 * that reads every executable file a profiled process maps (files from
 * containers included, so: untrusted input): .eh_frame/.debug_frame, and
 * for Go code the runtime's function table (pclntab: collect/gopcln.c and
 * cfi_go.c).
 *
 * The first byte picks the mode: even, the rest is a whole ELF file; odd,
 * the rest from byte 2 on is wrapped in a minimal valid x86-64 ELF file, so
 * mutations reach the tables themselves. Byte 1 says as what:
 *   bit 1 clear  an .eh_frame (bit 0 set: a .debug_frame);
 *   bit 1 set    a Go pclntab: .gopclntab with a .text at GO_TEXT;
 *   bits 1, 2    a Go PIE by the system linker: .data.rel.ro at GO_RO and
 *                .rela.dyn (its size the next two bytes, little-endian; its
 *                bytes follow them, the data after) with Go's build-id note.
 * Any input must parse or fail with a documented error; rows must come out
 * strictly ascending with valid rule types, and cfi__find() must agree with
 * them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/cfi.h"
#include "unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define GO_TEXT 0x401000u
#define GO_RO 0x9000u
#define MAX_SECS 4

struct sec {
	const char *name;
	uint32_t type; /* SHT_PROGBITS 1, SHT_RELA 4, SHT_NOTE 7, SHT_NOBITS 8 */
	uint64_t addr;
	const uint8_t *data;
	size_t len; /* bytes in the file, or the size of a NOBITS section */
};

static void put(uint8_t *b, size_t at, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		b[at + i] = (uint8_t)(v >> (8 * i));
}

/* ELF header, the sections' bytes, ".shstrtab", the section headers (a
 * null one, @n of @secs, .shstrtab). */
static uint8_t *wrap(const struct sec *secs, size_t n, size_t *out_len)
{
	size_t off[MAX_SECS], name_at[MAX_SECS], at = 64, stroff, strsz = 1, shoff, total, i;
	uint8_t *b;

	for (i = 0; i < n; i++) {
		off[i] = at;
		if (secs[i].type != 8)
			at += (secs[i].len + 7) & ~(size_t)7;
		name_at[i] = strsz;
		strsz += strlen(secs[i].name) + 1;
	}
	stroff = at;
	strsz += 10; /* ".shstrtab" */
	shoff = (stroff + strsz + 7) & ~(size_t)7;
	total = shoff + (n + 2) * 64;
	b = calloc(1, total);
	if (!b)
		return NULL;
	memcpy(b, "\177ELF\2\1\1", 7);
	put(b, 16, 3, 2);  /* ET_DYN */
	put(b, 18, 62, 2); /* EM_X86_64 */
	put(b, 40, shoff, 8);
	put(b, 58, 64, 2);
	put(b, 60, n + 2, 2);
	put(b, 62, n + 1, 2);
	for (i = 0; i < n; i++) {
		uint8_t *sh = b + shoff + (i + 1) * 64;

		if (secs[i].type != 8 && secs[i].len)
			memcpy(b + off[i], secs[i].data, secs[i].len);
		memcpy(b + stroff + name_at[i], secs[i].name, strlen(secs[i].name));
		put(sh, 0, name_at[i], 4);
		put(sh, 4, secs[i].type, 4);
		put(sh, 16, secs[i].addr, 8);
		put(sh, 24, off[i], 8);
		put(sh, 32, secs[i].len, 8);
	}
	memcpy(b + stroff + strsz - 10, ".shstrtab", 10);
	put(b, shoff + (n + 1) * 64, strsz - 10, 4);
	put(b, shoff + (n + 1) * 64 + 4, 3, 4);
	put(b, shoff + (n + 1) * 64 + 24, stroff, 8);
	put(b, shoff + (n + 1) * 64 + 32, strsz, 8);
	*out_len = total;
	return b;
}

/* The ELF file of mode byte @how around @p (@len bytes). */
static uint8_t *wrap_mode(uint8_t how, const uint8_t *p, size_t len, size_t *out_len)
{
	struct sec s[MAX_SECS] = {{".text", 8, GO_TEXT, NULL, 0x10000}};
	size_t rela;

	if (!(how & 2)) {
		s[0] = (struct sec){how & 1 ? ".debug_frame" : ".eh_frame", 1, 0x1000, p, len};
		return wrap(s, 1, out_len);
	}
	if (!(how & 4)) {
		s[1] = (struct sec){".gopclntab", 1, 0x500000, p, len};
		return wrap(s, 2, out_len);
	}
	if (len < 2)
		return NULL;
	rela = p[0] | (size_t)p[1] << 8;
	if (rela > len - 2)
		rela = len - 2;
	s[1] = (struct sec){".note.go.buildid", 7, 0x400, NULL, 0};
	s[2] = (struct sec){".rela.dyn", 4, 0x800, p + 2, rela};
	s[3] = (struct sec){".data.rel.ro", 1, GO_RO, p + 2 + rela, len - 2 - rela};
	return wrap(s, 4, out_len);
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
		img = wrap_mode(data[1], data + 2, size - 2, &len);
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
