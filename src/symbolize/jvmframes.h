/* jvmframes.h - names of Java (HotSpot) frames, and their place among
 * native ones.
 *
 * A walker records a Java stack as one entry per physical frame of the
 * code cache (bpf/jvm.h): an interpreted frame as (Method*, bci), a
 * compiled or stub frame as (CodeBlob, pc offset). This module reads the
 * objects from the live process (untrusted, bounded), expands a compiled
 * frame into its inlined methods from the nmethod's pc descriptors and
 * scopes, names each method `pkg.Class.method` with its source file and
 * the line of its bci (the compressed line number table), caches them per
 * process, and merges the frames into the native stack: each native frame
 * whose pc is in the code cache is replaced by its Java frame.
 *
 * Owned by the thread that ingests records (the capture's main thread).
 */
#ifndef PROFCAP_JVMFRAMES_H
#define PROFCAP_JVMFRAMES_H

#include <stddef.h>
#include <linux/types.h>

#include "model/profile.h"

struct jvmproc;
struct jvmframes;

#define JVMFRAMES_TYPE "jvm" /* profile.frame.type of Java frames */

/* Kinds and flags: PROFCAP_JVM_KIND_* / PROFCAP_JVM_FRAME_* of bpf/jvm.h. */
#define JVMFRAMES_KIND_INTERP 1
#define JVMFRAMES_KIND_BLOB 2
#define JVMFRAMES_FRAME_LEAF 0x1
#define JVMFRAMES_FRAME_PROLOGUE 0x2
#define JVMFRAMES_FRAME_NOREAD 0x4

/* One physical Java frame as decoded from the BPF words. */
struct jvmframes_raw {
	__u64 addr;	   /* Method* (INTERP) or CodeBlob (BLOB) */
	__u32 pos;	   /* bci (INTERP) or pc - blob (BLOB) */
	__u16 fingerprint; /* see bpf/jvm.h */
	__u8 kind;	   /* JVMFRAMES_KIND_* */
	__u8 flags;	   /* JVMFRAMES_FRAME_* */
};

/* Encode (for walkers in user space and tests) and decode the two words
 * of a frame. Decoding skips words of kind 0 (the walker pads a stack to
 * whole V8 frames with them). */
void jvmframes__encode(const struct jvmframes_raw *r, __u64 words[2]);
size_t jvmframes__decode(const __u64 *words, size_t nwords, struct jvmframes_raw *out, size_t cap);

/* @proc_root as for jvmproc__locate() (NULL = "/proc"). NULL on ENOMEM. */
struct jvmframes *jvmframes__new(const char *proc_root);
void jvmframes__free(struct jvmframes *jf);

/* Process @pid runs @jp (copied); NULL: it does not (any more: exec). */
int jvmframes__set_process(struct jvmframes *jf, int pid, const struct jvmproc *jp);
/* Forget @pid and what was cached of it (it exited). */
void jvmframes__forget(struct jvmframes *jf, int pid);
const struct jvmproc *jvmframes__process(const struct jvmframes *jf, int pid);

/* Name @n frames of process @pid into @out (type_name JVMFRAMES_TYPE):
 * one profile frame per physical frame, whose lines are its methods,
 * innermost inlined first (function "pkg.Class.method", system_name the
 * same with its JVM descriptor "pkg.Class.method(IJ)V", file, bci's line,
 * 0 when the method has no line table). A stub is one line named after
 * its blob ("StubRoutines (1)"). A frame that does not check out (process
 * gone, object changed or freed, a scope not matching its nmethod) is
 * "<unknown java>" without lines, never a wrong name. Strings stay valid
 * until jvmframes__free(); lines until the next jvmframes__resolve().
 * Returns how many were named. */
size_t jvmframes__resolve(struct jvmframes *jf, int pid, const struct jvmframes_raw *raw, size_t n,
			  struct profile_frame *out);

/* The Java name (java.lang.Thread.name, UTF-8) of thread @tid of JVM
 * process @pid whose kernel name @comm is its first bytes (the kernel
 * keeps 15), else NULL (not a JVM, not a Java thread, a name not
 * readable or another one). Read from the process when a thread is new
 * (its thread list at most once a second), cached; valid until
 * jvmframes__free(). */
const char *jvmframes__thread_name(struct jvmframes *jf, int pid, int tid, const char *comm);

struct jvmframes_stats {
	__u64 hits, misses, unknown, changed, evictions;
	__u64 inlined; /* frames of methods inlined into another */
	__u64 cached;  /* methods and nmethods cached now */
};
void jvmframes__stats(const struct jvmframes *jf, struct jvmframes_stats *out);

#define JVMFRAMES_MAX_ENTRIES 32768	   /* methods and nmethods cached (all processes) */
#define JVMFRAMES_MAX_NAME 1024		   /* bytes of a symbol read */
#define JVMFRAMES_MAX_LINETABLE 65536	   /* bytes of a line number table read */
#define JVMFRAMES_MAX_DEBUGINFO (1u << 20) /* bytes of an nmethod's pc descs + scopes read */
#define JVMFRAMES_MAX_INLINE 32		   /* inlined levels expanded per frame */
#define JVMFRAMES_MAX_STRINGS (64u << 20)  /* bytes of names kept: past it, no new names */

/* The line of @bci in compressed line number table @t (@len bytes; ends
 * at a 0 byte or at @len), 0 when none: the entry of that bci, else the
 * closest one before it, as HotSpot's Method::line_number_from_bci().
 * @x1: the stream's UNSIGNED5 excludes byte 0 (JDK 21+). Pure. */
__s64 jvmframes__line(const __u8 *t, size_t len, __s32 bci, int x1);

/* The first ints of a scope of an nmethod's debug info at @p (@len bytes
 * left): the sender scope's offset, the method's metadata index and the
 * bci. 0, -EINVAL when truncated. @x1 as above. Pure. */
int jvmframes__scope(const __u8 *p, size_t len, int x1, __u32 *sender, __u32 *method_index,
		     __s32 *bci);

/* Merge user frames @native (leaf first, @pcs their addresses) with Java
 * frames @java (leaf first, one per physical frame, as resolved) into
 * @out (room for @cap): each native frame whose pc is in @jp's code cache
 * takes the next Java frame; Java frames left when the native stack ends
 * go at the root end. Returns the number of frames written. */
size_t jvmframes__merge(const struct jvmproc *jp, const __u64 *pcs,
			const struct profile_frame *native, size_t nnative,
			const struct profile_frame *java, size_t njava, struct profile_frame *out,
			size_t cap);

#endif
