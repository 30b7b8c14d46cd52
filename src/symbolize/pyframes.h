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
 * pyframes__free(). A frame that cannot be named (process gone, code
 * object changed or unreadable) gets function "<unknown python>" without
 * lines, never a wrong name. Returns how many were named. */
size_t pyframes__resolve(struct pyframes *pf, int pid, const struct pyframes_raw *raw, size_t n,
			 struct profile_frame *out);

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
