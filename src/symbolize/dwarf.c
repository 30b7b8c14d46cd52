/* dwarf.c - source lines and inlined frames from DWARF (see dwarf.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/array.h"
#include "util/gz.h"
#include "util/htab.h"
#include "util/pages.h"
#include "util/search.h"
#include "symbolize/dwarf.h"
#include "symbolize/dwline.h"

#define CHUNK_LINES 4096
#define MAX_DEPTH 256 /* DIE nesting walked per unit */
/* Files whose DWARF is not begun yet each hold a descriptor (libdw finds a
 * dwz alternate file relative to it): past this many, begin at open. */
#define MAX_PENDING 256

static atomic_int pending_fds;

/* A subprogram or inlined subroutine with code. */
struct scope {
	Dwarf_Die die;
	__s32 parent; /* index of the enclosing scope in the unit, -1 = none */
	bool inlined; /* DW_TAG_inlined_subroutine */
};

/* [lo, hi) whose innermost scope is @scope. */
struct seg {
	__u64 lo, hi;
	__u32 scope;
};

struct unit {
	Dwarf_Off die_off; /* of the unit DIE */
	bool have_die;	   /* cudie and comp_dir read (unit_die()) */
	Dwarf_Die cudie;
	const char *comp_dir; /* DW_AT_comp_dir, NULL = none */
	bool indexed;
	struct scope *scopes;
	size_t nscopes;
	struct seg *segs;
	size_t nsegs;
	/* Line rows (dwline.h), read at the unit's first lookup: 1 = read,
	 * -1 = not readable here (split unit, odd program): libdw's then. */
	int lines_state;
	struct dwline_table lines;
};

/* An address range of a unit. */
struct urange {
	__u64 lo, hi;
	__u32 unit;
};

struct centry {
	__u64 addr; /* key */
	const struct profile_line *lines;
	__u32 n;
};

struct pentry {
	const char *key;
	char *path;
};

struct chunk {
	struct chunk *next;
	size_t used;
	struct profile_line v[CHUNK_LINES];
};

struct dwarf_lines {
	Elf *elf;
	Dwarf *dw;
	int fd;	     /* ours, until the DWARF is begun; -1 after */
	bool begun;  /* dwarf_begin_elf() and the unit index were tried */
	bool broken; /* ... and failed: no lines */
	struct unit *units;
	size_t nunits;
	struct urange *ranges;
	size_t nranges, ranges_cap, units_cap;
	/* Units .debug_aranges has no set for (data only, or from a compiler
	 * that writes none): their DIE offsets, read at the first address no
	 * indexed unit covers (reading them makes libdw set up every unit). */
	Dwarf_Off *unset;
	size_t nunset;
	struct htab cache; /* struct centry, by address */
	struct chunk *chunks;
	/* Relative source file names joined with their unit's comp_dir,
	 * keyed by libdw's (stable) name pointer: struct pentry. */
	struct htab paths;
	/* Names and file names of cached lines, owned (libdw's go at
	 * dwarf_lines__release()): a set of char *. */
	struct htab strs;
	bool has_inline;
	/* .debug_line as libdw reads it (decompressed), NULL = none. */
	const unsigned char *line_sec;
	size_t line_len;
	/* Sections decompressed here (decompress_sections()), unmapped after
	 * the Elf that points at them ends. */
	struct zbuf {
		void *p;
		size_t len;
	} zbufs[16];
	unsigned int nzbufs;
	size_t held; /* debug sections' bytes as libdw reads them (held_size()) */
	struct dwarf_lines_stats st;
};

/* ---- open: unit ranges -------------------------------------------------- */

