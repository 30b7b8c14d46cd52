/* wire.h - a bounds-checked reader of the protobuf wire format.
 *
 * Every decoder of the tree (OTLP, pprof, gRPC status, process context)
 * walks its messages with these calls: wire__next() yields one field at a
 * time with its value already read (varint, fixed64, fixed32) or its bytes
 * as a sub-reader bounded to them (length-delimited), so an unknown field is
 * skipped by ignoring it and a nested message is read with the same calls on
 * the sub-reader. Nothing is copied or allocated. A malformed input is an
 * error with a short reason (wire__why()), never a read past the end.
 * Groups (wire types 3 and 4) are refused: no schema of ours uses them.
 */
#ifndef PROFCAP_UTIL_WIRE_H
#define PROFCAP_UTIL_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "util/cursor.h"

enum wire_type {
	WIRE_VARINT = 0,
	WIRE_I64 = 1,
	WIRE_LEN = 2,
	WIRE_I32 = 5,
};

/* A reader over [c.p, c.end); @why says what was wrong once it failed. */
struct wire {
	struct cursor c;
	const char *why;
};

/* One field as wire__next() read it. */
struct wire_field {
	__u32 num;
	enum wire_type wt;
	__u64 v;	 /* WIRE_VARINT, WIRE_I64, WIRE_I32: the value */
	struct wire sub; /* WIRE_LEN: a reader over its bytes */
};

/* A reader over the @len bytes at @data. */
struct wire wire__from(const void *data, size_t len);

/* Bytes left to read. */
static inline size_t wire__left(const struct wire *w)
{
	return (size_t)(w->c.end - w->c.p);
}

/* The bytes left, from where @w stands. */
static inline const __u8 *wire__pos(const struct wire *w)
{
	return w->c.p;
}

/* The next field of @w into @f: 1, 0 at the end of @w, or -EBADMSG (with
 * wire__why()) when the input is malformed. */
int wire__next(struct wire *w, struct wire_field *f);

/* One varint of @w (a packed list's element): 0 or -EBADMSG. */
int wire__varint(struct wire *w, __u64 *v);

/* Call @fn(@arg, value) for each value of a repeated varint field @f,
 * packed (WIRE_LEN) or not (WIRE_VARINT). 0, what @fn returned, -EBADMSG
 * for a malformed packed list, or -EPROTOTYPE when @f has another wire
 * type. */
int wire__each_varint(const struct wire_field *f, int (*fn)(void *arg, __u64 v), void *arg);

/* Values in repeated fixed64 field @f (packed or not) in *@n: 0, -EBADMSG
 * when a packed length is not a multiple of 8, -EPROTOTYPE as above. */
int wire__count_fixed64(const struct wire_field *f, size_t *n);

/* Why the last call on @w failed ("truncated ...", "field number 0", ...);
 * "malformed" when it did not say. */
const char *wire__why(const struct wire *w);

/* "varint", "fixed64", "length-delimited", "fixed32" or "group/invalid". */
const char *wire__type_name(enum wire_type wt);

#endif
