#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fdio.h"
#include "util/htab.h"
#include "collect/cfi.h"
#include "proc/pfile.h"
#include "proc/procmaps.h"
#include "collect/unwind_table.h"

#define VDSO_DEV (~0ull)

struct ut_file {
	__u64 dev, ino; /* key */
	__u32 slot, nrows;
	bool stale; /* its table was evicted: parse again when mapped */
	unsigned int nseg;
	__u64 seg[CFI_MAX_SEGMENTS][3]; /* offset, vaddr, filesz */
};

/* A file table in the sink. */
struct ut_slot {
	__u64 dev, ino; /* its file */
	__u32 nrows;
	__u32 refs;	/* live processes mapping it */
	__u64 idle_ns;	/* when refs fell to 0 */
	bool used;
};

struct ut_proc {
	__u32 pid;   /* key */
	__u32 alloc; /* mapping entries ever written for it */
	__u64 loaded_ns;
	__u64 start;	/* start time (clock ticks since boot): tells a reused PID */
	__u32 *slots;	/* file tables its mappings refer to (one reference each) */
	__u32 nslots;
};

struct unwind_table {
	struct unwind_table_sink sink;
	char *proc_root;
	struct procmaps_source maps_src; /* fn NULL: maps files only */
	struct htab files;		 /* struct ut_file, by dev and inode */
	struct htab procs;		 /* struct ut_proc, by pid */
	struct ut_slot *slots; /* sink.max_files */
	__u64 rows_used;
	__u64 maps_used;
	struct unwind_map *scratch; /* UNWIND_TABLE_MAX_PROC_MAPS */
	struct unwind_map_key *keys; /* ... and their keys */
	__u32 *pin;		    /* slots of the process being added */
	int start_trust; /* callers' start times: 0 unchecked, 1 match PID/stat, -1 do not */
	__u32 npin;
	bool lazy; /* unwind_table__set_lazy() */
	struct unwind_table_stats st;
};

struct unwind_table *unwind_table__new(const struct unwind_table_sink *sink, const char *proc_root)
{
	struct unwind_table *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->sink = *sink;
	u->proc_root = strdup(proc_root);
	u->scratch = calloc(UNWIND_TABLE_MAX_PROC_MAPS, sizeof(*u->scratch));
	u->keys = calloc(UNWIND_TABLE_MAX_PROC_MAPS, sizeof(*u->keys));
	u->pin = calloc(UNWIND_TABLE_MAX_PROC_MAPS, sizeof(*u->pin));
	u->slots = calloc(sink->max_files ? sink->max_files : 1, sizeof(*u->slots));
	if (!u->proc_root || !u->scratch || !u->keys || !u->pin || !u->slots) {
		unwind_table__free(u);
		return NULL;
	}
	u->st.max_rows = sink->max_rows;
	htab__init(&u->files, sizeof(struct ut_file), UNWIND_TABLE_MAX_FILES);
	htab__init(&u->procs, sizeof(struct ut_proc), UNWIND_TABLE_MAX_PROCS);
	return u;
}

void unwind_table__free(struct unwind_table *u)
{
	struct ut_proc *p;
	size_t it = 0;

	if (!u)
		return;
	free(u->proc_root);
	htab__release(&u->files);
	while ((p = htab__next(&u->procs, &it)))
		free(p->slots);
	htab__release(&u->procs);
	free(u->scratch);
	free(u->keys);
	free(u->pin);
	free(u->slots);
	free(u);
}

/* ---- the file and process tables --------------------------------------------------- */

static bool file_eq(const void *elem, const void *key, void *ctx)
{
	const struct ut_file *a = elem, *b = key;

	(void)ctx;
	return a->dev == b->dev && a->ino == b->ino;
}

static struct ut_file *find_file(const struct unwind_table *u, __u64 dev, __u64 ino)
{
	struct ut_file key = {.dev = dev, .ino = ino};

	return htab__find(&u->files, htab__hash_u64(dev, ino), &key, file_eq, NULL);
}

static bool proc_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct ut_proc *)elem)->pid == *(const __u32 *)key;
}

