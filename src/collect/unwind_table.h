/* unwind_table.h - build and share the unwind tables the BPF unwinder reads.
 *
 * For each process it is told about, it reads /proc/PID/maps, compiles the
 * call-frame information of every executable file mapping with cfi (once per
 * file: files are cached by device and inode, so N processes of one binary
 * cost one parse), hands the packed rows of each file to the sink as one
 * table in a slot (the sink sizes its storage to them: the row store grows
 * file by file) and writes the process's sorted mapping list (start, end,
 * load bias, slot, row count) through the sink's callbacks. Mappings without
 * usable CFI (anonymous/JIT code, files without .eh_frame, parse errors, a
 * full store) get nrows = 0: the BPF side uses frame pointers there. In
 * lazy mode (unwind_table__set_lazy()) a library's table is built only
 * once a walk needs it: until then its mappings get no entry at all.
 *
 * The sink is the BPF maps in production (sampler.c) and plain memory in the
 * unit tests, so everything here is pure code. Bounded: up to the sink's
 * max_rows rows in max_files file tables, max_maps mapping entries,
 * UNWIND_TABLE_MAX_FILES files, UNWIND_TABLE_MAX_PROCS processes. Each file
 * table counts the live processes that map it; one no process maps is kept
 * (the next process of that binary needs no parse) until the store needs
 * its room or it has been unused for a while (unwind_table__gc()). When the
 * mapping entries or the process table run out, and at every
 * unwind_table__gc(), the entries of processes that have exited (or whose
 * PID now belongs to another process) are deleted. Not thread-safe.
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

/* Unused file tables are dropped after this long (long agent runs). */
#define UNWIND_TABLE_FILE_TTL_NS (60ull * 1000000000ull)

struct unwind_table_sink {
	__u32 max_rows;	 /* rows of all file tables together */
	__u32 max_files; /* file table slots: 0 .. max_files - 1 */
	__u32 max_maps;	 /* mapping entries the map store holds */
	/* A writable buffer for the @n rows of the file table of @slot, NULL
	 * on failure; then rows_end() publishes it (@ok) or drops it. */
	__u64 *(*rows_begin)(void *ctx, __u32 slot, __u32 n);
	int (*rows_end)(void *ctx, __u32 slot, __u64 *rows, __u32 n, bool ok);
	/* Remove the file table of @slot (no process refers to it). */
	int (*rows_del)(void *ctx, __u32 slot);
	/* Optional: the table of @slot is that of file @dev (major << 32 |
	 * minor), @ino, whose PT_LOAD segments are @seg[@nseg] (file offset,
	 * vaddr, file size): lets the BPF side find it from a mapping it has
	 * not been told about. Dropped with the table (rows_del). */
	int (*set_file)(void *ctx, __u32 slot, __u64 dev, __u64 ino, const __u64 (*seg)[3],
			unsigned int nseg, __u32 nrows);
	/* Optional: when a process this table was not told about (one the
	 * BPF side walks from its VMAs alone) was last seen mapping the file of
	 * table @slot, CLOCK_MONOTONIC ns, 0 = never. An unused table is one
	 * no described process maps and none was seen mapping for the TTL. */
	__u64 (*seen_ns)(void *ctx, __u32 slot);
	/* Store the @n mapping entries @m of one process under keys @k (all of
	 * them in one call: the BPF sink writes them with one system call);
	 * store the mapping count of @tgid. 0 or -errno. */
	int (*set_maps)(void *ctx, const struct unwind_map_key *k, const struct unwind_map *m,
			__u32 n);
	int (*set_proc)(void *ctx, __u32 tgid, __u32 nmaps);
	/* Delete the @n entries @k / the count of an exited process (optional:
	 * without them exited processes are never reclaimed). */
	int (*del_maps)(void *ctx, const struct unwind_map_key *k, __u32 n);
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
	__u64 rows;	     /* rows in the store now */
	__u64 max_rows;
	__u64 tables;	      /* file tables in the store now */
	__u64 files_evicted;  /* file tables dropped: unused, store full or idle */
	__u64 unsupported;     /* rows marked unsupported */
	__u64 parse_ns;	       /* time spent opening and compiling files */
	__u64 parse_cpu_ns;    /* ... CPU of the thread that did it */
	__u64 procs_skipped;   /* processes left without tables (a cap) */
	__u64 procs_reclaimed; /* exited processes whose entries were deleted */
	__u64 start_reads;     /* reads of PID/stat for a process's start time */
	__u64 maps_deferred;   /* mappings left out: their file's table not built yet */
	__u64 files_on_demand; /* tables built when a walk needed them */
};

