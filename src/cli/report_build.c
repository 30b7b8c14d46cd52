/* report_build.c - the aggregation of `profcap report`: samples to
 * stacks, processes and threads, then groups with self and inclusive
 * values, and their order (see report.h). */
#include "cli/report_int.h"

static void group_release(struct group *g)
{
	intern__free(g->keys);
	free(g->rows);
	free(g->stamp);
	memset(g, 0, sizeof(*g));
}

static int group_init(struct group *g)
{
	memset(g, 0, sizeof(*g));
	g->keys = intern__new(PROFILE_MAX_ENTRIES);
	return g->keys ? 0 : -ENOMEM;
}

size_t report__group_count(const struct group *g)
{
	return intern__count(g->keys);
}

/* Find or add the row for @key; *@row gets it, *@added whether it is new
 * (then zeroed but for @name, which points at the stored key when @key is a
 * NUL-terminated string). 0, -E2BIG or -ENOMEM. */
static int group_get(struct group *g, const void *key, size_t len, struct row **row, bool *added)
{
	size_t n = intern__count(g->keys);
	struct row *r;
	__u32 idx;
	int err;

	/* Room for the key's row and stamp: an existing key's or the next. */
	err = array__grow((void **)&g->rows, &g->cap, n, sizeof(*g->rows), 256,
			  (size_t)PROFILE_MAX_ENTRIES + 1);
	if (!err)
		err = array__grow((void **)&g->stamp, &g->stamp_cap, n, sizeof(*g->stamp), 256,
				  (size_t)PROFILE_MAX_ENTRIES + 1);
	if (err)
		return err;
	err = intern__put(g->keys, key, len, &idx, added);
	if (err)
		return err;
	r = &g->rows[idx];
	if (*added) {
		memset(r, 0, sizeof(*r));
		r->name = intern__get(g->keys, idx, NULL);
		g->stamp[idx] = 0;
	}
	*row = r;
	return 0;
}

void report__release(struct report *r)
{
	free(r->stack_val);
	free(r->procs);
	free(r->loc_row);
	free(r->rows);
	group_release(&r->threads);
	group_release(&r->keyed);
	group_release(&r->frames);
}

/* Whether sample @s passes --trace-id/--span-id and --attr. */
static bool sample_kept(const struct report_opts *o, const struct profile *p,
			const struct profile_sample_entry *s)
{
	const struct profile_link *l;

	if (!view__sample_matches(p, s, o->attrs, o->nattrs))
		return false;
	if (!o->filter_trace && !o->filter_span)
		return true;
	if (!s->link)
		return false;
	l = profile__link(p, s->link);
	return (!o->filter_trace || !memcmp(l->trace_id, o->trace_id, sizeof(l->trace_id))) &&
	       (!o->filter_span || !memcmp(l->span_id, o->span_id, sizeof(l->span_id)));
}

/* --by span or attr:KEY: count @s in the row of its span or of its value
 * of the attribute (keyed and named by its text). */
static int add_keyed(struct report *r, const struct profile_sample_entry *s)
{
	char key[2 * 16 + 1 + 2 * 8 + 1] = "(no span)";
	const char *k = key;
	struct row *row;
	bool added;
	int err;

	if (r->o->by == BY_ATTR) {
		k = view__sample_attr(r->p, s, r->o->by_attr, key, sizeof(key));
		if (!k)
			k = ""; /* no value is empty: the "(none)" row */
	} else if (s->link) {
		const struct profile_link *l = profile__link(r->p, s->link);

		hex__encode(key, l->trace_id, sizeof(l->trace_id));
		key[32] = '/';
		hex__encode(key + 33, l->span_id, sizeof(l->span_id));
	}
	err = group_get(&r->keyed, k, strlen(k) + 1, &row, &added);
	if (err)
		return err;
	if (added) {
		row->pid = -1;
		row->tid = -1;
	}
	row->self += s->value;
	row->incl += s->value;
	return 0;
}

