/* gz.h - gzip (RFC 1952) compression of whole buffers with zlib, for
 * request bodies and gRPC messages.
 */
#ifndef PROFCAP_GZ_H
#define PROFCAP_GZ_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

/* Append the gzip compression of @len bytes of @in to @out (caller owned;
 * its cap bounds the result). 0, -E2BIG, -ENOMEM or -EIO (zlib failure). On
 * failure @out keeps its previous length. */
int gz__compress(const void *in, size_t len, struct buf *out);

/* Append the decompression of gzip data @in (@len bytes) to @out. 0, -E2BIG
 * (past @out's cap), -ENOMEM or -EBADMSG (not gzip, truncated or corrupt).
 * On failure @out keeps its previous length. */
int gz__decompress(const void *in, size_t len, struct buf *out);

/* The most that @len bytes of gzip input to a reader of profiles can
 * plausibly inflate to: GZ_PLAUSIBLE_RATIO times @len, at least
 * GZ_PLAUSIBLE_FLOOR, at most @max. Profiles compress 2-10 times; deflate
 * reaches about 1000 times only on degenerate data (a gzip bomb). */
#define GZ_PLAUSIBLE_RATIO 32
#define GZ_PLAUSIBLE_FLOOR (32u << 20)
size_t gz__plausible_size(size_t len, size_t max);

/* Measure what gzip data @in (@len bytes) inflates to, streaming through a
 * small stack buffer (constant memory), into *@size. 0, -E2BIG as soon as it
 * passes @limit bytes, -ENOMEM or -EBADMSG (not gzip, truncated, corrupt).
 * Use before gz__decompress() to size (or refuse) the output buffer. */
int gz__inflated_size(const void *in, size_t len, size_t limit, size_t *size);

/* Inflate the zlib (RFC 1950) stream @in (@len bytes) into @out, which it
 * must fill exactly (@out_len bytes: the size recorded beside the stream,
 * as in an ELF compressed section). 0, -ENOMEM, or -EBADMSG (corrupt, or
 * not exactly @out_len bytes). */
int gz__inflate_zlib(const void *in, size_t len, void *out, size_t out_len);

/* True when @in starts with the gzip magic (1f 8b). */
bool gz__is_gzip(const void *in, size_t len);

/* Inflate the gzip input of a profile reader, @in (@len bytes), into @out
 * (initialised by the caller, empty; its cap is replaced): measured first
 * against gz__plausible_size(@len, @max), so a gzip bomb is refused before
 * anything is allocated. 0; else -E2BIG (a bomb), -EBADMSG (corrupt,
 * truncated, or inflating to nothing) or -ENOMEM, with a phrase saying so
 * in @why (@whylen bytes). */
int gz__inflate_input(const void *in, size_t len, size_t max, struct buf *out, char *why,
		      size_t whylen);

/* A profile reader's input: when *@data (*@len bytes) is gzip, inflate it
 * into @plain with gz__inflate_input() and point *@data, *@len at the
 * result; else check that *@len is at most @max. Same returns and @why as
 * gz__inflate_input() (-E2BIG also for plain input over @max). */
int gz__reader_input(const void **data, size_t *len, size_t max, struct buf *plain, char *why,
		     size_t whylen);

#endif
