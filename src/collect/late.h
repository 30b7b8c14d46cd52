/* late.h - late walking: user stacks the BPF walker could not finish.
 *
 * The BPF program sends a sample whose walk stopped at a PC it could not
 * map (one VMA lookup per sample; mappings described before a library was
 * loaded; a file whose table is still being built) as a struct late_sample
 * (bpf/cpu_sampler.h): the frames so far, the registers there and a copy of
 * the stack above them. On arrival the process's executable mappings are
 * read; at the next drain the walk is finished in user space
 * (collect/stackwalk) with the same tables, found by file (device, inode)
 * in the BPF maps, and each sample becomes a record of one sample, complete
 * when the walk reached the outermost frame. A walk that needs a table
 * still being built waits for it (up to LATE_WAIT_NS). A sample that cannot
 * be finished is emitted as it came, flagged partial: samples are never
 * dropped here, except past the queue's cap (counted). One thread may push
 * while another flushes: the records go to the flush's callback outside
 * the queue's lock.
 */
#ifndef PROFCAP_LATE_H
#define PROFCAP_LATE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "collect/record.h"
#include "collect/stackwalk.h"

#define LATE_QUEUE_MAX 1024	    /* samples waiting */
#define LATE_QUEUE_BYTES (4u << 20) /* their copies together */
/* How long a sample waits for its process's tables before it is emitted
 * partial. */
#define LATE_WAIT_NS 2000000000ull
/* Samples of one process (same thread name: not across an exec) arriving
 * within this share one read of its maps. */
#define LATE_SNAP_SHARE_NS 2000000ull
/* Snapshots kept for that (a batch of notices comes before its samples). */
#define LATE_RECENT 64

struct procmaps;

/* The table maps (fds, borrowed): unwind_procs, unwind_maps, unwind_files,
 * unwind_file_idx. Optional @want: a walk needs the table of the file
 * (@dev: major << 32 | minor, @ino) mapped at @start in @tgid, not built
 * (lazy tables): asked while the sample waits for it (up to LATE_WAIT_NS),
 * called under the queue's lock, so it must not call back into it. */
struct fileidx;

struct late_tables {
	int procs, maps, files, file_idx;
	/* Optional (collect/fileidx.h): files' tables and the ids of the maps
	 * in unwind_files from this copy, instead of a bpf() lookup each. */
	struct fileidx *idx;
	void (*want)(void *ctx, __u32 tgid, __u64 start, __u64 dev, __u64 ino);
	void *ctx;
};

struct late_stats {
	__u64 received;			 /* samples sent by the BPF program */
	__u64 complete;			 /* walked to the outermost frame here */
	__u64 partial;			 /* emitted partial: */
	__u64 no_tables;		 /* ... its process had no tables in time */
	__u64 ends[STACKWALK_DEPTH + 1]; /* ... the walk ended so (stackwalk_end) */
	__u64 dropped;			 /* queue full, malformed */
	__u64 maps_read;		 /* process maps read for arriving samples */
	__u64 maps_offered;		 /* ... and offered (late__offer_maps()) */
};

struct late;

/* New empty queue reading processes' maps under @proc_root ("/proc",
 * copied); NULL on allocation failure. */
struct late *late__new(const char *proc_root);

/* Read processes' maps from @src first (copied; NULL: none), then from
 * their maps files (proc/procmaps.h procmaps__read_pid()). */
struct procmaps_source;
void late__set_maps_source(struct late *l, const struct procmaps_source *src);

/* Free @l and the samples still queued. Accepts NULL. */
void late__free(struct late *l);

/* Queue a copy of the ring-buffer record @data (@len bytes) received at
 * @now_ns (a batch's records: when its reading began, so what was read
 * since serves them all), with the executable mappings its process has now
 * (read from
 * @proc_root/PID/maps: a library loaded after the table builder described
 * the process, a process gone by the flush), and walk it at once when the
 * tables @t (NULL: at the flush) have what it needs, keeping only its
 * frames. 0; -EINVAL for a malformed record, -ENOSPC at a cap (both
 * counted as dropped). */
int late__push(struct late *l, const struct late_tables *t, const void *data, size_t len,
	       __u64 now_ns);

/* The maps of process @tgid (main thread name @comm) just read elsewhere
 * at @at_ns (borrowed; copied): a sample of it pushed with a time no later
 * than LATE_SNAP_SHARE_NS after, and that thread name, uses them instead
 * of reading its maps again (the LATE_RECENT newest are kept). Accepts a
 * NULL @l or @pm (nothing done). */
void late__offer_maps(struct late *l, __u32 tgid, const char *comm, const struct procmaps *pm,
		      __u64 at_ns);

/* Samples waiting. */
size_t late__pending(struct late *l);

/* Walk and emit, as CPU records of count 1 through @fn, every queued sample
 * whose process is described in @t, and those that waited LATE_WAIT_NS (or
 * all, when @final) without it, partial. Returns 0 or @fn's first error
 * (the samples before it are gone from the queue, the rest stay). */
int late__flush(struct late *l, const struct late_tables *t, __u64 now_ns, bool final,
		sampler_record_fn fn, void *ctx);

void late__stats(struct late *l, struct late_stats *st);

#endif
