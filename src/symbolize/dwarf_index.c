/* dwarf_index.c - the address -> unit index of the DWARF of a file, from
 * .debug_aranges or a walk of its units (see dwarf.h). */
#include "symbolize/dwarf_int.h"

/* ---- unit ranges -------------------------------------------------- */

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
 * Reads each unit DIE, which makes libdw set up every unit: the way for files without
 * .debug_aranges. */
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
static int add_arange(struct dwarf_lines *d, struct aranges *ar, struct uoff *e, __u64 lo, __u64 n)
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
	e = ar->nu ? bsearch(&cu, ar->u, ar->nu, sizeof(*ar->u), cmp_uoff_key) : NULL;
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

/* The DIE offsets of the units no set covers, for dwl__index_unset(). */
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

void dwl__drop_units(struct dwarf_lines *d)
{
	free(d->units);
	free(d->ranges);
	free(d->unset);
	d->units = NULL;
	d->ranges = NULL;
	d->unset = NULL;
	d->nunits = d->nranges = d->nunset = d->units_cap = d->ranges_cap = 0;
}

/* Units from .debug_aranges (GCC writes one set per unit with code):
 * address -> unit without reading any unit DIE, so libdw sets up only the
 * units lookups land in (and those before them: it reads units in order).
 * Units with no set are read from their DIE. 1 when done, 0 when the file
 * has no usable .debug_aranges (the caller walks every unit), or -errno. */
static int index_aranges(struct dwarf_lines *d)
{
	Elf_Data *data = dwl__section_data(d->elf, ".debug_aranges");
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
		err = list_unset(d, &ar) ?: 1; /* 1: indexed */
	free(ar.u);
	if (err <= 0) { /* start over, or fail */
		dwl__drop_units(d);
		return err;
	}
	d->units_cap = ar.dcap;
	d->ranges_cap = ar.rcap;
	d->st.units_aranges = ar.covered;
	return 1;
}

/* Index the units .debug_aranges left out, from their DIE, once. 1 when
 * there were any (the caller looks again), 0, or -errno. */
int dwl__index_unset(struct dwarf_lines *d)
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

int dwl__index_units(struct dwarf_lines *d)
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
int dwl__unit_die(struct dwarf_lines *d, struct unit *u)
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
