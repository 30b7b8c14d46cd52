/* profile.c - the profile being built: interning of strings, functions,
 * mappings, locations and stacks, and samples by process (see profile.h). */
#include "model/profile_int.h"

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

static int attr_kind_int(struct profile *p, const char *key, __u32 kind, __s64 value, __u32 *idx)
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

static int attr_num_unit(struct profile *p, const struct profile_num_attr *a, __u32 *idx)
{
	struct attr_key k = {.kind = PROFILE_ATTR_INT, .int_value = a->value};
	int err;

	err = intern_string(p->strings, a->key, &k.key);
	if (!err && a->unit && *a->unit)
		err = intern_string(p->strings, a->unit, &k.unit);
	if (!err)
		err = add_attr(p, &k, idx);
	return err;
}

struct profile *profile__new(void)
{
	return profile__new_limited(PROFILE_MAX_ENTRIES);
}

struct profile *profile__new_limited(__u32 max_entries)
{
	return profile__create(max_entries, "samples", "count", "cpu", "nanoseconds");
}

struct profile *profile__create(__u32 max_entries, const char *st, const char *su, const char *pt,
				const char *pu)
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
	p->max_times = PROFILE_MAX_TIMES;
	if (!p->strings || !p->functions || !p->mappings || !p->locations || !p->lines ||
	    !p->stacks || !p->attrs || !p->values || !p->pids || !p->links)
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
	free((char *)m->pprof_comment);
	free((char *)m->pprof_drop_frames);
	free((char *)m->pprof_keep_frames);
	free((char *)m->pprof_default_sample_type);
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
	profile__times_free(pr);
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

/* Intern the non-zero loss counts of @m as integer attributes, then its
 * pprof fields as string attributes, and make them @p's meta attributes.
 * Ones replaced may be orphans: prune drops them. */
static int meta_attrs(struct profile *p, const struct profile_meta *m)
{
	static const char *const keys[PROFILE_META_ATTRS] = {
		PROFILE_ATTR_SAMPLES_DROPPED,	    PROFILE_ATTR_SAMPLES_TRUNCATED,
		PROFILE_ATTR_SAMPLES_STACK_MISSING, PROFILE_ATTR_SAMPLES_TRUNCATED_DEPTH,
		PROFILE_ATTR_SAMPLES_THROTTLED,	    PROFILE_ATTR_SAMPLES_UNTIMED,
		PROFILE_ATTR_PPROF_COMMENT,	    PROFILE_ATTR_PPROF_DROP_FRAMES,
		PROFILE_ATTR_PPROF_KEEP_FRAMES,	    PROFILE_ATTR_PPROF_DEFAULT_SAMPLE_TYPE,
	};
	const __u64 v[6] = {m->samples_dropped,		m->samples_truncated,
			    m->samples_stack_missing,	m->samples_truncated_depth,
			    m->samples_throttled,	m->samples_untimed};
	const char *sv[4] = {m->pprof_comment, m->pprof_drop_frames, m->pprof_keep_frames,
			     m->pprof_default_sample_type};
	__u32 idx[PROFILE_META_ATTRS];
	size_t i, n = 0;
	int err = 0;

	for (i = 0; i < 6 && !err; i++)
		if (v[i])
			err = attr_int(p, keys[i], v[i] > INT64_MAX ? INT64_MAX : (__s64)v[i],
				       &idx[n++]);
	for (i = 0; i < 4 && !err; i++)
		if (sv[i] && *sv[i])
			err = attr_str(p, keys[6 + i], sv[i], &idx[n++]);
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
	m.pprof_comment = dup_or_null(meta->pprof_comment);
	m.pprof_drop_frames = dup_or_null(meta->pprof_drop_frames);
	m.pprof_keep_frames = dup_or_null(meta->pprof_keep_frames);
	m.pprof_default_sample_type = dup_or_null(meta->pprof_default_sample_type);
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
		(meta->scope_version && !m.scope_version) ||
		(meta->pprof_comment && !m.pprof_comment) ||
		(meta->pprof_drop_frames && !m.pprof_drop_frames) ||
		(meta->pprof_keep_frames && !m.pprof_keep_frames) ||
		(meta->pprof_default_sample_type && !m.pprof_default_sample_type);
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
			pr->desc.attrs = NULL; /* out of memory: left without attributes */
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
	       strcmp(key, PROFILE_ATTR_OFF_CPU_STATE) &&
	       strcmp(key, PROFILE_ATTR_OFF_CPU_SWITCHES) && strcmp(key, PROFILE_ATTR_CPU);
}

/* Whether numeric attribute @i of @l has a key a string attribute or an
 * earlier numeric one already has (the first wins). */
static bool num_key_taken(const struct profile_labels *l, size_t i)
{
	size_t j;

	for (j = 0; j < l->nctx; j++)
		if (l->ctx[j].key && !strcmp(l->ctx[j].key, l->num[i].key))
			return true;
	for (j = 0; j < i; j++)
		if (l->num[j].key && !strcmp(l->num[j].key, l->num[i].key))
			return true;
	return false;
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
	for (i = 0; i < l->nnum && kept < PROFILE_MAX_CTX_ATTRS; i++) {
		const struct profile_num_attr *a = &l->num[i];

		if (!profile__ctx_key_ok(a->key) || num_key_taken(l, i))
			continue;
		err = attr_num_unit(p, a, &key->attrs[key->nattrs]);
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
	struct proc *pr;
	__u32 idx;

	return profile__add_sample_at(p, type, proc, tid, thread_name, l, stack, count, &pr, &idx);
}

int profile__add_sample_at(struct profile *p, __u32 type, const struct profile_process_desc *proc,
			   __u32 tid, const char *thread_name, const struct profile_labels *l,
			   __u32 stack, __u64 count, struct proc **pr_out, __u32 *idx_out)
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
	if (!err && l && l->has_cpu)
		err = attr_int(p, PROFILE_ATTR_CPU, l->cpu, &key.attrs[key.nattrs++]);
	if (!err && l)
		err = add_ctx_attrs(p, l, &key);
	if (!err && l && l->link)
		err = add_link(p, l->link, count, &key.link);
	/* Room for the key's sample: an existing one or the next. */
	if (!err)
		err = array__grow((void **)&pr->samples, &pr->cap, intern__count(pr->keys),
				  sizeof(*pr->samples), 64, (size_t)p->max_entries + 1);
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
	*pr_out = pr;
	*idx_out = idx;
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

__u32 profile__process_type(const struct profile *p, size_t i)
{
	return p->procs[i].type;
}

bool profile__value_type_used(const struct profile *p, __u32 type)
{
	size_t i;

	for (i = 0; i < p->nprocs; i++)
		if (p->procs[i].type == type)
			return true;
	return false;
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
