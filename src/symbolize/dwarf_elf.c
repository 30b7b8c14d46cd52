/* dwarf_elf.c - the sections of a file with DWARF: found, decompressed,
 * hidden from libdw when unused, and their pages released (see dwarf.h). */
#include "symbolize/dwarf_int.h"

/* The section after @scn (NULL: the first) with contents in the file (not
 * SHT_NOBITS), its header into *@sh and its name (NULL when unreadable)
 * into *@name, through the section name table @shstrndx; NULL after the
 * last. */
Elf_Scn *dwl__next_section(Elf *elf, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh,
			   const char **name)
{
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		*name = elf_strptr(elf, shstrndx, sh->sh_name);
		return scn;
	}
	return NULL;
}

/* The data of section @name, or NULL. */
Elf_Data *dwl__section_data(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = dwl__next_section(elf, shstrndx, scn, &sh, &n)))
		if (n && !strcmp(n, name))
			return elf_rawdata(scn, NULL); /* bytes: see inflate_section() */
	return NULL;
}

static Elf_Scn *named_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = dwl__next_section(elf, shstrndx, scn, sh, &n)))
		if (sh->sh_size && n && !strcmp(n, name))
			return scn;
	return NULL;
}

bool dwl__has_debug_info(Elf *elf)
{
	GElf_Shdr sh;

	return named_section(elf, ".debug_info", &sh) || named_section(elf, ".zdebug_info", &sh);
}

/* Indexing the units read a page or more of every unit across the mapped
 * file. Lookups need only a few units' pages:
 * let the others go (the mapping is private and read-only, so they are
 * read back from the page cache when touched again). */