static int cmp_urange(const void *a, const void *b)
{
	const struct urange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int add_unit_ranges(struct dwarf_lines *d, Dwarf_Die *cudie, size_t *rcap)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	size_t added = 0;
	int err;

	while ((off = dwarf_ranges(cudie, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		err = array__grow((void **)&d->ranges, rcap, d->nranges, sizeof(*d->ranges), 64,
				  SIZE_MAX / sizeof(*d->ranges));
		if (err)
			return err;
		d->ranges[d->nranges++] = (struct urange){lo, hi, (__u32)d->nunits};
		added++;
	}
	return added ? 1 : 0;
}

static const char *comp_dir(Dwarf_Die *cudie)
{
	Dwarf_Attribute a;
	const char *dir;

	if (!dwarf_attr(cudie, DW_AT_comp_dir, &a))
		return NULL;
	dir = dwarf_formstring(&a);
	return dir && *dir == '/' ? dir : NULL;
}

/* Every unit from its DIE: address ranges (DW_AT_ranges, low/high pc).
 * Reads each unit DIE, which makes libdw set up every unit (libc: 2063,
 * ~3.7 MB): the way for files without .debug_aranges. */
static int index_units_walk(struct dwarf_lines *d)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t type;
	size_t ucap = 0, rcap = 0;
	int err, r;

	while (dwarf_get_units(d->dw, cu, &next, &version, &type, &cudie, &subdie) == 0) {
		cu = next;
		/* Split units: the skeleton's ranges and lines are what we have. */
		if (type != DW_UT_compile && type != DW_UT_skeleton && type != DW_UT_partial)
			continue;
		err = array__grow((void **)&d->units, &ucap, d->nunits, sizeof(*d->units), 64,
				  SIZE_MAX / sizeof(*d->units));
		if (err)
			return err;
		r = add_unit_ranges(d, &cudie, &rcap);
		if (r < 0)
			return r;
		if (!r)
			continue;
		memset(&d->units[d->nunits], 0, sizeof(d->units[0]));
		d->units[d->nunits].die_off = dwarf_dieoffset(&cudie);
		d->units[d->nunits].have_die = true;
		d->units[d->nunits].cudie = cudie;
		d->units[d->nunits++].comp_dir = comp_dir(&cudie);
	}
	return 0;
}

static __u64 get_le(const unsigned char *p, size_t n)
{
	__u64 v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* The section after @scn (NULL: the first) with contents in the file (not
 * SHT_NOBITS), its header into *@sh and its name (NULL when unreadable)
 * into *@name, through the section name table @shstrndx; NULL after the
 * last. */
static Elf_Scn *next_section(Elf *elf, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh,
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
static Elf_Data *section_data(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = next_section(elf, shstrndx, scn, &sh, &n)))
		if (n && !strcmp(n, name))
			return elf_rawdata(scn, NULL); /* bytes: see inflate_section() */
	return NULL;
}

struct uoff {
	Dwarf_Off off, die_off; /* unit header, unit DIE */
	__s64 unit;		/* index in d->units, -1 = none yet */
};

static int cmp_uoff_key(const void *key, const void *e)
{
	Dwarf_Off k = *(const Dwarf_Off *)key, o = ((const struct uoff *)e)->off;

	return k < o ? -1 : k > o;
}

/* index_aranges()'s work: every unit's offsets (@u, in order), the
 * capacities of d->units and d->ranges, and how many units have a set. */
struct aranges {
	struct uoff *u;
	size_t nu, ucap, dcap, rcap, covered;
};

/* The header and DIE offsets of every unit. 0 or -ENOMEM. */
static int list_units(struct dwarf_lines *d, struct aranges *ar)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int err;

	while (dwarf_next_unit(d->dw, off, &next, &hsize, NULL, NULL, NULL, NULL, NULL, NULL) ==
	       0) {
		err = array__grow((void **)&ar->u, &ar->ucap, ar->nu, sizeof(*ar->u), 64,
				  SIZE_MAX / sizeof(*ar->u));
		if (err)
			return err;
		ar->u[ar->nu++] = (struct uoff){off, off + hsize, -1};
		off = next;
	}
	return 0;
}

/* Range [@lo, @lo + @n) of unit @e; the unit gets its entry in d->units
 * at its first range. 0 or -ENOMEM. */
static int add_arange(struct dwarf_lines *d, struct aranges *ar, struct uoff *e, __u64 lo,
		      __u64 n)
{
	int err;

	if (e->unit < 0) {
		err = array__grow((void **)&d->units, &ar->dcap, d->nunits, sizeof(*d->units), 64,
				  SIZE_MAX / sizeof(*d->units));
		if (err)
			return err;
		memset(&d->units[d->nunits], 0, sizeof(d->units[0]));
		d->units[d->nunits].die_off = e->die_off;
		e->unit = (__s64)d->nunits++;
		ar->covered++;
	}
	err = array__grow((void **)&d->ranges, &ar->rcap, d->nranges, sizeof(*d->ranges), 64,
			  SIZE_MAX / sizeof(*d->ranges));
	if (err)
		return err;
	d->ranges[d->nranges++] = (struct urange){lo, lo + n, (__u32)e->unit};
	return 0;
}

/* The address set at *@pp (before @end), its ranges added; *@pp moves past
 * it. 0, 1 when its length is malformed (nothing after it is read), or
 * -ENOMEM. Sets of another version or with segment selectors are skipped. */
static int read_set(struct dwarf_lines *d, struct aranges *ar, const unsigned char **pp,
		    const unsigned char *end)
{
	const unsigned char *p = *pp, *set = p, *set_end;
	__u64 len = get_le(p, 4), cu, lo, n;
	size_t osz = 4, asz, tuple;
	struct uoff *e;
	int err;

	p += 4;
	if (len == 0xffffffffull && end - p >= 8) {
		len = get_le(p, 8);
		p += 8;
		osz = 8;
	} else if (len >= 0xfffffff0ull) {
		return 1;
	}
	if (len > (__u64)(end - p))
		return 1;
	set_end = p + len;
	*pp = set_end;
	if (set_end - p < (ptrdiff_t)(2 + osz + 2) || get_le(p, 2) != 2)
		return 0;
	cu = get_le(p + 2, osz);
	asz = p[2 + osz];
	tuple = 2 * asz;
	if ((asz != 4 && asz != 8) || p[3 + osz])
		return 0;
	p += 4 + osz;
	p = set + (((size_t)(p - set) + tuple - 1) / tuple) * tuple;
	e = bsearch(&cu, ar->u, ar->nu, sizeof(*ar->u), cmp_uoff_key);
	for (; e && set_end - p >= (ptrdiff_t)tuple; p += tuple) {
		lo = get_le(p, asz);
		n = get_le(p + asz, asz);
		if (!lo && !n)
			break;
		if (!n || lo + n < lo)
			continue;
		err = add_arange(d, ar, e, lo, n);
		if (err)
			return err;
	}
	return 0;
}