static int add_samples(struct report *r)
{
	const struct report_opts *o = r->o;
	const struct profile *p = r->p;
	size_t np = profile__process_count(p), i, j, ns;
	const struct profile_process_desc *pd;
	const struct profile_sample_entry *s;
	struct thread_key tk;
	const char *tname;
	struct row *tr;
	bool pcomm, added;
	int err;

	for (i = 0; i < np; i++) {
		pd = profile__process(p, i);
		r->procs[i].name = pd->exe_name ? pd->exe_name : "";
		r->procs[i].pid = pd->pid;
		r->procs[i].tid = -1;
		if (o->filter_pid && pd->pid != o->pid)
			continue;
		pcomm = o->comm && pd->exe_name && !strcmp(pd->exe_name, o->comm);
		ns = profile__sample_count(p, i);
		for (j = 0; j < ns; j++) {
			s = profile__sample(p, i, j);
			if (!sample_kept(o, p, s))
				continue;
			memset(&tk, 0, sizeof(tk));
			tk.proc = i;
			view__sample_thread(p, s, &tk.tid, &tname);
			if (o->comm && !pcomm && strcmp(tname, o->comm))
				continue;
			if (o->by == BY_SPAN || o->by == BY_ATTR) {
				err = add_keyed(r, s);
				if (err)
					return err;
			}
			err = group_get(&r->threads, &tk, sizeof(tk), &tr, &added);
			if (err)
				return err;
			if (added) {
				tr->name = tname;
				tr->pid = pd->pid;
				tr->tid = tk.tid;
			} else if (!*tr->name) {
				tr->name = tname;
			}
			tr->self += s->value;
			tr->incl += s->value;
			r->procs[i].self += s->value;
			r->procs[i].incl += s->value;
			r->stack_val[s->stack] += s->value;
			r->total += s->value;
		}
	}
	return 0;
}

static int frame_row(struct report *r, __u32 loc, __u32 *out);

/* Name of frame @k of location @loc (of @n): the function, marked when
 * inlined, with file:line under --lines (a frame named by its source line
 * already shows it). Borrowed from @p or @buf. */
static const char *line_row_name(const struct report *r, __u32 loc, size_t k, size_t n, char *buf,
				 size_t len)
{
	char scratch[256];
	const char *name = view__line_name(r->p, loc, k, scratch, sizeof(scratch));
	const char *file = "";
	__s64 line = 0;

	if (r->o->lines && view__line_function(r->p, loc, k, NULL))
		file = view__line_source(r->p, loc, k, &line);
	if (!*file && k + 1 == n)
		return name == scratch ? (snprintf(buf, len, "%s", name), buf) : name;
	snprintf(buf, len, "%s%s%s%s", name, k + 1 < n ? " [inlined]" : "", *file ? " " : "", file);
	if (*file && line)
		snprintf(buf + strlen(buf), len - strlen(buf), ":%lld", (long long)line);
	return buf;
}

/* Rows of the frames of location @loc (innermost first): *@out gets them,
 * *@n their number. */
static int frame_rows(struct report *r, __u32 loc, const __u32 **out, size_t *n)
{
	const char *type = view__location_type(r->p, loc);
	size_t k, nl = view__line_count(r->p, loc);
	char buf[1024];
	struct row *row;
	bool added;
	int err;

	if (r->o->by == BY_MAPPING || nl == 1) {
		__u32 one;

		if (r->loc_row[loc] == UINT32_MAX) {
			err = frame_row(r, loc, &one);
			if (err)
				return err;
		}
	}
	if (r->loc_row[loc] != UINT32_MAX) {
		*out = &r->rows[r->loc_row[loc]];
		*n = r->o->by == BY_MAPPING ? 1 : nl;
		return 0;
	}
	if (nl && array__grow((void **)&r->rows, &r->rows_cap, r->nrows + nl - 1, sizeof(*r->rows),
			      256, SIZE_MAX / sizeof(*r->rows)))
		return -ENOMEM;
	for (k = 0; k < nl; k++) {
		const char *name = line_row_name(r, loc, k, nl, buf, sizeof(buf));

		err = group_get(&r->frames, name, strlen(name) + 1, &row, &added);
		if (err)
			return err;
		if (added)
			row->type = type;
		r->rows[r->nrows + k] = (__u32)(row - r->frames.rows);
	}
	r->loc_row[loc] = (__u32)r->nrows;
	r->nrows += nl;
	*out = &r->rows[r->loc_row[loc]];
	*n = nl;
	return 0;
}

/* Row in r->frames of location @loc read as one frame (a mapping, or a
 * location without inlined frames), recorded in r->rows. */
