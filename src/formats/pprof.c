/* pprof.c - pprof encoder (see pprof.h).
 *
 * A first pass interns every string pprof needs (the model's strings keep
 * their indices, then label keys and values, build ids, extra sample types)
 * and works out per-table facts; the Profile is then streamed by nanopb
 * callbacks that only read this context, so nanopb's two passes over each
 * submessage produce the same bytes. The encoded Profile is gzip'd last.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pb_encode.h>

#include "perftools/profiles/profile.pb.h"

#include "util/gz.h"
#include "util/intern.h"
#include "formats/pbbuf.h"
#include "formats/pprof.h"
#include "model/profile.h"

#define PP(x) perftools_profiles_##x
/* Line.column of upstream profile.proto (our copy stops at line). */
#define PP_LINE_COLUMN_TAG 3

/* How a model attribute becomes a pprof label. */
struct label_map {
	__u32 key;  /* pprof string index; 0 = attribute not emitted */
	__u32 str;  /* pprof string index of a string value */
	__u32 unit; /* pprof string index of a numeric value's unit, 0 = none */
	__s64 num; /* numeric value when !is_str */
	bool is_str;
};

struct pp {
	const struct profile *p;
	struct intern *strings; /* pprof string table */
	__u32 *build_id;	/* per mapping: string index, 0 = none */
	struct label_map *attr; /* per model attribute */
	__u32 *process;		/* per process: string index of the exe name */
	__u32 *pextra;		/* per process: PP_EXTRA string indices (0 = none) */
	__u32 k_pid, k_process; /* label keys */
	__u32 k_extra[3];	/* keys of PP_EXTRA labels */
	__u32 k_trace, k_span;	/* trace_id/span_id label keys */
	__u32 *link;		/* per model link: trace, span hex string indices */
	__u32 cpu, nanoseconds; /* second sample type, when cpu_value */
	__u32 *comments;	/* comment string indices */
	size_t ncomments;
	__u32 drop_frames, keep_frames, default_sample_type; /* string indices */
	bool cpu_value;		/* add count x period as a second value */
	__u64 period;
};

/* Process facts carried as string labels so that pprof_read.c gets them
 * back: path, command line, container. */
#define PP_EXTRA 3
static const char *const extra_keys[PP_EXTRA] = {"process.executable.path",
						 "process.command_line", "container.id"};

static const char *extra_value(const struct profile_process_desc *d, int i)
{
	const char *v = i == 0 ? d->exe_path : i == 1 ? d->cmdline : d->container_id;

	return v && *v ? v : NULL;
}

/* The current sample while its callbacks run. */
struct sample_arg {
	const struct pp *pp;
	size_t proc;
	const struct profile_sample_entry *s;
};

static int intern_str(struct intern *t, const char *s, __u32 *idx)
{
	if (!s)
		s = "";
	return intern__put(t, s, strlen(s) + 1, idx, NULL);
}

static bool str_is(const struct profile *p, __u32 idx, const char *want)
{
	return !strcmp(profile__string(p, idx, NULL), want);
}

static void pp_free(struct pp *pp)
{
	intern__free(pp->strings);
	free(pp->build_id);
	free(pp->comments);
	free(pp->attr);
	free(pp->process);
	free(pp->pextra);
	free(pp->link);
}

/* Lower-case hex of @n bytes (n <= 16) as a pprof string. */
static int intern_hex(struct intern *t, const __u8 *v, size_t n, __u32 *idx)
{
	static const char digits[] = "0123456789abcdef";
	char h[33];
	size_t i;

	for (i = 0; i < n; i++) {
		h[2 * i] = digits[v[i] >> 4];
		h[2 * i + 1] = digits[v[i] & 15];
	}
	h[2 * n] = '\0';
	return intern_str(t, h, idx);
}

/* Label of model attribute @a, interning what it needs. */
static int map_attr(struct pp *pp, const struct profile_attr_entry *a, struct label_map *out)
{
	const char *key = profile__string(pp->p, a->key, NULL);
	int err;

	memset(out, 0, sizeof(*out));
	if (!strcmp(key, "thread.id"))
		key = "tid";
	else if (!strcmp(key, "thread.name"))
		key = "thread";
	if (a->kind == PROFILE_ATTR_STR) {
		out->is_str = true;
		err = intern_str(pp->strings, a->str_value, &out->str);
	} else if (a->kind == PROFILE_ATTR_INT) {
		out->num = a->int_value;
		err = a->unit ? intern_str(pp->strings, profile__string(pp->p, a->unit, NULL),
					   &out->unit)
			      : 0;
	} else {
		return 0;
	}
	if (!err)
		err = intern_str(pp->strings, key, &out->key);
	return err;
}