/* The DIE offsets of the units no set covers, for index_unset(). */
static int list_unset(struct dwarf_lines *d, const struct aranges *ar)
{
	size_t i;

	for (i = 0; i < ar->nu; i++) {
		if (ar->u[i].unit >= 0)
			continue;
		if (!d->unset) {
			d->unset = malloc((ar->nu - ar->covered) * sizeof(*d->unset));
			if (!d->unset)
				return -ENOMEM;
		}
		d->unset[d->nunset++] = ar->u[i].die_off;
	}
	return 0;
}

/* Units from .debug_aranges (GCC writes one set per unit with code):
 * address -> unit without reading any unit DIE, so libdw sets up only the
 * units lookups land in (and those before them: it reads units in order).
 * Units with no set are read from their DIE. 1 when done, 0 when the file
 * has no usable .debug_aranges (the caller walks every unit), or -errno. */
static int index_aranges(struct dwarf_lines *d)
{
	Elf_Data *data = section_data(d->elf, ".debug_aranges");
	const unsigned char *p, *end, *ident = (const unsigned char *)elf_getident(d->elf, NULL);
	struct aranges ar = {0};
	int err;

	if (!data || !data->d_buf || !data->d_size || !ident || ident[EI_DATA] != ELFDATA2LSB ||
	    __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return 0;
	err = list_units(d, &ar);
	p = data->d_buf;
	end = p + data->d_size;
	while (!err && end - p >= 4)
		err = read_set(d, &ar, &p, end);
	if (err > 0)
		err = 0; /* a malformed length ends the section */
	if (!err && ar.covered)
		err = list_unset(d, &ar);
	free(ar.u);
	if (err <= 0) { /* start over, or fail */
		free(d->units);
		free(d->ranges);
		free(d->unset);
		d->units = NULL;
		d->ranges = NULL;
		d->unset = NULL;
		d->nunits = d->nranges = d->nunset = 0;
		return err;
	}
	d->units_cap = ar.dcap;
	d->ranges_cap = ar.rcap;
	return 1;
}

/* Index the units .debug_aranges left out, from their DIE, once. 1 when
 * there were any (the caller looks again), 0, or -errno. */
static int index_unset(struct dwarf_lines *d)
{
	size_t i, n = d->nunset;
	int err = 0, r;

	if (!n)
		return 0;
	d->nunset = 0;
	for (i = 0; i < n && !err; i++) {
		Dwarf_Die cudie;
		int tag;

		if (!dwarf_offdie(d->dw, d->unset[i], &cudie))
			continue;
		tag = dwarf_tag(&cudie);
		if (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit &&
		    tag != DW_TAG_skeleton_unit)
			continue;
		err = array__grow((void **)&d->units, &d->units_cap, d->nunits, sizeof(*d->units),
				  64, SIZE_MAX / sizeof(*d->units));
		if (err)
			break;
		r = add_unit_ranges(d, &cudie, &d->ranges_cap);
		if (r <= 0) {
			err = r;
			continue;
		}
		memset(&d->units[d->nunits], 0, sizeof(d->units[0]));
		d->units[d->nunits].die_off = d->unset[i];
		d->units[d->nunits].have_die = true;
		d->units[d->nunits].cudie = cudie;
		d->units[d->nunits++].comp_dir = comp_dir(&cudie);
	}
	free(d->unset);
	d->unset = NULL;
	if (d->nranges)
		qsort(d->ranges, d->nranges, sizeof(*d->ranges), cmp_urange);
	d->st.units = d->nunits;
	return err < 0 ? err : 1;
}

static int index_units(struct dwarf_lines *d)
{
	int err = index_aranges(d);

	if (!err)
		err = index_units_walk(d);
	if (err < 0)
		return err;
	if (d->nranges) /* qsort() wants a non-NULL array even for 0 */
		qsort(d->ranges, d->nranges, sizeof(*d->ranges), cmp_urange);
	d->st.units = d->nunits;
	return 0;
}

/* Read unit @u's DIE (units indexed from .debug_aranges are read when a
 * lookup first lands in them). 0 or -ENOENT. */
static int unit_die(struct dwarf_lines *d, struct unit *u)
{
	if (u->have_die)
		return 0;
	if (!dwarf_offdie(d->dw, u->die_off, &u->cudie))
		return -ENOENT;
	u->comp_dir = comp_dir(&u->cudie);
	u->have_die = true;
	return 0;
}

/* True when the ELF has a .debug_info (or .zdebug_info) with contents. */
/* The first section named @name with contents (not SHT_NOBITS, not empty),
 * its header into *@sh; NULL when there is none. */
static Elf_Scn *named_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = next_section(elf, shstrndx, scn, sh, &n)))
		if (sh->sh_size && n && !strcmp(n, name))
			return scn;
	return NULL;
}

