/* profile_int.h - what profile.c, profile_prune.c and profile_read.c
 * share: the profile's tables. Private to model/.
 */
#ifndef PROFCAP_PROFILE_INT_H
#define PROFCAP_PROFILE_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/htab.h"
#include "util/intern.h"
#include "model/profile.h"

/* Attribute table key: string values are interned separately (not in the
 * string table, where they would be orphans since OTLP carries them inline). */
struct attr_key {
	__u32 key;
	__u32 unit;
	__u32 kind;
	__u32 str_value; /* index in p->values */
	__s64 int_value;
};

struct sample_key {
	__u32 stack;
	__u32 nattrs;
	__u32 attrs[PROFILE_SAMPLE_MAX_ATTRS];
	__u32 link;
};

/* Key of p->pids: a process has one sample list per value type. */
struct proc_key {
	__s64 pid;
	__u32 type;
	__u32 generation; /* profile_process_desc.generation */
};

struct value_type {
	__u32 st, su, pt, pu; /* string indices */
	__s64 period;	      /* 0: the meta's period_ns (type 0) */
	__u64 total;
};

/* Occurrences of one sample (profile_time.c). */
struct sample_times {
	struct profile_occurrence *occ;
	size_t n, cap;
};

struct proc {
	struct profile_process_desc desc; /* owned strings */
	__u32 type;			  /* value type index */
	struct intern *keys;		  /* struct sample_key -> sample index */
	struct profile_sample_entry *samples;
	size_t cap;
	struct sample_times *times; /* by sample index; NULL until a timed add */
	size_t times_cap;
};

/* An add_mapping() result by its mapping's content, for the next frames of
 * that mapping: a stack's frames come from a few mappings (a non-PIE
 * program's from the same one in every process), and each add interns a
 * dozen strings and attributes. @d's strings are owned copies, "" for
 * none; limit 0: an empty slot. */
#define MAPPING_MEMO 16

struct mapping_memo {
	struct profile_mapping_desc d;
	__u32 idx;
};

struct profile {
	struct profile_meta meta; /* owned strings */
	struct intern *strings;	  /* NUL-terminated bytes */
	struct intern *functions; /* struct profile_function_entry */
	struct intern *mappings;  /* struct profile_mapping_entry */
	struct intern *locations; /* struct profile_location_entry */
	struct intern *lines;	  /* struct profile_line_entry[] */
	struct intern *stacks;	  /* __u32[] */
	struct intern *attrs;	  /* struct attr_key */
	struct intern *values;	  /* NUL-terminated attribute string values */
	struct intern *links;	  /* struct profile_link */
	__u32 max_links;	  /* distinct links kept, zero link included */
	__u64 links_capped;	  /* sample values kept without their link */
	struct profile_attr_entry *attr_views;
	size_t attr_views_cap;

	struct proc *procs;
	size_t nprocs, procs_cap;
	struct intern *pids; /* struct proc_key -> proc index */

	struct value_type types[PROFILE_MAX_TYPES];
	__u32 ntypes;
	__u32 meta_attrs[PROFILE_META_ATTRS]; /* loss counts, as attributes */
	size_t nmeta_attrs;
	__u64 total;
	__u32 max_entries;
	bool dirty; /* an add failed part way: prune has work */
	struct mapping_memo mmemo[MAPPING_MEMO];
	/* The frame type attribute of the last location added: its name
	 * (borrowed from the frame; compared by content) and index. */
	char ftype[32];
	__u32 ftype_idx;
	__u64 ntimes;	/* occurrences kept */
	__u64 max_times; /* their cap */
	__u64 tmin, tmax; /* first and last time kept (when ntimes) */
};

/* A new empty profile of at most @max_entries per table, whose first value
 * type is (@st, @su) with period (@pt, @pu). NULL on ENOMEM. */
struct profile *profile__create(__u32 max_entries, const char *st, const char *su, const char *pt,
				const char *pu);

/* profile__add_typed_stack_sample() that also tells where the sample is:
 * *@pr_out and *@idx. */
int profile__add_sample_at(struct profile *p, __u32 type, const struct profile_process_desc *proc,
			   __u32 tid, const char *thread_name, const struct profile_labels *l,
			   __u32 stack, __u64 count, struct proc **pr_out, __u32 *idx);

/* Append one occurrence to sample @idx of @pr. 0, -ENOMEM or -E2BIG. */
int profile__times_append(struct profile *p, struct proc *pr, __u32 idx, __u64 time_ns,
			  __u64 value);
void profile__times_free(struct proc *pr);

/* Occurrences replayed by profile__replay(): all, or those in a range. */
struct replay_range {
	__u64 from, to; /* [from, to) */
	bool untimed;	/* keep samples without times */
	__u64 untimed_seen;
};

/* Add sample @s of @pr (of @src) to @dst as type @type, every frame passed
 * through @edit (may be NULL), its occurrences (only those in @r when not
 * NULL) with their times. 0, -ENOMEM or -E2BIG. */
int profile__replay(struct profile *dst, __u32 type, const struct profile *src,
		    const struct proc *pr, size_t si, profile_frame_edit_fn edit, void *arg,
		    struct replay_range *r);

/* An empty profile with @p's value types (all, same indices, for @only
 * UINT32_MAX; else type @only alone, as type 0). */
struct profile *profile__copy_types(const struct profile *p, __u32 only);

#endif
