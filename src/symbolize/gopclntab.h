/* gopclntab.h - function names of a Go binary from its .gopclntab section.
 *
 * Go binaries built with -ldflags='-s -w' (how most Go services ship) have
 * no .symtab, but the runtime's own function table (pclntab) names every
 * function. This parses the layouts of Go 1.16/1.17 (magic 0xfffffffa),
 * 1.18/1.19 (0xfffffff0) and 1.20+ (0xfffffff1), either byte order, 4- or
 * 8-byte pointers; older layouts fail with -ENOTSUP. Only the function
 * table is read (entry, end, name): no lines, no inlined frames. The
 * reading is collect/gopcln.h's, which the unwinder shares: every offset
 * is checked against the section, so crafted input fails, never reads
 * outside it.
 */
#ifndef PROFCAP_GOPCLNTAB_H
#define PROFCAP_GOPCLNTAB_H

#include <stddef.h>
#include <linux/types.h>

struct gopclntab_func {
	__u64 entry; /* first address (ELF virtual address) */
	__u64 end;   /* one past the last */
	const char *name; /* points into the section data; NUL-terminated */
};

/* Parse the .gopclntab section of @size bytes at @data. @text_addr is the
 * address of .text (used when the header's text start is 0, e.g. an
 * unrelocated PIE). *@out gets a new array (owned by the caller, free())
 * of *@n functions sorted by entry, at most @max; names point into @data.
 * 0, -ENOTSUP (a Go layout before 1.16), -EBADMSG (not a pclntab, or an
 * offset/size outside the data), -ENOMEM. */
int gopclntab__parse(const void *data, size_t size, __u64 text_addr, size_t max,
		     struct gopclntab_func **out, size_t *n);

/* As gopclntab__parse() for a PIE of a Go program the system linker made
 * (cgo), which has no pclntab section: the table is found in .data.rel.ro
 * (@ro, @ro_size bytes at address @ro_addr), its text address in .rela.dyn
 * (@rela, @rela_size bytes; NULL: none) as collect/gopcln.h
 * gopcln__find_in_data() does. -ENOENT when there is none. */
int gopclntab__parse_data(const void *ro, size_t ro_size, __u64 ro_addr, const void *rela,
			  size_t rela_size, size_t max, struct gopclntab_func **out, size_t *n);

#endif
