/* profile.h - the one in-memory profile model that every encoder reads.
 *
 * A profile is a set of processes, each with aggregated samples (stack +
 * thread attributes -> count), over dictionary tables shared by the whole
 * capture: strings, functions, mappings, locations, stacks and attributes.
 * Every table is deduplicated by value and holds its zero value at index 0,
 * as OTLP's ProfilesDictionary requires. Entries are only created on the path
 * of profile__add_sample(), and profile__prune() drops anything a failed add
 * left unreferenced, so an encoder that walks the tables emits no orphans.
 *
 * Pure code: no I/O, no globals. Growth is capped (PROFILE_MAX_ENTRIES per
 * table); past the cap adds fail with -E2BIG and the caller counts the drop.
 */
#ifndef PROFCAP_PROFILE_H
#define PROFCAP_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define PROFILE_MAX_ENTRIES (16u << 20)

enum profile_frame_type {
	PROFILE_FRAME_NATIVE = 0,
	PROFILE_FRAME_KERNEL,
	PROFILE_FRAME__COUNT,
};

/* Semantic-convention value of profile.frame.type for @t ("native", "kernel"). */
const char *profile__frame_type_name(enum profile_frame_type t);

/* ---- input descriptions (borrowed by the add functions, copied inside) ---- */

/* What symbolization found in a mapping's file, carried as the
 * pprof.mapping.has_* boolean attributes (all four, when any is set). */
#define PROFILE_MAPPING_HAS_FUNCTIONS (1u << 0)
#define PROFILE_MAPPING_HAS_FILENAMES (1u << 1)
#define PROFILE_MAPPING_HAS_LINE_NUMBERS (1u << 2)
#define PROFILE_MAPPING_HAS_INLINE_FRAMES (1u << 3)
#define PROFILE_MAPPING_HAS__ALL 0xfu

struct profile_mapping_desc {
	__u64 start;	      /* first mapped address */
	__u64 limit;	      /* one past the last mapped address; start < limit */
	__u64 file_offset;    /* file offset of @start */
	const char *path;     /* "/usr/lib/x/libc.so.6", "[vdso]", "[kernel.kallsyms]" */
	const char *build_id; /* lower-case hex GNU build-id, or NULL */
	__u32 flags;	      /* PROFILE_MAPPING_HAS_*; 0 = nothing stated */
	const char *htlhash;	 /* process.executable.build_id.htlhash (32 hex), or NULL */
	const char *go_build_id; /* Go's build-id string, or NULL */
};

/* One function of a location: the function containing the address, or one
 * inlined into it. Lines and columns are 1-based, 0 = unknown. */
struct profile_line {
	const char *function;	 /* name (demangled); NULL/"" = unknown */
	const char *system_name; /* linker (mangled) name; NULL = same as @function */
	const char *filename;	 /* source file of the function; NULL = unknown */
	__s64 start_line;	 /* first line of the function; 0 = unknown */
	__s64 line;		 /* source line executing at the address */
	__s64 column;
};

#define PROFILE_MAX_LINES 64 /* lines kept per location (innermost first) */

struct profile_frame {
	__u64 address;				    /* absolute address as sampled */
	const struct profile_mapping_desc *mapping; /* NULL when unknown */
	const char *function;			    /* symbol name, NULL when unknown */
	enum profile_frame_type type;
	const char *type_name; /* profile.frame.type value overriding @type ("v8js"), or NULL */
	const char *system_name; /* linker (mangled) name when @function is demangled, else NULL */
	/* Lines of the location, innermost inlined function first and the
	 * function that contains the address (into which the others were
	 * inlined) last, as OTLP orders Location.lines. When @nlines is 0 a
	 * non-empty @function stands for one line without file or line. */
	const struct profile_line *lines;
	size_t nlines;
};

#define PROFILE_MAX_RESOURCE_ATTRS 64

/* A string resource attribute: given by the operator (service.name,
 * OTEL_RESOURCE_ATTRIBUTES) or published by a process. */
struct profile_kv {
	const char *key;
	const char *value;
};

