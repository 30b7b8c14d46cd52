#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/utf8.h"
#include "proc/procctx.h"

#define SIGNATURE "OTEL_CTX"

/* Protobuf field numbers of the payload (process_context.proto and the
 * resource/common protos it uses). */
enum {
	F_CTX_RESOURCE = 1,
	F_CTX_ATTRIBUTES = 2,
	F_ANY_ARRAY = 5,
	F_ARRAY_VALUES = 1,
	F_RES_ATTRIBUTES = 1,
	F_KV_KEY = 1,
	F_KV_VALUE = 2,
	F_ANY_STRING = 1,
	F_ANY_BOOL = 2,
	F_ANY_INT = 3,
	F_ANY_DOUBLE = 4,
};

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

bool procctx__is_mapping(const struct procmaps_entry *e)
{
	static const char *const names[] = {"[anon:OTEL_CTX]", "[anon_shmem:OTEL_CTX]",
					    "/memfd:OTEL_CTX"};
	size_t i;

	if (!e || !e->path || !(e->perms & PROCMAPS_READ) || e->end < e->start ||
	    e->end - e->start < PROCCTX_HEADER_SIZE)
		return false;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(e->path, names[i]))
			return true;
	return false;
}

static __u64 get_le(const unsigned char *p, int n)
{
	__u64 v = 0;

	while (n--)
		v = (v << 8) | p[n];
	return v;
}

int procctx__parse_header(const void *buf, size_t len, __u64 map_start, __u64 map_end,
			  struct procctx_header *out)
{
	const unsigned char *b = buf;

	if (!buf || !out || len < PROCCTX_HEADER_SIZE || memcmp(b, SIGNATURE, 8))
		return -EINVAL;
	out->version = (__u32)get_le(b + 8, 4);
	out->payload_size = (__u32)get_le(b + 12, 4);
	out->published_at_ns = get_le(b + 16, 8);
	out->payload = get_le(b + 24, 8);
	if (out->version != PROCCTX_VERSION)
		return -EPROTONOSUPPORT;
	if (!out->published_at_ns)
		return -EAGAIN;
	if (out->payload_size > PROCCTX_MAX_PAYLOAD)
		return -EFBIG;
	if (!out->payload || out->payload + out->payload_size < out->payload)
		return -EINVAL;
	/* A payload placed in the mapping must end inside it. */
	if (out->payload >= map_start && out->payload < map_end &&
	    out->payload + out->payload_size > map_end)
		return -EINVAL;
	return 0;
}

/* ---- bounded protobuf reader --------------------------------------------- */

struct pb {
	const unsigned char *p, *end;
};

