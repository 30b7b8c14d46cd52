/* cfi_elf.c - the ELF headers cfi__parse() needs: loadable segments and
 * the CFI sections, read without libelf (see cfi.h). */
#include "collect/cfi_int.h"

static __u64 get(const __u8 *p, unsigned int n)
{
	__u64 v = 0;

	for (unsigned int i = 0; i < n; i++)
		v |= (__u64)p[i] << (8 * i);
	return v;
}

/* Keep the PT_LOAD segments (to map file offsets to addresses). */
void cfi__read_segments(const __u8 *img, size_t size, struct cfi_table *t)
{
	__u64 phoff = get(img + 32, 8), phnum = get(img + 56, 2), i;

	if (get(img + 54, 2) != 56 || phoff >= size || phnum > (size - phoff) / 56)
		return;
	for (i = 0; i < phnum && t->nseg < CFI_MAX_SEGMENTS; i++) {
		const __u8 *ph = img + phoff + i * 56;

		if (get(ph, 4) != 1 /* PT_LOAD */)
			continue;
		t->seg[t->nseg].offset = get(ph + 8, 8);
		t->seg[t->nseg].vaddr = get(ph + 16, 8);
		t->seg[t->nseg].filesz = get(ph + 32, 8);
		t->nseg++;
	}
}

/* Which of @s a section named @nm is, or NULL. */
static struct section *wanted(struct cfi_sections *s, const char *nm)
{
	if (!strcmp(nm, ".eh_frame"))
		return &s->eh;
	if (!strcmp(nm, ".debug_frame"))
		return &s->dbg;
	if (!strcmp(nm, ".eh_frame_hdr"))
		return &s->hdr;
	/* A PIE's (internally linked) pclntab is relocated data. */
	if (!strcmp(nm, ".gopclntab") || !strcmp(nm, ".data.rel.ro.gopclntab"))
		return &s->go;
	if (!strcmp(nm, ".text"))
		return &s->text;
	if (!strcmp(nm, ".data.rel.ro"))
		return &s->rodata;
	if (!strcmp(nm, ".rela.dyn"))
		return &s->rela;
	if (!strcmp(nm, ".note.go.buildid") || !strcmp(nm, ".go.buildinfo"))
		s->go_note = true;
	return NULL;
}

/* Find the sections of @s. 0 or -ENOEXEC. */
int cfi__find_sections(const __u8 *img, size_t size, struct cfi_sections *s)
{
	__u64 shoff, shnum, shstrndx, stroff, strsize, i;
	const __u8 *sh;

	if (size < EHDR_SIZE || memcmp(img, "\177ELF", 4) || img[4] != 2 /* ELFCLASS64 */ ||
	    img[5] != 1 /* little endian */ || get(img + 18, 2) != EM_X86_64)
		return -ENOEXEC;
	shoff = get(img + 40, 8);
	shnum = get(img + 60, 2);
	shstrndx = get(img + 62, 2);
	if (get(img + 58, 2) != SHDR_SIZE || !shoff || shoff >= size || size - shoff < SHDR_SIZE)
		return -ENOEXEC;
	if (!shnum)
		shnum = get(img + shoff + 32, 8); /* extended numbering */
	if (shstrndx == 0xffff)
		shstrndx = get(img + shoff + 40, 4);
	if (!shnum || shnum > (size - shoff) / SHDR_SIZE || shstrndx >= shnum)
		return -ENOEXEC;
	sh = img + shoff + shstrndx * SHDR_SIZE;
	stroff = get(sh + 24, 8);
	strsize = get(sh + 32, 8);
	if (stroff > size || strsize > size - stroff)
		return -ENOEXEC;
	for (i = 0; i < shnum; i++) {
		__u64 name, type, flags, off, ssize;
		struct section *dst = NULL;
		const char *nm;

		sh = img + shoff + i * SHDR_SIZE;
		name = get(sh, 4);
		type = get(sh + 4, 4);
		flags = get(sh + 8, 8);
		off = get(sh + 24, 8);
		ssize = get(sh + 32, 8);
		if (name >= strsize)
			continue;
		nm = (const char *)img + stroff + name;
		if (strnlen(nm, strsize - name) == strsize - name)
			continue;
		dst = wanted(s, nm);
		if (dst == &s->text) {
			dst->addr = get(sh + 16, 8); /* its address only: not read */
			continue;
		}
		if (!dst || type == SHT_NOBITS || (flags & SHF_COMPRESSED) || !ssize)
			continue;
		if (off > size || ssize > size - off)
			return -ENOEXEC;
		if (ssize > CFI_MAX_SECTION) {
			dst->found = -E2BIG;
			continue;
		}
		dst->data = img + off;
		dst->size = (size_t)ssize;
		dst->addr = get(sh + 16, 8);
		dst->found = 1;
	}
	return 0;
}
