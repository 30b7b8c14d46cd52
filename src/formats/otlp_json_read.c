/* otlp_json_read.c - OTLP/JSON to protobuf (see otlp_json_read.h).
 *
 * The schema is nanopb's: each message's field table (.proto name, number,
 * kind, submessage) is built from the X-macro field lists of the generated
 * headers, so a change to the .proto files reaches this reader too. The
 * JSON is walked once, recursively, each object encoded into its own buffer
 * and appended to its parent's with a length prefix (protobuf needs a
 * submessage's length first).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opentelemetry/proto/profiles/v1development/profiles.pb.h"

#include "formats/otlp_json_read.h"
#include "util/scan.h"
#include "util/wire.h"

enum kind {
	K_MSG,
	K_STRING,
	K_BYTES, /* base64; hex for OTLP's ids (is_id()) */
	K_INT32,
	K_INT64,
	K_UINT32,
	K_UINT64,
	K_FIXED64,
	K_BOOL,
	K_DOUBLE,
};

struct msg;

struct field {
	const char *name; /* as in the .proto */
	__u32 num;
	enum kind kind;
	bool repeated;
	const struct msg *msg; /* K_MSG */
};

struct msg {
	const struct field *f;
	size_t n;
};

/* ---- the schema, from nanopb's <Msg>_FIELDLIST(X, a) ------------------------------
 * Each field comes as X(a, allocation, SINGULAR|OPTIONAL|REPEATED|ONEOF,
 * type, name, number); a oneof member's name is (oneof, member, path) and
 * its submessage type is <Msg>_<oneof>_<member>_MSGTYPE. A field type not
 * listed here fails to compile: the transcoder must learn it first. */
#define JK_MESSAGE K_MSG
#define JK_STRING K_STRING
#define JK_BYTES K_BYTES
#define JK_INT32 K_INT32
#define JK_INT64 K_INT64
#define JK_UINT32 K_UINT32
#define JK_UINT64 K_UINT64
#define JK_FIXED64 K_FIXED64
#define JK_BOOL K_BOOL
#define JK_DOUBLE K_DOUBLE

#define JR_SINGULAR false
#define JR_OPTIONAL false
#define JR_ONEOF false
#define JR_REPEATED true

#define JN_ONEOF_MEMBER(oneof, member, path) #member
#define JN_SINGULAR(name) #name
#define JN_OPTIONAL(name) #name
#define JN_REPEATED(name) #name
#define JN_ONEOF(name) JN_ONEOF_MEMBER name

#define JP_ONEOF_MEMBER(oneof, member, path) oneof##_##member
#define JP_SINGULAR(name) name
#define JP_OPTIONAL(name) name
#define JP_REPEATED(name) name
#define JP_ONEOF(name) JP_ONEOF_MEMBER name

#define JSON_MSG_OF(type) &type##_json
#define JSON_MSG(type) JSON_MSG_OF(type)
#define JM_TYPE(msg, name) JSON_MSG(msg##_##name##_MSGTYPE)
#define JM_MESSAGE(msg, name) JM_TYPE(msg, name)
#define JM_STRING(msg, name) NULL
#define JM_BYTES(msg, name) NULL
#define JM_INT32(msg, name) NULL
#define JM_INT64(msg, name) NULL
#define JM_UINT32(msg, name) NULL
#define JM_UINT64(msg, name) NULL
#define JM_FIXED64(msg, name) NULL
#define JM_BOOL(msg, name) NULL
#define JM_DOUBLE(msg, name) NULL

