/* v8frames_int.h - what v8frames.c (caches, naming, merge) and
 * v8frames_read.c (V8 objects read from a live process) share. */
#ifndef PROFCAP_V8FRAMES_INT_H
#define PROFCAP_V8FRAMES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "proc/v8proc.h"

/* Where objects are read from: one process, its layout. */
struct v8r {
	const char *proc_root;
	int pid;
	const struct v8proc_layout *l;
};

/* Read @len bytes at @addr. */
int v8r__read(const struct v8r *r, __u64 addr, void *buf, size_t len);
/* The tagged pointer (or Smi) at @addr. */
int v8r__word(const struct v8r *r, __u64 addr, __u64 *v);
/* Whether @v is a tagged heap object pointer; its address. */
bool v8r__is_heap(const struct v8r *r, __u64 v);
__u64 v8r__untag(const struct v8r *r, __u64 v);
/* A Smi's value, -1 when @v is not a Smi. */
__s64 v8r__smi(const struct v8r *r, __u64 v);

/* The instance type of tagged object @v (its map's): 0, -EINVAL when @v
 * is not a heap object, or a read error. */
int v8r__type(const struct v8r *r, __u64 v, __u16 *type);

/* The string at tagged @v as NUL-terminated UTF-8 into @out (@cap bytes,
 * at least 4 * V8FRAMES_MAX_NAME + 1): 0, -E2BIG (longer than
 * V8FRAMES_MAX_NAME), -EINVAL (not a string, or a kind not read), or a
 * read error. */
int v8r__string(const struct v8r *r, __u64 v, char *out, size_t cap, size_t *outlen);

/* The line ends of script at address @script (untagged): from its
 * line_ends array when V8 has computed it, else counted in its source.
 * *@ends is malloc()ed (free() it), *@n entries. 0, -ENOENT (neither
 * readable), -E2BIG, -ENOMEM or a read error. */
int v8r__line_ends(const struct v8r *r, __u64 script, __u32 **ends, size_t *n);

/* The bytes of ByteArray at tagged @v (at most V8FRAMES_MAX_POSITIONS),
 * malloc()ed into *@out, *@n bytes. */
int v8r__byte_array(const struct v8r *r, __u64 v, unsigned char **out, size_t *n);

/* The function's name and start position from ScopeInfo at tagged @v:
 * the first string past the context locals, and the first ascending pair
 * of Smis (start and end positions). -ENOENT when no name is found. */
int v8r__scope_info(const struct v8r *r, __u64 v, char *out, size_t cap, size_t *outlen,
		    __s64 *start);

#endif