/* Comments: the meta's pprof comment lines, then the loss counts as
 * "KEY=N" lines (pprof has no other place for them; pprof_read.c reads
 * them back). */
static int pp_comments(struct pp *pp, const struct profile_meta *m)
{
	static const char *const keys[] = {
		PROFILE_ATTR_SAMPLES_DROPPED,
		PROFILE_ATTR_SAMPLES_TRUNCATED,
		PROFILE_ATTR_SAMPLES_STACK_MISSING,
		PROFILE_ATTR_SAMPLES_TRUNCATED_DEPTH,
		PROFILE_ATTR_SAMPLES_THROTTLED,
	};
	const __u64 v[] = {m->samples_dropped, m->samples_truncated, m->samples_stack_missing,
			   m->samples_truncated_depth, m->samples_throttled};
	const char *c = m->pprof_comment;
	size_t i, n = 5 + 1;
	char line[96];
	int err = 0;

	for (i = 0; c && c[i]; i++)
		n += c[i] == '\n';
	pp->comments = calloc(n, sizeof(*pp->comments));
	if (!pp->comments)
		return -ENOMEM;
	while (c && *c && !err) {
		const char *nl = strchr(c, '\n');
		size_t len = nl ? (size_t)(nl - c) : strlen(c);
		char *one = strndup(c, len);

		err = one ? intern_str(pp->strings, one, &pp->comments[pp->ncomments++]) : -ENOMEM;
		free(one);
		c = nl ? nl + 1 : NULL;
	}
	for (i = 0; i < 5 && !err; i++) {
		if (!v[i])
			continue;
		snprintf(line, sizeof(line), "%s=%llu", keys[i], (unsigned long long)v[i]);
		err = intern_str(pp->strings, line, &pp->comments[pp->ncomments++]);
	}
	return err;
}

/* The Profile's own strings: comments, drop/keep frames, default type. */
static int pp_profile_strings(struct pp *pp)
{
	const struct profile_meta *m = profile__meta(pp->p);
	int err = pp_comments(pp, m);

	if (!err && m->pprof_drop_frames)
		err = intern_str(pp->strings, m->pprof_drop_frames, &pp->drop_frames);
	if (!err && m->pprof_keep_frames)
		err = intern_str(pp->strings, m->pprof_keep_frames, &pp->keep_frames);
	if (!err && m->pprof_default_sample_type)
		err = intern_str(pp->strings, m->pprof_default_sample_type,
				 &pp->default_sample_type);
	return err;
}