struct profile_process_desc {
	__s64 pid;
	const char *exe_name;	  /* "nginx"; NULL or "" when unknown */
	const char *exe_path;	  /* "/usr/sbin/nginx"; NULL or "" when unknown */
	const char *cmdline;	  /* space-joined argv; NULL or "" when unknown */
	const char *container_id; /* semconv container.id; NULL when not in a container */
	/* Resource attributes the process published itself (OpenTelemetry
	 * process context: service.name, service.instance.id, ...), at most
	 * PROFILE_MAX_RESOURCE_ATTRS. Encoders put them on the process's
	 * Resource after the detected process.* ones (which win on a clash)
	 * and before the operator-given ones. NULL/0 = none. */
	const struct profile_kv *attrs;
	size_t nattrs;
	/* Which program the PID runs: a process that exec()s another program
	 * gets the next generation, and a resource of its own. */
	__u32 generation;
};

/* Capture-wide facts, copied by profile__set_meta(). */
struct profile_meta {
	__u64 time_unix_nano; /* capture start, UTC */
	__u64 duration_nano;  /* real capture length */
	__u64 period_ns;      /* CPU time one sample stands for (1e9 / HZ) */
	__u8 profile_id[16];  /* random, not all zero */
	const char *host_name;
	const char *host_arch;	/* semconv host.arch: "amd64", "arm64", ... */
	const char *os_type;	/* semconv os.type: "linux" */
	const char *scope_name; /* "profcap" */
	const char *scope_version;
	/* Operator-given attributes merged into every resource: they win over
	 * host.* and os.type, never over the detected process.* ones. At most
	 * PROFILE_MAX_RESOURCE_ATTRS; duplicate keys keep the first. */
	const struct profile_kv *resource;
	size_t nresource;
	/* The untranslated input a foreign profile was converted from, kept
	 * for lossless re-export (OTLP Profile.original_payload), and its
	 * format name ("linux_perf"). Both set or neither; NULL/0 = none.
	 * Encoders carry it once, in the first Profile they write. */
	const void *original_payload;
	size_t original_payload_len;
	const char *original_payload_format;
	/* Samples the capture took but could not keep whole, for readers of
	 * the file (report). Non-zero counts are carried as integer
	 * attributes of the first Profile (PROFILE_ATTR_SAMPLES_*); readers
	 * add them up over all Profiles. */
	__u64 samples_dropped;	     /* not in the profile: tables full, lost
				      * while recording, or drained too late */
	__u64 samples_truncated;     /* stack cut short: at the depth limit, or the
				      * unwinder stopped early (no unwind row,
				      * unreadable stack, tables not loaded yet) */
	__u64 samples_truncated_depth; /* of those, cut at the depth limit */
	__u64 samples_stack_missing; /* kept without (part of) their stack */
	/* memory: sampled allocations dropped by back-pressure (not lost:
	 * those kept weigh more) */
	__u64 samples_throttled;
	/* whose own time was lost (--timestamps: the times ring was full),
	 * timed when drained (PROFILE_ATTR_TIME_LOST) */
	__u64 samples_untimed;
	/* pprof's profile-level fields, kept so pprof -> OTLP -> pprof gives
	 * them back (Profile attributes PROFILE_ATTR_PPROF_*): the comments
	 * (lines joined by '\n'), the drop_frames and keep_frames regular
	 * expressions and the default sample type. NULL = none. */
	const char *pprof_comment;
	const char *pprof_drop_frames;
	const char *pprof_keep_frames;
	const char *pprof_default_sample_type;
};

#define PROFILE_ATTR_SAMPLES_DROPPED "profcap.samples.dropped"
#define PROFILE_ATTR_SAMPLES_TRUNCATED "profcap.samples.truncated"
#define PROFILE_ATTR_SAMPLES_STACK_MISSING "profcap.samples.stack_missing"
#define PROFILE_ATTR_SAMPLES_TRUNCATED_DEPTH "profcap.samples.truncated.depth_limit"
#define PROFILE_ATTR_SAMPLES_THROTTLED "profcap.samples.throttled"
#define PROFILE_ATTR_SAMPLES_UNTIMED "profcap.samples.untimed"
/* Sample attribute (integer 1): the sample's own times were lost; its
 * timestamp is when the capture read it (taken within the drain interval,
 * about a second, before). */
