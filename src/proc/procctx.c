#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opentelemetry/proto/common/v1/common.tags.h"
#include "opentelemetry/proto/processcontext/v1development/process_context.tags.h"
#include "opentelemetry/proto/resource/v1/resource.tags.h"

#include "util/utf8.h"
#include "util/wire.h"
#include "proc/procctx.h"

#define SIGNATURE "OTEL_CTX"

/* Field numbers of the payload, from the .proto files under nanopb_protos/
 * (process_context.proto and the resource/common protos it uses). */
#define CTX_TAG(field) opentelemetry_proto_processcontext_v1development_ProcessContext_##field##_tag
#define COMMON_TAG(msg, field) opentelemetry_proto_common_v1_##msg##_##field##_tag
#define RESOURCE_TAG(field) opentelemetry_proto_resource_v1_Resource_##field##_tag

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

/* Well-formed UTF-8 without NUL, at most @max bytes. */
static bool text_ok(const struct wire *s, size_t max)
{
	size_t len = wire__left(s), i = 0, n;
	const __u8 *p = wire__pos(s);
	char tmp[5];

	if (len > max)
		return false;
	while (i < len) {
		if (!p[i])
			return false;
		/* utf8__seq() needs a NUL-terminated view of up to 4 bytes. */
		memset(tmp, 0, sizeof(tmp));
		memcpy(tmp, p + i, len - i < 4 ? len - i : 4);
		n = utf8__seq(tmp);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

static char *dup_text(const struct wire *s)
{
	size_t len = wire__left(s);
	char *d = malloc(len + 1);

	if (d) {
		if (len)
			memcpy(d, wire__pos(s), len);
		d[len] = '\0';
	}
	return d;
}

/* A field was met: its reader points into the input (an empty one too). */
static bool present(const struct wire *s)
{
	return wire__pos(s) != NULL;
}

/* The scalar AnyValue member @kind (bool, int or double) with bits @v as
 * text in *@val. */
static int any_number(int kind, __u64 v, char **val)
{
	char num[40];
	double d;

	if (kind == COMMON_TAG(AnyValue, bool_value)) {
		snprintf(num, sizeof(num), "%s", v ? "true" : "false");
	} else if (kind == COMMON_TAG(AnyValue, int_value)) {
		snprintf(num, sizeof(num), "%" PRId64, (int64_t)v);
	} else {
		memcpy(&d, &v, sizeof(d));
		snprintf(num, sizeof(num), "%.17g", d);
	}
	*val = strdup(num);
	return *val ? 0 : -ENOMEM;
}

/* AnyValue -> text in *@val (NULL when of a type we do not render; the
 * last oneof member wins, as protobuf says). */
static int read_any(struct wire r, char **val)
{
	struct wire str = wire__from(NULL, 0);
	struct wire_field f;
	__u64 keep = 0;
	int ret, kind = 0;

	*val = NULL;
	while ((ret = wire__next(&r, &f)) > 0) {
		if (f.num == COMMON_TAG(AnyValue, string_value) && f.wt == WIRE_LEN) {
			if (!text_ok(&f.sub, PROCCTX_MAX_VALUE))
				return -EBADMSG;
			str = f.sub;
			kind = (int)f.num;
		} else if ((f.num == COMMON_TAG(AnyValue, bool_value) ||
			    f.num == COMMON_TAG(AnyValue, int_value)) &&
			   f.wt == WIRE_VARINT) {
			keep = f.v;
			kind = (int)f.num;
		} else if (f.num == COMMON_TAG(AnyValue, double_value) && f.wt == WIRE_I64) {
			keep = f.v;
			kind = (int)f.num;
		} else if (f.num <= COMMON_TAG(AnyValue, string_value_strindex)) {
			kind = 0; /* a member we do not render replaces the value */
		}
	}
	if (ret)
		return ret;
	if (kind == COMMON_TAG(AnyValue, string_value)) {
		*val = dup_text(&str);
		return *val ? 0 : -ENOMEM;
	}
	return kind ? any_number(kind, keep, val) : 0;
}

static bool has_key(const struct procctx *c, const struct wire *key)
{
	size_t len = wire__left(key);

	for (size_t i = 0; i < c->n; i++)
		if (strlen(c->kv[i].key) == len && !memcmp(c->kv[i].key, wire__pos(key), len))
			return true;
	return false;
}

/* Call @fn(value, @arg) on every length-delimited field @field of message
 * @r, in order; stops at the first error it or @fn returns. */
static int each_field(struct wire r, __u32 field, int (*fn)(struct wire, void *), void *arg)
{
	struct wire_field f;
	int ret, err = 0;

	while (!err && (ret = wire__next(&r, &f)) > 0)
		if (f.num == field && f.wt == WIRE_LEN)
			err = fn(f.sub, arg);
	return err ?: ret;
}

static int take_last(struct wire sub, void *arg)
{
	*(struct wire *)arg = sub;
	return 0;
}

/* The key and value of KeyValue @r (the last of each, as protobuf merges);
 * they stay not present() when absent. */
static int kv_fields(struct wire r, struct wire *key, struct wire *val)
{
	int err = each_field(r, COMMON_TAG(KeyValue, key), take_last, key);

	return err ?: each_field(r, COMMON_TAG(KeyValue, value), take_last, val);
}

static int read_kv(struct wire r, void *arg)
{
	struct wire key = wire__from(NULL, 0), val = wire__from(NULL, 0);
	struct procctx *c = arg;
	char *v = NULL;
	int err;

	err = kv_fields(r, &key, &val);
	if (err)
		return err;
	if (!present(&key) || !wire__left(&key) || !present(&val))
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

static int read_resource(struct wire r, struct procctx *c)
{
	return each_field(r, RESOURCE_TAG(attributes), read_kv, c);
}

/* The string of AnyValue @any, when that is what it holds (a later member
 * of another type wins): not present() otherwise. */
static int any_string(struct wire any, struct wire *str)
{
	struct wire_field f;
	int ret;

	*str = wire__from(NULL, 0);
	while ((ret = wire__next(&any, &f)) > 0) {
		if (f.num == COMMON_TAG(AnyValue, string_value) && f.wt == WIRE_LEN)
			*str = f.sub;
		else if (f.num <= COMMON_TAG(AnyValue, string_value_strindex))
			*str = wire__from(NULL, 0);
	}
	return ret;
}

/* The key map: ArrayValue @r of AnyValue strings into out->thread_keys. */
static int read_key_map(struct wire r, void *arg)
{
	struct procctx *c = arg;
	struct wire_field f;
	struct wire str;
	int ret, err = 0;

	while (!err && (ret = wire__next(&r, &f)) > 0) {
		if (f.num != COMMON_TAG(ArrayValue, values) || f.wt != WIRE_LEN)
			continue;
		if (c->nthread_keys >= PROCCTX_MAX_THREAD_KEYS)
			return 0; /* indexes are uint8: the rest can never be named */
		err = any_string(f.sub, &str);
		if (!err && present(&str) && wire__left(&str) && text_ok(&str, PROCCTX_MAX_KEY)) {
			c->thread_keys[c->nthread_keys] = dup_text(&str);
			if (!c->thread_keys[c->nthread_keys])
				return -ENOMEM;
		}
		c->nthread_keys++;
	}
	return err ?: ret;
}

static bool key_is(const struct wire *k, const char *name)
{
	size_t len = strlen(name);

	return wire__left(k) == len && !memcmp(wire__pos(k), name, len);
}

enum { SCHEMA_NONE, SCHEMA_TLS, SCHEMA_OTHER }; /* threadlocal.schema_version */

/* One KeyValue of ProcessContext.attributes: the OTEP 4947 entries. */
static int read_ctx_attr(struct wire r, struct procctx *c, bool *seen_map, int *schema_kind)
{
	struct wire key = wire__from(NULL, 0), val = wire__from(NULL, 0);
	int err;

	err = kv_fields(r, &key, &val);
	if (err)
		return err;
	if (!present(&key) || !present(&val))
		return 0;
	if (key_is(&key, PROCCTX_SCHEMA)) {
		char *schema = NULL;

		err = read_any(val, &schema);
		if (err)
			return err;
		*schema_kind =
			!schema || (strcmp(schema, "tlsdesc_v1_dev") && strcmp(schema, "tls_v1"))
				? SCHEMA_OTHER
				: SCHEMA_TLS;
		free(schema);
		return 0;
	}
	if (!key_is(&key, PROCCTX_KEY_MAP) || *seen_map)
		return 0;
	*seen_map = true;
	return each_field(val, COMMON_TAG(AnyValue, array_value), read_key_map, c);
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
	struct wire r = wire__from(buf, len);
	int schema = SCHEMA_NONE, ret, err = 0;
	struct wire_field f;
	bool seen_map = false;

	if (!out || (!buf && len))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	while (!err && (ret = wire__next(&r, &f)) > 0) {
		if (f.num == CTX_TAG(resource) && f.wt == WIRE_LEN)
			err = read_resource(f.sub, out);
		else if (f.num == CTX_TAG(attributes) && f.wt == WIRE_LEN)
			err = read_ctx_attr(f.sub, out, &seen_map, &schema);
	}
	err = err ?: ret;
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
