/* v8frames.h - names of V8 (Node.js) JavaScript frames, and their place
 * among native ones.
 *
 * A V8 frame walker records a JavaScript stack as (SharedFunctionInfo,
 * fingerprint, pc, kind, offset) per frame (bpf/v8.h). This module reads
 * the function's objects from the live process (name, script name, the
 * script's line ends, the bytecode's source positions), caches them per
 * process (a fingerprint guards against a collected and reused address),
 * and merges the frames into the native stack: the native frame with the
 * JavaScript frame's pc (an [anon] JIT frame, or the interpreter's
 * trampoline builtin) is replaced by it.
 *
 * Owned by the thread that ingests records (the capture's main thread).
 */
#ifndef PROFCAP_V8FRAMES_H
#define PROFCAP_V8FRAMES_H

#include <stddef.h>
#include <linux/types.h>

#include "model/profile.h"

struct v8proc;
struct v8frames;

#define V8FRAMES_TYPE "v8js"		 /* profile.frame.type of JavaScript frames */
#define V8FRAMES_ANONYMOUS "(anonymous)" /* a function without a name */
#define V8FRAMES_UNKNOWN "<unknown js>"	 /* a frame that could not be named */

/* Kinds and flags: PROFCAP_V8_KIND_* and PROFCAP_V8_FRAME_* of bpf/v8.h,
 * the same values (symbolize/ does not include the BPF ABI). */
#define V8FRAMES_KIND_INTERPRETED 1 /* offset: bytecode offset */
#define V8FRAMES_KIND_JIT 2	    /* offset: pc - instruction start, or NO_OFFSET */
#define V8FRAMES_KIND_BUILTIN 3	    /* a JS function running a builtin */
#define V8FRAMES_FRAME_NOSFI 0x1    /* function unreadable */
#define V8FRAMES_NO_OFFSET 0xffffffffu
#define V8FRAMES_WORDS 3 /* BPF words per frame */

/* One JavaScript frame as decoded from the BPF words. */
struct v8frames_raw {
	__u64 sfi; /* SharedFunctionInfo address, untagged */
	__u64 pc;  /* the frame's pc, as the native stack has it */
	__u32 offset;
	__u16 fingerprint;
	__u8 kind;
	__u8 flags;
};

/* Decode @nwords BPF words (V8FRAMES_WORDS per frame) into @out (at most
 * @cap frames). Returns the frames decoded. */
size_t v8frames__decode(const __u64 *words, size_t nwords, struct v8frames_raw *out, size_t cap);

/* The fingerprint of a SharedFunctionInfo (bpf/v8.h
 * profcap_v8_fingerprint(), the same function). */
__u16 v8frames__fingerprint(__u16 length, __u16 params, __u16 token, __u64 script);

/* @proc_root as for v8proc__locate() (NULL = "/proc"). NULL on ENOMEM. */
struct v8frames *v8frames__new(const char *proc_root);
void v8frames__free(struct v8frames *vf);

/* Process @pid runs @vp (copied); NULL: it does not (any more: exec). */
int v8frames__set_process(struct v8frames *vf, int pid, const struct v8proc *vp);
/* Forget @pid and what was cached of it (it exited). */
void v8frames__forget(struct v8frames *vf, int pid);
const struct v8proc *v8frames__process(const struct v8frames *vf, int pid);

/* Name @n frames of process @pid into @out (type_name V8FRAMES_TYPE;
 * no address or mapping; function = the function's name or
 * V8FRAMES_ANONYMOUS, one line with the
 * script's name, the function's first line and the line running: from
 * the bytecode offset of an interpreted frame, the function's first line
 * otherwise). Strings stay valid until v8frames__free(); the lines until
 * the next v8frames__resolve(). A frame that cannot be named (process
 * gone, object changed or unreadable) gets V8FRAMES_UNKNOWN without
 * lines, never a wrong name. Returns how many were named. */
size_t v8frames__resolve(struct v8frames *vf, int pid, const struct v8frames_raw *raw, size_t n,
			 struct profile_frame *out);

/* What the caches did: functions read (misses) and found (hits), frames
 * left unknown, objects that no longer matched their fingerprint, scripts
 * read, evictions. */
struct v8frames_stats {
	__u64 hits, misses, unknown, changed, scripts, evictions;
	__u64 cached; /* functions cached now */
};
void v8frames__stats(const struct v8frames *vf, struct v8frames_stats *out);

#define V8FRAMES_MAX_FUNCS 32768	    /* functions cached (all processes) */
#define V8FRAMES_MAX_SCRIPTS 4096	    /* scripts cached (all processes) */
#define V8FRAMES_MAX_NAME 1024		    /* UTF-16 units of a name read */
#define V8FRAMES_MAX_POSITIONS 65536	    /* bytes of a source position table */
#define V8FRAMES_MAX_SOURCE (8u << 20)	    /* characters of a script read for its lines */
#define V8FRAMES_MAX_LINES (1u << 20)	    /* line ends kept per script */
#define V8FRAMES_MAX_STRINGS (64u << 20)    /* bytes of names kept */
#define V8FRAMES_MAX_LINE_BYTES (256u << 20) /* bytes of line ends kept (all scripts) */

/* The script offset of bytecode offset @offset from source position
 * table @table (@len bytes, V8's encoding: per entry a zigzag varint code
 * offset delta whose sign is the statement bit, then a zigzag varint
 * position delta): the position of the last entry at or before @offset,
 * -1 when none. Pure. */
__s64 v8frames__position(const unsigned char *table, size_t len, __u32 offset);

/* The first script offset the table gives (a function's first statement),
 * -1 when none. Pure. */
__s64 v8frames__first_position(const unsigned char *table, size_t len);

/* The 1-based line of script offset @pos from the script's line ends
 * (@ends, @n ascending offsets of each line's end), 0 when @pos < 0. */
__s64 v8frames__line(const __u32 *ends, size_t n, __s64 pos);

/* Merge user frames @native (leaf first, @pcs their addresses) with the
 * JavaScript frames @js (leaf first, @raw their pcs) into @out (room for
 * @cap): the native frame whose pc is the next JavaScript frame's pc is
 * replaced by it, unless a perf map named it already (its type_name is
 * V8FRAMES_TYPE: kept); JavaScript frames whose pc the native stack does
 * not reach go at its root end, in order. Returns the frames written. */
size_t v8frames__merge(const __u64 *pcs, const struct profile_frame *native, size_t nnative,
		       const struct profile_frame *js, const struct v8frames_raw *raw, size_t njs,
		       struct profile_frame *out, size_t cap);

#endif
