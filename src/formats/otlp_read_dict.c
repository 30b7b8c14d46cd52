/* otlp_read_dict.c - the OTLP reader's dictionary (see otlp_read_rd.h).
 *
 * Every occurrence of the dictionary is read, tables concatenated as
 * protobuf merges them; then every index in it is range-checked and each
 * location is turned once into a struct profile_frame that samples share.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/otlp_read_rd.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The dictionary's messages are read by table: each known field's number,
 * kind, name (for errors) and where its value goes. */
enum field_kind {
	FK_VARINT, /* a __u64 (or __s64) in the entry */
	FK_VALUE,  /* a struct value in the entry */
	FK_IDS,	   /* appended to a struct ids of struct rd (index pools) */
	FK_LINE,   /* Location.lines: read_line() */
};

struct field_desc {
	__u32 num;
	enum field_kind kind;
	const char *name;
	size_t off; /* in the entry, or in struct rd for FK_IDS */
};

#define IN_ENTRY(msg, field, kind, name, type, member)                   \
	{                                                                \
		OTLP_TAG(msg, field), kind, name, offsetof(type, member) \
	}
#define IN_POOL(msg, field, name, member)                                       \
	{                                                                       \
		OTLP_TAG(msg, field), FK_IDS, name, offsetof(struct rd, member) \
	}

static int read_line(struct rd *r, struct wire *s);

/* Read the fields of message @s that @fd (@n of them) describes into
 * @entry; others are skipped. */
static int read_fields(struct rd *r, struct wire *s, const struct field_desc *fd, size_t n,
		       void *entry)
{
	struct wire_field f;
	struct wire sub;
	int err = 0;
	size_t i;

	while (!err && otlp_rd__next(r, s, &f, &err)) {
		for (i = 0; i < n && fd[i].num != f.num; i++)
			;
		if (i == n)
			continue;
		switch (fd[i].kind) {
		case FK_VARINT:
			err = otlp_rd__varint(r, &f, fd[i].name,
					      (__u64 *)((char *)entry + fd[i].off));
			break;
		case FK_VALUE:
			err = otlp_rd__value(r, &f, fd[i].name,
					     (struct value *)((char *)entry + fd[i].off));
			break;
		case FK_IDS:
			err = otlp_rd__ids(r, &f, fd[i].name,
					   (struct ids *)((char *)r + fd[i].off));
			break;
		case FK_LINE:
			err = otlp_rd__sub(r, &f, fd[i].name, &sub);
			err = err ?: read_line(r, &sub);
			break;
		}
	}
	return err;
}

static const struct field_desc mapping_fields[] = {
	IN_ENTRY(Mapping, memory_start, FK_VARINT, "memory_start", struct r_mapping, start),
	IN_ENTRY(Mapping, memory_limit, FK_VARINT, "memory_limit", struct r_mapping, limit),
	IN_ENTRY(Mapping, file_offset, FK_VARINT, "file_offset", struct r_mapping, offset),
	IN_ENTRY(Mapping, filename_strindex, FK_VARINT, "filename_strindex", struct r_mapping,
		 filename),
	IN_POOL(Mapping, attribute_indices, "attribute_indices", map_attrs),
};

static int read_mapping(struct rd *r, struct wire *s)
{
	struct r_mapping *m;
	int err = 0;

	m = otlp_rd__vec_push(&r->mappings, sizeof(*m), &err);
	if (!m)
		return otlp_rd__fail(r, err, "too many mappings");
	m->attr_off = r->map_attrs.n;
	err = read_fields(r, s, mapping_fields, ARRAY_LEN(mapping_fields), m);
	m->nattrs = r->map_attrs.n - m->attr_off;
	return err;
}

struct r_line {
	__u64 fn, line, col;
};

static const struct field_desc line_fields[] = {
	IN_ENTRY(Line, function_index, FK_VARINT, "lines.function_index", struct r_line, fn),
	IN_ENTRY(Line, line, FK_VARINT, "lines.line", struct r_line, line),
	IN_ENTRY(Line, column, FK_VARINT, "lines.column", struct r_line, col),
};

