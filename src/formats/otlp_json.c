/* otlp_json.c - OTLP/JSON encoder (see otlp_json.h).
 *
 * Mirrors otlp.c message for message: one ResourceProfiles per process
 * (or one with the host attributes only when there is no process), each
 * with one ScopeProfiles holding one Profile, and the shared dictionary
 * with the model's tables index for index. Writing is sticky on error: the
 * first failed append is remembered and everything after it is a no-op.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/otlp_json.h"
#include "model/profile.h"

struct jw {
	struct buf *b;
	int err;
};

static void raw(struct jw *j, const char *s, size_t len)
{
	if (!j->err)
		j->err = buf__append(j->b, s, len);
}

static void lit(struct jw *j, const char *s)
{
	raw(j, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at @s (@n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	__u32 cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* No overlong forms, surrogates or code points past U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* A JSON string literal of @len bytes at @s. */
static void str_n(struct jw *j, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0, n;
	char esc[8];

	lit(j, "\"");
	while (i < len) {
		unsigned char c = u[i];

		n = utf8_len(u + i, len - i);
		if (n && c >= 0x20 && c != '"' && c != '\\') {
			i += n;
			run += n;
			continue;
		}
		raw(j, s + i - run, run);
		run = 0;
		if (c == '"')
			lit(j, "\\\"");
		else if (c == '\\')
			lit(j, "\\\\");
		else if (c == '\n')
			lit(j, "\\n");
		else if (c == '\t')
			lit(j, "\\t");
		else if (c == '\r')
			lit(j, "\\r");
		else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			lit(j, esc);
		} else {
			lit(j, "\\ufffd"); /* invalid UTF-8 byte */
		}
		i++;
	}
	raw(j, s + i - run, run);
	lit(j, "\"");
}

static void str(struct jw *j, const char *s)
{
	str_n(j, s ? s : "", s ? strlen(s) : 0);
}

/* A 64-bit value as a JSON string of its decimal digits. */
static void int64_str(struct jw *j, __s64 v)
{
	char tmp[32];

	snprintf(tmp, sizeof(tmp), "\"%" PRId64 "\"", (int64_t)v);
	lit(j, tmp);
}

static void uint64_str(struct jw *j, __u64 v)
{
	char tmp[32];

	snprintf(tmp, sizeof(tmp), "\"%" PRIu64 "\"", (uint64_t)v);
	lit(j, tmp);
}

/* "key": */
static void key(struct jw *j, bool *first, const char *k)
{
	if (!*first)
		lit(j, ",");
	*first = false;
	str(j, k);
	lit(j, ":");
}

static void num32(struct jw *j, bool *first, const char *k, __s64 v)
{
	char tmp[32];

	if (!v)
		return;
	key(j, first, k);
	snprintf(tmp, sizeof(tmp), "%" PRId64, (int64_t)v);
	lit(j, tmp);
}

/* A 64-bit field: decimal in a string. */
static void u64s(struct jw *j, bool *first, const char *k, __u64 v)
{
	if (!v)
		return;
	key(j, first, k);
	uint64_str(j, v);
}

static void s64s(struct jw *j, bool *first, const char *k, __s64 v)
{
	if (!v)
		return;
	key(j, first, k);
	int64_str(j, v);
}

static void hex(struct jw *j, bool *first, const char *k, const __u8 *v, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[2];
	size_t i;

	key(j, first, k);
	lit(j, "\"");
	for (i = 0; i < n; i++) {
		tmp[0] = digits[v[i] >> 4];
		tmp[1] = digits[v[i] & 15];
		raw(j, tmp, 2);
	}
	lit(j, "\"");
}

static void base64(struct jw *j, bool *first, const char *k, const __u8 *v, size_t n)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char tmp[4];
	size_t i;

	key(j, first, k);
	lit(j, "\"");
	for (i = 0; i < n; i += 3) {
		__u32 w = (__u32)v[i] << 16;

		if (i + 1 < n)
			w |= (__u32)v[i + 1] << 8;
		if (i + 2 < n)
			w |= v[i + 2];
		tmp[0] = alphabet[w >> 18 & 63];
		tmp[1] = alphabet[w >> 12 & 63];
		tmp[2] = i + 1 < n ? alphabet[w >> 6 & 63] : '=';
		tmp[3] = i + 2 < n ? alphabet[w & 63] : '=';
		raw(j, tmp, 4);
	}
	lit(j, "\"");
}

