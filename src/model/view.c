/* view.c - read-side helpers on the profile model (see view.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/profile.h"
#include "model/view.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* The name of an unnamed frame (view__place_name()); @file and @line: the
 * source of the frame being named ("" when unknown). */
static const char *place_name(const struct profile *p, const struct profile_location_entry *l,
			      const char *file, __s64 line, char *scratch, size_t n)
{
	const struct profile_mapping_entry *m = l->mapping ? profile__mapping(p, l->mapping) : NULL;
	const char *base = m ? base_name(profile__string(p, m->filename, NULL)) : "";

	if (*file) {
		if (line > 0)
			snprintf(scratch, n, "%s:%lld", file, (long long)line);
		else
			snprintf(scratch, n, "%s", file);
	} else if (m) {
		snprintf(scratch, n, "%s+0x%llx", *base ? base : "[unknown]",
			 (unsigned long long)(l->address - m->start + m->file_offset));
	} else if (l->address) {
		snprintf(scratch, n, "[unknown]+0x%llx", (unsigned long long)l->address);
	} else {
		return "[unknown]";
	}
	return scratch;
}

const char *view__frame_name(const struct profile *p, __u32 loc, char *scratch, size_t n)
{
	return view__line_name(p, loc, 0, scratch, n);
}

const char *view__place_name(const struct profile *p, __u32 loc, char *scratch, size_t n)
{
	__s64 line;
	const char *file = view__line_source(p, loc, 0, &line);

	return place_name(p, profile__location(p, loc), file, line, scratch, n);
}

const char *view__location_name(const struct profile *p, __u32 loc, char *scratch, size_t n)
{
	return view__frame_name(p, loc, scratch, n);
}

const char *view__mapping_name(const struct profile *p, __u32 loc, char *scratch, size_t n)
{
	const struct profile_location_entry *l = profile__location(p, loc);
	const char *type;

	if (l->mapping) {
		const char *f = profile__string(p, profile__mapping(p, l->mapping)->filename, NULL);

		return *f ? base_name(f) : "[unknown]";
	}
	type = view__location_type(p, loc);
	if (!*type || !strcmp(type, "native") || !strcmp(type, "kernel"))
		return "[unknown]";
	snprintf(scratch, n, "[%s]", type);
	return scratch;
}

const char *view__line_function(const struct profile *p, __u32 loc, size_t i, size_t *nlines)
{
	const struct profile_location_entry *l = profile__location(p, loc);
	const struct profile_line_entry *le;
	const char *name = NULL;
	size_t nl;

	le = profile__lines(p, l->lines, &nl);
	if (nlines)
		*nlines = nl;
	if (i < nl && le[i].function) {
		const struct profile_function_entry *f = profile__function(p, le[i].function);

		name = profile__string(p, f->name, NULL);
		if (!*name)
			name = profile__string(p, f->system_name, NULL);
	}
	return name && *name ? name : NULL;
}

const char *view__line_name(const struct profile *p, __u32 loc, size_t i, char *scratch,
			    size_t n)
{
	const char *name = view__line_function(p, loc, i, NULL), *file;
	__s64 line;

	if (name)
		return name;
	file = view__line_source(p, loc, i, &line);
	return place_name(p, profile__location(p, loc), file, line, scratch, n);
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

const char *view__sample_attr(const struct profile *p, const struct profile_sample_entry *s,
			      const char *key, char *scratch, size_t n)
{
	const struct profile_attr_entry *a;
	__u32 i;

	for (i = 0; i < s->nattrs && i < PROFILE_SAMPLE_MAX_ATTRS; i++) {
		a = profile__attr(p, s->attrs[i]);
		if (strcmp(profile__string(p, a->key, NULL), key))
			continue;
		if (a->kind == PROFILE_ATTR_STR)
			return a->str_value ? a->str_value : "";
		if (a->kind == PROFILE_ATTR_INT || a->kind == PROFILE_ATTR_BOOL) {
			snprintf(scratch, n, "%lld", (long long)a->int_value);
			return scratch;
		}
		return NULL;
	}
	return NULL;
}

bool view__sample_matches(const struct profile *p, const struct profile_sample_entry *s,
			  const struct view_attr_match *m, size_t n)
{
	char scratch[24];
	const char *v;
	size_t i;

	for (i = 0; i < n; i++) {
		v = view__sample_attr(p, s, m[i].key, scratch, sizeof(scratch));
		if (!v || strcmp(v, m[i].value))
			return false;
	}
	return true;
}

/* Append @key unless it is there already, the list is full, or (for a
 * string) the value is empty: the first one added wins. */
static void res_add(struct view_resource_attr *out, size_t *n, const char *key, const char *str,
		    __s64 num, bool is_str)
{
	size_t i;

	if ((is_str && (!str || !*str)) || *n >= VIEW_MAX_RESOURCE_ATTRS)
		return;
	for (i = 0; i < *n; i++)
		if (!strcmp(out[i].key, key))
			return;
	out[*n].key = key;
	out[*n].str = is_str ? str : NULL;
	out[*n].num = num;
	(*n)++;
}

size_t view__resource_attrs(const struct profile *p, size_t proc,
			    struct view_resource_attr out[VIEW_MAX_RESOURCE_ATTRS])
{
	const struct profile_meta *meta = profile__meta(p);
	size_t n = 0, i;

	if (proc != SIZE_MAX) {
		const struct profile_process_desc *d = profile__process(p, proc);

		res_add(out, &n, "process.pid", NULL, d->pid, false);
		res_add(out, &n, "process.executable.name", d->exe_name, 0, true);
		res_add(out, &n, "process.executable.path", d->exe_path, 0, true);
		res_add(out, &n, "process.command_line", d->cmdline, 0, true);
		res_add(out, &n, "container.id", d->container_id, 0, true);
		for (i = 0; i < d->nattrs; i++)
			res_add(out, &n, d->attrs[i].key, d->attrs[i].value, 0, true);
	}
	if (!meta)
		return n;
	for (i = 0; i < meta->nresource; i++)
		if (strncmp(meta->resource[i].key, "process.", 8))
			res_add(out, &n, meta->resource[i].key, meta->resource[i].value, 0, true);
	res_add(out, &n, "host.name", meta->host_name, 0, true);
	res_add(out, &n, "host.arch", meta->host_arch, 0, true);
	res_add(out, &n, "os.type", meta->os_type, 0, true);
	return n;
}