#define PROFILE_ATTR_TIME_LOST "profcap.time.lost"
#define PROFILE_ATTR_PPROF_COMMENT "pprof.profile.comment"
#define PROFILE_ATTR_PPROF_DROP_FRAMES "pprof.profile.drop_frames"
#define PROFILE_ATTR_PPROF_KEEP_FRAMES "pprof.profile.keep_frames"
#define PROFILE_ATTR_PPROF_DEFAULT_SAMPLE_TYPE "pprof.scope.default_sample_type"
#define PROFILE_META_ATTRS 10

/* ---- read-only views for encoders (indices are dictionary indices) ---- */

struct profile_function_entry {
	__u32 name;	   /* string index */
	__u32 system_name; /* string index */
	__u32 filename;	   /* string index */
	__u32 pad;
	__s64 start_line; /* 0 = unknown */
};

#define PROFILE_MAPPING_MAX_ATTRS 7

struct profile_mapping_entry {
	__u64 start, limit, file_offset;
	__u32 filename; /* string index */
	__u32 attr;	/* attribute index of the GNU build-id attribute, 0 = none */
	__u32 flags;	/* PROFILE_MAPPING_HAS_* */
	__u32 nattrs;	/* all attributes: build_id.gnu, .htlhash, .go (those present),
			 * then the four pprof.mapping.has_* when flags are set */
	__u32 attrs[PROFILE_MAPPING_MAX_ATTRS];
	__u32 pad;
};

/* One Line of a location (see struct profile_line). */
struct profile_line_entry {
	__u32 function; /* function index, never 0 */
	__u32 pad;
	__s64 line;
	__s64 column;
};

struct profile_location_entry {
	__u64 address;
	__u32 mapping; /* mapping index, 0 = unknown */
	__u32 lines;   /* line-list index (profile__lines()), 0 = no lines */
	__u32 attr;    /* attribute index of profile.frame.type, 0 = none */
	__u32 pad;
};

enum profile_attr_kind {
	PROFILE_ATTR_NONE = 0, /* only the zero entry */
	PROFILE_ATTR_STR,
	PROFILE_ATTR_INT,
	PROFILE_ATTR_BOOL, /* int_value 0 or 1 */
};

struct profile_attr_entry {
	__u32 key;  /* string index */
	__u32 unit; /* string index, 0 = none */
	__u32 kind; /* enum profile_attr_kind */
	__u32 pad;
	__s64 int_value;       /* PROFILE_ATTR_INT */
	const char *str_value; /* PROFILE_ATTR_STR, NUL-terminated, owned by the profile */
};

/* Thread-context attributes (OTEP 4947) a sample can carry, on top of
 * thread.id, thread.name and the two off-CPU labels. */
#define PROFILE_MAX_CTX_ATTRS 4
#define PROFILE_SAMPLE_MAX_ATTRS (5 + PROFILE_MAX_CTX_ATTRS)

struct profile_sample_entry {
	__u32 stack; /* stack index */
	__u32 nattrs;
	__u32 attrs[PROFILE_SAMPLE_MAX_ATTRS]; /* attribute indices, unique keys */
	__u32 link;			       /* link index (profile__link()), 0 = none */
	__u32 pad;
	__u64 value; /* aggregated sample count */
};

/* The span a sample was taken in (OpenTelemetry thread context, OTEP
 * 4947): W3C trace id and span id bytes. The link table holds each distinct
 * one once, the zero link (no span) at index 0. */
struct profile_link {
	__u8 trace_id[16];
	__u8 span_id[8];
};

/* Distinct links a profile (one capture window) keeps by default; samples
 * of further spans are kept without a link and counted
 * (profile__links_capped()), so high-cardinality tracing cannot blow up a
 * window. */
