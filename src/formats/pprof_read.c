/* pprof_read.c - pprof reader (see pprof_read.h).
 *
 * Pass 1 walks the top level once and indexes the string table, mappings,
 * functions and locations (sorted by id for lookups); pass 2 walks it again
 * and adds each sample to the model. Every length, id and index is checked
 * against the input before use.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perftools/profiles/profile.pb.h"

#include "util/array.h"
#include "util/buf.h"
#include "util/gz.h"
#include "util/htab.h"
#include "util/wire.h"
#include "formats/pprof_read.h"
#include "util/hex.h"
#include "model/profile.h"

#define MAX_FRAMES 4096

#define TAG(msg, field) perftools_profiles_##msg##_##field##_tag
/* Line.column of upstream profile.proto (our copy stops at line). */
#define PP_LINE_COLUMN_TAG 3

struct pmap {
	__u64 id;
	struct profile_mapping_desc d;
	bool kernel;
};

struct pfn {
	__u64 id;
	const char *name, *system_name, *filename;
	__s64 start_line;
};

struct pline {
	__u64 fn; /* function id, 0 = none */
	__s64 line, column;
};

struct ploc {
	__u64 id, mapping, address;
	size_t first, n; /* its lines in rd.lines */
	__u32 model;	 /* model location index, 0 until a sample uses it */
};

struct rd {
	char *err;
	size_t errlen;
	const char **str; /* NUL-terminated copies in @strbuf */
	size_t nstr;
	char *strbuf;
	struct pmap *maps;
	size_t nmaps;
	struct pfn *fns;
	size_t nfns;
	struct ploc *locs;
	size_t nlocs;
	struct pline *lines;
	size_t nlines, cap_lines;
	struct profile_line *mlines; /* one location's lines for the model */
	__u32 *stack;		     /* one sample's model locations */
	__s64 time, duration, period;
	__u64 drop_frames, keep_frames, default_sample_type; /* string indices */
	__u64 *comments;				     /* string indices */
	size_t ncomments, cap_comments;
	__u64 st[PROFILE_MAX_TYPES][2]; /* sample types: type and unit string indices */
	size_t nst;			/* of them, the first PROFILE_MAX_TYPES */
	size_t nused;			/* values read: a derived cpu value is not */
	__u32 type_of[PROFILE_MAX_TYPES]; /* model value type of each */
	__u64 pt_type, pt_unit;
	struct profile *p;
	struct htab programs; /* struct program: a generation per program a PID ran */
	struct htab pids;     /* struct pid_gens: programs seen per PID */
};

/* One program of a PID: its labels (string table pointers) and the
 * generation the model gives it, so a process that exec()ed another
 * program stays two processes as in OTLP. */
struct program {
	__s64 pid;
	const char *exe_name, *exe_path, *cmdline;
	__u32 generation, pad;
};

struct pid_gens {
	__s64 pid;
	__u32 n, pad;
};

