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
#include "model/view.h"
#include "util/utf8.h"

/* A JSON string literal of @len bytes at @s. */
static void str_n(struct buf_out *j, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0, n;
	char esc[8];

	buf__puts(j, "\"");
	while (i < len) {
		unsigned char c = u[i];

		n = utf8__decode(s + i, len - i, NULL);
		if (n && c >= 0x20 && c != '"' && c != '\\') {
			i += n;
			run += n;
			continue;
		}
		buf__put(j, s + i - run, run);
		run = 0;
		if (c == '"')
			buf__puts(j, "\\\"");
		else if (c == '\\')
			buf__puts(j, "\\\\");
		else if (c == '\n')
			buf__puts(j, "\\n");
		else if (c == '\t')
			buf__puts(j, "\\t");
		else if (c == '\r')
			buf__puts(j, "\\r");
		else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			buf__puts(j, esc);
		} else {
			buf__puts(j, "\\ufffd"); /* invalid UTF-8 byte */
		}
		i++;
	}
	buf__put(j, s + i - run, run);
	buf__puts(j, "\"");
}

static void str(struct buf_out *j, const char *s)
{
	str_n(j, s ? s : "", s ? strlen(s) : 0);
}

/* A 64-bit value as a JSON string of its decimal digits. */
static void int64_str(struct buf_out *j, __s64 v)
{
	char tmp[32];

	snprintf(tmp, sizeof(tmp), "\"%" PRId64 "\"", (int64_t)v);
	buf__puts(j, tmp);
}

static void uint64_str(struct buf_out *j, __u64 v)
{
	char tmp[32];

	snprintf(tmp, sizeof(tmp), "\"%" PRIu64 "\"", (uint64_t)v);
	buf__puts(j, tmp);
}

/* "key": */
static void key(struct buf_out *j, bool *first, const char *k)
{
	if (!*first)
		buf__puts(j, ",");
	*first = false;
	str(j, k);
	buf__puts(j, ":");
}

static void num32(struct buf_out *j, bool *first, const char *k, __s64 v)
{
	char tmp[32];

	if (!v)
		return;
	key(j, first, k);
	snprintf(tmp, sizeof(tmp), "%" PRId64, (int64_t)v);
	buf__puts(j, tmp);
}

/* A 64-bit field: decimal in a string. */
static void u64s(struct buf_out *j, bool *first, const char *k, __u64 v)
{
	if (!v)
		return;
	key(j, first, k);
	uint64_str(j, v);
}

static void s64s(struct buf_out *j, bool *first, const char *k, __s64 v)
{
	if (!v)
		return;
	key(j, first, k);
	int64_str(j, v);
}

static void hex(struct buf_out *j, bool *first, const char *k, const __u8 *v, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[2];
	size_t i;

	key(j, first, k);
	buf__puts(j, "\"");
	for (i = 0; i < n; i++) {
		tmp[0] = digits[v[i] >> 4];
		tmp[1] = digits[v[i] & 15];
		buf__put(j, tmp, 2);
	}
	buf__puts(j, "\"");
}

static void base64(struct buf_out *j, bool *first, const char *k, const __u8 *v, size_t n)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char tmp[4];
	size_t i;

	key(j, first, k);
	buf__puts(j, "\"");
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
		buf__put(j, tmp, 4);
	}
	buf__puts(j, "\"");
}

/* "k":[i, j, ...] of 32-bit indices; nothing when empty. */
static void indices(struct buf_out *j, bool *first, const char *k, const __u32 *v, size_t n)
{
	char tmp[16];
	size_t i;

	if (!n)
		return;
	key(j, first, k);
	buf__puts(j, "[");
	for (i = 0; i < n; i++) {
		snprintf(tmp, sizeof(tmp), "%s%" PRIu32, i ? "," : "", v[i]);
		buf__puts(j, tmp);
	}
	buf__puts(j, "]");
}

/* ---- dictionary --------------------------------------------------------- */

