/* elfsym.c - an ELF file's symbols, sorted for address lookups (see
 * elfsym.h). */
#include "symbolize/elfsym_int.h"

/* Sized symbols may nest (e.g. a cold part inside a bigger range); a lookup
 * looks back this many earlier symbols for one that still covers the address. */
#define LOOKBACK 8
/* The entry point of a stripped executable is named "_start" up to this
 * many bytes past it (glibc's x86-64 _start is 38 bytes; the return address
 * of its call to __libc_start_main is inside), or up to the next symbol. */
#define ENTRY_SPAN 64
#define ENTRY_NAME "_start"
/* Sanity cap on the self vdso image. */
#define VDSO_MAX_SIZE (1u << 20)

/* Marks a symbol whose name is not mangled in elfsym.dnames. */
static char not_mangled[1];

/* 0 = GLOBAL, 1 = WEAK, 2 = LOCAL, 3 = other; then prefer fewer leading
 * underscores ("malloc" over "__libc_malloc"), then shorter names. */
static __u32 name_rank(int bind, const char *name, size_t len)
{
	__u32 b = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : bind == STB_LOCAL ? 2 : 3;
	__u32 us = 0;

	while (name[us] == '_' && us < 7)
		us++;
	if (len > 0xffff)
		len = 0xffff;
	return b << 24 | us << 16 | (__u32)len;
}

/* Add a symbol whose name (@len bytes, NUL-terminated) is already in
 * names at @off. 0, -E2BIG (a cap: @e is marked truncated) or -ENOMEM. */
static int add_sym_at(struct elfsym *e, const GElf_Sym *gs, int bind, size_t off, size_t len,
		      __u64 sec_end)
{
	struct sym *s;

	if (e->nsyms == ELFSYM_MAX_SYMBOLS || off > UINT32_MAX) {
		e->truncated = true;
		return -E2BIG;
	}
	if (array__grow((void **)&e->syms, &e->cap, e->nsyms, sizeof(*e->syms), 256,
			ELFSYM_MAX_SYMBOLS))
		return -ENOMEM;
	array__populate(e->syms, e->nsyms, sizeof(*e->syms), e->cap);
	s = &e->syms[e->nsyms++];
	s->start = gs->st_value;
	s->size = gs->st_size;
	s->end = 0;
	s->sec_end = sec_end;
	s->name = (__u32)off;
	s->seq = e->nread++;
	s->rank = name_rank(bind, (const char *)e->names.data + off, len);
	s->label = GELF_ST_TYPE(gs->st_info) == STT_NOTYPE;
	if (s->label)
		s->rank += 1u << 16; /* a function at the same address names it */
	return 0;
}

/* Add a symbol named @name (copied into names, cut at ELFSYM_MAX_NAME). */
static int add_sym(struct elfsym *e, const GElf_Sym *gs, int bind, const char *name, __u64 sec_end)
{
	size_t len = strnlen(name, ELFSYM_MAX_NAME - 1);
	size_t off = e->names.len;
	int err;

	if (e->nsyms == ELFSYM_MAX_SYMBOLS || len + 1 > e->names.max - e->names.len) {
		e->truncated = true;
		return -E2BIG;
	}
	if (buf__append(&e->names, name, len) || buf__append(&e->names, "", 1)) {
		e->names.len = off;
		return -ENOMEM;
	}
	err = add_sym_at(e, gs, bind, off, len, sec_end);
	if (err)
		e->names.len = off;
	return err;
}

/* Room for all @n entries of a table at once (a failure leaves it to
 * growth): growth by doubling would copy a big table many times over, into
 * freshly faulted pages. Untouched room is never resident. */
static void reserve_syms(struct elfsym *e, size_t n)
{
	if (n > 1 && n - 1 <= ELFSYM_MAX_SYMBOLS - e->nsyms)
		array__grow((void **)&e->syms, &e->cap, e->nsyms + n - 2, sizeof(*e->syms), 256,
			    ELFSYM_MAX_SYMBOLS);
}