static int fail(struct rd *r, int err, const char *fmt, ...)
{
	va_list ap;

	if (r->err && r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

static const char *str_at(const struct rd *r, __u64 i)
{
	return i < r->nstr ? r->str[i] : NULL;
}

/* ---- pass 1 ------------------------------------------------------------- */

static int count_and_strings(struct rd *r, struct wire top, size_t *nmaps, size_t *nfns,
			     size_t *nlocs)
{
	struct wire c = top;
	struct wire_field f;
	size_t total = 0, i = 0;
	int ret;

	while ((ret = wire__next(&c, &f)) > 0) {
		if (f.wt != WIRE_LEN)
			continue;
		if (f.num == TAG(Profile, string_table)) {
			r->nstr++;
			total += wire__left(&f.sub) + 1;
		}
		*nmaps += f.num == TAG(Profile, mapping);
		*nfns += f.num == TAG(Profile, function);
		*nlocs += f.num == TAG(Profile, location);
	}
	if (ret < 0)
		return fail(r, -EBADMSG, "malformed protobuf at the top level (%s)", wire__why(&c));
	if (!r->nstr)
		return fail(r, -EBADMSG, "no string table (not a pprof profile?)");
	r->str = calloc(r->nstr, sizeof(*r->str));
	r->strbuf = malloc(total);
	if (!r->str || !r->strbuf)
		return -ENOMEM;
	c = top;
	total = 0;
	while (wire__next(&c, &f) > 0) {
		size_t n;

		if (f.wt != WIRE_LEN || f.num != TAG(Profile, string_table))
			continue;
		n = wire__left(&f.sub);
		memcpy(r->strbuf + total, wire__pos(&f.sub), n);
		r->strbuf[total + n] = '\0';
		r->str[i++] = r->strbuf + total;
		total += n + 1;
	}
	if (r->str[0][0])
		return fail(r, -EBADMSG, "string_table[0] is not empty");
	return 0;
}

static int value_type(struct rd *r, struct wire c, __u64 *type, __u64 *unit)
{
	struct wire_field f;
	int ret;

	*type = *unit = 0;
	while ((ret = wire__next(&c, &f)) > 0) {
		if (f.wt == WIRE_VARINT && f.num == TAG(ValueType, type))
			*type = f.v;
		else if (f.wt == WIRE_VARINT && f.num == TAG(ValueType, unit))
			*unit = f.v;
	}
	if (ret < 0 || !str_at(r, *type) || !str_at(r, *unit))
		return fail(r, -EBADMSG, "malformed value type");
	return 0;
}

/* The varint fields of message @c numbered @tags[i] into v[i] (others
 * skipped, a repeated field keeps its last value). 0, or -1 when
 * malformed. */
static int varints(struct wire c, const __u32 *tags, __u64 *v, size_t n)
{
	struct wire_field f;
	size_t i;
	int ret;

	while ((ret = wire__next(&c, &f)) > 0)
		for (i = 0; i < n && f.wt == WIRE_VARINT; i++)
			if (f.num == tags[i])
				v[i] = f.v;
	return ret < 0 ? -1 : 0;
}

/* Mapping: id, memory range, file offset, filename and build_id (string
 * indexes), the has_* flags. */
static int mapping(struct rd *r, struct wire c)
{
	static const __u32 tags[] = {
		TAG(Mapping, id),		 TAG(Mapping, memory_start),
		TAG(Mapping, memory_limit),	 TAG(Mapping, file_offset),
		TAG(Mapping, filename),		 TAG(Mapping, build_id),
		TAG(Mapping, has_functions),	 TAG(Mapping, has_filenames),
		TAG(Mapping, has_line_numbers), TAG(Mapping, has_inline_frames),
	};
	struct pmap *m = &r->maps[r->nmaps++];
	__u64 v[10] = {0};
	int i;

	if (varints(c, tags, v, 10) || !v[0] || !str_at(r, v[4]) || !str_at(r, v[5]))
		return fail(r, -EBADMSG,
			    "malformed mapping (id 0, or a string index out of range)");
	m->id = v[0];
	m->d.start = v[1];
	m->d.limit = v[2];
	m->d.file_offset = v[3];
	m->d.path = str_at(r, v[4]);
	m->d.build_id = v[5] ? str_at(r, v[5]) : NULL;
	for (i = 0; i < 4; i++) /* in PROFILE_MAPPING_HAS_* order */
		m->d.flags |= v[6 + i] ? 1u << i : 0;
	m->kernel = !strncmp(m->d.path, "[kernel", 7);
	if (m->d.limit <= m->d.start) /* the model wants a range: keep the address space */
		m->d.start = 0, m->d.limit = UINT64_MAX;
	return 0;
}

/* Function: id, name, system_name and filename (string indexes), start
 * line. */
static int function(struct rd *r, struct wire c)
{
	static const __u32 tags[] = {TAG(Function, id), TAG(Function, name),
				     TAG(Function, system_name), TAG(Function, filename),
				     TAG(Function, start_line)};
	struct pfn *fn = &r->fns[r->nfns++];
	__u64 v[5] = {0};

	if (varints(c, tags, v, 5) || !v[0] || !str_at(r, v[1]) || !str_at(r, v[2]) ||
	    !str_at(r, v[3]))
		return fail(r, -EBADMSG,
			    "malformed function (id 0, or a string index out of range)");
	fn->id = v[0];
	fn->name = str_at(r, v[1]);
	fn->system_name = str_at(r, v[2]);
	fn->filename = str_at(r, v[3]);
	fn->start_line = (__s64)v[4] > 0 ? (__s64)v[4] : 0;
	return 0;
}

/* Line @c of a location: function id, line and column. */
static int add_line(struct rd *r, struct wire c)
{
	static const __u32 tags[] = {TAG(Line, function_id), TAG(Line, line), PP_LINE_COLUMN_TAG};
	__u64 v[3] = {0};

	if (varints(c, tags, v, 3))
		return -EBADMSG;
	if (array__grow((void **)&r->lines, &r->cap_lines, r->nlines, sizeof(*r->lines), 256,
			SIZE_MAX / sizeof(*r->lines)))
		return -ENOMEM;
	r->lines[r->nlines].fn = v[0];
	r->lines[r->nlines].line = (__s64)v[1];
	r->lines[r->nlines++].column = (__s64)v[2];
	return 0;
}

static int location(struct rd *r, struct wire c)
{
	struct ploc *l = &r->locs[r->nlocs++];
	struct wire_field f;
	int ret, err;

	l->first = r->nlines;
	while ((ret = wire__next(&c, &f)) > 0) {
		if (f.wt == WIRE_VARINT && f.num == TAG(Location, id)) {
			l->id = f.v;
		} else if (f.wt == WIRE_VARINT && f.num == TAG(Location, mapping_id)) {
			l->mapping = f.v;
		} else if (f.wt == WIRE_VARINT && f.num == TAG(Location, address)) {
			l->address = f.v;
		} else if (f.wt == WIRE_LEN && f.num == TAG(Location, line)) {
			err = add_line(r, f.sub);
			if (err == -EBADMSG)
				break;
			if (err)
				return err;
			l->n++;
		}
	}
	if (ret != 0 || !l->id)
		return fail(r, -EBADMSG, "malformed location (id 0 or a bad line)");
	return 0;
}

static int cmp_map(const void *a, const void *b)
{
	__u64 x = ((const struct pmap *)a)->id, y = ((const struct pmap *)b)->id;

	return x < y ? -1 : x > y;
}

static int cmp_fn(const void *a, const void *b)
{
	__u64 x = ((const struct pfn *)a)->id, y = ((const struct pfn *)b)->id;

	return x < y ? -1 : x > y;
}

static int cmp_loc(const void *a, const void *b)
{
	__u64 x = ((const struct ploc *)a)->id, y = ((const struct ploc *)b)->id;

	return x < y ? -1 : x > y;
}

static int on_comment(void *arg, __u64 v)
{
	struct rd *r = arg;

	if (!str_at(r, v))
		return -EBADMSG;
	if (array__grow((void **)&r->comments, &r->cap_comments, r->ncomments,
			sizeof(*r->comments), 16, SIZE_MAX / sizeof(*r->comments)))
		return -ENOMEM;
	r->comments[r->ncomments++] = v;
	return 0;
}

/* The Profile's scalar fields and comments. */
static int profile_scalar(struct rd *r, const struct wire_field *f)
{
	__u64 *idx = NULL;
	int err;

	if (f->num == TAG(Profile, comment)) {
		err = wire__each_varint(f, on_comment, r);
		if (err == -EBADMSG || err == -EPROTOTYPE)
			return fail(r, -EBADMSG, "malformed comment (a string index out of range)");
		return err;
	}
	if (f->wt != WIRE_VARINT)
		return 0;
	if (f->num == TAG(Profile, time_nanos))
		r->time = (__s64)f->v;
	else if (f->num == TAG(Profile, duration_nanos))
		r->duration = (__s64)f->v;
	else if (f->num == TAG(Profile, period))
		r->period = (__s64)f->v;
	else if (f->num == TAG(Profile, drop_frames))
		idx = &r->drop_frames;
	else if (f->num == TAG(Profile, keep_frames))
		idx = &r->keep_frames;
	else if (f->num == TAG(Profile, default_sample_type))
		idx = &r->default_sample_type;
	if (!idx)
		return 0;
	*idx = f->v;
	return str_at(r, f->v) ? 0 : fail(r, -EBADMSG, "a string index out of range");
}

static int tables(struct rd *r, struct wire top)
{
	size_t nmaps = 0, nfns = 0, nlocs = 0, i;
	struct wire c = top;
	struct wire_field f;
	int ret, err;

	err = count_and_strings(r, top, &nmaps, &nfns, &nlocs);
	if (err)
		return err;
	r->maps = calloc(nmaps + 1, sizeof(*r->maps));
	r->fns = calloc(nfns + 1, sizeof(*r->fns));
	r->locs = calloc(nlocs + 1, sizeof(*r->locs));
	if (!r->maps || !r->fns || !r->locs)
		return -ENOMEM;
	while ((ret = wire__next(&c, &f)) > 0) {
		err = 0;
		if (f.wt == WIRE_LEN && f.num == TAG(Profile, sample_type)) {
			__u64 vt[2];

			err = value_type(r, f.sub, &vt[0], &vt[1]);
			if (!err && r->nst < PROFILE_MAX_TYPES)
				memcpy(r->st[r->nst++], vt, sizeof(vt));
		} else if (f.wt == WIRE_LEN && f.num == TAG(Profile, mapping)) {
			err = mapping(r, f.sub);
		} else if (f.wt == WIRE_LEN && f.num == TAG(Profile, location)) {
			err = location(r, f.sub);
		} else if (f.wt == WIRE_LEN && f.num == TAG(Profile, function)) {
			err = function(r, f.sub);
		} else if (f.wt == WIRE_LEN && f.num == TAG(Profile, period_type)) {
			err = value_type(r, f.sub, &r->pt_type, &r->pt_unit);
		} else {
			err = profile_scalar(r, &f);
		}
		if (err)
			return err;
	}
	qsort(r->maps, r->nmaps, sizeof(*r->maps), cmp_map);
	qsort(r->fns, r->nfns, sizeof(*r->fns), cmp_fn);
	qsort(r->locs, r->nlocs, sizeof(*r->locs), cmp_loc);
	for (i = 1; i < r->nmaps; i++)
		if (r->maps[i].id == r->maps[i - 1].id)
			return fail(r, -EBADMSG, "two mappings with id %llu",
				    (unsigned long long)r->maps[i].id);
	for (i = 1; i < r->nfns; i++)
		if (r->fns[i].id == r->fns[i - 1].id)
			return fail(r, -EBADMSG, "two functions with id %llu",
				    (unsigned long long)r->fns[i].id);
	for (i = 1; i < r->nlocs; i++)
		if (r->locs[i].id == r->locs[i - 1].id)
			return fail(r, -EBADMSG, "two locations with id %llu",
				    (unsigned long long)r->locs[i].id);
	return 0;
}

/* ---- pass 2: samples ------------------------------------------------------- */

struct smp {
	struct rd *r;
	size_t nframes;
	size_t nvalues;
	__u64 values[PROFILE_MAX_TYPES];
	struct profile_process_desc desc;
	__u32 tid;
	const char *thread;
	int bad;		  /* -EBADMSG: unknown id */
	struct profile_link link; /* trace_id/span_id labels, as pprof.c writes them */
	bool has_trace, has_span;
	/* Other string labels (thread-context attributes such as http.route,
	 * or another tool's labels): sample attributes under their keys. */
	struct profile_ctx_attr ctx[PROFILE_MAX_CTX_ATTRS];
	size_t nctx;
	const char *state; /* profcap.off_cpu.state */
	__u64 switches;	   /* profcap.off_cpu.switches */
	/* Other numeric labels, with their units. */
	struct profile_num_attr num[PROFILE_MAX_CTX_ATTRS];
	size_t nnum;
};

/* Keep string label (@k, @v) as a sample attribute: the first
 * PROFILE_MAX_CTX_ATTRS usable keys, each once (the first value wins). */
static void add_ctx(struct smp *s, const char *k, const char *v)
{
	size_t i;

	if (!*v || !profile__ctx_key_ok(k) || s->nctx == PROFILE_MAX_CTX_ATTRS)
		return;
	for (i = 0; i < s->nctx; i++)
		if (!strcmp(s->ctx[i].key, k))
			return;
	s->ctx[s->nctx].key = k;
	s->ctx[s->nctx++].value = v;
}

/* Keep numeric label (@k, @v, @unit) the same way. */
static void add_num(struct smp *s, const char *k, __s64 v, const char *unit)
{
	size_t i;

	if (!profile__ctx_key_ok(k) || s->nnum == PROFILE_MAX_CTX_ATTRS)
		return;
	for (i = 0; i < s->nnum; i++)
		if (!strcmp(s->num[i].key, k))
			return;
	s->num[s->nnum].key = k;
	s->num[s->nnum].unit = unit;
	s->num[s->nnum++].value = v;
}

static int lookup_fn(struct rd *r, const struct ploc *l, __u64 id, const struct pfn **out)
{
	struct pfn fk = {.id = id};

	*out = bsearch(&fk, r->fns, r->nfns, sizeof(*r->fns), cmp_fn);
	if (!*out)
		return fail(r, -EBADMSG, "location %llu names function id %llu, which does not exist",
			    (unsigned long long)l->id, (unsigned long long)id);
	return 0;
}

/* Add location @l to the model (once): its address, mapping and lines,
 * innermost first as pprof and the model both order them. */
static int model_location(struct rd *r, struct ploc *l, const struct pmap *m)
{
	struct profile_frame fr = {.address = l->address};
	size_t i, n = l->n < PROFILE_MAX_LINES ? l->n : PROFILE_MAX_LINES;
	int err;

	for (i = 0; i < n; i++) {
		const struct pline *pl = &r->lines[l->first + i];
		struct profile_line *ml = &r->mlines[i];
		const struct pfn *fn = NULL;

		memset(ml, 0, sizeof(*ml));
		err = pl->fn ? lookup_fn(r, l, pl->fn, &fn) : 0;
		if (err)
			return err;
		if (fn) {
			ml->function = *fn->name ? fn->name : fn->system_name;
			ml->system_name = fn->system_name;
			ml->filename = fn->filename;
			ml->start_line = fn->start_line;
		}
		ml->line = pl->line;
		ml->column = pl->column;
	}
	fr.mapping = m ? &m->d : NULL;
	fr.type = m && m->kernel ? PROFILE_FRAME_KERNEL : PROFILE_FRAME_NATIVE;
	fr.lines = r->mlines;
	fr.nlines = n;
	err = profile__add_location(r->p, &fr, &l->model);
	return err ? fail(r, err, "cannot add a location to the profile (%s)", strerror(-err)) : 0;
}

static int on_location(void *arg, __u64 id)
{
	struct smp *s = arg;
	struct rd *r = s->r;
	struct ploc key = {.id = id}, *l;
	const struct pmap *m = NULL;
	int err;

	l = bsearch(&key, r->locs, r->nlocs, sizeof(*r->locs), cmp_loc);
	if (!l)
		return fail(r, -EBADMSG, "a sample names location id %llu, which does not exist",
			    (unsigned long long)id);
	if (l->mapping) {
		struct pmap mk = {.id = l->mapping};

		m = bsearch(&mk, r->maps, r->nmaps, sizeof(*r->maps), cmp_map);
		if (!m)
			return fail(r, -EBADMSG,
				    "location %llu names mapping id %llu, which does "
				    "not exist",
				    (unsigned long long)id, (unsigned long long)l->mapping);
	}
	if (!l->model) {
		err = model_location(r, l, m);
		if (err)
			return err;
	}
	if (s->nframes < MAX_FRAMES)
		r->stack[s->nframes++] = l->model;
	return 0;
}

static int on_value(void *arg, __u64 v)
{
	struct smp *s = arg;

	if (s->nvalues < PROFILE_MAX_TYPES)
		s->values[s->nvalues] = v;
	s->nvalues++;
	return 0;
}

static int label(struct smp *s, struct wire c)
{
	struct rd *r = s->r;
	__u64 key = 0, str = 0, num = 0, unit = 0;
	const char *k, *v, *u;
	struct wire_field f;
	int ret;

	while ((ret = wire__next(&c, &f)) > 0) {
		if (f.wt != WIRE_VARINT)
			continue;
		if (f.num == TAG(Label, key))
			key = f.v;
		else if (f.num == TAG(Label, str))
			str = f.v;
		else if (f.num == TAG(Label, num))
			num = f.v;
		else if (f.num == TAG(Label, num_unit))
			unit = f.v;
	}
	k = str_at(r, key);
	v = str_at(r, str);
	u = str_at(r, unit);
	if (ret < 0 || !k || !v || !u)
		return fail(r, -EBADMSG, "malformed label (a string index out of range)");
	if (!strcmp(k, "pid"))
		s->desc.pid = (__s64)num;
	else if (!strcmp(k, "tid"))
		s->tid = (__u32)num;
	else if (!strcmp(k, "thread"))
		s->thread = v;
	else if (!strcmp(k, "process"))
		s->desc.exe_name = v;
	else if (!strcmp(k, "process.executable.path"))
		s->desc.exe_path = v;
	else if (!strcmp(k, "process.command_line"))
		s->desc.cmdline = v;
	else if (!strcmp(k, "container.id"))
		s->desc.container_id = *v ? v : NULL;
	else if (!strcmp(k, "trace_id"))
		s->has_trace = hex__decode(v, s->link.trace_id, sizeof(s->link.trace_id));
	else if (!strcmp(k, "span_id"))
		s->has_span = hex__decode(v, s->link.span_id, sizeof(s->link.span_id));
	else if (!strcmp(k, PROFILE_ATTR_OFF_CPU_STATE))
		s->state = v;
	else if (!strcmp(k, PROFILE_ATTR_OFF_CPU_SWITCHES))
		s->switches = num;
	else if (str)
		add_ctx(s, k, v);
	else
		add_num(s, k, (__s64)num, u);
	return 0;
}

static bool program_eq(const void *elem, const void *key, void *ctx)
{
	const struct program *a = elem, *b = key;

	(void)ctx;
	return a->pid == b->pid && a->exe_name == b->exe_name && a->exe_path == b->exe_path &&
	       a->cmdline == b->cmdline;
}

static bool pid_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct pid_gens *)elem)->pid == *(const __s64 *)key;
}

