/* memory.h - the memory side of a session (--memory): the allocator
 * probes of collect/sampler_memory.h started with sampling, the targeted
 * processes probed as they are found, and each window's allocations and
 * in-use heap added to the profile as four value types per process
 * (alloc_space/bytes, alloc_objects/count, inuse_space/bytes,
 * inuse_objects/count: pprof's heap profile). Main thread only.
 */
#ifndef PROFCAP_CAPTURE_MEMORY_H
#define PROFCAP_CAPTURE_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

#include "collect/sampler_memory.h"

struct memory;
struct sampler;
struct ingest;
struct profile;

/* The sample types, in the order they are added to a profile. */
#define MEMORY_TYPE_ALLOC_SPACE "alloc_space"
#define MEMORY_TYPE_ALLOC_OBJECTS "alloc_objects"
#define MEMORY_TYPE_INUSE_SPACE "inuse_space"
#define MEMORY_TYPE_INUSE_OBJECTS "inuse_objects"

/* Start the probes for @o next to sampler @smp: the processes @pids (@n of
 * them), and @cmd (pid of `-- CMD` not exec()ed yet, running @argv0; 0 =
 * none). *@out gets the memory side. 0 or -errno (logged). */
int memory__start(const struct memory_opts *o, struct sampler *smp, const int *pids, size_t n,
		  pid_t cmd, const char *argv0, struct memory **out);

/* A process announced by the sampler: probe its allocators if it is a
 * target (its libraries are known now). NULL-safe. */
void memory__on_process(struct memory *m, int pid);

/* Allocations since the last drain into @in's profile, and with
 * @window_end the heap live now. NULL-safe. 0 or -errno. */
int memory__drain(struct memory *m, bool window_end, struct ingest *in);

/* The end: probes detached, the last window's allocations and live heap
 * into @in's profile, one summary line unless @quiet. NULL-safe. */
int memory__finish(struct memory *m, struct ingest *in, bool quiet);

/* Sampled allocations lost since the last call (a kernel table full,
 * the profile full), for the window's dropped-samples count in the file.
 * Those dropped by back-pressure are not lost: the kept ones weigh more.
 * 0 for NULL. */
__u64 memory__window_lost(struct memory *m);

/* Sampled allocations dropped by back-pressure since the last call (not
 * lost: those kept weigh more), for the window's throttled count in the
 * file. 0 for NULL. */
__u64 memory__window_throttled(struct memory *m);

/* Accepts NULL. */
void memory__free(struct memory *m);

/* ---- growth: two captures or windows of the same processes ---- */

/* One stack (folded: "program;root;...;leaf") and its values in the
 * earlier (@before) and later (@after) profile. */
struct memory_growth_row {
	char *stack;
	__u64 before, after;
};

/* The stacks of @before and @after (each one value type, as
 * report loads them: samples of type 0) with their sums, largest growth
 * (after - before) first, into *@rows (*@n of them; free with
 * memory__growth_free()). Stacks are named as folded output names them.
 * 0, -ENOMEM or -E2BIG (more than MEMORY_GROWTH_MAX stacks). */
#define MEMORY_GROWTH_MAX (1u << 20)
int memory__growth(const struct profile *before, const struct profile *after,
		   struct memory_growth_row **rows, size_t *n);
void memory__growth_free(struct memory_growth_row *rows, size_t n);

/* Print @rows (@n, at most @top of them; 0 = all) as a table to @f: the
 * growth, before, after, in @unit ("bytes": human units) and the stack. */
void memory__growth_print(FILE *f, const struct memory_growth_row *rows, size_t n, size_t top,
			  const char *unit);

/* ---- pure parts (unit-tested) ---- */

/* @argv0 as exec would find it (a name without '/' looked up in @path,
 * the PATH value) into @out: 0 or -ENOENT. */
int memory__find_program(const char *argv0, const char *path, char *out, size_t len);

/* @bytes in human units ("512 B", "1.5 KiB", "20.0 MiB", "3.21 GiB") into
 * @out. */
void memory__human_bytes(__u64 bytes, char *out, size_t len);

#endif