/* The section a symbol is defined in, remembered across the symbols of a
 * table (they come grouped by section). */
struct sec_memo {
	size_t shndx;
	__u64 end; /* 0 if unknown */
	bool exec;
};

static void sec_lookup(Elf *elf, size_t shndx, struct sec_memo *m)
{
	Elf_Scn *sec;
	GElf_Shdr ssh;

	if (shndx == m->shndx)
		return;
	m->shndx = shndx;
	m->end = 0;
	m->exec = false;
	sec = elf_getscn(elf, shndx);
	if (sec && gelf_getshdr(sec, &ssh)) {
		if (ssh.sh_addr + ssh.sh_size > ssh.sh_addr)
			m->end = ssh.sh_addr + ssh.sh_size;
		m->exec = ssh.sh_flags & SHF_EXECINSTR;
	}
}

/* Whether symbol @gs may name code: functions; and untyped unsized labels
 * in code, which name assembly entry points (ld.so's _start) where no
 * function covers them (see finish_symbols()). The name is checked by
 * named_code(). */
static bool maybe_code(const GElf_Sym *gs)
{
	int type = GELF_ST_TYPE(gs->st_info);

	bool code =
		type == STT_FUNC || type == STT_GNU_IFUNC || (type == STT_NOTYPE && !gs->st_size);

	return code && gs->st_shndx != SHN_UNDEF && gs->st_shndx < SHN_LORESERVE && gs->st_value;
}

static bool named_code(Elf *elf, const GElf_Sym *gs, const char *name, struct sec_memo *m)
{
	bool label = GELF_ST_TYPE(gs->st_info) == STT_NOTYPE;

	if (!*name || (label && (*name == '.' || *name == '$')))
		return false;
	sec_lookup(elf, gs->st_shndx, m);
	return !label || m->exec;
}

/* Entries read per pread by read_symtab_fd(). */
#define SYM_WINDOW 1024
/* The byte order of this host, as e_ident[EI_DATA] says it. */
#define HOST_ELFDATA (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB)

/* Read the symbol table @sh straight from the file (e->src_fd; ELFCLASS64
 * in the host's byte order): its string table whole into names, once, and
 * the entries through a small window. libelf instead reads both into
 * buffers of its own (each freed at elf_end(): a munmap, a TLB flush on
 * every CPU the process runs on) and every name is looked up, checked and
 * copied on its own. A name is used in place; one longer than
 * ELFSYM_MAX_NAME is cut in a copy of its own (a string table shares
 * suffixes: the table itself stays as it is).
 * 0, -EAGAIN (not this way: read it with libelf) or -ENOMEM. */
