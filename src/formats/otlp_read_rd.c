/* otlp_read_rd.c - errors, storage and field readers of the OTLP reader
 * (see otlp_read_rd.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/otlp_read_rd.h"

#define ARENA_CHUNK (256u << 10)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

/* ---- errors ------------------------------------------------------------------ */

static void where(const struct rd *r, char *out, size_t len)
{
	out[0] = '\0';
	switch (r->ctx) {
	case CTX_TOP:
		break;
	case CTX_DICT:
		snprintf(out, len, "dictionary: ");
		break;
	case CTX_ENTRY:
		snprintf(out, len, "dictionary: %s %zu: ", r->table, r->ientry);
		break;
	case CTX_RESOURCE:
		snprintf(out, len, "resource %zu: ", r->ires);
		break;
	case CTX_SCOPE:
		snprintf(out, len, "resource %zu, scope %zu: ", r->ires, r->iscope);
		break;
	case CTX_PROFILE:
		snprintf(out, len, "resource %zu, scope %zu, profile %zu: ", r->ires, r->iscope,
			 r->iprof);
		break;
	case CTX_SAMPLE:
		snprintf(out, len,
			 "sample %zu of resource %zu (scope %zu, profile %zu): ", r->isample,
			 r->ires, r->iscope, r->iprof);
		break;
	}
}

int otlp_rd__fail(struct rd *r, int err, const char *fmt, ...)
{
	char at[160];
	va_list ap;
	int n;

	if (!r->err || !r->errlen)
		return err;
	where(r, at, sizeof(at));
	n = snprintf(r->err, r->errlen, "%s", at);
	if (n < 0 || (size_t)n >= r->errlen)
		return err;
	va_start(ap, fmt);
	vsnprintf(r->err + n, r->errlen - n, fmt, ap);
	va_end(ap);
	return err;
}

int otlp_rd__nomem(struct rd *r)
{
	return otlp_rd__fail(r, -ENOMEM, "out of memory");
}

int otlp_rd__out_of_range(struct rd *r, const char *field, __u64 idx, const char *table, size_t n)
{
	if ((__s64)idx < 0)
		return otlp_rd__fail(r, -EBADMSG, "%s %lld is negative", field, (long long)idx);
	return otlp_rd__fail(r, -EBADMSG, "%s %llu out of range (%s has %zu entries)", field,
			     (unsigned long long)idx, table, n);
}

int otlp_rd__too_large(struct rd *r, const char *field, __u64 idx)
{
	if ((__s64)idx < 0)
		return otlp_rd__fail(r, -EBADMSG, "%s %lld is negative", field, (long long)idx);
	return otlp_rd__fail(r, -EBADMSG, "%s %llu is too large", field, (unsigned long long)idx);
}

static int wire_err(struct rd *r, const struct wire *w)
{
	return otlp_rd__fail(r, -EBADMSG, "malformed protobuf (%s)", wire__why(w));
}

bool otlp_rd__next(struct rd *r, struct wire *w, struct wire_field *f, int *err)
{
	int ret = wire__next(w, f);

	if (ret < 0)
		*err = wire_err(r, w);
	return ret > 0;
}

int otlp_rd__want(struct rd *r, const struct wire_field *f, enum wire_type wt, const char *field)
{
	if (f->wt == wt)
		return 0;
	return otlp_rd__fail(r, -EBADMSG, "%s has wire type %s, expected %s", field,
			     wire__type_name(f->wt), wire__type_name(wt));
}

/* ---- storage ------------------------------------------------------------------ */

int otlp_rd__copy(struct rd *r, const void *p, size_t len, const char **out)
{
	struct arena_chunk *c = r->arena;
	char *dst;

	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return otlp_rd__nomem(r);
		c->size = size;
		c->used = 0;
		c->next = r->arena;
		r->arena = c;
	}
	dst = c->data + c->used;
	if (len)
		memcpy(dst, p, len);
	dst[len] = '\0';
	c->used += len + 1;
	*out = dst;
	return 0;
}

void otlp_rd__arena_free(struct rd *r)
{
	struct arena_chunk *c = r->arena;

	while (c) {
		struct arena_chunk *next = c->next;

		free(c);
		c = next;
	}
	r->arena = NULL;
}