/* The generation of @d's program: 0 for a PID's first, then 1, 2, ... */
static int program_generation(struct rd *r, struct profile_process_desc *d)
{
	struct program key = {d->pid, d->exe_name, d->exe_path, d->cmdline, 0, 0}, *pr;
	__u64 h = htab__hash_u64((__u64)d->pid,
				 htab__hash_u64((__u64)(uintptr_t)d->exe_name,
						htab__hash_u64((__u64)(uintptr_t)d->exe_path,
							       (__u64)(uintptr_t)d->cmdline)));
	__u64 hp = htab__hash_u64((__u64)d->pid, 0);
	struct pid_gens *pg;
	int err;

	pr = htab__find(&r->programs, h, &key, program_eq, NULL);
	if (pr) {
		d->generation = pr->generation;
		return 0;
	}
	pg = htab__find(&r->pids, hp, &d->pid, pid_eq, NULL);
	if (!pg) {
		err = htab__add(&r->pids, hp, (void **)&pg);
		if (err)
			return err;
		pg->pid = d->pid;
	}
	key.generation = pg->n++;
	err = htab__add(&r->programs, h, (void **)&pr);
	if (err)
		return err;
	*pr = key;
	d->generation = key.generation;
	return 0;
}

static int sample(struct rd *r, struct wire c)
{
	struct smp s = {.r = r, .desc = {.pid = -1}};
	struct wire_field f;
	size_t i;
	int ret, err = 0;

	while (!err && (ret = wire__next(&c, &f)) > 0) {
		if (f.num == TAG(Sample, location_id))
			err = wire__each_varint(&f, on_location, &s);
		else if (f.num == TAG(Sample, value))
			err = wire__each_varint(&f, on_value, &s);
		else if (f.num == TAG(Sample, label) && f.wt == WIRE_LEN)
			err = label(&s, f.sub);
	}
	if (err == -EPROTOTYPE) /* a list of another wire type */
		err = -EBADMSG;
	if (err)
		return err == -EBADMSG && r->err && !r->err[0] ? fail(r, err, "malformed sample")
							       : err;
	if (ret < 0)
		return fail(r, -EBADMSG, "malformed sample");
	for (i = 0; i < r->nused && i < s.nvalues && !s.values[i]; i++)
		;
	if (i == r->nused || i == s.nvalues)
		return 0; /* no value of a type read */
	if (!s.tid && s.desc.pid > 0)
		s.tid = (__u32)s.desc.pid;
	err = program_generation(r, &s.desc);
	if (err)
		return fail(r, err, "cannot add a sample to the profile (%s)", strerror(-err));
	{ /* A span only when both ids are well formed. */
		struct profile_labels lab = {.link = s.has_trace && s.has_span ? &s.link : NULL,
					     .state = s.state,
					     .switches = s.switches,
					     .ctx = s.ctx,
					     .nctx = s.nctx,
					     .num = s.num,
					     .nnum = s.nnum};
		__u32 stack;

		err = profile__add_stack_locs(r->p, r->stack, s.nframes, &stack);
		for (i = 0; !err && i < r->nused && i < s.nvalues; i++)
			if (s.values[i])
				err = profile__add_typed_stack_sample(r->p, r->type_of[i], &s.desc,
								      s.tid, s.thread, &lab, stack,
								      s.values[i]);
	}
	if (err)
		return fail(r, err, "cannot add a sample to the profile (%s)", strerror(-err));
	return 0;
}