static int read_symtab_fd(Elf *elf, const GElf_Shdr *sh, struct elfsym *e)
{
	Elf_Scn *str = elf_getscn(elf, sh->sh_link);
	struct sec_memo memo = {0};
	const unsigned char *id;
	Elf64_Sym *win = NULL;
	GElf_Shdr ssh;
	size_t i, n, k, got, base;
	int err = 0;

	if (e->src_fd < 0 || gelf_getclass(elf) != ELFCLASS64 || !str || !gelf_getshdr(str, &ssh) ||
	    ssh.sh_type != SHT_STRTAB || (ssh.sh_flags | sh->sh_flags) & SHF_COMPRESSED ||
	    (sh->sh_entsize && sh->sh_entsize != sizeof(Elf64_Sym)) || !ssh.sh_size ||
	    ssh.sh_size >= e->names.max - e->names.len)
		return -EAGAIN;
	id = (const unsigned char *)elf_getident(elf, NULL);
	if (!id || id[EI_DATA] != HOST_ELFDATA)
		return -EAGAIN;
	if (sh->sh_type == SHT_NOBITS)
		return 0;
	base = e->names.len;
	if (buf__reserve(&e->names, (size_t)ssh.sh_size + 1))
		return -EAGAIN;
	/* read into whole: its pages in one call, not a fault each */
	pages__populate(e->names.data + base, (size_t)ssh.sh_size + 1);
	/* short (a truncated file): libelf says what it finds */
	if (pfile__pread(e->src_fd, e->names.data + base, (size_t)ssh.sh_size,
			 (off_t)ssh.sh_offset))
		return -EAGAIN;
	e->names.data[base + ssh.sh_size] = '\0'; /* every name ends in the table */
	e->names.len = base + (size_t)ssh.sh_size + 1;
	win = malloc(SYM_WINDOW * sizeof(*win));
	if (!win) {
		e->names.len = base;
		return -ENOMEM;
	}
	n = (size_t)(sh->sh_size / sizeof(Elf64_Sym));
	reserve_syms(e, n);
	for (i = 0; i < n && !err; i += got) {
		got = n - i < SYM_WINDOW ? n - i : SYM_WINDOW;
		if (pfile__pread(e->src_fd, win, got * sizeof(*win),
				 (off_t)(sh->sh_offset + (__u64)i * sizeof(*win))))
			break; /* truncated: the symbols before it stay */
		for (k = i ? 0 : 1; k < got && !err; k++) {
			const GElf_Sym *gs = &win[k];
			size_t off, len;
			int bind;

			if (!maybe_code(gs) || gs->st_name >= ssh.sh_size)
				continue;
			off = base + gs->st_name;
			if (!named_code(elf, gs, (const char *)e->names.data + off, &memo))
				continue;
			len = strlen((const char *)e->names.data + off);
			bind = GELF_ST_BIND(gs->st_info);
			if (len < ELFSYM_MAX_NAME)
				err = add_sym_at(e, gs, bind, off, len, memo.end);
			else if (!buf__reserve(&e->names, ELFSYM_MAX_NAME)) /* no move below */
				err = add_sym(e, gs, bind, (const char *)e->names.data + off,
					      memo.end);
		}
	}
	free(win);
	return err == -E2BIG ? 0 : err;
}

/* The same through libelf (another class or byte order, an image in
 * memory), copying each name. */
