/* elfsym.h - function symbols, GNU build-id and load segments of one ELF file.
 *
 * An elfsym is parsed once (from an fd or an in-memory image, e.g. the vdso)
 * with libelf and keeps only what symbolization needs, copied into its own
 * memory: the FUNC symbols of .symtab and .dynsym (deduplicated, sorted), the
 * build-id as lower-case hex, and the PT_LOAD segments used to turn a file
 * offset (from a runtime address and its mapping) into an ELF virtual
 * address. The source fd or image is not referenced after the parse.
 *
 * When the file has no .symtab, symbols can be added from elsewhere, in the
 * order perf and elfutils use: a separate debug file (elfsym__add_debug_fd,
 * found by symbolize/debugfile.h), then what the file itself embeds
 * (elfsym__add_embedded_fd: MiniDebugInfo in .gnu_debugdata, else Go's
 * pclntab: .gopclntab, .data.rel.ro.gopclntab, or inside a Go PIE's
 * .data.rel.ro). Names are demangled on lookup (elfsym__lookup_demangled).
 *
 * Malformed, truncated or non-ELF input fails with an error, never a crash.
 * Growth is capped: ELFSYM_MAX_SYMBOLS symbols, ELFSYM_MAX_NAME bytes per name
 * (longer names are truncated) and ELFSYM_MAX_NAMES bytes of names per file;
 * past a cap the remaining symbols are dropped and elfsym__truncated() says so.
 */
#ifndef PROFCAP_ELFSYM_H
#define PROFCAP_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define ELFSYM_MAX_SYMBOLS (2u << 20)
#define ELFSYM_MAX_NAME 4096
#define ELFSYM_MAX_NAMES (128u << 20)
#define ELFSYM_MAX_SEGMENTS 64
/* GNU build-ids are 20 bytes (sha1) by default; allow up to 64 bytes. */
#define ELFSYM_MAX_BUILD_ID 64
#define ELFSYM_BUILD_ID_HEX (2 * ELFSYM_MAX_BUILD_ID + 1)

struct elfsym;

/* Parse the ELF file open on @fd (read with mmap; @fd stays the caller's and
 * may be closed right after). *@out gets a new elfsym owned by the caller.
 * Returns 0, -ENOEXEC (not an ELF file or malformed), -ENOMEM or -errno. */
int elfsym__open_fd(int fd, struct elfsym **out);

/* Same as elfsym__open_fd() for an image of @size bytes at @image (copied
 * as needed; not referenced afterwards). */
int elfsym__open_mem(const void *image, size_t size, struct elfsym **out);

/* Parse the vdso of the calling process (found via getauxval(AT_SYSINFO_EHDR),
 * sized from its own ELF headers). Every process of the same ABI on one
 * kernel maps the same vdso image. 0, -ENOENT (no vdso), -ENOEXEC or -ENOMEM. */
int elfsym__open_self_vdso(struct elfsym **out);

/* Free @e. Accepts NULL. */
void elfsym__free(struct elfsym *e);

/* The GNU build-id as lower-case hex, or NULL when the file has none.
 * Borrowed; valid until elfsym__free(). */
const char *elfsym__build_id(const struct elfsym *e);

/* Read only the build-id of the ELF file on @fd into @hex (at least
 * ELFSYM_BUILD_ID_HEX bytes). 0, -ENOENT (no build-id), -ENOEXEC or -errno.
 * Cheaper than a full parse; used to find a cached parse of the same file. */
int elfsym__read_build_id_fd(int fd, char *hex, size_t size);

/* Extract a GNU build-id from raw ELF note data (e.g. /sys/kernel/notes) of
 * @len bytes into @hex. 0, -ENOENT (no NT_GNU_BUILD_ID note) or -EINVAL. */
int elfsym__note_build_id(const void *notes, size_t len, char *hex, size_t size);

/* Convert file offset @off into the ELF virtual address of the PT_LOAD
 * segment that maps it: p_vaddr + (off - p_offset). For a runtime address
 * @addr in a mapping (start, file_offset) pass off = addr - start +
 * file_offset. Works the same for PIE, shared objects and fixed executables.
 * 0 or -ENOENT (no segment covers @off). */
int elfsym__offset_to_vaddr(const struct elfsym *e, __u64 off, __u64 *vaddr);

/* Name of the function containing ELF virtual address @vaddr, or NULL.
 * *@sym_addr (if not NULL) gets the symbol's start. Borrowed; valid until
 * elfsym__free(). Sized symbols cover [value, value + size); a size-0 symbol
 * extends to the next symbol or the end of its section. */
const char *elfsym__lookup(const struct elfsym *e, __u64 vaddr, __u64 *sym_addr);

/* Like elfsym__lookup(), but C++ and Rust names come back demangled (see
 * demangle.h), computed on first lookup and cached. *@system_name gets the
 * mangled name when the returned one differs from it, else NULL. Both are
 * borrowed, valid until elfsym__free(). */
const char *elfsym__lookup_demangled(struct elfsym *e, __u64 vaddr, const char **system_name);

/* True when the file (or a debug file added to it) has a .symtab with
 * function symbols: no need to look further. */
bool elfsym__has_symtab(const struct elfsym *e);

/* Go's build-id (the "Go" note), or NULL. Borrowed. */
const char *elfsym__go_build_id(const struct elfsym *e);

/* The .gnu_debuglink file name (a base name, no '/'), or NULL; *@crc (if
 * not NULL) gets its CRC32. Borrowed. */
const char *elfsym__debuglink(const struct elfsym *e, __u32 *crc);

/* Add the .symtab function symbols of the debug file open on @fd (already
 * validated as belonging to this file by the caller). 0, -ENOENT (no
 * function symbols), -ENOEXEC, -ENOMEM. */
int elfsym__add_debug_fd(struct elfsym *e, int fd);

/* Add the symbols the file open on @fd (the same file @e was parsed from)
 * embeds: the .symtab of its MiniDebugInfo (.gnu_debugdata, an xz-compressed
 * ELF image), else the function table of Go's pclntab (.gopclntab,
 * .data.rel.ro.gopclntab, or inside a Go PIE's .data.rel.ro). 0, -ENOENT (none
 * of them), -ENOEXEC / -EBADMSG (malformed: nothing added), -ENOMEM. */
int elfsym__add_embedded_fd(struct elfsym *e, int fd);

/* Number of function symbols kept. */
size_t elfsym__symbol_count(const struct elfsym *e);

/* True if a cap dropped symbols. */
bool elfsym__truncated(const struct elfsym *e);

#endif