#define PROFILE_MAX_LINKS 4096u

struct profile;

/* ---- value types: what sample values measure ----
 * A profile holds up to PROFILE_MAX_TYPES value types; each process has one
 * sample list (an OTLP Profile) per type it has samples of. Type 0 is made
 * by profile__new(): samples/count with period cpu/nanoseconds (period =
 * meta.period_ns). An off-CPU capture adds off_cpu/nanoseconds with period
 * context_switch/count, 1 (every wait measured). */
#define PROFILE_MAX_TYPES 8

/* Extra labels of a sample (part of its identity). */
struct profile_labels {
	const char *state; /* off-CPU wait state ("interruptible", ...), or NULL */
	__u64 switches;	   /* waits the value sums (off-CPU), 0 = not carried */
	const struct profile_link *link; /* span of the samples; NULL or all zero = none */
	/* String attributes of the thread context (key, value): at most
	 * PROFILE_MAX_CTX_ATTRS are kept, in order; an empty or NULL key or
	 * value, a key given twice, or one of the labels above
	 * (profile__ctx_key_ok()) is skipped. */
	const struct profile_ctx_attr *ctx;
	size_t nctx;
	/* Numeric attributes with a unit (pprof's numeric labels): kept after
	 * @ctx, by the same rules, at most PROFILE_MAX_CTX_ATTRS of both. */
	const struct profile_num_attr *num;
	size_t nnum;
	/* The logical CPU the samples ran on (PROFILE_ATTR_CPU), when @has_cpu. */
	bool has_cpu;
	__u32 cpu;
};

struct profile_num_attr {
	const char *key;
	const char *unit; /* "bytes", ...; NULL or "" = none */
	__s64 value;
};

struct profile_ctx_attr {
	const char *key;
	const char *value;
};

/* True when @key may name a thread-context attribute: not empty and none of
 * the sample labels the model sets itself (thread.id, thread.name,
 * profcap.off_cpu.*). */
bool profile__ctx_key_ok(const char *key);

#define PROFILE_ATTR_OFF_CPU_STATE "profcap.off_cpu.state"
#define PROFILE_ATTR_OFF_CPU_SWITCHES "profcap.off_cpu.switches"
/* Semantic-convention key of the logical CPU number a sample ran on. */
#define PROFILE_ATTR_CPU "cpu.logical_number"

/* Allocate an empty profile with every table holding only its zero value.
 * Returns NULL on allocation failure. Free with profile__free(). */
struct profile *profile__new(void);

/* Same, with every table (and each process's sample list) capped at
 * @max_entries entries instead of PROFILE_MAX_ENTRIES. */
struct profile *profile__new_limited(__u32 max_entries);

/* Free @p and everything it owns. Accepts NULL. */
void profile__free(struct profile *p);

/* Copy @meta into @p (strings are duplicated) and intern its non-zero
 * sample loss counts as integer attributes. 0 or -ENOMEM (@p keeps its
 * previous meta). */
int profile__set_meta(struct profile *p, const struct profile_meta *meta);
const struct profile_meta *profile__meta(const struct profile *p);

/* The profile_id of the Profile of process @proc (SIZE_MAX: the one Profile
 * of an empty capture) into @id: the meta's id for the first, and for each
 * other process an id derived from it (mixed with the process index), so
 * that every Profile of a capture has its own 16 random-looking, non-zero
 * bytes while encoding the same profile twice gives the same bytes. */
void profile__id_of(const struct profile *p, size_t proc, __u8 id[16]);

/* Attribute-table indices of the capture-wide Profile attributes (the
 * meta's non-zero sample loss counts), borrowed from @p; *@n gets their
 * number, 0 to PROFILE_META_ATTRS. */
const __u32 *profile__meta_attrs(const struct profile *p, size_t *n);

