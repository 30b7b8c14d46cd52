#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/cfi.h"
#include "proc/procmaps.h"
#include "collect/unwind_table.h"

#define VDSO_DEV (~0ull)

struct ut_file {
	__u64 dev, ino; /* key; dev == 0 && ino == 0: empty slot */
	__u32 first, nrows;
	unsigned int nseg;
	__u64 seg[CFI_MAX_SEGMENTS][3]; /* offset, vaddr, filesz */
};

struct ut_proc {
	__u32 pid;   /* 0: empty slot */
	__u32 alloc; /* mapping entries ever written for it */
	__u64 loaded_ns;
};

struct unwind_table {
	struct unwind_table_sink sink;
	char *proc_root;
	struct ut_file *files;
	size_t nfiles, files_cap; /* cap: power of two */
	struct ut_proc *procs;
	size_t nprocs, procs_cap;
	__u32 next_row;
	__u64 maps_used;
	struct unwind_map *scratch; /* UNWIND_TABLE_MAX_PROC_MAPS */
	struct unwind_table_stats st;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static __u64 mix(__u64 a, __u64 b)
{
	__u64 h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

struct unwind_table *unwind_table__new(const struct unwind_table_sink *sink, const char *proc_root)
{
	struct unwind_table *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->sink = *sink;
	u->proc_root = strdup(proc_root);
	u->scratch = calloc(UNWIND_TABLE_MAX_PROC_MAPS, sizeof(*u->scratch));
	if (!u->proc_root || !u->scratch) {
		unwind_table__free(u);
		return NULL;
	}
	u->st.max_rows = sink->max_rows;
	return u;
}

void unwind_table__free(struct unwind_table *u)
{
	if (!u)
		return;
	free(u->proc_root);
	free(u->files);
	free(u->procs);
	free(u->scratch);
	free(u);
}

/* ---- open-addressing tables, doubled at half full ---------------------------------- */

static struct ut_file *file_slot(struct ut_file *tab, size_t cap, __u64 dev, __u64 ino)
{
	size_t i = mix(dev, ino) & (cap - 1);

	while (tab[i].dev || tab[i].ino) {
		if (tab[i].dev == dev && tab[i].ino == ino)
			return &tab[i];
		i = (i + 1) & (cap - 1);
	}
	return &tab[i];
}

static int files_grow(struct unwind_table *u)
{
	size_t ncap = u->files_cap ? u->files_cap * 2 : 256, i;
	struct ut_file *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < u->files_cap; i++)
		if (u->files[i].dev || u->files[i].ino)
			*file_slot(n, ncap, u->files[i].dev, u->files[i].ino) = u->files[i];
	free(u->files);
	u->files = n;
	u->files_cap = ncap;
	return 0;
}

static struct ut_proc *proc_slot(struct ut_proc *tab, size_t cap, __u32 pid)
{
	size_t i = mix(pid, 0) & (cap - 1);

	while (tab[i].pid && tab[i].pid != pid)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static struct ut_proc *proc_get(struct unwind_table *u, __u32 pid, bool create)
{
	struct ut_proc *p;

	if (u->procs_cap) {
		p = proc_slot(u->procs, u->procs_cap, pid);
		if (p->pid || !create)
			return p->pid ? p : NULL;
	} else if (!create) {
		return NULL;
	}
	if (u->nprocs >= UNWIND_TABLE_MAX_PROCS)
		return NULL;
	if (2 * (u->nprocs + 1) > u->procs_cap) {
		size_t ncap = u->procs_cap ? u->procs_cap * 2 : 256, i;
		struct ut_proc *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (i = 0; i < u->procs_cap; i++)
			if (u->procs[i].pid)
				*proc_slot(n, ncap, u->procs[i].pid) = u->procs[i];
		free(u->procs);
		u->procs = n;
		u->procs_cap = ncap;
	}
	p = proc_slot(u->procs, u->procs_cap, pid);
	p->pid = pid;
	u->nprocs++;
	return p;
}

/* ---- files ------------------------------------------------------------------------------ */

/* Compile @img into the row store as file @f. */
static void load_rows(struct unwind_table *u, struct ut_file *f, const void *img, size_t size)
{
	const struct cfi_row *rows;
	struct cfi_table *t = NULL;
	struct cfi_stats cs;
	size_t n, i;
	__u64 off, va, sz;

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
	} else if (n > (size_t)(u->sink.max_rows - u->next_row)) {
		u->st.files_no_room++;
	} else {
		for (i = 0; i < n; i++)
			u->sink.rows[u->next_row + i] = cfi__pack(&rows[i]);
		f->first = u->next_row;
		f->nrows = (__u32)n;
		u->next_row += (__u32)n;
		u->st.rows = u->next_row;
		u->st.unsupported += cs.unsupported;
		u->st.files_parsed++;
	}
	cfi__free(t);
}

static int open_mapping(const struct unwind_table *u, int pid, const struct procmaps_entry *e)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/map_files/%llx-%llx", u->proc_root, pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || e->deleted || e->path[0] != '/')
		return fd >= 0 ? fd : -ENOENT;
	if ((size_t)snprintf(path, sizeof(path), "%s/%d/root%s", u->proc_root, pid, e->path) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
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

/* The cached file of mapping @e, compiled on first sight; NULL at the cap. */
static struct ut_file *get_file(struct unwind_table *u, int pid, const struct procmaps_entry *e)
{
	bool vdso = !strcmp(e->path, "[vdso]");
	__u64 dev = vdso ? VDSO_DEV : ((__u64)e->dev_major << 32 | e->dev_minor);
	__u64 ino = vdso ? 0 : e->inode, t0;
	struct ut_file *f;
	struct stat stb;
	void *img;
	int fd;

	if (u->files_cap) {
		f = file_slot(u->files, u->files_cap, dev, ino);
		if (f->dev || f->ino)
			return f;
	}
	if (u->nfiles >= UNWIND_TABLE_MAX_FILES)
		return NULL;
	if (2 * (u->nfiles + 1) > u->files_cap && files_grow(u))
		return NULL;
	f = file_slot(u->files, u->files_cap, dev, ino);
	memset(f, 0, sizeof(*f));
	f->dev = dev;
	f->ino = ino;
	u->nfiles++;
	t0 = now_ns();
	if (vdso) {
		load_vdso(u, f);
	} else {
		fd = open_mapping(u, pid, e);
		if (fd < 0) {
			u->st.files_failed++;
		} else {
			if (!fstat(fd, &stb) && S_ISREG(stb.st_mode) && stb.st_size > 0) {
				img = mmap(NULL, (size_t)stb.st_size, PROT_READ, MAP_PRIVATE, fd,
					   0);
				if (img != MAP_FAILED) {
					load_rows(u, f, img, (size_t)stb.st_size);
					munmap(img, (size_t)stb.st_size);
				} else {
					u->st.files_failed++;
				}
			} else {
				u->st.files_failed++;
			}
			close(fd);
		}
	}
	u->st.parse_ns += now_ns() - t0;
	return f;
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
			m->first = f->first;
			m->nrows = f->nrows;
			return;
		}
	}
}

