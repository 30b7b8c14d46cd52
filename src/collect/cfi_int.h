/* cfi_int.h - what cfi.c, cfi_elf.c and cfi_sort.c share: the table being
 * built and the ELF sections it is parsed from. Private to collect/.
 */
#ifndef PROFCAP_CFI_INT_H
#define PROFCAP_CFI_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/search.h"
#include "util/cursor.h"
#include "collect/cfi.h"
#include "unwind.h"

/* ELF64 constants (no libelf: this parser must stand alone for fuzzing). */
#define EHDR_SIZE 64
#define SHDR_SIZE 64
#define SHT_NOBITS 8
#define SHF_COMPRESSED 0x800
#define EM_X86_64 62

struct cfi_segment {
	__u64 offset, vaddr, filesz;
};

struct cfi_table {
	struct cfi_row *rows;
	size_t n, cap;
	struct cfi_stats st;
	struct cfi_segment seg[CFI_MAX_SEGMENTS];
	unsigned int nseg;
};

struct section {
	const __u8 *data;
	size_t size;
	__u64 addr;
	int found; /* 0 none, 1 found, -E2BIG too big */
};

/* Do @a and @b unwind the same way (addresses aside)? */
static inline bool cfi__same_rule(const struct cfi_row *a, const struct cfi_row *b)
{
	return a->cfa_type == b->cfa_type && a->cfa_off == b->cfa_off &&
	       a->rbp_type == b->rbp_type && a->rbp_off == b->rbp_off;
}

/* ---- cfi_elf.c ---------------------------------------------------------------------- */

/* Keep the PT_LOAD segments of @img (to map file offsets to addresses). */
void cfi__read_segments(const __u8 *img, size_t size, struct cfi_table *t);
/* The sections cfi__parse() reads. */
struct cfi_sections {
	struct section eh, dbg, hdr;
	struct section go;   /* the Go pclntab */
	struct section text; /* .text: its address only */
	/* A Go program linked by the system linker as a PIE keeps its
	 * pclntab in .data.rel.ro, its text address in a relocation. */
	struct section rodata, rela;
	bool go_note;  /* .note.go.buildid or .go.buildinfo: a Go program */
	__u64 go_text; /* the runtime's text address found so, 0 if not */
};

/* Find the sections of @s in @img. 0 or -ENOEXEC. */
int cfi__find_sections(const __u8 *img, size_t size, struct cfi_sections *s);

/* ---- cfi_go.c ----------------------------------------------------------------------- */

/* Rows for the Go functions of the pclntab @sec (runtime text at
 * @text_addr when its header leaves it 0), merged into @t's sorted and
 * compact rows: inside Go functions they replace @t's. 0, -ENOENT (not a
 * pclntab this reads), -E2BIG, -ENOMEM. */
int cfi__add_go(struct cfi_table *t, const struct section *sec, __u64 text_addr);

/* For a Go program without a pclntab section: find it in s->rodata, set
 * s->go and s->go_text. 0 or -ENOENT. */
int cfi__find_go(struct cfi_sections *s);

/* ---- cfi_sort.c --------------------------------------------------------------------- */

/* Sort order of a row: by address; at one address, a function start beats
 * the previous one's end (a NONE row). */
static inline __u64 cfi__row_key(const struct cfi_row *r)
{
	return r->pc << 1 | (r->cfa_type == UNWIND_CFA_NONE);
}

/* Sort @a (@n rows) by cfi__row_key(). */
void cfi__sort_rows(struct cfi_row *a, size_t n);
/* True when @a is in cfi__row_key() order already. */
bool cfi__rows_sorted(const struct cfi_row *a, size_t n);

#endif
