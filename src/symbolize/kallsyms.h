/* kallsyms.h - kernel text symbols from /proc/kallsyms.
 *
 * Parses the kallsyms text (from a buffer, or a file read 64 KiB at a time
 * with a size cap: the 5+ MB text is never held whole),
 * keeps text symbols (types t T w W) with their module ("[ext4]" -> "ext4"),
 * sorts them and answers address -> function name lookups. A symbol covers
 * the addresses up to the next symbol of the same owner (core kernel or one
 * module); the last symbol of an owner covers at most KALLSYMS_MAX_SPAN bytes.
 * Bounded: KALLSYMS_MAX_FILE bytes of input, KALLSYMS_MAX_SYMBOLS symbols,
 * KALLSYMS_MAX_MODULES modules (symbols of further modules are dropped).
 */
#ifndef PROFCAP_KALLSYMS_H
#define PROFCAP_KALLSYMS_H

#include <stddef.h>
#include <linux/types.h>

#define KALLSYMS_MAX_FILE (128u << 20)
#define KALLSYMS_MAX_SYMBOLS (4u << 20)
#define KALLSYMS_MAX_MODULES 4096
#define KALLSYMS_MAX_NAME 512
#define KALLSYMS_MAX_SPAN (256u << 10)

struct kallsyms;

struct kallsyms_module {
	const char *name; /* "ext4", "bpf", "__builtin__ftrace" */
	__u64 start;	  /* lowest symbol address */
	__u64 end;	  /* end of the highest symbol */
};

/* Parse @len bytes of kallsyms text at @text. *@out gets a new table owned by
 * the caller (kallsyms__free()). Returns 0, -EPERM when every address reads as
 * zero (kernel.kptr_restrict hides them from this user), -ENOENT when there is
 * no text symbol at all, or -ENOMEM. */
int kallsyms__parse(const char *text, size_t len, struct kallsyms **out);

/* Read @path (normally "/proc/kallsyms") and parse it: same returns as
 * kallsyms__parse() plus -errno from reading. */
int kallsyms__load(const char *path, struct kallsyms **out);

/* Free @k. Accepts NULL. */
void kallsyms__free(struct kallsyms *k);

/* Name of the kernel function containing @addr, or NULL. *@sym_addr (may be
 * NULL) gets its start; *@module (may be NULL) gets the module index
 * (kallsyms__module()) or -1 for the core kernel. Borrowed until
 * kallsyms__free(). */
const char *kallsyms__lookup(const struct kallsyms *k, __u64 addr, __u64 *sym_addr, int *module);

/* Core kernel text range: [_stext, _etext) when both are present, else the
 * range of the core (non-module) text symbols. */
void kallsyms__text_range(const struct kallsyms *k, __u64 *start, __u64 *end);

size_t kallsyms__count(const struct kallsyms *k);
size_t kallsyms__module_count(const struct kallsyms *k);

/* Module @idx (< kallsyms__module_count()); borrowed until kallsyms__free(). */
const struct kallsyms_module *kallsyms__module(const struct kallsyms *k, size_t idx);

#endif