static int read_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct elfsym *e)
{
	Elf_Data *data;
	Elf_Scn *str;
	GElf_Shdr ssh;
	struct sec_memo memo = {0};
	size_t i, n, entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	int err;

	err = read_symtab_fd(elf, sh, e);
	if (err != -EAGAIN)
		return err;
	data = elf_getdata(scn, NULL);
	if (!data || !entsize)
		return 0;
	n = data->d_size / entsize;
	reserve_syms(e, n);
	str = elf_getscn(elf, sh->sh_link);
	if (str && gelf_getshdr(str, &ssh) && ssh.sh_size <= e->names.max - e->names.len)
		buf__reserve(&e->names, (size_t)ssh.sh_size);
	for (i = 1; i < n; i++) {
		GElf_Sym gs;
		const char *name;

		if (!gelf_getsym(data, (int)i, &gs))
			break;
		if (!maybe_code(&gs))
			continue;
		name = elf_strptr(elf, sh->sh_link, gs.st_name);
		if (!name || !named_code(elf, &gs, name, &memo))
			continue;
		err = add_sym(e, &gs, GELF_ST_BIND(gs.st_info), name, memo.end);
		if (err == -E2BIG)
			return 0;
		if (err)
			return err;
	}
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort, keep one name per address (the best ranked, with the largest size),
 * then compute each symbol's end. */
static void sort_symbols(struct elfsym *e)
{
	size_t i, j = 0;

	if (!e->nsyms)
		return;
	qsort(e->syms, e->nsyms, sizeof(*e->syms), cmp_sym);
	for (i = 1; i < e->nsyms; i++) {
		struct sym *keep = &e->syms[j];

		if (e->syms[i].start == keep->start) {
			if (e->syms[i].size > keep->size)
				keep->size = e->syms[i].size;
			if (e->syms[i].sec_end > keep->sec_end)
				keep->sec_end = e->syms[i].sec_end;
			continue;
		}
		e->syms[++j] = e->syms[i];
	}
	e->nsyms = j + 1;
	/* Labels inside a sized function (local labels of hand-written
	 * assembly) would cut it: only those outside every function stay. */
	{
		__u64 cover = 0;

		for (i = 0, j = 0; i < e->nsyms; i++) {
			const struct sym *s = &e->syms[i];

			if (s->label && s->start < cover)
				continue;
			if (!s->label && s->size && s->start + s->size > cover)
				cover = s->start + s->size;
			e->syms[j++] = *s;
		}
		e->nsyms = j;
	}
	for (i = 0; i < e->nsyms; i++) {
		struct sym *s = &e->syms[i];
		__u64 next = i + 1 < e->nsyms ? e->syms[i + 1].start : 0;

		if (s->size && s->start + s->size > s->start) {
			s->end = s->start + s->size;
		} else if (next) {
			s->end = next;
			if (s->sec_end > s->start && s->sec_end < next)
				s->end = s->sec_end;
		} else {
			s->end = s->sec_end > s->start ? s->sec_end : s->start + 1;
		}
	}
}

/* The entry code of a stripped executable: ENTRY_SPAN bytes from e_entry,
 * or up to the first symbol at or past it (none when one starts there). */
static void entry_span(struct elfsym *e)
{
	size_t lo;

	e->entry_end = e->entry;
	if (!e->entry)
		return;
	lo = search__upto(e->syms, e->nsyms, sizeof(*e->syms), offsetof(struct sym, start),
			  e->entry);
	if (lo && e->syms[lo - 1].start == e->entry)
		return;
	e->entry_end = e->entry + ENTRY_SPAN;
	if (lo < e->nsyms && e->syms[lo].start < e->entry_end)
		e->entry_end = e->syms[lo].start;
}

/* Sort and deduplicate the symbols read so far, then place the entry
 * code's span among them. */
static void finish_symbols(struct elfsym *e)
{
	sort_symbols(e);
	entry_span(e);
}

/* The symbol starting at @vaddr (elfsym__plt_stubs()): sorted by now. */
static const char *plt_resolve(void *arg, __u64 vaddr)
{
	__u64 start = 0;
	const char *name = elfsym__lookup(arg, vaddr, &start);

	return name && start == vaddr ? name : NULL;
}

/* A PLT stub as a local function symbol (elfsym__plt_stubs()). */
static int add_plt_sym(void *arg, __u64 vaddr, __u64 size, const char *name, __u64 sec_end)
{
	GElf_Sym gs = {
		.st_value = vaddr, .st_size = size, .st_info = GELF_ST_INFO(STB_LOCAL, STT_FUNC)};

	return add_sym(arg, &gs, STB_LOCAL, name, sec_end);
}

static int parse(Elf *elf, struct elfsym *e)
{
	Elf_Scn *scn = NULL;
	bool interp = false;
	size_t nsyms;
	GElf_Ehdr eh;
	int err;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	err = elfsym__read_segments(elf, e, &interp);
	if (err)
		return err;
	e->entry = eh.e_type == ET_EXEC || interp ? eh.e_entry : 0;
	e->has_build_id = elfsym__find_build_id(elf, e->build_id);
	elfsym__find_go_build_id(elf, e->go_build_id);
	err = elfsym__read_debuglink(elf, e);
	if (err)
		return err;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		size_t before = e->nsyms;

		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		err = read_symtab(elf, scn, &sh, e);
		if (err)
			return err;
		if (sh.sh_type == SHT_SYMTAB && e->nsyms > before)
			e->has_symtab = true;
	}
	/* Stubs of ifuncs are named after their resolvers: look them up in
	 * the symbols read, then add the stubs and sort again. */
	finish_symbols(e);
	nsyms = e->nsyms;
	err = elfsym__plt_stubs(elf, plt_resolve, add_plt_sym, e);
	if (err && err != -E2BIG)
		return err;
	if (e->nsyms != nsyms)
		finish_symbols(e);
	return 0;
}