/* Add @count samples of one stack for thread @tid (@thread_name may be NULL)
 * of process @proc. @frames is leaf first; @nframes may be 0 (a sample with an
 * empty stack is still counted). The process is created on first use and its
 * description is taken from that first call; later calls for the same pid may
 * pass a NULL-field desc. Samples with the same identity (process, stack,
 * thread attributes) are merged by adding their counts.
 * Returns 0, -EINVAL (bad args), -ENOMEM or -E2BIG (a table is full; the
 * sample is not recorded and any partly added entries are pruned later). */
int profile__add_sample(struct profile *p, const struct profile_process_desc *proc, __u32 tid,
			const char *thread_name, const struct profile_frame *frames, size_t nframes,
			__u64 count);

/* profile__add_sample() for value type @type (from profile__add_value_type()),
 * with optional labels @l (NULL = none). Same errors; -EINVAL for an unknown
 * type. */
int profile__add_typed_sample(struct profile *p, __u32 type,
			      const struct profile_process_desc *proc, __u32 tid,
			      const char *thread_name, const struct profile_labels *l,
			      const struct profile_frame *frames, size_t nframes, __u64 count);

/* Add (or find) a value type; *@idx gets its index. @period is the period
 * in @period_unit (0 for type 0: meta.period_ns). 0, -EINVAL, -ENOMEM, or
 * -E2BIG past PROFILE_MAX_TYPES. */
int profile__add_value_type(struct profile *p, const char *sample_type, const char *sample_unit,
			    const char *period_type, const char *period_unit, __s64 period,
			    __u32 *idx);
/* Set the period of value type @type (not 0: see profile__set_value_types()
 * and meta.period_ns), for readers that learn it after the sample type.
 * 0, -EINVAL or -ENOMEM. */
int profile__set_period(struct profile *p, __u32 type, const char *period_type,
			const char *period_unit, __s64 period);
size_t profile__value_type_count(const struct profile *p);
/* String indices of value type @type (type 0 when out of range). */
void profile__value_type(const struct profile *p, __u32 type, __u32 *sample_type,
			 __u32 *sample_unit, __u32 *period_type, __u32 *period_unit);
/* Period of @type (type 0 without its own: meta.period_ns). */
__s64 profile__period(const struct profile *p, __u32 type);
/* Sum of the sample values of @type. */
__u64 profile__type_total(const struct profile *p, __u32 type);
/* Does any process hold samples of @type? Encoders write an empty Profile
 * for a type none holds, so its strings stay referenced. */
bool profile__value_type_used(const struct profile *p, __u32 type);
/* The first type whose sample type string is @sample_type: 0 or -ENOENT. */
int profile__find_value_type(const struct profile *p, const char *sample_type, __u32 *type);
/* A new profile with only the samples of @type, which becomes its type 0
 * (its period in meta.period_ns). NULL on allocation failure or a bad type.
 * For encoders that carry one value type (pprof, folded, flame graphs). */
struct profile *profile__extract_type(const struct profile *p, __u32 type);

/* The two halves of profile__add_sample(), for readers whose input already
 * names each distinct stack once (an OTLP stack_table): intern @frames (leaf
 * first) as a stack and get its index in *@stack, then add samples that
 * reference it. A stack no sample ends up using is dropped by prune.
 * Errors as for profile__add_sample(); -EINVAL for an unknown @stack. */
int profile__add_stack(struct profile *p, const struct profile_frame *frames, size_t nframes,
		       __u32 *stack);
int profile__add_stack_sample(struct profile *p, const struct profile_process_desc *proc, __u32 tid,
			      const char *thread_name, __u32 stack, __u64 count);
int profile__add_typed_stack_sample(struct profile *p, __u32 type,
				    const struct profile_process_desc *proc, __u32 tid,
				    const char *thread_name, const struct profile_labels *l,
				    __u32 stack, __u64 count);

/* profile__add_stack() in two steps, for readers whose input also names
 * each distinct location once: intern one frame as a location (*@loc gets
 * its index, never 0), then a stack of such indices, leaf first (at most
 * 4096 are kept). Entries no sample ends up using are dropped by prune.
 * 0, -EINVAL (NULL argument, or an index that is 0 or unknown), -ENOMEM,
 * -E2BIG. */