static int read_line(struct rd *r, struct wire *s)
{
	struct r_line l = {0};
	struct r_linepos *pos;
	int err = read_fields(r, s, line_fields, ARRAY_LEN(line_fields), &l);

	if (!err && l.fn > UINT32_MAX - 1)
		return otlp_rd__too_large(r, "lines.function_index", l.fn);
	if (!err) {
		err = otlp_rd__ids_push(&r->line_fns, (__u32)l.fn);
		pos = err ? NULL : otlp_rd__vec_push(&r->line_pos, sizeof(*pos), &err);
		if (err)
			return otlp_rd__fail(r, err, "too many lines");
		/* int64 on the wire: negative values are unknown, as 0. */
		pos->line = (__s64)l.line > 0 ? (__s64)l.line : 0;
		pos->column = (__s64)l.col > 0 ? (__s64)l.col : 0;
	}
	return err;
}

static const struct field_desc location_fields[] = {
	IN_ENTRY(Location, mapping_index, FK_VARINT, "mapping_index", struct r_location, mapping),
	IN_ENTRY(Location, address, FK_VARINT, "address", struct r_location, address),
	{OTLP_TAG(Location, lines), FK_LINE, "lines", 0},
	IN_POOL(Location, attribute_indices, "attribute_indices", loc_attrs),
};

static int read_location(struct rd *r, struct wire *s)
{
	struct r_location *l;
	int err = 0;

	l = otlp_rd__vec_push(&r->locations, sizeof(*l), &err);
	if (!l)
		return otlp_rd__fail(r, err, "too many locations");
	l->attr_off = r->loc_attrs.n;
	l->line_off = r->line_fns.n;
	err = read_fields(r, s, location_fields, ARRAY_LEN(location_fields), l);
	l->nattrs = r->loc_attrs.n - l->attr_off;
	l->nlines = r->line_fns.n - l->line_off;
	return err;
}

static const struct field_desc function_fields[] = {
	IN_ENTRY(Function, name_strindex, FK_VARINT, "name_strindex", struct r_function, name),
	IN_ENTRY(Function, system_name_strindex, FK_VARINT, "system_name_strindex",
		 struct r_function, system_name),
	IN_ENTRY(Function, filename_strindex, FK_VARINT, "filename_strindex", struct r_function,
		 filename),
	IN_ENTRY(Function, start_line, FK_VARINT, "start_line", struct r_function, start_line),
};

static int read_function(struct rd *r, struct wire *s)
{
	struct r_function *f;
	int err = 0;

	f = otlp_rd__vec_push(&r->functions, sizeof(*f), &err);
	if (!f)
		return otlp_rd__fail(r, err, "too many functions");
	err = read_fields(r, s, function_fields, ARRAY_LEN(function_fields), f);
	if (f->start_line < 0) /* int64 on the wire: negative is unknown, as 0 */
		f->start_line = 0;
	return err;
}

static const struct field_desc attr_fields[] = {
	IN_ENTRY(KeyValueAndUnit, key_strindex, FK_VARINT, "key_strindex", struct r_attr, key),
	IN_ENTRY(KeyValueAndUnit, value, FK_VALUE, "value", struct r_attr, v),
	IN_ENTRY(KeyValueAndUnit, unit_strindex, FK_VARINT, "unit_strindex", struct r_attr, unit),
};

static int read_attr(struct rd *r, struct wire *s)
{
	struct r_attr *a;
	int err = 0;

	a = otlp_rd__vec_push(&r->attrs, sizeof(*a), &err);
	if (!a)
		return otlp_rd__fail(r, err, "too many attributes");
	return read_fields(r, s, attr_fields, ARRAY_LEN(attr_fields), a);
}

static const struct field_desc stack_fields[] = {
	IN_POOL(Stack, location_indices, "location_indices", stack_locs),
};

static int read_stack(struct rd *r, struct wire *s)
{
	struct r_stack *st;
	int err = 0;

	st = otlp_rd__vec_push(&r->stacks, sizeof(*st), &err);
	if (!st)
		return otlp_rd__fail(r, err, "too many stacks");
	st->off = r->stack_locs.n;
	err = read_fields(r, s, stack_fields, ARRAY_LEN(stack_fields), st);
	st->n = r->stack_locs.n - st->off;
	return err;
}

/* One Link: trace_id (16 bytes) and span_id (8 bytes). Ids of another
 * width (the zero Link{} has none) read as no link. */