static int frame_row(struct report *r, __u32 loc, __u32 *out)
{
	const struct profile_location_entry *l;
	const char *name, *type = NULL;
	char scratch[1024];
	struct row *row;
	bool added;
	int err;

	if (array__grow((void **)&r->rows, &r->rows_cap, r->nrows, sizeof(*r->rows), 256,
			SIZE_MAX / sizeof(*r->rows)))
		return -ENOMEM;
	if (r->o->by == BY_MAPPING) {
		l = profile__location(r->p, loc);
		name = l->mapping
			       ? profile__string(r->p, profile__mapping(r->p, l->mapping)->filename,
						 NULL)
			       : "";
		if (!*name)
			name = view__mapping_name(r->p, loc, scratch, sizeof(scratch));
	} else {
		name = line_row_name(r, loc, 0, 1, scratch, sizeof(scratch));
		type = view__location_type(r->p, loc);
	}
	err = group_get(&r->frames, name, strlen(name) + 1, &row, &added);
	if (err)
		return err;
	if (added)
		row->type = type;
	*out = (__u32)(row - r->frames.rows);
	r->rows[r->nrows] = *out;
	r->loc_row[loc] = (__u32)r->nrows++;
	return 0;
}

static int add_stacks(struct report *r)
{
	size_t nstacks = profile__stack_count(r->p), n, k;
	const __u32 *locs;
	struct row *row;
	__u32 i, g;
	bool added;
	__u64 v;
	int err;

	for (i = 0; i < nstacks; i++) {
		v = r->stack_val[i];
		if (!v)
			continue;
		locs = profile__stack(r->p, i, &n);
		if (!n) {
			err = group_get(&r->frames, "[no stack]", sizeof("[no stack]"), &row,
					&added);
			if (err)
				return err;
			row->self += v;
			row->incl += v;
			continue;
		}
		for (k = 0; k < n; k++) {
			const __u32 *rows;
			size_t nr, m;

			err = frame_rows(r, locs[k], &rows, &nr);
			if (err)
				return err;
			for (m = 0; m < nr; m++) {
				g = rows[m];
				/* Self: the innermost frame of the leaf. */
				if (!k && !m)
					r->frames.rows[g].self += v;
				if (r->frames.stamp[g] != i + 1) {
					r->frames.stamp[g] = i + 1;
					r->frames.rows[g].incl += v;
				}
			}
		}
	}
	return 0;
}

int report__build(struct report *r, const struct report_opts *o, const struct profile *p)
{
	size_t nloc = profile__location_count(p);
	int err;

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->p = p;
	err = group_init(&r->threads);
	if (!err)
		err = group_init(&r->keyed);
	if (!err)
		err = group_init(&r->frames);
	if (err)
		return err;
	r->stack_val = calloc(profile__stack_count(p), sizeof(*r->stack_val));
	r->procs = calloc(profile__process_count(p) + 1, sizeof(*r->procs));
	r->loc_row = malloc(nloc * sizeof(*r->loc_row));
	if (!r->stack_val || !r->procs || !r->loc_row)
		return -ENOMEM;
	memset(r->loc_row, 0xff, nloc * sizeof(*r->loc_row));
	err = add_samples(r);
	if (!err && (o->by == BY_FUNCTION || o->by == BY_MAPPING))
		err = add_stacks(r);
	return err;
}

/* ---- sorting ----------------------------------------------------------------------- */

static int cmp_tail(const struct row *a, const struct row *b)
{
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return 0;
}

static int cmp_self(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->incl != b->incl)
		return a->incl > b->incl ? -1 : 1;
	return cmp_tail(a, b);
}

static int cmp_incl(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->incl != b->incl)
		return a->incl > b->incl ? -1 : 1;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return cmp_tail(a, b);
}

/* Copy the rows with a value into a new sorted array (*@out, *@n). */
int report__sorted(const struct row *rows, size_t count, bool inclusive, struct row **out,
		   size_t *n)
{
	struct row *v;
	size_t i, k = 0;

	v = malloc((count + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < count; i++)
		if (rows[i].self || rows[i].incl)
			v[k++] = rows[i];
	qsort(v, k, sizeof(*v), inclusive ? cmp_incl : cmp_self);
	*out = v;
	*n = k;
	return 0;
}
