/* symbolizer.c - addresses to frames (see symbolizer.h): set-up, user
 * resolves and the batched DWARF line lookups. */
#include "symbolize/symbolizer_int.h"

struct symbolizer *symbolizer__new(const char *proc_root)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->file_grace_ns = SYMBOLIZER_FILE_GRACE_NS;
	s->clock = &clock__system;
	htab__init(&s->procs, sizeof(struct sym_proc *), SYMBOLIZER_MAX_PROCESSES);
	htab__init(&s->by_inode, sizeof(struct inode_elem), MAX_INODES);
	htab__init(&s->by_build_id, sizeof(struct build_id_elem), SYMBOLIZER_MAX_FILES);
	s->proc_root = strdup(proc_root ? proc_root : "/proc");
	if (!s->proc_root) {
		free(s);
		return NULL;
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	struct sym_file *f, *next;
	struct sym_proc **pp;
	size_t it = 0, i;

	if (!s)
		return;
	while ((pp = htab__next(&s->procs, &it)))
		sym__free_proc(*pp);
	free(s->ctx_looks);
	htab__release(&s->procs);
	htab__release(&s->by_inode);
	htab__release(&s->by_build_id);
	for (f = s->files; f; f = next) {
		next = f->next;
		elfsym__free(f->elf);
		dwarf_lines__free(f->dw);
		free(f);
	}
	if (s->vdso) {
		elfsym__free(s->vdso->elf);
		free(s->vdso);
	}
	sym__kernel_release(s);
	free(s->lwant);
	free(s->scratch);
	for (i = 0; i < s->ndebug_dirs; i++)
		free(s->debug_dirs[i]);
	debuginfod__free(s->dinfod);
	free(s->proc_root);
	free(s);
}

static struct sym_map *find_map(const struct sym_proc *p, __u64 addr)
{
	size_t lo = search__upto(p->cur_starts, p->ncur, sizeof(__u64), 0, addr);

	if (lo && addr < p->cur[lo - 1]->desc.limit)
		return p->cur[lo - 1];
	return NULL;
}

/* symbolizer__resolve_user(); with @batch, DWARF lines come from the cache
 * only and a miss is queued: false then. */
static bool resolve_user(struct symbolizer *s, int pid, __u64 addr, bool leaf,
			 struct profile_frame *out, bool batch)
{
	struct sym_proc *p;
	struct sym_map *m;
	__u64 a, vaddr;

	sym__frame_unresolved(out, addr, PROFILE_FRAME_NATIVE);
	if (pid <= 0 || (!leaf && !addr))
		return true;
	a = leaf ? addr : addr - 1;
	p = sym__find_proc(s, pid);
	if (!p) {
		symbolizer__add_process(s, pid);
		p = sym__find_proc(s, pid);
	}
	if (!p || p->gone)
		return true;
	m = find_map(p, a);
	if (!m && now_ns(s) - p->last_refresh_ns >= SYMBOLIZER_REFRESH_NS) {
		s->st.maps_refreshes++;
		sym__load_maps(s, p);
		m = find_map(p, a);
	}
	if (!m || sym__jit_mapping(m)) {
		/* JIT code: named by the perf map, even once unmapped. */
		const char *jit = sym__jit_name(s, p, a);

		if (jit) {
			out->function = jit;
			out->type_name = sym__jit_type(p, jit);
		}
	}
	if (!m)
		return true;
	out->mapping = &m->desc;
	if (!m->file || !m->file->elf)
		return true;
	if (elfsym__offset_to_vaddr(m->file->elf, a - m->desc.start + m->desc.file_offset, &vaddr))
		return true;
	out->function = elfsym__lookup_demangled(m->file->elf, vaddr, &out->system_name);
	if (!m->file->dw)
		return true;
	if (!batch) {
		dwarf_lines__lookup(m->file->dw, vaddr, out->function, &out->lines, &out->nlines);
		return true;
	}
	if (dwarf_lines__peek(m->file->dw, vaddr, &out->lines, &out->nlines))
		return true;
	if (array__grow((void **)&s->lwant, &s->lwant_cap, s->nlwant, sizeof(*s->lwant), 256,
			SYMBOLIZER_LINES_BATCH)) {
		/* full: look up now */
		dwarf_lines__lookup(m->file->dw, vaddr, out->function, &out->lines, &out->nlines);
		return true;
	}
	s->lwant[s->nlwant++] = (struct sym_lwant){m->file, vaddr, out->function};
	return false;
}

