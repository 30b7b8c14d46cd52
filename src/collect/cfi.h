/* cfi.h - compile the call-frame information of one x86_64 ELF file
 * (.eh_frame, else .debug_frame) into compact unwind rows.
 *
 * A pure parser over an in-memory ELF image: it reads the section headers,
 * walks every CIE and FDE, runs their DWARF CFA programs and keeps, for each
 * address range, only what a stack walker needs: how to compute the CFA
 * (rsp/rbp + offset, the PLT expression, *(rbp + off), a signal frame, the
 * outermost frame) and how to recover the caller's rbp. Anything else is a
 * row marked UNWIND_CFA_UNSUPPORTED, never a guess. Rows are sorted by
 * address; a gap between functions gets an UNWIND_CFA_NONE row.
 *
 * Bounded: sections above CFI_MAX_SECTION bytes are refused, at most
 * CFI_MAX_ROWS rows per file, CFI_MAX_STATES nested remember_state. Parsing
 * is linear in the section size. A malformed FDE is skipped and counted; a
 * malformed ELF header fails the file. Never crashes on any input.
 */
#ifndef PROFCAP_CFI_H
#define PROFCAP_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define CFI_MAX_SECTION (64u << 20)
#define CFI_MAX_ROWS (4u << 20)
#define CFI_MAX_STATES 16
#define CFI_MAX_SEGMENTS 16

/* 16 bytes: a large binary has a million rows, all held while its table is
 * compiled (state_to_row() keeps the offsets within these widths). */
struct cfi_row {
	__u64 pc;	/* ELF virtual address where the row starts */
	__s32 cfa_off;	/* within UNWIND_CFA_OFF_MIN..MAX */
	__s16 rbp_off;	/* caller's rbp at CFA + rbp_off when UNWIND_RBP_AT_CFA */
	__u8 cfa_type;	/* UNWIND_CFA_* (bpf/unwind.h) */
	__u8 rbp_type;	/* UNWIND_RBP_* */
};

struct cfi_stats {
	__u64 cies, fdes;
	__u64 bad_entries;    /* CIEs/FDEs skipped as malformed */
	__u64 unsupported;    /* rows marked UNWIND_CFA_UNSUPPORTED */
	__u64 signal_fdes;    /* FDEs of signal trampolines */
	int from_debug_frame; /* 1 when the rows come from .debug_frame */
	int hdr_order;	      /* 1 when read in .eh_frame_hdr's order (no sort) */
	__u64 go_funcs;	      /* Go functions with rows from the pclntab's pcsp */
};

struct cfi_table;

/* Parse the ELF image of @size bytes at @image (not referenced after the
 * call). *@out gets a new table owned by the caller (cfi__free()). Returns
 * 0; -ENOEXEC when it is not a well-formed 64-bit little-endian ELF file;
 * -ENOENT when it has no usable .eh_frame or .debug_frame; -E2BIG when a
 * section or the row count exceeds its cap; -ENOMEM. */
int cfi__parse(const void *image, size_t size, struct cfi_table **out);

/* Does the ELF image of @size bytes at @image hold a Go program whose
 * pclntab has no section of its own (a PIE the system linker made)? Its
 * .data.rel.ro and .rela.dyn must then be read too (CFI_GO_DATA_SECTIONS),
 * where cfi__parse() looks for it. */
bool cfi__needs_go_data(const void *image, size_t size);
#define CFI_GO_DATA_SECTIONS ".data.rel.ro", ".rela.dyn"

/* Free @t. Accepts NULL. */
void cfi__free(struct cfi_table *t);

/* Rows sorted by pc, strictly ascending. Borrowed; valid until cfi__free(). */
const struct cfi_row *cfi__rows(const struct cfi_table *t, size_t *n);

/* The row covering ELF address @pc (the last row with row.pc <= @pc), or
 * NULL when @pc precedes every row. */
const struct cfi_row *cfi__find(const struct cfi_table *t, __u64 pc);

/* ELF virtual address of file offset @off, through the PT_LOAD segments of
 * the parsed file (as elfsym__offset_to_vaddr()). 0 or -ENOENT. */
int cfi__offset_to_vaddr(const struct cfi_table *t, __u64 off, __u64 *vaddr);

/* PT_LOAD segment @i (< CFI_MAX_SEGMENTS) of the parsed file: file offset,
 * virtual address and file size. 0, or -ENOENT past the last one. */
int cfi__segment(const struct cfi_table *t, unsigned int i, __u64 *offset, __u64 *vaddr,
		 __u64 *filesz);

void cfi__stats(const struct cfi_table *t, struct cfi_stats *st);

/* Pack @r into the __u64 row format of bpf/unwind.h. Fields out of range
 * (pc above 4 GiB excepted: the caller checks) degrade to UNSUPPORTED /
 * UNKNOWN. */
__u64 cfi__pack(const struct cfi_row *r);

#endif
