/* otlp_read_sample.c - the OTLP reader's samples (see otlp_read_rd.h).
 *
 * A sample's stack enters the model once, when a sample first uses it (its
 * frames gathered from the prepared locations); later samples reuse its
 * model index.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/otlp_read_rd.h"
#include "util/array.h"

/* Deeper stacks keep their leaf-most frames (the model keeps fewer). */
#define MAX_FRAMES 65536

/* A Sample's fields as read. */
struct r_sample {
	__u64 stack, link, value;
	size_t nvalues, nts;
};

bool otlp_rd__parse_int(const char *s, __s64 *v)
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

/* Values and timestamps a sample may hold: a message is at most a few
 * hundred MiB, and the model caps the occurrences it keeps. */
#define MAX_OCC (64u << 20)

static int occ_push(struct occ_vec *o, __u64 v)
{
	int err = array__grow((void **)&o->v, &o->cap, o->n, sizeof(*o->v), 16, MAX_OCC);

	if (!err)
		o->v[o->n++] = v;
	return err;
}

static int one_value(void *arg, __u64 v)
{
	return occ_push(arg, v);
}

/* The timestamps of field @f (packed or one fixed64) onto @o. */
static int read_times(const struct wire_field *f, struct occ_vec *o)
{
	const __u8 *b;
	size_t n = 0, i;
	__u64 t;
	int err;

	if (f->wt == WIRE_I64)
		return occ_push(o, f->v);
	err = wire__count_fixed64(f, &n);
	if (err)
		return err;
	b = wire__pos(&f->sub);
	for (i = 0; i < n && !err; i++) {
		memcpy(&t, b + i * 8, 8);
		err = occ_push(o, le64toh(t));
	}
	return err;
}

/* The fields of Sample @w into @s; its attribute indices into r->sattrs. */
static int read_sample(struct rd *r, struct wire *w, struct r_sample *s)
{
	struct wire_field f;
	int err = 0;

	r->sattrs.n = 0;
	r->svals.n = 0;
	r->stimes.n = 0;
	while (!err && otlp_rd__next(r, w, &f, &err)) {
		switch (f.num) {
		case OTLP_TAG(Sample, stack_index):
			err = otlp_rd__varint(r, &f, "stack_index", &s->stack);
			break;
		case OTLP_TAG(Sample, attribute_indices):
			err = otlp_rd__ids(r, &f, "attribute_indices", &r->sattrs);
			break;
		case OTLP_TAG(Sample, link_index):
			err = otlp_rd__varint(r, &f, "link_index", &s->link);
			break;
		case OTLP_TAG(Sample, values):
			err = wire__each_varint(&f, one_value, &r->svals);
			s->nvalues = r->svals.n;
			s->value = s->nvalues ? r->svals.v[0] : 0;
			if (err == -EPROTOTYPE)
				err = otlp_rd__want(r, &f, WIRE_LEN, "values");
			else if (err)
				err = otlp_rd__fail(r, err,
						    "malformed protobuf (values: a packed "
						    "list ends inside a varint)");
			break;
		case OTLP_TAG(Sample, timestamps_unix_nano):
			err = read_times(&f, &r->stimes);
			s->nts = r->stimes.n;
			if (err == -E2BIG || err == -ENOMEM)
				err = otlp_rd__fail(r, err, "timestamps_unix_nano: too many");
			else if (err == -EPROTOTYPE)
				err = otlp_rd__want(r, &f, WIRE_LEN, "timestamps_unix_nano");
			else if (err)
				err = otlp_rd__fail(r, err,
						    "timestamps_unix_nano: packed length "
						    "%zu is not a multiple of 8",
						    wire__left(&f.sub));
			break;
		default:
			break;
		}
	}
	return err;
}

/* The labels of the sample from its attributes (range-checked here). */
static int sample_labels(struct rd *r, struct profile_labels *lab, __u32 *tid, const char **tname,
			 struct profile_ctx_attr *cattrs, struct profile_num_attr *nattrs)
{
	size_t i;

