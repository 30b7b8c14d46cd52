/* dwarf.h - source lines and inlined frames of one ELF file from its DWARF.
 *
 * libdw decodes (DWARF 2-5, compressed sections, dwz alternate files via
 * .gnu_debugaltlink, which libdw opens itself from the debug file's
 * directory or /usr/lib/debug/.build-id); the lookups are our own indexes,
 * not libdwfl's per-address walks:
 *   - at the first lookup (not at open: libdw decompresses every compressed
 *     debug section when it begins, megabytes for a libc, and most
 *     files a process maps never get a sample), every unit's address ranges
 *     sorted into one table: address -> unit. From .debug_aranges when the
 *     file has it (GCC), without reading any unit DIE: libdw then sets up
 *     only the units lookups land in and those before them; units it has no set for are read from their DIE
 *     at the first address no other unit covers. Without .debug_aranges,
 *     from every unit DIE;
 *   - per unit, built once on the first lookup that lands in it: the ranges
 *     of its subprograms and inlined subroutines flattened into sorted,
 *     non-overlapping segments, each naming its innermost scope;
 *   - line rows from the unit's line program, run by dwline.h at the
 *     unit's first lookup (libdw's dwarf_getsrc_die() for split units and
 *     programs dwline refuses).
 * Results are cached by address (one dwarf_lines per file, which the caller
 * keys by build-id), so a hot address costs one hash probe.
 *
 * Compressed debug sections are decompressed one at a time, largest first,
 * each one's compressed pages let go once done. dwarf_lines__release()
 * frees libdw's data between batches of lookups (the cached lines keep
 * copies of their strings); a miss after it begins the DWARF again.
 *
 * Everything a lookup returns (line arrays, names, file names) is owned by
 * the dwarf_lines and stays valid until dwarf_lines__free(). Bounded:
 * DWARF_LINES_MAX_CACHE addresses are cached; past that, lookups return no
 * lines. Malformed DWARF yields fewer or no lines, never a crash. Not
 * thread-safe.
 */
#ifndef PROFCAP_DWARF_H
#define PROFCAP_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "model/profile.h"

#define DWARF_LINES_MAX_CACHE (4u << 20)

struct dwarf_lines;

struct dwarf_lines_stats {
	__u64 units;	       /* units with address ranges */
	__u64 units_indexed;   /* units whose scopes were indexed */
	__u64 units_aranges;   /* units found through .debug_aranges, no DIE read */
	__u64 lookups;	       /* dwarf_lines__lookup() calls */
	__u64 cache_hits;      /* answered from the address cache */
	__u64 no_unit;	       /* addresses in no unit's ranges */
	__u64 begins;	       /* DWARF begun (decompressed, units indexed) */
	__u64 releases;	       /* ... and freed by dwarf_lines__release() */
};

/* Open the DWARF of the ELF file on @fd (the binary itself or its debug
 * file). @fd stays the caller's and may be closed right after (the file is
 * mapped). Only the section headers are read here; @d keeps a duplicate
 * of @fd to begin the DWARF at its first lookup and again after
 * dwarf_lines__release() (beyond 256 such files, the DWARF is begun here
 * and kept). *@out gets a new object. 0, -ENOENT (no
 * .debug_info in the file), -ENOEXEC (not ELF), -EMFILE or -ENOMEM. DWARF
 * found unreadable later yields no lines. */
int dwarf_lines__open_fd(int fd, struct dwarf_lines **out);

/* Free @d and everything it handed out. Accepts NULL. */
void dwarf_lines__free(struct dwarf_lines *d);

/* Lines of ELF virtual address @vaddr: *@lines gets an array of *@n lines,
 * innermost inlined function first and the function containing @vaddr last
 * (struct profile_frame's order), borrowed from @d. When @outer_name is not
 * NULL it names the last line (the caller's symbol-table name, which
 * qualifies C++ methods). *@n is 0 when the DWARF does not cover @vaddr.
 * Returns true when lines were found. */
bool dwarf_lines__lookup(struct dwarf_lines *d, __u64 vaddr, const char *outer_name,
			 const struct profile_line **lines, size_t *n);

/* What dwarf_lines__lookup() would answer for @vaddr, without beginning
 * the DWARF: true with *@lines, *@n (maybe none) when it is cached or the
 * DWARF is known unreadable (or the cache full), false when only a lookup
 * can tell. */
bool dwarf_lines__peek(const struct dwarf_lines *d, __u64 vaddr, const struct profile_line **lines,
		       size_t *n);

/* Free the file's DWARF (libdw's Dwarf and Elf, with the decompressed
 * sections) and the unit index, keeping the
 * cached lines (their names and file names are @d's own copies): a lookup
 * that misses the cache begins the DWARF again. For a caller that looks up
 * in batches (one drain) and wants memory back in between. Returns whether
 * it freed anything: not for DWARF not begun, unreadable, or of a file
 * whose descriptor went (more than 256 files with DWARF). Accepts NULL. */
bool dwarf_lines__release(struct dwarf_lines *d);

/* Bytes of debug sections @d holds while its DWARF is begun, which
 * dwarf_lines__release() gives back (decompressed sizes). libdw's own unit records are not counted. 0 when not begun or
 * for NULL. */
size_t dwarf_lines__held(const struct dwarf_lines *d);

/* True when the file's DWARF has any inlined subroutine indexed so far
 * (for pprof.mapping.has_inline_frames; false before the first lookup). */
bool dwarf_lines__has_inline(const struct dwarf_lines *d);

void dwarf_lines__stats(const struct dwarf_lines *d, struct dwarf_lines_stats *st);

#endif