static bool has_debug_info(Elf *elf)
{
	GElf_Shdr sh;

	return named_section(elf, ".debug_info", &sh) || named_section(elf, ".zdebug_info", &sh);
}

static void drop_fd(struct dwarf_lines *d)
{
	if (d->fd < 0)
		return;
	/* Everything is read from the mapping from now on. */
	if (d->elf)
		elf_cntl(d->elf, ELF_C_FDDONE);
	close(d->fd);
	d->fd = -1;
	atomic_fetch_sub(&pending_fds, 1);
}

/* Indexing the units read a page or more of every unit across the mapped
 * file (libpython: 8 MB resident). Lookups need only a few units' pages:
 * let the others go (the mapping is private and read-only, so they are
 * read back from the page cache when touched again). */
static void release_pages(struct dwarf_lines *d)
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
 * inlined frames never read: variable locations (libc's debug file: 1.4 MB
 * of .debug_loclists), macros, name indexes, CFI. */
static const char *const unused_sections[] = {
	".debug_loc",	  ".debug_loclists", ".debug_macro",   ".debug_macinfo",
	".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames", ".debug_gnu_pubtypes",
	".debug_frame",	  ".debug_names",    ".debug_types",
	NULL,
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
static void hide_unused(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = next_section(elf, shstrndx, scn, &sh, &name))) {
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
 * decompressed data (libc's debug file: 3 MB compressed next to 8 MB
 * decompressed), in mappings of libelf's that inflate() faults in page by
 * page. Failures are left to libdw. */
static void decompress_sections(struct dwarf_lines *d)
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
	       (scn = next_section(d->elf, shstrndx, scn, &sh, &name))) {
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
	/* One mapping for all of them, where huge pages pay starting on one so
	 * that every whole 2 MiB of it can be one (each section mapped on its own, only
	 * the 2 MiB-aligned middle of the largest could: libc's debug file
	 * decompressed 8.4 MB into 2 huge pages and ~1100 small ones, each a
	 * populate fault costly in a VM). Nothing is allocated yet: each
	 * section's part is populated just before it is inflated. */
	region = pages__map_huge(total);
	if (!region)
		return; /* libelf decompresses them */
	d->zbufs[d->nzbufs++] = (struct zbuf){region, total};
	qsort(z, n, sizeof(z[0]), cmp_zsec);
	for (i = 0; i < n; i++) {
		if (!gelf_getshdr(z[i].scn, &sh))
			continue;
		/* Populated just before it is written: the whole region first
		 * would be held next to the compressed pages not yet let go
		 * (libc: +2 MB of peak RSS). */
		pages__populate(region + at, z[i].ch.ch_size);
		if (inflate_section(z[i].scn, &sh, &z[i].ch, region + at) &&
		    elf_compress(z[i].scn, 0, 0) < 0)
			continue;
		at += zregion_span(z[i].ch.ch_size);
		release_range(img + z[i].off, z[i].size);
	}
}

/* .debug_line's data as libdw has it (after decompress_sections()) into
 * d->line_sec; left NULL when absent (lines then come from libdw). */
static void find_line_section(struct dwarf_lines *d)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *data;

	scn = named_section(d->elf, ".debug_line", &sh);
	if (!scn || (sh.sh_flags & SHF_COMPRESSED))
		return; /* still compressed: decompress_sections() left it to libelf */
	data = elf_rawdata(scn, NULL); /* what libdw reads (decompress_sections()) */
	if (data && data->d_buf && data->d_size) {
		d->line_sec = data->d_buf;
		d->line_len = data->d_size;
	}
}

/* Bytes of the debug sections libdw reads from @elf (decompressed sizes;
 * hide_unused()'s left out): what a begun DWARF holds. */
static size_t held_size(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, sum = 0;
	GElf_Shdr sh;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = next_section(elf, shstrndx, scn, &sh, &name)))
		if (name && !strncmp(name, ".debug_", 7))
			sum += sh.sh_size;
	return sum;
}

/* Begin the DWARF and index its units, once. libdw decompresses every
 * compressed debug section here (libc's debug file: ~10 MB), which is why
 * it waits for the first lookup. 0 or -errno (then the file has no lines). */
static int begin(struct dwarf_lines *d)
{
	int err;

	if (d->begun)
		return d->broken ? -ENOENT : 0;
	d->begun = true;
	d->broken = true;
	/* not mapped yet, or released: map the file (private and writable:
	 * hide_unused() edits section headers) */
	if (!d->elf) {
		d->elf = elf_begin(d->fd, ELF_C_READ_MMAP_PRIVATE, NULL);
		if (!d->elf)
			return -ENOENT;
	}
	d->st.begins++;
	hide_unused(d->elf);
	decompress_sections(d);
	d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	/* The descriptor maps the file again after a release; past
	 * MAX_PENDING files, it goes and the DWARF stays. */
	if (atomic_load(&pending_fds) > MAX_PENDING)
		drop_fd(d);
	if (!d->dw)
		return -ENOENT; /* no usable DWARF */
	find_line_section(d);
	d->held = held_size(d->elf);
	err = index_units(d);
	if (err)
		return err;
	if (!d->nranges)
		return -ENOENT;
	d->broken = false;
	release_pages(d);
	return 0;
}

