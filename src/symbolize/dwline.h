/* dwline.h - one unit's DWARF line table (.debug_line, versions 2-5) as
 * compact rows sorted by address, without libdw.
 *
 * libdw's dwarf_getsrclines() keeps a 40-byte row per line (plus a
 * 56-byte list node each while it reads them, all freshly faulted pages)
 * and sorts them all, for a unit of which a profile looks up a handful of
 * addresses: libc's malloc.c alone has tens of thousands of rows. Here a
 * row takes 16 bytes, written once into room sized from the program's
 * length (a row takes at least one byte of it; room never written is never
 * resident), nothing is allocated per row, and the sort is
 * skipped when the program's sequences already come in address order (as
 * GCC writes them). The rows and the lookup answer exactly as libdw's
 * dwarf_getsrc_die() would: sorted by address, an end-of-sequence row
 * before an ordinary one at the same address and program order otherwise,
 * the last row at or below the address unless it ends a sequence, and the
 * highest row marked as an end.
 *
 * File names stay libdw's (dwarf_getsrcfiles() reads only the header):
 * a row keeps the file register, the index into that table. Files added
 * by DW_LNE_define_file (DWARF <= 4, no known compiler emits it) are not
 * in that table: their rows name no file. A pure parser over a buffer:
 * malformed input fails the unit (-EINVAL), never reads outside @len.
 */
#ifndef PROFCAP_DWLINE_H
#define PROFCAP_DWLINE_H

#include <stddef.h>
#include <linux/types.h>

/* At most this many rows per unit (the largest real units have ~10^5). */
#define DWLINE_MAX_ROWS (16u << 20)

struct dwline_row {
	__u64 addr;
	__u32 line : 31; /* 0 where the register was 0 or negative */
	__u32 end : 1;	 /* ends a sequence */
	__u16 file;	 /* file register: index into the unit's file table */
	__u16 column;	 /* libdw's width: a wider one fails the unit, as there */
};

struct dwline_table {
	struct dwline_row *rows; /* sorted as the header says; owned */
	size_t n;
};

/* Run the line program of the unit at offset @off of the .debug_line
 * section @sec (@len bytes). @addr_size is the unit's address size (4 or
 * 8), used before DWARF 5 (whose header has its own). *@out gets the rows
 * (dwline__release()). 0; -EINVAL for a malformed or unsupported header
 * or program; -E2BIG past DWLINE_MAX_ROWS rows or 65535 files; -ENOMEM. */
int dwline__read(const void *sec, size_t len, __u64 off, unsigned int addr_size,
		 struct dwline_table *out);

/* The row of @addr (see above), NULL when no sequence covers it. Borrowed. */
const struct dwline_row *dwline__find(const struct dwline_table *t, __u64 addr);

/* Free @t's rows (not @t). Accepts an empty or NULL table. */
void dwline__release(struct dwline_table *t);

#endif
