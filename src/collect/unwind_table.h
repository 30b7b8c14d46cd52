/* unwind_table.h - build and share the unwind tables the BPF unwinder reads.
 *
 * For each process it is told about, it reads /proc/PID/maps, compiles the
 * call-frame information of every executable file mapping with cfi (once per
 * file: files are cached by device and inode, so N processes of one binary
 * cost one parse), appends the packed rows to the shared row store and
 * writes the process's sorted mapping list (start, end, load bias, row
 * range) through the sink's callbacks. Mappings without usable CFI
 * (anonymous/JIT code, files without .eh_frame, parse errors, a full store)
 * get nrows = 0: the BPF side uses frame pointers there.
 *
 * The sink is the BPF maps in production (sampler.c) and plain memory in the
 * unit tests, so everything here is pure code. Bounded: rows up to the
 * sink's max_rows (never reused: a capture only adds), mapping entries up
 * to max_maps, UNWIND_TABLE_MAX_FILES files, UNWIND_TABLE_MAX_PROCS
 * processes. When the mapping entries or the process table run out, the
 * entries of processes that have exited are deleted first (long captures).
 * Not thread-safe.
 */
#ifndef PROFCAP_UNWIND_TABLE_H
#define PROFCAP_UNWIND_TABLE_H

#include <stdbool.h>
#include <linux/types.h>

#include "unwind.h"

#define UNWIND_TABLE_MAX_FILES (1u << 14)
#define UNWIND_TABLE_MAX_PROCS (1u << 15)
#define UNWIND_TABLE_MAX_PROC_MAPS 4096 /* executable mappings per process */
/* A process is re-read at most this often by unwind_table__refresh(). */
#define UNWIND_TABLE_REFRESH_NS 1000000000ull

struct unwind_table_sink {
	__u64 *rows; /* row store: max_rows packed rows (the mmap'd BPF array) */
	__u32 max_rows;
	__u32 max_maps; /* mapping entries the map store holds */
	/* Store mapping entry @k; store the mapping count of @tgid. 0 or -errno. */
	int (*set_map)(void *ctx, const struct unwind_map_key *k, const struct unwind_map *m);
	int (*set_proc)(void *ctx, __u32 tgid, __u32 nmaps);
	/* Delete an entry / a count of an exited process (optional: without
	 * them exited processes are never reclaimed). */
	int (*del_map)(void *ctx, const struct unwind_map_key *k);
	int (*del_proc)(void *ctx, __u32 tgid);
	void *ctx;
};

struct unwind_table_stats {
	__u64 processes;     /* processes with their mappings loaded */
	__u64 mappings;	     /* executable mappings written */
	__u64 files_parsed;  /* files whose CFI was compiled */
	__u64 files_no_cfi;  /* files without usable CFI (frame pointers there) */
	__u64 files_failed;  /* files that could not be opened or mapped */
	__u64 files_no_room; /* files left without a table: row store full */
	__u64 rows;	     /* rows in the store */
	__u64 max_rows;
	__u64 unsupported;     /* rows marked unsupported */
	__u64 parse_ns;	       /* time spent opening and compiling files */
	__u64 procs_skipped;   /* processes left without tables (a cap) */
	__u64 procs_reclaimed; /* exited processes whose entries were deleted */
};

struct unwind_table;

/* New table writing to @sink (copied; its memory stays the caller's), reading
 * processes under @proc_root ("/proc"; copied). NULL on allocation failure. */
struct unwind_table *unwind_table__new(const struct unwind_table_sink *sink, const char *proc_root);

/* Free @u (not the sink). Accepts NULL. */
void unwind_table__free(struct unwind_table *u);

/* Load (or reload) the executable mappings of @pid and the tables of their
 * files. Returns 0; -ESRCH when the process is gone; -E2BIG at a cap (the
 * process keeps no tables: frame pointers); -ENOMEM; or the sink's error.
 * Files that cannot be parsed only count in the stats. */
int unwind_table__add_process(struct unwind_table *u, int pid);

/* Reload @pid's mappings if it was loaded more than UNWIND_TABLE_REFRESH_NS
 * ago (for samples that hit code mapped after the load, e.g. dlopen). 1 when
 * it reloaded, 0 when too early, or an error of unwind_table__add_process(). */
int unwind_table__refresh(struct unwind_table *u, int pid);

void unwind_table__stats(const struct unwind_table *u, struct unwind_table_stats *st);

#endif