static void mappings(struct buf_out *j, const struct profile *p)
{
	size_t i, n = profile__mapping_count(p);

	buf__puts(j, "[{}");
	for (i = 1; i < n; i++) {
		const struct profile_mapping_entry *e = profile__mapping(p, (__u32)i);
		bool first = true;

		buf__puts(j, ",{");
		u64s(j, &first, "memoryStart", e->start);
		u64s(j, &first, "memoryLimit", e->limit);
		u64s(j, &first, "fileOffset", e->file_offset);
		num32(j, &first, "filenameStrindex", e->filename);
		indices(j, &first, "attributeIndices", e->attrs, e->nattrs);
		buf__puts(j, "}");
	}
	buf__puts(j, "]");
}

static void locations(struct buf_out *j, const struct profile *p)
{
	size_t i, n = profile__location_count(p);

	buf__puts(j, "[{}");
	for (i = 1; i < n; i++) {
		const struct profile_location_entry *e = profile__location(p, (__u32)i);
		const struct profile_line_entry *le;
		bool first = true;
		size_t nl, k;

		buf__puts(j, ",{");
		num32(j, &first, "mappingIndex", e->mapping);
		u64s(j, &first, "address", e->address);
		le = profile__lines(p, e->lines, &nl);
		if (nl)
			key(j, &first, "lines");
		for (k = 0; k < nl; k++) {
			bool lf = true;

			buf__puts(j, k ? ",{" : "[{");
			num32(j, &lf, "functionIndex", le[k].function);
			s64s(j, &lf, "line", le[k].line);
			s64s(j, &lf, "column", le[k].column);
			buf__puts(j, k + 1 == nl ? "}]" : "}");
		}
		indices(j, &first, "attributeIndices", &e->attr, e->attr ? 1 : 0);
		buf__puts(j, "}");
	}
	buf__puts(j, "]");
}

static void functions(struct buf_out *j, const struct profile *p)
{
	size_t i, n = profile__function_count(p);

	buf__puts(j, "[{}");
	for (i = 1; i < n; i++) {
		const struct profile_function_entry *e = profile__function(p, (__u32)i);
		bool first = true;

		buf__puts(j, ",{");
		num32(j, &first, "nameStrindex", e->name);
		num32(j, &first, "systemNameStrindex", e->system_name);
		num32(j, &first, "filenameStrindex", e->filename);
		s64s(j, &first, "startLine", e->start_line);
		buf__puts(j, "}");
	}
	buf__puts(j, "]");
}

static void strings(struct buf_out *j, const struct profile *p)
{
	size_t i, len, n = profile__string_count(p);

	buf__puts(j, "[\"\"");
	for (i = 1; i < n; i++) {
		const char *s = profile__string(p, (__u32)i, &len);

		buf__puts(j, ",");
		str_n(j, s, len);
	}
	buf__puts(j, "]");
}

static void attributes(struct buf_out *j, const struct profile *p)
{
	size_t i, n = profile__attr_count(p);

	buf__puts(j, "[{}");
	for (i = 1; i < n; i++) {
		const struct profile_attr_entry *e = profile__attr(p, (__u32)i);
		bool first = true, vf = true;

		buf__puts(j, ",{");
		num32(j, &first, "keyStrindex", e->key);
		if (e->kind == PROFILE_ATTR_STR) {
			key(j, &first, "value");
			buf__puts(j, "{");
			key(j, &vf, "stringValue");
			str(j, e->str_value);
			buf__puts(j, "}");
		} else if (e->kind == PROFILE_ATTR_INT) {
			key(j, &first, "value");
			buf__puts(j, "{");
			/* intValue is int64: a string even when 0. */
			key(j, &vf, "intValue");
			int64_str(j, e->int_value);
			buf__puts(j, "}");
		} else if (e->kind == PROFILE_ATTR_BOOL) {
			key(j, &first, "value");
			buf__puts(j, "{");
			key(j, &vf, "boolValue");
			buf__puts(j, e->int_value ? "true" : "false");
			buf__puts(j, "}");
		}
		num32(j, &first, "unitStrindex", e->unit);
		buf__puts(j, "}");
	}
	buf__puts(j, "]");
}