void dwl__release_pages(struct dwarf_lines *d)
{
	size_t size = 0;
	char *img = elf_rawfile(d->elf, &size);
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo, hi;

	if (!img || !size || page <= 0)
		return;
	lo = ((uintptr_t)img + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	hi = ((uintptr_t)img + size) & ~((uintptr_t)page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Sections libdw would decompress at dwarf_begin_elf() that lines and
 * inlined frames never read: variable locations
 * (.debug_loclists), macros, name indexes, CFI. */
static const char *const unused_sections[] = {
	".debug_loc",	   ".debug_loclists", ".debug_macro",	     ".debug_macinfo",
	".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames", ".debug_gnu_pubtypes",
	".debug_frame",	   ".debug_names",    ".debug_types",	     NULL,
};

static bool unused_section(const char *name)
{
	char norm[64];
	size_t i;

	if (!strncmp(name, ".zdebug_", 8)) { /* GNU-compressed: the same names */
		snprintf(norm, sizeof(norm), ".debug_%s", name + 8);
		name = norm;
	}
	for (i = 0; unused_sections[i]; i++)
		if (!strcmp(name, unused_sections[i]))
			return true;
	return false;
}

/* Mark the unused sections SHT_NOBITS in our private copy of the headers,
 * which libdw skips: never decompressed, never resident. */
void dwl__hide_unused(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = dwl__next_section(elf, shstrndx, scn, &sh, &name))) {
		if (name && unused_section(name)) {
			sh.sh_type = SHT_NOBITS;
			gelf_update_shdr(scn, &sh);
		}
	}
}

/* Drop the mapped pages wholly inside [@p, @p + @len): read-only file
 * pages, read back from the page cache if touched again. */
static void release_range(const char *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo, hi;

	if (page <= 0)
		return;
	lo = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	hi = ((uintptr_t)p + len) & ~((uintptr_t)page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

struct zsec {
	Elf_Scn *scn;
	GElf_Off off, size; /* compressed, in the file */
	Elf64_Chdr ch;	    /* its compression header (ch_size: decompressed) */
};

/* Decompressed sections start this aligned in their region (above any
 * sh_addralign real DWARF uses), and take up to this much in all. */
#define ZREGION_ALIGN 64
#define ZREGION_MAX (1ull << 32)

/* Room a section decompressing to @size bytes takes in the region. */
static size_t zregion_span(__u64 size)
{
	return (size_t)(size + ZREGION_ALIGN - 1) & ~(size_t)(ZREGION_ALIGN - 1);
}

static int cmp_zsec(const void *a, const void *b)
{
	const struct zsec *x = a, *y = b;

	return x->size > y->size ? -1 : x->size < y->size;
}

/* The compression header of the zlib section @scn into *@ch: 0, or -1 to
 * leave the section to libelf. */
static int zlib_header(Elf_Scn *scn, Elf64_Chdr *ch)
{
	/* libdw reads the raw data (elf_rawdata()): that is what we replace. */
	Elf_Data *raw = elf_rawdata(scn, NULL);

	if (!raw || !raw->d_buf || raw->d_size < sizeof(*ch))
		return -1;
	memcpy(ch, raw->d_buf, sizeof(*ch));
	if (ch->ch_type != ELFCOMPRESS_ZLIB || !ch->ch_size || ch->ch_size > (1ull << 32) ||
	    (ch->ch_addralign & (ch->ch_addralign - 1)) || ch->ch_addralign > ZREGION_ALIGN)
		return -1;
	return 0;
}

/* Inflate the zlib section @scn (described by @sh, header @ch from
 * zlib_header()) into @buf (room for ch->ch_size bytes) and make it the
 * section's data, as elf_compress(scn, 0, 0) would. 0, or -1 to leave the
 * section to libelf. */
static int inflate_section(Elf_Scn *scn, GElf_Shdr *sh, const Elf64_Chdr *ch, void *buf)
{
	Elf_Data *raw = elf_rawdata(scn, NULL);

	if (!raw || !raw->d_buf || raw->d_size < sizeof(*ch) ||
	    gz__inflate_zlib((const char *)raw->d_buf + sizeof(*ch), raw->d_size - sizeof(*ch), buf,
			     ch->ch_size))
		return -1;
	/* The header says uncompressed now: libdw leaves it to us. */
	sh->sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
	sh->sh_size = ch->ch_size;
	sh->sh_addralign = ch->ch_addralign ? ch->ch_addralign : 1;
	if (!gelf_update_shdr(scn, sh))
		return -1;
	raw->d_buf = buf;
	raw->d_size = ch->ch_size;
	raw->d_type = ELF_T_BYTE;
	raw->d_align = sh->sh_addralign;
	return 0;
}

/* Decompress the SHF_COMPRESSED sections libdw would (it leaves ones
 * already decompressed alone), largest first, into one region of ours
 * (pages__map_huge()), letting each one's compressed pages go as soon as it is
 * done: libdw would have all of them resident at once with all the
 * decompressed data, in mappings of libelf's that inflate() faults in page by
 * page. Failures are left to libdw. */
void dwl__decompress_sections(struct dwarf_lines *d)
{
	struct zsec z[64];
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *name;
	size_t n = 0, i, size = 0, shstrndx, total = 0, at = 0;
	char *img = elf_rawfile(d->elf, &size), *region = NULL;
	long page = sysconf(_SC_PAGESIZE);

	if (!img || elf_getshdrstrndx(d->elf, &shstrndx) || page <= 0 ||
	    gelf_getclass(d->elf) != ELFCLASS64 ||
	    d->nzbufs == sizeof(d->zbufs) / sizeof(d->zbufs[0]))
		return;
	while (n < sizeof(z) / sizeof(z[0]) &&
	       (scn = dwl__next_section(d->elf, shstrndx, scn, &sh, &name))) {
		Elf64_Chdr ch;

		if (!(sh.sh_flags & SHF_COMPRESSED) || sh.sh_offset > size ||
		    sh.sh_size > size - sh.sh_offset)
			continue;
		if (!name || strncmp(name, ".debug_", 7) || zlib_header(scn, &ch) ||
		    ch.ch_size > ZREGION_MAX - total)
			continue;
		z[n++] = (struct zsec){scn, sh.sh_offset, sh.sh_size, ch};
		total += zregion_span(ch.ch_size);
	}
	if (!n)
		return;
	total = (total + (size_t)page - 1) & ~((size_t)page - 1);
	/* One mapping for all of them, starting on a huge page where those
	 * pay, so that every whole 2 MiB of it can be one (a mapping per
	 * section would leave most in small pages). Nothing is allocated
	 * yet: each section's part is populated just before it is inflated. */
	region = pages__map_huge(total);
	if (!region)
		return; /* libelf decompresses them */
	d->zbufs[d->nzbufs++] = (struct zbuf){region, total};
	qsort(z, n, sizeof(z[0]), cmp_zsec);
	for (i = 0; i < n; i++) {
		if (!gelf_getshdr(z[i].scn, &sh))
			continue;
		/* Populated just before it is written: the whole region first
		 * would be held next to the compressed pages not yet let go. */
		pages__populate(region + at, z[i].ch.ch_size);
		if (inflate_section(z[i].scn, &sh, &z[i].ch, region + at) &&
		    elf_compress(z[i].scn, 0, 0) < 0)
			continue;
		at += zregion_span(z[i].ch.ch_size);
		release_range(img + z[i].off, z[i].size);
	}
}

/* .debug_line's data as libdw has it (after dwl__decompress_sections()) into
 * d->line_sec; left NULL when absent (lines then come from libdw). */
void dwl__find_line_section(struct dwarf_lines *d)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *data;

	scn = named_section(d->elf, ".debug_line", &sh);
	if (!scn || (sh.sh_flags & SHF_COMPRESSED))
		return; /* still compressed: dwl__decompress_sections() left it to libelf */
	data = elf_rawdata(scn, NULL); /* what libdw reads (dwl__decompress_sections()) */
	if (data && data->d_buf && data->d_size) {
		d->line_sec = data->d_buf;
		d->line_len = data->d_size;
	}
}

/* Bytes of the debug sections libdw reads from @elf (decompressed sizes;
 * dwl__hide_unused()'s left out): what a begun DWARF holds. */
size_t dwl__held_size(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, sum = 0;
	GElf_Shdr sh;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = dwl__next_section(elf, shstrndx, scn, &sh, &name)))
		if (name && !strncmp(name, ".debug_", 7))
			sum += sh.sh_size;
	return sum;
}