static int pp_init(struct pp *pp, const struct profile *p)
{
	size_t i, nstr = profile__string_count(p), nmap = profile__mapping_count(p);
	size_t nattr = profile__attr_count(p), nproc = profile__process_count(p);
	__u32 st, su, pt, pu, idx;
	int err = 0;

	memset(pp, 0, sizeof(*pp));
	pp->p = p;
	pp->strings = intern__new(PROFILE_MAX_ENTRIES + 64 + (__u32)nattr + (__u32)nmap);
	pp->build_id = calloc(nmap, sizeof(*pp->build_id));
	pp->attr = calloc(nattr, sizeof(*pp->attr));
	pp->process = calloc(nproc ? nproc : 1, sizeof(*pp->process));
	pp->pextra = calloc((nproc ? nproc : 1) * PP_EXTRA, sizeof(*pp->pextra));
	pp->link = calloc(2 * profile__link_count(p), sizeof(*pp->link));
	if (!pp->strings || !pp->build_id || !pp->attr || !pp->process || !pp->pextra || !pp->link)
		return -ENOMEM;
	/* The model's strings first: they keep their indices. */
	for (i = 0; i < nstr && !err; i++) {
		err = intern_str(pp->strings, profile__string(p, (__u32)i, NULL), &idx);
		if (!err && idx != i)
			err = -EINVAL; /* the model's strings are unique */
	}
	for (i = 1; i < nmap && !err; i++) {
		const struct profile_mapping_entry *m = profile__mapping(p, (__u32)i);

		if (m->attr)
			err = intern_str(pp->strings, profile__attr(p, m->attr)->str_value,
					 &pp->build_id[i]);
	}
	for (i = 1; i < nattr && !err; i++)
		err = map_attr(pp, profile__attr(p, (__u32)i), &pp->attr[i]);
	for (i = 0; i < nproc && !err; i++) {
		const struct profile_process_desc *d = profile__process(p, i);
		int k;

		err = intern_str(pp->strings, d->exe_name, &pp->process[i]);
		for (k = 0; k < PP_EXTRA && !err; k++)
			if (extra_value(d, k))
				err = intern_str(pp->strings, extra_value(d, k),
						 &pp->pextra[i * PP_EXTRA + k]);
	}
	for (i = 0; i < PP_EXTRA && !err; i++)
		err = intern_str(pp->strings, extra_keys[i], &pp->k_extra[i]);
	for (i = 1; i < profile__link_count(p) && !err; i++) {
		const struct profile_link *l = profile__link(p, (__u32)i);

		err = intern_hex(pp->strings, l->trace_id, sizeof(l->trace_id), &pp->link[2 * i]);
		if (!err)
			err = intern_hex(pp->strings, l->span_id, sizeof(l->span_id),
					 &pp->link[2 * i + 1]);
	}
	if (!err && profile__link_count(p) > 1)
		err = intern_str(pp->strings, "trace_id", &pp->k_trace);
	if (!err && profile__link_count(p) > 1)
		err = intern_str(pp->strings, "span_id", &pp->k_span);
	if (!err)
		err = intern_str(pp->strings, "pid", &pp->k_pid);
	if (!err)
		err = intern_str(pp->strings, "process", &pp->k_process);
	profile__value_types(p, &st, &su, &pt, &pu);
	pp->period = profile__meta(p)->period_ns;
	pp->cpu_value = str_is(p, st, "samples") && str_is(p, su, "count") &&
			str_is(p, pt, "cpu") && str_is(p, pu, "nanoseconds") && pp->period;
	if (!err && pp->cpu_value)
		err = intern_str(pp->strings, "cpu", &pp->cpu);
	if (!err && pp->cpu_value)
		err = intern_str(pp->strings, "nanoseconds", &pp->nanoseconds);
	return err ?: pp_profile_strings(pp);
}

/* ---- callbacks ----------------------------------------------------------- */

static bool enc_value_type(pb_ostream_t *s, const pb_field_t *f, __u32 type, __u32 unit)
{
	PP(ValueType) vt = {.type = type, .unit = unit};

	return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, PP(ValueType_fields), &vt);
}

static bool enc_sample_types(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct pp *pp = *arg;
	__u32 st, su, pt, pu;

	profile__value_types(pp->p, &st, &su, &pt, &pu);
	if (!enc_value_type(s, f, st, su))
		return false;
	return !pp->cpu_value || enc_value_type(s, f, pp->cpu, pp->nanoseconds);
}

static bool enc_location_ids(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct sample_arg *sa = *arg;
	size_t i, n, size = 0;
	const __u32 *locs = profile__stack(sa->pp->p, sa->s->stack, &n);

	if (!n)
		return true;
	for (i = 0; i < n; i++)
		size += pbbuf__varint_len(locs[i]);
	if (!pb_encode_tag(s, PB_WT_STRING, f->tag) || !pb_encode_varint(s, size))
		return false;
	for (i = 0; i < n; i++)
		if (!pb_encode_varint(s, locs[i]))
			return false;
	return true;
}

static bool enc_values(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct sample_arg *sa = *arg;
	__u64 v[2] = {sa->s->value, sa->s->value * sa->pp->period};
	size_t i, n = sa->pp->cpu_value ? 2 : 1, size = 0;

	for (i = 0; i < n; i++)
		size += pbbuf__varint_len(v[i]);
	if (!pb_encode_tag(s, PB_WT_STRING, f->tag) || !pb_encode_varint(s, size))
		return false;
	for (i = 0; i < n; i++)
		if (!pb_encode_varint(s, v[i]))
			return false;
	return true;
}

static bool enc_label(pb_ostream_t *s, const pb_field_t *f, const PP(Label) * l)
{
	return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, PP(Label_fields), l);
}

