/* rubyframes.h - names of CRuby frames, and their place among native ones.
 *
 * The Ruby walker records a stack as (iseq, fingerprint, pc index, body,
 * kind, flags) per control frame (bpf/ruby.h). This module reads the
 * iseq's objects from the live process (label, path, first line, the line
 * table), caches them per process (the body address and a fingerprint
 * guard against a collected and reused address), and merges the frames
 * into the native stack: each native frame that ran the VM loop is
 * replaced by the Ruby frames of its loop call.
 *
 * Owned by the thread that ingests records (the capture's main thread).
 */
#ifndef PROFCAP_RUBYFRAMES_H
#define PROFCAP_RUBYFRAMES_H

#include <stddef.h>
#include <linux/types.h>

#include "model/profile.h"

struct rubyproc;
struct rubyframes;

#define RUBYFRAMES_TYPE "ruby"		    /* profile.frame.type of Ruby frames */
#define RUBYFRAMES_UNKNOWN "<unknown ruby>" /* a frame that could not be named */

/* Kinds and flags: PROFCAP_RUBY_KIND_* and PROFCAP_RUBY_FRAME_* of
 * bpf/ruby.h, the same values (symbolize/ does not include the BPF ABI). */
#define RUBYFRAMES_KIND_ISEQ 1
#define RUBYFRAMES_KIND_CFUNC 2
#define RUBYFRAMES_FRAME_FINISH 0x1 /* outermost frame of its VM loop call */
#define RUBYFRAMES_FRAME_NOBODY 0x2 /* iseq unreadable */
#define RUBYFRAMES_NO_PC 0xffffffffu
#define RUBYFRAMES_WORDS 3 /* BPF words per frame */

/* One Ruby frame as decoded from the BPF words. */
struct rubyframes_raw {
	__u64 addr; /* rb_iseq_t, or the C method's entry */
	__u64 body; /* the iseq's body, 0 none */
	__u32 pc;   /* index of the pc in the iseq's instructions */
	__u16 fingerprint;
	__u8 kind;
	__u8 flags;
};

/* Decode @nwords BPF words (RUBYFRAMES_WORDS per frame) into @out (at most
 * @cap frames). Returns the frames decoded. */
size_t rubyframes__decode(const __u64 *words, size_t nwords, struct rubyframes_raw *out,
			  size_t cap);

/* The fingerprint of an iseq (bpf/ruby.h profcap_ruby_fingerprint(), the
 * same function). */
__u16 rubyframes__fingerprint(__u64 body, __u64 first_lineno);

/* @proc_root as for rubyproc__locate() (NULL = "/proc"). NULL on ENOMEM. */
struct rubyframes *rubyframes__new(const char *proc_root);
void rubyframes__free(struct rubyframes *rf);

/* Process @pid runs @rp (copied); NULL: it does not (any more: exec). */
int rubyframes__set_process(struct rubyframes *rf, int pid, const struct rubyproc *rp);
/* Forget @pid and what was cached of it (it exited). */
void rubyframes__forget(struct rubyframes *rf, int pid);
const struct rubyproc *rubyframes__process(const struct rubyframes *rf, int pid);

/* Name @n frames of process @pid into @out (type_name RUBYFRAMES_TYPE; no
 * address or mapping; function = the iseq's label, one line with its path,
 * first line and the line the pc runs). A C function frame gets no
 * function (the merge leaves it out: its native frames stand for it).
 * Strings stay valid until rubyframes__free(); the lines until the next
 * rubyframes__resolve(). A frame that cannot be named (process gone, object
 * changed or unreadable) gets RUBYFRAMES_UNKNOWN without lines, never a
 * wrong name. Returns how many ISeq frames were named. */
size_t rubyframes__resolve(struct rubyframes *rf, int pid, const struct rubyframes_raw *raw,
			   size_t n, struct profile_frame *out);

/* What the caches did: iseqs read (misses) and found (hits), frames left
 * unknown, objects that no longer matched, evictions. */
struct rubyframes_stats {
	__u64 hits, misses, unknown, changed, evictions;
	__u64 cached; /* iseqs cached now */
};
void rubyframes__stats(const struct rubyframes *rf, struct rubyframes_stats *out);

#define RUBYFRAMES_MAX_ISEQS 32768		/* iseqs cached (all processes) */
#define RUBYFRAMES_MAX_NAME 1024		/* bytes of a label or path read */
#define RUBYFRAMES_MAX_INSNS 65536		/* line table entries read per iseq */
#define RUBYFRAMES_MAX_STRINGS (64u << 20)	/* bytes of names kept */
#define RUBYFRAMES_MAX_TABLE_BYTES (128u << 20) /* bytes of line tables kept (all iseqs) */

/* The rank CRuby's succinct index table gives instruction position @pos
 * (iseq.c's succ_index_lookup()): @table's @nwords words are the table as
 * the process holds it. -1 when @pos falls outside. Pure. */
int rubyframes__succ_rank(const __u64 *table, size_t nwords, __u32 pos);

/* Bytes of the succinct index table of an iseq of @iseq_size words. */
size_t rubyframes__succ_bytes(__u32 iseq_size);

/* Merge user frames @native (leaf first, @pcs their addresses) of a
 * process running @rp with its Ruby frames @rb (leaf first, @raw as
 * recorded) into @out (room for @cap): each native frame that ran the VM
 * loop (called by rb_vm_exec(), or rb_vm_exec() itself in a build that
 * inlines the loop) is replaced by the Ruby frames of its call: up to and
 * including the next one flagged RUBYFRAMES_FRAME_FINISH. Frames without
 * a function (C functions) are left out; Ruby frames left when the native
 * stack ends go at its root end, in order. Returns the frames written. */
size_t rubyframes__merge(const struct rubyproc *rp, const __u64 *pcs,
			 const struct profile_frame *native, size_t nnative,
			 const struct profile_frame *rb, const struct rubyframes_raw *raw,
			 size_t nrb, struct profile_frame *out, size_t cap);

#endif