int dwarf_lines__open_fd(int fd, struct dwarf_lines **out)
{
	struct dwarf_lines *d;
	Elf *elf = NULL;
	bool found;
	int err;

	*out = NULL;
	elf_version(EV_CURRENT);
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	htab__init(&d->cache, sizeof(struct centry), DWARF_LINES_MAX_CACHE);
	htab__init(&d->paths, sizeof(struct pentry), 0xffffffffu);
	htab__init(&d->strs, sizeof(char *), 0xffffffffu);
	d->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (d->fd < 0) {
		err = -errno;
		free(d);
		return err;
	}
	atomic_fetch_add(&pending_fds, 1);
	/* The headers only, read (not mapped): most files are never looked
	 * up, and unmapping even the few pages read is a TLB flush (~0.1 ms
	 * in a VM). begin() maps the file. */
	elf = elf_begin(d->fd, ELF_C_READ, NULL);
	err = elf && elf_kind(elf) == ELF_K_ELF ? 0 : -ENOEXEC;
	found = !err && has_debug_info(elf);
	elf_end(elf);
	if (err)
		goto fail;
	err = -ENOENT;
	if (!found)
		goto fail;
	if (atomic_load(&pending_fds) > MAX_PENDING) {
		err = begin(d);
		if (err)
			goto fail;
	}
	*out = d;
	return 0;
fail:
	dwarf_lines__free(d);
	return err;
}

/* Free what points into libdw's data: the unit index, the joined paths,
 * the Dwarf and the Elf (with the decompressed sections). */
static void end_dwarf(struct dwarf_lines *d)
{
	struct pentry *pe;
	size_t i, it = 0;

	for (i = 0; i < d->nunits; i++) {
		free(d->units[i].scopes);
		free(d->units[i].segs);
		dwline__release(&d->units[i].lines);
	}
	d->line_sec = NULL;
	d->line_len = 0;
	free(d->units);
	free(d->ranges);
	free(d->unset);
	d->units = NULL;
	d->ranges = NULL;
	d->unset = NULL;
	d->nunits = d->nranges = d->nunset = d->units_cap = d->ranges_cap = 0;
	while ((pe = htab__next(&d->paths, &it)))
		free(pe->path);
	htab__release(&d->paths);
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	d->dw = NULL;
	d->elf = NULL;
	while (d->nzbufs) {
		d->nzbufs--;
		munmap(d->zbufs[d->nzbufs].p, d->zbufs[d->nzbufs].len);
	}
}

void dwarf_lines__free(struct dwarf_lines *d)
{
	struct chunk *c, *next;
	size_t it = 0;
	char **str;

	if (!d)
		return;
	drop_fd(d);
	end_dwarf(d);
	htab__release(&d->cache);
	for (c = d->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	while ((str = htab__next(&d->strs, &it)))
		free(*str);
	htab__release(&d->strs);
	free(d);
}

bool dwarf_lines__release(struct dwarf_lines *d)
{
	if (!d || !d->begun || d->broken || d->fd < 0)
		return false;
	end_dwarf(d);
	d->begun = false;
	d->st.releases++;
	return true;
}

size_t dwarf_lines__held(const struct dwarf_lines *d)
{
	return d && d->begun && !d->broken ? d->held : 0;
}

/* ---- per unit: scope segments ------------------------------------------- */

struct raw_range {
	__u64 lo, hi;
	__u32 scope, depth;
};

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1; /* the enclosing one first */
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

struct walk {
	struct unit *u;
	size_t scap;
	struct raw_range *raw;
	size_t nraw, rcap;
};

static bool descend_into(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return true;
	default:
		return false;
	}
}

/* Record @die (a subprogram or inlined subroutine) and its ranges; its
 * scope index goes to *@idx (unchanged when it has no code). */
static int add_scope(struct walk *w, Dwarf_Die *die, int tag, __s32 parent, __u32 depth,
		     __s32 *idx)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	struct scope *s;
	size_t first = w->nraw;
	int err;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		err = array__grow((void **)&w->raw, &w->rcap, w->nraw, sizeof(*w->raw), 64,
				  SIZE_MAX / sizeof(*w->raw));
		if (err)
			return err;
		w->raw[w->nraw++] = (struct raw_range){lo, hi, (__u32)w->u->nscopes, depth};
	}
	if (w->nraw == first)
		return 0;
	err = array__grow((void **)&w->u->scopes, &w->scap, w->u->nscopes, sizeof(*s), 64,
			  SIZE_MAX / sizeof(*s));
	if (err)
		return err;
	s = &w->u->scopes[w->u->nscopes];
	s->die = *die;
	s->parent = parent;
	s->inlined = tag == DW_TAG_inlined_subroutine;
	*idx = (__s32)w->u->nscopes++;
	return 0;
}

