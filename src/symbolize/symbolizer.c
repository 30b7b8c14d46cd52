#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/clock.h"
#include "util/fdio.h"
#include "util/search.h"
#include "proc/status.h"
#include "symbolize/dwarf.h"
#include "symbolize/debugfile.h"
#include "symbolize/debuginfod.h"
#include "symbolize/elfsym.h"
#include "symbolize/kallsyms.h"
#include "util/log.h"
#include "symbolize/perfmap.h"
#include "proc/pfile.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/container.h"
#include "proc/procctx.h"
#include "symbolize/symbolizer.h"
#include "util/htab.h"

#define NOTES_MAX (64u << 10)

/* ---- model ------------------------------------------------------------------------ */

/* One parsed ELF file, shared by every mapping of it. @elf NULL: the file
 * opened but did not parse (remembered so it is not retried). */
struct sym_file {
	struct sym_file *next; /* all files, for freeing */
	struct elfsym *elf;
	struct dwarf_lines *dw; /* lines and inlined frames; NULL: no DWARF */
	size_t refs;	     /* sym_maps using it; 0 = evictable (never for the vdso) */
	__u64 idle_since_ns; /* when refs was first seen 0 by an eviction pass */
	__u32 lines_batch;   /* the last lines batch that looked up in @dw */
	char htlhash[DEBUGFILE_HTLHASH_HEX]; /* "" when unknown (the vdso) */
};

struct sym_map {
	struct sym_map *next_all; /* every map this process ever had */
	struct profile_mapping_desc desc;
	struct sym_file *file; /* NULL: no symbols */
	__u64 inode;
	__u32 dev_major, dev_minor;
	char *path; /* owned; desc.path points here */
};

/* One decoded process context; replaced ones stay on the list (descs
 * handed out may point at their attributes) until the process is dropped. */
struct sym_ctx {
	struct sym_ctx *prev;
	struct procctx c;
	struct profile_kv kv[PROCCTX_MAX_ATTRS]; /* views of c */
};

struct sym_proc {
	int pid;
	bool gone;
	struct profile_process_desc desc;
	char *exe_name, *exe_path, *cmdline;
	char container_id[CONTAINER_ID_LEN + 1]; /* "" when not in a container */
	struct sym_map **cur;			 /* current executable mappings, by start */
	__u64 *cur_starts;			 /* their starts, for search__upto() */
	size_t ncur;
	struct sym_map *all;
	size_t nall;
	__u64 last_refresh_ns;
	/* JIT code named by the process's perf map (NULL until one is found). */
	struct perfmap *perfmap;
	int nspid;	     /* pid in its own namespace, 0 = unknown (no perf map) */
	unsigned int euid;   /* owner a perf map may have, besides root */
	const char *runtime; /* profile.frame.type of its perf map entries, NULL = native */
	__u64 perfmap_ns;    /* last perf map read */
	bool perfmap_warned;
	/* No JIT code when added: its ids and perf map are read at its
	 * first JIT address (begin_perfmap()). */
	bool perfmap_later;
	/* OpenTelemetry process context: its mapping (0 = none seen), the
	 * current context (desc.attrs points into it), how many were read, and
	 * whether one failed and at which timestamp (not retried until it
	 * changes). */
	__u64 ctx_start, ctx_end;
	struct sym_ctx *ctx;
	size_t nctx;
	__u64 ctx_bad_ns;
	bool ctx_failed;
	/* Described from executable mappings alone (the kernel's records),
	 * which never show the context's mapping: its maps file is looked at
	 * once, when it is SYMBOLIZER_CTX_LOOK_NS old (symbolizer__check_
	 * contexts()), so a short-lived process costs no read. 0 = no look due. */
	__u64 ctx_look_ns;
};

/* The tables' elements: the key and the object it finds. */
struct inode_elem {
	__u64 dev, inode;
	struct sym_file *f;
};

struct build_id_elem {
	const char *hex; /* borrowed from f's elfsym */
	struct sym_file *f;
};

/* Entries of by_inode: a file may be reached through several inodes. */
#define MAX_INODES (4 * SYMBOLIZER_MAX_FILES)

struct symbolizer {
	char *proc_root;
	struct procmaps_source maps_src; /* fn NULL: maps files only */
	struct htab procs;		 /* struct sym_proc *, by pid */
	struct htab by_inode;		 /* struct inode_elem */
	struct htab by_build_id;	 /* struct build_id_elem */
	struct sym_file *files;
	size_t nfiles;
	struct sym_file *vdso;
	bool vdso_tried;
	/* Kernel symbols (see the kernel section below). */
	bool kernel;	  /* symbolizer__load_kernel() succeeded */
	bool kdesc_ready; /* kdesc's range is known (after the first pass) */
	struct profile_mapping_desc kdesc;
	char *kbuild_id;
	struct kmod **kmods; /* modules seen in a resolved address, never freed */
	size_t nkmods;
	struct kentry *kcache; /* sorted by lo, not overlapping */
	size_t nkcache, kcache_cap;
	__u64 *kwant; /* addresses waiting for the next pass */
	size_t nkwant;
	symbolizer_kname_fn kname; /* the kernel namer, NULL = /proc/kallsyms only */
	void *kname_ctx;
	__u32 kgen; /* passes made; an entry hit since the last one has gen == kgen */
	/* DWARF lookups waiting for symbolizer__resolve_lines_batch() */
	struct sym_lwant *lwant;
	size_t nlwant, lwant_cap;
	__u32 lines_batches;  /* batches run; sym_file.lines_batch is one of them */
	__u64 lines_batch_ns; /* when the last one ran (now_ns()) */
	struct symbolizer_stats st;
	__u64 file_grace_ns; /* see evict_files() */
	/* The early snapshot of the process being added (symbolizer__add_process_snap()),
	 * used where /proc no longer answers; NULL otherwise. */
	const struct procsnap *snap;
	bool snap_gone; /* ... and /proc no longer had its maps (load_maps()) */
	/* Processes whose context mapping is to be looked for (ctx_look_ns),
	 * oldest first; at SYMBOLIZER_CTX_LOOKS, the newest are not. */
	int *ctx_looks;
	size_t nctx_looks;
	const struct clock *clock; /* refresh rate limits and the grace */
	bool no_lines;	     /* symbolizer__set_lines(false) */
	char *debug_dirs[DEBUGFILE_MAX_DIRS]; /* extra debug directories (owned) */
	size_t ndebug_dirs;
	struct debuginfod *dinfod; /* NULL: no downloads */
	char *scratch;		   /* SYMBOLIZER_SCRATCH bytes for reads of /proc, see scratch() */
};

