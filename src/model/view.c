/* view.c - read-side helpers on the profile model (see view.h). */
#include <stdio.h>
#include <string.h>

#include "model/profile.h"
#include "model/view.h"

static const char *mapping_name(const struct profile *p, const struct profile_location_entry *l,
				char *scratch, size_t n);

const char *view__location_name(const struct profile *p, __u32 loc, char *scratch, size_t n)
{
	const struct profile_location_entry *l = profile__location(p, loc);
	const char *name;

	__u32 fn = profile__location_function(p, l);

	if (fn) {
		name = profile__string(p, profile__function(p, fn)->name, NULL);
		if (*name)
			return name;
	}
	return mapping_name(p, l, scratch, n);
}

const char *view__line_name(const struct profile *p, __u32 loc, size_t i, char *scratch,
			    size_t n)
{
	const struct profile_location_entry *l = profile__location(p, loc);
	const struct profile_line_entry *le;
	const char *name;
	size_t nl;

	le = profile__lines(p, l->lines, &nl);
	if (i < nl && le[i].function) {
		name = profile__string(p, profile__function(p, le[i].function)->name, NULL);
		if (*name)
			return name;
	}
	return mapping_name(p, l, scratch, n);
}

size_t view__line_count(const struct profile *p, __u32 loc)
{
	size_t n;

	profile__lines(p, profile__location(p, loc)->lines, &n);
	return n ? n : 1;
}

const char *view__line_source(const struct profile *p, __u32 loc, size_t i, __s64 *line)
{
	const struct profile_line_entry *le;
	const struct profile_function_entry *fn;
	size_t nl;

	*line = 0;
	le = profile__lines(p, profile__location(p, loc)->lines, &nl);
	if (i >= nl)
		return "";
	fn = profile__function(p, le[i].function);
	*line = le[i].line;
	return fn->filename ? profile__string(p, fn->filename, NULL) : "";
}

static const char *mapping_name(const struct profile *p, const struct profile_location_entry *l,
				char *scratch, size_t n)
{
	const char *name, *base;

	if (l->mapping) {
		name = profile__string(p, profile__mapping(p, l->mapping)->filename, NULL);
		base = strrchr(name, '/');
		base = base ? base + 1 : name;
		if (*base == '[')
			return base;
		if (*base) {
			snprintf(scratch, n, "[%s]", base);
			return scratch;
		}
	}
	return "[unknown]";
}

const char *view__location_type(const struct profile *p, __u32 loc)
{
	const struct profile_location_entry *l = profile__location(p, loc);
	const struct profile_attr_entry *a;

	if (!l->attr)
		return "";
	a = profile__attr(p, l->attr);
	return a->kind == PROFILE_ATTR_STR && a->str_value ? a->str_value : "";
}

void view__sample_thread(const struct profile *p, const struct profile_sample_entry *s,
			   __s64 *tid, const char **name)
{
	const struct profile_attr_entry *a;
	const char *key;
	__u32 i;

	*tid = -1;
	*name = "";
	for (i = 0; i < s->nattrs && i < PROFILE_SAMPLE_MAX_ATTRS; i++) {
		a = profile__attr(p, s->attrs[i]);
		key = profile__string(p, a->key, NULL);
		if (a->kind == PROFILE_ATTR_INT && !strcmp(key, "thread.id"))
			*tid = a->int_value;
		else if (a->kind == PROFILE_ATTR_STR && a->str_value && !strcmp(key, "thread.name"))
			*name = a->str_value;
	}
}