struct unwind_table;

/* New table writing to @sink (copied; its memory stays the caller's), reading
 * processes under @proc_root ("/proc"; copied). NULL on allocation failure. */
struct unwind_table *unwind_table__new(const struct unwind_table_sink *sink, const char *proc_root);

/* Read processes' maps from @src first (copied; NULL: none), then from
 * their maps files (proc/procmaps.h procmaps__read_pid()). */
struct procmaps_source;
void unwind_table__set_maps_source(struct unwind_table *u, const struct procmaps_source *src);

/* Free @u (not the sink). Accepts NULL. */
void unwind_table__free(struct unwind_table *u);

/* Load (or reload) the executable mappings of @pid and the tables of their
 * files. Returns 0; -ESRCH when the process is gone; -E2BIG at a cap (the
 * process keeps no tables: frame pointers); -ENOMEM; or the sink's error.
 * Files that cannot be parsed only count in the stats. */
int unwind_table__add_process(struct unwind_table *u, int pid);

struct procmaps;

/* unwind_table__add_process() from @maps, @pid's mappings as the caller
 * read them (a snapshot taken when it was announced, proc/procsnap.h),
 * instead of its maps file. @start: the process's start time when the
 * caller knows it (field 22 of PID/stat; the sampler's notice carries it),
 * 0 = read PID/stat. The first nonzero @start is checked against PID/stat
 * (a time namespace would differ): once it matched, the later ones are
 * taken as given; once it differed, none is. Returns as
 * unwind_table__add_process() (files that cannot be opened any more only
 * count in the stats). */
int unwind_table__add_process_maps(struct unwind_table *u, int pid, const struct procmaps *maps,
				   __u64 start);

/* With @on, build only the program's table when a process is added; the
 * table of each library (any other file mapping) waits until a walk needs
 * it (unwind_table__add_file()), and until then its mappings get no entry.
 * For a BPF walker that finds mappings from the kernel's VMAs (set_file())
 * and hands what it cannot walk to late walking: a library no sample runs
 * in (most of a compiler's, of an interpreter's) costs no parse and no
 * rows. Off by default. */
void unwind_table__set_lazy(struct unwind_table *u, bool on);

/* Build the table of the file mapped at @start in @pid (@dev: major << 32 |
 * minor, @ino: the file the walker saw there), as a walk needs it, and
 * describe @pid again with it. 0; -ESRCH (gone, or nothing of that file is
 * mapped there now), -ENOENT (unreadable), -E2BIG (a cap), -errno. */
int unwind_table__add_file(struct unwind_table *u, int pid, __u64 start, __u64 dev, __u64 ino);

/* Reload @pid's mappings if it was loaded more than UNWIND_TABLE_REFRESH_NS
 * ago (for samples that hit code mapped after the load, e.g. dlopen). 1 when
 * it reloaded, 0 when too early, or an error of unwind_table__add_process(). */
int unwind_table__refresh(struct unwind_table *u, int pid);

/* Maintenance for long runs: delete the entries of processes that have
 * exited or whose PID was reused (start time changed), and the file tables
 * no process has mapped for @file_ttl_ns (UNWIND_TABLE_FILE_TTL_NS).
 * Returns the number of processes reclaimed. */
size_t unwind_table__gc(struct unwind_table *u, __u64 file_ttl_ns);

void unwind_table__stats(const struct unwind_table *u, struct unwind_table_stats *st);

#endif