/* Walk the unit's DIE tree once (iteratively, at most MAX_DEPTH deep). */
static int walk_unit(struct walk *w)
{
	Dwarf_Die stack[MAX_DEPTH];
	__s32 owner[MAX_DEPTH]; /* innermost scope at each level */
	int depth = 0, err = 0, tag;

	if (dwarf_child(&w->u->cudie, &stack[0]) != 0)
		return 0;
	owner[0] = -1;
	while (depth >= 0 && !err) {
		Dwarf_Die *die = &stack[depth];
		__s32 me = owner[depth];

		tag = dwarf_tag(die);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
			err = add_scope(w, die, tag, owner[depth], (__u32)depth, &me);
		if (!err && descend_into(tag) && depth + 1 < MAX_DEPTH &&
		    dwarf_child(die, &stack[depth + 1]) == 0) {
			owner[++depth] = me;
			continue;
		}
		/* Next sibling, or climb until one has one. */
		while (depth >= 0 && dwarf_siblingof(&stack[depth], &stack[depth]) != 0)
			depth--;
	}
	return err;
}

static int emit_seg(struct unit *u, size_t *cap, __u64 lo, __u64 hi, __u32 scope)
{
	int err;

	if (lo >= hi)
		return 0;
	err = array__grow((void **)&u->segs, cap, u->nsegs, sizeof(*u->segs), 64,
			  SIZE_MAX / sizeof(*u->segs));
	if (!err)
		u->segs[u->nsegs++] = (struct seg){lo, hi, scope};
	return err;
}

/* Nested ranges sorted by (lo, hi desc) -> segments naming the innermost. */
static int flatten(struct unit *u, const struct raw_range *raw, size_t n)
{
	struct raw_range st[MAX_DEPTH];
	size_t cap = 0, i;
	int top = -1, err = 0;
	__u64 cur = 0;

	for (i = 0; i < n && !err; i++) {
		while (top >= 0 && st[top].hi <= raw[i].lo && !err) {
			err = emit_seg(u, &cap, cur, st[top].hi, st[top].scope);
			cur = cur > st[top].hi ? cur : st[top].hi;
			top--;
		}
		if (top >= 0 && !err)
			err = emit_seg(u, &cap, cur, raw[i].lo, st[top].scope);
		cur = raw[i].lo;
		if (top + 1 == MAX_DEPTH)
			continue; /* deeper than anything real: keep the outer one */
		st[++top] = raw[i];
		/* A range reaching past its parent's end (bad DWARF) is cut. */
		if (top > 0 && st[top].hi > st[top - 1].hi)
			st[top].hi = st[top - 1].hi;
	}
	while (top >= 0 && !err) {
		err = emit_seg(u, &cap, cur, st[top].hi, st[top].scope);
		cur = cur > st[top].hi ? cur : st[top].hi;
		top--;
	}
	return err;
}

static int index_unit(struct dwarf_lines *d, struct unit *u)
{
	struct walk w = {.u = u};
	size_t i;
	int err;

	u->indexed = true;
	d->st.units_indexed++;
	err = walk_unit(&w);
	if (!err) {
		if (w.nraw)
			qsort(w.raw, w.nraw, sizeof(*w.raw), cmp_raw);
		err = flatten(u, w.raw, w.nraw);
	}
	for (i = 0; i < u->nscopes; i++)
		d->has_inline |= u->scopes[i].inlined;
	free(w.raw);
	return err;
}

/* ---- lookup ------------------------------------------------------------ */

static struct unit *find_unit(struct dwarf_lines *d, __u64 a)
{
	size_t lo = search__upto(d->ranges, d->nranges, sizeof(*d->ranges),
				 offsetof(struct urange, lo), a);
	size_t k;

	/* Ranges of different units may overlap (rare): look back a little. */
	for (k = lo; k-- > 0 && lo - k <= 8;)
		if (a < d->ranges[k].hi)
			return &d->units[d->ranges[k].unit];
	return NULL;
}

static const struct seg *find_seg(const struct unit *u, __u64 a)
{
	size_t lo = search__upto(u->segs, u->nsegs, sizeof(*u->segs), offsetof(struct seg, lo), a);

	return lo && a < u->segs[lo - 1].hi ? &u->segs[lo - 1] : NULL;
}

static const char *linkage_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		return dwarf_formstring(&a);
	return NULL;
}

static __s64 die_udata(Dwarf_Die *die, int at)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr(die, at, &a) || dwarf_formudata(&a, &w) != 0 || w > INT32_MAX)
		return 0;
	return (__s64)w;
}

/* Name, linkage name and first line of the function of @die. Its file is
 * the file of the line shown (the line table's, with its directory, as
 * addr2line prints it); the declaration's file only when that is unknown. */
static void fill_function(struct profile_line *l, Dwarf_Die *die, const char *file)
{
	int line = 0;

	l->function = dwarf_diename(die);
	l->system_name = linkage_name(die);
	l->filename = file ? file : dwarf_decl_file(die);
	if (dwarf_decl_line(die, &line) == 0 && line > 0)
		l->start_line = line;
}