/* Process @pid's entry; with @create a new one when there is none. NULL
 * when absent, or at the cap or on ENOMEM. */
static struct ut_proc *proc_get(struct unwind_table *u, __u32 pid, bool create)
{
	__u64 h = htab__hash_u64(pid, 0);
	struct ut_proc *p = htab__find(&u->procs, h, &pid, proc_eq, NULL);

	if (p || !create || htab__add(&u->procs, h, (void **)&p))
		return p;
	p->pid = pid;
	return p;
}

/* ---- files ------------------------------------------------------------------------------ */

/* ---- file tables ------------------------------------------------------------------------ */

static void slot_unref(struct unwind_table *u, __u32 i)
{
	if (u->slots[i].refs && !--u->slots[i].refs)
		u->slots[i].idle_ns = clock__mono_ns();
}

/* Drop file table @i: the sink's storage and the file's cached rows. */
static void slot_evict(struct unwind_table *u, __u32 i)
{
	struct ut_slot *sl = &u->slots[i];
	struct ut_file *f;

	if (u->sink.rows_del)
		u->sink.rows_del(u->sink.ctx, i);
	f = find_file(u, sl->dev, sl->ino);
	if (f && f->nrows && f->slot == i) {
		f->nrows = 0;
		f->stale = true;
	}
	u->rows_used -= sl->nrows;
	memset(sl, 0, sizeof(*sl));
	u->st.tables--;
	u->st.files_evicted++;
	u->st.rows = u->rows_used;
}

/* Since when table @i has been unused: its last reference dropped, or a
 * process the sink walks alone seen mapping it, the later. */
static __u64 slot_idle_since(const struct unwind_table *u, __u32 i)
{
	__u64 seen = u->sink.seen_ns ? u->sink.seen_ns(u->sink.ctx, i) : 0;

	return seen > u->slots[i].idle_ns ? seen : u->slots[i].idle_ns;
}

/* A free slot with room for @n more rows, evicting unused tables (longest
 * idle first) as needed. -ENOSPC when the used ones leave no room. */
static int slot_alloc(struct unwind_table *u, __u32 n, __u32 *out)
{
	for (;;) {
		__u32 i, free_i = u->sink.max_files, old = u->sink.max_files;

		for (i = 0; i < u->sink.max_files; i++) {
			const struct ut_slot *sl = &u->slots[i];

			if (!sl->used) {
				if (free_i == u->sink.max_files)
					free_i = i;
			} else if (!sl->refs && (old == u->sink.max_files ||
						 slot_idle_since(u, i) < slot_idle_since(u, old))) {
				old = i;
			}
		}
		if (free_i < u->sink.max_files && u->rows_used + n <= u->sink.max_rows) {
			*out = free_i;
			return 0;
		}
		if (old == u->sink.max_files)
			return -ENOSPC;
		slot_evict(u, old);
	}
}

/* Compile @img into a new file table for file @f. */
static void load_rows(struct unwind_table *u, struct ut_file *f, const void *img, size_t size)
{
	const struct cfi_row *rows;
	struct cfi_table *t = NULL;
	struct cfi_stats cs;
	__u64 off, va, sz, *out;
	__u32 slot;
	size_t n, i;

	if (cfi__parse(img, size, &t)) {
		u->st.files_no_cfi++;
		return;
	}
	for (f->nseg = 0; f->nseg < CFI_MAX_SEGMENTS; f->nseg++) {
		if (cfi__segment(t, f->nseg, &off, &va, &sz))
			break;
		f->seg[f->nseg][0] = off;
		f->seg[f->nseg][1] = va;
		f->seg[f->nseg][2] = sz;
	}
	rows = cfi__rows(t, &n);
	cfi__stats(t, &cs);
	if (!n || rows[n - 1].pc > 0xffffffffull) {
		u->st.files_no_cfi++;
	} else if (n > u->sink.max_rows || slot_alloc(u, (__u32)n, &slot)) {
		u->st.files_no_room++;
	} else if (!(out = u->sink.rows_begin(u->sink.ctx, slot, (__u32)n))) {
		u->st.files_no_room++;
	} else {
		for (i = 0; i < n; i++)
			out[i] = cfi__pack(&rows[i]);
		if (u->sink.rows_end(u->sink.ctx, slot, out, (__u32)n, true)) {
			u->st.files_no_room++;
		} else {
			u->slots[slot] = (struct ut_slot){
				.dev = f->dev, .ino = f->ino, .nrows = (__u32)n, .used = true,
				.idle_ns = clock__mono_ns()};
			f->slot = slot;
			f->nrows = (__u32)n;
			if (u->sink.set_file && f->dev != VDSO_DEV)
				u->sink.set_file(u->sink.ctx, slot, f->dev, f->ino,
						 (const __u64(*)[3])f->seg, f->nseg, f->nrows);
			u->rows_used += n;
			u->st.rows = u->rows_used;
			u->st.tables++;
			u->st.unsupported += cs.unsupported;
			u->st.files_parsed++;
		}
	}
	cfi__free(t);
}