int profile__add_location(struct profile *p, const struct profile_frame *frame, __u32 *loc);
int profile__add_stack_locs(struct profile *p, const __u32 *locs, size_t nlocs, __u32 *stack);

/* Drop dictionary entries that no sample references (left by failed adds) and
 * renumber the tables, keeping index 0 as the zero value. 0 or -ENOMEM. */
int profile__prune(struct profile *p);

/* Called by profile__rebuild() for frame @pos (0 = leaf) of a stack, read
 * from location @loc of the source: may change *@f (its strings and lines
 * must stay valid until the rebuild returns) and *@map, the frame's mapping
 * desc (used when f->mapping points to it). */
typedef void (*profile_frame_edit_fn)(void *arg, __u32 loc, size_t pos, struct profile_frame *f,
				      struct profile_mapping_desc *map);

/* A new profile (*@out, the caller's) with @p's meta, value types and
 * samples, every frame passed through @edit first (NULL: a plain copy).
 * 0, -ENOMEM or -E2BIG (nothing in *@out). */
int profile__rebuild(const struct profile *p, profile_frame_edit_fn edit, void *arg,
		     struct profile **out);

/* Dictionary table sizes, zero entry included (so always >= 1). */
size_t profile__string_count(const struct profile *p);
size_t profile__function_count(const struct profile *p);
size_t profile__mapping_count(const struct profile *p);
size_t profile__location_count(const struct profile *p);
size_t profile__stack_count(const struct profile *p);
size_t profile__attr_count(const struct profile *p);

/* Borrowed lookups; @idx must be below the matching count. */
const char *profile__string(const struct profile *p, __u32 idx, size_t *len);
const struct profile_function_entry *profile__function(const struct profile *p, __u32 idx);
const struct profile_mapping_entry *profile__mapping(const struct profile *p, __u32 idx);
const struct profile_location_entry *profile__location(const struct profile *p, __u32 idx);
const struct profile_attr_entry *profile__attr(const struct profile *p, __u32 idx);
/* Lines of line-list @idx (a location's `lines`), innermost first; *@n
 * gets their number (0 for index 0). Borrowed. */
const struct profile_line_entry *profile__lines(const struct profile *p, __u32 idx, size_t *n);
/* Function index of the innermost line of location @loc (the name a flat
 * reader shows), 0 when it has no lines. */
__u32 profile__location_function(const struct profile *p, const struct profile_location_entry *l);
/* Location indices of stack @idx, leaf first; *@n gets the length. */
const __u32 *profile__stack(const struct profile *p, __u32 idx, size_t *n);

/* Replace the value types interned by profile__new() ("samples"/"count" and
 * "cpu"/"nanoseconds"), e.g. for a profile read from another tool's file.
 * NULL keeps that one. 0, -ENOMEM or -E2BIG. Replaced strings that nothing
 * else uses are dropped by profile__prune(). */
int profile__set_value_types(struct profile *p, const char *sample_type, const char *sample_unit,
			     const char *period_type, const char *period_unit);

/* String indices of the sample/period value types. */
void profile__value_types(const struct profile *p, __u32 *sample_type, __u32 *sample_unit,
			  __u32 *period_type, __u32 *period_unit);

/* Processes, in order of first sample: one entry per (process, value type),
 * so a process with CPU and off-CPU samples is listed twice. */
size_t profile__process_count(const struct profile *p);
const struct profile_process_desc *profile__process(const struct profile *p, size_t i);
/* Value type of process entry @i. */
__u32 profile__process_type(const struct profile *p, size_t i);
size_t profile__sample_count(const struct profile *p, size_t proc);
const struct profile_sample_entry *profile__sample(const struct profile *p, size_t proc, size_t i);

/* Links: table size (zero entry included, so >= 1) and entry @idx
 * (borrowed; @idx below the count). */
size_t profile__link_count(const struct profile *p);
const struct profile_link *profile__link(const struct profile *p, __u32 idx);
/* Set the cap of distinct links (0 = PROFILE_MAX_LINKS); links already in
 * stay. Sample values added without their link because of the cap are
 * summed in profile__links_capped(). */
