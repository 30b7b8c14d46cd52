/* mapev.c - processes' executable mappings from perf side-band records
 * (see mapev.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/array.h"
#include "util/htab.h"
#include "proc/mapev.h"
#include "proc/procmaps.h"

struct mev_map {
	__u64 start, end, off, ino;
	__u32 maj, min;
	__u32 perms; /* enum procmaps_perm */
	__u32 path;  /* offset in paths */
	bool deleted;
};

struct mev_proc {
	__u32 pid; /* key */
	__u32 n;
	size_t cap;
	char comm[16];
	__u32 exe; /* offset in paths + 1 of its program's path, 0 = not seen */
	bool exe_deleted;
	__u64 exit_ns; /* 0 while it lives */
	struct mev_map *maps;
};

struct mapev {
	struct htab procs;   /* struct mev_proc, by pid */
	__u32 nexited;	     /* of them, exited */
	__u64 first_exit_ns; /* no exit before this one (mapev__expire() scans after it) */
	char *paths;	     /* NUL-terminated, each once */
	size_t plen, pcap;
	struct htab pidx; /* __u32 offset of each path in paths */
	/* put_map()'s result (up to 3 past the cap before it stops) */
	struct mev_map *scratch;
	size_t scratch_cap;
	struct procmaps_entry *out; /* mapev__maps()'s entries */
	size_t out_cap;
	struct mapev_stats st;
};

static bool pid_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct mev_proc *)elem)->pid == *(const __u32 *)key;
}

static struct mev_proc *find(struct mapev *m, __u32 pid)
{
	return htab__find(&m->procs, htab__hash_u64(pid, 0), &pid, pid_eq, NULL);
}

/* Remove the process @p. */
static void remove_proc(struct mapev *m, struct mev_proc *p)
{
	if (p->exit_ns)
		m->nexited--;
	free(p->maps);
	htab__remove(&m->procs, p);
}

/* The entry of @pid, emptied of any mappings (new, or reused). NULL when
 * the table is full of live processes. Entries may move: pointers to
 * others taken before are invalid after. */
static struct mev_proc *fresh(struct mapev *m, __u32 pid)
{
	struct mev_proc *p = find(m, pid), *old = NULL, *q;
	size_t it = 0;

	if (p) {
		if (p->exit_ns)
			m->nexited--;
		p->n = 0;
		p->exit_ns = 0;
		p->comm[0] = '\0';
		p->exe = 0;
		p->exe_deleted = false;
		return p;
	}
	if (htab__count(&m->procs) >= MAPEV_MAX_PROCS) {
		while ((q = htab__next(&m->procs, &it)))
			if (q->exit_ns && (!old || q->exit_ns < old->exit_ns))
				old = q;
		if (!old) {
			m->st.full++;
			return NULL;
		}
		m->st.dropped++;
		remove_proc(m, old);
	}
	if (htab__add(&m->procs, htab__hash_u64(pid, 0), (void **)&p)) {
		m->st.full++;
		return NULL;
	}
	p->pid = pid;
	return p;
}

struct mapev *mapev__new(void)
{
	struct mapev *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	htab__init(&m->procs, sizeof(struct mev_proc), MAPEV_MAX_PROCS);
	/* Each path takes two bytes at least. */
	htab__init(&m->pidx, sizeof(__u32), MAPEV_MAX_PATHS / 2);
	return m;
}

void mapev__free(struct mapev *m)
{
	struct mev_proc *p;
	size_t it = 0;

	if (!m)
		return;
	while ((p = htab__next(&m->procs, &it)))
		free(p->maps);
	htab__release(&m->procs);
	free(m->scratch);
	free(m->out);
	free(m->paths);
	htab__release(&m->pidx);
	free(m);
}

struct path_key {
	const char *s;
	size_t len;
};

static bool path_eq(const void *elem, const void *key, void *ctx)
{
	const struct path_key *k = key;
	const char *stored = (const char *)ctx + *(const __u32 *)elem;

	return !strncmp(stored, k->s, k->len) && !stored[k->len];
}

/* The offset of path @s (@len bytes) in m->paths, added once. -ENOSPC at
 * MAPEV_MAX_PATHS, -ENOMEM. */