/* One buffer for the per-process reads of /proc (status, command line),
 * kept: one allocated and freed per process cost an munmap each. */
#define SYMBOLIZER_SCRATCH PROC_STATUS_MAX
_Static_assert(SYMBOLIZER_SCRATCH > SYMBOLIZER_MAX_CMDLINE, "a command line fits the scratch");

/* @s's scratch buffer (SYMBOLIZER_SCRATCH bytes), NULL without memory. */
static char *scratch(struct symbolizer *s)
{
	if (!s->scratch)
		s->scratch = malloc(SYMBOLIZER_SCRATCH);
	return s->scratch;
}

static void kernel_release(struct symbolizer *s);

/* A DWARF lookup a batched resolve left for symbolizer__resolve_lines_batch(). */
struct sym_lwant {
	struct sym_file *f;
	__u64 vaddr;
	const char *outer; /* the symbol-table name, owned by f->elf */
};

static __u64 now_ns(const struct symbolizer *s)
{
	return s->clock->now_ns(s->clock->ctx);
}

/* The snapshot of @pid handed to symbolizer__add_process_snap(), when it
 * was read within SYMBOLIZER_SNAP_FRESH_NS, or is lasting (taken from the
 * kernel's records): reading /proc again would say the same. NULL
 * otherwise. */
static const struct procsnap *fresh_snap(const struct symbolizer *s, int pid)
{
	const struct procsnap *snap = s->snap;

	if (!snap || snap->pid != pid)
		return NULL;
	if (!snap->lasting && clock__mono_ns() - snap->at_ns > SYMBOLIZER_SNAP_FRESH_NS)
		return NULL;
	return snap;
}

/* Read raw ELF notes at @path and extract a build-id as a new string, or NULL. */
static char *read_notes_build_id(const char *path)
{
	char hex[ELFSYM_BUILD_ID_HEX];
	struct buf b;
	char *res = NULL;

	buf__init(&b, NOTES_MAX);
	if (!buf__read_file(&b, path) && b.len &&
	    !elfsym__note_build_id(b.data, b.len, hex, sizeof(hex)))
		res = strdup(hex);
	buf__release(&b);
	return res;
}

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

static void free_maps(struct sym_proc *p)
{
	struct sym_map *m, *next;

	for (m = p->all; m; m = next) {
		next = m->next_all;
		if (m->file && m->file->refs)
			m->file->refs--;
		free(m->path);
		free(m);
	}
	p->all = NULL;
	p->nall = 0;
	free(p->cur);
	free(p->cur_starts);
	p->cur = NULL;
	p->cur_starts = NULL;
	p->ncur = 0;
	perfmap__free(p->perfmap);
	p->perfmap = NULL;
}

static void free_ctx(struct sym_proc *p)
{
	struct sym_ctx *c, *prev;

	for (c = p->ctx; c; c = prev) {
		prev = c->prev;
		procctx__clear(&c->c);
		free(c);
	}
	p->ctx = NULL;
	p->nctx = 0;
	p->ctx_start = p->ctx_end = 0;
	p->ctx_bad_ns = 0;
	p->ctx_failed = false;
	p->desc.attrs = NULL;
	p->desc.nattrs = 0;
}

static void free_proc(struct sym_proc *p)
{
	if (!p)
		return;
	free_ctx(p);
	free_maps(p);
	free(p->exe_name);
	free(p->exe_path);
	free(p->cmdline);
	free(p);
}

void symbolizer__free(struct symbolizer *s)
{
	struct sym_file *f, *next;
	struct sym_proc **pp;
	size_t it = 0, i;

	if (!s)
		return;
	while ((pp = htab__next(&s->procs, &it)))
		free_proc(*pp);
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
	kernel_release(s);
	free(s->lwant);
	free(s->scratch);
	for (i = 0; i < s->ndebug_dirs; i++)
		free(s->debug_dirs[i]);
	debuginfod__free(s->dinfod);
	free(s->proc_root);
	free(s);
}

/* ---- kernel ------------------------------------------------------------------------
 * Kernel addresses are named in passes over /proc/kallsyms (kallsyms.h's
 * queries), never from a table of every kernel symbol: a resolve answers
 * from a cache of symbol extents (and of ranges known to hold none) or
 * queues the address; symbolizer__resolve_kernel_batch() names the queue
 * in one streaming pass and caches what it found. Modules get a mapping
 * desc when a resolved address first lands in them. */

/* A symbol's extent [lo, hi) and its name, or (name NULL) a range known to
 * hold no symbol. */
struct kentry {
	__u64 lo, hi;
	char *name;
	struct kmod *mod; /* NULL = the core kernel */
	__u32 gen;
};

struct kmod {
	struct profile_mapping_desc desc;
	char *name; /* "ext4" */
	char *path; /* "[ext4]" */
	char *build_id;
};