/* "k":[i, j, ...] of 32-bit indices; nothing when empty. */
static void indices(struct jw *j, bool *first, const char *k, const __u32 *v, size_t n)
{
	char tmp[16];
	size_t i;

	if (!n)
		return;
	key(j, first, k);
	lit(j, "[");
	for (i = 0; i < n; i++) {
		snprintf(tmp, sizeof(tmp), "%s%" PRIu32, i ? "," : "", v[i]);
		lit(j, tmp);
	}
	lit(j, "]");
}

/* ---- dictionary --------------------------------------------------------- */

static void mappings(struct jw *j, const struct profile *p)
{
	size_t i, n = profile__mapping_count(p);

	lit(j, "[{}");
	for (i = 1; i < n; i++) {
		const struct profile_mapping_entry *e = profile__mapping(p, (__u32)i);
		bool first = true;

		lit(j, ",{");
		u64s(j, &first, "memoryStart", e->start);
		u64s(j, &first, "memoryLimit", e->limit);
		u64s(j, &first, "fileOffset", e->file_offset);
		num32(j, &first, "filenameStrindex", e->filename);
		indices(j, &first, "attributeIndices", e->attrs, e->nattrs);
		lit(j, "}");
	}
	lit(j, "]");
}

static void locations(struct jw *j, const struct profile *p)
{
	size_t i, n = profile__location_count(p);

	lit(j, "[{}");
	for (i = 1; i < n; i++) {
		const struct profile_location_entry *e = profile__location(p, (__u32)i);
		bool first = true;

		lit(j, ",{");
		num32(j, &first, "mappingIndex", e->mapping);
		u64s(j, &first, "address", e->address);
		if (e->function) {
			bool lf = true;

			key(j, &first, "lines");
			lit(j, "[{");
			num32(j, &lf, "functionIndex", e->function);
			lit(j, "}]");
		}
		indices(j, &first, "attributeIndices", &e->attr, e->attr ? 1 : 0);
		lit(j, "}");
	}
	lit(j, "]");
}

static void functions(struct jw *j, const struct profile *p)
{
	size_t i, n = profile__function_count(p);

	lit(j, "[{}");
	for (i = 1; i < n; i++) {
		const struct profile_function_entry *e = profile__function(p, (__u32)i);
		bool first = true;

		lit(j, ",{");
		num32(j, &first, "nameStrindex", e->name);
		num32(j, &first, "systemNameStrindex", e->system_name);
		num32(j, &first, "filenameStrindex", e->filename);
		lit(j, "}");
	}
	lit(j, "]");
}

static void strings(struct jw *j, const struct profile *p)
{
	size_t i, len, n = profile__string_count(p);

	lit(j, "[\"\"");
	for (i = 1; i < n; i++) {
		const char *s = profile__string(p, (__u32)i, &len);

		lit(j, ",");
		str_n(j, s, len);
	}
	lit(j, "]");
}

static void attributes(struct jw *j, const struct profile *p)
{
	size_t i, n = profile__attr_count(p);

	lit(j, "[{}");
	for (i = 1; i < n; i++) {
		const struct profile_attr_entry *e = profile__attr(p, (__u32)i);
		bool first = true, vf = true;

		lit(j, ",{");
		num32(j, &first, "keyStrindex", e->key);
		if (e->kind == PROFILE_ATTR_STR) {
			key(j, &first, "value");
			lit(j, "{");
			key(j, &vf, "stringValue");
			str(j, e->str_value);
			lit(j, "}");
		} else if (e->kind == PROFILE_ATTR_INT) {
			key(j, &first, "value");
			lit(j, "{");
			/* intValue is int64: a string even when 0. */
			key(j, &vf, "intValue");
			int64_str(j, e->int_value);
			lit(j, "}");
		}
		num32(j, &first, "unitStrindex", e->unit);
		lit(j, "}");
	}
	lit(j, "]");
}

