/* otlp_read.c - OTLP Profiles reader (see otlp_read.h).
 *
 * The wire format is walked with nanopb's stream primitives only (tags,
 * varints, fixed64, substreams, skips): no generated decoder runs on the
 * input, so AnyValue's callback oneofs are never filled from untrusted
 * bytes. The walk never recurses deeper than the schema's fixed levels
 * (ProfilesData > ResourceProfiles > ScopeProfiles > Profile > Sample >
 * packed list); values of unused kinds (arrays, kvlists) are skipped as
 * opaque lengths, so nesting depth in the input costs nothing.
 *
 * Order of fields on the wire is free, so the input is read in passes: the
 * dictionary first (every occurrence, tables concatenated as protobuf merges
 * them), then every index in it is range-checked and each location is turned
 * once into a struct profile_frame, then the resources (each one's Resource
 * before its ScopeProfiles). Samples are added to the model as they are met.
 * A stack is added to the model once, when a sample first uses it (its
 * frames gathered from the prepared locations); later samples reuse its
 * model index.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pb_decode.h>

#include "util/buf.h"
#include "util/gz.h"
#include "util/log.h"
#include "formats/otlp_json_read.h"
#include "formats/otlp_read.h"
#include "model/profile.h"

/* Field numbers, from the .proto files under nanopb_protos/. */
enum {
	F_DATA_RESOURCE_PROFILES = 1,
	F_DATA_DICTIONARY = 2,

	F_DICT_MAPPING = 1,
	F_DICT_LOCATION = 2,
	F_DICT_FUNCTION = 3,
	F_DICT_LINK = 4,
	F_DICT_STRING = 5,
	F_DICT_ATTRIBUTE = 6,
	F_DICT_STACK = 7,

	F_MAPPING_START = 1,
	F_MAPPING_LIMIT = 2,
	F_MAPPING_OFFSET = 3,
	F_MAPPING_FILENAME = 4,
	F_MAPPING_ATTRS = 5,

	F_LOCATION_MAPPING = 1,
	F_LOCATION_ADDRESS = 2,
	F_LOCATION_LINES = 3,
	F_LOCATION_ATTRS = 4,

	F_LINE_FUNCTION = 1,
	F_LINE_LINE = 2,
	F_LINE_COLUMN = 3,

	F_FUNCTION_NAME = 1,
	F_FUNCTION_SYSTEM_NAME = 2,
	F_FUNCTION_FILENAME = 3,
	F_FUNCTION_START_LINE = 4,

	F_KVU_KEY = 1,
	F_KVU_VALUE = 2,
	F_KVU_UNIT = 3,

	F_STACK_LOCATIONS = 1,

	F_ANY_STRING = 1,
	F_ANY_INT = 3,
	F_ANY_STRINDEX = 8,

	F_KV_KEY = 1,
	F_KV_VALUE = 2,
	F_KV_KEY_STRINDEX = 3,

	F_RP_RESOURCE = 1,
	F_RP_SCOPE_PROFILES = 2,

	F_RESOURCE_ATTRS = 1,

	F_SP_SCOPE = 1,
	F_SP_PROFILES = 2,

	F_SCOPE_NAME = 1,
	F_SCOPE_VERSION = 2,

	F_PROFILE_SAMPLE_TYPE = 1,
	F_PROFILE_SAMPLES = 2,
	F_PROFILE_TIME = 3,
	F_PROFILE_DURATION = 4,
	F_PROFILE_PERIOD_TYPE = 5,
	F_PROFILE_PERIOD = 6,
	F_PROFILE_ID = 7,
	F_PROFILE_PAYLOAD_FORMAT = 9,
	F_PROFILE_PAYLOAD = 10,
	F_PROFILE_ATTRS = 11,

	F_VT_TYPE = 1,
	F_VT_UNIT = 2,

	F_SAMPLE_STACK = 1,
	F_SAMPLE_ATTRS = 2,
	F_SAMPLE_LINK = 3,
	F_SAMPLE_VALUES = 4,
	F_SAMPLE_TIMESTAMPS = 5,
};

/* Entries per dictionary table and per index pool. */
#define MAX_TABLE PROFILE_MAX_ENTRIES
#define MAX_POOL (64u << 20)
/* Deeper stacks keep their leaf-most frames (the model keeps fewer). */
#define MAX_FRAMES 65536
#define ARENA_CHUNK (256u << 10)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* What an attribute table entry means to the reader. */
enum role {
	ROLE_NONE = 0,
	ROLE_THREAD_ID,
	ROLE_THREAD_NAME,
	ROLE_FRAME_TYPE,
	ROLE_BUILD_ID,
	ROLE_HAS_FUNCTIONS, /* mapping: pprof.mapping.has_*, in PROFILE_MAPPING_HAS_* order */
	ROLE_HAS_FILENAMES,
	ROLE_HAS_LINE_NUMBERS,
	ROLE_HAS_INLINE_FRAMES,
	ROLE_HTLHASH,
	ROLE_GO_BUILD_ID,
	ROLE_DROPPED, /* Profile attributes: sample loss counts */
	ROLE_TRUNCATED,
	ROLE_STACK_MISSING,
	ROLE_OFF_CPU_STATE, /* sample labels of off-CPU profiles */
	ROLE_OFF_CPU_SWITCHES,
	ROLE_TRUNCATED_DEPTH,
};

enum value_kind {
	VAL_NONE = 0,
	VAL_STR,
	VAL_INT,
	VAL_BOOL, /* num 0 or 1 */
	VAL_OTHER,
};

/* Where the reader is, for error messages (formatted only on error). */
enum ctx {
	CTX_TOP = 0,
	CTX_DICT,
	CTX_ENTRY,
	CTX_RESOURCE,
	CTX_SCOPE,
	CTX_PROFILE,
	CTX_SAMPLE,
};

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

/* A growable array of fixed-size entries with a hard cap. */
struct vec {
	void *d;
	size_t n, cap, max;
};

struct ids {
	__u32 *v;
	size_t n, cap;
};

/* A decoded AnyValue of a kind the reader uses. */
struct value {
	enum value_kind kind;
	const char *str; /* VAL_STR, NUL-terminated (arena or string table) */
	__s64 num;	 /* VAL_INT */
	__u64 strindex;	 /* string_value_strindex, resolved at validation */
	bool has_strindex;
};

struct r_mapping {
	__u64 start, limit, offset, filename;
	size_t attr_off, nattrs;
};

struct r_location {
	__u64 mapping, address;
	size_t line_off, nlines; /* function indices of the lines */
	size_t attr_off, nattrs;
};

struct r_function {
	__u64 name, system_name, filename;
	__s64 start_line;
};

/* Line and column of one line (beside its function index in line_fns). */
struct r_linepos {
	__s64 line, column;
};

struct r_attr {
	__u64 key, unit;
	struct value v;
	enum role role;
};

struct r_stack {
	size_t off, n;
};

struct rd {
	char *err;
	size_t errlen;

	enum ctx ctx;
	const char *table;
	size_t ientry, ires, iscope, iprof, isample;

	struct arena_chunk *arena;

	/* dictionary, as read */
	struct vec strings; /* const char * */
	struct vec mappings, locations, functions, attrs, stacks;
	struct vec line_pos; /* struct r_linepos, parallel to line_fns */
	size_t nlinks;
	struct vec links; /* struct profile_link, as read (a malformed one: zeros) */
	struct ids map_attrs, loc_attrs, line_fns, stack_locs;

	/* dictionary, resolved */
	struct profile_mapping_desc *mdescs;
	struct profile_frame *lframes;
	struct profile_line *llines; /* the lines of lframes, as line_fns */
	__u32 *lmodel; /* model index of each location, UINT32_MAX until a stack uses it */
	__u32 *smodel; /* model index of each stack, UINT32_MAX until a sample uses it */

	/* per sample scratch */
	__u32 *locs; /* model location indices of a stack */
	size_t locs_cap;
	struct ids sattrs;

	struct profile *p;
	struct profile_meta meta;
	struct profile_kv kv[PROFILE_MAX_RESOURCE_ATTRS];
	bool have_profile, have_scope;
	bool have_sample_type, have_period_type;
	__u64 sample_type[2], period_type[2];
	/* Value type of the Profile being read: 0 for the first Profile's
	 * sample type, else one added to the model (off_cpu beside cpu). */
	__u32 cur_type;
};

/* ---- errors ----------------------------------------------------------------- */