/* A loss count written by pprof.c as comment "KEY=N" into @m: true when
 * @c is one. */
static bool loss_comment(const char *c, struct profile_meta *m)
{
	static const char *const keys[] = {
		PROFILE_ATTR_SAMPLES_DROPPED,
		PROFILE_ATTR_SAMPLES_TRUNCATED,
		PROFILE_ATTR_SAMPLES_STACK_MISSING,
		PROFILE_ATTR_SAMPLES_TRUNCATED_DEPTH,
		PROFILE_ATTR_SAMPLES_THROTTLED,
	};
	__u64 *v[] = {&m->samples_dropped, &m->samples_truncated, &m->samples_stack_missing,
		      &m->samples_truncated_depth, &m->samples_throttled};
	unsigned long long n;
	size_t i, len;
	char *end;

	for (i = 0; i < 5; i++) {
		len = strlen(keys[i]);
		if (strncmp(c, keys[i], len) || c[len] != '=' || c[len + 1] < '0' ||
		    c[len + 1] > '9')
			continue;
		errno = 0;
		n = strtoull(c + len + 1, &end, 10);
		if (errno || *end)
			return false;
		*v[i] = n;
		return true;
	}
	return false;
}

/* The comments into @m: loss counts, and the others joined by '\n' in
 * @text (m->pprof_comment points into it). */