void *otlp_rd__vec_push(struct vec *v, size_t size, int *err)
{
	void *d;

	if (v->n >= v->max) {
		*err = -E2BIG;
		return NULL;
	}
	if (v->n == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 64;

		d = realloc(v->d, ncap * size);
		if (!d) {
			*err = -ENOMEM;
			return NULL;
		}
		v->d = d;
		v->cap = ncap;
	}
	d = (char *)v->d + v->n++ * size;
	memset(d, 0, size);
	return d;
}

int otlp_rd__ids_push(struct ids *l, __u32 v)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 256;
		__u32 *d;

		if (l->n >= OTLP_RD_MAX_POOL)
			return -E2BIG;
		d = realloc(l->v, ncap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		l->v = d;
		l->cap = ncap;
	}
	l->v[l->n++] = v;
	return 0;
}

/* ---- field readers --------------------------------------------------------- */

int otlp_rd__varint(struct rd *r, const struct wire_field *f, const char *field, __u64 *v)
{
	int err = otlp_rd__want(r, f, WIRE_VARINT, field);

	if (!err)
		*v = f->v;
	return err;
}

int otlp_rd__fixed64(struct rd *r, const struct wire_field *f, const char *field, __u64 *v)
{
	int err = otlp_rd__want(r, f, WIRE_I64, field);

	if (!err)
		*v = f->v;
	return err;
}

int otlp_rd__sub(struct rd *r, const struct wire_field *f, const char *field, struct wire *sub)
{
	int err = otlp_rd__want(r, f, WIRE_LEN, field);

	if (!err)
		*sub = f->sub;
	return err;
}

int otlp_rd__string(struct rd *r, const struct wire_field *f, const char *field, const char **out)
{
	int err = otlp_rd__want(r, f, WIRE_LEN, field);

	return err ?: otlp_rd__copy(r, wire__pos(&f->sub), wire__left(&f->sub), out);
}

struct ids_ctx {
	struct ids *l;
	__u64 bad;
};

static int push_id(void *arg, __u64 v)
{
	struct ids_ctx *c = arg;

	if (v > UINT32_MAX - 1) {
		c->bad = v;
		return -ERANGE;
	}
	return otlp_rd__ids_push(c->l, (__u32)v);
}

int otlp_rd__ids(struct rd *r, const struct wire_field *f, const char *field, struct ids *l)
{
	struct ids_ctx c = {.l = l};
	int err = wire__each_varint(f, push_id, &c);

	switch (err) {
	case 0:
		return 0;
	case -ERANGE:
		return otlp_rd__too_large(r, field, c.bad);
	case -EPROTOTYPE:
		return otlp_rd__want(r, f, WIRE_LEN, field);
	case -EBADMSG:
		return otlp_rd__fail(r, err,
				     "malformed protobuf (%s: a packed list ends "
				     "inside a varint)",
				     field);
	default:
		return otlp_rd__fail(r, err, "%s: too many indices", field);
	}
}

int otlp_rd__value(struct rd *r, const struct wire_field *f, const char *field, struct value *v)
{
	struct wire sub;
	struct wire_field g;
	__u64 x = 0;
	int err;

	memset(v, 0, sizeof(*v));
	err = otlp_rd__sub(r, f, field, &sub);
	while (!err && otlp_rd__next(r, &sub, &g, &err)) {
		switch (g.num) {
		case COMMON_TAG(AnyValue, string_value):
			v->kind = VAL_STR;
			v->has_strindex = false;
			err = otlp_rd__string(r, &g, "string_value", &v->str);
			break;
		case COMMON_TAG(AnyValue, int_value):
			v->kind = VAL_INT;
			err = otlp_rd__varint(r, &g, "int_value", &x);
			v->num = (__s64)x;
			break;
		case COMMON_TAG(AnyValue, string_value_strindex):
			v->kind = VAL_STR;
			v->has_strindex = true;
			v->str = NULL;
			err = otlp_rd__varint(r, &g, "string_value_strindex", &v->strindex);
			break;
		case COMMON_TAG(AnyValue, bool_value):
			v->kind = VAL_BOOL;
			err = otlp_rd__varint(r, &g, "bool_value", &x);
			v->num = !!x;
			break;
		case COMMON_TAG(AnyValue, double_value):
		case COMMON_TAG(AnyValue, array_value):
		case COMMON_TAG(AnyValue, kvlist_value):
		case COMMON_TAG(AnyValue, bytes_value):
			v->kind = VAL_OTHER;
			break;
		default:
			break;
		}
	}
	return err;
}
