/* pbbuf.h - nanopb glue shared by the protobuf encoders (OTLP, pprof): an
 * output stream that appends to a struct buf, and the size of a varint.
 */
#ifndef PROFCAP_PBBUF_H
#define PROFCAP_PBBUF_H

#include <stddef.h>
#include <linux/types.h>

#include <pb_encode.h>

#include "util/buf.h"

/* Where a pbbuf__stream() writes: @b (caller owned), and the -errno of the
 * append that failed (-E2BIG past @b's cap, -ENOMEM), 0 while none has. */
struct pbbuf {
	struct buf *b;
	int err;
};

/* A nanopb stream appending to @k->b. A failed append makes the encode
 * return false and leaves the reason in @k->err. @k must outlive it. */
pb_ostream_t pbbuf__stream(struct pbbuf *k);

/* Bytes that @v takes as a protobuf varint (1-10). */
size_t pbbuf__varint_len(__u64 v);

#endif