static int read_comments(struct rd *r, struct profile_meta *m, struct buf *text)
{
	size_t i;
	int err = 0;

	for (i = 0; i < r->ncomments && !err; i++) {
		const char *c = str_at(r, r->comments[i]);

		if (loss_comment(c, m))
			continue;
		if (text->len)
			err = buf__append(text, "\n", 1);
		err = err ?: buf__append(text, c, strlen(c));
	}
	err = err ?: buf__append(text, "", 1);
	if (err)
		return err == -E2BIG ? fail(r, err, "comments longer than 1 MiB") : err;
	m->pprof_comment = text->len > 1 ? (const char *)text->data : NULL;
	return 0;
}

static bool type_is(const struct rd *r, size_t i, const char *type, const char *unit)
{
	return !strcmp(str_at(r, r->st[i][0]), type) && !strcmp(str_at(r, r->st[i][1]), unit);
}

/* The sample types as model value types: the first replaces the model's
 * default, each other is added (with the profile's period), except the
 * ("cpu", "nanoseconds") = count x period beside ("samples", "count")
 * that pprof.c and Go's CPU profiles write. */
static int value_types(struct rd *r)
{
	const char *pt = r->pt_type ? str_at(r, r->pt_type) : NULL;
	const char *pu = r->pt_type ? str_at(r, r->pt_unit) : NULL;
	size_t i;
	int err;

	r->nused = r->nst ? r->nst : 1;
	if (!r->nst)
		return 0;
	if (r->nst == 2 && type_is(r, 0, "samples", "count") && type_is(r, 1, "cpu", "nanoseconds"))
		r->nused = 1;
	err = profile__set_value_types(r->p, str_at(r, r->st[0][0]), str_at(r, r->st[0][1]), pt,
				       pu);
	for (i = 1; !err && i < r->nused; i++)
		err = profile__add_value_type(r->p, str_at(r, r->st[i][0]), str_at(r, r->st[i][1]),
					      pt ? pt : "", pu ? pu : "",
					      r->period > 0 ? r->period : 0, &r->type_of[i]);
	return err;
}