static int read_link(struct rd *r, struct wire *s)
{
	struct profile_link l = {0}, *out;
	bool ok_trace = false, ok_span = false;
	struct wire_field f;
	int err = 0;

	while (!err && otlp_rd__next(r, s, &f, &err)) {
		if (f.num == OTLP_TAG(Link, trace_id)) {
			err = otlp_rd__want(r, &f, WIRE_LEN, "trace_id");
			ok_trace = !err && wire__left(&f.sub) == sizeof(l.trace_id);
			if (ok_trace)
				memcpy(l.trace_id, wire__pos(&f.sub), sizeof(l.trace_id));
		} else if (f.num == OTLP_TAG(Link, span_id)) {
			err = otlp_rd__want(r, &f, WIRE_LEN, "span_id");
			ok_span = !err && wire__left(&f.sub) == sizeof(l.span_id);
			if (ok_span)
				memcpy(l.span_id, wire__pos(&f.sub), sizeof(l.span_id));
		}
	}
	if (err)
		return err;
	out = otlp_rd__vec_push(&r->links, sizeof(*out), &err);
	if (!out)
		return err == -E2BIG ? otlp_rd__fail(r, err, "link_table: too many entries")
				     : otlp_rd__nomem(r);
	if (ok_trace && ok_span)
		*out = l;
	r->nlinks = r->links.n;
	return 0;
}

static int read_string(struct rd *r, const struct wire_field *f)
{
	const char **slot;
	int err = 0;

	slot = otlp_rd__vec_push(&r->strings, sizeof(*slot), &err);
	if (!slot)
		return otlp_rd__fail(r, err, "too many strings");
	return otlp_rd__string(r, f, "string", slot);
}

/* The dictionary tables of messages: their reader and where they go. */
static const struct {
	__u32 num;
	int (*read)(struct rd *, struct wire *);
	const char *name;
	size_t vec; /* offset of the struct vec in struct rd */
} dict_tables[] = {
	{OTLP_TAG(ProfilesDictionary, mapping_table), read_mapping, "mapping_table",
	 offsetof(struct rd, mappings)},
	{OTLP_TAG(ProfilesDictionary, location_table), read_location, "location_table",
	 offsetof(struct rd, locations)},
	{OTLP_TAG(ProfilesDictionary, function_table), read_function, "function_table",
	 offsetof(struct rd, functions)},
	{OTLP_TAG(ProfilesDictionary, link_table), read_link, "link_table",
	 offsetof(struct rd, links)},
	{OTLP_TAG(ProfilesDictionary, attribute_table), read_attr, "attribute_table",
	 offsetof(struct rd, attrs)},
	{OTLP_TAG(ProfilesDictionary, stack_table), read_stack, "stack_table",
	 offsetof(struct rd, stacks)},
};

int otlp_rd__read_dictionary(struct rd *r, struct wire *s)
{
	struct wire_field f;
	struct wire sub;
	int err = 0;
	size_t i;

	r->ctx = CTX_DICT;
	while (!err && otlp_rd__next(r, s, &f, &err)) {
		if (f.num == OTLP_TAG(ProfilesDictionary, string_table)) {
			r->ctx = CTX_ENTRY;
			r->table = "string_table";
			r->ientry = r->strings.n;
			err = read_string(r, &f);
			r->ctx = CTX_DICT;
			continue;
		}
		for (i = 0; i < ARRAY_LEN(dict_tables) && dict_tables[i].num != f.num; i++)
			;
		if (i == ARRAY_LEN(dict_tables))
			continue;
		err = otlp_rd__sub(r, &f, dict_tables[i].name, &sub);
		if (err)
			break;
		r->ctx = CTX_ENTRY;
		r->table = dict_tables[i].name;
		r->ientry = ((struct vec *)((char *)r + dict_tables[i].vec))->n;
		err = dict_tables[i].read(r, &sub);
		r->ctx = CTX_DICT;
	}
	return err;
}

/* ---- validation and resolution ------------------------------------------------ */

const char *otlp_rd__str(const struct rd *r, __u64 idx)
{
	return *VEC_AT(r->strings, const char *, idx);
}

