/* symbolizer_files.c - the parsed ELF files that mappings share: found by
 * inode or build-id, evicted when unused (see symbolizer.h). */
#include "symbolize/symbolizer_int.h"

/* ---- files ------------------------------------------------------------------------- */

static struct sym_file *new_file(struct symbolizer *s, struct elfsym *elf)
{
	struct sym_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->elf = elf;
	f->next = s->files;
	s->files = f;
	s->nfiles++;
	return f;
}

struct sym_file *sym__vdso_file(struct symbolizer *s)
{
	struct elfsym *elf = NULL;

	if (s->vdso_tried)
		return s->vdso;
	s->vdso_tried = true;
	if (elfsym__open_self_vdso(&elf)) {
		s->st.elf_errors++;
		return NULL;
	}
	s->vdso = calloc(1, sizeof(*s->vdso));
	if (!s->vdso) {
		elfsym__free(elf);
		return NULL;
	}
	s->vdso->elf = elf;
	s->st.elf_files_parsed++;
	return s->vdso;
}

/* Hook for lines (sym__get_file()): a file's dwarf_lines come from its own DWARF,
 * else from the debug file find_debug_info() found for it. */

/* What mapping descs of @f say symbolization found (PROFILE_MAPPING_HAS_*). */
__u32 sym__file_flags(const struct sym_file *f)
{
	__u32 flags = 0;

	if (!f || !f->elf)
		return 0;
	if (elfsym__symbol_count(f->elf))
		flags |= PROFILE_MAPPING_HAS_FUNCTIONS;
	if (f->dw)
		flags |= PROFILE_MAPPING_HAS_FUNCTIONS | PROFILE_MAPPING_HAS_FILENAMES |
			 PROFILE_MAPPING_HAS_LINE_NUMBERS | PROFILE_MAPPING_HAS_INLINE_FRAMES;
	return flags;
}

/* Open the file behind mapping @e of @pid (proc/pfile.h). fd or -errno. */
static int open_mapped_file(struct symbolizer *s, int pid, const struct procmaps_entry *e)
{
	int fd, err;

	err = pfile__open_mapped(s->proc_root, pid, e, &fd);
	/* Gone, known from its snapshot: the host's file, if it is the one. */
	if (err && s->snap && s->snap->pid == pid)
		err = pfile__open_host(e, &fd);
	return err ? err : fd;
}

/* Add the symbols @elf (parsed from @fd, mapped by @e of @pid) lacks: from a
 * debug file found by build-id or debuglink, else downloaded from
 * debuginfod (when enabled), else from MiniDebugInfo or Go's pclntab. */
static int find_debug_info(struct symbolizer *s, int pid, const struct procmaps_entry *e, int fd,
			   struct elfsym *elf, bool want_dwarf)
{
	char root[PATH_MAX];
	struct debugfile_query q = {
		.root = root,
		.path = e->path,
		.build_id = elfsym__build_id(elf),
		.dirs = (const char *const *)s->debug_dirs,
		.ndirs = s->ndebug_dirs,
		.dev = 0,
	};
	const char *how = NULL;
	int dfd, err;

	bool want_syms = !elfsym__has_symtab(elf);

	if (!want_syms && !want_dwarf)
		return -1;
	q.debuglink = elfsym__debuglink(elf, &q.debuglink_crc);
	snprintf(root, sizeof(root), "%s/%d/root", s->proc_root, pid);
	/* Gone, known from its snapshot: its file was opened on the host
	 * (pfile__open_host()), so are its debug files. */
	if (s->snap && s->snap->pid == pid && access(root, X_OK))
		snprintf(root, sizeof(root), "/");
	dfd = debugfile__open(&q, &how);
	if (!want_syms)
		return dfd >= 0 ? dfd : -1; /* for its DWARF only */
	if (dfd < 0 && s->dinfod && q.build_id) {
		dfd = debuginfod__open(s->dinfod, q.build_id);
		how = "debuginfod";
	}
	if (dfd >= 0) {
		err = elfsym__add_debug_fd(elf, dfd);
		if (!err) {
			s->st.debug_files++;
			pr_debug("%s: symbols from its debug file (%s)", e->path, how);
			return dfd; /* the caller's, for its DWARF */
		}
		close(dfd);
		pr_warn("%s: its debug file (found by %s) has no usable symbols: %s", e->path, how,
			err == -ENOENT ? "no function symbols" : strerror(-err));
	}
	err = elfsym__add_embedded_fd(elf, fd);
	if (!err)
		s->st.debug_embedded++;
	else if (err != -ENOENT)
		pr_warn("%s: its MiniDebugInfo or Go function table is unreadable (%s): "
			"skipped",
			e->path, strerror(-err));
	return -1;
}

static bool inode_eq(const void *elem, const void *key, void *ctx)
{
	const struct inode_elem *a = elem, *b = key;

	(void)ctx;
	return a->dev == b->dev && a->inode == b->inode;
}

static bool build_id_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return !strcmp(((const struct build_id_elem *)elem)->hex, key);
}

/* Index @f under @key's (dev, inode) (of hash @h); a failure only costs a
 * parse or a build-id read next time. */
