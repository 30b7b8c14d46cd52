/* dwarf.c - source lines and inlined frames from DWARF (see dwarf.h). */
#include "symbolize/dwarf_int.h"

#define MAX_DEPTH 256 /* DIE nesting walked per unit */
/* Files whose DWARF is not begun yet each hold a descriptor (libdw finds a
 * dwz alternate file relative to it): past this many, begin at open. */
#define MAX_PENDING 256

static atomic_int pending_fds;

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

/* Begin the DWARF and index its units, once. libdw decompresses every
 * compressed debug section here (megabytes for a libc), which is why
 * it waits for the first lookup. 0 or -errno (then the file has no lines). */
static int begin(struct dwarf_lines *d)
{
	int err;

	if (d->begun)
		return d->broken ? -ENOENT : 0;
	d->begun = true;
	d->broken = true;
	/* not mapped yet, or released: map the file (private and writable:
	 * dwl__hide_unused() edits section headers) */
	if (!d->elf) {
		d->elf = elf_begin(d->fd, ELF_C_READ_MMAP_PRIVATE, NULL);
		if (!d->elf)
			return -ENOENT;
	}
	d->st.begins++;
	dwl__hide_unused(d->elf);
	dwl__decompress_sections(d);
	d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	/* The descriptor maps the file again after a release; past
	 * MAX_PENDING files, it goes and the DWARF stays. */
	if (atomic_load(&pending_fds) > MAX_PENDING)
		drop_fd(d);
	if (!d->dw)
		return -ENOENT; /* no usable DWARF */
	dwl__find_line_section(d);
	d->held = dwl__held_size(d->elf);
	err = dwl__index_units(d);
	if (err)
		return err;
	if (!d->nranges)
		return -ENOENT;
	d->broken = false;
	dwl__release_pages(d);
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
	 * up, and unmapping even the few pages read is a TLB flush. begin()
	 * maps the file. */
	elf = elf_begin(d->fd, ELF_C_READ, NULL);
	err = elf && elf_kind(elf) == ELF_K_ELF ? 0 : -ENOEXEC;
	found = !err && dwl__has_debug_info(elf);
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
	dwl__drop_units(d);
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
static int add_scope(struct walk *w, Dwarf_Die *die, int tag, __s32 parent, __u32 depth, __s32 *idx)
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

	if (!u && dwl__index_unset(d) > 0)
		u = find_unit(d, a);
	if (!u) {
		d->st.no_unit++;
		return 0;
	}
	if (dwl__unit_die(d, u) || (!u->indexed && index_unit(d, u)))
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
