/* dwarf_int.h - what dwarf.c, dwarf_index.c and dwarf_elf.c share: the
 * state of one file's DWARF and the steps of opening it. Private to
 * symbolize/.
 */
#ifndef PROFCAP_DWARF_INT_H
#define PROFCAP_DWARF_INT_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/array.h"
#include "util/gz.h"
#include "util/htab.h"
#include "util/pages.h"
#include "util/search.h"
#include "symbolize/dwarf.h"
#include "symbolize/dwline.h"

#define CHUNK_LINES 4096

/* A subprogram or inlined subroutine with code. */
struct scope {
	Dwarf_Die die;
	__s32 parent; /* index of the enclosing scope in the unit, -1 = none */
	bool inlined; /* DW_TAG_inlined_subroutine */
};

/* [lo, hi) whose innermost scope is @scope. */
struct seg {
	__u64 lo, hi;
	__u32 scope;
};

struct unit {
	Dwarf_Off die_off; /* of the unit DIE */
	bool have_die;	   /* cudie and comp_dir read (unit_die()) */
	Dwarf_Die cudie;
	const char *comp_dir; /* DW_AT_comp_dir, NULL = none */
	bool indexed;
	struct scope *scopes;
	size_t nscopes;
	struct seg *segs;
	size_t nsegs;
	/* Line rows (dwline.h), read at the unit's first lookup: 1 = read,
	 * -1 = not readable here (split unit, odd program): libdw's then. */
	int lines_state;
	struct dwline_table lines;
};

/* An address range of a unit. */
struct urange {
	__u64 lo, hi;
	__u32 unit;
};

struct centry {
	__u64 addr; /* key */
	const struct profile_line *lines;
	__u32 n;
};

struct pentry {
	const char *key;
	char *path;
};

struct chunk {
	struct chunk *next;
	size_t used;
	struct profile_line v[CHUNK_LINES];
};

struct dwarf_lines {
	Elf *elf;
	Dwarf *dw;
	int fd;	     /* ours, until the DWARF is begun; -1 after */
	bool begun;  /* dwarf_begin_elf() and the unit index were tried */
	bool broken; /* ... and failed: no lines */
	struct unit *units;
	size_t nunits;
	struct urange *ranges;
	size_t nranges, ranges_cap, units_cap;
	/* Units .debug_aranges has no set for (data only, or from a compiler
	 * that writes none): their DIE offsets, read at the first address no
	 * indexed unit covers (reading them makes libdw set up every unit). */
	Dwarf_Off *unset;
	size_t nunset;
	struct htab cache; /* struct centry, by address */
	struct chunk *chunks;
	/* Relative source file names joined with their unit's comp_dir,
	 * keyed by libdw's (stable) name pointer: struct pentry. */
	struct htab paths;
	/* Names and file names of cached lines, owned (libdw's go at
	 * dwarf_lines__release()): a set of char *. */
	struct htab strs;
	bool has_inline;
	/* .debug_line as libdw reads it (decompressed), NULL = none. */
	const unsigned char *line_sec;
	size_t line_len;
	/* Sections decompressed here (decompress_sections()), unmapped after
	 * the Elf that points at them ends. */
	struct zbuf {
		void *p;
		size_t len;
	} zbufs[16];
	unsigned int nzbufs;
	size_t held; /* debug sections' bytes as libdw reads them (held_size()) */
	struct dwarf_lines_stats st;
};

/* ---- dwarf_index.c: which unit holds an address ---------------------------- */

/* Fill d->units and d->ranges from .debug_aranges, else from every unit.
 * 0 or -errno. */
int dwl__index_units(struct dwarf_lines *d);
/* Read unit @u's DIE and comp_dir once. 0 or -errno. */
int dwl__unit_die(struct dwarf_lines *d, struct unit *u);
/* Index the units .debug_aranges left out (d->unset), at the first
 * address no indexed unit covers. 0 or -errno. */
int dwl__index_unset(struct dwarf_lines *d);

/* Free the unit, range and unset tables (not the units' own contents) and
 * empty them. */
void dwl__drop_units(struct dwarf_lines *d);

/* ---- dwarf_elf.c: the file's sections ---------------------------------------- */

/* The section after @scn (NULL: the first) with contents in the file, its
 * header into *@sh and its name (NULL when unreadable) into *@name; NULL
 * after the last. */
Elf_Scn *dwl__next_section(Elf *elf, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh,
			   const char **name);
/* The raw data of section @name, or NULL. */
Elf_Data *dwl__section_data(Elf *elf, const char *name);
bool dwl__has_debug_info(Elf *elf);
void dwl__release_pages(struct dwarf_lines *d);
void dwl__hide_unused(Elf *elf);
void dwl__decompress_sections(struct dwarf_lines *d);
void dwl__find_line_section(struct dwarf_lines *d);
size_t dwl__held_size(Elf *elf);

#endif
