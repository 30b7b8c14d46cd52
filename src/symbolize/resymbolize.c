/* resymbolize.c - symbolize a capture later (see resymbolize.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "symbolize/dwarf.h"
#include "symbolize/elfsym.h"
#include "symbolize/resymbolize.h"

#define MAX_XSEGS 8

/* What was found for one mapping of the source profile. */
struct rmap {
	bool tried;
	struct elfsym *elf; /* symbols; NULL: not found */
	struct dwarf_lines *dw;
	struct elfsym *bin; /* the mapped file itself, for offsets; NULL: debug file only */
	/* A debug-only file's program headers have no file offsets: its
	 * executable segments, placed as GNU ld lays them out (offset =
	 * vaddr - lowest vaddr). */
	__u64 xbase, xlo[MAX_XSEGS], xhi[MAX_XSEGS];
	size_t nx;
};

struct resym {
	const struct profile *p;
	const char *const *dirs;
	size_t ndirs;
	struct rmap *maps; /* per mapping index */
	bool *leaf;	   /* per location: seen at stack position 0 */
	struct resymbolize_stats st;
};

/* Executable PT_LOAD segments of the file on @fd into @m (see struct rmap). */
static void read_xsegs(int fd, struct rmap *m)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	__u64 low = UINT64_MAX;
	size_t n = 0, i;
	GElf_Phdr ph;

	if (!elf || elf_getphdrnum(elf, &n)) {
		elf_end(elf);
		return;
	}
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < low)
			low = ph.p_vaddr;
	m->xbase = low & ~0xfffull;
	for (i = 0; i < n && m->nx < MAX_XSEGS; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			m->xlo[m->nx] = ph.p_vaddr;
			m->xhi[m->nx++] = ph.p_vaddr + ph.p_memsz;
		}
	elf_end(elf);
}

/* Open @path when its build-id is @want: 0 with *@e (and *@d when @d, may
 * stay NULL) set, else -ENOENT. */
static int try_file(const char *path, const char *want, struct elfsym **e,
		    struct dwarf_lines **d, struct rmap *segs)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char hex[ELFSYM_BUILD_ID_HEX];

	if (fd < 0)
		return -ENOENT;
	if (elfsym__read_build_id_fd(fd, hex, sizeof(hex)) || strcmp(hex, want) ||
	    elfsym__open_fd(fd, e)) {
		close(fd);
		return -ENOENT;
	}
	if (d && dwarf_lines__open_fd(fd, d))
		*d = NULL;
	if (segs)
		read_xsegs(fd, segs);
	close(fd);
	return 0;
}

/* ELF virtual address of file offset @off of the mapped file. 0 or -ENOENT. */
static int to_vaddr(const struct rmap *m, __u64 off, __u64 *vaddr)
{
	size_t i;

	if (m->bin)
		return elfsym__offset_to_vaddr(m->bin, off, vaddr);
	if (!elfsym__offset_to_vaddr(m->elf, off, vaddr))
		return 0;
	for (i = 0; i < m->nx; i++)
		if (off + m->xbase >= m->xlo[i] && off + m->xbase < m->xhi[i]) {
			*vaddr = off + m->xbase;
			return 0;
		}
	return -ENOENT;
}

static void find_file(struct resym *r, const char *path, const char *bid, struct rmap *m)
{
	char buf[PATH_MAX];
	bool found = false;
	size_t i;

	/* The mapped file itself (under a --debug-dir root, or here): its
	 * segments translate offsets; it may have symbols and DWARF too. */
	for (i = 0; *path == '/' && i < r->ndirs && !m->bin; i++)
		if ((size_t)snprintf(buf, sizeof(buf), "%s%s", r->dirs[i], path) < sizeof(buf))
			try_file(buf, bid, &m->bin, NULL, NULL);
	if (!m->bin && *path == '/')
		try_file(path, bid, &m->bin, NULL, NULL);
	/* A debug file by build-id. */
	for (i = 0; i <= r->ndirs && !found; i++) {
		const char *dir = i < r->ndirs ? r->dirs[i] : "/usr/lib/debug";

		found = strlen(bid) > 2 &&
			(size_t)snprintf(buf, sizeof(buf), "%s/.build-id/%.2s/%s.debug", dir, bid,
					 bid + 2) < sizeof(buf) &&
			!try_file(buf, bid, &m->elf, &m->dw, m);
	}
	if (found || !m->bin)
		return;
	/* No debug file: the mapped file's own symbols and DWARF. */
	for (i = 0; *path == '/' && i < r->ndirs && !m->elf; i++)
		if ((size_t)snprintf(buf, sizeof(buf), "%s%s", r->dirs[i], path) < sizeof(buf))
			try_file(buf, bid, &m->elf, &m->dw, NULL);
	if (!m->elf && *path == '/')
		try_file(path, bid, &m->elf, &m->dw, NULL);
}