void profile__set_link_cap(struct profile *p, __u32 cap);
__u32 profile__link_cap(const struct profile *p);
__u64 profile__links_capped(const struct profile *p);

/* Sum of all sample values (all types: see profile__type_total()). */
__u64 profile__total(const struct profile *p);

/* ---- time: occurrences of a sample (profile_time.c) ----
 * A sample may carry the times of its occurrences (ns since the epoch, UTC),
 * each with the value it added; the sample's value stays their sum. A
 * sample without any keeps no time storage. Occurrences are kept in the
 * order they were added. At most PROFILE_MAX_TIMES per profile (see
 * profile__set_time_cap()): past the cap a timed add fails with -E2BIG and
 * the caller counts the drop. */
#define PROFILE_MAX_TIMES (8u << 20)

struct profile_occurrence {
	__u64 time_ns;
	__u64 value;
};

/* profile__add_typed_stack_sample() / profile__add_typed_sample() of one
 * occurrence of @value at @time_ns. Same errors, and -E2BIG past the cap. */
int profile__add_timed_stack_sample(struct profile *p, __u32 type,
				    const struct profile_process_desc *proc, __u32 tid,
				    const char *thread_name, const struct profile_labels *l,
				    __u32 stack, __u64 value, __u64 time_ns);
int profile__add_timed_sample(struct profile *p, __u32 type,
			      const struct profile_process_desc *proc, __u32 tid,
			      const char *thread_name, const struct profile_labels *l,
			      const struct profile_frame *frames, size_t nframes, __u64 value,
			      __u64 time_ns);
/* Occurrences of sample @i of process entry @proc, in order of addition;
 * NULL and *@n 0 when it has none. Borrowed. */
const struct profile_occurrence *profile__sample_times(const struct profile *p, size_t proc,
						       size_t i, size_t *n);
/* The CPU attribute of sample @s: 0 and *@cpu set, or -ENOENT. */
int profile__sample_cpu(const struct profile *p, const struct profile_sample_entry *s, __u32 *cpu);
/* Occurrences in the profile (0: it carries no time). */
__u64 profile__time_count(const struct profile *p);
/* First and last occurrence time: 0, or -ENOENT when there is none. */
int profile__time_span(const struct profile *p, __u64 *first, __u64 *last);
/* The meta's time range (start, duration), widened to hold every
 * occurrence: OTLP wants timestamps in [start, start + duration). A meta
 * range that holds no occurrence starts at the first instead. */
void profile__time_range(const struct profile *p, __u64 *start, __u64 *dur);
/* Cap the occurrences @p keeps (0 = PROFILE_MAX_TIMES). */
void profile__set_time_cap(struct profile *p, __u64 cap);

/* One occurrence in time order (profile__events()). */
struct profile_event {
	__u64 time_ns; /* 0: the sample carries no time */
	__u64 value;
	__u32 proc;   /* process entry */
	__u32 sample; /* sample index within it */
};

/* Every occurrence of @p in time order (*@out, the caller frees it; *@n
 * entries): a sample without times is one event of time 0 and its whole
 * value, first. 0 or -ENOMEM. */
int profile__events(const struct profile *p, struct profile_event **out, size_t *n);

/* What profile__slice() did with samples that carry no time. */
struct profile_slice_note {
	__u64 untimed_kept;    /* values kept: the whole profile has no time */
	__u64 untimed_dropped; /* values left out: the profile has times */
};

/* A new profile (*@out, the caller's) with @p's meta (its time and duration
 * narrowed to the range), value types and only the occurrences in
 * [@from_ns, @to_ns). Samples without times are kept only when @p has no
 * time at all; @note (may be NULL) says how much of that happened.
 * 0, -EINVAL (@from_ns >= @to_ns), -ENOMEM or -E2BIG. */
int profile__slice(const struct profile *p, __u64 from_ns, __u64 to_ns, struct profile **out,
		   struct profile_slice_note *note);

#endif
