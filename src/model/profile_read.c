/* profile_read.c - the read side of a profile: its tables by index, for
 * the encoders (see profile.h). */
#include "model/profile_int.h"

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