/* @out as a frame of @type at @addr with nothing resolved yet. */
static void frame_unresolved(struct profile_frame *out, __u64 addr, enum profile_frame_type type)
{
	*out = (struct profile_frame){.address = addr, .type = type};
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static void kernel_release(struct symbolizer *s)
{
	size_t i;

	for (i = 0; i < s->nkcache; i++)
		free(s->kcache[i].name);
	free(s->kcache);
	free(s->kwant);
	for (i = 0; i < s->nkmods; i++) {
		free(s->kmods[i]->name);
		free(s->kmods[i]->path);
		free(s->kmods[i]->build_id);
		free(s->kmods[i]);
	}
	free(s->kmods);
	free(s->kbuild_id);
}

int symbolizer__load_kernel(struct symbolizer *s)
{
	char path[PATH_MAX];
	int err;

	if (s->kernel)
		return 0;
	snprintf(path, sizeof(path), "%s/kallsyms", s->proc_root);
	err = kallsyms__check(path);
	if (err)
		return err;
	s->kwant = malloc(SYMBOLIZER_KERNEL_BATCH * sizeof(*s->kwant));
	if (!s->kwant)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/../sys/kernel/notes", s->proc_root);
	s->kbuild_id = read_notes_build_id(path);
	s->kdesc.path = "[kernel.kallsyms]";
	s->kdesc.build_id = s->kbuild_id;
	s->kernel = true;
	return 0;
}

/* The mapping desc of module @m of query @q, made at its first use. NULL
 * when out of memory or at KALLSYMS_MAX_MODULES. */
static struct kmod *kernel_module(struct symbolizer *s, const struct kallsyms_query *q, int m)
{
	const struct kallsyms_module *km = kallsyms__query_module(q, (size_t)m);
	char path[PATH_MAX];
	struct kmod *k, **t;
	size_t i, len;

	if (!km)
		return NULL;
	for (i = 0; i < s->nkmods; i++) {
		if (strcmp(s->kmods[i]->name, km->name))
			continue;
		/* Widened by what this pass saw (the kernel namer knows a
		 * module's extent only from the symbols it named). */
		k = s->kmods[i];
		if (km->start && km->start < k->desc.start)
			k->desc.start = km->start;
		if (km->end > k->desc.limit)
			k->desc.limit = km->end;
		return k;
	}
	if (s->nkmods == KALLSYMS_MAX_MODULES)
		return NULL;
	t = realloc(s->kmods, (s->nkmods + 1) * sizeof(*t));
	if (!t)
		return NULL;
	s->kmods = t;
	k = calloc(1, sizeof(*k));
	len = strlen(km->name) + 3;
	if (!k || !(k->name = strdup(km->name)) || !(k->path = malloc(len))) {
		if (k)
			free(k->name);
		free(k);
		return NULL;
	}
	snprintf(k->path, len, "[%s]", km->name);
	snprintf(path, sizeof(path), "%s/../sys/module/%s/notes/.note.gnu.build-id", s->proc_root,
		 km->name);
	k->build_id = read_notes_build_id(path);
	k->desc.start = km->start;
	k->desc.limit = km->end > km->start ? km->end : km->start + 1;
	k->desc.path = k->path;
	k->desc.build_id = k->build_id;
	s->kmods[s->nkmods++] = k;
	return k;
}

static int cmp_kentry(const void *a, const void *b)
{
	const struct kentry *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->gen > y->gen ? -1 : x->gen < y->gen; /* newer first */
}

/* Sort the cache and drop what overlaps a newer entry (kallsyms changed:
 * a module or BPF program came or went) or repeats one. */
static void kcache_settle(struct symbolizer *s)
{
	size_t i, j = 0;

	qsort(s->kcache, s->nkcache, sizeof(*s->kcache), cmp_kentry);
	for (i = 0; i < s->nkcache; i++) {
		struct kentry *e = &s->kcache[i];

		while (j && e->lo < s->kcache[j - 1].hi && e->gen > s->kcache[j - 1].gen)
			free(s->kcache[--j].name);
		if (j && e->lo < s->kcache[j - 1].hi) {
			free(e->name);
			continue;
		}
		s->kcache[j++] = *e;
	}
	s->nkcache = j;
}

/* Make room for @n more entries under SYMBOLIZER_KERNEL_CACHE: drop those
 * neither made nor hit since the last pass, then all. */
static int kcache_room(struct symbolizer *s, size_t n)
{
	size_t i, j = 0;

	if (s->nkcache + n > SYMBOLIZER_KERNEL_CACHE) {
		for (i = 0; i < s->nkcache; i++) {
			if (s->kcache[i].gen == s->kgen)
				s->kcache[j++] = s->kcache[i];
			else
				free(s->kcache[i].name);
		}
		s->nkcache = j;
	}
	if (s->nkcache + n > SYMBOLIZER_KERNEL_CACHE) {
		for (i = 0; i < s->nkcache; i++)
			free(s->kcache[i].name);
		s->nkcache = 0;
	}
	if (s->nkcache + n > s->kcache_cap) {
		size_t cap = s->kcache_cap ? s->kcache_cap : 256;
		struct kentry *t;

		while (cap < s->nkcache + n)
			cap *= 2;
		t = realloc(s->kcache, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		s->kcache = t;
		s->kcache_cap = cap;
	}
	return 0;
}

static const struct kentry *kcache_find(const struct symbolizer *s, __u64 addr)
{
	size_t i = search__upto(s->kcache, s->nkcache, sizeof(*s->kcache),
				offsetof(struct kentry, lo), addr);

	return i && addr < s->kcache[i - 1].hi ? &s->kcache[i - 1] : NULL;
}

void symbolizer__set_maps_source(struct symbolizer *s, const struct procmaps_source *src)
{
	procmaps__source_set(&s->maps_src, src);
}

void symbolizer__set_kernel_namer(struct symbolizer *s, symbolizer_kname_fn fn, void *ctx)
{
	s->kname = fn;
	s->kname_ctx = ctx;
}

/* One naming pass over the @n addresses @addrs: by the kernel namer when it
 * names them all, else over /proc/kallsyms. */
static int kernel_query(struct symbolizer *s, const __u64 *addrs, size_t n,
			struct kallsyms_query **q)
{
	char path[PATH_MAX];
	const char **names = NULL;
	__u64 stext, etext;
	size_t i = 0;

	*q = NULL;
	if (s->kname && n && (names = calloc(n, sizeof(*names)))) {
		if (!s->kname(s->kname_ctx, addrs, n, names, &stext, &etext) &&
		    !kallsyms__query_names(addrs, n, names, stext, etext, q))
			while (i < n && kallsyms__query_hit(*q, i)->name)
				i++;
		free(names);
		if (*q && i == n) {
			s->st.kernel_named++;
			return 0;
		}
		kallsyms__query_free(*q);
		*q = NULL;
	}
	snprintf(path, sizeof(path), "%s/kallsyms", s->proc_root);
	return kallsyms__query_file(path, addrs, n, q);
}

int symbolizer__resolve_kernel_batch(struct symbolizer *s)
{
	struct kallsyms_query *q = NULL;
	__u64 ts, te;
	size_t i, n;
	int err;

	if (!s->nkwant)
		return 0;
	qsort(s->kwant, s->nkwant, sizeof(*s->kwant), cmp_u64);
	for (i = 1, n = 1; i < s->nkwant; i++)
		if (s->kwant[i] != s->kwant[n - 1])
			s->kwant[n++] = s->kwant[i];
	s->nkwant = 0;
	err = kernel_query(s, s->kwant, n, &q);
	if (!err)
		err = kcache_room(s, n);
	if (err)
		goto out;
	s->kgen++;
	s->st.kernel_passes++;
	/* The core text range; a later pass may widen it (the kernel namer
	 * knows only the symbols it named outside _stext.._etext). */
	kallsyms__query_text_range(q, &ts, &te);
	if (!s->kdesc_ready) {
		s->kdesc.start = ts;
		s->kdesc.limit = te > ts ? te : ts + 1;
		s->kdesc_ready = true;
	} else if (te > ts) {
		if (ts < s->kdesc.start)
			s->kdesc.start = ts;
		if (te > s->kdesc.limit)
			s->kdesc.limit = te;
	}
	for (i = 0; i < n; i++) {
		const struct kallsyms_hit *h = kallsyms__query_hit(q, i);
		struct kentry *e = &s->kcache[s->nkcache];

		*e = (struct kentry){.lo = h->start, .hi = h->end, .gen = s->kgen};
		if (h->name) {
			e->name = strdup(h->name);
			if (!e->name)
				continue; /* not cached: asked again next pass */
			if (h->module >= 0)
				e->mod = kernel_module(s, q, h->module);
		}
		s->nkcache++;
	}
	kcache_settle(s);
out:
	kallsyms__query_free(q);
	return err;
}

bool symbolizer__resolve_kernel(struct symbolizer *s, __u64 addr, struct profile_frame *out)
{
	struct kentry *e;

	frame_unresolved(out, addr, PROFILE_FRAME_KERNEL);
	if (!s->kernel)
		return true;
	e = (struct kentry *)kcache_find(s, addr);
	if (!e) {
		if (s->nkwant == SYMBOLIZER_KERNEL_BATCH)
			return true; /* the caller did not pass in time: unnamed */
		s->kwant[s->nkwant++] = addr;
		return false;
	}
	e->gen = s->kgen;
	out->function = e->name;
	if (e->name && e->mod)
		out->mapping = &e->mod->desc;
	else if (s->kdesc_ready && addr >= s->kdesc.start && addr < s->kdesc.limit)
		out->mapping = &s->kdesc;
	return true;
}

size_t symbolizer__kernel_queue_room(const struct symbolizer *s)
{
	return s->kernel ? SYMBOLIZER_KERNEL_BATCH - s->nkwant : SIZE_MAX;
}

const struct profile_mapping_desc *symbolizer__kernel_mapping(const struct symbolizer *s)
{
	return s->kdesc_ready ? &s->kdesc : NULL;
}

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

static struct sym_file *vdso_file(struct symbolizer *s)
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

/* Hook for lines (get_file()): a file's dwarf_lines come from its own DWARF,
 * else from the debug file find_debug_info() found for it. */

/* What mapping descs of @f say symbolization found (PROFILE_MAPPING_HAS_*). */
static __u32 file_flags(const struct sym_file *f)
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
static int find_debug_info(struct symbolizer *s, int pid, const struct procmaps_entry *e,
			   int fd, struct elfsym *elf, bool want_dwarf)
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
		pr_warn("%s: its debug file (found by %s) has no usable symbols: %s", e->path,
			how, err == -ENOENT ? "no function symbols" : strerror(-err));
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
static struct sym_file *get_file(struct symbolizer *s, int pid, const struct procmaps_entry *e)
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

/* ---- processes ----------------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static void strip_deleted(char *path)
{
	static const char suffix[] = PROCMAPS_DELETED_SUFFIX;
	size_t len = strlen(path), slen = sizeof(suffix) - 1;

	if (len > slen && !strcmp(path + len - slen, suffix))
		path[len - slen] = '\0';
}

/* ---- JIT code (perf maps) -------------------------------------------------------- */

/* profile.frame.type of the perf map entries of a process whose executable
 * or a mapped library has base name @name, or NULL when not a known runtime. */
static const char *runtime_of(const char *name)
{
	static const struct {
		const char *prefix; /* "x" matches "x" and "x.so..." / "x-..." versions */
		const char *type;
	} known[] = {
		{"node", "v8js"},
		{"nodejs", "v8js"},
		{"libnode.so", "v8js"},
		{"java", "jvm"},
		{"libjvm.so", "jvm"},
		{"dotnet", "dotnet"},
		{"libcoreclr.so", "dotnet"},
		{"beam.smp", "beam"},
	};
	size_t i, n;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		n = strlen(known[i].prefix);
		if (!strncmp(name, known[i].prefix, n) &&
		    (name[n] == '\0' || name[n] == '.' || name[n] == '-'))
			return known[i].type;
	}
	return NULL;
}

/* Frame type of perf map entry @name in @p: CPython's perf trampolines
 * (python -X perf) are "py::function:file"; otherwise the process's runtime. */
static const char *jit_type(const struct sym_proc *p, const char *name)
{
	if (!strncmp(name, "py::", 4))
		return "cpython";
	return p->runtime;
}

/* Mappings whose code a perf map may name: memory with no file behind it. */
static bool jit_mapping(const struct sym_map *m)
{
	return (!m->file || !m->file->elf) &&
	       (!strncmp(m->path, "[anon", 5) || !strncmp(m->path, "//anon", 6) ||
		!strncmp(m->path, "/memfd:", 7));
}

/* Number @idx (0 = first; -1 = last) on the line of PROC/PID/status text
 * @status that starts with @key, into *@val. False when absent. */
/* Read the pid @p has in its own PID namespace (the last NSpid field; the
 * pid itself on kernels without NSpid) and its effective uid. nspid stays 0
 * (no perf map) when the status is unreadable. */
static void load_ids(struct symbolizer *s, struct sym_proc *p)
{
	char path[PATH_MAX], *status;
	unsigned long long uid, nspid;
	ssize_t n;

	p->nspid = 0;
	status = scratch(s);
	if (!status)
		return;
	snprintf(path, sizeof(path), "%s/%d/status", s->proc_root, p->pid);
	n = proc_status__read(path, status, SYMBOLIZER_SCRATCH);
	/* "Uid: real effective saved fs". */
	if (n <= 0 || !proc_status__field(status, "Uid:", 1, 10, &uid))
		return;
	if (!proc_status__field(status, "NSpid:", -1, 10, &nspid))
		nspid = (unsigned long long)p->pid;
	p->euid = (unsigned int)uid;
	if (nspid > 0 && nspid <= INT_MAX)
		p->nspid = (int)nspid;
}

static void warn_perfmap(struct sym_proc *p, int err)
{
	const char *why;

	if (p->perfmap_warned)
		return;
	p->perfmap_warned = true;
	switch (err) {
	case -ELOOP:
		why = "it is a symbolic link or under one, which profcap does not follow there; "
		      "have the runtime write the file itself";
		break;
	case -EPERM:
		why = "it is owned by neither root nor the process's user";
		break;
	case -EINVAL:
		why = "it is not a regular file";
		break;
	case -E2BIG:
		why = "it is larger than profcap reads (128 MiB or 2M entries); "
		      "code compiled later stays unnamed";
		break;
	default:
		why = strerror(-err);
		break;
	}
	pr_warn("perf map /tmp/perf-%d.map of process %d (in its own root): %s; "
		"its JIT frames are %s",
		p->nspid, p->pid, why, err == -E2BIG ? "named up to that point" : "left unnamed");
}

/* Read what was appended to @p's perf map since the last read (all of it the
 * first time), through the process's own root. A missing map is normal. */
static void update_perfmap(struct symbolizer *s, struct sym_proc *p)
{
	char root[PATH_MAX];
	int fd = -1, err;

	p->perfmap_ns = now_ns(s);
	if (p->nspid <= 0)
		return;
	snprintf(root, sizeof(root), "%s/%d/root", s->proc_root, p->pid);
	err = perfmap__open(root, p->nspid, p->euid, &fd);
	if (err) {
		/* No map, the process gone, or its root closed to us (no
		 * ptrace access, as without CAP_SYS_PTRACE): nothing to say. */
		if (err != -ENOENT && err != -ESRCH && err != -ENOTDIR && err != -EACCES) {
			s->st.perfmap_errors++;
			warn_perfmap(p, err);
		}
		return;
	}
	if (!p->perfmap) {
		p->perfmap = perfmap__new();
		if (!p->perfmap)
			goto out;
		s->st.perfmaps++;
	}
	s->st.perfmap_reads++;
	err = perfmap__update_fd(p->perfmap, fd);
	if (err == -E2BIG)
		warn_perfmap(p, err);
	else if (err)
		s->st.perfmap_errors++;
out:
	close(fd);
}

/* True when @p maps memory a perf map may name (jit_mapping()). */
static bool has_jit_mapping(const struct sym_proc *p)
{
	for (size_t i = 0; i < p->ncur; i++)
		if (jit_mapping(p->cur[i]))
			return true;
	return false;
}

/* The ids and the perf map of @p, just added: only when it has JIT code
 * now. Most processes (compilers, shells) have none: reading their status
 * and looking for a perf map in their root cost two lookups in /proc and
 * two opens each; they are done at the first JIT address instead
 * (jit_name()). */
static void begin_perfmap(struct symbolizer *s, struct sym_proc *p)
{
	p->perfmap_later = !has_jit_mapping(p);
	if (p->perfmap_later)
		return;
	load_ids(s, p);
	update_perfmap(s, p);
}

/* The perf map name of (lookup) address @a in @p, re-reading the map on a
 * miss at most once per SYMBOLIZER_PERFMAP_REFRESH_NS. NULL if unnamed. */
static const char *jit_name(struct symbolizer *s, struct sym_proc *p, __u64 a)
{
	const struct perfmap_sym *sym = p->perfmap ? perfmap__lookup(p->perfmap, a) : NULL;

	if (!sym && p->perfmap_later) {
		p->perfmap_later = false;
		load_ids(s, p);
		update_perfmap(s, p);
		sym = p->perfmap ? perfmap__lookup(p->perfmap, a) : NULL;
	} else if (!sym && now_ns(s) - p->perfmap_ns >= SYMBOLIZER_PERFMAP_REFRESH_NS) {
		update_perfmap(s, p);
		sym = p->perfmap ? perfmap__lookup(p->perfmap, a) : NULL;
	}
	return sym ? sym->name : NULL;
}

static bool proc_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return (*(struct sym_proc *const *)elem)->pid == *(const int *)key;
}

