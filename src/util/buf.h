/* buf.h - a growable byte buffer with a hard size cap.
 *
 * Used wherever output size depends on input (encoders, file contents).
 * Appends past the cap fail with -E2BIG and leave the buffer unchanged, so a
 * runaway input can never take all memory.
 */
#ifndef PROFCAP_BUF_H
#define PROFCAP_BUF_H

#include <stddef.h>

struct buf {
	unsigned char *data;
	size_t len;
	size_t cap; /* allocated bytes */
	size_t max; /* hard cap on len */
};

/* Initialise @b empty with hard cap @max bytes (no allocation yet). */
void buf__init(struct buf *b, size_t max);

/* Release @b's memory and leave it empty (reusable). Accepts NULL. */
void buf__release(struct buf *b);

/* Make room for @extra more bytes. 0, -E2BIG past the cap, -ENOMEM. */
int buf__reserve(struct buf *b, size_t extra);

/* Append @len bytes of @data. 0, -E2BIG or -ENOMEM (buffer unchanged). */
int buf__append(struct buf *b, const void *data, size_t len);

/* Drop the contents but keep the allocation. */
void buf__reset(struct buf *b);

/* Give back the allocation beyond the contents (for a buffer that is done
 * growing). Keeps the old allocation if the smaller one cannot be had. */
void buf__shrink(struct buf *b);

/* A writer with a sticky error: once an append fails, later ones do nothing
 * and @err keeps the first failure. For encoders that write many small
 * pieces and check once at the end. */
struct buf_out {
	struct buf *b;
	int err;
};

/* Append @len bytes of @data to @o->b unless @o->err is set; a failure is
 * kept in @o->err. */
void buf__put(struct buf_out *o, const void *data, size_t len);

/* buf__put() of NUL-terminated @s (without the NUL). */
void buf__puts(struct buf_out *o, const char *s);

/* Read all of file @path into @b (replacing its contents). Stops with -E2BIG
 * when the file is larger than the cap. 0 or -errno. */
int buf__read_file(struct buf *b, const char *path);

#endif