static int open_mapping(const struct unwind_table *u, int pid, const struct procmaps_entry *e)
{
	char dir[PATH_MAX];
	int fd, err;

	err = pfile__open_mapped(u->proc_root, pid, e, &fd);
	/* Gone before its table was built (a short-lived process, its notice
	 * or late walk taken at a drain): the host's file, if it is the one
	 * (same device and inode). */
	if (err && err != -ESTALE &&
	    (size_t)snprintf(dir, sizeof(dir), "%s/%d", u->proc_root, pid) < sizeof(dir) &&
	    access(dir, F_OK) && errno == ENOENT)
		err = pfile__open_host(e, &fd);
	return err ? err : fd;
}

/* The vdso of this process: every process on this kernel maps the same. */
static void load_vdso(struct unwind_table *u, struct ut_file *f)
{
	struct procmaps *m = NULL;
	const struct procmaps_entry *e;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	size_t i;

	if (!base || procmaps__read("/proc/self/maps", &m)) {
		u->st.files_failed++;
		return;
	}
	for (i = 0; i < procmaps__count(m); i++) {
		e = procmaps__entry(m, i);
		if (e->start == base && !strcmp(e->path, "[vdso]")) {
			load_rows(u, f, (const void *)base, (size_t)(e->end - e->start));
			break;
		}
	}
	procmaps__free(m);
}

/* The sections of file @fd (@size bytes) cfi__parse() reads into @img. */
static int read_image(int fd, size_t size, struct pfile_image *img)
{
	/* The pclntab for Go code, which has no .eh_frame (cfi_go.c). */
	static const char *const cfi_sections[] = {".eh_frame",	   ".eh_frame_hdr",
						   ".debug_frame", ".gopclntab",
						   ".data.rel.ro.gopclntab", NULL};
	static const char *const go_sections[] = {".eh_frame",
						  ".eh_frame_hdr",
						  ".debug_frame",
						  CFI_GO_DATA_SECTIONS,
						  NULL};
	int err = pfile__read_elf(fd, size, cfi_sections, img);

	if (err || !cfi__needs_go_data(img->data, img->size))
		return err;
	pfile__image_free(img);
	return pfile__read_elf(fd, size, go_sections, img);
}

/* The cached file of mapping @e, compiled on first sight; NULL at the cap. */
static struct ut_file *get_file(struct unwind_table *u, int pid, const struct procmaps_entry *e)
{
	bool vdso = !strcmp(e->path, "[vdso]");
	__u64 dev = vdso ? VDSO_DEV : ((__u64)e->dev_major << 32 | e->dev_minor);
	__u64 ino = vdso ? 0 : e->inode, t0, c0;
	struct ut_file *f;
	struct pfile_image img;
	struct stat stb;
	int fd;

