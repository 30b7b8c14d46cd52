/* elfsym_int.h - what elfsym.c and elfsym_ids.c share: one file's
 * symbol table and identity. Private to symbolize/.
 */
#ifndef PROFCAP_ELFSYM_INT_H
#define PROFCAP_ELFSYM_INT_H

#include <errno.h>
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "util/array.h"
#include "util/hex.h"
#include "util/pages.h"
#include "util/search.h"
#include "util/buf.h"
#include "proc/pfile.h"
#include "symbolize/debuglink.h"
#include "symbolize/demangle.h"
#include "symbolize/elfsym.h"
#include "symbolize/gopclntab.h"
#include "symbolize/minidebug.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif
#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif
/* Go's build-id note: name "Go", type 4, the build-id string as desc. */
#define NT_GO_BUILD_ID 4

struct sym {
	__u64 start;
	__u64 end;     /* one past the last byte; computed after sorting */
	__u64 size;    /* st_size, 0 if unknown */
	__u64 sec_end; /* end of the symbol's section, 0 if unknown */
	__u32 name;    /* offset in names */
	__u32 rank;    /* lower is the preferred name among aliases */
	bool label;    /* an untyped, unsized code label (e.g. ld.so's _start) */
	__u32 seq;     /* order read: among equal ranks, the first read names it */
};

struct seg {
	__u64 offset;
	__u64 filesz;
	__u64 vaddr;
};

struct elfsym {
	struct sym *syms;
	size_t nsyms;
	size_t cap;
	struct buf names;
	struct seg segs[ELFSYM_MAX_SEGMENTS];
	size_t nsegs;
	bool has_build_id;
	bool truncated;
	bool has_symtab; /* a .symtab with function symbols (own or added) */
	bool embedded;	 /* symbols came from .gnu_debugdata or Go's pclntab */
	char **dnames;	 /* demangled name per symbol, lazily; not_mangled */
	char *debuglink; /* .gnu_debuglink file name, NULL if none */
	__u32 debuglink_crc;
	char build_id[ELFSYM_BUILD_ID_HEX];
	char go_build_id[ELFSYM_BUILD_ID_HEX];
	__u64 entry;	 /* e_entry of an executable (ET_EXEC, or with PT_INTERP), else 0 */
	__u64 entry_end; /* [entry, entry_end): named _start when no symbol covers it */
	int src_fd;	 /* while parsing: the file, read directly (read_symtab_fd()); else -1 */
	__u32 nread;	 /* symbols read, ever (their seq) */
};

/* ---- elfsym_ids.c: the file's identity ------------------------------------------ */

/* The GNU build-id of @elf (its notes: sections, else segments) as hex into
 * @hex (ELFSYM_BUILD_ID_HEX bytes). */
bool elfsym__find_build_id(Elf *elf, char *hex);
/* The Go build-id of @elf into @out, "" when none. */
void elfsym__find_go_build_id(Elf *elf, char *out);
/* Section @name of @elf with its header into *@sh, or NULL. */
Elf_Scn *elfsym__find_section(Elf *elf, const char *name, GElf_Shdr *sh);
/* e->debuglink and its CRC from .gnu_debuglink. 0 or -ENOMEM. */
int elfsym__read_debuglink(Elf *elf, struct elfsym *e);
/* e->segs from the loadable segments; *@interp says whether there is a
 * PT_INTERP. 0 or -errno. */
int elfsym__read_segments(Elf *elf, struct elfsym *e, bool *interp);

/* ---- elfsym_plt.c: names of PLT stubs ------------------------------------------ */

/* Called for each named PLT stub: its address, size, name ("memcmp@plt")
 * and the end of its section. 0 to go on, else an error that stops. */
typedef int (*elfsym_plt_fn)(void *arg, __u64 vaddr, __u64 size, const char *name, __u64 sec_end);
/* The name of the symbol that starts at @vaddr, or NULL (an ifunc's
 * resolver). */
typedef const char *(*elfsym_plt_resolve_fn)(void *arg, __u64 vaddr);
/* Call @add for every PLT stub of @elf that a dynamic relocation names
 * (x86-64 and AArch64), once all are named: @resolve names the stubs of
 * ifuncs. 0, -ENOMEM or @add's error. */
int elfsym__plt_stubs(Elf *elf, elfsym_plt_resolve_fn resolve, elfsym_plt_fn add, void *arg);

#endif