int otlp_rd__check_str(struct rd *r, const char *field, __u64 idx)
{
	if (idx < r->strings.n)
		return 0;
	return otlp_rd__out_of_range(r, field, idx, "string_table", r->strings.n);
}

int otlp_rd__check_attrs(struct rd *r, const struct ids *pool, size_t off, size_t n)
{
	size_t i;

	for (i = off; i < off + n; i++)
		if (pool->v[i] >= r->attrs.n)
			return otlp_rd__out_of_range(r, "attribute index", pool->v[i],
						     "attribute_table", r->attrs.n);
	return 0;
}

/* A table missing from the input reads as holding only its zero value
 * (proto3: an unset index is 0). */
static int ensure_zero_entries(struct rd *r)
{
	static const char *const empty = "";
	int err = 0;

	if (!r->strings.n && otlp_rd__vec_push(&r->strings, sizeof(empty), &err))
		*VEC_AT(r->strings, const char *, 0) = empty;
	if (!err && !r->mappings.n)
		otlp_rd__vec_push(&r->mappings, sizeof(struct r_mapping), &err);
	if (!err && !r->locations.n)
		otlp_rd__vec_push(&r->locations, sizeof(struct r_location), &err);
	if (!err && !r->functions.n)
		otlp_rd__vec_push(&r->functions, sizeof(struct r_function), &err);
	if (!err && !r->attrs.n)
		otlp_rd__vec_push(&r->attrs, sizeof(struct r_attr), &err);
	if (!err && !r->stacks.n)
		otlp_rd__vec_push(&r->stacks, sizeof(struct r_stack), &err);
	if (!r->nlinks)
		r->nlinks = 1;
	return err ? otlp_rd__nomem(r) : 0;
}

static enum role attr_role(const char *key)
{
	static const struct {
		const char *key;
		enum role role;
	} roles[] = {
		{"thread.id", ROLE_THREAD_ID},
		{"thread.name", ROLE_THREAD_NAME},
		{PROFILE_ATTR_CPU, ROLE_CPU},
		{"profile.frame.type", ROLE_FRAME_TYPE},
		{"process.executable.build_id.gnu", ROLE_BUILD_ID},
		{"pprof.mapping.has_functions", ROLE_HAS_FUNCTIONS},
		{"pprof.mapping.has_filenames", ROLE_HAS_FILENAMES},
		{"pprof.mapping.has_line_numbers", ROLE_HAS_LINE_NUMBERS},
		{"pprof.mapping.has_inline_frames", ROLE_HAS_INLINE_FRAMES},
		{"process.executable.build_id.htlhash", ROLE_HTLHASH},
		{"process.executable.build_id.go", ROLE_GO_BUILD_ID},
		{PROFILE_ATTR_SAMPLES_DROPPED, ROLE_DROPPED},
		{PROFILE_ATTR_SAMPLES_TRUNCATED, ROLE_TRUNCATED},
		{PROFILE_ATTR_SAMPLES_STACK_MISSING, ROLE_STACK_MISSING},
		{PROFILE_ATTR_OFF_CPU_STATE, ROLE_OFF_CPU_STATE},
		{PROFILE_ATTR_OFF_CPU_SWITCHES, ROLE_OFF_CPU_SWITCHES},
		{PROFILE_ATTR_SAMPLES_TRUNCATED_DEPTH, ROLE_TRUNCATED_DEPTH},
		{PROFILE_ATTR_SAMPLES_THROTTLED, ROLE_THROTTLED},
		{PROFILE_ATTR_SAMPLES_UNTIMED, ROLE_UNTIMED},
		{PROFILE_ATTR_PPROF_COMMENT, ROLE_PPROF_COMMENT},
		{PROFILE_ATTR_PPROF_DROP_FRAMES, ROLE_PPROF_DROP_FRAMES},
		{PROFILE_ATTR_PPROF_KEEP_FRAMES, ROLE_PPROF_KEEP_FRAMES},
		{PROFILE_ATTR_PPROF_DEFAULT_SAMPLE_TYPE, ROLE_PPROF_DEFAULT_SAMPLE_TYPE},
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(roles); i++)
		if (!strcmp(key, roles[i].key))
			return roles[i].role;
	return ROLE_NONE;
}

/* Line @i of line_fns (range-checked) as the model's input. A function
 * without a name is named by its system name, else its file name. */
