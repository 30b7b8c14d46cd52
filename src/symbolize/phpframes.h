/* phpframes.h - names of PHP frames, and their place among native ones.
 *
 * The BPF walker records a PHP stack as (function, opline, call info,
 * flags) per frame (bpf/php.h). This module reads the functions from the
 * live process (name, class, file, the line of each opline), caches them
 * per process (a function's code does not change while it lives; the
 * fingerprint guards against a reused address), and merges the frames
 * into the native stack: each native frame of the executor (execute_ex)
 * is replaced by the PHP frames it ran. docs/php.md.
 *
 * Owned by the thread that ingests records (the capture's main thread).
 */
#ifndef PROFCAP_PHPFRAMES_H
#define PROFCAP_PHPFRAMES_H

#include <stddef.h>
#include <linux/types.h>

#include "model/profile.h"

struct phpproc;
struct phpframes;

#define PHPFRAMES_TYPE "php" /* profile.frame.type of PHP frames */

/* Frame flags: PROFCAP_PHP_FRAME_* of bpf/php.h, the same values. */
#define PHPFRAMES_FRAME_ENTRY 0x1   /* user frame that began its executor call */
#define PHPFRAMES_FRAME_NOFUNC 0x2  /* function unreadable: name unknown */
#define PHPFRAMES_FRAME_REGLINE 0x4 /* opline from the executor's register */

/* One PHP frame as decoded from the BPF words. */
struct phpframes_raw {
	__u64 func;	   /* zend_function address */
	__u64 opline;	   /* zend_op address, 0 none */
	__u32 call_info;   /* the frame's This.u1.type_info */
	__u16 fingerprint; /* profcap_php_fingerprint() of the function */
	__u8 flags;	   /* PHPFRAMES_FRAME_* */
	__u8 type;	   /* zend_function.type: 1 internal, 2 user, 4 eval code */
};

/* Decode @nwords BPF words (3 per frame) into @out (at most @cap frames). */
size_t phpframes__decode(const __u64 *words, size_t nwords, struct phpframes_raw *out, size_t cap);

/* @proc_root as for phpproc__locate() (NULL = "/proc"). NULL on ENOMEM. */
struct phpframes *phpframes__new(const char *proc_root);
void phpframes__free(struct phpframes *pf);

/* Process @pid runs @pp (copied); NULL: it does not (any more: exec). */
int phpframes__set_process(struct phpframes *pf, int pid, const struct phpproc *pp);
/* Forget @pid and its cached functions (it exited). */
void phpframes__forget(struct phpframes *pf, int pid);
/* The process's interpreter, NULL when it has none. */
const struct phpproc *phpframes__process(const struct phpframes *pf, int pid);

/* Name @n frames of process @pid into @out (type_name PHPFRAMES_TYPE;
 * function "Class::method", "function" or "{main}" for a file's top
 * level; one line with the file and line number for user code). Strings
 * stay valid until phpframes__free(); the lines the frames point to until
 * the next phpframes__resolve(). A frame that cannot be named (process
 * gone, function changed or unreadable) gets "<unknown php>" without
 * lines, never a wrong name. Returns how many were named. */
size_t phpframes__resolve(struct phpframes *pf, int pid, const struct phpframes_raw *raw, size_t n,
			  struct profile_frame *out);

/* What the cache did: functions read (misses), found (hits), frames that
 * got no name (unknown), functions that no longer matched their
 * fingerprint (changed), evictions. */
struct phpframes_stats {
	__u64 hits, misses, unknown, changed, evictions;
	__u64 cached; /* functions cached now */
};
void phpframes__stats(const struct phpframes *pf, struct phpframes_stats *out);

#define PHPFRAMES_MAX_FUNCS 32768	  /* functions cached (all processes) */
#define PHPFRAMES_MAX_NAME 1024		  /* bytes of a name or file name read */
#define PHPFRAMES_MAX_OPS 16384		  /* oplines of a function whose lines are kept */
#define PHPFRAMES_MAX_LINES (4u << 20)	  /* line numbers kept in all */
#define PHPFRAMES_MAX_STRINGS (64u << 20) /* bytes of names kept: past it, no new names */

/* The function name a PHP frame shows: "@cls::@fn", "@fn", or, for the
 * top level of a file (no name), "{main}". Into @out (@cap bytes,
 * truncated). Pure. */
void phpframes__name(const char *cls, const char *fn, char *out, size_t cap);

/* The index of opline @opline in an op array at @opcodes of @last
 * oplines of @size bytes, -1 when it is not one of them. Pure. */
long phpframes__op_index(__u64 opcodes, __u32 last, __u32 size, __u64 opline);

/* The fingerprint of a function whose name, class, file (0 for internal
 * functions) and first line are at these addresses / this line: the same
 * function as the walker's profcap_php_fingerprint() (bpf/php.h). Pure. */
__u16 phpframes__fingerprint(__u64 name, __u64 scope, __u64 file, __u32 line);

/* Merge user frames @native (leaf first, @pcs their addresses) with PHP
 * frames @php (leaf first, @raw their flags) into @out (room for @cap):
 * each native frame whose pc is in @pp's executor is replaced by the PHP
 * frames up to and including the next ENTRY frame; PHP frames left at the
 * root end go after the last native frame. Returns the frames written. */
size_t phpframes__merge(const struct phpproc *pp, const __u64 *pcs,
			const struct profile_frame *native, size_t nnative,
			const struct profile_frame *php, const struct phpframes_raw *raw,
			size_t nphp, struct profile_frame *out, size_t cap);

#endif