#define JSON_FIELD(msg, alloc, htype, ltype, name, num) \
	{JN_##htype(name), num, JK_##ltype, JR_##htype, JM_##ltype(msg, JP_##htype(name))},

#define JSON_DECLARE_(type) static const struct msg type##_json;
#define JSON_DECLARE(type) JSON_DECLARE_(type)
#define JSON_DEFINE(type) JSON_DEFINE_(type)
#define JSON_DEFINE_(type)                                                               \
	static const struct field type##_jsonf[] = {type##_FIELDLIST(JSON_FIELD, type)}; \
	static const struct msg type##_json = {type##_jsonf,                             \
					       sizeof(type##_jsonf) / sizeof(type##_jsonf[0])};

#define OTLP_PB(name) opentelemetry_proto_profiles_v1development_##name
#define COMMON_PB(name) opentelemetry_proto_common_v1_##name

/* Every message reachable from ProfilesData (one missing here fails to
 * compile). ExportProfilesServiceRequest has the same two fields. */
#define JSON_MESSAGES(X)                            \
	X(COMMON_PB(AnyValue))                      \
	X(COMMON_PB(ArrayValue))                    \
	X(COMMON_PB(KeyValueList))                  \
	X(COMMON_PB(KeyValue))                      \
	X(COMMON_PB(EntityRef))                     \
	X(COMMON_PB(InstrumentationScope))          \
	X(opentelemetry_proto_resource_v1_Resource) \
	X(OTLP_PB(ValueType))                       \
	X(OTLP_PB(Sample))                          \
	X(OTLP_PB(Profile))                         \
	X(OTLP_PB(ScopeProfiles))                   \
	X(OTLP_PB(ResourceProfiles))                \
	X(OTLP_PB(Mapping))                         \
	X(OTLP_PB(Line))                            \
	X(OTLP_PB(Location))                        \
	X(OTLP_PB(Function))                        \
	X(OTLP_PB(Link))                            \
	X(OTLP_PB(KeyValueAndUnit))                 \
	X(OTLP_PB(Stack))                           \
	X(OTLP_PB(ProfilesDictionary))              \
	X(OTLP_PB(ProfilesData))

JSON_MESSAGES(JSON_DECLARE)
JSON_MESSAGES(JSON_DEFINE)

/* OTLP writes these bytes fields as hex, not base64. */
static bool is_id(const struct field *f)
{
	return !strcmp(f->name, "trace_id") || !strcmp(f->name, "span_id") ||
	       !strcmp(f->name, "profile_id");
}

struct rd {
	const char *start, *p, *end;
	int depth;
	size_t max;	/* cap of every buffer (the caller's output cap) */
	struct buf str; /* the string being decoded */
	char *err;
	size_t errlen;
};

static int fail(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct rd *r, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!r->errlen)
		return -EBADMSG;
	n = snprintf(r->err, r->errlen, "OTLP/JSON at byte %zu: ", (size_t)(r->p - r->start));
	if (n >= 0 && (size_t)n < r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

/* ---- protobuf output ------------------------------------------------------ */

static int put_varint(struct buf *b, __u64 v)
{
	unsigned char t[10];
	size_t n = 0;

	do {
		t[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			t[n] |= 0x80;
		n++;
	} while (v);
	return buf__append(b, t, n);
}

static int put_tag(struct buf *b, __u32 num, enum wire_type wt)
{
	return put_varint(b, (__u64)num << 3 | (__u64)wt);
}

static int put_fixed64(struct buf *b, __u64 v)
{
	unsigned char t[8];
	int i;

	for (i = 0; i < 8; i++)
		t[i] = (unsigned char)(v >> (8 * i));
	return buf__append(b, t, 8);
}

static int put_len(struct buf *b, __u32 num, const void *data, size_t len)
{
	return put_tag(b, num, WIRE_LEN) ?: put_varint(b, len) ?: buf__append(b, data, len);
}

/* ---- JSON lexing ---------------------------------------------------------- */

static void skip_ws(struct rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

/* Consume @c (after white space). */
static bool eat(struct rd *r, char c)
{
	skip_ws(r);
	if (r->p < r->end && *r->p == c) {
		r->p++;
		return true;
	}
	return false;
}

static bool eat_word(struct rd *r, const char *w)
{
	size_t n = strlen(w);

	skip_ws(r);
	if ((size_t)(r->end - r->p) >= n && !memcmp(r->p, w, n)) {
		r->p += n;
		return true;
	}
	return false;
}

static int hex4(struct rd *r, __u32 *cp)
{
	int i, d;

	if (r->end - r->p < 4)
		return fail(r, "truncated \\u escape");
	*cp = 0;
	for (i = 0; i < 4; i++) {
		d = scan__hex_digit(r->p[i]);
		if (d < 0)
			return fail(r, "bad \\u escape");
		*cp = *cp << 4 | (__u32)d;
	}
	r->p += 4;
	return 0;
}

static int put_utf8(struct buf *b, __u32 cp)
{
	unsigned char t[4];
	size_t n;

	if (cp < 0x80) {
		t[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		t[0] = (unsigned char)(0xc0 | cp >> 6);
		t[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		t[0] = (unsigned char)(0xe0 | cp >> 12);
		t[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		t[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		t[0] = (unsigned char)(0xf0 | cp >> 18);
		t[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		t[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		t[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return buf__append(b, t, n);
}

/* One \-escape (the backslash consumed) into r->str. */
static int escape(struct rd *r)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e;
	__u32 cp, lo;
	int err;

	if (r->p >= r->end)
		return fail(r, "truncated escape");
	if (*r->p != 'u') {
		e = strchr(from, *r->p);
		if (!e || !*r->p)
			return fail(r, "bad escape '\\%c'", *r->p);
		r->p++;
		return buf__append(&r->str, &to[e - from], 1);
	}
	r->p++;
	err = hex4(r, &cp);
	if (err)
		return err;
	if (cp >= 0xd800 && cp < 0xdc00) { /* a high surrogate wants its low one */
		if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
			return put_utf8(&r->str, 0xfffd);
		r->p += 2;
		err = hex4(r, &lo);
		if (err)
			return err;
		if (lo < 0xdc00 || lo >= 0xe000)
			return put_utf8(&r->str, 0xfffd) ?: put_utf8(&r->str, lo);
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	} else if (cp >= 0xdc00 && cp < 0xe000) {
		cp = 0xfffd; /* a lone low surrogate */
	}
	return put_utf8(&r->str, cp);
}

/* A string into r->str (not NUL-terminated: r->str.len bytes). */
static int string(struct rd *r)
{
	int err;

	buf__reset(&r->str);
	if (!eat(r, '"'))
		return fail(r, "expected a string");
	for (;;) {
		const char *q = r->p;

		while (q < r->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
			q++;
		err = buf__append(&r->str, r->p, (size_t)(q - r->p));
		if (err)
			return err;
		r->p = q;
		if (q == r->end)
			return fail(r, "unterminated string");
		if (*q == '"') {
			r->p++;
			return 0;
		}
		if ((unsigned char)*q < 0x20)
			return fail(r, "control character in a string");
		r->p++;
		err = escape(r);
		if (err)
			return err;
	}
}

/* A number's text, or a string's contents for 64-bit integers written as
 * strings, into @tok (NUL-terminated, at most @cap - 1 bytes). */
static int number_token(struct rd *r, char *tok, size_t cap)
{
	size_t n;
	int err;

	skip_ws(r);
	if (r->p < r->end && *r->p == '"') {
		err = string(r);
		if (err)
			return err;
		if (!r->str.len || r->str.len >= cap || memchr(r->str.data, '\0', r->str.len))
			return fail(r, "bad number in a string");
		memcpy(tok, r->str.data, r->str.len);
		tok[r->str.len] = '\0';
		return 0;
	}
	for (n = 0; r->p + n < r->end && strchr("+-0123456789.eE", r->p[n]) && r->p[n]; n++)
		;
	if (!n || n >= cap)
		return fail(r, "expected a number");
	memcpy(tok, r->p, n);
	tok[n] = '\0';
	r->p += n;
	return 0;
}

/* An integer in [@lo, @hi] (as signed) or [0, @uhi] (unsigned). JSON
 * numbers like 1e3 or 5.0 that are integers are taken too. */
static int integer(struct rd *r, bool is_signed, __s64 lo, __s64 hi, __u64 uhi, __u64 *out)
{
	char tok[64], *end = NULL;
	int err = number_token(r, tok, sizeof(tok));

	if (err)
		return err;
	errno = 0;
	if (!strpbrk(tok, ".eE")) {
		if (is_signed) {
			long long v = strtoll(tok, &end, 10);

			if (errno || *end || end == tok || v < lo || v > hi)
				return fail(r, "integer '%s' out of range", tok);
			*out = (__u64)v;
		} else {
			unsigned long long v = tok[0] == '-' ? 1 : strtoull(tok, &end, 10);

			if (tok[0] == '-' || errno || *end || end == tok || v > uhi)
				return fail(r, "integer '%s' out of range", tok);
			*out = v;
		}
		return 0;
	} else {
		double d = strtod(tok, &end);

		if (errno || *end || end == tok)
			return fail(r, "bad number '%s'", tok);
		/* Range first: converting an out-of-range double is undefined. */
		if (is_signed ? !(d >= (double)lo && d < -(double)INT64_MIN && d <= (double)hi)
			      : !(d >= 0 && d < 18446744073709551616.0 && d <= (double)uhi))
			return fail(r, "integer '%s' out of range", tok);
		*out = is_signed ? (__u64)(__s64)d : (__u64)d;
		if (is_signed ? (double)(__s64)*out != d : (double)*out != d)
			return fail(r, "'%s' is not an integer", tok);
		return 0;
	}
}

static int real(struct rd *r, double *out)
{
	char tok[64], *end = NULL;
	int err;

	skip_ws(r);
	if (r->p < r->end && *r->p == '"') { /* "NaN", "Infinity", "-Infinity" */
		err = string(r);
		if (err)
			return err;
		if (r->str.len == 3 && !memcmp(r->str.data, "NaN", 3))
			*out = __builtin_nan("");
		else if (r->str.len == 8 && !memcmp(r->str.data, "Infinity", 8))
			*out = __builtin_inf();
		else if (r->str.len == 9 && !memcmp(r->str.data, "-Infinity", 9))
			*out = -__builtin_inf();
		else
			return fail(r, "bad double");
		return 0;
	}
	err = number_token(r, tok, sizeof(tok));
	if (err)
		return err;
	errno = 0;
	*out = strtod(tok, &end);
	if (*end || end == tok)
		return fail(r, "bad number '%s'", tok);
	return 0;
}

/* Decode r->str in place as base64 (padding optional). */
static int base64(struct rd *r)
{
	int n = scan__base64((const char *)r->str.data, r->str.len, r->str.data, r->str.len);

	if (n < 0)
		return fail(r, "bad base64");
	r->str.len = (size_t)n;
	return 0;
}

/* Decode r->str in place as hex, else as base64. */
static int id_bytes(struct rd *r)
{
	unsigned char *s = r->str.data;
	size_t i, n = r->str.len;

	for (i = 0; i < n; i++)
		if (scan__hex_digit((char)s[i]) < 0)
			return base64(r);
	if (n % 2)
		return base64(r);
	for (i = 0; i < n / 2; i++)
		s[i] = (unsigned char)(scan__hex_digit((char)s[2 * i]) << 4 |
				       scan__hex_digit((char)s[2 * i + 1]));
	r->str.len = n / 2;
	return 0;
}

/* Skip any value (of an unknown field). */
static int skip_value(struct rd *r)
{
	int err;

	skip_ws(r);
	if (r->p >= r->end)
		return fail(r, "expected a value");
	if (*r->p == '"')
		return string(r);
	if (*r->p == '{' || *r->p == '[') {
		char close = *r->p == '{' ? '}' : ']';
		bool obj = *r->p == '{';

		if (++r->depth > OTLP_JSON_MAX_DEPTH)
			return fail(r, "nested deeper than %d levels", OTLP_JSON_MAX_DEPTH);
		r->p++;
		if (!eat(r, close)) {
			do {
				if (obj &&
				    (err = string(r)
						   ?: (eat(r, ':') ? 0 : fail(r, "expected ':'"))))
					return err;
				err = skip_value(r);
				if (err)
					return err;
			} while (eat(r, ','));
			if (!eat(r, close))
				return fail(r, "expected ',' or '%c'", close);
		}
		r->depth--;
		return 0;
	}
	if (eat_word(r, "true") || eat_word(r, "false") || eat_word(r, "null"))
		return 0;
	{
		char tok[64];

		return number_token(r, tok, sizeof(tok));
	}
}

/* ---- values --------------------------------------------------------------- */

static int object(struct rd *r, const struct msg *m, struct buf *out);

/* One scalar of @f: appended to @out as a tagged field, or (packed) as a
 * bare value. */
static int scalar(struct rd *r, const struct field *f, struct buf *out, bool packed)
{
	__u64 v = 0;
	double d = 0;
	int err;

	switch (f->kind) {
	case K_STRING:
	case K_BYTES:
		err = string(r);
		if (!err && f->kind == K_BYTES)
			err = is_id(f) ? id_bytes(r) : base64(r);
		return err ?: put_len(out, f->num, r->str.data, r->str.len);
	case K_BOOL:
		if (eat_word(r, "true"))
			v = 1;
		else if (!eat_word(r, "false"))
			return fail(r, "expected true or false");
		break;
	case K_INT32:
	case K_INT64:
	case K_UINT32:
	case K_UINT64:
	case K_FIXED64:
		err = f->kind == K_INT32 ? integer(r, true, INT32_MIN, INT32_MAX, 0, &v)
		      : f->kind == K_INT64
			      ? integer(r, true, INT64_MIN, INT64_MAX, 0, &v)
			      : integer(r, false, 0, 0,
					f->kind == K_UINT32 ? UINT32_MAX : UINT64_MAX, &v);
		if (err)
			return err;
		break;
	case K_DOUBLE:
		err = real(r, &d);
		if (err)
			return err;
		memcpy(&v, &d, sizeof(v));
		break;
	default:
		return fail(r, "internal: not a scalar");
	}
	if (f->kind == K_FIXED64 || f->kind == K_DOUBLE)
		return (packed ? 0 : put_tag(out, f->num, WIRE_I64)) ?: put_fixed64(out, v);
	return (packed ? 0 : put_tag(out, f->num, WIRE_VARINT)) ?: put_varint(out, v);
}

/* A submessage of @f, appended to @out with its tag and length. */
static int submessage(struct rd *r, const struct field *f, struct buf *out)
{
	struct buf sub;
	int err;

	buf__init(&sub, r->max);
	err = object(r, f->msg, &sub);
	if (!err)
		err = put_len(out, f->num, sub.data ? (const void *)sub.data : "", sub.len);
	buf__release(&sub);
	return err;
}

static int value(struct rd *r, const struct field *f, struct buf *out, bool packed)
{
	return f->kind == K_MSG ? submessage(r, f, out) : scalar(r, f, out, packed);
}

/* The value of a repeated field: an array (or, leniently, one element). */
static int repeated(struct rd *r, const struct field *f, struct buf *out)
{
	bool packed = f->kind != K_MSG && f->kind != K_STRING && f->kind != K_BYTES;
	struct buf pk;
	int err = 0;

	if (!eat(r, '['))
		return value(r, f, out, false);
	if (++r->depth > OTLP_JSON_MAX_DEPTH)
		return fail(r, "nested deeper than %d levels", OTLP_JSON_MAX_DEPTH);
	buf__init(&pk, r->max);
	if (!eat(r, ']')) {
		do {
			err = value(r, f, packed ? &pk : out, packed);
		} while (!err && eat(r, ','));
		if (!err && !eat(r, ']'))
			err = fail(r, "expected ',' or ']' in an array");
	}
	if (!err && packed && pk.len)
		err = put_len(out, f->num, pk.data, pk.len);
	buf__release(&pk);
	r->depth--;
	return err;
}

/* Does JSON key @k (@n bytes) name @proto_name, as is or in lowerCamelCase? */
static bool key_is(const char *proto_name, const char *k, size_t n)
{
	const char *s = proto_name;
	size_t i = 0;

	if (strlen(s) == n && !memcmp(s, k, n))
		return true;
	for (; *s && i < n; s++, i++) {
		char c = *s;

		if (c == '_' && s[1] >= 'a' && s[1] <= 'z')
			c = (char)(*++s - 'a' + 'A');
		if (c != k[i])
			return false;
	}
	return !*s && i == n;
}

static const struct field *find_field(const struct msg *m, const char *k, size_t n)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (key_is(m->f[i].name, k, n))
			return &m->f[i];
	return NULL;
}

static int object(struct rd *r, const struct msg *m, struct buf *out)
{
	char key[64];
	int err;

	if (!eat(r, '{'))
		return fail(r, "expected an object");
	if (++r->depth > OTLP_JSON_MAX_DEPTH)
		return fail(r, "nested deeper than %d levels", OTLP_JSON_MAX_DEPTH);
	if (eat(r, '}')) {
		r->depth--;
		return 0;
	}
	do {
		const struct field *f;
		size_t n;

		err = string(r);
		if (err)
			return err;
		n = r->str.len < sizeof(key) ? r->str.len : sizeof(key) - 1;
		if (n) /* an empty string has no buffer yet */
			memcpy(key, r->str.data, n);
		f = r->str.len < sizeof(key) ? find_field(m, key, n) : NULL;
		if (!eat(r, ':'))
			return fail(r, "expected ':' after a key");
		if (!f || eat_word(r, "null"))
			err = f ? 0 : skip_value(r);
		else
			err = f->repeated ? repeated(r, f, out) : value(r, f, out, false);
		if (err)
			return err;
	} while (eat(r, ','));
	if (!eat(r, '}'))
		return fail(r, "expected ',' or '}' in an object");
	r->depth--;
	return 0;
}

bool otlp_json_read__looks_like(const void *data, size_t len)
{
	const char *p = data, *end = p + len;

	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p < end && *p == '{';
}

int otlp_json_read__transcode(const char *json, size_t len, struct buf *out, char *err,
			      size_t errlen)
{
	struct rd r = {json, json, json + len, 0, out->max, {0}, err, errlen};
	int ret;

	if (errlen)
		err[0] = '\0';
	buf__init(&r.str, out->max);
	ret = object(&r, &OTLP_PB(ProfilesData_json), out);
	if (!ret) {
		skip_ws(&r);
		if (r.p != r.end)
			ret = fail(&r, "text after the document");
	}
	if (ret == -E2BIG && errlen)
		snprintf(err, errlen, "OTLP/JSON document transcodes to more than %zu bytes",
			 out->max);
	else if (ret == -ENOMEM && errlen)
		snprintf(err, errlen, "out of memory reading OTLP/JSON");
	buf__release(&r.str);
	return ret;
}