static void index_inode(struct symbolizer *s, const struct inode_elem *key, __u64 h,
			struct sym_file *f)
{
	struct inode_elem *e;

	if (!htab__add(&s->by_inode, h, (void **)&e))
		*e = (struct inode_elem){.dev = key->dev, .inode = key->inode, .f = f};
}

static void index_build_id(struct symbolizer *s, const char *hex, struct sym_file *f)
{
	struct build_id_elem *e;

	if (!htab__add(&s->by_build_id, htab__hash_str(hex), (void **)&e))
		*e = (struct build_id_elem){.hex = hex, .f = f};
}

/* The cached file for mapping @e of @pid, parsing it on first sight. NULL when
 * it cannot be opened or parsed (counted) or the file cap is reached. */
struct sym_file *sym__get_file(struct symbolizer *s, int pid, const struct procmaps_entry *e)
{
	struct inode_elem key = {.dev = (__u64)e->dev_major << 32 | e->dev_minor,
				 .inode = e->inode};
	__u64 ih = htab__hash_u64(key.dev, key.inode);
	char hex[ELFSYM_BUILD_ID_HEX];
	struct dwarf_lines *dw = NULL;
	const struct inode_elem *in;
	const struct build_id_elem *bn;
	struct elfsym *elf = NULL;
	struct sym_file *f = NULL;
	int fd, dfd, err;

	in = htab__find(&s->by_inode, ih, &key, inode_eq, NULL);
	if (in) {
		s->st.elf_cache_hits++;
		return in->f;
	}
	if (s->nfiles >= SYMBOLIZER_MAX_FILES)
		return NULL;
	fd = open_mapped_file(s, pid, e);
	if (fd < 0) {
		s->st.elf_errors++;
		return NULL;
	}
	if (!elfsym__read_build_id_fd(fd, hex, sizeof(hex))) {
		bn = htab__find(&s->by_build_id, htab__hash_str(hex), hex, build_id_eq, NULL);
		if (bn) {
			/* Same file reached through another inode (a copy, another layer). */
			f = bn->f;
			index_inode(s, &key, ih, f);
			s->st.elf_cache_hits++;
			goto out_close;
		}
	}
	err = elfsym__open_fd(fd, &elf);
	if (err)
		s->st.elf_errors++;
	else
		s->st.elf_files_parsed++;
	if (elf) {
		/* Lines: the binary's own DWARF, else its debug file's. */
		if (!s->no_lines)
			dwarf_lines__open_fd(fd, &dw);
		dfd = find_debug_info(s, pid, e, fd, elf, !s->no_lines && !dw);
		if (dfd >= 0 && !dw && !s->no_lines)
			dwarf_lines__open_fd(dfd, &dw);
		if (dfd >= 0)
			close(dfd);
		if (dw)
			s->st.dwarf_files++;
	}
	f = new_file(s, elf);
	if (!f) {
		elfsym__free(elf);
		dwarf_lines__free(dw);
		goto out_close;
	}
	f->dw = dw;
	dw = NULL;
	if (debugfile__htlhash(fd, f->htlhash))
		f->htlhash[0] = '\0';
	index_inode(s, &key, ih, f);
	if (elf && elfsym__build_id(elf))
		index_build_id(s, elfsym__build_id(elf), f);
out_close:
	close(fd);
	return f;
}

/* Remove from the file indexes every entry whose file no mapping uses any
 * more. */
static void drop_unused(struct symbolizer *s)
{
	struct build_id_elem *b;
	struct inode_elem *in;
	size_t it = 0;

	while ((in = htab__next(&s->by_inode, &it)))
		if (!in->f->refs)
			htab__remove(&s->by_inode, in);
	it = 0;
	while ((b = htab__next(&s->by_build_id, &it)))
		if (!b->f->refs)
			htab__remove(&s->by_build_id, b);
}

/* Free the parsed files that no known process has mapped for
 * SYMBOLIZER_FILE_GRACE_NS: binaries that are started again and again
 * (compilers, shell tools) stay parsed between their runs. */
void sym__evict_files(struct symbolizer *s)
{
	struct sym_file **pp, *f;
	__u64 now = now_ns(s);
	bool any = false;

	for (f = s->files; f; f = f->next) {
		if (f->refs)
			continue;
		if (!f->idle_since_ns)
			f->idle_since_ns = now;
		if (now - f->idle_since_ns >= s->file_grace_ns)
			any = true;
	}
	if (!any)
		return;
	/* Mark the victims by an impossible refs value for the table sweep. */
	for (f = s->files; f; f = f->next)
		if (!f->refs && f->idle_since_ns && now - f->idle_since_ns < s->file_grace_ns)
			f->refs = SIZE_MAX;
	drop_unused(s);
	for (pp = &s->files; (f = *pp);) {
		if (f->refs) {
			pp = &f->next;
			continue;
		}
		*pp = f->next;
		elfsym__free(f->elf);
		dwarf_lines__free(f->dw);
		free(f);
		s->nfiles--;
		s->st.elf_files_evicted++;
	}
	for (f = s->files; f; f = f->next)
		if (f->refs == SIZE_MAX)
			f->refs = 0;
}

void symbolizer__set_file_grace(struct symbolizer *s, __u64 ns)
{
	s->file_grace_ns = ns;
}
