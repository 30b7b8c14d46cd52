/* profile_time.c - the occurrences of samples (their times and values), and
 * slices of a profile by time (see profile.h). */
#include "model/profile_int.h"

void profile__times_free(struct proc *pr)
{
	size_t i;

	for (i = 0; pr->times && i < pr->times_cap; i++)
		free(pr->times[i].occ);
	free(pr->times);
	pr->times = NULL;
	pr->times_cap = 0;
}

int profile__times_append(struct profile *p, struct proc *pr, __u32 idx, __u64 time_ns,
			  __u64 value)
{
	size_t old = pr->times_cap;
	struct sample_times *t;
	int err;

	if (p->ntimes >= p->max_times)
		return -E2BIG;
	if (idx >= pr->times_cap) {
		err = array__grow((void **)&pr->times, &pr->times_cap, idx, sizeof(*pr->times), 16,
				  (size_t)p->max_entries + 1);
		if (err)
			return err;
		memset(pr->times + old, 0, (pr->times_cap - old) * sizeof(*pr->times));
	}
	t = &pr->times[idx];
	err = array__grow((void **)&t->occ, &t->cap, t->n, sizeof(*t->occ), 4, p->max_times);
	if (err)
		return err;
	t->occ[t->n].time_ns = time_ns;
	t->occ[t->n].value = value;
	t->n++;
	if (!p->ntimes || time_ns < p->tmin)
		p->tmin = time_ns;
	if (!p->ntimes || time_ns > p->tmax)
		p->tmax = time_ns;
	p->ntimes++;
	return 0;
}

int profile__add_timed_stack_sample(struct profile *p, __u32 type,
				    const struct profile_process_desc *proc, __u32 tid,
				    const char *thread_name, const struct profile_labels *l,
				    __u32 stack, __u64 value, __u64 time_ns)
{
	struct proc *pr;
	__u32 idx;
	int err;

	if (p && p->ntimes >= p->max_times)
		return -E2BIG;
	err = profile__add_sample_at(p, type, proc, tid, thread_name, l, stack, value, &pr, &idx);
	if (err)
		return err;
	err = profile__times_append(p, pr, idx, time_ns, value);
	if (err) {
		/* Take the value back: a sample's value is its occurrences' sum.
		 * A sample left at 0 is dropped by prune. */
		pr->samples[idx].value -= value;
		p->total -= value;
		p->types[type].total -= value;
		p->dirty = true;
	}
	return err;
}

int profile__add_timed_sample(struct profile *p, __u32 type, const struct profile_process_desc *proc,
			      __u32 tid, const char *thread_name, const struct profile_labels *l,
			      const struct profile_frame *frames, size_t nframes, __u64 value,
			      __u64 time_ns)
{
	__u32 stack;
	int err;

	if (!p || !proc || (nframes && !frames) || !value)
		return -EINVAL;
	err = profile__add_stack(p, frames, nframes, &stack);
	if (!err)
		err = profile__add_timed_stack_sample(p, type, proc, tid, thread_name, l, stack,
						      value, time_ns);
	return err;
}

const struct profile_occurrence *profile__sample_times(const struct profile *p, size_t proc,
						       size_t i, size_t *n)
{
	const struct proc *pr = &p->procs[proc];

	*n = 0;
	if (!pr->times || i >= pr->times_cap || !pr->times[i].n)
		return NULL;
	*n = pr->times[i].n;
	return pr->times[i].occ;
}

int profile__sample_cpu(const struct profile *p, const struct profile_sample_entry *s, __u32 *cpu)
{
	__u32 i;

	for (i = 0; i < s->nattrs && i < PROFILE_SAMPLE_MAX_ATTRS; i++) {
		const struct profile_attr_entry *a = profile__attr(p, s->attrs[i]);

		if (a->kind == PROFILE_ATTR_INT &&
		    !strcmp(profile__string(p, a->key, NULL), PROFILE_ATTR_CPU)) {
			*cpu = (__u32)a->int_value;
			return 0;
		}
	}
	return -ENOENT;
}

__u64 profile__time_count(const struct profile *p)
{
	return p->ntimes;
}

int profile__time_span(const struct profile *p, __u64 *first, __u64 *last)
{
	if (!p->ntimes)
		return -ENOENT;
	*first = p->tmin;
	*last = p->tmax;
	return 0;
}

void profile__set_time_cap(struct profile *p, __u64 cap)
{
	p->max_times = cap ? cap : PROFILE_MAX_TIMES;
}

/* The meta of a slice: @p's, its time range narrowed to [@from, @to). */
static struct profile_meta slice_meta(const struct profile *p, __u64 from, __u64 to)
{
	struct profile_meta m = p->meta;
	__u64 start = m.time_unix_nano, end = start + m.duration_nano;

	if (!start || start < from)
		start = from;
	if (!m.time_unix_nano || end > to)
		end = to;
	m.time_unix_nano = start;
	m.duration_nano = end > start ? end - start : 0;
	return m;
}

int profile__slice(const struct profile *p, __u64 from_ns, __u64 to_ns, struct profile **out,
		   struct profile_slice_note *note)
{
	struct replay_range r = {.from = from_ns, .to = to_ns, .untimed = !p->ntimes};
	struct profile_meta meta;
	struct profile *n;
	size_t i, j;
	int err;

	*out = NULL;
	if (from_ns >= to_ns)
		return -EINVAL;
	n = profile__copy_types(p, UINT32_MAX);
	if (!n)
		return -ENOMEM;
	n->max_times = p->max_times;
	meta = slice_meta(p, from_ns, to_ns);
	err = profile__set_meta(n, &meta);
	for (i = 0; i < p->nprocs && !err; i++)
		for (j = 0; j < profile__sample_count(p, i) && !err; j++)
			err = profile__replay(n, p->procs[i].type, p, &p->procs[i], j, NULL, NULL,
					      &r);
	err = err ?: profile__prune(n);
	if (err) {
		profile__free(n);
		return err;
	}
	if (note) {
		note->untimed_kept = r.untimed ? r.untimed_seen : 0;
		note->untimed_dropped = r.untimed ? 0 : r.untimed_seen;
	}
	*out = n;
	return 0;
}
