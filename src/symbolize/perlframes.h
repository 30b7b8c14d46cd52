/* perlframes.h - names of Perl 5 frames, and their place among native
 * ones.
 *
 * The Perl frame walker records a Perl stack as (CV, fingerprint, COP,
 * line, kind) per frame (bpf/perl.h). This module reads the sub's name
 * and package (CV -> glob -> name, stash -> package name) and the
 * statement's file (COP -> cop_file) from the live process, caches them
 * per process (the fingerprint and the line guard against a freed and
 * reused address), and merges the frames into the native stack: each
 * runops loop frame is replaced by the Perl frames it ran.
 *
 * Owned by the thread that ingests records (the capture's main thread).
 */
#ifndef PROFCAP_PERLFRAMES_H
#define PROFCAP_PERLFRAMES_H

#include <stddef.h>
#include <linux/types.h>

#include "model/profile.h"

struct perlproc;
struct perlframes;

#define PERLFRAMES_TYPE "perl"		   /* profile.frame.type of Perl frames */
#define PERLFRAMES_MAIN "<main>"	   /* the main program, outermost */
#define PERLFRAMES_EVAL "(eval)"	   /* an eval or a require */
#define PERLFRAMES_UNKNOWN "<unknown perl>" /* a frame that could not be named */

/* Kinds and flags: PROFCAP_PERL_KIND_* and PROFCAP_PERL_FRAME_* of
 * bpf/perl.h, the same values (symbolize/ does not include the BPF ABI). */
#define PERLFRAMES_KIND_SUB 1
#define PERLFRAMES_KIND_EVAL 2
#define PERLFRAMES_KIND_MAIN 3
#define PERLFRAMES_FRAME_ENTRY 0x1 /* outermost frame of its runops call */
#define PERLFRAMES_FRAME_NOCV 0x2  /* the sub unreadable */
#define PERLFRAMES_WORDS 3	   /* BPF words per frame */

/* One Perl frame as decoded from the BPF words. */
struct perlframes_raw {
	__u64 cv;  /* the sub's CV, 0 for an eval or the main program */
	__u64 cop; /* the statement running */
	__u32 line;
	__u16 fingerprint;
	__u8 kind;
	__u8 flags;
};

/* Decode @nwords BPF words (PERLFRAMES_WORDS per frame) into @out (at
 * most @cap frames). Returns the frames decoded. Pure. */
size_t perlframes__decode(const __u64 *words, size_t nwords, struct perlframes_raw *out,
			  size_t cap);

/* The fingerprint of a sub whose CV body holds glob (or name HEK)
 * pointer @gv (bpf/perl.h profcap_perl_fingerprint(), the same). */
__u16 perlframes__fingerprint(__u64 gv);

/* @proc_root as for perlproc__locate() (NULL = "/proc"). NULL on ENOMEM. */
struct perlframes *perlframes__new(const char *proc_root);
void perlframes__free(struct perlframes *pf);

/* Process @pid runs @pp (copied); NULL: it does not (any more: exec). */
int perlframes__set_process(struct perlframes *pf, int pid, const struct perlproc *pp);
/* Forget @pid and what was cached of it (it exited). */
void perlframes__forget(struct perlframes *pf, int pid);
const struct perlproc *perlframes__process(const struct perlframes *pf, int pid);

/* Name @n frames of process @pid into @out (type_name PERLFRAMES_TYPE; no
 * address or mapping; function "Package::sub", PERLFRAMES_EVAL or
 * PERLFRAMES_MAIN; one line with the statement's file and line). Strings
 * stay valid until perlframes__free(); the lines until the next
 * perlframes__resolve(). A sub that cannot be named (process gone, CV
 * changed or unreadable) is PERLFRAMES_UNKNOWN, never a wrong name; a
 * statement that no longer reads the recorded line gives no file. Returns
 * how many were named. */
size_t perlframes__resolve(struct perlframes *pf, int pid, const struct perlframes_raw *raw,
			   size_t n, struct profile_frame *out);

/* Merge user frames @native (leaf first, @pcs their addresses) of process
 * @pp with its Perl frames @perl (leaf first, @raw as decoded) into @out
 * (room for @cap): each native frame in a runops loop is replaced by the
 * Perl frames of its call, up to and including the next one flagged
 * PERLFRAMES_FRAME_ENTRY; Perl frames left when the native stack ends go
 * at its root end. Returns the frames written. Pure. */
size_t perlframes__merge(const struct perlproc *pp, const __u64 *pcs,
			 const struct profile_frame *native, size_t nnative,
			 const struct profile_frame *perl, const struct perlframes_raw *raw,
			 size_t nperl, struct profile_frame *out, size_t cap);

/* What the caches did: subs read (misses) and found (hits), frames not
 * named, subs whose fingerprint no longer matched, statements read,
 * evictions. */
struct perlframes_stats {
	__u64 hits, misses, unknown, changed, cops, evictions;
	__u64 cached; /* subs cached now */
};
void perlframes__stats(const struct perlframes *pf, struct perlframes_stats *out);

#define PERLFRAMES_MAX_SUBS 32768	/* subs cached (all processes) */
#define PERLFRAMES_MAX_COPS 65536	/* statements cached (all processes) */
#define PERLFRAMES_MAX_NAME 1024	/* bytes of a name or package read */
#define PERLFRAMES_MAX_FILE 4096	/* bytes of a file name read */
#define PERLFRAMES_MAX_STRINGS (64u << 20) /* bytes of names kept */

#endif