static void stacks(struct buf_out *j, const struct profile *p)
{
	size_t i, nl, n = profile__stack_count(p);

	buf__puts(j, "[{}");
	for (i = 1; i < n; i++) {
		const __u32 *locs = profile__stack(p, (__u32)i, &nl);
		bool first = true;

		buf__puts(j, ",{");
		indices(j, &first, "locationIndices", locs, nl);
		buf__puts(j, "}");
	}
	buf__puts(j, "]");
}

/* Trace and span ids in hex, as OTLP/JSON writes them. */
static void links(struct buf_out *j, const struct profile *p)
{
	size_t i, n = profile__link_count(p);

	buf__puts(j, "[{}");
	for (i = 1; i < n; i++) {
		const struct profile_link *l = profile__link(p, (__u32)i);
		bool first = true;

		buf__puts(j, ",{");
		hex(j, &first, "traceId", l->trace_id, sizeof(l->trace_id));
		hex(j, &first, "spanId", l->span_id, sizeof(l->span_id));
		buf__puts(j, "}");
	}
	buf__puts(j, "]");
}

static void dictionary(struct buf_out *j, const struct profile *p)
{
	bool first = true;

	buf__puts(j, "{");
	key(j, &first, "mappingTable");
	mappings(j, p);
	key(j, &first, "locationTable");
	locations(j, p);
	key(j, &first, "functionTable");
	functions(j, p);
	/* link_table[0] is the zero value Link{}, as otlp.c writes it. */
	key(j, &first, "linkTable");
	links(j, p);
	key(j, &first, "stringTable");
	strings(j, p);
	key(j, &first, "attributeTable");
	attributes(j, p);
	key(j, &first, "stackTable");
	stacks(j, p);
	buf__puts(j, "}");
}

/* ---- resources ------------------------------------------------------------- */

/* The resource attributes of process @proc (view__resource_attrs()). */
static void resource_attrs(struct buf_out *j, const struct profile *p, size_t proc)
{
	struct view_resource_attr a[VIEW_MAX_RESOURCE_ATTRS];
	size_t i, n = view__resource_attrs(p, proc, a);

	buf__puts(j, "[");
	for (i = 0; i < n; i++) {
		bool f = true, vf = true;

		if (i)
			buf__puts(j, ",");
		buf__puts(j, "{");
		key(j, &f, "key");
		str(j, a[i].key);
		key(j, &f, "value");
		buf__puts(j, "{");
		key(j, &vf, a[i].str ? "stringValue" : "intValue");
		if (a[i].str)
			str(j, a[i].str);
		else
			int64_str(j, a[i].num);
		buf__puts(j, "}}");
	}
	buf__puts(j, "]");
}

static void value_type(struct buf_out *j, bool *first, const char *k, __u32 type, __u32 unit)
{
	bool f = true;

	key(j, first, k);
	buf__puts(j, "{");
	num32(j, &f, "typeStrindex", type);
	num32(j, &f, "unitStrindex", unit);
	buf__puts(j, "}");
}

/* "values" (and "timestampsUnixNano", values[i] with timestamps[i], when
 * the sample's occurrences account for its whole value). */
static void sample_values(struct buf_out *j, bool *first, const struct profile *p, size_t proc,
			  size_t i, __u64 value)
{
	const struct profile_occurrence *o;
	__u64 sum = 0;
	size_t n, k;

	o = profile__sample_times(p, proc, i, &n);
	for (k = 0; k < n; k++)
		sum += o[k].value;
	key(j, first, "values");
	buf__puts(j, "[");
	if (!n || sum != value) {
		uint64_str(j, value);
		buf__puts(j, "]");
		return;
	}
	for (k = 0; k < n; k++) {
		buf__puts(j, k ? "," : "");
		uint64_str(j, o[k].value);
	}
	buf__puts(j, "]");
	key(j, first, "timestampsUnixNano");
	buf__puts(j, "[");
	for (k = 0; k < n; k++) {
		buf__puts(j, k ? "," : "");
		uint64_str(j, o[k].time_ns);
	}
	buf__puts(j, "]");
}

