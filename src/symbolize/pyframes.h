/* pyframes.h - names of Python frames, and their place among native ones.
 *
 * The BPF walker records a Python stack as (code object, instruction
 * offset, flags) per frame (bpf/python.h). This module reads the code
 * objects from the live process (function, qualified name, file, line
 * table), caches them per process (code objects are immutable; the
 * fingerprint guards against a reused address), and merges the frames
 * into the native stack: each native frame of the eval loop
 * (struct pyproc.eval) is replaced by the Python frames it ran.
 *
 * Owned by the thread that ingests records (the capture's main thread).
 */
#ifndef PROFCAP_PYFRAMES_H
#define PROFCAP_PYFRAMES_H

#include <stddef.h>
#include <linux/types.h>

#include "model/profile.h"

struct pyproc;
struct pyframes;

#define PYFRAMES_TYPE "cpython" /* profile.frame.type of Python frames */

/* Frame flags: PROFCAP_PY_FRAME_* of bpf/python.h, the same values. */
#define PYFRAMES_FRAME_ENTRY 0x1  /* outermost frame of its eval-loop call */
#define PYFRAMES_FRAME_NOCODE 0x2 /* code object unreadable: name unknown */

/* One Python frame as decoded from the BPF words. */
struct pyframes_raw {
	__u64 code;	   /* code object address */
	__u32 offset;	   /* instruction offset as recorded */
	__u16 fingerprint; /* co_firstlineno & 0xffff */
	__u16 flags;	   /* PROFCAP_PY_FRAME_* */
};

/* Decode @nwords BPF words (2 per frame) into @out (at most @cap frames). */
size_t pyframes__decode(const __u64 *words, size_t nwords, struct pyframes_raw *out, size_t cap);

/* @proc_root as for pyproc__locate() (NULL = "/proc"). NULL on ENOMEM. */
struct pyframes *pyframes__new(const char *proc_root);
void pyframes__free(struct pyframes *pf);

/* Process @pid runs @pp (copied); NULL: it does not (any more: exec). */
int pyframes__set_process(struct pyframes *pf, int pid, const struct pyproc *pp);
/* Forget @pid and its cached code objects (it exited). */
void pyframes__forget(struct pyframes *pf, int pid);
/* The process's interpreter, NULL when it has none. */
const struct pyproc *pyframes__process(const struct pyframes *pf, int pid);

/* Name @n frames of process @pid into @out (type_name PYFRAMES_TYPE;
 * function = qualified name, system_name = co_name when they differ,
 * one line with the file and line number). Strings stay valid until
 * pyframes__free(); the lines the frames point to until the next
 * pyframes__resolve(). A frame that cannot be named (process gone, code
 * object changed or unreadable) gets function "<unknown python>" without
 * lines, never a wrong name. Returns how many were named. */
size_t pyframes__resolve(struct pyframes *pf, int pid, const struct pyframes_raw *raw, size_t n,
			 struct profile_frame *out);

/* What the cache did: code objects read (misses), found (hits), frames
 * that got no name (unknown: unreadable, changed, gone), evictions. */
struct pyframes_stats {
	__u64 hits, misses, unknown, changed, evictions;
	__u64 cached; /* code objects cached now */
};
void pyframes__stats(const struct pyframes *pf, struct pyframes_stats *out);

#define PYFRAMES_MAX_CODES 32768     /* code objects cached (all processes) */
#define PYFRAMES_MAX_NAME 1024	     /* characters of a name or file name read */
#define PYFRAMES_MAX_LINETABLE 65536 /* bytes of a line table read */
#define PYFRAMES_MAX_STRINGS (64u << 20) /* bytes of names kept: past it, no new names */

/* The line of recorded instruction @offset (bpf/python.h) from line table
 * @table (@len bytes) of a code object of version @version (major << 8 |
 * minor) whose first line is @firstlineno; @code_bytecode as in
 * struct pyproc_layout (3.11+, PYPROC_NONE before). 0 when the table gives
 * none. Pure. */
__s64 pyframes__line(__u32 version, __u16 code_bytecode, const void *table, size_t len,
		     __s64 firstlineno, __u32 offset);

/* Merge user frames @native (leaf first, @pcs their addresses) with Python
 * frames @py (leaf first, @raw their flags) into @out (room for @cap):
 * each native frame whose pc is in an eval range of @pp is replaced by the
 * Python frames up to and including the next ENTRY frame (every frame when
 * the version has one frame per call); Python frames left at the root end
 * go after the last native frame. Returns the number of frames written. */
size_t pyframes__merge(const struct pyproc *pp, const __u64 *pcs, const struct profile_frame *native,
		       size_t nnative, const struct profile_frame *py,
		       const struct pyframes_raw *raw, size_t npy, struct profile_frame *out,
		       size_t cap);

#endif