static int pb_varint(struct pb *r, __u64 *v)
{
	__u64 x = 0;
	int shift;

	for (shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end)
			return -EBADMSG;
		x |= (__u64)(*r->p & 0x7f) << shift;
		if (!(*r->p++ & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EBADMSG;
}

/* Next field: *@field, *@wt; for WT_LEN *@sub gets the bytes, for
 * WT_VARINT/WT_I64/WT_I32 *@num the value. Groups are refused. */
static int pb_next(struct pb *r, __u32 *field, int *wt, struct pb *sub, __u64 *num)
{
	__u64 tag, len;
	int err = pb_varint(r, &tag);

	if (err)
		return err;
	if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff)
		return -EBADMSG;
	*field = (__u32)(tag >> 3);
	*wt = (int)(tag & 7);
	switch (*wt) {
	case WT_VARINT:
		return pb_varint(r, num);
	case WT_I64:
	case WT_I32:
		len = *wt == WT_I64 ? 8 : 4;
		if ((size_t)(r->end - r->p) < len)
			return -EBADMSG;
		*num = get_le(r->p, (int)len);
		r->p += len;
		return 0;
	case WT_LEN:
		err = pb_varint(r, &len);
		if (err || len > (size_t)(r->end - r->p))
			return -EBADMSG;
		sub->p = r->p;
		sub->end = r->p + len;
		r->p += len;
		return 0;
	default:
		return -EBADMSG;
	}
}

/* Well-formed UTF-8 without NUL, at most @max bytes. */
static bool text_ok(const struct pb *s, size_t max)
{
	size_t len = (size_t)(s->end - s->p), i = 0, n;
	char tmp[5];

	if (len > max)
		return false;
	while (i < len) {
		if (!s->p[i])
			return false;
		/* utf8__seq() needs a NUL-terminated view of up to 4 bytes. */
		memset(tmp, 0, sizeof(tmp));
		memcpy(tmp, s->p + i, len - i < 4 ? len - i : 4);
		n = utf8__seq(tmp);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

static char *dup_text(const struct pb *s)
{
	size_t len = (size_t)(s->end - s->p);
	char *d = malloc(len + 1);

	if (d) {
		memcpy(d, s->p, len);
		d[len] = '\0';
	}
	return d;
}

/* AnyValue -> text in *@val (NULL when of a type we do not render; the
 * last oneof member wins, as protobuf says). */
static int read_any(struct pb r, char **val)
{
	char num[40];
	struct pb sub = {NULL, NULL}, str = {NULL, NULL};
	int wt, err, kind = 0;
	__u32 f;
	__u64 v = 0, keep = 0;

	*val = NULL;
	while (r.p < r.end) {
		err = pb_next(&r, &f, &wt, &sub, &v);
		if (err)
			return err;
		if (f == F_ANY_STRING && wt == WT_LEN) {
			if (!text_ok(&sub, PROCCTX_MAX_VALUE))
				return -EBADMSG;
			str = sub;
			kind = f;
		} else if ((f == F_ANY_BOOL || f == F_ANY_INT) && wt == WT_VARINT) {
			keep = v;
			kind = f;
		} else if (f == F_ANY_DOUBLE && wt == WT_I64) {
			keep = v;
			kind = f;
		} else if (f >= 1 && f <= 8) {
			kind = 0; /* a member we do not render replaces the value */
		}
	}
	switch (kind) {
	case F_ANY_STRING:
		*val = dup_text(&str);
		return *val ? 0 : -ENOMEM;
	case F_ANY_BOOL:
		snprintf(num, sizeof(num), "%s", keep ? "true" : "false");
		break;
	case F_ANY_INT:
		snprintf(num, sizeof(num), "%" PRId64, (int64_t)keep);
		break;
	case F_ANY_DOUBLE: {
		double d;

		memcpy(&d, &keep, sizeof(d));
		snprintf(num, sizeof(num), "%.17g", d);
		break;
	}
	default:
		return 0;
	}
	*val = strdup(num);
	return *val ? 0 : -ENOMEM;
}

static bool has_key(const struct procctx *c, const struct pb *key)
{
	size_t len = (size_t)(key->end - key->p);

	for (size_t i = 0; i < c->n; i++)
		if (strlen(c->kv[i].key) == len && !memcmp(c->kv[i].key, key->p, len))
			return true;
	return false;
}

/* Call @fn(value, @arg) on every length-delimited field @field of message
 * @r, in order; stops at the first error it or @fn returns. */
static int each_field(struct pb r, __u32 field, int (*fn)(struct pb, void *), void *arg)
{
	struct pb sub = {NULL, NULL};
	int wt, err;
	__u32 f;
	__u64 num;

	while (r.p < r.end) {
		err = pb_next(&r, &f, &wt, &sub, &num);
		if (err)
			return err;
		if (f == field && wt == WT_LEN) {
			err = fn(sub, arg);
			if (err)
				return err;
		}
	}
	return 0;
}

static int take_last(struct pb sub, void *arg)
{
	*(struct pb *)arg = sub;
	return 0;
}

/* The key and value of KeyValue @r (the last of each, as protobuf merges);
 * p stays NULL for one that is absent. */
static int kv_fields(struct pb r, struct pb *key, struct pb *val)
{
	int err = each_field(r, F_KV_KEY, take_last, key);

	return err ? err : each_field(r, F_KV_VALUE, take_last, val);
}

static int read_kv(struct pb r, void *arg)
{
	struct pb key = {NULL, NULL}, val = {NULL, NULL};
	struct procctx *c = arg;
	char *v = NULL;
	int err;

	err = kv_fields(r, &key, &val);
	if (err)
		return err;
	if (!key.p || key.p == key.end || !val.p)
		return 0; /* no key or no value: nothing to say */
	if (!text_ok(&key, PROCCTX_MAX_KEY))
		return -EBADMSG;
	err = read_any(val, &v);
	if (err || !v)
		return err;
	if (c->n >= PROCCTX_MAX_ATTRS || has_key(c, &key)) {
		free(v);
		return 0;
	}
	c->kv[c->n].key = dup_text(&key);
	if (!c->kv[c->n].key) {
		free(v);
		return -ENOMEM;
	}
	c->kv[c->n++].value = v;
	return 0;
}

static int read_resource(struct pb r, struct procctx *c)
{
	return each_field(r, F_RES_ATTRIBUTES, read_kv, c);
}

/* The key map: ArrayValue @r of AnyValue strings into out->thread_keys. */
static int read_key_map(struct pb r, void *arg)
{
	struct procctx *c = arg;
	struct pb sub = {NULL, NULL}, any, str;
	int wt, err, wt2;
	__u32 f, f2;
	__u64 num;

	while (r.p < r.end) {
		err = pb_next(&r, &f, &wt, &sub, &num);
		if (err)
			return err;
		if (f != F_ARRAY_VALUES || wt != WT_LEN)
			continue;
		if (c->nthread_keys >= PROCCTX_MAX_THREAD_KEYS)
			return 0; /* indexes are uint8: the rest can never be named */
		any = sub;
		str.p = NULL;
		while (any.p < any.end) {
			struct pb s2 = {NULL, NULL};

			err = pb_next(&any, &f2, &wt2, &s2, &num);
			if (err)
				return err;
			if (f2 == F_ANY_STRING && wt2 == WT_LEN)
				str = s2;
			else if (f2 >= 1 && f2 <= 8)
				str.p = NULL; /* a later member of another type wins */
		}
		if (str.p && str.p != str.end && text_ok(&str, PROCCTX_MAX_KEY)) {
			c->thread_keys[c->nthread_keys] = dup_text(&str);
			if (!c->thread_keys[c->nthread_keys])
				return -ENOMEM;
		}
		c->nthread_keys++;
	}
	return 0;
}

static bool key_is(const struct pb *k, const char *name)
{
	size_t len = strlen(name);

	return (size_t)(k->end - k->p) == len && !memcmp(k->p, name, len);
}

enum { SCHEMA_NONE, SCHEMA_TLS, SCHEMA_OTHER }; /* threadlocal.schema_version */

/* One KeyValue of ProcessContext.attributes: the OTEP 4947 entries. */
static int read_ctx_attr(struct pb r, struct procctx *c, bool *seen_map, int *schema_kind)
{
	struct pb key = {NULL, NULL}, val = {NULL, NULL};
	int err;

	err = kv_fields(r, &key, &val);
	if (err)
		return err;
	if (!key.p || !val.p)
		return 0;
	if (key_is(&key, PROCCTX_SCHEMA)) {
		char *schema = NULL;

		err = read_any(val, &schema);
		if (err)
			return err;
		*schema_kind = !schema || (strcmp(schema, "tlsdesc_v1_dev") && strcmp(schema, "tls_v1"))
				       ? SCHEMA_OTHER
				       : SCHEMA_TLS;
		free(schema);
		return 0;
	}
	if (!key_is(&key, PROCCTX_KEY_MAP) || *seen_map)
		return 0;
	*seen_map = true;
	return each_field(val, F_ANY_ARRAY, read_key_map, c);
}

static void drop_thread_keys(struct procctx *c)
{
	for (size_t i = 0; i < c->nthread_keys; i++)
		free(c->thread_keys[i]);
	memset(c->thread_keys, 0, sizeof(c->thread_keys));
	c->nthread_keys = 0;
}

int procctx__decode(const void *buf, size_t len, struct procctx *out)
{
	bool seen_map = false;
	int schema = SCHEMA_NONE;

	struct pb r = {buf, (const unsigned char *)buf + len}, sub = {NULL, NULL};
	int wt, err = 0;
	__u32 f;
	__u64 num;

	if (!out || (!buf && len))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	while (r.p < r.end && !err) {
		err = pb_next(&r, &f, &wt, &sub, &num);
		if (!err && f == F_CTX_RESOURCE && wt == WT_LEN)
			err = read_resource(sub, out);
		else if (!err && f == F_CTX_ATTRIBUTES && wt == WT_LEN)
			err = read_ctx_attr(sub, out, &seen_map, &schema);
	}
	if (!err && schema == SCHEMA_OTHER)
		drop_thread_keys(out);
	out->thread_ctx = !err && (schema == SCHEMA_TLS || (schema == SCHEMA_NONE && seen_map));
	if (err)
		procctx__clear(out);
	return err;
}

void procctx__clear(struct procctx *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->kv[i].key);
		free(c->kv[i].value);
	}
	drop_thread_keys(c);
	memset(c, 0, sizeof(*c));
}

/* ---- reading another process ---------------------------------------------- */

static int read_at(int fd, __u64 addr, void *dst, size_t len)
{
	size_t done = 0;
	ssize_t n;

	if (addr > (__u64)INT64_MAX || len > (__u64)INT64_MAX - addr)
		return -EIO;
	while (done < len) {
		n = pread(fd, (char *)dst + done, len - done, (off_t)(addr + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

static int read_header(int fd, __u64 start, __u64 end, struct procctx_header *h)
{
	unsigned char b[PROCCTX_HEADER_SIZE];
	int err = read_at(fd, start, b, sizeof(b));

	return err ?: procctx__parse_header(b, sizeof(b), start, end, h);
}

__u64 procctx__published_at(int mem_fd, __u64 start, __u64 end)
{
	struct procctx_header h;

	return read_header(mem_fd, start, end, &h) ? 0 : h.published_at_ns;
}

int procctx__read(int mem_fd, __u64 start, __u64 end, struct procctx *out)
{
	struct procctx_header h, again;
	unsigned char *payload = NULL;
	int err = -EAGAIN, tries;

	memset(out, 0, sizeof(*out));
	for (tries = 0; tries < PROCCTX_READ_TRIES; tries++) {
		err = read_header(mem_fd, start, end, &h);
		if (err == -EAGAIN)
			continue;
		if (err)
			break;
		/* Sized to this header (bounded by parse_header), not the cap. */
		free(payload);
		payload = malloc(h.payload_size ? h.payload_size : 1);
		if (!payload) {
			err = -ENOMEM;
			break;
		}
		err = read_at(mem_fd, h.payload, payload, h.payload_size);
		if (err)
			break;
		err = read_header(mem_fd, start, end, &again);
		if (err == -EAGAIN || (!err && (again.published_at_ns != h.published_at_ns ||
						again.payload != h.payload ||
						again.payload_size != h.payload_size))) {
			err = -EAGAIN;
			continue;
		}
		if (err)
			break;
		err = procctx__decode(payload, h.payload_size, out);
		if (!err)
			out->published_at_ns = h.published_at_ns;
		break;
	}
	free(payload);
	return err;
}