static bool enc_labels(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct sample_arg *sa = *arg;
	const struct pp *pp = sa->pp;
	const struct profile_process_desc *d = profile__process(pp->p, sa->proc);
	PP(Label) l;
	size_t i;

	if (d->pid >= 0) {
		l = (PP(Label)){.key = pp->k_pid, .num = d->pid};
		if (!enc_label(s, f, &l))
			return false;
	}
	if (pp->process[sa->proc]) {
		l = (PP(Label)){.key = pp->k_process, .str = pp->process[sa->proc]};
		if (!enc_label(s, f, &l))
			return false;
	}
	for (i = 0; i < PP_EXTRA; i++) {
		__u32 v = pp->pextra[sa->proc * PP_EXTRA + i];

		l = (PP(Label)){.key = pp->k_extra[i], .str = v};
		if (v && !enc_label(s, f, &l))
			return false;
	}
	for (i = 0; i < sa->s->nattrs; i++) {
		const struct label_map *m = &pp->attr[sa->s->attrs[i]];

		if (!m->key)
			continue;
		l = (PP(Label)){.key = m->key};
		if (m->is_str) {
			l.str = m->str;
		} else {
			l.num = m->num;
			l.num_unit = m->unit;
		}
		if (!enc_label(s, f, &l))
			return false;
	}
	if (sa->s->link) { /* the span the samples were taken in, in hex */
		l = (PP(Label)){.key = pp->k_trace, .str = pp->link[2 * sa->s->link]};
		if (!enc_label(s, f, &l))
			return false;
		l = (PP(Label)){.key = pp->k_span, .str = pp->link[2 * sa->s->link + 1]};
		if (!enc_label(s, f, &l))
			return false;
	}
	return true;
}

static bool enc_samples(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct pp *pp = *arg;
	size_t proc, i;

	for (proc = 0; proc < profile__process_count(pp->p); proc++) {
		for (i = 0; i < profile__sample_count(pp->p, proc); i++) {
			struct sample_arg sa = {pp, proc, profile__sample(pp->p, proc, i)};
			PP(Sample) sm = PP(Sample_init_zero);

			sm.location_id.funcs.encode = enc_location_ids;
			sm.location_id.arg = &sa;
			sm.value.funcs.encode = enc_values;
			sm.value.arg = &sa;
			sm.label.funcs.encode = enc_labels;
			sm.label.arg = &sa;
			if (!pb_encode_tag_for_field(s, f) ||
			    !pb_encode_submessage(s, PP(Sample_fields), &sm))
				return false;
		}
	}
	return true;
}

static bool enc_mappings(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct pp *pp = *arg;
	size_t i, n = profile__mapping_count(pp->p);

	for (i = 1; i < n; i++) {
		const struct profile_mapping_entry *e = profile__mapping(pp->p, (__u32)i);
		PP(Mapping) m = PP(Mapping_init_zero);

		m.id = i;
		m.memory_start = e->start;
		m.memory_limit = e->limit;
		m.file_offset = e->file_offset;
		m.filename = e->filename;
		m.build_id = pp->build_id[i];
		m.has_functions = e->flags & PROFILE_MAPPING_HAS_FUNCTIONS;
		m.has_filenames = e->flags & PROFILE_MAPPING_HAS_FILENAMES;
		m.has_line_numbers = e->flags & PROFILE_MAPPING_HAS_LINE_NUMBERS;
		m.has_inline_frames = e->flags & PROFILE_MAPPING_HAS_INLINE_FRAMES;
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_submessage(s, PP(Mapping_fields), &m))
			return false;
	}
	return true;
}

struct line_list {
	const struct profile_line_entry *v;
	size_t n;
};

static bool enc_lines(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct line_list *ll = *arg;
	size_t i;

	for (i = 0; i < ll->n; i++) {
		const struct profile_line_entry *e = &ll->v[i];
		size_t size = 1 + pbbuf__varint_len(e->function);

		size += e->line ? 1 + pbbuf__varint_len((__u64)e->line) : 0;
		size += e->column ? 1 + pbbuf__varint_len((__u64)e->column) : 0;
		if (!pb_encode_tag_for_field(s, f) || !pb_encode_varint(s, size) ||
		    !pb_encode_tag(s, PB_WT_VARINT, PP(Line_function_id_tag)) ||
		    !pb_encode_varint(s, e->function))
			return false;
		if (e->line && (!pb_encode_tag(s, PB_WT_VARINT, PP(Line_line_tag)) ||
				!pb_encode_varint(s, (__u64)e->line)))
			return false;
		if (e->column && (!pb_encode_tag(s, PB_WT_VARINT, PP_LINE_COLUMN_TAG) ||
				  !pb_encode_varint(s, (__u64)e->column)))
			return false;
	}
	return true;
}