static void stacks(struct jw *j, const struct profile *p)
{
	size_t i, nl, n = profile__stack_count(p);

	lit(j, "[{}");
	for (i = 1; i < n; i++) {
		const __u32 *locs = profile__stack(p, (__u32)i, &nl);
		bool first = true;

		lit(j, ",{");
		indices(j, &first, "locationIndices", locs, nl);
		lit(j, "}");
	}
	lit(j, "]");
}

static void dictionary(struct jw *j, const struct profile *p)
{
	static const __u8 zero[16];
	bool first = true, lf = true;

	lit(j, "{");
	key(j, &first, "mappingTable");
	mappings(j, p);
	key(j, &first, "locationTable");
	locations(j, p);
	key(j, &first, "functionTable");
	functions(j, p);
	/* The zero link with full-width ids, as otlp.c writes it. */
	key(j, &first, "linkTable");
	lit(j, "[{");
	hex(j, &lf, "traceId", zero, 16);
	hex(j, &lf, "spanId", zero, 8);
	lit(j, "}]");
	key(j, &first, "stringTable");
	strings(j, p);
	key(j, &first, "attributeTable");
	attributes(j, p);
	key(j, &first, "stackTable");
	stacks(j, p);
	lit(j, "}");
}

/* ---- resources ------------------------------------------------------------- */

/* Resource attributes, keys unique, first wins (same order as otlp.c). */
struct res {
	const char *keys[8 + PROFILE_MAX_RESOURCE_ATTRS];
	size_t n;
	struct jw *j;
	bool first;
};

static bool res_take(struct res *r, const char *k)
{
	size_t i;

	if (r->n >= sizeof(r->keys) / sizeof(r->keys[0]))
		return false;
	for (i = 0; i < r->n; i++)
		if (!strcmp(r->keys[i], k))
			return false;
	r->keys[r->n++] = k;
	return true;
}

static void res_str(struct res *r, const char *k, const char *v)
{
	bool f = true, vf = true;

	if (!v || !*v || !res_take(r, k))
		return;
	if (!r->first)
		lit(r->j, ",");
	r->first = false;
	lit(r->j, "{");
	key(r->j, &f, "key");
	str(r->j, k);
	key(r->j, &f, "value");
	lit(r->j, "{");
	key(r->j, &vf, "stringValue");
	str(r->j, v);
	lit(r->j, "}}");
}

static void res_int(struct res *r, const char *k, __s64 v)
{
	bool f = true, vf = true;

	if (!res_take(r, k))
		return;
	if (!r->first)
		lit(r->j, ",");
	r->first = false;
	lit(r->j, "{");
	key(r->j, &f, "key");
	str(r->j, k);
	key(r->j, &f, "value");
	lit(r->j, "{");
	key(r->j, &vf, "intValue");
	int64_str(r->j, v);
	lit(r->j, "}}");
}

static void resource_attrs(struct jw *j, const struct profile *p, size_t proc)
{
	const struct profile_meta *meta = profile__meta(p);
	struct res r = {.n = 0, .j = j, .first = true};
	size_t i;

	lit(j, "[");
	if (proc != SIZE_MAX) {
		const struct profile_process_desc *d = profile__process(p, proc);

		res_int(&r, "process.pid", d->pid);
		res_str(&r, "process.executable.name", d->exe_name);
		res_str(&r, "process.executable.path", d->exe_path);
		res_str(&r, "process.command_line", d->cmdline);
		res_str(&r, "container.id", d->container_id);
		for (i = 0; i < d->nattrs; i++)
			res_str(&r, d->attrs[i].key, d->attrs[i].value);
	}
	for (i = 0; i < meta->nresource; i++)
		if (strncmp(meta->resource[i].key, "process.", 8))
			res_str(&r, meta->resource[i].key, meta->resource[i].value);
	res_str(&r, "host.name", meta->host_name);
	res_str(&r, "host.arch", meta->host_arch);
	res_str(&r, "os.type", meta->os_type);
	lit(j, "]");
}

