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
#include "util/wire.h"
#include "formats/pprof_read.h"
#include "util/hex.h"
#include "model/profile.h"

#define MAX_FRAMES 4096

#define TAG(msg, field) perftools_profiles_##msg##_##field##_tag

struct pmap {
	__u64 id;
	struct profile_mapping_desc d;
	bool kernel;
};

struct pfn {
	__u64 id;
	const char *name;
};

struct ploc {
	__u64 id, mapping, address;
	size_t first, n; /* function ids in rd.line_fns */
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
	__u64 *line_fns;
	size_t nline_fns, cap_line_fns;
	__s64 time, duration, period;
	__u64 st_type, st_unit, pt_type, pt_unit;
	bool have_st;
	struct profile_frame *frames;
	struct profile *p;
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
 * indexes). */
static int mapping(struct rd *r, struct wire c)
{
	static const __u32 tags[] = {TAG(Mapping, id),		 TAG(Mapping, memory_start),
				     TAG(Mapping, memory_limit), TAG(Mapping, file_offset),
				     TAG(Mapping, filename),	 TAG(Mapping, build_id)};
	struct pmap *m = &r->maps[r->nmaps++];
	__u64 v[6] = {0};

	if (varints(c, tags, v, 6) || !v[0] || !str_at(r, v[4]) || !str_at(r, v[5]))
		return fail(r, -EBADMSG,
			    "malformed mapping (id 0, or a string index out of range)");
	m->id = v[0];
	m->d.start = v[1];
	m->d.limit = v[2];
	m->d.file_offset = v[3];
	m->d.path = str_at(r, v[4]);
	m->d.build_id = v[5] ? str_at(r, v[5]) : NULL;
	m->kernel = !strncmp(m->d.path, "[kernel", 7);
	if (m->d.limit <= m->d.start) /* the model wants a range: keep the address space */
		m->d.start = 0, m->d.limit = UINT64_MAX;
	return 0;
}

/* Function: id, name and system_name (string indexes). */
static int function(struct rd *r, struct wire c)
{
	static const __u32 tags[] = {TAG(Function, id), TAG(Function, name),
				     TAG(Function, system_name)};
	struct pfn *fn = &r->fns[r->nfns++];
	__u64 v[3] = {0};

	if (varints(c, tags, v, 3) || !v[0] || !str_at(r, v[1]) || !str_at(r, v[2]))
		return fail(r, -EBADMSG,
			    "malformed function (id 0, or a string index out of range)");
	fn->id = v[0];
	fn->name = v[1] ? str_at(r, v[1]) : v[2] ? str_at(r, v[2]) : NULL;
	return 0;
}

static int add_line_fn(struct rd *r, __u64 id)
{
	if (array__grow((void **)&r->line_fns, &r->cap_line_fns, r->nline_fns, sizeof(*r->line_fns),
			256, SIZE_MAX / sizeof(*r->line_fns)))
		return -ENOMEM;
	r->line_fns[r->nline_fns++] = id;
	return 0;
}

