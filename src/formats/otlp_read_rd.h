/* otlp_read_rd.h - the state and helpers that the OTLP reader's files share
 * (otlp_read.c: top level, resources and profiles; otlp_read_rd.c: errors,
 * storage, field readers; otlp_read_dict.c: the dictionary;
 * otlp_read_sample.c: samples). Not for other modules.
 *
 * Field numbers come from the nanopb headers generated from the .proto
 * files under nanopb_protos/ (OTLP_TAG(Message, field)), so the schema is
 * written once.
 */
#ifndef PROFCAP_OTLP_READ_RD_H
#define PROFCAP_OTLP_READ_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "opentelemetry/proto/profiles/v1development/profiles.pb.h"

#include "util/wire.h"
#include "model/profile.h"

#define OTLP_TAG(msg, field) opentelemetry_proto_profiles_v1development_##msg##_##field##_tag
#define COMMON_TAG(msg, field) opentelemetry_proto_common_v1_##msg##_##field##_tag
#define RESOURCE_TAG(msg, field) opentelemetry_proto_resource_v1_##msg##_##field##_tag

/* Entries per dictionary table and per index pool. */
#define OTLP_RD_MAX_TABLE PROFILE_MAX_ENTRIES
#define OTLP_RD_MAX_POOL (64u << 20)

/* What an attribute table entry means to the reader. */
enum role {
	ROLE_NONE = 0,
	ROLE_CPU,
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
	ROLE_THROTTLED,
	ROLE_UNTIMED,
	ROLE_PPROF_COMMENT, /* Profile attributes: pprof's profile-level fields */
	ROLE_PPROF_DROP_FRAMES,
	ROLE_PPROF_KEEP_FRAMES,
	ROLE_PPROF_DEFAULT_SAMPLE_TYPE,
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

struct arena_chunk;

/* A growable array of fixed-size entries with a hard cap. */
struct vec {
	void *d;
	size_t n, cap, max;
};

struct ids {
	__u32 *v;
	size_t n, cap;
};

#define VEC_AT(v, type, i) (&((type *)(v).d)[i])

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

/* A ResourceProfiles' process, as its Resource describes it. */
struct resource {
	struct profile_process_desc desc;
	bool has_pid;
	/* Its other attributes (service.*, ...: what the process published or
	 * the operator gave), kept with the process so each resource gets back
	 * exactly its own. */
	struct profile_kv kv[PROFILE_MAX_RESOURCE_ATTRS];
	size_t nkv;
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
	struct occ_vec {
		__u64 *v;
		size_t n, cap;
	} svals, stimes; /* a sample's values and timestamps */
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

/* ---- errors (otlp_read_rd.c) ---- */

/* Format the error into r->err, prefixed with where the reader is; returns
 * @err. */
int otlp_rd__fail(struct rd *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int otlp_rd__nomem(struct rd *r);
int otlp_rd__out_of_range(struct rd *r, const char *field, __u64 idx, const char *table, size_t n);
int otlp_rd__too_large(struct rd *r, const char *field, __u64 idx);

/* The next field of @w into @f: true while there is one; false at the end,
 * or with *@err set when @w is malformed. */
bool otlp_rd__next(struct rd *r, struct wire *w, struct wire_field *f, int *err);

/* -EBADMSG naming @field unless @f has wire type @wt. */
int otlp_rd__want(struct rd *r, const struct wire_field *f, enum wire_type wt, const char *field);

/* ---- storage ---- */

/* A NUL-terminated copy of @len bytes at @p, in the reader's arena. */
int otlp_rd__copy(struct rd *r, const void *p, size_t len, const char **out);
void otlp_rd__arena_free(struct rd *r);
/* Append one zeroed entry of @size bytes to @v; NULL when full or out of
 * memory (*@err says which). */
void *otlp_rd__vec_push(struct vec *v, size_t size, int *err);
int otlp_rd__ids_push(struct ids *l, __u32 v);

/* ---- field readers: each checks @f's wire type, naming @field ---- */

int otlp_rd__varint(struct rd *r, const struct wire_field *f, const char *field, __u64 *v);
int otlp_rd__fixed64(struct rd *r, const struct wire_field *f, const char *field, __u64 *v);
/* A submessage: *@sub reads its bytes. */
int otlp_rd__sub(struct rd *r, const struct wire_field *f, const char *field, struct wire *sub);
/* A string, copied NUL-terminated into the arena. */
int otlp_rd__string(struct rd *r, const struct wire_field *f, const char *field, const char **out);
/* A repeated int32 index field, packed or not, appended to @l. Negative or
 * larger than 32-bit values are errors; ranges are checked later. */
int otlp_rd__ids(struct rd *r, const struct wire_field *f, const char *field, struct ids *l);
/* An AnyValue of the kinds the reader uses (string, int, bool, string
 * index); other kinds are skipped whole, whatever they nest. */
int otlp_rd__value(struct rd *r, const struct wire_field *f, const char *field, struct value *v);

/* ---- dictionary (otlp_read_dict.c) ---- */

const char *otlp_rd__str(const struct rd *r, __u64 idx);
int otlp_rd__check_str(struct rd *r, const char *field, __u64 idx);
/* Range-check @n attribute indices at @off in @pool. */
int otlp_rd__check_attrs(struct rd *r, const struct ids *pool, size_t off, size_t n);
/* Read one ProfilesDictionary (tables concatenate across occurrences). */
int otlp_rd__read_dictionary(struct rd *r, struct wire *s);
/* Range-check every index of the dictionary and prepare the frames. */
int otlp_rd__resolve_dictionary(struct rd *r);

/* ---- samples (otlp_read_sample.c) ---- */

/* Parse a decimal integer filling all of @s. */
bool otlp_rd__parse_int(const char *s, __s64 *v);
/* Read Sample @s of a Profile of @res and add it to the model. */
int otlp_rd__add_sample(struct rd *r, const struct resource *res, struct wire *s);

#endif