static void samples(struct buf_out *j, const struct profile *p, size_t proc)
{
	size_t i, n = profile__sample_count(p, proc);

	buf__puts(j, "[");
	for (i = 0; i < n; i++) {
		const struct profile_sample_entry *e = profile__sample(p, proc, i);
		bool first = true;

		buf__puts(j, i ? ",{" : "{");
		num32(j, &first, "stackIndex", e->stack);
		indices(j, &first, "attributeIndices", e->attrs, e->nattrs);
		num32(j, &first, "linkIndex", e->link);
		sample_values(j, &first, p, proc, i, e->value);
		buf__puts(j, "}");
	}
	buf__puts(j, "]");
}

/* The Profile of process @proc, or an empty one of @type when SIZE_MAX;
 * @slot numbers the Profiles in the order written, as otlp.c does (its id;
 * slot 0 says what is said once). */
static void profile_msg(struct buf_out *j, const struct profile *p, size_t proc, __u32 type,
			size_t slot)
{
	const struct profile_meta *meta = profile__meta(p);
	__u32 st, su, pt, pu;
	__u64 start, dur;
	__u8 id[16];
	bool first = true;

	profile__value_type(p, type, &st, &su, &pt, &pu);
	buf__puts(j, "{");
	value_type(j, &first, "sampleType", st, su);
	if (proc != SIZE_MAX && profile__sample_count(p, proc)) {
		key(j, &first, "samples");
		samples(j, p, proc);
	}
	profile__time_range(p, &start, &dur);
	u64s(j, &first, "timeUnixNano", start);
	u64s(j, &first, "durationNano", dur);
	value_type(j, &first, "periodType", pt, pu);
	s64s(j, &first, "period", profile__period(p, type));
	profile__id_of(p, slot, id); /* one per Profile, as otlp.c */
	hex(j, &first, "profileId", id, sizeof(id));
	/* Carried once, by the first Profile (as otlp.c does). */
	if (slot == 0) {
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
	buf__puts(j, "}");
}

static void resource(struct buf_out *j, const struct profile *p, size_t proc, __u32 type,
		     size_t slot)
{
	const struct profile_meta *meta = profile__meta(p);
	bool first = true, sf = true, scf = true;

	buf__puts(j, "{");
	key(j, &first, "resource");
	buf__puts(j, "{\"attributes\":");
	resource_attrs(j, p, proc);
	buf__puts(j, "}");
	key(j, &first, "scopeProfiles");
	buf__puts(j, "[{");
	/* Always a scope, empty or not, as otlp.c writes it. */
	key(j, &sf, "scope");
	buf__puts(j, "{");
	if (meta->scope_name && *meta->scope_name) {
		key(j, &scf, "name");
		str(j, meta->scope_name);
	}
	if (meta->scope_version && *meta->scope_version) {
		key(j, &scf, "version");
		str(j, meta->scope_version);
	}
	buf__puts(j, "}");
	key(j, &sf, "profiles");
	buf__puts(j, "[");
	profile_msg(j, p, proc, type, slot);
	buf__puts(j, "]}]}");
}

int otlp_json__encode(const struct profile *p, struct buf *out)
{
	struct buf_out j = {out, 0};
	size_t i, n = profile__process_count(p), start = out->len;
	size_t slot = 0, ntypes = profile__value_type_count(p);
	__u32 t;

	buf__puts(&j, "{\"resourceProfiles\":[");
	/* Type by type, an empty Profile for a type no process holds, as
	 * otlp.c writes them. */
	for (t = 0; t < ntypes; t++) {
		bool used = profile__value_type_used(p, t);

		for (i = 0; i < (used ? n : 1); i++) {
			if (used && profile__process_type(p, i) != t)
				continue;
			if (slot)
				buf__puts(&j, ",");
			resource(&j, p, used ? i : SIZE_MAX, t, slot++);
		}
	}
	buf__puts(&j, "],\"dictionary\":");
	dictionary(&j, p);
	buf__puts(&j, "}\n");
	if (j.err)
		out->len = start;
	return j.err;
}