static int fail(struct rd *r, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct rd *r, int err, const char *fmt, ...)
{
	char where[160] = "";
	va_list ap;
	int n = 0;

	if (!r->err || !r->errlen)
		return err;
	switch (r->ctx) {
	case CTX_TOP:
		break;
	case CTX_DICT:
		snprintf(where, sizeof(where), "dictionary: ");
		break;
	case CTX_ENTRY:
		snprintf(where, sizeof(where), "dictionary: %s %zu: ", r->table, r->ientry);
		break;
	case CTX_RESOURCE:
		snprintf(where, sizeof(where), "resource %zu: ", r->ires);
		break;
	case CTX_SCOPE:
		snprintf(where, sizeof(where), "resource %zu, scope %zu: ", r->ires, r->iscope);
		break;
	case CTX_PROFILE:
		snprintf(where, sizeof(where), "resource %zu, scope %zu, profile %zu: ", r->ires,
			 r->iscope, r->iprof);
		break;
	case CTX_SAMPLE:
		snprintf(where, sizeof(where),
			 "sample %zu of resource %zu (scope %zu, profile %zu): ", r->isample,
			 r->ires, r->iscope, r->iprof);
		break;
	}
	n = snprintf(r->err, r->errlen, "%s", where);
	if (n < 0 || (size_t)n >= r->errlen)
		return err;
	va_start(ap, fmt);
	vsnprintf(r->err + n, r->errlen - n, fmt, ap);
	va_end(ap);
	return err;
}

static int wire_err(struct rd *r, pb_istream_t *s)
{
	const char *why = PB_GET_ERROR(s);

	if (!strcmp(why, "end-of-stream"))
		why = "truncated: data ends inside a field";
	else if (!strcmp(why, "parent stream too short"))
		why = "a length runs past the end of its message";
	return fail(r, -EBADMSG, "malformed protobuf (%s)", why);
}

static int nomem(struct rd *r)
{
	return fail(r, -ENOMEM, "out of memory");
}

static const char *wire_name(pb_wire_type_t wt)
{
	switch (wt) {
	case PB_WT_VARINT:
		return "varint";
	case PB_WT_64BIT:
		return "fixed64";
	case PB_WT_STRING:
		return "length-delimited";
	case PB_WT_32BIT:
		return "fixed32";
	default:
		return "invalid";
	}
}

static int want(struct rd *r, pb_wire_type_t wt, pb_wire_type_t expect, const char *field)
{
	if (wt == expect)
		return 0;
	return fail(r, -EBADMSG, "%s has wire type %s, expected %s", field, wire_name(wt),
		    wire_name(expect));
}

static int out_of_range(struct rd *r, const char *field, __u64 idx, const char *table, size_t n)
{
	if ((__s64)idx < 0)
		return fail(r, -EBADMSG, "%s %lld is negative", field, (long long)idx);
	return fail(r, -EBADMSG, "%s %llu out of range (%s has %zu entries)", field,
		    (unsigned long long)idx, table, n);
}

static int too_large(struct rd *r, const char *field, __u64 idx)
{
	if ((__s64)idx < 0)
		return fail(r, -EBADMSG, "%s %lld is negative", field, (long long)idx);
	return fail(r, -EBADMSG, "%s %llu is too large", field, (unsigned long long)idx);
}

/* ---- storage ------------------------------------------------------------------ */

/* NUL-terminated copy of the next @len bytes of @s, in the arena. */
static int arena_read(struct rd *r, pb_istream_t *s, size_t len, const char **out)
{
	struct arena_chunk *c = r->arena;
	char *dst;

	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return nomem(r);
		c->size = size;
		c->used = 0;
		c->next = r->arena;
		r->arena = c;
	}
	dst = c->data + c->used;
	if (!pb_read(s, (pb_byte_t *)dst, len))
		return wire_err(r, s);
	dst[len] = '\0';
	c->used += len + 1;
	*out = dst;
	return 0;
}

static void arena_free(struct arena_chunk *c)
{
	while (c) {
		struct arena_chunk *next = c->next;

		free(c);
		c = next;
	}
}

/* Append one zeroed entry of @size bytes to @v; NULL when full or out of
 * memory (*@err says which). */
static void *vec_push(struct vec *v, size_t size, int *err)
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

static int ids_push(struct ids *l, __u32 v)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 256;
		__u32 *d;

		if (l->n >= MAX_POOL)
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

#define VEC_AT(v, type, i) (&((type *)(v).d)[i])

/* ---- wire helpers ------------------------------------------------------------ */

/* The input stream: nanopb's buffer stream copies each byte of a varint with
 * memcpy(); this one copies single bytes directly, and lets skip() jump over
 * a substream's rest. nanopb checks bytes_left before every read. */
static bool mem_read(pb_istream_t *s, pb_byte_t *buf, size_t count)
{
	const pb_byte_t *src = s->state;

	s->state = (pb_byte_t *)src + count;
	if (count == 1)
		*buf = *src;
	else
		memcpy(buf, src, count);
	return true;
}

static pb_istream_t mem_stream(const void *data, size_t len)
{
	pb_istream_t s = {.callback = mem_read, .state = (void *)data, .bytes_left = len};

	return s;
}

/* Consume what is left of substream @sub (of a mem_stream()). */
static void drain(pb_istream_t *sub)
{
	sub->state = (pb_byte_t *)sub->state + sub->bytes_left;
	sub->bytes_left = 0;
}

static int next_tag(struct rd *r, pb_istream_t *s, pb_wire_type_t *wt, __u32 *tag)
{
	bool eof;

	if (!pb_decode_tag(s, wt, tag, &eof))
		return wire_err(r, s);
	if (!*tag)
		return fail(r, -EBADMSG, "malformed protobuf (field number 0)");
	return 0;
}

static int skip(struct rd *r, pb_istream_t *s, pb_wire_type_t wt)
{
	pb_istream_t sub;

	/* Through a substream: a precise message on a bad length, and a jump
	 * rather than a read over the bytes. */
	if (wt == PB_WT_STRING) {
		if (!pb_make_string_substream(s, &sub))
			return wire_err(r, s);
		drain(&sub);
		if (!pb_close_string_substream(s, &sub))
			return wire_err(r, &sub);
		return 0;
	}
	if (!pb_skip_field(s, wt))
		return wire_err(r, s);
	return 0;
}

static int get_varint(struct rd *r, pb_istream_t *s, pb_wire_type_t wt, const char *field, __u64 *v)
{
	uint64_t x;
	int err = want(r, wt, PB_WT_VARINT, field);

	if (err)
		return err;
	if (!pb_decode_varint(s, &x))
		return wire_err(r, s);
	*v = x;
	return 0;
}

static int get_fixed64(struct rd *r, pb_istream_t *s, pb_wire_type_t wt, const char *field,
		       __u64 *v)
{
	uint64_t x;
	int err = want(r, wt, PB_WT_64BIT, field);

	if (err)
		return err;
	if (!pb_decode_fixed64(s, &x))
		return wire_err(r, s);
	*v = x;
	return 0;
}

static int open_sub(struct rd *r, pb_istream_t *s, pb_wire_type_t wt, const char *field,
		    pb_istream_t *sub)
{
	int err = want(r, wt, PB_WT_STRING, field);

	if (err)
		return err;
	if (!pb_make_string_substream(s, sub))
		return wire_err(r, s);
	return 0;
}

static int close_sub(struct rd *r, pb_istream_t *s, pb_istream_t *sub)
{
	drain(sub);
	if (!pb_close_string_substream(s, sub))
		return wire_err(r, sub);
	return 0;
}

/* A string field, copied NUL-terminated into the arena. */
static int get_string(struct rd *r, pb_istream_t *s, pb_wire_type_t wt, const char *field,
		      const char **out)
{
	pb_istream_t sub;
	int err;

	err = open_sub(r, s, wt, field, &sub);
	if (!err)
		err = arena_read(r, &sub, sub.bytes_left, out);
	if (!err)
		err = close_sub(r, s, &sub);
	return err;
}

/* A repeated int32 index field, packed or not, appended to @l. Negative or
 * larger than 32-bit values are errors here; ranges are checked later. */
static int get_ids(struct rd *r, pb_istream_t *s, pb_wire_type_t wt, const char *field,
		   struct ids *l)
{
	pb_istream_t sub;
	uint64_t x;
	int err;

	if (wt == PB_WT_VARINT) {
		if (!pb_decode_varint(s, &x))
			return wire_err(r, s);
		if (x > UINT32_MAX - 1)
			return too_large(r, field, x);
		err = ids_push(l, (__u32)x);
		return err ? fail(r, err, "%s: too many indices", field) : 0;
	}
	err = open_sub(r, s, wt, field, &sub);
	while (!err && sub.bytes_left) {
		if (!pb_decode_varint(&sub, &x))
			return wire_err(r, &sub);
		if (x > UINT32_MAX - 1)
			return too_large(r, field, x);
		err = ids_push(l, (__u32)x);
		if (err)
			return fail(r, err, "%s: too many indices", field);
	}
	return err ?: close_sub(r, s, &sub);
}

/* ---- AnyValue -------------------------------------------------------------------- */

/* Decode an AnyValue of the kinds the reader uses (string, int, string
 * index); other kinds are skipped whole, whatever they nest. */
