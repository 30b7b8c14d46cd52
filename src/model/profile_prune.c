/* profile_prune.c - a profile rebuilt from what its samples reference:
 * pruning, extraction of one value type, frame edits (see profile.h). */
#include "model/profile_int.h"

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

/* Whether sample @si of @pr has anything to replay within @r (NULL: all);
 * *@sum gets the sum of its occurrences' values. */
static bool replay_wanted(const struct proc *pr, size_t si, struct replay_range *r, __u64 *sum)
{
	const struct sample_times *t =
		pr->times && si < pr->times_cap && pr->times[si].n ? &pr->times[si] : NULL;
	bool any = false;
	size_t i;

	*sum = 0;
	for (i = 0; t && i < t->n; i++) {
		*sum += t->occ[i].value;
		any |= !r || (t->occ[i].time_ns >= r->from && t->occ[i].time_ns < r->to);
	}
	if (!pr->samples[si].value)
		return false; /* a timed add taken back */
	if (t)
		return any || (!r && pr->samples[si].value > *sum);
	if (r)
		r->untimed_seen += pr->samples[si].value;
	return !r || r->untimed;
}

/* Add the value of sample @si (its stack interned as @stack in @dst): each
 * occurrence in @r with its time, then what no occurrence stands for. */
static int replay_values(struct profile *dst, __u32 type, const struct proc *pr, size_t si,
			 __u32 tid, const char *tname, const struct profile_labels *lab,
			 __u32 stack, __u64 sum, const struct replay_range *r)
{
	const struct profile_sample_entry *s = &pr->samples[si];
	const struct sample_times *t =
		pr->times && si < pr->times_cap && pr->times[si].n ? &pr->times[si] : NULL;
	size_t i;
	int err = 0;

	for (i = 0; t && i < t->n && !err; i++) {
		const struct profile_occurrence *o = &t->occ[i];

		if (r && (o->time_ns < r->from || o->time_ns >= r->to))
			continue;
		err = profile__add_timed_stack_sample(dst, type, &pr->desc, tid, tname, lab, stack,
						      o->value, o->time_ns);
	}
	if (!err && (!t || (!r && s->value > sum)))
		err = profile__add_typed_stack_sample(dst, type, &pr->desc, tid, tname, lab, stack,
						      t ? s->value - sum : s->value);
	return err;
}

int profile__replay(struct profile *dst, __u32 type, const struct profile *src,
		    const struct proc *pr, size_t si, profile_frame_edit_fn edit, void *arg,
		    struct replay_range *r)
{
	const struct profile_sample_entry *s = &pr->samples[si];
	struct profile_labels lab = {0};
	struct profile_ctx_attr ctx[PROFILE_MAX_CTX_ATTRS];
	struct profile_num_attr num[PROFILE_MAX_CTX_ATTRS];
	struct profile_mapping_desc *maps = NULL;
	struct profile_frame *frames = NULL;
	struct profile_line *lines = NULL;
	const char *tname = NULL;
	__u32 tid = 0, stack;
	__u64 sum;
	size_t n, i;
	const __u32 *locs = profile__stack(src, s->stack, &n);
	int err;

	if (!replay_wanted(pr, si, r, &sum))
		return 0;
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
		else if (!strcmp(k, PROFILE_ATTR_CPU)) {
			lab.has_cpu = true;
			lab.cpu = (__u32)a->int_value;
		}
		else if (a->kind == PROFILE_ATTR_STR && lab.nctx < PROFILE_MAX_CTX_ATTRS) {
			ctx[lab.nctx].key = k;
			ctx[lab.nctx++].value = a->str_value;
		} else if (a->kind == PROFILE_ATTR_INT && lab.nnum < PROFILE_MAX_CTX_ATTRS) {
			num[lab.nnum].key = k;
			num[lab.nnum].unit = profile__string(src, a->unit, NULL);
			num[lab.nnum++].value = a->int_value;
		}
	}
	lab.ctx = ctx;
	lab.num = num;
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
	err = profile__add_stack(dst, frames, n, &stack);
	if (!err)
		err = replay_values(dst, type, pr, si, tid, tname, &lab, stack, sum, r);
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

struct profile *profile__copy_types(const struct profile *p, __u32 only)
{
	const struct value_type *t0 = &p->types[only == UINT32_MAX ? 0 : only];
	struct profile *n;
	__u32 i, idx;

	n = profile__create(p->max_entries, type_str(p, t0->st), type_str(p, t0->su),
			    type_str(p, t0->pt), type_str(p, t0->pu));
	if (!n)
		return NULL;
	n->types[0].period = t0->period;
	n->max_links = p->max_links;
	n->max_times = p->max_times;
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
	n = profile__copy_types(p, type);
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
			err = profile__replay(n, 0, p, pr, j, NULL, NULL, NULL);
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
	n = profile__copy_types(p, UINT32_MAX);
	if (!n)
		return -ENOMEM;
	err = profile__set_meta(n, &p->meta);
	n->links_capped = p->links_capped;
	for (i = 0; i < p->nprocs && !err; i++) {
		const struct proc *pr = &p->procs[i];

		for (j = 0; j < profile__sample_count(p, i) && !err; j++)
			err = profile__replay(n, pr->type, p, pr, j, edit, arg, NULL);
	}
	if (err) {
		profile__free(n);
		return err;
	}
	*out = n;
	return 0;
}