static int build(struct rd *r, struct wire top)
{
	struct profile_meta meta = {0};
	struct buf comment;
	struct wire c = top;
	struct wire_field f;
	int ret, err = 0;

	buf__init(&comment, 1u << 20);
	r->p = profile__new();
	r->stack = calloc(MAX_FRAMES, sizeof(*r->stack));
	r->mlines = calloc(PROFILE_MAX_LINES, sizeof(*r->mlines));
	if (!r->p || !r->stack || !r->mlines)
		return -ENOMEM;
	err = value_types(r);
	while (!err && (ret = wire__next(&c, &f)) > 0)
		if (f.wt == WIRE_LEN && f.num == TAG(Profile, sample))
			err = sample(r, f.sub);
	if (err)
		return err;
	meta.time_unix_nano = r->time > 0 ? (__u64)r->time : 0;
	meta.duration_nano = r->duration > 0 ? (__u64)r->duration : 0;
	meta.period_ns = r->period > 0 ? (__u64)r->period : 0;
	meta.pprof_drop_frames = r->drop_frames ? str_at(r, r->drop_frames) : NULL;
	meta.pprof_keep_frames = r->keep_frames ? str_at(r, r->keep_frames) : NULL;
	meta.pprof_default_sample_type =
		r->default_sample_type ? str_at(r, r->default_sample_type) : NULL;
	err = read_comments(r, &meta, &comment);
	err = err ?: profile__set_meta(r->p, &meta);
	buf__release(&comment);
	return err ?: profile__prune(r->p);
}

