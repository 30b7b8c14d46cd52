/* symbolizer_int.h - what the symbolizer's files share (see symbolizer.h):
 * its model (files, mappings, processes), the symbolizer itself, and the
 * functions one of its files gives the others. Private to symbolize/.
 */
#ifndef PROFCAP_SYMBOLIZER_INT_H
#define PROFCAP_SYMBOLIZER_INT_H

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/array.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fdio.h"
#include "util/search.h"
#include "proc/status.h"
#include "symbolize/dwarf.h"
#include "symbolize/debugfile.h"
#include "symbolize/debuginfod.h"
#include "symbolize/elfsym.h"
#include "symbolize/kallsyms.h"
#include "util/log.h"
#include "symbolize/perfmap.h"
#include "proc/pfile.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/container.h"
#include "proc/procctx.h"
#include "symbolize/symbolizer.h"
#include "util/htab.h"

/* ---- model ------------------------------------------------------------------------ */

/* One parsed ELF file, shared by every mapping of it. @elf NULL: the file
 * opened but did not parse (remembered so it is not retried). */
struct sym_file {
	struct sym_file *next; /* all files, for freeing */
	struct elfsym *elf;
	struct dwarf_lines *dw; /* lines and inlined frames; NULL: no DWARF */
	size_t refs;		/* sym_maps using it; 0 = evictable (never for the vdso) */
	__u64 idle_since_ns;	/* when refs was first seen 0 by an eviction pass */
	__u32 lines_batch;	/* the last lines batch that looked up in @dw */
	char htlhash[DEBUGFILE_HTLHASH_HEX]; /* "" when unknown (the vdso) */
};

struct sym_map {
	struct sym_map *next_all; /* every map this process ever had */
	struct profile_mapping_desc desc;
	struct sym_file *file; /* NULL: no symbols */
	__u64 inode;
	__u32 dev_major, dev_minor;
	char *path; /* owned; desc.path points here */
};

/* One decoded process context; replaced ones stay on the list (descs
 * handed out may point at their attributes) until the process is dropped. */
struct sym_ctx {
	struct sym_ctx *prev;
	struct procctx c;
	struct profile_kv kv[PROCCTX_MAX_ATTRS]; /* views of c */
};

struct sym_proc {
	int pid;
	bool gone;
	struct profile_process_desc desc;
	char *exe_name, *exe_path, *cmdline;
	char container_id[CONTAINER_ID_LEN + 1]; /* "" when not in a container */
	struct sym_map **cur;			 /* current executable mappings, by start */
	__u64 *cur_starts;			 /* their starts, for search__upto() */
	size_t ncur;
	struct sym_map *all;
	size_t nall;
	__u64 last_refresh_ns;
	/* JIT code named by the process's perf map (NULL until one is found). */
	struct perfmap *perfmap;
	int nspid;	     /* pid in its own namespace, 0 = unknown (no perf map) */
	unsigned int euid;   /* owner a perf map may have, besides root */
	const char *runtime; /* profile.frame.type of its perf map entries, NULL = native */
	__u64 perfmap_ns;    /* last perf map read */
	bool perfmap_warned;
	/* No JIT code when added: its ids and perf map are read at its
	 * first JIT address (sym__begin_perfmap()). */
	bool perfmap_later;
	/* OpenTelemetry process context: its mapping (0 = none seen), the
	 * current context (desc.attrs points into it), how many were read, and
	 * whether one failed and at which timestamp (not retried until it
	 * changes). */
	__u64 ctx_start, ctx_end;
	struct sym_ctx *ctx;
	size_t nctx;
	__u64 ctx_bad_ns;
	bool ctx_failed;
	/* Described from executable mappings alone (the kernel's records),
	 * which never show the context's mapping: its maps file is looked at
	 * once, when it is SYMBOLIZER_CTX_LOOK_NS old (symbolizer__check_
	 * contexts()), so a short-lived process costs no read. 0 = no look due. */
	__u64 ctx_look_ns;
};

/* The tables' elements: the key and the object it finds. */
struct inode_elem {
	__u64 dev, inode;
	struct sym_file *f;
};

struct build_id_elem {
	const char *hex; /* borrowed from f's elfsym */
	struct sym_file *f;
};

/* Entries of by_inode: a file may be reached through several inodes. */
#define MAX_INODES (4 * SYMBOLIZER_MAX_FILES)