static void value_type(struct jw *j, bool *first, const char *k, __u32 type, __u32 unit)
{
	bool f = true;

	key(j, first, k);
	lit(j, "{");
	num32(j, &f, "typeStrindex", type);
	num32(j, &f, "unitStrindex", unit);
	lit(j, "}");
}

static void samples(struct jw *j, const struct profile *p, size_t proc)
{
	size_t i, n = profile__sample_count(p, proc);

	lit(j, "[");
	for (i = 0; i < n; i++) {
		const struct profile_sample_entry *e = profile__sample(p, proc, i);
		bool first = true;

		lit(j, i ? ",{" : "{");
		num32(j, &first, "stackIndex", e->stack);
		indices(j, &first, "attributeIndices", e->attrs, e->nattrs);
		key(j, &first, "values");
		lit(j, "[");
		uint64_str(j, e->value);
		lit(j, "]}");
	}
	lit(j, "]");
}

static void profile_msg(struct jw *j, const struct profile *p, size_t proc)
{
	const struct profile_meta *meta = profile__meta(p);
	__u32 st, su, pt, pu;
	bool first = true;

	profile__value_types(p, &st, &su, &pt, &pu);
	lit(j, "{");
	value_type(j, &first, "sampleType", st, su);
	if (proc != SIZE_MAX && profile__sample_count(p, proc)) {
		key(j, &first, "samples");
		samples(j, p, proc);
	}
	u64s(j, &first, "timeUnixNano", meta->time_unix_nano);
	u64s(j, &first, "durationNano", meta->duration_nano);
	value_type(j, &first, "periodType", pt, pu);
	s64s(j, &first, "period", (__s64)meta->period_ns);
	hex(j, &first, "profileId", meta->profile_id, sizeof(meta->profile_id));
	/* Carried once, by the first Profile (as otlp.c does). */
	if (proc == 0 || proc == SIZE_MAX) {
		const __u32 *mattrs;
		size_t nmattrs;

		if (meta->original_payload_len) {
			key(j, &first, "originalPayloadFormat");
			str(j, meta->original_payload_format);
			base64(j, &first, "originalPayload", meta->original_payload,
			       meta->original_payload_len);
		}
		mattrs = profile__meta_attrs(p, &nmattrs);
		indices(j, &first, "attributeIndices", mattrs, nmattrs);
	}
	lit(j, "}");
}

static void resource(struct jw *j, const struct profile *p, size_t proc)
{
	const struct profile_meta *meta = profile__meta(p);
	bool first = true, sf = true, scf = true;

	lit(j, "{");
	key(j, &first, "resource");
	lit(j, "{\"attributes\":");
	resource_attrs(j, p, proc);
	lit(j, "}");
	key(j, &first, "scopeProfiles");
	lit(j, "[{");
	if ((meta->scope_name && *meta->scope_name) ||
	    (meta->scope_version && *meta->scope_version)) {
		key(j, &sf, "scope");
		lit(j, "{");
		if (meta->scope_name && *meta->scope_name) {
			key(j, &scf, "name");
			str(j, meta->scope_name);
		}
		if (meta->scope_version && *meta->scope_version) {
			key(j, &scf, "version");
			str(j, meta->scope_version);
		}
		lit(j, "}");
	}
	key(j, &sf, "profiles");
	lit(j, "[");
	profile_msg(j, p, proc);
	lit(j, "]}]}");
}

int otlp_json__encode(const struct profile *p, struct buf *out)
{
	struct jw j = {out, 0};
	size_t i, n = profile__process_count(p), start = out->len;

	lit(&j, "{\"resourceProfiles\":[");
	if (!n)
		resource(&j, p, SIZE_MAX);
	for (i = 0; i < n; i++) {
		if (i)
			lit(&j, ",");
		resource(&j, p, i);
	}
	lit(&j, "],\"dictionary\":");
	dictionary(&j, p);
	lit(&j, "}\n");
	if (j.err)
		out->len = start;
	return j.err;
}