static int get_value(struct rd *r, pb_istream_t *s, pb_wire_type_t wt, const char *field,
		     struct value *v)
{
	pb_istream_t sub;
	__u32 tag;
	__u64 x;
	int err;

	memset(v, 0, sizeof(*v));
	err = open_sub(r, s, wt, field, &sub);
	while (!err && sub.bytes_left) {
		err = next_tag(r, &sub, &wt, &tag);
		if (err)
			break;
		switch (tag) {
		case F_ANY_STRING:
			v->kind = VAL_STR;
			v->has_strindex = false;
			err = get_string(r, &sub, wt, "string_value", &v->str);
			break;
		case F_ANY_INT:
			v->kind = VAL_INT;
			err = get_varint(r, &sub, wt, "int_value", &x);
			v->num = (__s64)x;
			break;
		case F_ANY_STRINDEX:
			v->kind = VAL_STR;
			v->has_strindex = true;
			v->str = NULL;
			err = get_varint(r, &sub, wt, "string_value_strindex", &v->strindex);
			break;
		case 2: /* bool */
			v->kind = VAL_BOOL;
			err = get_varint(r, &sub, wt, "bool_value", &x);
			v->num = !!x;
			break;
		case 4: /* double */
		case 5: /* array */
		case 6: /* kvlist */
		case 7: /* bytes */
			v->kind = VAL_OTHER;
			err = skip(r, &sub, wt);
			break;
		default:
			err = skip(r, &sub, wt);
			break;
		}
	}
	return err ?: close_sub(r, s, &sub);
}

/* ---- dictionary ------------------------------------------------------------------ */

/* The dictionary's messages are read by table: each known field's number,
 * kind, name (for errors) and where its value goes. */
enum field_kind {
	FK_VARINT, /* a __u64 (or __s64) in the entry */
	FK_VALUE,  /* a struct value in the entry */
	FK_IDS,	   /* appended to a struct ids of struct rd (index pools) */
	FK_LINE,   /* Location.lines: read_line() */
};

struct field_desc {
	__u32 num;
	enum field_kind kind;
	const char *name;
	size_t off; /* in the entry, or in struct rd for FK_IDS */
};

#define IN_ENTRY(num, kind, name, type, member) {num, kind, name, offsetof(type, member)}
#define IN_POOL(num, name, member) {num, FK_IDS, name, offsetof(struct rd, member)}

static int read_line(struct rd *r, pb_istream_t *s);

/* Read the fields of message @s that @fd (@n of them) describes into
 * @entry; others are skipped. */
static int read_fields(struct rd *r, pb_istream_t *s, const struct field_desc *fd, size_t n,
		       void *entry)
{
	pb_istream_t sub;
	pb_wire_type_t wt;
	__u32 tag;
	int err = 0;
	size_t i;

	while (!err && s->bytes_left) {
		err = next_tag(r, s, &wt, &tag);
		if (err)
			break;
		for (i = 0; i < n && fd[i].num != tag; i++)
			;
		if (i == n) {
			err = skip(r, s, wt);
			continue;
		}
		switch (fd[i].kind) {
		case FK_VARINT:
			err = get_varint(r, s, wt, fd[i].name, (__u64 *)((char *)entry + fd[i].off));
			break;
		case FK_VALUE:
			err = get_value(r, s, wt, fd[i].name,
					(struct value *)((char *)entry + fd[i].off));
			break;
		case FK_IDS:
			err = get_ids(r, s, wt, fd[i].name, (struct ids *)((char *)r + fd[i].off));
			break;
		case FK_LINE:
			err = open_sub(r, s, wt, fd[i].name, &sub);
			err = err ?: read_line(r, &sub);
			err = err ?: close_sub(r, s, &sub);
			break;
		}
	}
	return err;
}

static const struct field_desc mapping_fields[] = {
	IN_ENTRY(F_MAPPING_START, FK_VARINT, "memory_start", struct r_mapping, start),
	IN_ENTRY(F_MAPPING_LIMIT, FK_VARINT, "memory_limit", struct r_mapping, limit),
	IN_ENTRY(F_MAPPING_OFFSET, FK_VARINT, "file_offset", struct r_mapping, offset),
	IN_ENTRY(F_MAPPING_FILENAME, FK_VARINT, "filename_strindex", struct r_mapping, filename),
	IN_POOL(F_MAPPING_ATTRS, "attribute_indices", map_attrs),
};

static int read_mapping(struct rd *r, pb_istream_t *s)
{
	struct r_mapping *m;
	int err = 0;

	m = vec_push(&r->mappings, sizeof(*m), &err);
	if (!m)
		return fail(r, err, "too many mappings");
	m->attr_off = r->map_attrs.n;
	err = read_fields(r, s, mapping_fields, ARRAY_LEN(mapping_fields), m);
	m->nattrs = r->map_attrs.n - m->attr_off;
	return err;
}

struct r_line {
	__u64 fn, line, col;
};

static const struct field_desc line_fields[] = {
	IN_ENTRY(F_LINE_FUNCTION, FK_VARINT, "lines.function_index", struct r_line, fn),
	IN_ENTRY(F_LINE_LINE, FK_VARINT, "lines.line", struct r_line, line),
	IN_ENTRY(F_LINE_COLUMN, FK_VARINT, "lines.column", struct r_line, col),
};

static int read_line(struct rd *r, pb_istream_t *s)
{
	struct r_line l = {0};
	struct r_linepos *pos;
	int err = read_fields(r, s, line_fields, ARRAY_LEN(line_fields), &l);

	if (!err && l.fn > UINT32_MAX - 1)
		return too_large(r, "lines.function_index", l.fn);
	if (!err) {
		err = ids_push(&r->line_fns, (__u32)l.fn);
		pos = err ? NULL : vec_push(&r->line_pos, sizeof(*pos), &err);
		if (err)
			return fail(r, err, "too many lines");
		/* int64 on the wire: negative values are unknown, as 0. */
		pos->line = (__s64)l.line > 0 ? (__s64)l.line : 0;
		pos->column = (__s64)l.col > 0 ? (__s64)l.col : 0;
	}
	return err;
}

static const struct field_desc location_fields[] = {
	IN_ENTRY(F_LOCATION_MAPPING, FK_VARINT, "mapping_index", struct r_location, mapping),
	IN_ENTRY(F_LOCATION_ADDRESS, FK_VARINT, "address", struct r_location, address),
	{F_LOCATION_LINES, FK_LINE, "lines", 0},
	IN_POOL(F_LOCATION_ATTRS, "attribute_indices", loc_attrs),
};

static int read_location(struct rd *r, pb_istream_t *s)
{
	struct r_location *l;
	int err = 0;

	l = vec_push(&r->locations, sizeof(*l), &err);
	if (!l)
		return fail(r, err, "too many locations");
	l->attr_off = r->loc_attrs.n;
	l->line_off = r->line_fns.n;
	err = read_fields(r, s, location_fields, ARRAY_LEN(location_fields), l);
	l->nattrs = r->loc_attrs.n - l->attr_off;
	l->nlines = r->line_fns.n - l->line_off;
	return err;
}

static const struct field_desc function_fields[] = {
	IN_ENTRY(F_FUNCTION_NAME, FK_VARINT, "name_strindex", struct r_function, name),
	IN_ENTRY(F_FUNCTION_SYSTEM_NAME, FK_VARINT, "system_name_strindex", struct r_function,
		 system_name),
	IN_ENTRY(F_FUNCTION_FILENAME, FK_VARINT, "filename_strindex", struct r_function, filename),
	IN_ENTRY(F_FUNCTION_START_LINE, FK_VARINT, "start_line", struct r_function, start_line),
};

static int read_function(struct rd *r, pb_istream_t *s)
{
	struct r_function *f;
	int err = 0;

	f = vec_push(&r->functions, sizeof(*f), &err);
	if (!f)
		return fail(r, err, "too many functions");
	err = read_fields(r, s, function_fields, ARRAY_LEN(function_fields), f);
	if (f->start_line < 0) /* int64 on the wire: negative is unknown, as 0 */
		f->start_line = 0;
	return err;
}

static const struct field_desc attr_fields[] = {
	IN_ENTRY(F_KVU_KEY, FK_VARINT, "key_strindex", struct r_attr, key),
	IN_ENTRY(F_KVU_VALUE, FK_VALUE, "value", struct r_attr, v),
	IN_ENTRY(F_KVU_UNIT, FK_VARINT, "unit_strindex", struct r_attr, unit),
};

static int read_attr(struct rd *r, pb_istream_t *s)
{
	struct r_attr *a;
	int err = 0;

	a = vec_push(&r->attrs, sizeof(*a), &err);
	if (!a)
		return fail(r, err, "too many attributes");
	return read_fields(r, s, attr_fields, ARRAY_LEN(attr_fields), a);
}

static const struct field_desc stack_fields[] = {
	IN_POOL(F_STACK_LOCATIONS, "location_indices", stack_locs),
};