/* Add the symbols of another ELF image of the same file (a debug file, the
 * MiniDebugInfo image): .symtab only, its addresses are the file's. */
static int add_symtab_of(Elf *elf, struct elfsym *e)
{
	Elf_Scn *scn = NULL;
	size_t before = e->nsyms;
	GElf_Ehdr eh;
	int err;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		err = read_symtab(elf, scn, &sh, e);
		if (err)
			return err;
	}
	if (e->nsyms == before)
		return -ENOENT;
	finish_symbols(e);
	return 0;
}

static struct elfsym *alloc_elfsym(void)
{
	struct elfsym *e = calloc(1, sizeof(*e));

	if (e) {
		buf__init(&e->names, ELFSYM_MAX_NAMES);
		e->src_fd = -1;
	}
	return e;
}

/* Parse @elf (may be NULL after a failed elf_begin) and end it; @fd is
 * its file (read directly), or -1 for an image in memory. */
static int parse_and_end(Elf *elf, int fd, struct elfsym **out)
{
	struct elfsym *e = NULL;
	int err;

	*out = NULL;
	if (!elf)
		return -ENOEXEC;
	e = alloc_elfsym();
	if (!e) {
		err = -ENOMEM;
		goto out_end;
	}
	e->src_fd = fd;
	err = parse(elf, e);
	e->src_fd = -1;
	if (err) {
		elfsym__free(e);
		goto out_end;
	}
	*out = e;
out_end:
	elf_end(elf);
	return err;
}

int elfsym__open_fd(int fd, struct elfsym **out)
{
	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	return parse_and_end(elf_begin(fd, ELF_C_READ, NULL), fd, out);
}

int elfsym__open_mem(const void *image, size_t size, struct elfsym **out)
{
	char *copy = NULL;
	int err;

	*out = NULL;
	if (!image || !size)
		return -ENOEXEC;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	/* libelf wants a writable, suitably aligned image: give it a copy. */
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, size);
	err = parse_and_end(elf_memory(copy, size), -1, out);
	free(copy);
	return err;
}

/* libelf's handle on the ELF file @fd into *@elf (the caller ends it): 0, or
 * -ENOEXEC with *@elf NULL when libelf cannot start or @fd is not ELF. */
static int begin_elf(int fd, Elf **elf)
{
	*elf = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	*elf = elf_begin(fd, ELF_C_READ, NULL);
	if (*elf && elf_kind(*elf) == ELF_K_ELF)
		return 0;
	elf_end(*elf);
	*elf = NULL;
	return -ENOEXEC;
}

int elfsym__read_build_id_fd(int fd, char *hex, size_t size)
{
	Elf *elf = NULL;
	int err;

	if (size < ELFSYM_BUILD_ID_HEX)
		return -EINVAL;
	err = begin_elf(fd, &elf);
	if (err)
		return err;
	err = elfsym__find_build_id(elf, hex) ? 0 : -ENOENT;
	elf_end(elf);
	return err;
}

/* Size of the ELF image at @base from its own headers (sections are last in
 * a vdso, but take the maximum of everything the headers point at). */
