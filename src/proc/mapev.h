/* mapev.h - the executable mappings of processes, kept from the kernel's
 * perf side-band records (PERF_RECORD_COMM with exec, FORK, EXIT, MMAP2)
 * instead of read from /proc/PID/maps.
 *
 * A compile loop starts processes by the thousand; reading each one's maps
 * file when it is first sampled costs profcap an open and the kernel's
 * text per process. The kernel reports every
 * executable mapping as it is made, as it does for perf record: a process
 * exec()ed while profcap runs is known from its exec on, a process forked
 * from a known one inherits its parent's, and one that exited before
 * profcap got to it is still known. Processes that were running before
 * (no exec seen) are not known here: read their maps file.
 *
 * No munmap() is reported: a mapping made over part of an older one
 * replaces that part, and one never mapped over stays (no code runs
 * there, so no sample looks it up). Lost records make every process
 * unknown until its next exec. Pure and single-threaded: the caller feeds
 * it (collect/sideband.h) and asks it from one thread.
 *
 * Bounded: MAPEV_MAX_PROCS processes (exited ones are dropped first,
 * oldest exit first; past that, new processes are not known), at most
 * MAPEV_MAX_MAPS mappings each (past that, the process is not known),
 * MAPEV_MAX_PATHS bytes of distinct paths (they are kept once each).
 */
#ifndef PROFCAP_PROC_MAPEV_H
#define PROFCAP_PROC_MAPEV_H

#include <stddef.h>
#include <linux/types.h>

struct procmaps;

#define MAPEV_MAX_PROCS 8192u
#define MAPEV_MAX_MAPS 1024u
#define MAPEV_MAX_PATHS (4u << 20)
/* An exited process is kept this long for a late question about it. */
#define MAPEV_KEEP_EXITED_NS 10000000000ull

/* One mapping as PERF_RECORD_MMAP2 reports it. */
struct mapev_map {
	__u64 start, len, pgoff; /* pgoff: file offset in bytes */
	__u64 ino;
	__u32 maj, min;
	__u32 prot, flags; /* PROT_*, MAP_* */
	const char *path;  /* "//anon" for anonymous memory; borrowed */
};

struct mapev_stats {
	__u64 execs, forks, exits, mmaps;
	__u64 ignored;	  /* mmaps of processes not known */
	__u64 dropped;	  /* processes forgotten at a cap (exited ones, or too many mappings) */
	__u64 full;	  /* processes not known: the table was full */
	__u64 lost;	  /* times every process was forgotten (lost records) */
	__u64 answered;	  /* mapev__maps() calls that gave a table */
	__u64 unknown;	  /* mapev__maps() calls for a process not known */
	__u64 procs;	  /* processes in the table now */
	__u64 path_bytes; /* bytes of paths kept */
};

struct mapev;

/* An empty table, or NULL (out of memory). Free with mapev__free(). */
struct mapev *mapev__new(void);

/* Free @m. Accepts NULL. */
void mapev__free(struct mapev *m);

/* Process @pid exec()ed, its name now @comm (up to 15 bytes,
 * NUL-terminated or not): it is known from now on, with no mappings until
 * its MMAP2 records come. */
void mapev__exec(struct mapev *m, __u32 pid, const char *comm);

/* Process @pid (its main thread) is named @comm now (prctl()). */
void mapev__rename(struct mapev *m, __u32 pid, const char *comm);

/* Process @pid was forked by process @ppid: known with a copy
 * of its parent's mappings when the parent is known, else not known. A
 * thread (@pid == @ppid) changes nothing. */
void mapev__fork(struct mapev *m, __u32 pid, __u32 ppid);

/* Process @pid exited at @now_ns: still answered for, until
 * MAPEV_KEEP_EXITED_NS later (mapev__expire()) or a new process with
 * its PID. */
void mapev__exit(struct mapev *m, __u32 pid, __u64 now_ns);

/* Process @pid mapped @mm (executable): added, over any part of older
 * mappings it covers. Ignored for a process not known. */
void mapev__mmap(struct mapev *m, __u32 pid, const struct mapev_map *mm);

/* Records were lost: no process is known any more. */
void mapev__lost(struct mapev *m);

/* Forget processes that exited more than MAPEV_KEEP_EXITED_NS before
 * @now_ns. */
void mapev__expire(struct mapev *m, __u64 now_ns);

/* What the records say of a process besides its mappings. */
struct mapev_desc {
	char comm[16]; /* its name; "" if not reported */
	/* its program (the first file it mapped after its exec, as
	 * /proc/PID/exe reads, " (deleted)" included); "" if not seen */
	char exe[4096];
};

/* The mappings of process @pid as a maps file would list its executable
 * ones: *@out gets a new table owned by the caller (procmaps__free()), and
 * @desc (may be NULL) its name and program. 0; -ENOENT when @pid is not
 * known; -ENOMEM. */
int mapev__maps(struct mapev *m, __u32 pid, struct procmaps **out, struct mapev_desc *desc);

void mapev__stats(const struct mapev *m, struct mapev_stats *st);

#endif