static int read_stack(struct rd *r, pb_istream_t *s)
{
	struct r_stack *st;
	int err = 0;

	st = vec_push(&r->stacks, sizeof(*st), &err);
	if (!st)
		return fail(r, err, "too many stacks");
	st->off = r->stack_locs.n;
	err = read_fields(r, s, stack_fields, ARRAY_LEN(stack_fields), st);
	st->n = r->stack_locs.n - st->off;
	return err;
}

/* One Link: trace_id (16 bytes) and span_id (8 bytes). Ids of another
 * width (the zero Link{} has none) read as no link. */
static int read_link(struct rd *r, pb_istream_t *s, pb_wire_type_t wt)
{
	struct profile_link l = {0}, *out;
	bool ok_trace = false, ok_span = false;
	pb_istream_t sub, id;
	pb_wire_type_t iwt;
	__u32 tag;
	int err;

	err = open_sub(r, s, wt, "link_table", &sub);
	while (!err && sub.bytes_left) {
		err = next_tag(r, &sub, &iwt, &tag);
		if (err)
			break;
		if (tag != 1 && tag != 2) {
			err = skip(r, &sub, iwt);
			continue;
		}
		err = open_sub(r, &sub, iwt, tag == 1 ? "trace_id" : "span_id", &id);
		if (err)
			break;
		if (tag == 1 && id.bytes_left == sizeof(l.trace_id)) {
			ok_trace = pb_read(&id, l.trace_id, sizeof(l.trace_id));
			err = ok_trace ? 0 : wire_err(r, &id);
		} else if (tag == 2 && id.bytes_left == sizeof(l.span_id)) {
			ok_span = pb_read(&id, l.span_id, sizeof(l.span_id));
			err = ok_span ? 0 : wire_err(r, &id);
		} else if (tag == 1) {
			ok_trace = false;
		} else {
			ok_span = false;
		}
		err = err ?: close_sub(r, &sub, &id);
	}
	err = err ?: close_sub(r, s, &sub);
	if (err)
		return err;
	out = vec_push(&r->links, sizeof(*out), &err);
	if (!out)
		return err == -E2BIG ? fail(r, err, "link_table: too many entries") : nomem(r);
	if (ok_trace && ok_span)
		*out = l;
	r->nlinks = r->links.n;
	return 0;
}

static int read_string(struct rd *r, pb_istream_t *s, pb_wire_type_t wt)
{
	const char **slot;
	int err = 0;

	slot = vec_push(&r->strings, sizeof(*slot), &err);
	if (!slot)
		return fail(r, err, "too many strings");
	return get_string(r, s, wt, "string", slot);
}

/* The dictionary tables of messages: their reader and where they go. */
static const struct {
	__u32 num;
	int (*read)(struct rd *, pb_istream_t *);
	const char *name;
	size_t vec; /* offset of the struct vec in struct rd */
} dict_tables[] = {
	{F_DICT_MAPPING, read_mapping, "mapping_table", offsetof(struct rd, mappings)},
	{F_DICT_LOCATION, read_location, "location_table", offsetof(struct rd, locations)},
	{F_DICT_FUNCTION, read_function, "function_table", offsetof(struct rd, functions)},
	{F_DICT_ATTRIBUTE, read_attr, "attribute_table", offsetof(struct rd, attrs)},
	{F_DICT_STACK, read_stack, "stack_table", offsetof(struct rd, stacks)},
};

static int read_dictionary(struct rd *r, pb_istream_t *s)
{
	pb_istream_t sub;
	__u32 tag;
	pb_wire_type_t wt;
	int err = 0;
	size_t i;

	r->ctx = CTX_DICT;
	while (!err && s->bytes_left) {
		int (*entry)(struct rd *, pb_istream_t *) = NULL;
		const char *name = NULL;
		struct vec *v = NULL;

		err = next_tag(r, s, &wt, &tag);
		if (err)
			break;
		for (i = 0; i < ARRAY_LEN(dict_tables); i++)
			if (dict_tables[i].num == tag) {
				entry = dict_tables[i].read;
				name = dict_tables[i].name;
				v = (struct vec *)((char *)r + dict_tables[i].vec);
			}
		if (!entry && tag == F_DICT_STRING) {
			r->ctx = CTX_ENTRY;
			r->table = "string_table";
			r->ientry = r->strings.n;
			err = read_string(r, s, wt);
			r->ctx = CTX_DICT;
			continue;
		}
		if (!entry && tag == F_DICT_LINK) {
			r->ctx = CTX_ENTRY;
			r->table = "link_table";
			r->ientry = r->links.n;
			err = read_link(r, s, wt);
			r->ctx = CTX_DICT;
			continue;
		}
		if (!entry) {
			err = skip(r, s, wt);
			continue;
		}
		err = open_sub(r, s, wt, name, &sub);
		if (err)
			break;
		r->ctx = CTX_ENTRY;
		r->table = name;
		r->ientry = v->n;
		err = entry(r, &sub);
		err = err ?: close_sub(r, s, &sub);
		r->ctx = CTX_DICT;
	}
	return err;
}

/* ---- validation and resolution ------------------------------------------------ */

static const char *string_at(const struct rd *r, __u64 idx)
{
	return *VEC_AT(r->strings, const char *, idx);
}

static int check_str(struct rd *r, const char *field, __u64 idx)
{
	if (idx < r->strings.n)
		return 0;
	return out_of_range(r, field, idx, "string_table", r->strings.n);
}

/* Range-check @n attribute indices at @off in @pool. */
static int check_attrs(struct rd *r, const struct ids *pool, size_t off, size_t n)
{
	size_t i;

	for (i = off; i < off + n; i++)
		if (pool->v[i] >= r->attrs.n)
			return out_of_range(r, "attribute index", pool->v[i], "attribute_table",
					    r->attrs.n);
	return 0;
}

/* A table missing from the input reads as holding only its zero value
 * (proto3: an unset index is 0). */
static int ensure_zero_entries(struct rd *r)
{
	static const char *const empty = "";
	int err = 0;

	if (!r->strings.n && vec_push(&r->strings, sizeof(empty), &err))
		*VEC_AT(r->strings, const char *, 0) = empty;
	if (!err && !r->mappings.n)
		vec_push(&r->mappings, sizeof(struct r_mapping), &err);
	if (!err && !r->locations.n)
		vec_push(&r->locations, sizeof(struct r_location), &err);
	if (!err && !r->functions.n)
		vec_push(&r->functions, sizeof(struct r_function), &err);
	if (!err && !r->attrs.n)
		vec_push(&r->attrs, sizeof(struct r_attr), &err);
	if (!err && !r->stacks.n)
		vec_push(&r->stacks, sizeof(struct r_stack), &err);
	if (!r->nlinks)
		r->nlinks = 1;
	return err ? nomem(r) : 0;
}

static enum role attr_role(const char *key)
{
	static const struct {
		const char *key;
		enum role role;
	} roles[] = {
		{"thread.id", ROLE_THREAD_ID},
		{"thread.name", ROLE_THREAD_NAME},
		{"profile.frame.type", ROLE_FRAME_TYPE},
		{"process.executable.build_id.gnu", ROLE_BUILD_ID},
		{"pprof.mapping.has_functions", ROLE_HAS_FUNCTIONS},
		{"pprof.mapping.has_filenames", ROLE_HAS_FILENAMES},
		{"pprof.mapping.has_line_numbers", ROLE_HAS_LINE_NUMBERS},
		{"pprof.mapping.has_inline_frames", ROLE_HAS_INLINE_FRAMES},
		{"process.executable.build_id.htlhash", ROLE_HTLHASH},
		{"process.executable.build_id.go", ROLE_GO_BUILD_ID},
		{PROFILE_ATTR_SAMPLES_DROPPED, ROLE_DROPPED},
		{PROFILE_ATTR_SAMPLES_TRUNCATED, ROLE_TRUNCATED},
		{PROFILE_ATTR_SAMPLES_STACK_MISSING, ROLE_STACK_MISSING},
		{PROFILE_ATTR_OFF_CPU_STATE, ROLE_OFF_CPU_STATE},
		{PROFILE_ATTR_OFF_CPU_SWITCHES, ROLE_OFF_CPU_SWITCHES},
		{PROFILE_ATTR_SAMPLES_TRUNCATED_DEPTH, ROLE_TRUNCATED_DEPTH},
	};
	size_t i;

	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (!strcmp(key, roles[i].key))
			return roles[i].role;
	return ROLE_NONE;
}

/* Line @i of line_fns (range-checked) as the model's input. A function
 * without a name is named by its system name, else its file name. */
