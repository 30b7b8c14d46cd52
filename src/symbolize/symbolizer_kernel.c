/* symbolizer_kernel.c - kernel addresses, named in passes over
 * /proc/kallsyms (see symbolizer.h). */
#include "symbolize/symbolizer_int.h"

#define NOTES_MAX (64u << 10)

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

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

void sym__kernel_release(struct symbolizer *s)
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
	struct kmod *k;
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
	if (array__grow((void **)&s->kmods, &s->kmods_cap, s->nkmods, sizeof(*s->kmods), 16,
			KALLSYMS_MAX_MODULES))
		return NULL;
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
	if (!n)
		return 0;
	return array__grow((void **)&s->kcache, &s->kcache_cap, s->nkcache + n - 1,
			   sizeof(*s->kcache), 256, SIZE_MAX / sizeof(*s->kcache));
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

	sym__frame_unresolved(out, addr, PROFILE_FRAME_KERNEL);
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
