/* procmaps.h - parse the text of /proc/PID/maps into mapping entries.
 *
 * Pure parser over a buffer (so it is testable on fixture text) plus a file
 * reader. Input is bounded: at most PROCMAPS_MAX_ENTRIES entries and
 * PROCMAPS_MAX_LINE bytes per line (longer lines are skipped); a line that
 * does not parse is skipped too, so one odd line never loses a process.
 */
#ifndef PROFCAP_PROCMAPS_H
#define PROFCAP_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define PROCMAPS_MAX_ENTRIES (1u << 16)
#define PROCMAPS_MAX_LINE 8192
/* Cap on the bytes read from a maps file (65536 lines of ~100 bytes). */
#define PROCMAPS_MAX_FILE (16u << 20)

enum procmaps_perm {
	PROCMAPS_READ = 1 << 0,
	PROCMAPS_WRITE = 1 << 1,
	PROCMAPS_EXEC = 1 << 2,
	PROCMAPS_SHARED = 1 << 3, /* 's' instead of 'p' */
};

/* What the kernel appends to the path of a file deleted since it was mapped
 * (also to /proc/PID/exe's target). */
#define PROCMAPS_DELETED_SUFFIX " (deleted)"

struct procmaps_entry {
	__u64 start;  /* first address */
	__u64 end;    /* one past the last address */
	__u64 offset; /* file offset of @start */
	__u64 inode;  /* 0 for anonymous mappings */
	__u32 dev_major;
	__u32 dev_minor;
	unsigned int perms; /* enum procmaps_perm bits */
	bool deleted;	    /* the path carried a " (deleted)" suffix */
	bool anonymous;	    /* no path at all */
	const char *path;   /* "" when anonymous, "[vdso]", "/usr/lib/x.so" (suffix stripped) */
};

struct procmaps;

/* Parse @len bytes of maps text at @text (need not be NUL-terminated).
 * On success *@out gets a new table owned by the caller (procmaps__free()).
 * Returns 0, -E2BIG when there are more than PROCMAPS_MAX_ENTRIES entries,
 * or -ENOMEM. */
int procmaps__parse(const char *text, size_t len, struct procmaps **out);

/* A table of the @n entries at @e (any order; each with a path, "" when
 * anonymous), copied with their paths: what a maps file would have listed
 * (proc/mapev.h builds them from perf events). *@out gets a new table
 * owned by the caller. 0, -E2BIG (more than PROCMAPS_MAX_ENTRIES), -EINVAL
 * (an entry without a path, or with end <= start) or -ENOMEM. */
int procmaps__from_entries(const struct procmaps_entry *e, size_t n, struct procmaps **out);

/* Read and parse the maps file @path (e.g. "/proc/42/maps").
 * Returns 0 or -errno (-ENOENT/-ESRCH when the process is gone). */
int procmaps__read(const char *path, struct procmaps **out);

/* Where processes' mappings are known besides their maps file (the
 * side-band records of proc/mapev.h): @fn gives process @pid's as a new
 * table (*@out, freed by the caller), 0; -ENOENT when it does not know
 * it. Both borrowed for the life of whoever holds them. */
struct procmaps_source {
	int (*fn)(void *ctx, int pid, struct procmaps **out);
	void *ctx;
};

/* *@dst becomes @src (copied), or the empty source for NULL: the setter
 * of a module that keeps one. */
void procmaps__source_set(struct procmaps_source *dst, const struct procmaps_source *src);

/* The mappings of process @pid: from @src when it knows them (NULL or an
 * empty source: none), else from @proc_root/PID/maps. Same returns as
 * procmaps__read(). */
int procmaps__read_pid(const struct procmaps_source *src, const char *proc_root, int pid,
		       struct procmaps **out);

/* Release the calling thread's read buffer (procmaps__read() keeps one per
 * thread between reads): for a thread about to exit. */
void procmaps__thread_done(void);

/* Free @m and its entries. Accepts NULL. */
void procmaps__free(struct procmaps *m);

size_t procmaps__count(const struct procmaps *m);

/* Entry @i (< procmaps__count()), in file order (ascending addresses).
 * Borrowed; valid until procmaps__free(). */
const struct procmaps_entry *procmaps__entry(const struct procmaps *m, size_t i);

/* The entry containing @addr, or NULL. Borrowed. */
const struct procmaps_entry *procmaps__find(const struct procmaps *m, __u64 addr);

#endif