	for (i = 0; i < r->sattrs.n; i++) {
		const struct r_attr *a;
		__s64 v;

		if (r->sattrs.v[i] >= r->attrs.n)
			return otlp_rd__out_of_range(r, "attribute index", r->sattrs.v[i],
						     "attribute_table", r->attrs.n);
		a = VEC_AT(r->attrs, struct r_attr, r->sattrs.v[i]);
		if (a->role == ROLE_THREAD_ID) {
			if (a->v.kind == VAL_INT)
				*tid = (__u32)a->v.num;
			else if (a->v.kind == VAL_STR && otlp_rd__parse_int(a->v.str, &v))
				*tid = (__u32)v;
		} else if (a->role == ROLE_THREAD_NAME && a->v.kind == VAL_STR) {
			*tname = a->v.str;
		} else if (a->role == ROLE_OFF_CPU_STATE && a->v.kind == VAL_STR) {
			lab->state = a->v.str;
		} else if (a->role == ROLE_CPU && a->v.kind == VAL_INT && a->v.num >= 0) {
			lab->has_cpu = true;
			lab->cpu = (__u32)a->v.num;
		} else if (a->role == ROLE_OFF_CPU_SWITCHES && a->v.kind == VAL_INT &&
			   a->v.num > 0) {
			lab->switches = (__u64)a->v.num;
		} else if (a->role == ROLE_NONE && a->v.kind == VAL_STR &&
			   lab->nctx < PROFILE_MAX_CTX_ATTRS) {
			/* other string labels: thread-context attributes */
			cattrs[lab->nctx].key = otlp_rd__str(r, a->key);
			cattrs[lab->nctx++].value = a->v.str;
		} else if (a->role == ROLE_NONE && a->v.kind == VAL_INT &&
			   lab->nnum < PROFILE_MAX_CTX_ATTRS) {
			/* numeric ones, with their units (pprof's numeric labels) */
			nattrs[lab->nnum].key = otlp_rd__str(r, a->key);
			nattrs[lab->nnum].unit = otlp_rd__str(r, a->unit);
			nattrs[lab->nnum++].value = a->v.num;
		}
	}
	lab->ctx = cattrs;
	lab->num = nattrs;
	return 0;
}

/* The model index of stack @stack, added (with its locations) on first
 * use. Each location enters the model once, however many stacks share
 * it. */
static int model_stack(struct rd *r, __u64 stack)
{
	const struct r_stack *st;
	size_t i, n;
	int err = 0;

	if (r->smodel[stack] != UINT32_MAX)
		return 0;
	st = VEC_AT(r->stacks, struct r_stack, stack);
	n = st->n > MAX_FRAMES ? MAX_FRAMES : st->n;
	if (n > r->locs_cap) {
		__u32 *l = realloc(r->locs, n * sizeof(*l));

		if (!l)
			return -ENOMEM;
		r->locs = l;
		r->locs_cap = n;
	}
	for (i = 0; i < n && !err; i++) {
		__u32 *m = &r->lmodel[r->stack_locs.v[st->off + i]];

		if (*m == UINT32_MAX)
			err = profile__add_location(r->p, &r->lframes[r->stack_locs.v[st->off + i]],
						    m);
		r->locs[i] = *m;
	}
	return err ?: profile__add_stack_locs(r->p, r->locs, n, &r->smodel[stack]);
}

/* The sample's value into the model: one occurrence per timestamp (with
 * values[i], or 1 without values) when the lists pair up, else values[0]
 * without time. */
static int add_occurrences(struct rd *r, const struct resource *res, const struct r_sample *s,
			   __u32 tid, const char *tname, const struct profile_labels *lab)
{
	__u32 stack = r->smodel[s->stack];
	size_t i;
	int err = 0;

	if (!s->nts || (s->nvalues && s->nvalues != s->nts))
		return profile__add_typed_stack_sample(r->p, r->cur_type, &res->desc, tid, tname,
						       lab, stack, s->value);
	for (i = 0; i < s->nts && !err; i++) {
		__u64 v = s->nvalues ? r->svals.v[i] : 1;

		if ((__s64)v < 0)
			return otlp_rd__fail(r, -EBADMSG, "values[%zu] is negative (%lld)", i,
					     (long long)v);
		if (v)
			err = profile__add_timed_stack_sample(r->p, r->cur_type, &res->desc, tid,
							      tname, lab, stack, v,
							      r->stimes.v[i]);
	}
	return err;
}

int otlp_rd__add_sample(struct rd *r, const struct resource *res, struct wire *w)
{
	struct profile_ctx_attr cattrs[PROFILE_MAX_CTX_ATTRS];
	struct profile_num_attr nattrs[PROFILE_MAX_CTX_ATTRS];
	struct profile_labels lab = {0};
	struct r_sample s = {0};
	const char *tname = NULL;
	__u32 tid = 0;
	int err;

	err = read_sample(r, w, &s);
	if (err)
		return err;
	if (s.stack >= r->stacks.n)
		return otlp_rd__out_of_range(r, "stack_index", s.stack, "stack_table", r->stacks.n);
	if (s.link >= r->nlinks)
		return otlp_rd__out_of_range(r, "link_index", s.link, "link_table", r->nlinks);
	if (s.link)
		lab.link = VEC_AT(r->links, struct profile_link, s.link);
	err = sample_labels(r, &lab, &tid, &tname, cattrs, nattrs);
	if (err)
		return err;
	if (!s.nvalues)
		s.value = s.nts;
	else if ((__s64)s.value < 0)
		return otlp_rd__fail(r, -EBADMSG, "values[0] is negative (%lld)",
				     (long long)s.value);
	if (!s.value && (!s.nts || s.nvalues != s.nts))
		return 0;

	err = model_stack(r, s.stack);
	if (!err)
		err = add_occurrences(r, res, &s, tid, tname, &lab);
	if (err == -ENOMEM)
		return otlp_rd__nomem(r);
	if (err == -E2BIG)
		return otlp_rd__fail(r, err, "too many distinct entries for the profile model");
	if (err)
		return otlp_rd__fail(r, err, "cannot add the sample (%s)", strerror(-err));
	return 0;
}