static struct sym_proc **find_proc_elem(const struct symbolizer *s, int pid)
{
	return htab__find(&s->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
}

static struct sym_proc *find_proc(const struct symbolizer *s, int pid)
{
	struct sym_proc **pp = find_proc_elem(s, pid);

	return pp ? *pp : NULL;
}

static bool same_map(const struct sym_map *m, const struct procmaps_entry *e)
{
	return m->desc.start == e->start && m->desc.limit == e->end &&
	       m->desc.file_offset == e->offset && m->inode == e->inode &&
	       m->dev_major == e->dev_major && m->dev_minor == e->dev_minor &&
	       !strcmp(m->path, e->anonymous ? "[anon]" : e->path);
}

static struct sym_map *new_map(struct symbolizer *s, struct sym_proc *p,
			       const struct procmaps_entry *e)
{
	struct sym_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->path = strdup(e->anonymous ? "[anon]" : e->path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	m->inode = e->inode;
	m->dev_major = e->dev_major;
	m->dev_minor = e->dev_minor;
	if (!strcmp(e->path, "[vdso]"))
		m->file = vdso_file(s);
	else if (!e->anonymous && e->inode && e->path[0] != '[')
		m->file = get_file(s, p->pid, e);
	if (m->file && m->file != s->vdso) {
		m->file->refs++;
		m->file->idle_since_ns = 0;
	}
	m->desc.start = e->start;
	m->desc.limit = e->end;
	m->desc.file_offset = e->offset;
	m->desc.path = m->path;
	m->desc.build_id = m->file && m->file->elf ? elfsym__build_id(m->file->elf) : NULL;
	m->desc.flags = file_flags(m->file);
	m->desc.go_build_id = m->file && m->file->elf ? elfsym__go_build_id(m->file->elf) : NULL;
	m->desc.htlhash = m->file && m->file->htlhash[0] ? m->file->htlhash : NULL;
	if (!p->runtime && e->path[0] == '/')
		p->runtime = runtime_of(base_name(e->path));
	m->next_all = p->all;
	p->all = m;
	p->nall++;
	return m;
}

/* Read the process context of @p when its mapping is known and its publish
 * timestamp is new: the cost of a process without one is the name check
 * in load_maps(). A context that fails to read is logged once per
 * timestamp and left out (the process keeps its last good one). */
static void update_ctx(struct symbolizer *s, struct sym_proc *p)
{
	struct sym_ctx *c = NULL;
	char path[PATH_MAX];
	int fd = -1, err;
	__u64 ts;
	size_t i;

	if (!p->ctx_start || p->nctx >= SYMBOLIZER_MAX_CTX_UPDATES)
		return;
	snprintf(path, sizeof(path), "%s/%d/mem", s->proc_root, p->pid);
	fd = fdio__open(path, O_RDONLY);
	if (fd < 0)
		return;
	ts = procctx__published_at(fd, p->ctx_start, p->ctx_end);
	if (ts && p->ctx && ts == p->ctx->c.published_at_ns)
		goto out; /* unchanged: the common case after the first read */
	if (p->ctx_failed && ts == p->ctx_bad_ns)
		goto out; /* the same broken context: do not retry */
	c = calloc(1, sizeof(*c));
	if (!c)
		goto out;
	err = procctx__read(fd, p->ctx_start, p->ctx_end, &c->c);
	if (err) {
		if (err != -EAGAIN) {
			s->st.process_context_errors++;
			pr_debug("pid %d: OpenTelemetry process context unreadable: %s (ignored)",
				 p->pid, strerror(-err));
			p->ctx_failed = true;
			p->ctx_bad_ns = ts;
		}
		free(c);
		goto out;
	}
	for (i = 0; i < c->c.n; i++) {
		c->kv[i].key = c->c.kv[i].key;
		c->kv[i].value = c->c.kv[i].value;
	}
	c->prev = p->ctx;
	p->ctx = c;
	p->nctx++;
	p->desc.attrs = c->kv;
	p->desc.nattrs = c->c.n;
	s->st.process_contexts++;
out:
	close(fd);
}

/* Look for @p's context mapping in its maps file later (its mappings came
 * from the kernel's records), once, unless it has one already. */
static void want_ctx_look(struct symbolizer *s, struct sym_proc *p)
{
	if (p->ctx_start || p->ctx_look_ns || s->nctx_looks >= SYMBOLIZER_CTX_LOOKS)
		return;
	if (!s->ctx_looks) {
		s->ctx_looks = calloc(SYMBOLIZER_CTX_LOOKS, sizeof(*s->ctx_looks));
		if (!s->ctx_looks)
			return;
	}
	p->ctx_look_ns = now_ns(s) + SYMBOLIZER_CTX_LOOK_NS;
	s->ctx_looks[s->nctx_looks++] = p->pid;
}

/* Re-read PROC/PID/maps and rebuild the current mapping list, reusing the
 * descs of unchanged mappings. On error the old list stays. */
static int load_maps(struct symbolizer *s, struct sym_proc *p)
{
	struct procmaps *pm = NULL;
	struct sym_map **cur = NULL;
	__u64 *starts = NULL;
	char path[PATH_MAX];
	size_t i, n, nx = 0, oi = 0;
	bool exec_only = false; /* pm lists executable mappings only */
	int err;

	snprintf(path, sizeof(path), "%s/%d/maps", s->proc_root, p->pid);
	/* The source first: it has what the process mapped since its
	 * snapshot, and costs no read of /proc. */
	if (s->maps_src.fn && !s->maps_src.fn(s->maps_src.ctx, p->pid, &pm)) {
		err = 0;
		s->st.maps_from_source++;
		exec_only = true;
	} else if (fresh_snap(s, p->pid) && s->snap->maps) {
		pm = s->snap->maps; /* borrowed: just read */
		err = 0;
		s->st.snapshots_fresh++;
		exec_only = s->snap->lasting;
	} else {
		err = procmaps__read(path, &pm);
	}
	if (err && s->snap && s->snap->pid == p->pid && s->snap->maps) {
		pm = s->snap->maps; /* borrowed: gone since its snapshot */
		err = 0;
		s->st.snapshots_used++;
		s->snap_gone = true;
	}
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	n = procmaps__count(pm);
	if (exec_only)
		want_ctx_look(s, p); /* keeps the context mapping known */
	else
		p->ctx_start = p->ctx_end = 0;
	for (i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(pm, i);

		nx += !!(e->perms & PROCMAPS_EXEC);
		if (!exec_only && !p->ctx_start && procctx__is_mapping(e)) {
			p->ctx_start = e->start;
			p->ctx_end = e->end;
		}
	}
	/* No executable mapping at all: the address space is gone (a process
	 * exiting, or a zombie, reads an empty maps file), nothing was
	 * unmapped. Keep the mappings its samples were taken in: dropping them
	 * left every frame of a process killed during a capture unnamed. */
	if (!nx && p->ncur)
		goto out;
	if (nx > SYMBOLIZER_MAX_PROC_MAPS - p->nall) {
		err = -E2BIG;
		goto out;
	}
	cur = calloc(nx ? nx : 1, sizeof(*cur));
	starts = calloc(nx ? nx : 1, sizeof(*starts));
	if (!cur || !starts) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0, nx = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(pm, i);
		struct sym_map *m = NULL;

		if (!(e->perms & PROCMAPS_EXEC))
			continue;
		/* Both lists are sorted by start: walk the old one alongside. */
		while (oi < p->ncur && p->cur[oi]->desc.start < e->start)
			oi++;
		if (oi < p->ncur && same_map(p->cur[oi], e))
			m = p->cur[oi];
		else
			m = new_map(s, p, e);
		if (!m) {
			err = -ENOMEM;
			goto out;
		}
		starts[nx] = m->desc.start;
		cur[nx++] = m;
	}
	free(p->cur);
	free(p->cur_starts);
	p->cur = cur;
	p->cur_starts = starts;
	p->ncur = nx;
	cur = NULL;
	starts = NULL;
	update_ctx(s, p);
out:
	free(cur);
	free(starts);
	if (!s->snap || pm != s->snap->maps)
		procmaps__free(pm);
	p->last_refresh_ns = now_ns(s);
	return err;
}

/* Fill exe_path/exe_name/cmdline of @p from PROC/PID/{exe,comm,cmdline}. */
static int load_desc(struct symbolizer *s, struct sym_proc *p)
{
	char path[PATH_MAX], target[PATH_MAX], comm[64];
	char *cmd = NULL;
	ssize_t n;
	size_t i;

	const struct procsnap *snap = s->snap && s->snap->pid == p->pid ? s->snap : NULL;
	/* Its maps were gone already (load_maps()): so are the rest, read
	 * everything from the snapshot. */
	const struct procsnap *fresh = snap && s->snap_gone ? snap : fresh_snap(s, p->pid);

	snprintf(path, sizeof(path), "%s/%d/exe", s->proc_root, p->pid);
	n = fresh && fresh->exe ? -1 : readlink(path, target, sizeof(target) - 1);
	if (n <= 0 && snap && snap->exe) /* gone, or just read: from its snapshot */
		n = (ssize_t)snprintf(target, sizeof(target), "%s", snap->exe);
	if (n > 0 && (size_t)n < sizeof(target)) {
		target[n] = '\0';
		strip_deleted(target);
		p->exe_path = strdup(target);
		p->exe_name = strdup(base_name(target));
		if (!p->exe_path || !p->exe_name)
			return -ENOMEM;
	} else {
		snprintf(path, sizeof(path), "%s/%d/comm", s->proc_root, p->pid);
		n = fdio__read_proc(path, comm, sizeof(comm) - 1);
		if (n <= 0 && snap && snap->comm[0])
			n = (ssize_t)snprintf(comm, sizeof(comm), "%s", snap->comm);
		if (n > 0) {
			comm[n] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
			p->exe_name = strdup(comm);
			if (!p->exe_name)
				return -ENOMEM;
		}
	}
	cmd = scratch(s);
	if (!cmd)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/%d/cmdline", s->proc_root, p->pid);
	n = fresh && fresh->cmdline_len ? -1 : fdio__read_proc(path, cmd, SYMBOLIZER_MAX_CMDLINE);
	if (n <= 0 && snap && snap->cmdline_len) {
		n = (ssize_t)(snap->cmdline_len < SYMBOLIZER_MAX_CMDLINE ? snap->cmdline_len
									: SYMBOLIZER_MAX_CMDLINE);
		memcpy(cmd, snap->cmdline, (size_t)n);
	}
	if (n < 0)
		n = 0;
	while (n > 0 && (cmd[n - 1] == '\0' || cmd[n - 1] == ' '))
		n--;
	for (i = 0; i < (size_t)n; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	cmd[n] = '\0';
	if (n > 0) {
		p->cmdline = strdup(cmd);
		if (!p->cmdline)
			return -ENOMEM;
	}
	/* A process's container is fixed once it runs its program: the
	 * snapshot's holds at any age. */
	if (snap)
		memcpy(p->container_id, snap->container_id, sizeof(p->container_id));
	else if (container__id_of(s->proc_root, p->pid, p->container_id,
				  sizeof(p->container_id)))
		p->container_id[0] = '\0';
	return 0;
}

static int new_proc(struct symbolizer *s, int pid, struct sym_proc **out)
{
	struct sym_proc *p, **elem;
	int err;

	*out = NULL;
	if (htab__count(&s->procs) >= SYMBOLIZER_MAX_PROCESSES)
		return -E2BIG;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	err = htab__add(&s->procs, htab__hash_u64((__u64)pid, 0), (void **)&elem);
	if (err) {
		free(p);
		return err;
	}
	*elem = p;
	*out = p;
	return 0;
}

/* @p, a live process known before, may have exec()ed another program
 * since (its executable changed): then describe it again, as the next
 * generation (a resource of its own in the profile). 0 or -ENOMEM. */
static int add_process(struct symbolizer *s, int pid);

static int reload_after_exec(struct symbolizer *s, struct sym_proc *p)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/exe", s->proc_root, p->pid);
	n = fresh_snap(s, p->pid) && s->snap->exe ? -1 : readlink(path, target, sizeof(target) - 1);
	if (n <= 0 && s->snap && s->snap->pid == p->pid && s->snap->exe) /* gone, or just read */
		n = (ssize_t)snprintf(target, sizeof(target), "%s", s->snap->exe);
	if (n <= 0 || (size_t)n >= sizeof(target))
		return 0; /* gone, or not ours to read: keep what we have */
	target[n] = '\0';
	strip_deleted(target);
	if (p->exe_path && !strcmp(p->exe_path, target))
		return 0;
	if (p->exe_path)
		p->desc.generation++; /* else it was not readable: the same program */
	free_ctx(p);
	free(p->exe_name);
	free(p->exe_path);
	free(p->cmdline);
	p->exe_name = p->exe_path = p->cmdline = NULL;
	p->runtime = NULL;
	if (load_desc(s, p))
		return -ENOMEM;
	if (p->exe_name)
		p->runtime = runtime_of(p->exe_name);
	p->desc.exe_name = p->exe_name;
	p->desc.exe_path = p->exe_path;
	p->desc.cmdline = p->cmdline;
	s->st.execs++;
	return 0;
}

int symbolizer__add_process(struct symbolizer *s, int pid)
{
	return symbolizer__add_process_snap(s, pid, NULL);
}

int symbolizer__add_process_snap(struct symbolizer *s, int pid, const struct procsnap *snap)
{
	int err;

	s->snap = snap;
	s->snap_gone = false; /* read only with s->snap set */
	err = add_process(s, pid);
	s->snap = NULL;
	return err;
}

static int add_process(struct symbolizer *s, int pid)
{
	struct sym_proc *p;
	int err = 0;

	if (pid < 0)
		return -EINVAL;
	p = find_proc(s, pid);
	if (p && !p->gone) {
		if (pid == 0)
			return 0;
		s->st.maps_refreshes++;
		err = reload_after_exec(s, p);
		if (err)
			return err;
		err = load_maps(s, p);
		if (p->perfmap_later)
			begin_perfmap(s, p); /* JIT code since? */
		else
			update_perfmap(s, p);
		return err;
	}
	if (!p) {
		err = new_proc(s, pid, &p);
		if (err)
			return err;
	}
	/* New, or a process that was gone when last added (it never handed out
	 * pointers): start from scratch. */
	free_ctx(p);
	p->ctx_look_ns = 0;
	free_maps(p);
	free(p->exe_name);
	free(p->exe_path);
	free(p->cmdline);
	p->exe_name = p->exe_path = p->cmdline = NULL;
	p->runtime = NULL;
	p->perfmap_warned = false;
	p->gone = true;
	if (pid == 0) {
		/* The idle task: no user space, no /proc entry. */
		p->exe_name = strdup("swapper");
		if (!p->exe_name)
			return -ENOMEM;
	} else {
		/* Gone: stay marked so resolves do not retry it. Maps may also be
		 * unreadable (-EACCES) while comm and cmdline are not: keep the
		 * process without mappings and report that error. */
		err = load_maps(s, p);
		if (err == -ESRCH)
			return err;
		if (load_desc(s, p)) {
			free_maps(p);
			return -ENOMEM;
		}
		if (!p->runtime && p->exe_name)
			p->runtime = runtime_of(p->exe_name);
		begin_perfmap(s, p);
	}
	p->gone = false;
	p->desc.pid = pid;
	p->desc.exe_name = p->exe_name;
	p->desc.exe_path = p->exe_path;
	p->desc.cmdline = p->cmdline;
	p->desc.container_id = p->container_id[0] ? p->container_id : NULL;
	s->st.processes++;
	return err;
}

void symbolizer__forget_process(struct symbolizer *s, int pid)
{
	struct sym_proc **pp = find_proc_elem(s, pid), *p;

	if (!pp)
		return;
	p = *pp;
	htab__remove(&s->procs, pp);
	free_proc(p);
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
static void evict_files(struct symbolizer *s)
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

void symbolizer__refresh_contexts(struct symbolizer *s)
{
	struct sym_proc **pp;
	size_t it = 0;

	while ((pp = htab__next(&s->procs, &it)))
		if (!(*pp)->gone && (*pp)->ctx_start)
			update_ctx(s, *pp);
}

void symbolizer__check_contexts(struct symbolizer *s)
{
	__u64 now = now_ns(s);
	size_t i, k = 0;

	for (i = 0; i < s->nctx_looks; i++) {
		struct sym_proc *p = find_proc(s, s->ctx_looks[i]);
		struct procmaps *pm = NULL;
		char path[PATH_MAX];
		size_t j;

		if (p && p->ctx_look_ns > now) {
			s->ctx_looks[k++] = s->ctx_looks[i]; /* not yet */
			continue;
		}
		/* gone (most short-lived processes): a signal 0 says so for ~1 us,
		 * a failed open of its maps file costs tens */
		if (!p || p->gone || p->ctx_start || !p->ctx_look_ns ||
		    (!strcmp(s->proc_root, "/proc") && kill(p->pid, 0) && errno == ESRCH))
			continue;
		snprintf(path, sizeof(path), "%s/%d/maps", s->proc_root, p->pid);
		if (!procmaps__read(path, &pm)) {
			for (j = 0; j < procmaps__count(pm) && !p->ctx_start; j++) {
				const struct procmaps_entry *e = procmaps__entry(pm, j);

				if (procctx__is_mapping(e)) {
					p->ctx_start = e->start;
					p->ctx_end = e->end;
				}
			}
			procmaps__free(pm);
			s->st.ctx_looks++;
			update_ctx(s, p);
		}
	}
	s->nctx_looks = k;
}

void symbolizer__refresh_context(struct symbolizer *s, int pid)
{
	struct sym_proc *p = find_proc(s, pid);

	if (p && !p->gone && p->ctx_start)
		update_ctx(s, p);
}

size_t symbolizer__thread_keys(const struct symbolizer *s, int pid, const char *const **keys)
{
	const struct sym_proc *p = find_proc(s, pid);

	*keys = NULL;
	if (!p || !p->ctx || !p->ctx->c.nthread_keys)
		return 0;
	*keys = (const char *const *)p->ctx->c.thread_keys;
	return p->ctx->c.nthread_keys;
}

bool symbolizer__thread_ctx(const struct symbolizer *s, int pid)
{
	const struct sym_proc *p = find_proc(s, pid);

	return p && p->ctx && p->ctx->c.thread_ctx;
}

void symbolizer__set_clock(struct symbolizer *s, const struct clock *c)
{
	s->clock = c ? c : &clock__system;
}

size_t symbolizer__forget_gone(struct symbolizer *s)
{
	char path[PATH_MAX];
	struct sym_proc **pp, *p;
	size_t it = 0, n = 0;

	while ((pp = htab__next(&s->procs, &it))) {
		p = *pp;
		if (p->pid == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%d", s->proc_root, p->pid);
		if (!access(path, F_OK))
			continue;
		htab__remove(&s->procs, pp);
		free_proc(p);
		n++;
	}
	evict_files(s);
	return n;
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

	frame_unresolved(out, addr, PROFILE_FRAME_NATIVE);
	if (pid <= 0 || (!leaf && !addr))
		return true;
	a = leaf ? addr : addr - 1;
	p = find_proc(s, pid);
	if (!p) {
		symbolizer__add_process(s, pid);
		p = find_proc(s, pid);
	}
	if (!p || p->gone)
		return true;
	m = find_map(p, a);
	if (!m && now_ns(s) - p->last_refresh_ns >= SYMBOLIZER_REFRESH_NS) {
		s->st.maps_refreshes++;
		load_maps(s, p);
		m = find_map(p, a);
	}
	if (!m || jit_mapping(m)) {
		/* JIT code: named by the perf map, even once unmapped. */
		const char *jit = jit_name(s, p, a);

		if (jit) {
			out->function = jit;
			out->type_name = jit_type(p, jit);
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
	if (s->nlwant == s->lwant_cap) {
		size_t cap = s->lwant_cap ? s->lwant_cap * 2 : 256;
		struct sym_lwant *t;

		t = cap <= SYMBOLIZER_LINES_BATCH ? realloc(s->lwant, cap * sizeof(*t)) : NULL;
		if (!t) { /* full: look up now */
			dwarf_lines__lookup(m->file->dw, vaddr, out->function, &out->lines,
					    &out->nlines);
			return true;
		}
		s->lwant = t;
		s->lwant_cap = cap;
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
	const struct sym_proc *p = find_proc(s, pid);

	return p && !p->gone ? &p->desc : NULL;
}

bool symbolizer__tried(const struct symbolizer *s, int pid)
{
	return find_proc(s, pid) != NULL;
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
