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

#include "util/array.h"
#include "util/buf.h"
#include "util/gz.h"
#include "formats/pprof_read.h"
#include "util/hex.h"
#include "model/profile.h"

#define MAX_FRAMES 4096

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

struct cur {
	const unsigned char *p, *end;
};

struct field {
	__u32 num, wt;
	__u64 v;	/* varint / fixed value */
	struct cur sub; /* WT_LEN contents */
};

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

static int varint(struct cur *c, __u64 *v)
{
	__u64 x = 0;
	unsigned shift;

	for (shift = 0; shift < 64 && c->p < c->end; shift += 7) {
		unsigned char b = *c->p++;

		x |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EBADMSG;
}

/* Next field of @c into @f: 1, 0 at the end, -EBADMSG when malformed. */
static int next(struct cur *c, struct field *f)
{
	__u64 tag, n;

	if (c->p >= c->end)
		return 0;
	if (varint(c, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
		return -EBADMSG;
	f->num = (__u32)(tag >> 3);
	f->wt = (__u32)(tag & 7);
	switch (f->wt) {
	case WT_VARINT:
		return varint(c, &f->v) ? -EBADMSG : 1;
	case WT_I64:
	case WT_I32:
		n = f->wt == WT_I64 ? 8 : 4;
		if ((size_t)(c->end - c->p) < n)
			return -EBADMSG;
		f->v = 0;
		memcpy(&f->v, c->p, n); /* little endian hosts only, as the rest */
		c->p += n;
		return 1;
	case WT_LEN:
		if (varint(c, &n) || n > (size_t)(c->end - c->p))
			return -EBADMSG;
		f->sub.p = c->p;
		f->sub.end = c->p + n;
		c->p += n;
		return 1;
	default:
		return -EBADMSG; /* groups are not used by profile.proto */
	}
}

/* Walk a (possibly packed) repeated varint field: call @fn per value. */
static int each_varint(const struct field *f, int (*fn)(void *, __u64), void *arg)
{
	struct cur c = f->sub;
	__u64 v;
	int err;

	if (f->wt == WT_VARINT)
		return fn(arg, f->v);
	if (f->wt != WT_LEN)
		return -EBADMSG;
	while (c.p < c.end) {
		if (varint(&c, &v))
			return -EBADMSG;
		err = fn(arg, v);
		if (err)
			return err;
	}
	return 0;
}

static const char *str_at(const struct rd *r, __u64 i)
{
	return i < r->nstr ? r->str[i] : NULL;
}

/* ---- pass 1 ------------------------------------------------------------- */

static int count_and_strings(struct rd *r, struct cur top, size_t *nmaps, size_t *nfns,
			     size_t *nlocs)
{
	struct cur c = top;
	struct field f;
	size_t total = 0, i = 0;
	int ret;

	while ((ret = next(&c, &f)) > 0) {
		if (f.wt != WT_LEN)
			continue;
		if (f.num == 6) {
			r->nstr++;
			total += (size_t)(f.sub.end - f.sub.p) + 1;
		}
		*nmaps += f.num == 3;
		*nfns += f.num == 5;
		*nlocs += f.num == 4;
	}
	if (ret < 0)
		return fail(r, -EBADMSG, "malformed protobuf at the top level");
	if (!r->nstr)
		return fail(r, -EBADMSG, "no string table (not a pprof profile?)");
	r->str = calloc(r->nstr, sizeof(*r->str));
	r->strbuf = malloc(total);
	if (!r->str || !r->strbuf)
		return -ENOMEM;
	c = top;
	total = 0;
	while (next(&c, &f) > 0) {
		size_t n;

		if (f.wt != WT_LEN || f.num != 6)
			continue;
		n = (size_t)(f.sub.end - f.sub.p);
		memcpy(r->strbuf + total, f.sub.p, n);
		r->strbuf[total + n] = '\0';
		r->str[i++] = r->strbuf + total;
		total += n + 1;
	}
	if (r->str[0][0])
		return fail(r, -EBADMSG, "string_table[0] is not empty");
	return 0;
}

static int value_type(struct rd *r, struct cur c, __u64 *type, __u64 *unit)
{
	struct field f;
	int ret;

	*type = *unit = 0;
	while ((ret = next(&c, &f)) > 0) {
		if (f.wt == WT_VARINT && f.num == 1)
			*type = f.v;
		else if (f.wt == WT_VARINT && f.num == 2)
			*unit = f.v;
	}
	if (ret < 0 || !str_at(r, *type) || !str_at(r, *unit))
		return fail(r, -EBADMSG, "malformed value type");
	return 0;
}

/* The varint fields 1..@n of message @c into v[0..@n-1] (others skipped,
 * a repeated field keeps its last value). 0, or -1 when malformed. */
static int varints(struct cur c, __u64 *v, size_t n)
{
	struct field f;
	int ret;

	while ((ret = next(&c, &f)) > 0)
		if (f.wt == WT_VARINT && f.num >= 1 && f.num <= n)
			v[f.num - 1] = f.v;
	return ret < 0 ? -1 : 0;
}

/* Mapping: 1 id, 2 memory_start, 3 memory_limit, 4 file_offset,
 * 5 filename, 6 build_id (string indexes). */
static int mapping(struct rd *r, struct cur c)
{
	struct pmap *m = &r->maps[r->nmaps++];
	__u64 v[6] = {0};

	if (varints(c, v, 6) || !v[0] || !str_at(r, v[4]) || !str_at(r, v[5]))
		return fail(r, -EBADMSG, "malformed mapping (id 0, or a string index out of range)");
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

/* Function: 1 id, 2 name, 3 system_name (string indexes). */
static int function(struct rd *r, struct cur c)
{
	struct pfn *fn = &r->fns[r->nfns++];
	__u64 v[3] = {0};

	if (varints(c, v, 3) || !v[0] || !str_at(r, v[1]) || !str_at(r, v[2]))
		return fail(r, -EBADMSG, "malformed function (id 0, or a string index out of range)");
	fn->id = v[0];
	fn->name = v[1] ? str_at(r, v[1]) : v[2] ? str_at(r, v[2]) : NULL;
	return 0;
}

static int add_line_fn(struct rd *r, __u64 id)
{
	if (array__grow((void **)&r->line_fns, &r->cap_line_fns, r->nline_fns,
			sizeof(*r->line_fns), 256, SIZE_MAX / sizeof(*r->line_fns)))
		return -ENOMEM;
	r->line_fns[r->nline_fns++] = id;
	return 0;
}

static int location(struct rd *r, struct cur c)
{
	struct ploc *l = &r->locs[r->nlocs++];
	struct field f, g;
	int ret, err;

	l->first = r->nline_fns;
	while ((ret = next(&c, &f)) > 0) {
		if (f.wt == WT_VARINT && f.num == 1) {
			l->id = f.v;
		} else if (f.wt == WT_VARINT && f.num == 2) {
			l->mapping = f.v;
		} else if (f.wt == WT_VARINT && f.num == 3) {
			l->address = f.v;
		} else if (f.wt == WT_LEN && f.num == 4) {
			struct cur lc = f.sub;
			__u64 fn = 0;

			while ((ret = next(&lc, &g)) > 0)
				if (g.wt == WT_VARINT && g.num == 1)
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

static int tables(struct rd *r, struct cur top)
{
	size_t nmaps = 0, nfns = 0, nlocs = 0, i;
	struct cur c = top;
	struct field f;
	int ret, err;

	err = count_and_strings(r, top, &nmaps, &nfns, &nlocs);
	if (err)
		return err;
	r->maps = calloc(nmaps + 1, sizeof(*r->maps));
	r->fns = calloc(nfns + 1, sizeof(*r->fns));
	r->locs = calloc(nlocs + 1, sizeof(*r->locs));
	if (!r->maps || !r->fns || !r->locs)
		return -ENOMEM;
	while ((ret = next(&c, &f)) > 0) {
		err = 0;
		if (f.wt == WT_LEN && f.num == 1 && !r->have_st) {
			err = value_type(r, f.sub, &r->st_type, &r->st_unit);
			r->have_st = true;
		} else if (f.wt == WT_LEN && f.num == 3) {
			err = mapping(r, f.sub);
		} else if (f.wt == WT_LEN && f.num == 4) {
			err = location(r, f.sub);
		} else if (f.wt == WT_LEN && f.num == 5) {
			err = function(r, f.sub);
		} else if (f.wt == WT_VARINT && f.num == 9) {
			r->time = (__s64)f.v;
		} else if (f.wt == WT_VARINT && f.num == 10) {
			r->duration = (__s64)f.v;
		} else if (f.wt == WT_LEN && f.num == 11) {
			err = value_type(r, f.sub, &r->pt_type, &r->pt_unit);
		} else if (f.wt == WT_VARINT && f.num == 12) {
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
	int bad; /* -EBADMSG: unknown id */
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
			return fail(r, -EBADMSG, "location %llu names mapping id %llu, which does "
				    "not exist", (unsigned long long)id,
				    (unsigned long long)l->mapping);
	}
	for (i = 0; i < (l->n ? l->n : 1) && s->nframes < MAX_FRAMES; i++) {
		struct profile_frame *fr = &r->frames[s->nframes++];
		const struct pfn *fn = NULL;

		memset(fr, 0, sizeof(*fr));
		if (l->n && r->line_fns[l->first + i]) {
			struct pfn fk = {.id = r->line_fns[l->first + i]};

			fn = bsearch(&fk, r->fns, r->nfns, sizeof(*r->fns), cmp_fn);
			if (!fn)
				return fail(r, -EBADMSG, "location %llu names function id %llu, "
					    "which does not exist", (unsigned long long)id,
					    (unsigned long long)fk.id);
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

static int label(struct smp *s, struct cur c)
{
	struct rd *r = s->r;
	__u64 key = 0, str = 0, num = 0;
	const char *k, *v;
	struct field f;
	int ret;

	while ((ret = next(&c, &f)) > 0) {
		if (f.wt != WT_VARINT)
			continue;
		if (f.num == 1)
			key = f.v;
		else if (f.num == 2)
			str = f.v;
		else if (f.num == 3)
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

static int sample(struct rd *r, struct cur c)
{
	struct smp s = {.r = r, .desc = {.pid = -1}};
	struct field f;
	int ret, err = 0;

	while (!err && (ret = next(&c, &f)) > 0) {
		if (f.num == 1)
			err = each_varint(&f, on_location, &s);
		else if (f.num == 2)
			err = each_varint(&f, on_value, &s);
		else if (f.num == 3 && f.wt == WT_LEN)
			err = label(&s, f.sub);
	}
	if (err)
		return err == -EBADMSG && r->err && !r->err[0]
			       ? fail(r, err, "malformed sample")
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

static int build(struct rd *r, struct cur top)
{
	struct profile_meta meta = {0};
	struct cur c = top;
	struct field f;
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
	while (!err && (ret = next(&c, &f)) > 0)
		if (f.wt == WT_LEN && f.num == 2)
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
	struct cur c = {data, (const unsigned char *)data + len};
	bool high = false, strings = false;
	struct field f;
	int ret;

	while ((ret = next(&c, &f)) > 0) {
		if (f.num > 14)
			return false;
		high |= f.num >= 3;
		strings |= f.num == 6 && f.wt == WT_LEN;
	}
	return !ret && high && strings;
}

int pprof_read__parse(const void *data, size_t len, size_t max_bytes, struct profile **out,
		      char *err, size_t errlen)
{
	struct rd r = {.err = err, .errlen = errlen};
	struct buf plain;
	struct cur top;
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
	top.p = data;
	top.end = (const unsigned char *)data + len;
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