void symbolizer__resolve_user(struct symbolizer *s, int pid, __u64 addr, bool leaf,
			      struct profile_frame *out)
{
	resolve_user(s, pid, addr, leaf, out, false);
}

bool symbolizer__resolve_user_batched(struct symbolizer *s, int pid, __u64 addr, bool leaf,
				      struct profile_frame *out)
{
	return resolve_user(s, pid, addr, leaf, out, true);
}

static int cmp_lwant(const void *a, const void *b)
{
	const struct sym_lwant *x = a, *y = b;

	if (x->f != y->f)
		return (uintptr_t)x->f < (uintptr_t)y->f ? -1 : 1;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* Free the DWARF of every file the batch numbered @keep did not look up
 * in (all files for 0). */
static void release_dwarf_but(struct symbolizer *s, __u32 keep)
{
	struct sym_file *f;

	for (f = s->files; f; f = f->next)
		if (!keep || f->lines_batch != keep)
			s->st.dwarf_releases += dwarf_lines__release(f->dw);
}

void symbolizer__resolve_lines_batch(struct symbolizer *s)
{
	const struct profile_line *l;
	size_t i, n, held = 0;
	__u32 batch;

	if (!s->nlwant)
		return;
	qsort(s->lwant, s->nlwant, sizeof(*s->lwant), cmp_lwant);
	batch = ++s->lines_batches ?: ++s->lines_batches; /* never 0 */
	s->lines_batch_ns = now_ns(s);
	for (i = 0; i < s->nlwant; i++)
		s->lwant[i].f->lines_batch = batch;
	/* DWARF kept from the last batch that this one does not need goes
	 * first: what is resident during the batch stays within the cap. */
	release_dwarf_but(s, batch);
	for (i = 0; i < s->nlwant; i++) {
		struct sym_file *f = s->lwant[i].f;

		dwarf_lines__lookup(f->dw, s->lwant[i].vaddr, s->lwant[i].outer, &l, &n);
		if (i + 1 < s->nlwant && s->lwant[i + 1].f == f)
			continue;
		/* The file's last address: its DWARF stays begun for the next
		 * batch while the files kept fit the cap, else it goes before
		 * the next file's begins. */
		if (held + dwarf_lines__held(f->dw) <= SYMBOLIZER_DWARF_KEEP) {
			held += dwarf_lines__held(f->dw);
			s->st.dwarf_kept += dwarf_lines__held(f->dw) > 0;
		} else {
			s->st.dwarf_releases += dwarf_lines__release(f->dw);
		}
	}
	s->nlwant = 0;
	/* Give back a queue grown by a burst. */
	if (s->lwant_cap > 4096) {
		free(s->lwant);
		s->lwant = NULL;
		s->lwant_cap = 0;
	}
}

void symbolizer__release_dwarf(struct symbolizer *s)
{
	bool recent = s->lines_batches && now_ns(s) - s->lines_batch_ns < SYMBOLIZER_DWARF_KEEP_NS;

	release_dwarf_but(s, recent ? s->lines_batches : 0);
}

void symbolizer__release_all_dwarf(struct symbolizer *s)
{
	release_dwarf_but(s, 0);
}

void symbolizer__set_lines(struct symbolizer *s, bool on)
{
	s->no_lines = !on;
}

const struct profile_process_desc *symbolizer__process(const struct symbolizer *s, int pid)
{
	const struct sym_proc *p = sym__find_proc(s, pid);

	return p && !p->gone ? &p->desc : NULL;
}

bool symbolizer__tried(const struct symbolizer *s, int pid)
{
	return sym__find_proc(s, pid) != NULL;
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	*st = s->st;
}

int symbolizer__add_debug_dir(struct symbolizer *s, const char *dir)
{
	if (s->ndebug_dirs == DEBUGFILE_MAX_DIRS)
		return -E2BIG;
	s->debug_dirs[s->ndebug_dirs] = strdup(dir);
	if (!s->debug_dirs[s->ndebug_dirs])
		return -ENOMEM;
	s->ndebug_dirs++;
	return 0;
}

void symbolizer__set_debuginfod(struct symbolizer *s, struct debuginfod *d)
{
	s->dinfod = d;
}