	f = find_file(u, dev, ino);
	if (f && !f->stale)
		return f;
	if (!f && htab__add(&u->files, htab__hash_u64(dev, ino), (void **)&f))
		return NULL;	  /* at UNWIND_TABLE_MAX_FILES, or ENOMEM */
	memset(f, 0, sizeof(*f)); /* new, or evicted: parse (again) */
	f->dev = dev;
	f->ino = ino;
	t0 = clock__mono_ns();
	c0 = clock__thread_cpu_ns();
	if (vdso) {
		load_vdso(u, f);
	} else {
		fd = open_mapping(u, pid, e);
		if (fd < 0) {
			/* Gone before we could open it (short-lived process)?
			 * The next process of this file tries again. */
			u->st.files_failed++;
			f->stale = true;
		} else {
			/* pread, not mmap: a file truncated meanwhile is an error,
			 * not SIGBUS (proc/pfile.h). */
			if (!fstat(fd, &stb) && stb.st_size > 0 &&
			    !read_image(fd, (size_t)stb.st_size, &img)) {
				load_rows(u, f, img.data, img.size);
				pfile__image_free(&img);
			} else {
				u->st.files_failed++;
			}
			close(fd);
		}
	}
	u->st.parse_ns += clock__mono_ns() - t0;
	u->st.parse_cpu_ns += clock__thread_cpu_ns() - c0;
	return f;
}

/* Take a reference on file table @slot for the process being added (one
 * per process): from now on it cannot be evicted to make room. */
static void pin(struct unwind_table *u, __u32 slot)
{
	__u32 i;

	for (i = 0; i < u->npin; i++)
		if (u->pin[i] == slot)
			return;
	if (u->npin == UNWIND_TABLE_MAX_PROC_MAPS)
		return;
	u->pin[u->npin++] = slot;
	u->slots[slot].refs++;
}

static void unpin_all(struct unwind_table *u)
{
	while (u->npin)
		slot_unref(u, u->pin[--u->npin]);
}

