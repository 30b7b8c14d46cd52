/* sideband.h - the kernel's perf side-band records (exec, fork, exit and
 * executable mappings of every process), read into proc/mapev.h.
 *
 * One software "dummy" perf event per online CPU, counting nothing, with
 * mmap2, comm (exec) and task records on, and a ring of SIDEBAND_PAGES
 * pages each: the records perf record writes to perf.data, which the
 * kernel produces in the context of the process that maps or execs (its
 * CPU, not profcap's). Reading them costs a copy of a small record per
 * mapping, far less than reading a new process's maps file.
 *
 * Opened before sampling starts, so that every process exec()ed while
 * profcap runs is known from its first sample on. A ring that fills (its
 * reader fell behind) loses records: the table then forgets every process
 * (mapev__lost()) and the caller reads maps files again. One thread reads
 * (sideband__drain()); the caller polls the fds (sideband__fd()), which
 * become readable once a ring is half full.
 */
#ifndef PROFCAP_COLLECT_SIDEBAND_H
#define PROFCAP_COLLECT_SIDEBAND_H

#include <stdbool.h>
#include <linux/types.h>

struct mapev;

/* Data pages per CPU (a power of two): 64 KiB, ~500 mappings. */
#define SIDEBAND_PAGES 16u

struct sideband_stats {
	__u64 records; /* read */
	__u64 lost;    /* records the kernel could not write (rings full) */
};

struct sideband;

/* Open the events on the CPUs where @online[i] (@n entries) and map their
 * rings. *@out gets the reader (sideband__free()). 0 or -errno (no perf
 * events for this user: perf_event_paranoid; out of memory). */
int sideband__open(const bool *online, __u32 n, struct sideband **out);

/* Close the events and unmap the rings. Accepts NULL. */
void sideband__free(struct sideband *sb);

/* The number of rings, and the perf event fd of ring @i (< that): for
 * poll()/epoll (readable when the ring is half full). */
__u32 sideband__count(const struct sideband *sb);
int sideband__fd(const struct sideband *sb, __u32 i);

/* Read every record written so far into @m: the rings are empty after.
 * @now_ns (CLOCK_MONOTONIC) stamps exits and expires old ones. Returns the
 * number of records read. */
__u64 sideband__drain(struct sideband *sb, struct mapev *m, __u64 now_ns);

/* Its counts so far; from any thread. */
void sideband__stats(const struct sideband *sb, struct sideband_stats *st);

#endif
