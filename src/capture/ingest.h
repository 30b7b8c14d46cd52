/* ingest.h - drained records into a window's profile (main thread).
 *
 * Each sampler record gets its frames from the symbolizer; a record with
 * kernel addresses not named yet or user addresses whose DWARF lines are
 * not looked up yet is kept (deferred) until ingest__flush(), which names
 * them in one pass over kallsyms and one DWARF file at a time, then adds
 * them. The window's counters (drops, truncation, thread-context
 * attributes) are kept here for its summary.
 */
#ifndef PROFCAP_INGEST_H
#define PROFCAP_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "collect/record.h"
#include "model/profile.h"

struct symbolizer;
struct sampler;
struct jvmframes;
struct phpframes;
struct pyframes;
struct rubyframes;
struct v8frames;

/* Records deferred at once (their stacks at most this many deepest). */
#define INGEST_DEFER_MAX (1u << 20)

/* A deferred record: its stacks at offsets in ingest.dstacks. */
struct deferred {
	struct sampler_record r;
	size_t kstack, ustack, pystack;
	size_t times; /* its occurrences at this offset in ingest.dtimes */
};

/* The counters of the current window. */
struct ingest_counts {
	__u64 model_dropped;   /* samples the model could not hold */
	__u64 off_cpu_dropped; /* off-CPU waits the model could not hold */
	__u64 ustack_missing;  /* samples of user processes without a user stack */
	__u64 stack_lost;      /* samples kept without a stack the kernel did not store */
	__u64 truncated;       /* samples whose stack was cut short (any cause) */
	__u64 depth_cut;       /* ... of those, at the depth limit */
	__u64 partial;	       /* samples whose user stack the unwinder did not finish */
	__u64 attrs_kept;      /* samples with thread-context attributes */
	__u64 attrs_unknown;   /* attributes dropped (x samples): key index not in the key map */
	__u64 attrs_bad;       /* samples whose attrs-data was cut or malformed (decoding
				* stopped; the entries before kept) */
	/* CPython frames (CPU samples; waits count their waits) */
	__u64 py_samples; /* with a Python stack */
	__u64 py_partial; /* ... cut: a read failed mid-walk, the depth limit, or not stored */
	__u64 py_unknown; /* ... with frames not named (process gone or not known as
			   * Python, code object changed or unreadable) */
	/* per-sample times (capture --timestamps): occurrences (CPU samples,
	 * waits) added with their time and CPU, and those without (their
	 * event lost, or the model's cap on times reached) */
	__u64 timed, untimed;
};

/* Frames a record gives at most: kernel, user, and the Python frames
 * merged into the user ones. */
#define INGEST_MAX_FRAMES (SAMPLER_MAX_KSTACK + SAMPLER_MAX_USTACK + SAMPLER_MAX_PYFRAMES)

struct ingest {
	struct symbolizer *sym; /* borrowed */
	struct profile *prof;	/* the window's, borrowed */
	struct sampler *smp;	/* asked to refresh a partial record's tables; NULL: none */
	struct pyframes *py;	/* names Python frames; NULL: none (borrowed) */
	struct v8frames *v8;	/* names JavaScript frames; NULL: none (borrowed) */
	struct jvmframes *jvm;	/* names Java frames; NULL: none (borrowed) */
	struct phpframes *php;	/* names PHP frames; NULL: none (borrowed) */
	struct rubyframes *rb;	/* names Ruby frames; NULL: none (borrowed) */
	struct ingest_counts c;
	/* processes whose key map was re-read this window (an unknown key
	 * index re-reads it once per window, not per record) */
	__u32 refreshed[16];
	unsigned nrefreshed;
	bool warned_full, warned_kallsyms;
	__s64 last_kpass;   /* CLOCK_MONOTONIC of the last kernel pass */
	__u64 cpu_lines_ns; /* main thread CPU looking up DWARF lines */
	/* per-record frame buffer: kernel then user frames, leaf first, and
	 * how many (with the Python frames of the last record resolved: how
	 * many it had, how many were named) */
	struct profile_frame frames[INGEST_MAX_FRAMES];
	size_t nframes, npy, npy_named;
	/* a Python record's user frames and Python frames before the merge */
	struct profile_frame ufr[SAMPLER_MAX_USTACK];
	struct profile_frame pyfr[SAMPLER_MAX_PYFRAMES];
	struct deferred *defer;
	size_t ndefer, defer_cap;
	__u64 *dstacks;
	size_t ndstacks, dstacks_cap;
	struct sampler_time *dtimes; /* the deferred records' occurrences */
	size_t ndtimes, dtimes_cap;
	bool timestamps; /* the capture asked for times: count what has none */
};

/* Start a window into @prof: its counters are zero. */
void ingest__window(struct ingest *in, struct profile *prof);

/* A sampler_record_fn (ctx: the ingest): @r into the profile now, or kept
 * for the next ingest__flush(). 0 or -errno (-ENOMEM, -E2BIG past
 * INGEST_DEFER_MAX); a full profile only counts the record as dropped. */
int ingest__record(void *ctx, const struct sampler_record *r);

/* Bytes the deferred records hold. */
size_t ingest__deferred_bytes(const struct ingest *in);

/* Name the kernel addresses the deferred records wait for: one pass over
 * kallsyms (nothing when none waits). */
void ingest__kernel_pass(struct ingest *in);

/* Name and look up what the deferred records wait for, then add them. 0 or
 * the first error of adding. */
int ingest__flush(struct ingest *in);

/* Free what the deferred records hold (not the borrowed parts). */
void ingest__release(struct ingest *in);

#endif