/* Start time of @pid (field 22 of /proc/PID/stat), 0 when unreadable. */
static __u64 proc_start(struct unwind_table *u, __u32 pid)
{
	char path[4200], buf[1024], *p;
	__u64 v = 0;
	ssize_t n;
	int fd, i;

	u->st.start_reads++;
	snprintf(path, sizeof(path), "%s/%u/stat", u->proc_root, pid);
	fd = fdio__open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (i = 0; i < 20 && p; i++) /* ") state" is field 3 */
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

/* Is mapping @e a file whose table is built later, when a walk needs it
 * (unwind_table__set_lazy())? @first: the process's first executable file
 * mapping, its program (built now: its first sample is in it, or in code
 * it called). Files known already (built, or without CFI) are described. */
static bool deferred(const struct unwind_table *u, const struct procmaps_entry *e, bool first)
{
	const struct ut_file *f;

	if (!u->lazy || first || e->anonymous || e->path[0] != '/' || !e->inode)
		return false;
	f = find_file(u, (__u64)e->dev_major << 32 | e->dev_minor, e->inode);
	return !f || f->stale;
}

/* Fill @m for mapping @e of @pid. */
static void describe(struct unwind_table *u, int pid, const struct procmaps_entry *e,
		     struct unwind_map *m)
{
	struct ut_file *f;
	unsigned int i;

	memset(m, 0, sizeof(*m));
	m->start = e->start;
	m->end = e->end;
	if (strcmp(e->path, "[vdso]") && (e->anonymous || e->path[0] != '/' || !e->inode))
		return; /* anonymous, JIT code: frame pointers */
	f = get_file(u, pid, e);
	if (!f || !f->nrows)
		return;
	for (i = 0; i < f->nseg; i++) {
		__u64 off = f->seg[i][0], va = f->seg[i][1], sz = f->seg[i][2];

		if (e->offset >= off && e->offset - off < sz) {
			m->bias = e->start - (va + (e->offset - off));
			m->first = f->slot;
			m->nrows = f->nrows;
			pin(u, f->slot);
			return;
		}
	}
}

/* The keys of the first @n mapping entries of @pid, in u->keys. */
static const struct unwind_map_key *map_keys(struct unwind_table *u, __u32 pid, __u32 n)
{
	for (__u32 i = 0; i < n; i++)
		u->keys[i] = (struct unwind_map_key){.tgid = pid, .index = i};
	return u->keys;
}

/* Delete the entries of @p from the sink and release its file tables. */
static void proc_drop(struct unwind_table *u, struct ut_proc *p)
{
	if (p->alloc)
		u->sink.del_maps(u->sink.ctx, map_keys(u, p->pid, p->alloc), p->alloc);
	u->sink.del_proc(u->sink.ctx, p->pid);
	for (__u32 i = 0; i < p->nslots; i++)
		slot_unref(u, p->slots[i]);
	free(p->slots);
	u->maps_used -= p->alloc;
	htab__remove(&u->procs, p);
}

/* Drop the processes that have exited (or whose PID is another process's
 * now): delete their entries from the sink and from the process table.
 * Returns how many. */
static size_t reclaim(struct unwind_table *u)
{
	struct ut_proc *p;
	size_t it = 0, gone = 0;
	__u64 start;

	if (!u->sink.del_maps || !u->sink.del_proc)
		return 0;
	while ((p = htab__next(&u->procs, &it))) {
		start = proc_start(u, p->pid);
		if (start && (!p->start || start == p->start))
			continue;
		proc_drop(u, p);
		gone++;
	}
	u->st.procs_reclaimed += gone;
	return gone;
}

size_t unwind_table__gc(struct unwind_table *u, __u64 file_ttl_ns)
{
	size_t gone = reclaim(u);
	__u64 now = clock__mono_ns();
	__u32 i;

	for (i = 0; i < u->sink.max_files; i++) {
		const struct ut_slot *sl = &u->slots[i];
		__u64 since = sl->used && !sl->refs ? slot_idle_since(u, i) : now + 1;

		/* since > now: seen while this ran, in use */
		if (since <= now && now - since >= file_ttl_ns)
			slot_evict(u, i);
	}
	return gone;
}

static int add_maps(struct unwind_table *u, int pid, __u64 start, const struct procmaps *maps);

void unwind_table__set_maps_source(struct unwind_table *u, const struct procmaps_source *src)
{
	procmaps__source_set(&u->maps_src, src);
}

int unwind_table__add_process(struct unwind_table *u, int pid)
{
	struct procmaps *maps = NULL;
	__u64 start;
	int err;

	start = proc_start(u, (__u32)pid); /* before the maps: a PID reused after is told apart */
	err = procmaps__read_pid(&u->maps_src, u->proc_root, pid, &maps);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	err = add_maps(u, pid, start, maps);
	procmaps__free(maps);
	return err;
}

int unwind_table__add_process_maps(struct unwind_table *u, int pid, const struct procmaps *maps,
				   __u64 start)
{
	__u64 real;

	if (!start || u->start_trust < 0) {
		start = proc_start(u, (__u32)pid);
	} else if (!u->start_trust) {
		real = proc_start(u, (__u32)pid);
		if (real) { /* else gone: checked at the next one */
			u->start_trust = real == start ? 1 : -1;
			start = real;
		}
	}
	return add_maps(u, pid, start, maps);
}

/* unwind_table__add_process() of @pid, started at @start (proc_start()),
 * whose mappings are @maps. */
static int add_maps(struct unwind_table *u, int pid, __u64 start, const struct procmaps *maps)
{
	struct ut_proc *p;
	__u32 n = 0, i, *slots, files = 0;
	int err;

	u->npin = 0;
	for (i = 0; i < procmaps__count(maps); i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);

		if (!(e->perms & PROCMAPS_EXEC))
			continue;
		if (n == UNWIND_TABLE_MAX_PROC_MAPS || !strcmp(e->path, "[vsyscall]"))
			break; /* [vsyscall] is last and outside user space proper */
		/* No entry: the BPF walker finds it from its VMA once built. */
		if (deferred(u, e, !files++)) {
			u->st.maps_deferred++;
			continue;
		}
		describe(u, pid, e, &u->scratch[n++]);
	}
	p = proc_get(u, (__u32)pid, false);
	if (!p && htab__count(&u->procs) >= UNWIND_TABLE_MAX_PROCS)
		reclaim(u);
	if (!p)
		p = proc_get(u, (__u32)pid, true);
	if (!p) {
		u->st.procs_skipped++;
		unpin_all(u);
		return htab__count(&u->procs) >= UNWIND_TABLE_MAX_PROCS ? -E2BIG : -ENOMEM;
	}
	if (n > p->alloc) {
		if (u->maps_used + (n - p->alloc) > u->sink.max_maps) {
			/* reclaim() may drop @p itself (its PID reused by
			 * the process being added): look it up again. */
			reclaim(u);
			p = proc_get(u, (__u32)pid, false);
			if (!p) /* reclaimed: its PID was reused by the process being added */
				p = proc_get(u, (__u32)pid, true);
		}
		if (!p || u->maps_used + (n - p->alloc) > u->sink.max_maps) {
			u->st.procs_skipped++;
			unpin_all(u);
			return -E2BIG;
		}
		u->maps_used += n - p->alloc;
		p->alloc = n;
	}
	err = n ? u->sink.set_maps(u->sink.ctx, map_keys(u, (__u32)pid, n), u->scratch, n) : 0;
	if (err)
		goto fail;
	err = u->sink.set_proc(u->sink.ctx, (__u32)pid, n);
	if (err)
		goto fail;
	/* The new list of file tables replaces the old one (references taken
	 * by pin() while the mappings were described). */
	slots = malloc((u->npin ? u->npin : 1) * sizeof(*slots));
	if (!slots) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(slots, u->pin, u->npin * sizeof(*slots));
	for (i = 0; i < p->nslots; i++)
		slot_unref(u, p->slots[i]);
	free(p->slots);
	p->slots = slots;
	p->nslots = u->npin;
	u->npin = 0;
	p->start = start;
	if (!p->loaded_ns)
		u->st.processes++;
	p->loaded_ns = clock__mono_ns();
	u->st.mappings += n;
	return 0;
fail:
	unpin_all(u);
	return err;
}