static size_t self_image_size(const unsigned char *base)
{
	GElf_Ehdr eh;
	size_t size, i;

	if (memcmp(base, ELFMAG, SELFMAG))
		return 0;
/* The table offsets and sizes of ELF header @h (either class). */
#define TABLES_OF(h)                               \
	do {                                       \
		eh.e_phoff = (h)->e_phoff;         \
		eh.e_phnum = (h)->e_phnum;         \
		eh.e_phentsize = (h)->e_phentsize; \
		eh.e_shoff = (h)->e_shoff;         \
		eh.e_shnum = (h)->e_shnum;         \
		eh.e_shentsize = (h)->e_shentsize; \
	} while (0)
	if (base[EI_CLASS] == ELFCLASS64)
		TABLES_OF((const Elf64_Ehdr *)(const void *)base);
	else
		TABLES_OF((const Elf32_Ehdr *)(const void *)base);
#undef TABLES_OF
	size = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	if (eh.e_phoff + (size_t)eh.e_phnum * eh.e_phentsize > size)
		size = eh.e_phoff + (size_t)eh.e_phnum * eh.e_phentsize;
	if (size > VDSO_MAX_SIZE)
		return 0;
	for (i = 0; i < eh.e_phnum; i++) {
		const unsigned char *ph = base + eh.e_phoff + i * eh.e_phentsize;
		__u64 end;

		if (base[EI_CLASS] == ELFCLASS64) {
			const Elf64_Phdr *p = (const void *)ph;

			end = p->p_offset + p->p_filesz;
		} else {
			const Elf32_Phdr *p = (const void *)ph;

			end = (__u64)p->p_offset + p->p_filesz;
		}
		if (end > size)
			size = end;
	}
	return size <= VDSO_MAX_SIZE ? size : 0;
}

int elfsym__open_self_vdso(struct elfsym **out)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	size_t size;

	*out = NULL;
	if (!base)
		return -ENOENT;
	size = self_image_size((const unsigned char *)base);
	if (!size)
		return -ENOEXEC;
	return elfsym__open_mem((const void *)base, size, out);
}

static void free_dnames(struct elfsym *e)
{
	size_t i;

	if (!e->dnames)
		return;
	for (i = 0; i < e->nsyms; i++)
		if (e->dnames[i] != not_mangled)
			free(e->dnames[i]);
	free(e->dnames);
	e->dnames = NULL;
}

void elfsym__free(struct elfsym *e)
{
	if (!e)
		return;
	free_dnames(e);
	free(e->syms);
	free(e->debuglink);
	buf__release(&e->names);
	free(e);
}

const char *elfsym__build_id(const struct elfsym *e)
{
	return e->has_build_id ? e->build_id : NULL;
}

int elfsym__offset_to_vaddr(const struct elfsym *e, __u64 off, __u64 *vaddr)
{
	size_t i;

	for (i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return 0;
		}
	}
	return -ENOENT;
}

/* Index of the symbol containing @vaddr, or -1. */
static long find_sym(const struct elfsym *e, __u64 vaddr)
{
	size_t lo = search__upto(e->syms, e->nsyms, sizeof(*e->syms), offsetof(struct sym, start),
				 vaddr);
	size_t n;

	for (n = 0; lo > 0 && n < LOOKBACK; lo--, n++)
		if (vaddr < e->syms[lo - 1].end)
			return (long)(lo - 1);
	return -1;
}

/* True when @vaddr, which no symbol covers, is in the entry code of an
 * executable stripped of its _start symbol (Debian's gcc and as). */
static bool in_entry(const struct elfsym *e, __u64 vaddr)
{
	return vaddr >= e->entry && vaddr < e->entry_end;
}

const char *elfsym__lookup(const struct elfsym *e, __u64 vaddr, __u64 *sym_addr)
{
	long i = find_sym(e, vaddr);

	if (i < 0 && in_entry(e, vaddr)) {
		if (sym_addr)
			*sym_addr = e->entry;
		return ENTRY_NAME;
	}
	if (i < 0)
		return NULL;
	if (sym_addr)
		*sym_addr = e->syms[i].start;
	return (const char *)e->names.data + e->syms[i].name;
}

/* demangle__name() of @raw; a PLT stub's name keeps its "@plt" after the
 * demangled function ("std::terminate()@plt"). */