bool pprof_read__looks_like(const void *data, size_t len)
{
	struct wire c = wire__from(data, len);
	bool high = false, strings = false;
	struct wire_field f;
	int ret;

	while ((ret = wire__next(&c, &f)) > 0) {
		if (f.num > TAG(Profile, default_sample_type))
			return false;
		high |= f.num >= TAG(Profile, mapping);
		strings |= f.num == TAG(Profile, string_table) && f.wt == WIRE_LEN;
	}
	return !ret && high && strings;
}

int pprof_read__parse(const void *data, size_t len, size_t max_bytes, struct profile **out,
		      char *err, size_t errlen)
{
	struct rd r = {.err = err, .errlen = errlen};
	struct buf plain;
	struct wire top;
	char why[192];
	int ret;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	buf__init(&plain, max_bytes);
	htab__init(&r.programs, sizeof(struct program), PROFILE_MAX_ENTRIES);
	htab__init(&r.pids, sizeof(struct pid_gens), PROFILE_MAX_ENTRIES);
	ret = gz__reader_input(&data, &len, max_bytes, &plain, why, sizeof(why));
	if (ret) {
		ret = fail(&r, ret, "%s", why);
		goto out;
	}
	top = wire__from(data, len);
	ret = tables(&r, top);
	ret = ret ?: build(&r, top);
	if (ret == -ENOMEM && err && errlen && !err[0])
		fail(&r, ret, "out of memory");
	if (!ret) {
		*out = r.p;
		r.p = NULL;
	}
out:
	profile__free(r.p);
	free(r.str);
	free(r.strbuf);
	free(r.maps);
	free(r.fns);
	free(r.locs);
	free(r.lines);
	free(r.mlines);
	free(r.stack);
	free(r.comments);
	htab__release(&r.programs);
	htab__release(&r.pids);
	buf__release(&plain);
	return ret;
}