static bool enc_locations(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct pp *pp = *arg;
	size_t i, n = profile__location_count(pp->p);

	for (i = 1; i < n; i++) {
		const struct profile_location_entry *e = profile__location(pp->p, (__u32)i);
		PP(Location) l = PP(Location_init_zero);
		struct line_list ll;

		l.id = i;
		l.mapping_id = e->mapping;
		l.address = e->address;
		ll.v = profile__lines(pp->p, e->lines, &ll.n);
		if (ll.n) {
			l.line.funcs.encode = enc_lines;
			l.line.arg = &ll;
		}
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_submessage(s, PP(Location_fields), &l))
			return false;
	}
	return true;
}

static bool enc_functions(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct pp *pp = *arg;
	size_t i, n = profile__function_count(pp->p);

	for (i = 1; i < n; i++) {
		const struct profile_function_entry *e = profile__function(pp->p, (__u32)i);
		PP(Function) fn = PP(Function_init_zero);

		fn.id = i;
		fn.name = e->name;
		fn.system_name = e->system_name;
		fn.filename = e->filename;
		fn.start_line = e->start_line;
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_submessage(s, PP(Function_fields), &fn))
			return false;
	}
	return true;
}

static bool enc_strings(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct pp *pp = *arg;
	size_t i, len, n = intern__count(pp->strings);

	for (i = 0; i < n; i++) {
		const char *str = intern__get(pp->strings, (__u32)i, &len);

		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_string(s, (const pb_byte_t *)str, len - 1))
			return false;
	}
	return true;
}

static bool enc_comments(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct pp *pp = *arg;
	size_t i, size = 0;

	if (!pp->ncomments)
		return true;
	for (i = 0; i < pp->ncomments; i++)
		size += pbbuf__varint_len(pp->comments[i]);
	if (!pb_encode_tag(s, PB_WT_STRING, f->tag) || !pb_encode_varint(s, size))
		return false;
	for (i = 0; i < pp->ncomments; i++)
		if (!pb_encode_varint(s, pp->comments[i]))
			return false;
	return true;
}

/* ---- entry point ------------------------------------------------------------- */

int pprof__encode(const struct profile *p, struct buf *out)
{
	const struct profile_meta *meta = profile__meta(p);
	PP(Profile) pr = PP(Profile_init_zero);
	struct buf raw;
	struct pbbuf k = {&raw, 0};
	pb_ostream_t s = pbbuf__stream(&k);
	__u32 st, su, pt, pu;
	struct pp pp;
	int err;

	buf__init(&raw, out->max);
	err = pp_init(&pp, p);
	if (err)
		goto out;
	profile__value_types(p, &st, &su, &pt, &pu);
	pr.sample_type.funcs.encode = enc_sample_types;
	pr.sample_type.arg = &pp;
	pr.sample.funcs.encode = enc_samples;
	pr.sample.arg = &pp;
	pr.mapping.funcs.encode = enc_mappings;
	pr.mapping.arg = &pp;
	pr.location.funcs.encode = enc_locations;
	pr.location.arg = &pp;
	pr.function.funcs.encode = enc_functions;
	pr.function.arg = &pp;
	pr.string_table.funcs.encode = enc_strings;
	pr.string_table.arg = &pp;
	pr.time_nanos = (int64_t)meta->time_unix_nano;
	pr.duration_nanos = (int64_t)meta->duration_nano;
	pr.has_period_type = true;
	pr.period_type.type = pt;
	pr.period_type.unit = pu;
	pr.period = (int64_t)meta->period_ns;
	pr.comment.funcs.encode = enc_comments;
	pr.comment.arg = &pp;
	pr.drop_frames = pp.drop_frames;
	pr.keep_frames = pp.keep_frames;
	pr.default_sample_type = pp.default_sample_type;
	if (!pb_encode(&s, PP(Profile_fields), &pr)) {
		err = k.err ? k.err : -EIO;
		goto out;
	}
	err = gz__compress(raw.data, raw.len, out);
out:
	pp_free(&pp);
	buf__release(&raw);
	return err;
}

/* ---- what pprof cannot hold ------------------------------------------------- */

struct unheld {
	struct buf *out;
	size_t n;
};

static void unheld_add(struct unheld *u, const char *what, size_t count, const char *of)
{
	char item[160];
	int len;

	if (!count)
		return;
	if (of)
		len = snprintf(item, sizeof(item), "%s%s (%zu %s)", u->n ? ", " : "", what, count,
			       of);
	else
		len = snprintf(item, sizeof(item), "%s%s", u->n ? ", " : "", what);
	if (len > 0 && !buf__append(u->out, item, strlen(item)))
		u->n++;
}

