#include <errno.h>

#include "util/wire.h"

/* Protobuf field numbers are 29 bits. */
#define WIRE_MAX_FIELD ((1u << 29) - 1)
#define WIRE_MAX_VARINT 10

struct wire wire__from(const void *data, size_t len)
{
	struct wire w = {.why = NULL};

	if (data) {
		w.c.p = data;
		w.c.end = w.c.p + len;
	}
	return w;
}

static int wire_bad(struct wire *w, const char *why)
{
	w->why = why;
	w->c.bad = true;
	return -EBADMSG;
}

int wire__varint(struct wire *w, __u64 *v)
{
	const __u8 *start = w->c.p;
	size_t n;

	*v = cursor__uleb(&w->c);
	if (w->c.bad)
		return wire_bad(w, "truncated: data ends inside a field");
	n = (size_t)(w->c.p - start);
	if (n > WIRE_MAX_VARINT)
		return wire_bad(w, "varint overflow: longer than 10 bytes");
	return 0;
}

int wire__next(struct wire *w, struct wire_field *f)
{
	__u64 key, len;
	int err;

	if (w->c.bad)
		return -EBADMSG;
	if (w->c.p >= w->c.end)
		return 0;
	err = wire__varint(w, &key);
	if (err)
		return err;
	if (!(key >> 3))
		return wire_bad(w, "field number 0");
	if (key >> 3 > WIRE_MAX_FIELD)
		return wire_bad(w, "field number too large");
	f->num = (__u32)(key >> 3);
	f->wt = (enum wire_type)(key & 7);
	f->v = 0;
	f->sub = wire__from(NULL, 0);
	switch (f->wt) {
	case WIRE_VARINT:
		err = wire__varint(w, &f->v);
		break;
	case WIRE_I64:
	case WIRE_I32:
		f->v = cursor__fixed(&w->c, f->wt == WIRE_I64 ? 8 : 4);
		err = w->c.bad ? wire_bad(w, "truncated: data ends inside a field") : 0;
		break;
	case WIRE_LEN:
		err = wire__varint(w, &len);
		if (!err && len > wire__left(w))
			err = wire_bad(w, "a length runs past the end of its message");
		if (!err) {
			f->sub = wire__from(w->c.p, (size_t)len);
			w->c.p += len;
		}
		break;
	default:
		err = wire_bad(w, "group or invalid wire type");
	}
	return err < 0 ? err : 1;
}

int wire__each_varint(const struct wire_field *f, int (*fn)(void *arg, __u64 v), void *arg)
{
	struct wire items;
	__u64 v;
	int err;

	if (f->wt == WIRE_VARINT)
		return fn(arg, f->v);
	if (f->wt != WIRE_LEN)
		return -EPROTOTYPE;
	items = f->sub;
	while (wire__left(&items)) {
		err = wire__varint(&items, &v);
		err = err ?: fn(arg, v);
		if (err)
			return err;
	}
	return 0;
}

int wire__count_fixed64(const struct wire_field *f, size_t *n)
{
	if (f->wt == WIRE_I64) {
		(*n)++;
		return 0;
	}
	if (f->wt != WIRE_LEN)
		return -EPROTOTYPE;
	if (wire__left(&f->sub) % 8)
		return -EBADMSG;
	*n += wire__left(&f->sub) / 8;
	return 0;
}

const char *wire__why(const struct wire *w)
{
	return w->why ? w->why : "malformed";
}

const char *wire__type_name(enum wire_type wt)
{
	switch (wt) {
	case WIRE_VARINT:
		return "varint";
	case WIRE_I64:
		return "fixed64";
	case WIRE_LEN:
		return "length-delimited";
	case WIRE_I32:
		return "fixed32";
	default:
		return "group/invalid";
	}
}
