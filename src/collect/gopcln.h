/* gopcln.h - read the Go runtime's function table (pclntab) of a Go binary.
 *
 * Every Go binary carries it (in .gopclntab, or .data.rel.ro.gopclntab in
 * a PIE), also when built with -ldflags='-s -w': the runtime needs it for
 * its own tracebacks. It gives each function's address range, name, flags
 * and the pcsp table: the exact stack-pointer offset from the function's
 * entry at every PC, which the unwinder turns into rows (cfi_go.c) and the
 * symbolizer reads names from (symbolize/gopclntab.h). One reader for both.
 *
 * Layouts of Go 1.16/1.17 (magic 0xfffffffa), 1.18/1.19 (0xfffffff0) and
 * 1.20+ (0xfffffff1), either byte order, 4- or 8-byte pointers; the layout
 * of Go 1.2 - 1.15 (0xfffffffb) is refused with -ENOTSUP. Nothing is
 * allocated: the reader borrows the section data, and every offset is
 * checked against it, so crafted input fails, never reads outside it.
 */
#ifndef PROFCAP_GOPCLN_H
#define PROFCAP_GOPCLN_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Function flags (the runtime's funcFlag, Go 1.17+; for 1.16 set from the
 * names of the runtime's functions that carry them later). */
#define GOPCLN_TOPFRAME 0x1 /* outermost frame of a stack (goexit, mstart) */
#define GOPCLN_SPWRITE 0x2  /* writes SP outright: a stack switch */

struct gopcln {
	const __u8 *p;
	size_t size;
	bool big;	  /* big-endian */
	unsigned int ptr; /* pointer size: 4 or 8 */
	unsigned int fw;  /* width of a function table field */
	__u32 magic;
	__u64 nfunc;	      /* entries of the function table */
	__u64 text;	      /* address entries are relative to (0: absolute) */
	__u64 nameoff;	      /* function name table */
	__u64 pctaboff;	      /* pc-value tables (pcsp among them) */
	__u64 pclnoff;	      /* function table */
	unsigned int flagoff; /* offset of the flag byte in a _func */
};

struct gopcln_func {
	__u64 entry;   /* first address (ELF virtual address) */
	__u64 end;     /* one past the last: the next function's entry */
	__u64 funcoff; /* its _func record, from pclnoff */
};

/* Read the header of the pclntab of @size bytes at @data (borrowed: it
 * must outlive @g). @text_addr is the address of the runtime's text, used
 * when the header leaves it 0 (a PIE whose header is relocated at load).
 * 0, -ENOTSUP (a layout before Go 1.16), -EBADMSG (not a pclntab, or its
 * function table outside the data). */
int gopcln__init(struct gopcln *g, const void *data, size_t size, __u64 text_addr);

/* Function @i (< g->nfunc) of the table, in the table's (address) order.
 * 0, or -EBADMSG when its entry lies outside the data. */
int gopcln__func(const struct gopcln *g, __u64 i, struct gopcln_func *f);

/* The name of @f (points into the data, NUL-terminated, at most 4 KiB),
 * or NULL when it is empty or outside the data. */
const char *gopcln__name(const struct gopcln *g, const struct gopcln_func *f);

/* GOPCLN_* flags of @f (0 when its record is cut short). */
unsigned int gopcln__flags(const struct gopcln *g, const struct gopcln_func *f);

/* A walk over the pcsp table of one function: ranges of addresses with one
 * stack-pointer offset each, in address order. */
struct gopcln_pcsp {
	const __u8 *p, *end;
	__u64 pc, limit;
	__s64 val;
	bool first, bad;
};

/* Start walking the pcsp table of @f. 0, or -ENOENT (no table, or its
 * offset outside the data). */
int gopcln__pcsp(const struct gopcln *g, const struct gopcln_func *f, struct gopcln_pcsp *it);

/* The offset of the first pclntab header of the Go 1.18+ layouts in @data
 * (@size bytes of data it lies among, 8-byte aligned) at or after @from,
 * or @size when there is none. */
size_t gopcln__scan(const void *data, size_t size, size_t from);

/* A PIE of a Go program made by the system linker (cgo) has no pclntab
 * section: the table lies in .data.rel.ro (@ro, @ro_size bytes at address
 * @ro_addr) and its text address, 0 in the file, in an R_X86_64_RELATIVE
 * relocation of .rela.dyn (@rela, @rela_size bytes; NULL: none). *@off
 * gets the table's offset in @ro (its size: up to the end of @ro), *@text
 * the text address to give gopcln__init(). 0 or -ENOENT. */
int gopcln__find_in_data(const void *ro, size_t ro_size, __u64 ro_addr, const void *rela,
			 size_t rela_size, size_t *off, __u64 *text);

/* The next range [*start, *end) and its SP offset *@sp (bytes pushed since
 * the entry, return address not counted). False at the table's end, at the
 * function's end, or when the table is malformed (it->bad). */
bool gopcln__pcsp_next(struct gopcln_pcsp *it, __u64 *start, __u64 *end, __s64 *sp);

#endif