struct symbolizer {
	char *proc_root;
	struct procmaps_source maps_src; /* fn NULL: maps files only */
	struct htab procs;		 /* struct sym_proc *, by pid */
	struct htab by_inode;		 /* struct inode_elem */
	struct htab by_build_id;	 /* struct build_id_elem */
	struct sym_file *files;
	size_t nfiles;
	struct sym_file *vdso;
	bool vdso_tried;
	/* Kernel symbols (see the kernel section below). */
	bool kernel;	  /* symbolizer__load_kernel() succeeded */
	bool kdesc_ready; /* kdesc's range is known (after the first pass) */
	struct profile_mapping_desc kdesc;
	char *kbuild_id;
	struct kmod **kmods; /* modules seen in a resolved address, never freed */
	size_t nkmods, kmods_cap;
	struct kentry *kcache; /* sorted by lo, not overlapping */
	size_t nkcache, kcache_cap;
	__u64 *kwant; /* addresses waiting for the next pass */
	size_t nkwant;
	symbolizer_kname_fn kname; /* the kernel namer, NULL = /proc/kallsyms only */
	void *kname_ctx;
	__u32 kgen; /* passes made; an entry hit since the last one has gen == kgen */
	/* DWARF lookups waiting for symbolizer__resolve_lines_batch() */
	struct sym_lwant *lwant;
	size_t nlwant, lwant_cap;
	__u32 lines_batches;  /* batches run; sym_file.lines_batch is one of them */
	__u64 lines_batch_ns; /* when the last one ran (now_ns()) */
	struct symbolizer_stats st;
	__u64 file_grace_ns; /* see sym__evict_files() */
	/* The early snapshot of the process being added (symbolizer__add_process_snap()),
	 * used where /proc no longer answers; NULL otherwise. */
	const struct procsnap *snap;
	bool snap_gone; /* ... and /proc no longer had its maps (sym__load_maps()) */
	/* Processes whose context mapping is to be looked for (ctx_look_ns),
	 * oldest first; at SYMBOLIZER_CTX_LOOKS, the newest are not. */
	int *ctx_looks;
	size_t nctx_looks;
	const struct clock *clock;	      /* refresh rate limits and the grace */
	bool no_lines;			      /* symbolizer__set_lines(false) */
	char *debug_dirs[DEBUGFILE_MAX_DIRS]; /* extra debug directories (owned) */
	size_t ndebug_dirs;
	struct debuginfod *dinfod; /* NULL: no downloads */
	char *scratch;		   /* SYMBOLIZER_SCRATCH bytes for reads of /proc, see scratch() */
};

/* A DWARF lookup a batched resolve left for symbolizer__resolve_lines_batch(). */
struct sym_lwant {
	struct sym_file *f;
	__u64 vaddr;
	const char *outer; /* the symbol-table name, owned by f->elf */
};

/* One buffer for the per-process reads of /proc (status, command line),
 * kept: one allocated and freed per process cost an munmap each. */
#define SYMBOLIZER_SCRATCH PROC_STATUS_MAX
_Static_assert(SYMBOLIZER_SCRATCH > SYMBOLIZER_MAX_CMDLINE, "a command line fits the scratch");

/* @s's scratch buffer (SYMBOLIZER_SCRATCH bytes), NULL without memory. */
static inline char *scratch(struct symbolizer *s)
{
	if (!s->scratch)
		s->scratch = malloc(SYMBOLIZER_SCRATCH);
	return s->scratch;
}

static inline __u64 now_ns(const struct symbolizer *s)
{
	return s->clock->now_ns(s->clock->ctx);
}

/* The snapshot of @pid handed to symbolizer__add_process_snap(), when it
 * was read within SYMBOLIZER_SNAP_FRESH_NS, or is lasting (taken from the
 * kernel's records): reading /proc again would say the same. NULL
 * otherwise. */
static inline const struct procsnap *fresh_snap(const struct symbolizer *s, int pid)
{
	const struct procsnap *snap = s->snap;

	if (!snap || snap->pid != pid)
		return NULL;
	if (!snap->lasting && clock__mono_ns() - snap->at_ns > SYMBOLIZER_SNAP_FRESH_NS)
		return NULL;
	return snap;
}

/* ---- between the symbolizer's files ------------------------------------------------ */

/* @out as a frame of @type at @addr with nothing resolved yet. */
static inline void sym__frame_unresolved(struct profile_frame *out, __u64 addr,
					 enum profile_frame_type type)
{
	*out = (struct profile_frame){.address = addr, .type = type};
}

/* symbolizer_kernel.c */
void sym__kernel_release(struct symbolizer *s);

/* symbolizer_files.c */
struct sym_file *sym__vdso_file(struct symbolizer *s);
__u32 sym__file_flags(const struct sym_file *f);
struct sym_file *sym__get_file(struct symbolizer *s, int pid, const struct procmaps_entry *e);
void sym__evict_files(struct symbolizer *s);

/* symbolizer_jit.c */
const char *sym__runtime_of(const char *name);
const char *sym__jit_type(const struct sym_proc *p, const char *name);
bool sym__jit_mapping(const struct sym_map *m);
void sym__update_perfmap(struct symbolizer *s, struct sym_proc *p);
void sym__begin_perfmap(struct symbolizer *s, struct sym_proc *p);
const char *sym__jit_name(struct symbolizer *s, struct sym_proc *p, __u64 a);

/* symbolizer_procs.c */
struct sym_proc *sym__find_proc(const struct symbolizer *s, int pid);
void sym__free_proc(struct sym_proc *p);
/* Read @p's mappings again. 0 or -errno. */
int sym__load_maps(struct symbolizer *s, struct sym_proc *p);

#endif