static int intern_path(struct mapev *m, const char *s, size_t len, __u32 *off)
{
	struct path_key key = {.s = s, .len = len};
	__u64 h = htab__hash(s, len);
	const __u32 *found;
	__u32 *slot;

	found = m->plen ? htab__find(&m->pidx, h, &key, path_eq, m->paths) : NULL;
	if (found) {
		*off = *found;
		return 0;
	}
	if (m->plen + len + 1 > MAPEV_MAX_PATHS)
		return -ENOSPC;
	if (array__grow((void **)&m->paths, &m->pcap, m->plen + len, 1, 4096, MAPEV_MAX_PATHS) ||
	    htab__add(&m->pidx, h, (void **)&slot))
		return -ENOMEM;
	memcpy(m->paths + m->plen, s, len);
	m->paths[m->plen + len] = '\0';
	*off = (__u32)m->plen;
	*slot = (__u32)m->plen;
	m->plen += len + 1;
	m->st.path_bytes = m->plen;
	return 0;
}

static void set_comm(struct mev_proc *p, const char *comm)
{
	size_t n = strnlen(comm, sizeof(p->comm) - 1);

	memcpy(p->comm, comm, n);
	p->comm[n] = '\0';
}

void mapev__exec(struct mapev *m, __u32 pid, const char *comm)
{
	struct mev_proc *p;

	if (!pid || !(p = fresh(m, pid)))
		return;
	m->st.execs++;
	set_comm(p, comm);
}

void mapev__rename(struct mapev *m, __u32 pid, const char *comm)
{
	struct mev_proc *p = find(m, pid);

	if (p && !p->exit_ns)
		set_comm(p, comm);
}

void mapev__fork(struct mapev *m, __u32 pid, __u32 ppid)
{
	struct mev_proc *p, *parent;
	struct mev_map *maps = NULL;
	char comm[16];
	__u32 n, exe;
	bool exe_deleted;

	if (!pid || pid == ppid)
		return;
	m->st.forks++;
	parent = find(m, ppid);
	if (!parent || parent->exit_ns) {
		/* Not known: nor is the child (a reused PID loses what it had). */
		p = find(m, pid);
		if (p)
			remove_proc(m, p);
		return;
	}
	n = parent->n;
	if (n) {
		maps = malloc(n * sizeof(*maps));
		if (!maps)
			return;
		memcpy(maps, parent->maps, n * sizeof(*maps));
	}
	memcpy(comm, parent->comm, sizeof(comm));
	exe = parent->exe;
	exe_deleted = parent->exe_deleted;
	p = fresh(m, pid); /* may move the parent: copied first */
	if (!p) {
		free(maps);
		return;
	}
	memcpy(p->comm, comm, sizeof(comm));
	p->exe = exe;
	p->exe_deleted = exe_deleted;
	free(p->maps);
	p->maps = maps;
	p->n = p->cap = n;
}

void mapev__exit(struct mapev *m, __u32 pid, __u64 now_ns)
{
	struct mev_proc *p = find(m, pid);

	m->st.exits++;
	if (p && !p->exit_ns) {
		p->exit_ns = now_ns ? now_ns : 1;
		if (!m->nexited++ || p->exit_ns < m->first_exit_ns)
			m->first_exit_ns = p->exit_ns;
	}
}

/* Add @nm to @p's sorted mappings, cutting what it covers out of older
 * ones. -E2BIG past MAPEV_MAX_MAPS, -ENOMEM. */
static int put_map(struct mapev *m, struct mev_proc *p, const struct mev_map *nm)
{
	struct mev_map *s;
	__u32 i, k = 0;
	bool placed = false;

	if (array__grow((void **)&m->scratch, &m->scratch_cap, p->n + 3, sizeof(*s), 64,
			MAPEV_MAX_MAPS + 4))
		return -ENOMEM;
	s = m->scratch;

	for (i = 0; i < p->n; i++) {
		const struct mev_map *x = &p->maps[i];

		if (!placed && x->start >= nm->start) {
			s[k++] = *nm;
			placed = true;
		}
		if (x->end <= nm->start || x->start >= nm->end) {
			s[k++] = *x;
		} else {
			if (x->start < nm->start) {
				/* its left part, before the new one */
				s[k] = *x;
				s[k].end = nm->start;
				k++;
				if (!placed) {
					s[k++] = *nm;
					placed = true;
				}
			}
			if (x->end > nm->end) {
				s[k] = *x;
				s[k].start = nm->end;
				s[k].off = x->off + (nm->end - x->start);
				k++;
			}
		}
		if (k > MAPEV_MAX_MAPS)
			return -E2BIG;
	}
	if (!placed)
		s[k++] = *nm;
	if (k > MAPEV_MAX_MAPS)
		return -E2BIG;
	if (array__grow((void **)&p->maps, &p->cap, k - 1, sizeof(*s), 16, MAPEV_MAX_MAPS))
		return -ENOMEM;
	memcpy(p->maps, s, k * sizeof(*s));
	p->n = k;
	return 0;
}

