/* execsplit.h - processes that exec() during a capture: the samples of the
 * program before the exec stay with it (its own resource, mappings and
 * frames), those after it go to the new one.
 *
 * The kernel counts samples per process ID; a drain names them with the
 * process as the symbolizer describes it then. A process's notice after an
 * exec (its snapshot shows another program) is therefore held: its records
 * so far are drained and split by program (execsplit__of_new_program()),
 * the old program's are added, and named if they waited for names, while
 * the process is still described as the old program; then it is described
 * as the new one and the new program's records go in. Main thread only.
 */
#ifndef PROFCAP_EXECSPLIT_H
#define PROFCAP_EXECSPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "capture/ingest.h"
#include "collect/sampler.h"

struct procsnap;

/* Notices held at once (one more settles those first), and the new
 * programs' records held meanwhile, and their frames (32 MiB; beyond these,
 * records are added with the process as it is described). */
#define EXECSPLIT_NOTES 64
#define EXECSPLIT_HELD 16384u
#define EXECSPLIT_HELD_FRAMES (4u << 20)
/* User frames of a record that decide its program, at most. */
#define EXECSPLIT_PROBE_FRAMES 4

/* A process seen to run another program: its snapshot after the exec. */
struct execsplit_note {
	__u32 tgid;
	struct procsnap *snap; /* a reference of ours */
};

/* A record of a new program held: its stacks at offsets in @stacks. */
struct execsplit_held {
	struct sampler_record r;
	size_t kstack, ustack;
};

struct execsplit {
	struct ingest *in;	  /* its sym and smp (NULL once the sampler is gone) */
	sampler_record_fn add;	  /* adds a record (into @in) */
	sampler_proc_fn describe; /* describes a process from its notice */
	void *ctx;		  /* of both */
	struct execsplit_note notes[EXECSPLIT_NOTES];
	size_t nnotes;
	bool applying; /* in execsplit__settle()'s calls of @describe */
	struct execsplit_held *held;
	size_t nheld, held_cap;
	__u64 *stacks;
	size_t nstacks, stacks_cap;
};

/* Start @x (zeroed or released) for records added with @add(@ctx, r)
 * into @in; held notices are described with @describe(@ctx, tgid, snap),
 * which must not hold them again (it sees @x->applying). */
void execsplit__init(struct execsplit *x, struct ingest *in, sampler_record_fn add,
		     sampler_proc_fn describe, void *ctx);

/* Hold the notice of process @tgid (@snap borrowed: a reference is taken)
 * when @snap shows another program than the one the symbolizer describes
 * it as. True when held: do not describe it now. */
bool execsplit__hold(struct execsplit *x, __u32 tgid, const struct procsnap *snap);

/* With notices held: drain the sampler (a whole drain) splitting the
 * records of their processes, add the old programs' and name what of
 * theirs waits for names, describe the processes, add the new programs'.
 * 0 or the first error. */
int execsplit__settle(struct execsplit *x);

/* Is record @r, of a process that exec()ed into @snap's program, a sample
 * of that new program? Its first user frames decide: one in an executable
 * mapping of the new program (the old program's were another address
 * space: they meet only where two programs load at fixed addresses).
 * Without user frames, the thread name: exec() names the thread after the
 * new program. */
bool execsplit__of_new_program(const struct sampler_record *r, const struct procsnap *snap);

/* Drop what @x holds (references, records). */
void execsplit__release(struct execsplit *x);

#endif