static int location(struct rd *r, struct wire c)
{
	struct ploc *l = &r->locs[r->nlocs++];
	struct wire_field f, g;
	int ret, err;

	l->first = r->nline_fns;
	while ((ret = wire__next(&c, &f)) > 0) {
		if (f.wt == WIRE_VARINT && f.num == TAG(Location, id)) {
			l->id = f.v;
		} else if (f.wt == WIRE_VARINT && f.num == TAG(Location, mapping_id)) {
			l->mapping = f.v;
		} else if (f.wt == WIRE_VARINT && f.num == TAG(Location, address)) {
			l->address = f.v;
		} else if (f.wt == WIRE_LEN && f.num == TAG(Location, line)) {
			struct wire lc = f.sub;
			__u64 fn = 0;

			while ((ret = wire__next(&lc, &g)) > 0)
				if (g.wt == WIRE_VARINT && g.num == TAG(Line, function_id))
					fn = g.v;
			if (ret < 0)
				break;
			err = add_line_fn(r, fn);
			if (err)
				return err;
			l->n++;
		}
	}
	if (ret < 0 || !l->id)
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
		if (f.wt == WIRE_LEN && f.num == TAG(Profile, sample_type) && !r->have_st) {
			err = value_type(r, f.sub, &r->st_type, &r->st_unit);
			r->have_st = true;
		} else if (f.wt == WIRE_LEN && f.num == TAG(Profile, mapping)) {
			err = mapping(r, f.sub);
		} else if (f.wt == WIRE_LEN && f.num == TAG(Profile, location)) {
			err = location(r, f.sub);
		} else if (f.wt == WIRE_LEN && f.num == TAG(Profile, function)) {
			err = function(r, f.sub);
		} else if (f.wt == WIRE_VARINT && f.num == TAG(Profile, time_nanos)) {
			r->time = (__s64)f.v;
		} else if (f.wt == WIRE_VARINT && f.num == TAG(Profile, duration_nanos)) {
			r->duration = (__s64)f.v;
		} else if (f.wt == WIRE_LEN && f.num == TAG(Profile, period_type)) {
			err = value_type(r, f.sub, &r->pt_type, &r->pt_unit);
		} else if (f.wt == WIRE_VARINT && f.num == TAG(Profile, period)) {
			r->period = (__s64)f.v;
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
	bool nvalues_seen;
	__u64 value;
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

static int on_location(void *arg, __u64 id)
{
	struct smp *s = arg;
	struct rd *r = s->r;
	struct ploc key = {.id = id}, *l;
	const struct pmap *m = NULL;
	size_t i;

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
	for (i = 0; i < (l->n ? l->n : 1) && s->nframes < MAX_FRAMES; i++) {
		struct profile_frame *fr = &r->frames[s->nframes++];
		const struct pfn *fn = NULL;

		memset(fr, 0, sizeof(*fr));
		if (l->n && r->line_fns[l->first + i]) {
			struct pfn fk = {.id = r->line_fns[l->first + i]};

			fn = bsearch(&fk, r->fns, r->nfns, sizeof(*r->fns), cmp_fn);
			if (!fn)
				return fail(r, -EBADMSG,
					    "location %llu names function id %llu, "
					    "which does not exist",
					    (unsigned long long)id, (unsigned long long)fk.id);
		}
		fr->address = l->address;
		fr->mapping = m ? &m->d : NULL;
		fr->function = fn ? fn->name : NULL;
		fr->type = m && m->kernel ? PROFILE_FRAME_KERNEL : PROFILE_FRAME_NATIVE;
	}
	return 0;
}

static int on_value(void *arg, __u64 v)
{
	struct smp *s = arg;

	if (!s->nvalues_seen)
		s->value = v;
	s->nvalues_seen = true;
	return 0;
}

static int label(struct smp *s, struct wire c)
{
	struct rd *r = s->r;
	__u64 key = 0, str = 0, num = 0;
	const char *k, *v;
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
	}
	k = str_at(r, key);
	v = str_at(r, str);
	if (ret < 0 || !k || !v)
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
		add_ctx(s, k, v); /* a numeric label of another key has no place */
	return 0;
}

static int sample(struct rd *r, struct wire c)
{
	struct smp s = {.r = r, .desc = {.pid = -1}};
	struct wire_field f;
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
	if (!s.value)
		return 0;
	if (!s.tid && s.desc.pid > 0)
		s.tid = (__u32)s.desc.pid;
	{ /* A span only when both ids are well formed. */
		struct profile_labels lab = {.link = s.has_trace && s.has_span ? &s.link : NULL,
					     .state = s.state,
					     .switches = s.switches,
					     .ctx = s.ctx,
					     .nctx = s.nctx};

		err = profile__add_typed_sample(r->p, 0, &s.desc, s.tid, s.thread, &lab, r->frames,
						s.nframes, s.value);
	}
	if (err)
		return fail(r, err, "cannot add a sample to the profile (%s)", strerror(-err));
	return 0;
}

static int build(struct rd *r, struct wire top)
{
	struct profile_meta meta = {0};
	struct wire c = top;
	struct wire_field f;
	int ret, err = 0;

	r->p = profile__new();
	r->frames = calloc(MAX_FRAMES, sizeof(*r->frames));
	if (!r->p || !r->frames)
		return -ENOMEM;
	if (r->have_st && r->pt_type)
		err = profile__set_value_types(r->p, str_at(r, r->st_type), str_at(r, r->st_unit),
					       str_at(r, r->pt_type), str_at(r, r->pt_unit));
	else if (r->have_st)
		err = profile__set_value_types(r->p, str_at(r, r->st_type), str_at(r, r->st_unit),
					       NULL, NULL);
	while (!err && (ret = wire__next(&c, &f)) > 0)
		if (f.wt == WIRE_LEN && f.num == TAG(Profile, sample))
			err = sample(r, f.sub);
	if (err)
		return err;
	meta.time_unix_nano = r->time > 0 ? (__u64)r->time : 0;
	meta.duration_nano = r->duration > 0 ? (__u64)r->duration : 0;
	meta.period_ns = r->period > 0 ? (__u64)r->period : 0;
	err = profile__set_meta(r->p, &meta);
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
	free(r.line_fns);
	free(r.frames);
	buf__release(&plain);
	return ret;
}
