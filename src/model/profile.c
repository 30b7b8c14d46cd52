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

struct proc {
	struct profile_process_desc desc; /* owned strings */
	__u32 type;			  /* value type index */
	struct intern *keys;		  /* struct sample_key -> sample index */
	struct profile_sample_entry *samples;
	size_t cap;
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
};

static const char *const frame_type_names[PROFILE_FRAME__COUNT] = {
	[PROFILE_FRAME_NATIVE] = "native",
	[PROFILE_FRAME_KERNEL] = "kernel",
};

const char *profile__frame_type_name(enum profile_frame_type t)
{
	return t < PROFILE_FRAME__COUNT ? frame_type_names[t] : "native";
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static void memo_clear(struct mapping_memo *mm)
{
	free((char *)mm->d.path);
	free((char *)mm->d.build_id);
	free((char *)mm->d.htlhash);
	free((char *)mm->d.go_build_id);
	memset(mm, 0, sizeof(*mm));
}

static int intern_string(struct intern *t, const char *s, __u32 *idx)
{
	if (!s)
		s = "";
	return intern__put(t, s, strlen(s) + 1, idx, NULL);
}

static int add_attr(struct profile *p, const struct attr_key *k, __u32 *idx)
{
	struct profile_attr_entry *v;
	size_t n = intern__count(p->attrs);
	bool added;
	int err;

	/* Grow the view array first so an interned key always has its view. */
	err = array__grow((void **)&p->attr_views, &p->attr_views_cap, n, sizeof(*v), 64,
			  SIZE_MAX / sizeof(*v));
	if (err)
		return err;
	err = intern__put(p->attrs, k, sizeof(*k), idx, &added);
	if (err || !added)
		return err;
	v = &p->attr_views[*idx];
	memset(v, 0, sizeof(*v));
	v->key = k->key;
	v->unit = k->unit;
	v->kind = k->kind;
	v->int_value = k->int_value;
	v->str_value =
		k->kind == PROFILE_ATTR_STR ? intern__get(p->values, k->str_value, NULL) : NULL;
	return 0;
}

static int attr_str(struct profile *p, const char *key, const char *value, __u32 *idx)
{
	struct attr_key k = {.kind = PROFILE_ATTR_STR};
	int err;

	err = intern_string(p->strings, key, &k.key);
	if (!err)
		err = intern_string(p->values, value, &k.str_value);
	if (!err)
		err = add_attr(p, &k, idx);
	return err;
}

static int attr_kind_int(struct profile *p, const char *key, __u32 kind, __s64 value,
			 __u32 *idx)
{
	struct attr_key k = {.kind = kind, .int_value = value};
	int err;

	err = intern_string(p->strings, key, &k.key);
	if (!err)
		err = add_attr(p, &k, idx);
	return err;
}

static int attr_int(struct profile *p, const char *key, __s64 value, __u32 *idx)
{
	return attr_kind_int(p, key, PROFILE_ATTR_INT, value, idx);
}

static struct profile *profile_create(__u32 max_entries, const char *st, const char *su,
				      const char *pt, const char *pu);

struct profile *profile__new(void)
{
	return profile__new_limited(PROFILE_MAX_ENTRIES);
}

struct profile *profile__new_limited(__u32 max_entries)
{
	return profile_create(max_entries, "samples", "count", "cpu", "nanoseconds");
}

static struct profile *profile_create(__u32 max_entries, const char *st, const char *su,
				      const char *pt, const char *pu)
{
	static const __u8 zero[128]; /* >= every zero entry */
	struct profile *p;
	__u32 idx;
	int err = 0;

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->max_entries = max_entries;
	p->strings = intern__new(max_entries);
	p->functions = intern__new(max_entries);
	p->mappings = intern__new(max_entries);
	p->locations = intern__new(max_entries);
	p->lines = intern__new(max_entries);
	p->stacks = intern__new(max_entries);
	p->attrs = intern__new(max_entries);
	p->values = intern__new(max_entries);
	p->pids = intern__new(max_entries);
	p->links = intern__new(max_entries);
	p->max_links = PROFILE_MAX_LINKS + 1;
	if (!p->strings || !p->functions || !p->mappings || !p->locations || !p->lines || !p->stacks ||
	    !p->attrs || !p->values || !p->pids || !p->links)
		goto err_out;

	/* Zero values at index 0 of every dictionary table. */
	err = err ?: intern_string(p->strings, "", &idx);
	err = err
		      ?: intern__put(p->functions, zero, sizeof(struct profile_function_entry),
				     &idx, NULL);
	err = err
		      ?: intern__put(p->mappings, zero, sizeof(struct profile_mapping_entry), &idx,
				     NULL);
	err = err
		      ?: intern__put(p->locations, zero, sizeof(struct profile_location_entry),
				     &idx, NULL);
	err = err ?: intern__put(p->stacks, zero, 0, &idx, NULL);
	err = err ?: intern__put(p->lines, zero, 0, &idx, NULL);
	err = err ?: intern__put(p->links, zero, sizeof(struct profile_link), &idx, NULL);
	err = err ?: intern_string(p->values, "", &idx);
	err = err ?: add_attr(p, (const struct attr_key *)zero, &idx);
	err = err ?: intern_string(p->strings, st, &p->types[0].st);
	err = err ?: intern_string(p->strings, su, &p->types[0].su);
	err = err ?: intern_string(p->strings, pt, &p->types[0].pt);
	err = err ?: intern_string(p->strings, pu, &p->types[0].pu);
	p->ntypes = 1;
	if (err)
		goto err_out;
	return p;

err_out:
	profile__free(p);
	return NULL;
}

static void meta_free(struct profile_meta *m)
{
	size_t i;

	for (i = 0; i < m->nresource; i++) {
		free((char *)m->resource[i].key);
		free((char *)m->resource[i].value);
	}
	free((struct profile_kv *)m->resource);
	free((char *)m->host_name);
	free((char *)m->host_arch);
	free((char *)m->os_type);
	free((char *)m->scope_name);
	free((char *)m->scope_version);
	free((void *)m->original_payload);
	free((char *)m->original_payload_format);
	memset(m, 0, sizeof(*m));
}

static void free_kvs(struct profile_kv *kv, size_t n)
{
	for (size_t i = 0; kv && i < n; i++) {
		free((char *)kv[i].key);
		free((char *)kv[i].value);
	}
	free(kv);
}

/* Copy the first PROFILE_MAX_RESOURCE_ATTRS of @n attributes at @src (NULL
 * keys or values skipped) into @d. 0 or -ENOMEM. */
static int copy_attrs(struct profile_process_desc *d, const struct profile_kv *src, size_t n)
{
	struct profile_kv *kv;
	size_t i, k = 0;

	if (!src || !n)
		return 0;
	if (n > PROFILE_MAX_RESOURCE_ATTRS)
		n = PROFILE_MAX_RESOURCE_ATTRS;
	kv = calloc(n, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	d->attrs = kv;
	for (i = 0; i < n; i++) {
		if (!src[i].key || !src[i].value)
			continue;
		kv[k].key = strdup(src[i].key);
		kv[k].value = strdup(src[i].value);
		d->nattrs = ++k;
		if (!kv[k - 1].key || !kv[k - 1].value)
			return -ENOMEM;
	}
	return 0;
}

static void proc_free(struct proc *pr)
{
	free((char *)pr->desc.exe_name);
	free((char *)pr->desc.exe_path);
	free((char *)pr->desc.cmdline);
	free((char *)pr->desc.container_id);
	free_kvs((struct profile_kv *)pr->desc.attrs, pr->desc.nattrs);
	intern__free(pr->keys);
	free(pr->samples);
}

void profile__free(struct profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nprocs; i++)
		proc_free(&p->procs[i]);
	free(p->procs);
	meta_free(&p->meta);
	intern__free(p->strings);
	intern__free(p->functions);
	intern__free(p->mappings);
	intern__free(p->locations);
	intern__free(p->lines);
	intern__free(p->stacks);
	intern__free(p->attrs);
	intern__free(p->values);
	intern__free(p->pids);
	intern__free(p->links);
	free(p->attr_views);
	for (i = 0; i < MAPPING_MEMO; i++)
		memo_clear(&p->mmemo[i]);
	free(p);
}

/* Intern the non-zero loss counts of @m as integer attributes and make them
 * @p's meta attributes. Ones replaced may be orphans: prune drops them. */
static int meta_attrs(struct profile *p, const struct profile_meta *m)
{
	static const char *const keys[PROFILE_META_ATTRS] = {
		PROFILE_ATTR_SAMPLES_DROPPED,
		PROFILE_ATTR_SAMPLES_TRUNCATED,
		PROFILE_ATTR_SAMPLES_STACK_MISSING,
		PROFILE_ATTR_SAMPLES_TRUNCATED_DEPTH,
	};
	const __u64 v[PROFILE_META_ATTRS] = {m->samples_dropped, m->samples_truncated,
					     m->samples_stack_missing, m->samples_truncated_depth};
	__u32 idx[PROFILE_META_ATTRS];
	size_t i, n = 0;
	int err = 0;

	for (i = 0; i < PROFILE_META_ATTRS && !err; i++)
		if (v[i])
			err = attr_int(p, keys[i], v[i] > INT64_MAX ? INT64_MAX : (__s64)v[i],
				       &idx[n++]);
	if (err)
		return err;
	if (p->nmeta_attrs &&
	    (n != p->nmeta_attrs || memcmp(idx, p->meta_attrs, n * sizeof(idx[0]))))
		p->dirty = true;
	memcpy(p->meta_attrs, idx, n * sizeof(idx[0]));
	p->nmeta_attrs = n;
	return 0;
}

int profile__set_meta(struct profile *p, const struct profile_meta *meta)
{
	struct profile_meta m = *meta;
	struct profile_kv *kv = NULL;
	bool nomem = false;
	size_t i, n = 0;

	m.host_name = dup_or_null(meta->host_name);
	m.host_arch = dup_or_null(meta->host_arch);
	m.os_type = dup_or_null(meta->os_type);
	m.scope_name = dup_or_null(meta->scope_name);
	m.scope_version = dup_or_null(meta->scope_version);
	m.resource = NULL;
	m.nresource = 0;
	m.original_payload = NULL;
	m.original_payload_len = 0;
	m.original_payload_format = NULL;
	if (meta->original_payload_len && meta->original_payload && meta->original_payload_format) {
		void *copy = malloc(meta->original_payload_len);

		if (copy)
			memcpy(copy, meta->original_payload, meta->original_payload_len);
		m.original_payload = copy;
		m.original_payload_len = meta->original_payload_len;
		m.original_payload_format = strdup(meta->original_payload_format);
		nomem = !m.original_payload || !m.original_payload_format;
	}
	nomem = nomem || (meta->host_name && !m.host_name) || (meta->host_arch && !m.host_arch) ||
		(meta->os_type && !m.os_type) || (meta->scope_name && !m.scope_name) ||
		(meta->scope_version && !m.scope_version);
	if (!nomem && meta->nresource) {
		kv = calloc(meta->nresource, sizeof(*kv));
		nomem = !kv;
		for (i = 0; kv && i < meta->nresource && n < PROFILE_MAX_RESOURCE_ATTRS; i++) {
			const struct profile_kv *in = &meta->resource[i];

			if (!in->key || !*in->key || !in->value)
				continue;
			kv[n].key = strdup(in->key);
			kv[n].value = strdup(in->value);
			n++;
			if (!kv[n - 1].key || !kv[n - 1].value) {
				nomem = true;
				break;
			}
		}
		m.resource = kv;
		m.nresource = n;
	}
	if (!nomem && meta_attrs(p, &m)) {
		p->dirty = true; /* attributes interned before the failure */
		nomem = true;
	}
	if (nomem) {
		meta_free(&m);
		return -ENOMEM;
	}
	meta_free(&p->meta);
	p->meta = m;
	return 0;
}

/* splitmix64's finaliser: a bijection that spreads every input bit. */
static __u64 mix64(__u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void profile__id_of(const struct profile *p, size_t proc, __u8 id[16])
{
	__u64 w[2];
	bool nonzero = false;
	size_t i;

	memcpy(id, p->meta.profile_id, 16);
	if (proc == 0 || proc == SIZE_MAX)
		return;
	memcpy(w, id, 16);
	/* Both words depend on both halves of the id and on @proc; distinct
	 * @proc give distinct ids (mix64 is a bijection of w[0] ^ proc ...). */
	w[0] = mix64(w[0] ^ mix64((__u64)proc + 0x9e3779b97f4a7c15ull));
	w[1] = mix64(w[1] ^ w[0]);
	memcpy(id, w, 16);
	for (i = 0; i < 16; i++)
		nonzero |= id[i] != 0;
	if (!nonzero)
		id[0] = 1;
}

const __u32 *profile__meta_attrs(const struct profile *p, size_t *n)
{
	*n = p->nmeta_attrs;
	return p->meta_attrs;
}

const struct profile_meta *profile__meta(const struct profile *p)
{
	return &p->meta;
}

static int get_proc(struct profile *p, __u32 type, const struct profile_process_desc *desc,
		    struct proc **out)
{
	struct proc_key pk = {.pid = desc->pid, .type = type, .generation = desc->generation};
	struct proc *pr;
	__u32 idx;
	int err;

	if (!intern__find(p->pids, &pk, sizeof(pk), &idx)) {
		pr = &p->procs[idx];
		/* A process context found after its first sample (a process
		 * described from the kernel's records has its maps file looked
		 * at later): its resource gets the attributes now. */
		if (!pr->desc.nattrs && desc->nattrs &&
		    copy_attrs(&pr->desc, desc->attrs, desc->nattrs)) {
			free_kvs((struct profile_kv *)pr->desc.attrs, pr->desc.nattrs);
			pr->desc.attrs = NULL; /* out of memory: none, as before */
			pr->desc.nattrs = 0;
		}
		*out = pr;
		return 0;
	}
	err = array__grow((void **)&p->procs, &p->procs_cap, p->nprocs, sizeof(*pr), 16,
			  SIZE_MAX / sizeof(*pr));
	if (err)
		return err;
	pr = &p->procs[p->nprocs];
	memset(pr, 0, sizeof(*pr));
	pr->desc.pid = desc->pid;
	pr->desc.generation = desc->generation;
	pr->type = type;
	pr->desc.exe_name = dup_or_null(desc->exe_name);
	pr->desc.exe_path = dup_or_null(desc->exe_path);
	pr->desc.cmdline = dup_or_null(desc->cmdline);
	pr->desc.container_id = dup_or_null(desc->container_id);
	pr->keys = intern__new(p->max_entries);
	err = -ENOMEM;
	if (!pr->keys || (desc->exe_name && !pr->desc.exe_name) ||
	    (desc->exe_path && !pr->desc.exe_path) || (desc->cmdline && !pr->desc.cmdline) ||
	    (desc->container_id && !pr->desc.container_id) ||
	    copy_attrs(&pr->desc, desc->attrs, desc->nattrs))
		goto err_out;
	/* Index in p->pids == index in p->procs: intern only once the proc exists. */
	err = intern__put(p->pids, &pk, sizeof(pk), &idx, NULL);
	if (err)
		goto err_out;
	p->nprocs++;
	*out = pr;
	return 0;
err_out:
	proc_free(pr);
	return err;
}

static const char *const has_keys[4] = {
	"pprof.mapping.has_functions",
	"pprof.mapping.has_filenames",
	"pprof.mapping.has_line_numbers",
	"pprof.mapping.has_inline_frames",
};

/* The memo slot of mapping @m. */
static struct mapping_memo *memo_slot(struct profile *p, const struct profile_mapping_desc *m)
{
	__u64 h = htab__hash_u64(m->start ^ (m->limit << 7), m->file_offset);

	return &p->mmemo[h & (MAPPING_MEMO - 1)];
}

/* Does @mm hold what add_mapping() would make of @m? */
static bool memo_hit(const struct mapping_memo *mm, const struct profile_mapping_desc *m)
{
	return mm->d.limit && mm->d.start == m->start && mm->d.limit == m->limit &&
	       mm->d.file_offset == m->file_offset &&
	       mm->d.flags == (m->flags & PROFILE_MAPPING_HAS__ALL) &&
	       !strcmp(mm->d.path, or_empty(m->path)) &&
	       !strcmp(mm->d.build_id, or_empty(m->build_id)) &&
	       !strcmp(mm->d.htlhash, or_empty(m->htlhash)) &&
	       !strcmp(mm->d.go_build_id, or_empty(m->go_build_id));
}

/* Keep mapping @m as index @idx in its memo slot; without memory the slot
 * stays empty (the next add interns again). */
static void memo_put(struct profile *p, const struct profile_mapping_desc *m, __u32 idx)
{
	struct mapping_memo *mm = memo_slot(p, m);

	memo_clear(mm);
	mm->d.path = strdup(or_empty(m->path));
	mm->d.build_id = strdup(or_empty(m->build_id));
	mm->d.htlhash = strdup(or_empty(m->htlhash));
	mm->d.go_build_id = strdup(or_empty(m->go_build_id));
	if (!mm->d.path || !mm->d.build_id || !mm->d.htlhash || !mm->d.go_build_id) {
		memo_clear(mm);
		return;
	}
	mm->d.start = m->start;
	mm->d.limit = m->limit;
	mm->d.file_offset = m->file_offset;
	mm->d.flags = m->flags & PROFILE_MAPPING_HAS__ALL;
	mm->idx = idx;
}

static int add_mapping(struct profile *p, const struct profile_mapping_desc *m, __u32 *idx)
{
	const struct mapping_memo *mm = memo_slot(p, m);
	size_t i;
	struct profile_mapping_entry e = {
		.start = m->start,
		.limit = m->limit,
		.file_offset = m->file_offset,
	};
	int err;

	if (m->start >= m->limit)
		return -EINVAL;
	if (memo_hit(mm, m)) {
		*idx = mm->idx;
		return 0;
	}
	err = intern_string(p->strings, m->path, &e.filename);
	if (!err && m->build_id && *m->build_id) {
		err = attr_str(p, "process.executable.build_id.gnu", m->build_id, &e.attr);
		e.attrs[e.nattrs++] = e.attr;
	}
	if (!err && m->htlhash && *m->htlhash)
		err = attr_str(p, "process.executable.build_id.htlhash", m->htlhash,
			       &e.attrs[e.nattrs++]);
	if (!err && m->go_build_id && *m->go_build_id)
		err = attr_str(p, "process.executable.build_id.go", m->go_build_id,
			       &e.attrs[e.nattrs++]);
	e.flags = m->flags & PROFILE_MAPPING_HAS__ALL;
	for (i = 0; !err && e.flags && i < 4; i++)
		err = attr_kind_int(p, has_keys[i], PROFILE_ATTR_BOOL, !!(e.flags & (1u << i)),
				    &e.attrs[e.nattrs++]);
	if (!err)
		err = intern__put(p->mappings, &e, sizeof(e), idx, NULL);
	if (!err)
		memo_put(p, m, *idx);
	return err;
}

static int add_function(struct profile *p, const struct profile_line *l, __u32 *idx)
{
	struct profile_function_entry fn = {.start_line = l->start_line > 0 ? l->start_line : 0};
	int err;

	err = intern_string(p->strings, l->function, &fn.name);
	fn.system_name = fn.name;
	if (!err && l->system_name && l->function && strcmp(l->system_name, l->function))
		err = intern_string(p->strings, l->system_name, &fn.system_name);
	if (!err && l->filename && *l->filename)
		err = intern_string(p->strings, l->filename, &fn.filename);
	if (!err)
		err = intern__put(p->functions, &fn, sizeof(fn), idx, NULL);
	return err;
}

/* Intern the lines of @f (or its lone function) as a line list. */
static int add_lines(struct profile *p, const struct profile_frame *f, __u32 *idx)
{
	struct profile_line_entry le[PROFILE_MAX_LINES];
	struct profile_line one = {.function = f->function, .system_name = f->system_name};
	const struct profile_line *in = f->lines;
	size_t n = f->nlines, i, k = 0;
	int err = 0;

	*idx = 0;
	if (!n || !in) {
		if (!f->function || !*f->function)
			return 0;
		in = &one;
		n = 1;
	}
	if (n > PROFILE_MAX_LINES)
		n = PROFILE_MAX_LINES;
	for (i = 0; i < n && !err; i++) {
		/* A line needs a function: one without a name gets an empty
		 * name, so its file and line still show. */
		if ((!in[i].function || !*in[i].function) && !in[i].filename && !in[i].line)
			continue;
		memset(&le[k], 0, sizeof(le[k]));
		le[k].line = in[i].line > 0 ? in[i].line : 0;
		le[k].column = in[i].column > 0 ? in[i].column : 0;
		err = add_function(p, &in[i], &le[k].function);
		k++;
	}
	if (!err && k)
		err = intern__put(p->lines, le, k * sizeof(le[0]), idx, NULL);
	return err;
}

/* The "profile.frame.type" attribute @name, remembered for the next
 * location (most of a profile's frames are of one type). */
static int frame_type_attr(struct profile *p, const char *name, __u32 *idx)
{
	int err;

	if (p->ftype[0] && !strcmp(p->ftype, name)) {
		*idx = p->ftype_idx;
		return 0;
	}
	err = attr_str(p, "profile.frame.type", name, idx);
	if (!err && strlen(name) < sizeof(p->ftype)) {
		strcpy(p->ftype, name);
		p->ftype_idx = *idx;
	}
	return err;
}

static int add_location(struct profile *p, const struct profile_frame *f, __u32 *idx)
{
	struct profile_location_entry e = {.address = f->address};
	int err = 0;

	if (f->mapping && f->mapping->start < f->mapping->limit)
		err = add_mapping(p, f->mapping, &e.mapping);
	if (!err)
		err = add_lines(p, f, &e.lines);
	if (!err)
		err = frame_type_attr(
			p, f->type_name ? f->type_name : profile__frame_type_name(f->type),
			&e.attr);
	if (!err)
		err = intern__put(p->locations, &e, sizeof(e), idx, NULL);
	return err;
}

#define STACK_MAX_FRAMES 4096

int profile__add_location(struct profile *p, const struct profile_frame *frame, __u32 *loc)
{
	int err;

	if (!p || !frame || !loc)
		return -EINVAL;
	err = add_location(p, frame, loc);
	if (err)
		p->dirty = true;
	return err;
}

int profile__add_stack_locs(struct profile *p, const __u32 *locs, size_t nlocs, __u32 *stack)
{
	size_t i, nloc;
	int err;

	if (!p || (nlocs && !locs) || !stack)
		return -EINVAL;
	if (nlocs > STACK_MAX_FRAMES)
		nlocs = STACK_MAX_FRAMES;
	nloc = intern__count(p->locations);
	for (i = 0; i < nlocs; i++)
		if (!locs[i] || locs[i] >= nloc)
			return -EINVAL;
	err = intern__put(p->stacks, locs, nlocs * sizeof(locs[0]), stack, NULL);
	if (err)
		p->dirty = true;
	return err;
}

int profile__add_stack(struct profile *p, const struct profile_frame *frames, size_t nframes,
		       __u32 *stack)
{
	__u32 locs[STACK_MAX_FRAMES];
	size_t i;
	int err = 0;

	if (!p || (nframes && !frames) || !stack)
		return -EINVAL;
	if (nframes > STACK_MAX_FRAMES)
		nframes = STACK_MAX_FRAMES;
	for (i = 0; i < nframes && !err; i++)
		err = add_location(p, &frames[i], &locs[i]);
	if (err) {
		p->dirty = true;
		return err;
	}
	return profile__add_stack_locs(p, locs, nframes, stack);
}

static bool link_is_zero(const struct profile_link *l)
{
	static const struct profile_link zero;

	return !memcmp(l, &zero, sizeof(zero));
}

/* Index of link @l in *@idx: 0 for the zero link, and for a new one past the
 * cap (its @count is then counted as capped). */
static int add_link(struct profile *p, const struct profile_link *l, __u64 count, __u32 *idx)
{
	int err;

	*idx = 0;
	if (link_is_zero(l))
		return 0;
	if (!intern__find(p->links, l, sizeof(*l), idx))
		return 0;
	if (intern__count(p->links) >= p->max_links) {
		p->links_capped += count;
		return 0;
	}
	err = intern__put(p->links, l, sizeof(*l), idx, NULL);
	if (err)
		*idx = 0;
	return err;
}

int profile__add_stack_sample(struct profile *p, const struct profile_process_desc *proc, __u32 tid,
			      const char *thread_name, __u32 stack, __u64 count)
{
	return profile__add_typed_stack_sample(p, 0, proc, tid, thread_name, NULL, stack, count);
}

bool profile__ctx_key_ok(const char *key)
{
	return key && *key && strcmp(key, "thread.id") && strcmp(key, "thread.name") &&
	       strcmp(key, PROFILE_ATTR_OFF_CPU_STATE) && strcmp(key, PROFILE_ATTR_OFF_CPU_SWITCHES);
}

/* The thread-context attributes of @l into @key (see struct profile_labels). */
static int add_ctx_attrs(struct profile *p, const struct profile_labels *l, struct sample_key *key)
{
	size_t i, j, kept = 0;
	int err;

	for (i = 0; i < l->nctx && kept < PROFILE_MAX_CTX_ATTRS; i++) {
		const struct profile_ctx_attr *a = &l->ctx[i];

		if (!profile__ctx_key_ok(a->key) || !a->value || !*a->value)
			continue;
		for (j = 0; j < i && strcmp(l->ctx[j].key ? l->ctx[j].key : "", a->key); j++)
			;
		if (j < i)
			continue; /* a key given twice: the first wins */
		err = attr_str(p, a->key, a->value, &key->attrs[key->nattrs]);
		if (err)
			return err;
		key->nattrs++;
		kept++;
	}
	return 0;
}

int profile__add_typed_stack_sample(struct profile *p, __u32 type,
				    const struct profile_process_desc *proc, __u32 tid,
				    const char *thread_name, const struct profile_labels *l,
				    __u32 stack, __u64 count)
{
	struct sample_key key = {.stack = stack};
	struct profile_sample_entry *s;
	struct proc *pr = NULL;
	__u32 idx;
	bool added;
	int err;

	if (!p || !proc || !count || stack >= intern__count(p->stacks) || type >= p->ntypes)
		return -EINVAL;
	err = get_proc(p, type, proc, &pr);
	if (err)
		return err;
	err = attr_int(p, "thread.id", tid, &key.attrs[key.nattrs++]);
	if (!err && thread_name && *thread_name)
		err = attr_str(p, "thread.name", thread_name, &key.attrs[key.nattrs++]);
	if (!err && l && l->state && *l->state)
		err = attr_str(p, PROFILE_ATTR_OFF_CPU_STATE, l->state, &key.attrs[key.nattrs++]);
	if (!err && l && l->switches)
		err = attr_int(p, PROFILE_ATTR_OFF_CPU_SWITCHES,
			       l->switches > INT64_MAX ? INT64_MAX : (__s64)l->switches,
			       &key.attrs[key.nattrs++]);
	if (!err && l)
		err = add_ctx_attrs(p, l, &key);
	if (!err && l && l->link)
		err = add_link(p, l->link, count, &key.link);
	if (!err && intern__count(pr->keys) >= pr->cap) {
		size_t ncap = pr->cap ? pr->cap * 2 : 64;

		s = realloc(pr->samples, ncap * sizeof(*s));
		if (!s)
			err = -ENOMEM;
		else {
			pr->samples = s;
			pr->cap = ncap;
		}
	}
	if (!err)
		err = intern__put(pr->keys, &key, sizeof(key), &idx, &added);
	if (err)
		goto fail;
	if (added) {
		s = &pr->samples[idx];
		s->stack = key.stack;
		s->nattrs = key.nattrs;
		memcpy(s->attrs, key.attrs, sizeof(s->attrs));
		s->link = key.link;
		s->pad = 0;
		s->value = 0;
	}
	pr->samples[idx].value += count;
	p->total += count;
	p->types[type].total += count;
	return 0;
fail:
	p->dirty = true;
	return err;
}

int profile__add_sample(struct profile *p, const struct profile_process_desc *proc, __u32 tid,
			const char *thread_name, const struct profile_frame *frames, size_t nframes,
			__u64 count)
{
	return profile__add_typed_sample(p, 0, proc, tid, thread_name, NULL, frames, nframes,
					 count);
}

int profile__add_typed_sample(struct profile *p, __u32 type,
			      const struct profile_process_desc *proc, __u32 tid,
			      const char *thread_name, const struct profile_labels *l,
			      const struct profile_frame *frames, size_t nframes, __u64 count)
{
	__u32 stack;
	int err;

	if (!p || !proc || (nframes && !frames) || !count)
		return -EINVAL;
	err = profile__add_stack(p, frames, nframes, &stack);
	if (!err)
		err = profile__add_typed_stack_sample(p, type, proc, tid, thread_name, l, stack,
						      count);
	return err;
}

int profile__add_value_type(struct profile *p, const char *sample_type, const char *sample_unit,
			    const char *period_type, const char *period_unit, __s64 period,
			    __u32 *idx)
{
	struct value_type t = {.period = period};
	__u32 i;
	int err = 0;

	if (!p || !sample_type || !sample_unit || !period_type || !period_unit || !idx)
		return -EINVAL;
	err = err ?: intern_string(p->strings, sample_type, &t.st);
	err = err ?: intern_string(p->strings, sample_unit, &t.su);
	err = err ?: intern_string(p->strings, period_type, &t.pt);
	err = err ?: intern_string(p->strings, period_unit, &t.pu);
	if (err) {
		p->dirty = true;
		return err;
	}
	for (i = 0; i < p->ntypes; i++) {
		const struct value_type *o = &p->types[i];

		if (o->st == t.st && o->su == t.su && o->pt == t.pt && o->pu == t.pu &&
		    (!i || o->period == t.period)) {
			*idx = i;
			return 0;
		}
	}
	if (p->ntypes == PROFILE_MAX_TYPES)
		return -E2BIG;
	p->types[p->ntypes] = t;
	*idx = p->ntypes++;
	return 0;
}

int profile__set_period(struct profile *p, __u32 type, const char *period_type,
			const char *period_unit, __s64 period)
{
	struct value_type *t;
	int err = 0;

	if (!type || type >= p->ntypes || !period_type || !period_unit)
		return -EINVAL;
	t = &p->types[type];
	err = err ?: intern_string(p->strings, period_type, &t->pt);
	err = err ?: intern_string(p->strings, period_unit, &t->pu);
	p->dirty = true; /* the replaced strings may be orphans now */
	if (!err)
		t->period = period;
	return err;
}

size_t profile__value_type_count(const struct profile *p)
{
	return p->ntypes;
}

void profile__value_type(const struct profile *p, __u32 type, __u32 *sample_type,
			 __u32 *sample_unit, __u32 *period_type, __u32 *period_unit)
{
	const struct value_type *t = &p->types[type < p->ntypes ? type : 0];

	*sample_type = t->st;
	*sample_unit = t->su;
	*period_type = t->pt;
	*period_unit = t->pu;
}

__s64 profile__period(const struct profile *p, __u32 type)
{
	if (type >= p->ntypes)
		return 0;
	if (!type && !p->types[0].period)
		return (__s64)p->meta.period_ns;
	return p->types[type].period;
}

__u64 profile__type_total(const struct profile *p, __u32 type)
{
	return type < p->ntypes ? p->types[type].total : 0;
}

int profile__find_value_type(const struct profile *p, const char *sample_type, __u32 *type)
{
	__u32 i;

	for (i = 0; i < p->ntypes; i++) {
		if (!strcmp(profile__string(p, p->types[i].st, NULL), sample_type)) {
			*type = i;
			return 0;
		}
	}
	return -ENOENT;
}

__u32 profile__process_type(const struct profile *p, size_t i)
{
	return p->procs[i].type;
}

/* ---- pruning: rebuild the profile from what samples reference ---- */

static void replay_lines(const struct profile *src, __u32 idx, struct profile_line *out,
			 size_t *nout)
{
	const struct profile_line_entry *le;
	size_t n, i;

	le = profile__lines(src, idx, &n);
	for (i = 0; i < n && i < PROFILE_MAX_LINES; i++) {
		const struct profile_function_entry *fn = profile__function(src, le[i].function);

		out[i].function = profile__string(src, fn->name, NULL);
		out[i].system_name = profile__string(src, fn->system_name, NULL);
		out[i].filename = fn->filename ? profile__string(src, fn->filename, NULL) : NULL;
		out[i].start_line = fn->start_line;
		out[i].line = le[i].line;
		out[i].column = le[i].column;
	}
	*nout = i;
}

/* The htlhash and Go build-id of mapping @m of @src into @d. */
static void copy_build_ids(const struct profile *src, const struct profile_mapping_entry *m,
			   struct profile_mapping_desc *d)
{
	__u32 i;

	for (i = 0; i < m->nattrs && i < PROFILE_MAPPING_MAX_ATTRS; i++) {
		const struct profile_attr_entry *a = profile__attr(src, m->attrs[i]);
		const char *k = profile__string(src, a->key, NULL);

		if (!strcmp(k, "process.executable.build_id.htlhash"))
			d->htlhash = a->str_value;
		else if (!strcmp(k, "process.executable.build_id.go"))
			d->go_build_id = a->str_value;
	}
}

static int replay_sample(struct profile *dst, __u32 type, const struct profile *src,
			 const struct proc *pr, const struct profile_sample_entry *s,
			 profile_frame_edit_fn edit, void *arg)
{
	struct profile_labels lab = {0};
	struct profile_ctx_attr ctx[PROFILE_MAX_CTX_ATTRS];
	struct profile_mapping_desc *maps = NULL;
	struct profile_frame *frames = NULL;
	struct profile_line *lines = NULL;
	const char *tname = NULL;
	__u32 tid = 0;
	size_t n, i;
	const __u32 *locs = profile__stack(src, s->stack, &n);
	int err;

	frames = calloc(n + 1, sizeof(*frames));
	maps = calloc(n + 1, sizeof(*maps));
	lines = calloc((n + 1) * PROFILE_MAX_LINES, sizeof(*lines));
	err = -ENOMEM;
	if (!frames || !maps || !lines)
		goto out;
	for (i = 0; i < s->nattrs; i++) {
		const struct profile_attr_entry *a = profile__attr(src, s->attrs[i]);
		const char *k = profile__string(src, a->key, NULL);

		if (!strcmp(k, "thread.id"))
			tid = (__u32)a->int_value;
		else if (!strcmp(k, "thread.name"))
			tname = a->str_value;
		else if (!strcmp(k, PROFILE_ATTR_OFF_CPU_STATE))
			lab.state = a->str_value;
		else if (!strcmp(k, PROFILE_ATTR_OFF_CPU_SWITCHES))
			lab.switches = (__u64)a->int_value;
		else if (a->kind == PROFILE_ATTR_STR && lab.nctx < PROFILE_MAX_CTX_ATTRS) {
			ctx[lab.nctx].key = k;
			ctx[lab.nctx++].value = a->str_value;
		}
	}
	lab.ctx = ctx;
	if (s->link)
		lab.link = profile__link(src, s->link);
	for (i = 0; i < n; i++) {
		const struct profile_location_entry *l = profile__location(src, locs[i]);
		struct profile_frame *f = &frames[i];

		f->address = l->address;
		f->lines = &lines[i * PROFILE_MAX_LINES];
		replay_lines(src, l->lines, &lines[i * PROFILE_MAX_LINES], &f->nlines);
		if (l->attr)
			f->type_name = profile__attr(src, l->attr)->str_value;
		if (l->mapping) {
			const struct profile_mapping_entry *m = profile__mapping(src, l->mapping);

			maps[i].start = m->start;
			maps[i].limit = m->limit;
			maps[i].file_offset = m->file_offset;
			maps[i].path = profile__string(src, m->filename, NULL);
			maps[i].build_id = m->attr ? profile__attr(src, m->attr)->str_value : NULL;
			maps[i].flags = m->flags;
			copy_build_ids(src, m, &maps[i]);
			f->mapping = &maps[i];
		}
		if (edit)
			edit(arg, locs[i], i, f, &maps[i]);
	}
	err = profile__add_typed_sample(dst, type, &pr->desc, tid, tname, &lab, frames, n,
					s->value);
out:
	free(lines);
	free(maps);
	free(frames);
	return err;
}

/* Stacks added with profile__add_stack() that no sample took are the only
 * orphans a run without failed adds can leave. */
static bool all_stacks_used(const struct profile *p)
{
	size_t n = intern__count(p->stacks), i, j, unused;
	bool *used, ok;

	if (n <= 1)
		return true;
	used = calloc(n, sizeof(*used));
	if (!used)
		return false;
	for (i = 0; i < p->nprocs; i++)
		for (j = 0; j < intern__count(p->procs[i].keys); j++)
			used[p->procs[i].samples[j].stack] = true;
	for (i = 1, unused = 0; i < n; i++)
		unused += !used[i];
	ok = !unused;
	free(used);
	return ok;
}

static const char *type_str(const struct profile *p, __u32 idx)
{
	return profile__string(p, idx, NULL);
}

/* An empty profile with @p's value types (all of them, same indices, for
 * @only UINT32_MAX; else type @only alone, as type 0). */
static struct profile *copy_types(const struct profile *p, __u32 only)
{
	const struct value_type *t0 = &p->types[only == UINT32_MAX ? 0 : only];
	struct profile *n;
	__u32 i, idx;

	n = profile_create(p->max_entries, type_str(p, t0->st), type_str(p, t0->su),
			   type_str(p, t0->pt), type_str(p, t0->pu));
	if (!n)
		return NULL;
	n->types[0].period = t0->period;
	n->max_links = p->max_links;
	for (i = 1; only == UINT32_MAX && i < p->ntypes; i++) {
		const struct value_type *t = &p->types[i];

		if (profile__add_value_type(n, type_str(p, t->st), type_str(p, t->su),
					    type_str(p, t->pt), type_str(p, t->pu), t->period,
					    &idx) ||
		    idx != i) {
			profile__free(n);
			return NULL;
		}
	}
	return n;
}

struct profile *profile__extract_type(const struct profile *p, __u32 type)
{
	struct profile_meta meta;
	struct profile *n;
	size_t i, j;
	int err;

	if (type >= p->ntypes)
		return NULL;
	n = copy_types(p, type);
	if (!n)
		return NULL;
	meta = p->meta;
	meta.period_ns = (__u64)profile__period(p, type);
	n->types[0].period = 0;
	err = profile__set_meta(n, &meta);
	for (i = 0; i < p->nprocs && !err; i++) {
		const struct proc *pr = &p->procs[i];

		if (pr->type != type)
			continue;
		for (j = 0; j < profile__sample_count(p, i) && !err; j++)
			err = replay_sample(n, 0, p, pr, &pr->samples[j], NULL, NULL);
	}
	err = err ?: profile__prune(n);
	if (err) {
		profile__free(n);
		return NULL;
	}
	return n;
}

int profile__prune(struct profile *p)
{
	struct profile *n;
	int err;

	if (!p->dirty && all_stacks_used(p))
		return 0;
	err = profile__rebuild(p, NULL, NULL, &n);
	if (err)
		return err;
	/* Swap contents: @p keeps its address for the caller. */
	{
		struct profile tmp = *p;

		*p = *n;
		*n = tmp;
	}
	profile__free(n);
	return 0;
}

int profile__rebuild(const struct profile *p, profile_frame_edit_fn edit, void *arg,
		     struct profile **out)
{
	struct profile *n;
	size_t i, j;
	int err;

	*out = NULL;
	n = copy_types(p, UINT32_MAX);
	if (!n)
		return -ENOMEM;
	err = profile__set_meta(n, &p->meta);
	n->links_capped = p->links_capped;
	for (i = 0; i < p->nprocs && !err; i++) {
		const struct proc *pr = &p->procs[i];

		for (j = 0; j < profile__sample_count(p, i) && !err; j++)
			err = replay_sample(n, pr->type, p, pr, &pr->samples[j], edit, arg);
	}
	if (err) {
		profile__free(n);
		return err;
	}
	*out = n;
	return 0;
}

/* ---- read side ---- */

size_t profile__link_count(const struct profile *p)
{
	return intern__count(p->links);
}

const struct profile_link *profile__link(const struct profile *p, __u32 idx)
{
	return intern__get(p->links, idx, NULL);
}

void profile__set_link_cap(struct profile *p, __u32 cap)
{
	p->max_links = (cap ? cap : PROFILE_MAX_LINKS) + 1;
}

__u32 profile__link_cap(const struct profile *p)
{
	return p->max_links - 1;
}

__u64 profile__links_capped(const struct profile *p)
{
	return p->links_capped;
}

size_t profile__string_count(const struct profile *p)
{
	return intern__count(p->strings);
}

size_t profile__function_count(const struct profile *p)
{
	return intern__count(p->functions);
}

size_t profile__mapping_count(const struct profile *p)
{
	return intern__count(p->mappings);
}

size_t profile__location_count(const struct profile *p)
{
	return intern__count(p->locations);
}

size_t profile__stack_count(const struct profile *p)
{
	return intern__count(p->stacks);
}

size_t profile__attr_count(const struct profile *p)
{
	return intern__count(p->attrs);
}

const char *profile__string(const struct profile *p, __u32 idx, size_t *len)
{
	size_t n;
	const char *s = intern__get(p->strings, idx, &n);

	if (len)
		*len = n - 1;
	return s;
}

const struct profile_function_entry *profile__function(const struct profile *p, __u32 idx)
{
	return intern__get(p->functions, idx, NULL);
}

const struct profile_mapping_entry *profile__mapping(const struct profile *p, __u32 idx)
{
	return intern__get(p->mappings, idx, NULL);
}

const struct profile_location_entry *profile__location(const struct profile *p, __u32 idx)
{
	return intern__get(p->locations, idx, NULL);
}

const struct profile_attr_entry *profile__attr(const struct profile *p, __u32 idx)
{
	return &p->attr_views[idx];
}

const struct profile_line_entry *profile__lines(const struct profile *p, __u32 idx, size_t *n)
{
	size_t len;
	const struct profile_line_entry *l = intern__get(p->lines, idx, &len);

	*n = len / sizeof(*l);
	return l;
}

__u32 profile__location_function(const struct profile *p, const struct profile_location_entry *l)
{
	size_t n;
	const struct profile_line_entry *le = profile__lines(p, l->lines, &n);

	return n ? le[0].function : 0;
}

const __u32 *profile__stack(const struct profile *p, __u32 idx, size_t *n)
{
	size_t len;
	const __u32 *locs = intern__get(p->stacks, idx, &len);

	*n = len / sizeof(__u32);
	return locs;
}

int profile__set_value_types(struct profile *p, const char *sample_type, const char *sample_unit,
			     const char *period_type, const char *period_unit)
{
	__u32 st = p->types[0].st, su = p->types[0].su, pt = p->types[0].pt;
	__u32 pu = p->types[0].pu;
	int err = 0;

	if (sample_type)
		err = err ?: intern_string(p->strings, sample_type, &st);
	if (sample_unit)
		err = err ?: intern_string(p->strings, sample_unit, &su);
	if (period_type)
		err = err ?: intern_string(p->strings, period_type, &pt);
	if (period_unit)
		err = err ?: intern_string(p->strings, period_unit, &pu);
	if (err) {
		p->dirty = true;
		return err;
	}
	/* The strings replaced may now be orphans: let prune rebuild. */
	if (st != p->types[0].st || su != p->types[0].su || pt != p->types[0].pt ||
	    pu != p->types[0].pu)
		p->dirty = true;
	p->types[0].st = st;
	p->types[0].su = su;
	p->types[0].pt = pt;
	p->types[0].pu = pu;
	return 0;
}

void profile__value_types(const struct profile *p, __u32 *sample_type, __u32 *sample_unit,
			  __u32 *period_type, __u32 *period_unit)
{
	profile__value_type(p, 0, sample_type, sample_unit, period_type, period_unit);
}

size_t profile__process_count(const struct profile *p)
{
	return p->nprocs;
}

const struct profile_process_desc *profile__process(const struct profile *p, size_t i)
{
	return &p->procs[i].desc;
}

size_t profile__sample_count(const struct profile *p, size_t proc)
{
	return intern__count(p->procs[proc].keys);
}

const struct profile_sample_entry *profile__sample(const struct profile *p, size_t proc, size_t i)
{
	return &p->procs[proc].samples[i];
}

__u64 profile__total(const struct profile *p)
{
	return p->total;
}