static void read_frame_line(struct rd *r, size_t i, struct profile_line *out)
{
	const struct r_function *fn = VEC_AT(r->functions, struct r_function, r->line_fns.v[i]);
	const struct r_linepos *pos = VEC_AT(r->line_pos, struct r_linepos, i);
	const char *name = otlp_rd__str(r, fn->name);
	const char *sys = otlp_rd__str(r, fn->system_name);
	const char *file = otlp_rd__str(r, fn->filename);

	if (!*name)
		name = *sys ? sys : file;
	out->function = *name ? name : NULL;
	/* An empty system name stays empty (NULL would make it the name). */
	out->system_name = *sys || *name ? sys : NULL;
	out->filename = *file ? file : NULL;
	out->start_line = fn->start_line;
	out->line = pos->line;
	out->column = pos->column;
}

/* Check the attribute table's string indices; note each key's role. */
static int resolve_attrs(struct rd *r)
{
	size_t i;
	int err = 0;

	r->table = "attribute_table";
	for (i = 0; i < r->attrs.n && !err; i++) {
		struct r_attr *a = VEC_AT(r->attrs, struct r_attr, i);

		r->ientry = i;
		err = otlp_rd__check_str(r, "key_strindex", a->key);
		err = err ?: otlp_rd__check_str(r, "unit_strindex", a->unit);
		if (!err && a->v.has_strindex) {
			err = otlp_rd__check_str(r, "value.string_value_strindex", a->v.strindex);
			if (!err)
				a->v.str = otlp_rd__str(r, a->v.strindex);
		}
		if (!err)
			a->role = attr_role(otlp_rd__str(r, a->key));
	}
	return err;
}

/* Check the function table's string indices. */
static int resolve_functions(struct rd *r)
{
	size_t i;
	int err = 0;

	r->table = "function_table";
	for (i = 0; i < r->functions.n && !err; i++) {
		const struct r_function *f = VEC_AT(r->functions, struct r_function, i);

		r->ientry = i;
		err = otlp_rd__check_str(r, "name_strindex", f->name);
		err = err ?: otlp_rd__check_str(r, "system_name_strindex", f->system_name);
		err = err ?: otlp_rd__check_str(r, "filename_strindex", f->filename);
	}
	return err;
}

/* The flags and build ids among mapping @m's attributes, into @d. */
static void mapping_attrs(struct rd *r, const struct r_mapping *m, struct profile_mapping_desc *d)
{
	size_t j;

	for (j = 0; j < m->nattrs; j++) {
		const struct r_attr *a =
			VEC_AT(r->attrs, struct r_attr, r->map_attrs.v[m->attr_off + j]);

		if (a->role >= ROLE_HAS_FUNCTIONS && a->role <= ROLE_HAS_INLINE_FRAMES &&
		    a->v.kind == VAL_BOOL && a->v.num)
			d->flags |= 1u << (a->role - ROLE_HAS_FUNCTIONS);
		if (a->v.kind != VAL_STR)
			continue;
		if (a->role == ROLE_BUILD_ID)
			d->build_id = a->v.str;
		else if (a->role == ROLE_HTLHASH)
			d->htlhash = a->v.str;
		else if (a->role == ROLE_GO_BUILD_ID)
			d->go_build_id = a->v.str;
	}
}

/* Check the mapping table; build the mapping descs. */
static int resolve_mappings(struct rd *r)
{
	size_t i;
	int err = 0;

	r->table = "mapping_table";
	r->mdescs = calloc(r->mappings.n, sizeof(*r->mdescs));
	if (!r->mdescs)
		return otlp_rd__nomem(r);
	for (i = 0; i < r->mappings.n && !err; i++) {
		const struct r_mapping *m = VEC_AT(r->mappings, struct r_mapping, i);
		struct profile_mapping_desc *d = &r->mdescs[i];

		r->ientry = i;
		err = otlp_rd__check_str(r, "filename_strindex", m->filename);
		err = err ?: otlp_rd__check_attrs(r, &r->map_attrs, m->attr_off, m->nattrs);
		if (err)
			break;
		d->start = m->start;
		d->limit = m->limit;
		d->file_offset = m->offset;
		d->path = otlp_rd__str(r, m->filename);
		mapping_attrs(r, m, d);
	}
	return err;
}