static void read_frame_line(struct rd *r, size_t i, struct profile_line *out)
{
	const struct r_function *fn = VEC_AT(r->functions, struct r_function, r->line_fns.v[i]);
	const struct r_linepos *pos = VEC_AT(r->line_pos, struct r_linepos, i);
	const char *name = string_at(r, fn->name);
	const char *sys = string_at(r, fn->system_name);
	const char *file = string_at(r, fn->filename);

	if (!*name)
		name = *sys ? sys : file;
	out->function = *name ? name : NULL;
	out->system_name = *sys ? sys : NULL;
	out->filename = *file ? file : NULL;
	out->start_line = fn->start_line;
	out->line = pos->line;
	out->column = pos->column;
}

/* Range-check every index of the dictionary, then turn mappings and
 * locations into the model's input descriptions, once. */
/* Check the attribute table's string indices; note each key's role. */
static int resolve_attrs(struct rd *r)
{
	size_t i;
	int err = 0;

	r->table = "attribute_table";
	for (i = 0; i < r->attrs.n && !err; i++) {
		struct r_attr *a = VEC_AT(r->attrs, struct r_attr, i);

		r->ientry = i;
		err = check_str(r, "key_strindex", a->key);
		err = err ?: check_str(r, "unit_strindex", a->unit);
		if (!err && a->v.has_strindex) {
			err = check_str(r, "value.string_value_strindex", a->v.strindex);
			if (!err)
				a->v.str = string_at(r, a->v.strindex);
		}
		if (!err)
			a->role = attr_role(string_at(r, a->key));
	}
	return err;
}

/* Check the function table's string indices. */
static int resolve_functions(struct rd *r)
{
	size_t i;
	int err = 0;

	r->table = "function_table";
	for (i = 0; i < r->functions.n && !err; i++) {
		const struct r_function *f = VEC_AT(r->functions, struct r_function, i);

		r->ientry = i;
		err = check_str(r, "name_strindex", f->name);
		err = err ?: check_str(r, "system_name_strindex", f->system_name);
		err = err ?: check_str(r, "filename_strindex", f->filename);
	}
	return err;
}

/* Check the mapping table; build the mapping descs. */
static int resolve_mappings(struct rd *r)
{
	size_t i, j;
	int err = 0;

	r->table = "mapping_table";
	r->mdescs = calloc(r->mappings.n, sizeof(*r->mdescs));
	if (!r->mdescs)
		return nomem(r);
	for (i = 0; i < r->mappings.n && !err; i++) {
		const struct r_mapping *m = VEC_AT(r->mappings, struct r_mapping, i);
		struct profile_mapping_desc *d = &r->mdescs[i];

		r->ientry = i;
		err = check_str(r, "filename_strindex", m->filename);
		err = err ?: check_attrs(r, &r->map_attrs, m->attr_off, m->nattrs);
		if (err)
			break;
		d->start = m->start;
		d->limit = m->limit;
		d->file_offset = m->offset;
		d->path = string_at(r, m->filename);
		for (j = 0; j < m->nattrs; j++) {
			const struct r_attr *a =
				VEC_AT(r->attrs, struct r_attr, r->map_attrs.v[m->attr_off + j]);

			if (a->role >= ROLE_HAS_FUNCTIONS && a->role <= ROLE_HAS_INLINE_FRAMES &&
			    a->v.kind == VAL_BOOL && a->v.num)
				d->flags |= 1u << (a->role - ROLE_HAS_FUNCTIONS);
			if (a->v.kind != VAL_STR)
				continue;
			if (a->role == ROLE_BUILD_ID)
				d->build_id = a->v.str;
			else if (a->role == ROLE_HTLHASH)
				d->htlhash = a->v.str;
			else if (a->role == ROLE_GO_BUILD_ID)
				d->go_build_id = a->v.str;
		}
	}
	return err;
}

/* The frame of location @l: address, mapping, the name of its first line's
 * function, and its type. */
static void location_frame(struct rd *r, const struct r_location *l, struct profile_frame *f)
{
	size_t j;

	f->address = l->address;
	/* Index 0 is "no mapping"; an empty range is unusable. */
	if (l->mapping && r->mdescs[l->mapping].start < r->mdescs[l->mapping].limit)
		f->mapping = &r->mdescs[l->mapping];
	/* The function of lines[0] names the frame. */
	for (j = 0; j < l->nlines; j++)
		read_frame_line(r, l->line_off + j, &r->llines[l->line_off + j]);
	if (l->nlines) {
		f->lines = &r->llines[l->line_off];
		f->nlines = l->nlines;
		f->function = f->lines[0].function;
		f->system_name = f->lines[0].system_name;
	}
	f->type = PROFILE_FRAME_NATIVE;
	for (j = 0; j < l->nattrs; j++) {
		const struct r_attr *a =
			VEC_AT(r->attrs, struct r_attr, r->loc_attrs.v[l->attr_off + j]);

		if (a->role != ROLE_FRAME_TYPE || a->v.kind != VAL_STR || !*a->v.str)
			continue;
		f->type_name = NULL;
		if (!strcmp(a->v.str, "kernel"))
			f->type = PROFILE_FRAME_KERNEL;
		else if (!strcmp(a->v.str, "native"))
			f->type = PROFILE_FRAME_NATIVE;
		else
			f->type_name = a->v.str;
	}
}

/* Check the location table's references; build the frames. */
static int resolve_locations(struct rd *r)
{
	size_t i, j;
	int err = 0;

	r->table = "location_table";
	r->lframes = calloc(r->locations.n, sizeof(*r->lframes));
	r->llines = calloc(r->line_fns.n + 1, sizeof(*r->llines));
	r->lmodel = malloc(r->locations.n * sizeof(*r->lmodel));
	if (!r->lframes || !r->llines || !r->lmodel)
		return nomem(r);
	memset(r->lmodel, 0xff, r->locations.n * sizeof(*r->lmodel));
	for (i = 0; i < r->locations.n && !err; i++) {
		const struct r_location *l = VEC_AT(r->locations, struct r_location, i);
		struct profile_frame *f = &r->lframes[i];

		r->ientry = i;
		if (l->mapping >= r->mappings.n)
			return out_of_range(r, "mapping_index", l->mapping, "mapping_table",
					    r->mappings.n);
		for (j = 0; j < l->nlines; j++)
			if (r->line_fns.v[l->line_off + j] >= r->functions.n)
				return out_of_range(r, "lines.function_index",
						    r->line_fns.v[l->line_off + j],
						    "function_table", r->functions.n);
		err = check_attrs(r, &r->loc_attrs, l->attr_off, l->nattrs);
		if (err)
			break;
		location_frame(r, l, f);
	}
	return err;
}

/* Check the stack table's location indices. */
static int resolve_stacks(struct rd *r)
{
	size_t i, j;
	int err = 0;

	r->table = "stack_table";
	r->smodel = malloc(r->stacks.n * sizeof(*r->smodel));
	if (!r->smodel)
		return nomem(r);
	memset(r->smodel, 0xff, r->stacks.n * sizeof(*r->smodel));
	for (i = 0; i < r->stacks.n && !err; i++) {
		const struct r_stack *st = VEC_AT(r->stacks, struct r_stack, i);

		r->ientry = i;
		for (j = 0; j < st->n; j++)
			if (r->stack_locs.v[st->off + j] >= r->locations.n)
				return out_of_range(r, "location index",
						    r->stack_locs.v[st->off + j], "location_table",
						    r->locations.n);
	}
	return err;
}

static int resolve_dictionary(struct rd *r)
{
	int err;

	err = ensure_zero_entries(r);
	if (err)
		return err;
	r->ctx = CTX_ENTRY;
	err = resolve_attrs(r);
	err = err ?: resolve_functions(r);
	err = err ?: resolve_mappings(r);
	err = err ?: resolve_locations(r);
	err = err ?: resolve_stacks(r);
	return err;
}

/* ---- resources ------------------------------------------------------------------ */

struct resource {
	struct profile_process_desc desc;
	bool has_pid;
	/* Its other attributes (service.*, ...: what the process published or
	 * the operator gave), kept with the process so each resource gets back
	 * exactly its own. */
	struct profile_kv kv[PROFILE_MAX_RESOURCE_ATTRS];
	size_t nkv;
};

static bool kv_has(const struct profile_kv *kv, size_t n, const char *key, const char *value)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key) && (!value || !strcmp(kv[i].value, value)))
			return true;
	return false;
}

/* Capture-wide (meta) attributes are those every resource carries with the
 * same value: drop from r->kv what resource @res lacks. */
static void meta_keep_common(struct rd *r, const struct resource *res)
{
	size_t i, k = 0;

	for (i = 0; i < r->meta.nresource; i++)
		if (kv_has(res->kv, res->nkv, r->kv[i].key, r->kv[i].value))
			r->kv[k++] = r->kv[i];
	r->meta.nresource = k;
}