/* Source file @idx of the unit's line table (DW_AT_call_file), or NULL. */
static const char *unit_file(Dwarf_Die *cudie, __s64 idx)
{
	Dwarf_Files *files;
	size_t n;

	if (idx < 0 || dwarf_getsrcfiles(cudie, &files, &n) != 0 || (size_t)idx >= n)
		return NULL;
	return dwarf_filesrc(files, (size_t)idx, NULL, NULL);
}

static bool path_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct pentry *)elem)->key == key;
}

/* @file as addr2line shows it: joined with the unit's comp_dir when
 * relative. Falls back to @file itself on allocation failure. */
static const char *full_path(struct dwarf_lines *d, const struct unit *u, const char *file)
{
	__u64 h = htab__hash_u64((uintptr_t)file, 0);
	struct pentry *e;
	char *path;
	size_t len;

	if (!file || *file == '/' || !u->comp_dir)
		return file;
	e = htab__find(&d->paths, h, file, path_eq, NULL);
	if (e)
		return e->path;
	len = strlen(u->comp_dir) + strlen(file) + 2;
	path = malloc(len);
	if (!path)
		return file;
	if (htab__add(&d->paths, h, (void **)&e)) {
		free(path);
		return file;
	}
	snprintf(path, len, "%s/%s", u->comp_dir, file);
	e->key = file;
	e->path = path;
	return path;
}

/* Read unit @u's line rows ourselves (dwline.h) the first time: 1 when
 * they are there, else libdw's are used (split units, whose lines are
 * elsewhere; a program dwline refuses). */
static int unit_lines(struct dwarf_lines *d, struct unit *u)
{
	Dwarf_Attribute a;
	Dwarf_Word off;
	Dwarf_Half version;
	__u8 unit_type = 0, addr_size = 0;

	if (u->lines_state)
		return u->lines_state;
	u->lines_state = -1;
	if (!d->line_sec || !u->cudie.cu ||
	    dwarf_cu_info(u->cudie.cu, &version, &unit_type, NULL, NULL, NULL, &addr_size, NULL) ||
	    (unit_type != DW_UT_compile && unit_type != DW_UT_partial) ||
	    !dwarf_attr(&u->cudie, DW_AT_stmt_list, &a) || dwarf_formudata(&a, &off) ||
	    dwline__read(d->line_sec, d->line_len, off, addr_size, &u->lines))
		return u->lines_state;
	u->lines_state = 1;
	return 1;
}

/* Compute the lines of @a into @out (at most PROFILE_MAX_LINES); count. */
static size_t resolve(struct dwarf_lines *d, __u64 a, struct profile_line *out)
{
	struct unit *u = find_unit(d, a);
	const struct seg *sg;
	Dwarf_Line *row;
	__s64 line = 0, col = 0;
	const char *file = NULL;
	bool have_row = false;
	size_t n = 0;
	__s32 si;
	int v;

	if (!u && index_unset(d) > 0)
		u = find_unit(d, a);
	if (!u) {
		d->st.no_unit++;
		return 0;
	}
	if (unit_die(d, u) || (!u->indexed && index_unit(d, u)))
		return 0;
	if (unit_lines(d, u) > 0) {
		const struct dwline_row *r = dwline__find(&u->lines, a);

		if (r) {
			have_row = true;
			file = full_path(d, u, unit_file(&u->cudie, r->file));
			line = r->line > 0 ? r->line : 0;
			col = r->column;
		}
	} else if ((row = dwarf_getsrc_die(&u->cudie, a))) {
		have_row = true;
		file = full_path(d, u, dwarf_linesrc(row, NULL, NULL));
		if (dwarf_lineno(row, &v) == 0 && v > 0)
			line = v;
		if (dwarf_linecol(row, &v) == 0 && v > 0)
			col = v;
	}
	sg = find_seg(u, a);
	for (si = sg ? (__s32)sg->scope : -1; si >= 0 && n < PROFILE_MAX_LINES;) {
		struct scope *s = &u->scopes[si];

		memset(&out[n], 0, sizeof(out[n]));
		fill_function(&out[n], &s->die, file);
		out[n].line = line;
		out[n].column = col;
		n++;
		if (!s->inlined)
			break;
		/* The caller's line is where this one was inlined. */
		line = die_udata(&s->die, DW_AT_call_line);
		col = die_udata(&s->die, DW_AT_call_column);
		file = full_path(d, u, unit_file(&u->cudie, die_udata(&s->die, DW_AT_call_file)));
		si = s->parent;
	}
	if (!n && have_row) {
		/* Lines but no scope (assembly, or no subprogram DIEs). */
		memset(&out[0], 0, sizeof(out[0]));
		out[0].filename = file;
		out[0].line = line;
		out[0].column = col;
		n = 1;
	}
	return n;
}

static bool str_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return !strcmp(*(char *const *)elem, key);
}

/* @s as a string @d owns (one copy per distinct string), NULL for NULL or
 * when out of memory. */