/* Resource attributes processes published (service.name, ...), by key:
 * each key once with the number of processes that have it. */
static void unheld_resource_keys(const struct profile *p, struct unheld *u)
{
	size_t i, j, k, nproc = profile__process_count(p), named = 0;

	for (i = 0; i < nproc; i++) {
		const struct profile_process_desc *d = profile__process(p, i);

		for (j = 0; j < d->nattrs; j++) {
			const char *key = d->attrs[j].key;
			size_t count = 0;
			bool seen = false;

			for (k = 0; k < i && !seen; k++) {
				const struct profile_process_desc *e = profile__process(p, k);

				for (size_t m = 0; m < e->nattrs && !seen; m++)
					seen = !strcmp(e->attrs[m].key, key);
			}
			if (seen)
				continue;
			for (k = i; k < nproc; k++) {
				const struct profile_process_desc *e = profile__process(p, k);

				for (size_t m = 0; m < e->nattrs; m++)
					count += !strcmp(e->attrs[m].key, key);
			}
			if (named++ < 8)
				unheld_add(u, key, count, "resources");
		}
	}
}

/* Mapping ids other than the GNU build id, frame types other than kernel
 * and native, units of string attributes: counted over the tables. */
static void unheld_tables(const struct profile *p, struct unheld *u)
{
	size_t i, j, htl = 0, go = 0, jit = 0, units = 0;

	for (i = 1; i < profile__mapping_count(p); i++) {
		const struct profile_mapping_entry *m = profile__mapping(p, (__u32)i);

		for (j = 0; j < m->nattrs && j < PROFILE_MAPPING_MAX_ATTRS; j++) {
			const char *k = profile__string(p, profile__attr(p, m->attrs[j])->key, NULL);

			htl += !strcmp(k, "process.executable.build_id.htlhash");
			go += !strcmp(k, "process.executable.build_id.go");
		}
	}
	for (i = 1; i < profile__location_count(p); i++) {
		const struct profile_location_entry *l = profile__location(p, (__u32)i);
		const char *t = l->attr ? profile__attr(p, l->attr)->str_value : NULL;

		jit += t && strcmp(t, "native") && strcmp(t, "kernel");
	}
	for (i = 1; i < profile__attr_count(p); i++) {
		const struct profile_attr_entry *a = profile__attr(p, (__u32)i);

		units += a->kind != PROFILE_ATTR_INT && a->unit;
	}
	unheld_add(u, "process.executable.build_id.htlhash", htl, "mappings");
	unheld_add(u, "process.executable.build_id.go", go, "mappings");
	unheld_add(u, "profile.frame.type other than native and kernel", jit, "locations");
	unheld_add(u, "units of non-numeric attributes", units, "attributes");
}

size_t pprof__unheld(const struct profile *p, __u32 type, struct buf *out)
{
	const struct profile_meta *m = profile__meta(p);
	struct unheld u = {out, 0};
	size_t i, j, nproc = profile__process_count(p), nprofiles = 0;

	unheld_add(&u, "host.name", m->host_name && *m->host_name, NULL);
	unheld_add(&u, "host.arch", m->host_arch && *m->host_arch, NULL);
	unheld_add(&u, "os.type", m->os_type && *m->os_type, NULL);
	for (i = 0; i < m->nresource; i++)
		unheld_add(&u, m->resource[i].key, 1, NULL);
	unheld_resource_keys(p, &u);
	unheld_add(&u, "scope name and version", m->scope_name && *m->scope_name, NULL);
	for (i = 0; i < nproc; i++)
		nprofiles += profile__process_type(p, i) == type;
	unheld_add(&u, "profile_id", nprofiles ? nprofiles : 1, "profiles");
	unheld_add(&u, "original_payload", m->original_payload_len, "bytes");
	for (j = 0; j < profile__value_type_count(p); j++) {
		__u32 st, su, pt, pu;
		char what[96];
		size_t n = 0;

		if (j == type)
			continue;
		for (i = 0; i < nproc; i++)
			n += profile__process_type(p, i) == j;
		profile__value_type(p, (__u32)j, &st, &su, &pt, &pu);
		snprintf(what, sizeof(what), "%s/%s profiles (pick with --type)",
			 profile__string(p, st, NULL), profile__string(p, su, NULL));
		unheld_add(&u, what, n, "processes");
	}
	unheld_tables(p, &u);
	/* pprof has no per-sample time: occurrences merge into one value */
	unheld_add(&u, "sample timestamps", (size_t)profile__time_count(p), "occurrences");
	return u.n;
}
