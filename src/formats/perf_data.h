/* perf_data.h - read the perf.data files `perf record` writes into the
 * profile model, without the perf binary.
 *
 * Read: the file header (file and pipe mode), the attributes (one per
 * event, with their sample ids), the feature sections (build-ids, host
 * name, OS release, architecture, CPU count, perf's command line, event
 * names, first and last sample time, the clock data of `perf record -k`) and the data section's records:
 * SAMPLE (IP, TID, TIME, CPU, PERIOD, CALLCHAIN with its kernel/user
 * context markers, REGS_USER and STACK_USER of `--call-graph dwarf`),
 * MMAP/MMAP2 (executable mappings per process, MMAP2 build-ids), COMM
 * (exec starts a new generation of the process), FORK (a child sees its
 * parent's mappings until it execs), LOST/LOST_SAMPLES and, in pipe mode,
 * HEADER_ATTR and HEADER_BUILD_ID. Mappings and names are matched to a
 * sample by time (the newest at or before it), so the order of records
 * across CPUs (FINISHED_ROUND) does not matter.
 *
 * Each sample counts 1 in the value type of its event: the first event is
 * value type 0 (cpu-clock/task-clock: samples/count over cpu/nanoseconds;
 * other events: samples/count over EVENT/count), every further event a type
 * of its own named after the event (EVENT/count). Samples are aggregated:
 * their time and CPU give the duration only.
 *
 * Frames keep their absolute address and mapping (path, file offset and
 * the build-id from the header or MMAP2), so the normal symbolizer names
 * them later (symbolize/resymbolize.h). User stacks of dwarf mode are
 * walked with collect/stackwalk.h over the copied stack, with unwind rows a
 * caller-given callback provides per file (perf_data_unwind.h reads them
 * from the files); without it, only the kernel part and the sampled IP.
 *
 * Bounded: the input is read in place; tables are capped (PROFILE_MAX_ENTRIES
 * strings, PERF_DATA_MAX_MAPS mappings, PERF_DATA_MAX_ATTRS events). A
 * malformed header, section or record framing is an error naming the offset;
 * a malformed sample inside a sound record is skipped and counted. Pure code.
 */
#ifndef PROFCAP_PERF_DATA_H
#define PROFCAP_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define PERF_DATA_MAX_ATTRS 64
#define PERF_DATA_MAX_MAPS (1u << 20)
#define PERF_DATA_MAX_FRAMES 1024 /* kernel + user frames kept per sample */

struct profile;

struct perf_data_stats {
	size_t samples;	       /* sample records in the profile */
	size_t unreadable;     /* sample records skipped as malformed */
	__u64 lost;	       /* samples the kernel lost (LOST, LOST_SAMPLES) */
	size_t truncated;      /* callchains cut at PERF_DATA_MAX_FRAMES */
	size_t unwound;	       /* dwarf samples walked (user stack copy) */
	size_t unwind_partial; /* ... of those, the walk stopped early */
	size_t unknown_records; /* records of types not read (skipped) */
	__u64 period;		/* first event's period (ns for a CPU clock), 0 = none */
	__u64 duration_ns;	/* last - first sample time (or samples * period), > 0 */
	bool cpu_clock;		/* the first event is cpu-clock or task-clock */
	bool pipe;		/* pipe-mode file */
	bool clock_data;	/* HEADER_CLOCK_DATA gave sample times their epoch */
	__s32 clockid;		/* ... the samples' clock (CLOCK_MONOTONIC = 1) */
	unsigned int events;	/* attributes (events) */
	unsigned int nr_cpus;	/* HEADER_NRCPUS online, 0 = unknown */
	char hostname[64], osrelease[64], arch[32];
	char cmdline[256]; /* perf's own command line, cut */
	char event[64];	   /* name of the first event */
};

/* Unwind rows of a mapped file for dwarf-mode samples: the file at @path
 * whose GNU build-id is @build_id (lower-case hex, NULL: not known) and that
 * is mapped from file offset @pgoff. Fill *@rows (packed rows of
 * bpf/unwind.h sorted by ELF address, borrowed until the parse returns;
 * *@nrows 0: frame pointers) and *@vaddr, the ELF address of @pgoff. 0, or
 * -ENOENT when the file cannot be used (the walk uses frame pointers). */
struct perf_data_unwind_ops {
	int (*rows)(void *ctx, const char *path, const char *build_id, __u64 pgoff,
		    const __u64 **rows, __u32 *nrows, __u64 *vaddr);
	/* Optional: the build-id (hex into @hex, @len bytes) of a file the
	 * recording gave none (perf keeps only those of files with sampled
	 * IPs: dwarf mode's walked frames and pipe mode have none), so the
	 * symbolizer can use the file. 0 or -ENOENT. Asked once per path. */
	int (*build_id)(void *ctx, const char *path, char *hex, size_t len);
	void *ctx;
};

/* Whether @len bytes at @data start like a perf.data file (its magic). */
bool perf_data__looks_like(const void *data, size_t len);

/* Parse @len bytes of perf.data at @data into a new profile (*@out, freed
 * by the caller); the meta is left to the caller (@st's period, duration,
 * host). @uw (may be NULL) unwinds dwarf-mode user stacks. 0; -EBADMSG
 * with @err (@errlen bytes) saying what is wrong and at which offset;
 * -E2BIG (a table is full) or -ENOMEM. */
int perf_data__parse(const void *data, size_t len, const struct perf_data_unwind_ops *uw,
		     struct profile **out, struct perf_data_stats *st, char *err, size_t errlen);

#endif