static struct rmap *get_map(struct resym *r, __u32 idx)
{
	const struct profile_mapping_entry *e = profile__mapping(r->p, idx);
	struct rmap *m = &r->maps[idx];

	if (m->tried)
		return m;
	m->tried = true;
	if (!e->attr)
		return m;
	r->st.mappings++;
	find_file(r, profile__string(r->p, e->filename, NULL), profile__attr(r->p, e->attr)->str_value,
		  m);
	r->st.files_found += m->elf != NULL;
	return m;
}

static void edit(void *arg, __u32 loc, size_t pos, struct profile_frame *f,
		 struct profile_mapping_desc *map)
{
	struct resym *r = arg;
	const struct profile_location_entry *l = profile__location(r->p, loc);
	const struct profile_line *lines;
	const char *name;
	struct rmap *m;
	__u64 off, vaddr;
	size_t n;

	(void)pos;
	/* Native frames only (not kernel, not JIT code named by a perf map). */
	if (!l->mapping || f->type == PROFILE_FRAME_KERNEL ||
	    (f->type_name && strcmp(f->type_name, "native")))
		return;
	m = get_map(r, l->mapping);
	if (!m->elf)
		return;
	/* A return address (never a leaf) belongs to the call before it. */
	off = f->address - (r->leaf[loc] ? 0 : 1) - map->start + map->file_offset;
	if (f->address < map->start || to_vaddr(m, off, &vaddr))
		return;
	name = elfsym__lookup(m->elf, vaddr, NULL);
	if (name && (!f->function || !*f->function)) {
		f->function = name;
		r->st.frames_named++;
	}
	if (m->dw && (!f->nlines || !f->lines[f->nlines - 1].line) &&
	    dwarf_lines__lookup(m->dw, vaddr, f->function, &lines, &n)) {
		f->lines = lines;
		f->nlines = n;
		r->st.frames_lined++;
		map->flags |= PROFILE_MAPPING_HAS__ALL;
	} else if (name) {
		map->flags |= PROFILE_MAPPING_HAS_FUNCTIONS;
	}
}

int resymbolize__profile(const struct profile *p, const char *const *dirs, size_t ndirs,
			 struct profile **out, struct resymbolize_stats *st)
{
	struct resym r = {.p = p, .dirs = dirs, .ndirs = ndirs};
	size_t i, j, n, nm = profile__mapping_count(p);
	int err = -ENOMEM;

	*out = NULL;
	r.maps = calloc(nm, sizeof(*r.maps));
	r.leaf = calloc(profile__location_count(p), sizeof(*r.leaf));
	if (!r.maps || !r.leaf)
		goto out;
	for (i = 0; i < profile__process_count(p); i++)
		for (j = 0; j < profile__sample_count(p, i); j++) {
			const __u32 *locs = profile__stack(p, profile__sample(p, i, j)->stack, &n);

			if (n)
				r.leaf[locs[0]] = true;
		}
	err = profile__rebuild(p, edit, &r, out);
out:
	for (i = 0; r.maps && i < nm; i++) {
		elfsym__free(r.maps[i].elf);
		elfsym__free(r.maps[i].bin);
		dwarf_lines__free(r.maps[i].dw);
	}
	free(r.maps);
	free(r.leaf);
	if (st)
		*st = r.st;
	return err;
}