static char *demangle_sym(const char *raw)
{
	static const char plt[] = "@plt";
	size_t n = strlen(raw), k = sizeof(plt) - 1;
	char *stem, *d, *out;

	if (n <= k || strcmp(raw + n - k, plt))
		return demangle__name(raw);
	stem = strndup(raw, n - k);
	d = stem ? demangle__name(stem) : NULL;
	out = d ? malloc(strlen(d) + k + 1) : NULL;
	if (out) {
		memcpy(out, d, strlen(d));
		memcpy(out + strlen(d), plt, k + 1);
	}
	free(stem);
	free(d);
	return out;
}

const char *elfsym__lookup_demangled(struct elfsym *e, __u64 vaddr, const char **system_name)
{
	long i = find_sym(e, vaddr);
	const char *raw;
	char *d;

	*system_name = NULL;
	if (i < 0)
		return in_entry(e, vaddr) ? ENTRY_NAME : NULL;
	raw = (const char *)e->names.data + e->syms[i].name;
	if (!e->dnames) {
		e->dnames = calloc(e->nsyms, sizeof(*e->dnames));
		if (!e->dnames)
			return raw;
	}
	if (!e->dnames[i]) {
		d = demangle_sym(raw);
		e->dnames[i] = d ? d : not_mangled;
	}
	if (e->dnames[i] == not_mangled)
		return raw;
	*system_name = raw;
	return e->dnames[i];
}

size_t elfsym__symbol_count(const struct elfsym *e)
{
	return e->nsyms;
}

bool elfsym__truncated(const struct elfsym *e)
{
	return e->truncated;
}

bool elfsym__has_symtab(const struct elfsym *e)
{
	return e->has_symtab;
}

const char *elfsym__go_build_id(const struct elfsym *e)
{
	return e->go_build_id[0] ? e->go_build_id : NULL;
}

const char *elfsym__debuglink(const struct elfsym *e, __u32 *crc)
{
	if (crc)
		*crc = e->debuglink_crc;
	return e->debuglink;
}

/* Add the symbols @add finds in ELF file @fd to @e; *@found is set when it
 * succeeds. New symbols renumber the old: the demangled names go. */
static int add_from_fd(struct elfsym *e, int fd, int (*add)(Elf *, struct elfsym *), bool *found)
{
	Elf *elf;
	int err;

	err = begin_elf(fd, &elf);
	if (err)
		return err;
	free_dnames(e);
	err = add(elf, e);
	elf_end(elf);
	if (!err)
		*found = true;
	return err;
}

int elfsym__add_debug_fd(struct elfsym *e, int fd)
{
	int err;

	e->src_fd = fd;
	err = add_from_fd(e, fd, add_symtab_of, &e->has_symtab);
	e->src_fd = -1;
	return err;
}

/* Symbols from the xz-compressed ELF image in .gnu_debugdata. */
static int add_minidebuginfo(Elf *elf, struct elfsym *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elfsym__find_section(elf, ".gnu_debugdata", &sh);
	Elf_Data *data;
	void *image = NULL;
	size_t len = 0;
	Elf *inner;
	int err;

	if (!scn || sh.sh_type == SHT_NOBITS)
		return -ENOENT;
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return -ENOENT;
	err = minidebug__decompress(data->d_buf, data->d_size, MINIDEBUG_MAX_IMAGE, &image, &len);
	if (err)
		return err;
	inner = elf_memory(image, len);
	err = add_symtab_of(inner, e);
	elf_end(inner);
	free(image);
	return err;
}

/* The bytes of section @name of @elf (in the file, not empty) with its
 * header into *@sh, or NULL. */
static Elf_Data *section_bytes(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = elfsym__find_section(elf, name, sh);
	Elf_Data *data;

	if (!scn || sh->sh_type == SHT_NOBITS)
		return NULL;
	data = elf_rawdata(scn, NULL);
	return data && data->d_buf && data->d_size ? data : NULL;
}