static const char *own(struct dwarf_lines *d, const char *s)
{
	char **e, *copy;
	__u64 h;

	if (!s)
		return NULL;
	h = htab__hash_str(s);
	e = htab__find(&d->strs, h, s, str_eq, NULL);
	if (e)
		return *e;
	copy = strdup(s);
	if (!copy || htab__add(&d->strs, h, (void **)&e)) {
		free(copy);
		return NULL;
	}
	*e = copy;
	return copy;
}

static bool mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

static bool addr_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct centry *)elem)->addr == *(const __u64 *)key;
}

static struct centry *cache_find(const struct dwarf_lines *d, __u64 vaddr)
{
	return htab__find(&d->cache, htab__hash_u64(vaddr, 0), &vaddr, addr_eq, NULL);
}

static struct profile_line *store(struct dwarf_lines *d, const struct profile_line *v, size_t n)
{
	struct chunk *c = d->chunks;
	struct profile_line *dst;

	if (!c || c->used + n > CHUNK_LINES) {
		c = malloc(sizeof(*c));
		if (!c)
			return NULL;
		c->used = 0;
		c->next = d->chunks;
		d->chunks = c;
	}
	dst = &c->v[c->used];
	memcpy(dst, v, n * sizeof(*v));
	c->used += n;
	return dst;
}

bool dwarf_lines__lookup(struct dwarf_lines *d, __u64 vaddr, const char *outer_name,
			 const struct profile_line **lines, size_t *n)
{
	struct profile_line tmp[PROFILE_MAX_LINES];
	struct centry *e;
	size_t k, i;

	*lines = NULL;
	*n = 0;
	d->st.lookups++;
	e = cache_find(d, vaddr);
	if (e) {
		d->st.cache_hits++;
		*lines = e->lines;
		*n = e->n;
		return e->n > 0;
	}
	if (htab__count(&d->cache) >= DWARF_LINES_MAX_CACHE || begin(d))
		return false;
	if (htab__add(&d->cache, htab__hash_u64(vaddr, 0), (void **)&e))
		return false;
	e->addr = vaddr;
	k = resolve(d, vaddr, tmp);
	if (k && outer_name && *outer_name) {
		/* A readable symbol-table name qualifies C++ members and names
		 * what DWARF left unnamed; a mangled one is the system name. */
		if (mangled(outer_name)) {
			if (!tmp[k - 1].system_name)
				tmp[k - 1].system_name = outer_name;
			if (!tmp[k - 1].function)
				tmp[k - 1].function = outer_name;
		} else {
			tmp[k - 1].function = outer_name;
		}
	}
	/* A line that no function claims (alignment padding between
	 * functions, with neither a subprogram nor a symbol) names nothing:
	 * the frame stays unnamed, called by its mapping and offset. */
	if (k == 1 && !tmp[0].function && !tmp[0].system_name)
		k = 0;
	/* Cached lines outlive libdw's data (dwarf_lines__release()). */
	for (i = 0; i < k; i++) {
		tmp[i].function = own(d, tmp[i].function);
		tmp[i].system_name = own(d, tmp[i].system_name);
		tmp[i].filename = own(d, tmp[i].filename);
	}
	e->n = (__u32)k;
	e->lines = k ? store(d, tmp, k) : NULL;
	if (k && !e->lines)
		e->n = 0;
	*lines = e->lines;
	*n = e->n;
	return e->n > 0;
}

bool dwarf_lines__peek(const struct dwarf_lines *d, __u64 vaddr, const struct profile_line **lines,
		       size_t *n)
{
	const struct centry *e;

	*lines = NULL;
	*n = 0;
	if ((d->begun && d->broken) || htab__count(&d->cache) >= DWARF_LINES_MAX_CACHE)
		return true; /* dwarf_lines__lookup() would find nothing either */
	e = cache_find(d, vaddr);
	if (!e)
		return false;
	*lines = e->lines;
	*n = e->n;
	return true;
}

bool dwarf_lines__has_inline(const struct dwarf_lines *d)
{
	return d->has_inline;
}

void dwarf_lines__stats(const struct dwarf_lines *d, struct dwarf_lines_stats *st)
{
	*st = d->st;
}

/* ---- libdw glue ------------------------------------------------------------
 * The two symbols libdw.a references that a static musl build of only
 * libelf + libdw lacks (defined here so they come with this object). Weak,
 * so a fuller build (libebl, a libc with error()) wins.
 *   error(): glibc's; libdw calls it only when its allocator runs out of
 *            memory, to exit. Same here, with the message on stderr.
 *   ebl_closebackend(): libebl's; dwarf_end() calls it only for CFI opened
 *            with dwarf_getcfi_elf(), which profcap never calls.
 */
struct ebl;


void error(int status, int errnum, const char *fmt, ...) __attribute__((weak));
void ebl_closebackend(struct ebl *ebl) __attribute__((weak));

void error(int status, int errnum, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("profcap: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
	if (status)
		exit(status);
}

void ebl_closebackend(struct ebl *ebl)
{
	(void)ebl;
}