void mapev__mmap(struct mapev *m, __u32 pid, const struct mapev_map *mm)
{
	static const char anon[] = "//anon", deleted[] = " (deleted)";
	struct mev_proc *p = find(m, pid);
	struct mev_map nm = {0};
	size_t len, dl = sizeof(deleted) - 1;

	if (!p || p->exit_ns || !mm->path) {
		m->st.ignored++;
		return;
	}
	m->st.mmaps++;
	if (!mm->len || mm->start + mm->len < mm->start)
		return;
	nm.start = mm->start;
	nm.end = mm->start + mm->len;
	nm.off = mm->pgoff;
	nm.ino = mm->ino;
	nm.maj = mm->maj;
	nm.min = mm->min;
	nm.perms = (mm->prot & PROT_READ ? PROCMAPS_READ : 0) |
		   (mm->prot & PROT_WRITE ? PROCMAPS_WRITE : 0) |
		   (mm->prot & PROT_EXEC ? PROCMAPS_EXEC : 0) |
		   (mm->flags & MAP_SHARED ? PROCMAPS_SHARED : 0);
	len = strlen(mm->path);
	if (!strcmp(mm->path, anon))
		len = 0;
	if (len > dl && !memcmp(mm->path + len - dl, deleted, dl)) {
		nm.deleted = true;
		len -= dl;
	}
	if (intern_path(m, mm->path, len, &nm.path) || put_map(m, p, &nm)) {
		m->st.dropped++;
		remove_proc(m, p);
		return;
	}
	/* The kernel maps the program first, then its loader. */
	if (!p->exe && len && mm->path[0] == '/') {
		p->exe = nm.path + 1;
		p->exe_deleted = nm.deleted;
	}
}

void mapev__lost(struct mapev *m)
{
	struct mev_proc *p;
	size_t it = 0;

	m->st.lost++;
	while ((p = htab__next(&m->procs, &it)))
		free(p->maps);
	htab__clear(&m->procs);
	m->nexited = 0;
}

void mapev__expire(struct mapev *m, __u64 now_ns)
{
	struct mev_proc *p;
	__u64 first = 0;
	size_t it = 0;

	/* A scan of the whole table only when an exit is old enough. */
	if (!m->nexited || now_ns <= m->first_exit_ns ||
	    now_ns - m->first_exit_ns <= MAPEV_KEEP_EXITED_NS)
		return;
	while ((p = htab__next(&m->procs, &it))) {
		if (p->exit_ns && now_ns > p->exit_ns &&
		    now_ns - p->exit_ns > MAPEV_KEEP_EXITED_NS) {
			remove_proc(m, p);
			continue;
		}
		if (p->exit_ns && (!first || p->exit_ns < first))
			first = p->exit_ns;
	}
	m->first_exit_ns = first;
}

int mapev__maps(struct mapev *m, __u32 pid, struct procmaps **out, struct mapev_desc *desc)
{
	const struct mev_proc *p = find(m, pid);
	__u32 i;

	*out = NULL;
	if (desc) {
		desc->comm[0] = '\0';
		desc->exe[0] = '\0';
	}
	if (!p) {
		m->st.unknown++;
		return -ENOENT;
	}
	if (desc) {
		memcpy(desc->comm, p->comm, sizeof(p->comm));
		if (p->exe)
			snprintf(desc->exe, sizeof(desc->exe), "%s%s", m->paths + p->exe - 1,
				 p->exe_deleted ? " (deleted)" : "");
	}
	if (p->n && array__grow((void **)&m->out, &m->out_cap, p->n - 1, sizeof(*m->out), 64,
				MAPEV_MAX_MAPS))
		return -ENOMEM;
	for (i = 0; i < p->n; i++) {
		const struct mev_map *x = &p->maps[i];

		m->out[i] = (struct procmaps_entry){
			.start = x->start,
			.end = x->end,
			.offset = x->off,
			.inode = x->ino,
			.dev_major = x->maj,
			.dev_minor = x->min,
			.perms = x->perms,
			.deleted = x->deleted,
			.path = m->paths + x->path,
		};
	}
	m->st.answered++;
	return procmaps__from_entries(m->out, p->n, out);
}

void mapev__stats(const struct mapev *m, struct mapev_stats *st)
{
	*st = m->st;
	st->procs = htab__count(&m->procs);
}
