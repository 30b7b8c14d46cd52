/* gz.h - gzip (RFC 1952) compression of whole buffers with zlib, for
 * request bodies and gRPC messages.
 */
#ifndef PROFCAP_GZ_H
#define PROFCAP_GZ_H

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

#endif