void unwind_table__set_lazy(struct unwind_table *u, bool on)
{
	u->lazy = on;
}

int unwind_table__add_file(struct unwind_table *u, int pid, __u64 start, __u64 dev, __u64 ino)
{
	struct procmaps *maps = NULL;
	const struct procmaps_entry *e = NULL;
	const struct ut_proc *p;
	const struct ut_file *f;
	__u64 parsed;
	size_t i;
	int err;

	err = procmaps__read_pid(&u->maps_src, u->proc_root, pid, &maps);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	for (i = 0; i < procmaps__count(maps) && !e; i++) {
		const struct procmaps_entry *c = procmaps__entry(maps, i);

		if (c->start == start && c->inode == ino &&
		    ((__u64)c->dev_major << 32 | c->dev_minor) == dev && (c->perms & PROCMAPS_EXEC))
			e = c;
	}
	if (!e) {
		err = -ESRCH; /* unmapped since, or another process has the PID */
		goto out;
	}
	parsed = u->st.files_parsed + u->st.files_no_cfi;
	f = get_file(u, pid, e);
	if (!f || f->stale) {
		err = f ? -ENOENT : -E2BIG;
		goto out;
	}
	if (u->st.files_parsed + u->st.files_no_cfi != parsed)
		u->st.files_on_demand++; /* not built meanwhile for another */
	/* The process's entries gain the file's (no bpf_find_vma() for it). */
	p = proc_get(u, (__u32)pid, false);
	if (p && p->loaded_ns)
		err = add_maps(u, pid, p->start, maps);
out:
	procmaps__free(maps);
	return err;
}

int unwind_table__refresh(struct unwind_table *u, int pid)
{
	struct ut_proc *p = proc_get(u, (__u32)pid, false);
	int err;

	if (p && p->loaded_ns && clock__mono_ns() - p->loaded_ns < UNWIND_TABLE_REFRESH_NS)
		return 0;
	err = unwind_table__add_process(u, pid);
	if (err == -ESRCH && (p = proc_get(u, (__u32)pid, true)))
		p->loaded_ns = clock__mono_ns(); /* gone: do not retry it every time */
	return err ? err : 1;
}

void unwind_table__stats(const struct unwind_table *u, struct unwind_table_stats *st)
{
	*st = u->st;
}