/* Whether @elf is a Go program: Go's build-id note, or its build info. */
static bool is_go(Elf *elf, const struct elfsym *e)
{
	GElf_Shdr sh;

	return e->go_build_id[0] || elfsym__find_section(elf, ".note.go.buildid", &sh) ||
	       elfsym__find_section(elf, ".go.buildinfo", &sh);
}

/* The pclntab of a Go PIE the system linker made (cgo): inside .data.rel.ro,
 * its text address from .rela.dyn, whose entries are read as x86-64 ELF64
 * little-endian ones only (other files: the address the table holds). */
static int go_funcs_in_data(Elf *elf, struct gopclntab_func **funcs, size_t *n)
{
	const unsigned char *id = (const unsigned char *)elf_getident(elf, NULL);
	GElf_Shdr ro_sh, rela_sh;
	Elf_Data *ro = section_bytes(elf, ".data.rel.ro", &ro_sh);
	Elf_Data *rela = section_bytes(elf, ".rela.dyn", &rela_sh);
	GElf_Ehdr eh;

	if (!ro)
		return -ENOENT;
	if (!rela || rela_sh.sh_type != SHT_RELA || !id || id[EI_CLASS] != ELFCLASS64 ||
	    id[EI_DATA] != ELFDATA2LSB || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		rela = NULL;
	return gopclntab__parse_data(ro->d_buf, ro->d_size, ro_sh.sh_addr,
				     rela ? rela->d_buf : NULL, rela ? rela->d_size : 0,
				     ELFSYM_MAX_SYMBOLS, funcs, n);
}

/* The functions of @elf's pclntab: .gopclntab, else .data.rel.ro.gopclntab
 * (a PIE by Go's own linker), else, for a Go program, inside .data.rel.ro.
 * @text_addr: the address of .text, for a table that leaves it 0. */
static int go_funcs(Elf *elf, const struct elfsym *e, __u64 text_addr,
		    struct gopclntab_func **funcs, size_t *n)
{
	static const char *const names[] = {".gopclntab", ".data.rel.ro.gopclntab"};
	GElf_Shdr sh;
	Elf_Data *data;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		data = section_bytes(elf, names[i], &sh);
		if (data)
			return gopclntab__parse(data->d_buf, data->d_size, text_addr,
						ELFSYM_MAX_SYMBOLS, funcs, n);
	}
	return is_go(elf, e) ? go_funcs_in_data(elf, funcs, n) : -ENOENT;
}

/* Go function names from the pclntab (Go binaries built with -s). */
static int add_gopclntab(Elf *elf, struct elfsym *e)
{
	struct gopclntab_func *funcs = NULL;
	size_t i, n = 0;
	GElf_Shdr text;
	int err;

	if (!elfsym__find_section(elf, ".text", &text))
		return -ENOENT;
	err = go_funcs(elf, e, text.sh_addr, &funcs, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		GElf_Sym gs = {.st_value = funcs[i].entry,
			       .st_size = funcs[i].end - funcs[i].entry};

		err = add_sym(e, &gs, STB_GLOBAL, funcs[i].name, text.sh_addr + text.sh_size);
		if (err == -E2BIG)
			break;
		if (err)
			goto out;
	}
	err = n ? 0 : -ENOENT;
	if (!err)
		finish_symbols(e);
out:
	free(funcs);
	return err;
}

/* The symbols embedded in @elf: .gnu_debugdata, else Go's pclntab. */
static int add_embedded(Elf *elf, struct elfsym *e)
{
	int err = add_minidebuginfo(elf, e);

	return err == -ENOENT ? add_gopclntab(elf, e) : err;
}

int elfsym__add_embedded_fd(struct elfsym *e, int fd)
{
	return add_from_fd(e, fd, add_embedded, &e->embedded);
}
