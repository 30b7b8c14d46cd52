/* kallsyms.h - kernel text symbols from /proc/kallsyms (or as the kernel
 * names them itself, kallsyms__query_names()).
 *
 * Two ways to read the kallsyms text (from a buffer, or a file read 64 KiB
 * at a time with a size cap: the 5+ MB text is never held whole); both
 * consider text symbols (types t T w W) with their module ("[ext4]" ->
 * "ext4"). A symbol covers the addresses up to the next symbol (of the same
 * owner, core kernel or one module, or of any owner within
 * KALLSYMS_MAX_SPAN); the last symbol of an owner covers at most
 * KALLSYMS_MAX_SPAN bytes. Among symbols at one address the most telling
 * name wins (T, W, w, t; fewer leading underscores; shorter).
 *   - kallsyms__parse()/kallsyms__load(): the whole table, sorted, for
 *     any number of lookups (megabytes for a full kernel).
 *   - kallsyms__query_*(): one pass that names a given sorted set of
 *     addresses and keeps only their symbols, plus the core text range and
 *     the modules: memory follows the addresses asked, not the kernel.
 * Bounded: KALLSYMS_MAX_FILE bytes of input, KALLSYMS_MAX_SYMBOLS symbols,
 * KALLSYMS_MAX_MODULES modules (symbols of further modules are dropped),
 * KALLSYMS_MAX_QUERY addresses a query.
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
#define KALLSYMS_MAX_QUERY (1u << 20)

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

/* ---- one pass for a set of addresses ---- */

struct kallsyms_query;

/* What a query found for one address. @name is NULL when no symbol covers
 * @addr; then [@start, @end) is the range around @addr known to hold no
 * symbol's addresses (@end ~0 when no symbol lies above). Else [@start,
 * @end) is the symbol's extent. */
struct kallsyms_hit {
	__u64 addr;
	__u64 start, end;
	const char *name; /* borrowed until kallsyms__query_free() */
	int module;	  /* kallsyms__query_module() index, -1 = the core kernel */
};

/* Name the @n addresses @addrs (ascending, no duplicates; borrowed for the
 * call; @n may be 0) from @len bytes of kallsyms text at @text, as
 * kallsyms__lookup() on kallsyms__parse() of that text would. *@out gets a
 * new query owned by the caller (kallsyms__query_free()). 0, -EINVAL
 * (@addrs unsorted), -E2BIG (@n > KALLSYMS_MAX_QUERY), -EPERM, -ENOENT or
 * -ENOMEM as kallsyms__parse(). Memory: the modules, and per address one
 * slot and one name. */
int kallsyms__query_text(const char *text, size_t len, const __u64 *addrs, size_t n,
			 struct kallsyms_query **out);

/* The same reading @path 64 KiB at a time: plus -errno from reading. */
int kallsyms__query_file(const char *path, const __u64 *addrs, size_t n,
			 struct kallsyms_query **out);

/* The same from names the kernel printed itself for @addrs (ascending, no
 * duplicates): @names[i] is addrs[i] as "%pS" prints it ("name+0xoff/0xsize",
 * then " [module]" for module text; anything else, e.g. "0x..." or NULL,
 * leaves the address unnamed with the range [addr, addr + 1)), and
 * [@stext, @etext) the core text (0, 0 when unknown). A module's range is
 * that of its symbols named here; the core text range also covers core
 * symbols named outside [@stext, @etext). 0, -EINVAL, -E2BIG, -ENOMEM, or
 * -ENOENT when nothing was named and @stext is 0. */
int kallsyms__query_names(const __u64 *addrs, size_t n, const char *const *names, __u64 stext,
			  __u64 etext, struct kallsyms_query **out);

/* Free @q. Accepts NULL. */
void kallsyms__query_free(struct kallsyms_query *q);

/* The result for the @i-th address asked, NULL past them. Borrowed. */
const struct kallsyms_hit *kallsyms__query_hit(const struct kallsyms_query *q, size_t i);

/* As kallsyms__text_range(); 0, 0 when no core symbol was seen. */
void kallsyms__query_text_range(const struct kallsyms_query *q, __u64 *start, __u64 *end);

/* Modules seen in the pass; a module's end is its last symbol's end,
 * cut at the start of another owner rather than at its next symbol. */
size_t kallsyms__query_module_count(const struct kallsyms_query *q);
const struct kallsyms_module *kallsyms__query_module(const struct kallsyms_query *q, size_t idx);

/* Whether @path has usable addresses, reading only up to the first text
 * symbol: 0, -EPERM when it reads as zero (kernel.kptr_restrict), -ENOENT
 * without any text symbol, or -errno of reading. */
int kallsyms__check(const char *path);

#endif