/* Drop the processes that have exited: delete their entries from the sink
 * and rebuild the process table with the live ones. Returns how many. */
static size_t reclaim(struct unwind_table *u)
{
	struct ut_proc *n;
	char path[4200];
	size_t i, gone = 0;

	if (!u->procs_cap || !u->sink.del_map || !u->sink.del_proc)
		return 0;
	n = calloc(u->procs_cap, sizeof(*n));
	if (!n)
		return 0;
	for (i = 0; i < u->procs_cap; i++) {
		struct ut_proc *p = &u->procs[i];

		if (!p->pid)
			continue;
		snprintf(path, sizeof(path), "%s/%u", u->proc_root, p->pid);
		if (!access(path, F_OK)) {
			*proc_slot(n, u->procs_cap, p->pid) = *p;
			continue;
		}
		for (__u32 k = 0; k < p->alloc; k++) {
			struct unwind_map_key key = {.tgid = p->pid, .index = k};

			u->sink.del_map(u->sink.ctx, &key);
		}
		u->sink.del_proc(u->sink.ctx, p->pid);
		u->maps_used -= p->alloc;
		u->nprocs--;
		gone++;
	}
	free(u->procs);
	u->procs = n;
	u->st.procs_reclaimed += gone;
	return gone;
}

int unwind_table__add_process(struct unwind_table *u, int pid)
{
	struct procmaps *maps = NULL;
	struct ut_proc *p;
	char path[4200];
	__u32 n = 0, i;
	int err;

	snprintf(path, sizeof(path), "%s/%d/maps", u->proc_root, pid);
	err = procmaps__read(path, &maps);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	for (i = 0; i < procmaps__count(maps); i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);

		if (!(e->perms & PROCMAPS_EXEC))
			continue;
		if (n == UNWIND_TABLE_MAX_PROC_MAPS || !strcmp(e->path, "[vsyscall]"))
			break; /* [vsyscall] is last and outside user space proper */
		describe(u, pid, e, &u->scratch[n++]);
	}
	procmaps__free(maps);
	p = proc_get(u, (__u32)pid, false);
	if (!p && u->nprocs >= UNWIND_TABLE_MAX_PROCS)
		reclaim(u);
	if (!p)
		p = proc_get(u, (__u32)pid, true);
	if (!p) {
		u->st.procs_skipped++;
		return u->nprocs >= UNWIND_TABLE_MAX_PROCS ? -E2BIG : -ENOMEM;
	}
	if (n > p->alloc) {
		if (u->maps_used + (n - p->alloc) > u->sink.max_maps) {
			/* reclaim() rebuilds the table even when nothing exited:
			 * look @p up again in any case (a use-after-free found by
			 * the ASan build of test_unwind_table). */
			reclaim(u);
			p = proc_get(u, (__u32)pid, false);
		}
		if (!p || u->maps_used + (n - p->alloc) > u->sink.max_maps) {
			u->st.procs_skipped++;
			return -E2BIG;
		}
		u->maps_used += n - p->alloc;
		p->alloc = n;
	}
	for (i = 0; i < n; i++) {
		struct unwind_map_key k = {.tgid = (__u32)pid, .index = i};

		err = u->sink.set_map(u->sink.ctx, &k, &u->scratch[i]);
		if (err)
			return err;
	}
	err = u->sink.set_proc(u->sink.ctx, (__u32)pid, n);
	if (err)
		return err;
	if (!p->loaded_ns)
		u->st.processes++;
	p->loaded_ns = now_ns();
	u->st.mappings += n;
	return 0;
}

int unwind_table__refresh(struct unwind_table *u, int pid)
{
	struct ut_proc *p = proc_get(u, (__u32)pid, false);
	int err;

	if (p && p->loaded_ns && now_ns() - p->loaded_ns < UNWIND_TABLE_REFRESH_NS)
		return 0;
	err = unwind_table__add_process(u, pid);
	if (err == -ESRCH && (p = proc_get(u, (__u32)pid, true)))
		p->loaded_ns = now_ns(); /* gone: do not retry it every time */
	return err ? err : 1;
}

void unwind_table__stats(const struct unwind_table *u, struct unwind_table_stats *st)
{
	*st = u->st;
}