/* The frame of location @l: address, mapping, the name of its first line's
 * function, and its type. */
static void location_frame(struct rd *r, const struct r_location *l, struct profile_frame *f)
{
	size_t j;

	f->address = l->address;
	/* Index 0 is "no mapping"; an empty range is unusable. */
	if (l->mapping && r->mdescs[l->mapping].start < r->mdescs[l->mapping].limit)
		f->mapping = &r->mdescs[l->mapping];
	/* The function of lines[0] names the frame. */
	for (j = 0; j < l->nlines; j++)
		read_frame_line(r, l->line_off + j, &r->llines[l->line_off + j]);
	if (l->nlines) {
		f->lines = &r->llines[l->line_off];
		f->nlines = l->nlines;
		f->function = f->lines[0].function;
		f->system_name = f->lines[0].system_name;
	}
	f->type = PROFILE_FRAME_NATIVE;
	for (j = 0; j < l->nattrs; j++) {
		const struct r_attr *a =
			VEC_AT(r->attrs, struct r_attr, r->loc_attrs.v[l->attr_off + j]);

		if (a->role != ROLE_FRAME_TYPE || a->v.kind != VAL_STR || !*a->v.str)
			continue;
		f->type_name = NULL;
		if (!strcmp(a->v.str, "kernel"))
			f->type = PROFILE_FRAME_KERNEL;
		else if (!strcmp(a->v.str, "native"))
			f->type = PROFILE_FRAME_NATIVE;
		else
			f->type_name = a->v.str;
	}
}

/* Check the location table's references; build the frames. */
static int resolve_locations(struct rd *r)
{
	size_t i, j;
	int err = 0;

	r->table = "location_table";
	r->lframes = calloc(r->locations.n, sizeof(*r->lframes));
	r->llines = calloc(r->line_fns.n + 1, sizeof(*r->llines));
	r->lmodel = malloc(r->locations.n * sizeof(*r->lmodel));
	if (!r->lframes || !r->llines || !r->lmodel)
		return otlp_rd__nomem(r);
	memset(r->lmodel, 0xff, r->locations.n * sizeof(*r->lmodel));
	for (i = 0; i < r->locations.n && !err; i++) {
		const struct r_location *l = VEC_AT(r->locations, struct r_location, i);

		r->ientry = i;
		if (l->mapping >= r->mappings.n)
			return otlp_rd__out_of_range(r, "mapping_index", l->mapping,
						     "mapping_table", r->mappings.n);
		for (j = 0; j < l->nlines; j++)
			if (r->line_fns.v[l->line_off + j] >= r->functions.n)
				return otlp_rd__out_of_range(r, "lines.function_index",
							     r->line_fns.v[l->line_off + j],
							     "function_table", r->functions.n);
		err = otlp_rd__check_attrs(r, &r->loc_attrs, l->attr_off, l->nattrs);
		if (!err)
			location_frame(r, l, &r->lframes[i]);
	}
	return err;
}

/* Check the stack table's location indices. */
static int resolve_stacks(struct rd *r)
{
	size_t i, j;

	r->table = "stack_table";
	r->smodel = malloc(r->stacks.n * sizeof(*r->smodel));
	if (!r->smodel)
		return otlp_rd__nomem(r);
	memset(r->smodel, 0xff, r->stacks.n * sizeof(*r->smodel));
	for (i = 0; i < r->stacks.n; i++) {
		const struct r_stack *st = VEC_AT(r->stacks, struct r_stack, i);

		r->ientry = i;
		for (j = 0; j < st->n; j++)
			if (r->stack_locs.v[st->off + j] >= r->locations.n)
				return otlp_rd__out_of_range(r, "location index",
							     r->stack_locs.v[st->off + j],
							     "location_table", r->locations.n);
	}
	return 0;
}

int otlp_rd__resolve_dictionary(struct rd *r)
{
	int err;

	err = ensure_zero_entries(r);
	if (err)
		return err;
	r->ctx = CTX_ENTRY;
	err = resolve_attrs(r);
	err = err ?: resolve_functions(r);
	err = err ?: resolve_mappings(r);
	err = err ?: resolve_locations(r);
	err = err ?: resolve_stacks(r);
	return err;
}