/* Parse a decimal integer filling all of @s. */
static bool parse_int(const char *s, __s64 *v)
{
	char *end;
	long long x;

	if (!*s)
		return false;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

static int read_keyvalue(struct rd *r, pb_istream_t *s, struct resource *res)
{
	const char *key = NULL;
	struct value v = {0};
	__u64 kidx;
	__u32 tag;
	pb_wire_type_t wt;
	int err = 0;

	while (!err && s->bytes_left) {
		err = next_tag(r, s, &wt, &tag);
		if (err)
			break;
		switch (tag) {
		case F_KV_KEY:
			err = get_string(r, s, wt, "attribute key", &key);
			break;
		case F_KV_KEY_STRINDEX:
			err = get_varint(r, s, wt, "attribute key_strindex", &kidx);
			err = err ?: check_str(r, "attribute key_strindex", kidx);
			if (!err)
				key = string_at(r, kidx);
			break;
		case F_KV_VALUE:
			err = get_value(r, s, wt, "attribute value", &v);
			break;
		default:
			err = skip(r, s, wt);
		}
	}
	if (err)
		return err;
	if (v.has_strindex) {
		err = check_str(r, "attribute value string_value_strindex", v.strindex);
		if (err)
			return err;
		v.str = string_at(r, v.strindex);
	}
	if (!key || (v.kind != VAL_STR && v.kind != VAL_INT))
		return 0;

	if (!strcmp(key, "process.pid")) {
		if (v.kind == VAL_INT) {
			res->desc.pid = v.num;
			res->has_pid = true;
		} else if (parse_int(v.str, &res->desc.pid)) {
			res->has_pid = true;
		}
		return 0;
	}
	if (v.kind != VAL_STR)
		return 0;
	if (!strcmp(key, "process.executable.name")) {
		res->desc.exe_name = v.str;
	} else if (!strcmp(key, "process.executable.path")) {
		res->desc.exe_path = v.str;
	} else if (!strcmp(key, "process.command_line")) {
		res->desc.cmdline = v.str;
	} else if (!strcmp(key, "container.id")) {
		res->desc.container_id = v.str;
	} else if (!strcmp(key, "host.name")) {
		if (!r->meta.host_name)
			r->meta.host_name = v.str;
	} else if (!strcmp(key, "host.arch")) {
		if (!r->meta.host_arch)
			r->meta.host_arch = v.str;
	} else if (!strcmp(key, "os.type")) {
		if (!r->meta.os_type)
			r->meta.os_type = v.str;
	} else if (strncmp(key, "process.", 8) && *key &&
		   res->nkv < PROFILE_MAX_RESOURCE_ATTRS && !kv_has(res->kv, res->nkv, key, NULL)) {
		res->kv[res->nkv].key = key;
		res->kv[res->nkv].value = v.str;
		res->nkv++;
		if (r->ires == 0 && r->meta.nresource < PROFILE_MAX_RESOURCE_ATTRS) {
			/* Operator attributes (service.name, ...): candidates from
			 * the first resource, kept if every other one has them. */
			r->kv[r->meta.nresource].key = key;
			r->kv[r->meta.nresource].value = v.str;
			r->meta.nresource++;
		}
	}
	return 0;
}

/* Hand each submessage field @field of @s (named @name in errors) to @fn
 * with @res, in order; the other fields are skipped. */
static int each_sub(struct rd *r, pb_istream_t *s, __u32 field, const char *name,
		    int (*fn)(struct rd *, pb_istream_t *, struct resource *), struct resource *res)
{
	pb_istream_t sub;
	__u32 tag;
	pb_wire_type_t wt;
	int err = 0;

	while (!err && s->bytes_left) {
		err = next_tag(r, s, &wt, &tag);
		if (err)
			break;
		if (tag != field) {
			err = skip(r, s, wt);
			continue;
		}
		err = open_sub(r, s, wt, name, &sub);
		err = err ?: fn(r, &sub, res);
		err = err ?: close_sub(r, s, &sub);
	}
	return err;
}

static int read_resource(struct rd *r, pb_istream_t *s, struct resource *res)
{
	return each_sub(r, s, F_RESOURCE_ATTRS, "attributes", read_keyvalue, res);
}

/* ---- samples --------------------------------------------------------------------- */

/* Count the values of a repeated varint (packed or not); *@first gets the
 * first one met. */
static int count_varints(struct rd *r, pb_istream_t *s, pb_wire_type_t wt, const char *field,
			 __u64 *first, size_t *n)
{
	pb_istream_t sub;
	uint64_t x;
	int err;

	if (wt == PB_WT_VARINT) {
		if (!pb_decode_varint(s, &x))
			return wire_err(r, s);
		if (!(*n)++)
			*first = x;
		return 0;
	}
	err = open_sub(r, s, wt, field, &sub);
	while (!err && sub.bytes_left) {
		if (!pb_decode_varint(&sub, &x))
			return wire_err(r, &sub);
		if (!(*n)++)
			*first = x;
	}
	return err ?: close_sub(r, s, &sub);
}

static int count_fixed64(struct rd *r, pb_istream_t *s, pb_wire_type_t wt, const char *field,
			 size_t *n)
{
	pb_istream_t sub;
	int err;

	if (wt == PB_WT_64BIT) {
		(*n)++;
		return skip(r, s, wt);
	}
	err = open_sub(r, s, wt, field, &sub);
	if (err)
		return err;
	if (sub.bytes_left % 8)
		return fail(r, -EBADMSG, "%s: packed length %zu is not a multiple of 8", field,
			    sub.bytes_left);
	*n += sub.bytes_left / 8;
	return close_sub(r, s, &sub);
}

static int add_sample(struct rd *r, const struct resource *res, pb_istream_t *s)
{
	__u64 stack = 0, link = 0, value = 0;
	size_t nvalues = 0, nts = 0, i, n;
	const char *tname = NULL;
	struct profile_labels lab = {0};
	struct profile_ctx_attr cattrs[PROFILE_MAX_CTX_ATTRS];
	const struct r_stack *st;
	__u32 tid = 0, tag;
	pb_wire_type_t wt;
	int err = 0;

	r->sattrs.n = 0;
	while (!err && s->bytes_left) {
		err = next_tag(r, s, &wt, &tag);
		if (err)
			break;
		switch (tag) {
		case F_SAMPLE_STACK:
			err = get_varint(r, s, wt, "stack_index", &stack);
			break;
		case F_SAMPLE_ATTRS:
			err = get_ids(r, s, wt, "attribute_indices", &r->sattrs);
			break;
		case F_SAMPLE_LINK:
			err = get_varint(r, s, wt, "link_index", &link);
			break;
		case F_SAMPLE_VALUES:
			err = count_varints(r, s, wt, "values", &value, &nvalues);
			break;
		case F_SAMPLE_TIMESTAMPS:
			err = count_fixed64(r, s, wt, "timestamps_unix_nano", &nts);
			break;
		default:
			err = skip(r, s, wt);
		}
	}
	if (err)
		return err;
	if (stack >= r->stacks.n)
		return out_of_range(r, "stack_index", stack, "stack_table", r->stacks.n);
	if (link >= r->nlinks)
		return out_of_range(r, "link_index", link, "link_table", r->nlinks);
	if (link)
		lab.link = VEC_AT(r->links, struct profile_link, link);
	for (i = 0; i < r->sattrs.n; i++) {
		const struct r_attr *a;

		if (r->sattrs.v[i] >= r->attrs.n)
			return out_of_range(r, "attribute index", r->sattrs.v[i], "attribute_table",
					    r->attrs.n);
		a = VEC_AT(r->attrs, struct r_attr, r->sattrs.v[i]);
		if (a->role == ROLE_THREAD_ID) {
			__s64 v;

			if (a->v.kind == VAL_INT)
				tid = (__u32)a->v.num;
			else if (a->v.kind == VAL_STR && parse_int(a->v.str, &v))
				tid = (__u32)v;
		} else if (a->role == ROLE_THREAD_NAME && a->v.kind == VAL_STR) {
			tname = a->v.str;
		} else if (a->role == ROLE_OFF_CPU_STATE && a->v.kind == VAL_STR) {
			lab.state = a->v.str;
		} else if (a->role == ROLE_OFF_CPU_SWITCHES && a->v.kind == VAL_INT &&
			   a->v.num > 0) {
			lab.switches = (__u64)a->v.num;
		} else if (a->role == ROLE_NONE && a->v.kind == VAL_STR &&
			   lab.nctx < PROFILE_MAX_CTX_ATTRS) {
			/* other string labels: thread-context attributes */
			cattrs[lab.nctx].key = string_at(r, a->key);
			cattrs[lab.nctx++].value = a->v.str;
		}
	}
	lab.ctx = cattrs;
	if (!nvalues)
		value = nts;
	else if ((__s64)value < 0)
		return fail(r, -EBADMSG, "values[0] is negative (%lld)", (long long)value);
	if (!value)
		return 0;

	if (r->smodel[stack] == UINT32_MAX) {
		st = VEC_AT(r->stacks, struct r_stack, stack);
		n = st->n > MAX_FRAMES ? MAX_FRAMES : st->n;
		if (n > r->locs_cap) {
			__u32 *l = realloc(r->locs, n * sizeof(*l));

			if (!l)
				return nomem(r);
			r->locs = l;
			r->locs_cap = n;
		}
		/* Each location enters the model once, however many stacks
		 * share it. */
		for (i = 0; i < n && !err; i++) {
			__u32 *m = &r->lmodel[r->stack_locs.v[st->off + i]];

			if (*m == UINT32_MAX)
				err = profile__add_location(
					r->p, &r->lframes[r->stack_locs.v[st->off + i]], m);
			r->locs[i] = *m;
		}
		err = err ?: profile__add_stack_locs(r->p, r->locs, n, &r->smodel[stack]);
	}
	if (!err)
		err = profile__add_typed_stack_sample(r->p, r->cur_type, &res->desc, tid, tname,
						      &lab, r->smodel[stack], value);
	if (err == -E2BIG)
		return fail(r, err, "too many distinct entries for the profile model");
	if (err)
		return fail(r, err, "cannot add the sample (%s)", strerror(-err));
	return 0;
}

/* ---- profiles ------------------------------------------------------------------ */

static int read_value_type(struct rd *r, pb_istream_t *s, pb_wire_type_t wt, const char *field,
			   __u64 vt[2])
{
	pb_istream_t sub;
	__u32 tag;
	int err;

	vt[0] = vt[1] = 0;
	err = open_sub(r, s, wt, field, &sub);
	while (!err && sub.bytes_left) {
		err = next_tag(r, &sub, &wt, &tag);
		if (err)
			break;
		if (tag == F_VT_TYPE)
			err = get_varint(r, &sub, wt, "type_strindex", &vt[0]);
		else if (tag == F_VT_UNIT)
			err = get_varint(r, &sub, wt, "unit_strindex", &vt[1]);
		else
			err = skip(r, &sub, wt);
	}
	err = err ?: check_str(r, "type_strindex", vt[0]);
	err = err ?: check_str(r, "unit_strindex", vt[1]);
	return err ?: close_sub(r, s, &sub);
}

/* Add the sample loss counts among Profile attributes @ids (range-checked)
 * to the meta: a writer may give each Profile its own share. */
static void add_losses(struct rd *r, const struct ids *ids)
{
	size_t i;

	for (i = 0; i < ids->n; i++) {
		const struct r_attr *a = VEC_AT(r->attrs, struct r_attr, ids->v[i]);
		__u64 *sum;

		if (a->v.kind != VAL_INT || a->v.num <= 0)
			continue;
		if (a->role == ROLE_DROPPED)
			sum = &r->meta.samples_dropped;
		else if (a->role == ROLE_TRUNCATED)
			sum = &r->meta.samples_truncated;
		else if (a->role == ROLE_STACK_MISSING)
			sum = &r->meta.samples_stack_missing;
		else if (a->role == ROLE_TRUNCATED_DEPTH)
			sum = &r->meta.samples_truncated_depth;
		else
			continue;
		*sum = *sum + (__u64)a->v.num < *sum ? UINT64_MAX : *sum + (__u64)a->v.num;
	}
}

/* The model value type of a Profile (not the first) whose sample_type is
 * @vt: 0 when it is the first Profile's, else one added for it. */
static int profile_type(struct rd *r, const __u64 vt[2])
{
	const char *st = string_at(r, vt[0]), *su = string_at(r, vt[1]);
	__u32 i, t[4];
	int err;

	r->cur_type = 0;
	if (!strcmp(st, string_at(r, r->sample_type[0])) &&
	    !strcmp(su, string_at(r, r->sample_type[1])))
		return 0;
	for (i = 1; i < profile__value_type_count(r->p); i++) {
		profile__value_type(r->p, i, &t[0], &t[1], &t[2], &t[3]);
		if (!strcmp(st, profile__string(r->p, t[0], NULL)) &&
		    !strcmp(su, profile__string(r->p, t[1], NULL))) {
			r->cur_type = i;
			return 0;
		}
	}
	err = profile__add_value_type(r->p, st, su, "", "", 0, &r->cur_type);
	if (err == -E2BIG)
		return fail(r, err, "more than %d sample types", PROFILE_MAX_TYPES);
	return err ? nomem(r) : 0;
}

static int read_profile(struct rd *r, pb_istream_t *s, const struct resource *res)
{
	const char *payload_format = NULL, *payload = NULL;
	bool first = !r->have_profile, have_pvt = false;
	size_t payload_len = 0;
	__u64 vt[2], pvt[2], x;
	__s64 period = 0;
	pb_istream_t sub;
	__u32 tag;
	pb_wire_type_t wt;
	struct ids attrs = {0};
	int err = 0;

	r->have_profile = true;
	r->isample = 0;
	r->cur_type = 0;
	while (!err && s->bytes_left) {
		err = next_tag(r, s, &wt, &tag);
		if (err)
			break;
		switch (tag) {
		case F_PROFILE_SAMPLES:
			err = open_sub(r, s, wt, "samples", &sub);
			if (err)
				break;
			r->ctx = CTX_SAMPLE;
			err = add_sample(r, res, &sub);
			r->ctx = CTX_PROFILE;
			err = err ?: close_sub(r, s, &sub);
			r->isample++;
			break;
		case F_PROFILE_SAMPLE_TYPE:
			err = read_value_type(r, s, wt, "sample_type", vt);
			if (!err && first) {
				memcpy(r->sample_type, vt, sizeof(vt));
				r->have_sample_type = true;
			} else if (!err) {
				err = profile_type(r, vt);
			}
			break;
		case F_PROFILE_PERIOD_TYPE:
			err = read_value_type(r, s, wt, "period_type", vt);
			if (!err && first) {
				memcpy(r->period_type, vt, sizeof(vt));
				r->have_period_type = true;
			} else if (!err) {
				memcpy(pvt, vt, sizeof(vt));
				have_pvt = true;
			}
			break;
		case F_PROFILE_TIME:
			err = get_fixed64(r, s, wt, "time_unix_nano", &x);
			if (!err && first)
				r->meta.time_unix_nano = x;
			break;
		case F_PROFILE_DURATION:
			err = get_varint(r, s, wt, "duration_nano", &x);
			if (!err && first)
				r->meta.duration_nano = x;
			break;
		case F_PROFILE_PERIOD:
			err = get_varint(r, s, wt, "period", &x);
			if (!err && first)
				r->meta.period_ns = (__s64)x > 0 ? x : 0;
			else if (!err)
				period = (__s64)x > 0 ? (__s64)x : 0;
			break;
		case F_PROFILE_ID:
			err = open_sub(r, s, wt, "profile_id", &sub);
			if (err)
				break;
			/* Only a well-formed (16-byte) id is kept. */
			if (first && sub.bytes_left == sizeof(r->meta.profile_id) &&
			    !pb_read(&sub, r->meta.profile_id, sizeof(r->meta.profile_id)))
				err = wire_err(r, &sub);
			err = err ?: close_sub(r, s, &sub);
			break;
		case F_PROFILE_PAYLOAD_FORMAT:
			err = get_string(r, s, wt, "original_payload_format", &payload_format);
			break;
		case F_PROFILE_PAYLOAD:
			err = open_sub(r, s, wt, "original_payload", &sub);
			payload_len = sub.bytes_left;
			err = err ?: arena_read(r, &sub, payload_len, &payload);
			err = err ?: close_sub(r, s, &sub);
			break;
		case F_PROFILE_ATTRS:
			attrs.n = 0;
			err = get_ids(r, s, wt, "attribute_indices", &attrs);
			err = err ?: check_attrs(r, &attrs, 0, attrs.n);
			if (!err)
				add_losses(r, &attrs);
			break;
		default:
			err = skip(r, s, wt);
		}
	}
	free(attrs.v);
	if (!err && r->cur_type && have_pvt)
		err = profile__set_period(r->p, r->cur_type, string_at(r, pvt[0]),
					  string_at(r, pvt[1]), period);
	if (err == -ENOMEM)
		return nomem(r);
	/* Kept from the first profile carrying one (the encoder writes it
	 * once). */
	if (!err && payload_len && payload_format && *payload_format &&
	    !r->meta.original_payload_len) {
		r->meta.original_payload = payload;
		r->meta.original_payload_len = payload_len;
		r->meta.original_payload_format = payload_format;
	}
	return err;
}

static int read_scope(struct rd *r, pb_istream_t *s)
{
	const char *name = NULL, *version = NULL;
	__u32 tag;
	pb_wire_type_t wt;
	int err = 0;

	while (!err && s->bytes_left) {
		err = next_tag(r, s, &wt, &tag);
		if (err)
			break;
		if (tag == F_SCOPE_NAME)
			err = get_string(r, s, wt, "scope.name", &name);
		else if (tag == F_SCOPE_VERSION)
			err = get_string(r, s, wt, "scope.version", &version);
		else
			err = skip(r, s, wt);
	}
	if (!err && !r->have_scope && name && *name) {
		r->meta.scope_name = name;
		r->meta.scope_version = version;
		r->have_scope = true;
	}
	return err;
}

static int read_scope_profiles(struct rd *r, pb_istream_t *s, const struct resource *res)
{
	pb_istream_t sub;
	__u32 tag;
	pb_wire_type_t wt;
	int err = 0;

	r->iprof = 0;
	while (!err && s->bytes_left) {
		err = next_tag(r, s, &wt, &tag);
		if (err)
			break;
		if (tag == F_SP_SCOPE) {
			err = open_sub(r, s, wt, "scope", &sub);
			err = err ?: read_scope(r, &sub);
			err = err ?: close_sub(r, s, &sub);
		} else if (tag == F_SP_PROFILES) {
			err = open_sub(r, s, wt, "profiles", &sub);
			if (err)
				break;
			r->ctx = CTX_PROFILE;
			err = read_profile(r, &sub, res);
			r->ctx = CTX_SCOPE;
			err = err ?: close_sub(r, s, &sub);
			r->iprof++;
		} else {
			err = skip(r, s, wt);
		}
	}
	return err;
}

/* One ResourceProfiles: its Resource first (wherever it sits), then its
 * scopes. */
static int read_resource_profiles(struct rd *r, pb_istream_t *s)
{
	struct resource res = {.has_pid = false};
	pb_istream_t again = *s, sub;
	__u32 tag;
	pb_wire_type_t wt;
	int err = 0;

	r->ctx = CTX_RESOURCE;
	err = each_sub(r, &again, F_RP_RESOURCE, "resource", read_resource, &res);
	if (err)
		return err;
	if (!res.has_pid)
		res.desc.pid = -(__s64)r->ires - 1;
	/* Each resource is its own process, also when a PID comes again (a
	 * program it exec()ed). */
	res.desc.generation = (__u32)r->ires;
	res.desc.attrs = res.kv;
	res.desc.nattrs = res.nkv;
	if (r->ires > 0)
		meta_keep_common(r, &res);

	r->iscope = 0;
	while (!err && s->bytes_left) {
		err = next_tag(r, s, &wt, &tag);
		if (err)
			break;
		if (tag != F_RP_SCOPE_PROFILES) {
			err = skip(r, s, wt);
			continue;
		}
		err = open_sub(r, s, wt, "scope_profiles", &sub);
		if (err)
			break;
		r->ctx = CTX_SCOPE;
		err = read_scope_profiles(r, &sub, &res);
		r->ctx = CTX_RESOURCE;
		err = err ?: close_sub(r, s, &sub);
		r->iscope++;
	}
	return err;
}

/* ---- top level ------------------------------------------------------------------ */

/* Walk the top-level fields, handing those numbered @want_tag to @fn. */
static int walk_top(struct rd *r, const void *data, size_t len, __u32 want_tag,
		    int (*fn)(struct rd *, pb_istream_t *))
{
	pb_istream_t s = mem_stream(data, len), sub;
	__u32 tag;
	pb_wire_type_t wt;
	int err = 0;

	while (!err && s.bytes_left) {
		r->ctx = CTX_TOP;
		err = next_tag(r, &s, &wt, &tag);
		if (err)
			break;
		if (tag != want_tag) {
			if (tag == F_DATA_RESOURCE_PROFILES || tag == F_DATA_DICTIONARY)
				err = want(r, wt, PB_WT_STRING,
					   tag == F_DATA_DICTIONARY ? "dictionary"
								    : "resource_profiles");
			err = err ?: skip(r, &s, wt);
			continue;
		}
		err = open_sub(r, &s, wt,
			       tag == F_DATA_DICTIONARY ? "dictionary" : "resource_profiles", &sub);
		err = err ?: fn(r, &sub);
		r->ctx = CTX_TOP;
		err = err ?: close_sub(r, &s, &sub);
	}
	return err;
}

static int one_resource(struct rd *r, pb_istream_t *s)
{
	int err = read_resource_profiles(r, s);

	r->ires++;
	return err;
}

static int finish(struct rd *r)
{
	const char *st = NULL, *su = NULL, *pt = NULL, *pu = NULL;
	int err;

	r->ctx = CTX_TOP;
	r->meta.resource = r->kv;
	if (r->have_sample_type) {
		st = string_at(r, r->sample_type[0]);
		su = string_at(r, r->sample_type[1]);
	}
	if (r->have_period_type) {
		pt = string_at(r, r->period_type[0]);
		pu = string_at(r, r->period_type[1]);
	}
	err = profile__set_value_types(r->p, st, su, pt, pu);
	err = err ?: profile__set_meta(r->p, &r->meta);
	/* Drops the default value type strings when they were replaced. */
	err = err ?: profile__prune(r->p);
	if (err)
		return fail(r, err, "cannot build the profile (%s)", strerror(-err));
	return 0;
}

static void rd_release(struct rd *r)
{
	arena_free(r->arena);
	free(r->strings.d);
	free(r->links.d);
	free(r->mappings.d);
	free(r->locations.d);
	free(r->functions.d);
	free(r->attrs.d);
	free(r->stacks.d);
	free(r->map_attrs.v);
	free(r->loc_attrs.v);
	free(r->line_fns.v);
	free(r->stack_locs.v);
	free(r->mdescs);
	free(r->lframes);
	free(r->llines);
	free(r->line_pos.d);
	free(r->lmodel);
	free(r->smodel);
	free(r->locs);
	free(r->sattrs.v);
}

int otlp_read__parse_capped(const void *data, size_t len, size_t max_bytes, struct profile **out,
			    char *err, size_t errlen)
{
	struct rd r = {.err = err, .errlen = errlen};
	struct buf plain, wire;
	char why[192];
	int ret;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	buf__init(&plain, max_bytes);
	buf__init(&wire, max_bytes);
	if (!len) {
		/* Zero bytes are a valid empty ProfilesData, but no capture: every
		 * capture writes a resource, even one without samples. */
		ret = fail(&r, -EBADMSG, "empty input (0 bytes): not a capture");
		goto out;
	}
	ret = gz__reader_input(&data, &len, max_bytes, &plain, why, sizeof(why));
	if (ret) {
		ret = fail(&r, ret, "%s", why);
		goto out;
	}

	/* OTLP/JSON: transcoded to the wire format, then read like it. A
	 * protobuf message never starts with '{' (field 15, a group); one may
	 * start with white space and '{' bytes (field 1 of length 123): when
	 * that does not read as JSON, it is read as protobuf. */
	if (otlp_json_read__looks_like(data, len)) {
		ret = otlp_json_read__transcode(data, len, &wire, err, err ? errlen : 0);
		if (!ret) {
			data = wire.data;
			len = wire.len;
		} else if (*(const char *)data == '{') {
			goto out;
		} else if (err && errlen) {
			err[0] = '\0';
		}
	}
	r.strings.max = r.mappings.max = r.locations.max = MAX_TABLE;
	r.functions.max = r.attrs.max = r.stacks.max = r.links.max = MAX_TABLE;
	r.line_pos.max = MAX_POOL;
	r.p = profile__new();
	if (!r.p) {
		ret = nomem(&r);
		goto out;
	}
	ret = walk_top(&r, data, len, F_DATA_DICTIONARY, read_dictionary);
	ret = ret ?: resolve_dictionary(&r);
	ret = ret ?: walk_top(&r, data, len, F_DATA_RESOURCE_PROFILES, one_resource);
	ret = ret ?: finish(&r);
	if (!ret) {
		*out = r.p;
		r.p = NULL;
	}
out:
	profile__free(r.p);
	rd_release(&r);
	buf__release(&wire);
	buf__release(&plain);
	return ret;
}

int otlp_read__parse(const void *data, size_t len, struct profile **out, char *err, size_t errlen)
{
	return otlp_read__parse_capped(data, len, OTLP_READ_MAX_BYTES, out, err, errlen);
}

int otlp_read__file(const char *path, struct profile **out)
{
	const char *name = strcmp(path, "-") ? path : "standard input";
	struct buf in;
	char why[256];
	int err;

	*out = NULL;
	buf__init(&in, OTLP_READ_MAX_BYTES);
	err = buf__read_file(&in, strcmp(path, "-") ? path : "/dev/stdin");
	if (err == -E2BIG) {
		pr_err("%s: larger than %llu bytes; not an OTLP Profiles capture?", name,
		       (unsigned long long)OTLP_READ_MAX_BYTES);
		goto out;
	}
	if (err) {
		pr_err("cannot read %s: %s", name, strerror(-err));
		goto out;
	}
	err = otlp_read__parse(in.data, in.len, out, why, sizeof(why));
	if (err)
		pr_err("%s: %s (is it an OTLP Profiles file, ProfilesData or "
		       "ExportProfilesServiceRequest, written completely?)",
		       name, why);
out:
	buf__release(&in);
	return err;
}
