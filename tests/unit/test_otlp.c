/* test_otlp.c - OTLP encoder: decode the output with nanopb and compare it
 * with the model (round trip), check zero entries, a few exact bytes, the
 * empty profile, the size cap, and the encoding speed of a large model. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pb_decode.h>

#include "opentelemetry/proto/profiles/v1development/profiles.pb.h"

#include "util/buf.h"
#include "formats/otlp.h"
#include "model/profile.h"
#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define PF(x) opentelemetry_proto_profiles_v1development_##x
#define PC(x) opentelemetry_proto_common_v1_##x

#define SMALL_MAX 8

/* ---- decoded form ---- */

struct list {
	__u32 n;
	__u64 v[SMALL_MAX];
};

struct d_str {
	char *s;
	size_t len;
};

struct d_map {
	PF(Mapping) m;
	struct list attrs;
	int empty;
};

struct d_loc {
	PF(Location) l;
	struct list attrs;
	__u32 nlines, function;
	int empty;
};

struct d_fn {
	PF(Function) f;
	int empty;
};

struct d_attr {
	PF(KeyValueAndUnit) kv;
	char *str;
	int empty;
};

struct d_stack {
	size_t off, n;
	int empty;
};

struct d_sample {
	PF(Sample) s;
	struct list attrs, values, ts;
};

struct d_kv {
	char *key, *str;
	PC(AnyValue) v;
};

struct vec {
	void *d;
	size_t n, cap, sz;
};

struct d_res {
	struct vec kvs; /* struct d_kv */
	char *scope_name, *scope_version;
	int nscopes, nprofiles;
	PF(Profile) prof;
	struct vec samples; /* struct d_sample */
};

struct decoded {
	struct vec strings, maps, locs, fns, attrs, stacks, stack_locs, res;
	size_t nlinks;
	int link0_ok;
};

static void *vec_push(struct vec *v, size_t sz)
{
	void *n;

	v->sz = sz;
	if (v->n == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 16;

		n = realloc(v->d, ncap * sz);
		if (!n)
			return NULL;
		v->d = n;
		v->cap = ncap;
	}
	n = (char *)v->d + v->n++ * sz;
	memset(n, 0, sz);
	return n;
}

#define AT(v, type, i) (&((type *)(v).d)[i])

static bool read_str(pb_istream_t *s, char **out)
{
	size_t len = s->bytes_left;
	char *str = malloc(len + 1);

	if (!str || !pb_read(s, (pb_byte_t *)str, len)) {
		free(str);
		return false;
	}
	str[len] = 0;
	free(*out);
	*out = str;
	return true;
}

static bool dec_str(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	(void)f;
	return read_str(s, (char **)*arg);
}

/* One varint of a (packed or not) repeated integer field into a list. */
static bool dec_list(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct list *l = *arg;
	uint64_t v;

	if (PB_LTYPE(f->type) == PB_LTYPE_FIXED64) {
		if (!pb_decode_fixed64(s, &v))
			return false;
	} else if (!pb_decode_varint(s, &v)) {
		return false;
	}
	if (l->n >= SMALL_MAX)
		return false;
	l->v[l->n++] = v;
	return true;
}

static bool dec_string_entry(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_str *e = vec_push(*arg, sizeof(*e));

	(void)f;
	if (!e)
		return false;
	e->len = s->bytes_left;
	return read_str(s, &e->s);
}

static bool dec_mapping(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_map *e = vec_push(*arg, sizeof(*e));

	(void)f;
	if (!e)
		return false;
	e->empty = s->bytes_left == 0;
	e->m.attribute_indices.funcs.decode = dec_list;
	e->m.attribute_indices.arg = &e->attrs;
	return pb_decode(s, PF(Mapping_fields), &e->m);
}

static bool dec_line(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_loc *e = *arg;
	PF(Line) l = PF(Line_init_zero);

	(void)f;
	if (!pb_decode(s, PF(Line_fields), &l))
		return false;
	e->nlines++;
	e->function = l.function_index;
	return true;
}

static bool dec_location(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_loc *e = vec_push(*arg, sizeof(*e));

	(void)f;
	if (!e)
		return false;
	e->empty = s->bytes_left == 0;
	e->l.attribute_indices.funcs.decode = dec_list;
	e->l.attribute_indices.arg = &e->attrs;
	e->l.lines.funcs.decode = dec_line;
	e->l.lines.arg = e;
	return pb_decode(s, PF(Location_fields), &e->l);
}

static bool dec_function(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_fn *e = vec_push(*arg, sizeof(*e));

	(void)f;
	if (!e)
		return false;
	e->empty = s->bytes_left == 0;
	return pb_decode(s, PF(Function_fields), &e->f);
}

static bool dec_link(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct decoded *d = *arg;
	PF(Link) l = PF(Link_init_zero);

	(void)f;
	if (!pb_decode(s, PF(Link_fields), &l))
		return false;
	if (!d->nlinks++)
		d->link0_ok = l.trace_id.size == 0 && l.span_id.size == 0;
	return true;
}

static bool dec_attr(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_attr *e = vec_push(*arg, sizeof(*e));

	(void)f;
	if (!e)
		return false;
	e->empty = s->bytes_left == 0;
	e->kv.value.value.string_value.funcs.decode = dec_str;
	e->kv.value.value.string_value.arg = &e->str;
	return pb_decode(s, PF(KeyValueAndUnit_fields), &e->kv);
}

static bool dec_stack_loc(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	__u32 *v = vec_push(*arg, sizeof(*v));
	uint64_t x;

	(void)f;
	if (!v || !pb_decode_varint(s, &x))
		return false;
	*v = x;
	return true;
}

static bool dec_stack(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct decoded *d = *arg;
	struct d_stack *e = vec_push(&d->stacks, sizeof(*e));
	PF(Stack) st = PF(Stack_init_zero);

	(void)f;
	if (!e)
		return false;
	e->empty = s->bytes_left == 0;
	e->off = d->stack_locs.n;
	st.location_indices.funcs.decode = dec_stack_loc;
	st.location_indices.arg = &d->stack_locs;
	if (!pb_decode(s, PF(Stack_fields), &st))
		return false;
	e->n = d->stack_locs.n - e->off;
	return true;
}

static bool dec_sample(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_sample *e = vec_push(*arg, sizeof(*e));

	(void)f;
	if (!e)
		return false;
	e->s.attribute_indices.funcs.decode = dec_list;
	e->s.attribute_indices.arg = &e->attrs;
	e->s.values.funcs.decode = dec_list;
	e->s.values.arg = &e->values;
	e->s.timestamps_unix_nano.funcs.decode = dec_list;
	e->s.timestamps_unix_nano.arg = &e->ts;
	return pb_decode(s, PF(Sample_fields), &e->s);
}

static bool dec_profile(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_res *r = *arg;

	(void)f;
	if (r->nprofiles++)
		return false;
	r->prof.samples.funcs.decode = dec_sample;
	r->prof.samples.arg = &r->samples;
	return pb_decode(s, PF(Profile_fields), &r->prof);
}

static bool dec_scope(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_res *r = *arg;
	PF(ScopeProfiles) sp = PF(ScopeProfiles_init_zero);

	(void)f;
	r->nscopes++;
	sp.scope.name.funcs.decode = dec_str;
	sp.scope.name.arg = &r->scope_name;
	sp.scope.version.funcs.decode = dec_str;
	sp.scope.version.arg = &r->scope_version;
	sp.profiles.funcs.decode = dec_profile;
	sp.profiles.arg = r;
	return pb_decode(s, PF(ScopeProfiles_fields), &sp);
}

static bool dec_kv(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_kv *e = vec_push(*arg, sizeof(*e));
	PC(KeyValue) kv = PC(KeyValue_init_zero);

	(void)f;
	if (!e)
		return false;
	kv.key.funcs.decode = dec_str;
	kv.key.arg = &e->key;
	kv.value.value.string_value.funcs.decode = dec_str;
	kv.value.value.string_value.arg = &e->str;
	if (!pb_decode(s, PC(KeyValue_fields), &kv))
		return false;
	e->v = kv.value;
	return true;
}

static bool dec_res_attrs(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	opentelemetry_proto_resource_v1_Resource res = opentelemetry_proto_resource_v1_Resource_init_zero;

	(void)f;
	res.attributes.funcs.decode = dec_kv;
	res.attributes.arg = *arg;
	return pb_decode(s, opentelemetry_proto_resource_v1_Resource_fields, &res);
}

static bool dec_resource(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	struct d_res *r = vec_push(*arg, sizeof(*r));
	PF(ResourceProfiles) rp = PF(ResourceProfiles_init_zero);

	(void)f;
	if (!r)
		return false;
	rp.resource.funcs.decode = dec_res_attrs;
	rp.resource.arg = &r->kvs;
	rp.scope_profiles.funcs.decode = dec_scope;
	rp.scope_profiles.arg = r;
	return pb_decode(s, PF(ResourceProfiles_fields), &rp);
}

static int decode(const struct buf *b, struct decoded *d)
{
	PF(ProfilesData) pd = PF(ProfilesData_init_zero);
	PF(ProfilesDictionary) *dict = &pd.dictionary;
	pb_istream_t s = pb_istream_from_buffer(b->data, b->len);

	memset(d, 0, sizeof(*d));
	pd.resource_profiles.funcs.decode = dec_resource;
	pd.resource_profiles.arg = &d->res;
	dict->string_table.funcs.decode = dec_string_entry;
	dict->string_table.arg = &d->strings;
	dict->mapping_table.funcs.decode = dec_mapping;
	dict->mapping_table.arg = &d->maps;
	dict->location_table.funcs.decode = dec_location;
	dict->location_table.arg = &d->locs;
	dict->function_table.funcs.decode = dec_function;
	dict->function_table.arg = &d->fns;
	dict->link_table.funcs.decode = dec_link;
	dict->link_table.arg = d;
	dict->attribute_table.funcs.decode = dec_attr;
	dict->attribute_table.arg = &d->attrs;
	dict->stack_table.funcs.decode = dec_stack;
	dict->stack_table.arg = d;
	return pb_decode(&s, PF(ProfilesData_fields), &pd) ? 0 : -EIO;
}

static void decoded_free(struct decoded *d)
{
	size_t i, j;

	for (i = 0; i < d->strings.n; i++)
		free(AT(d->strings, struct d_str, i)->s);
	for (i = 0; i < d->attrs.n; i++)
		free(AT(d->attrs, struct d_attr, i)->str);
	for (i = 0; i < d->res.n; i++) {
		struct d_res *r = AT(d->res, struct d_res, i);

		for (j = 0; j < r->kvs.n; j++) {
			free(AT(r->kvs, struct d_kv, j)->key);
			free(AT(r->kvs, struct d_kv, j)->str);
		}
		free(r->kvs.d);
		free(r->samples.d);
		free(r->scope_name);
		free(r->scope_version);
	}
	free(d->strings.d);
	free(d->maps.d);
	free(d->locs.d);
	free(d->fns.d);
	free(d->attrs.d);
	free(d->stacks.d);
	free(d->stack_locs.d);
	free(d->res.d);
}

/* Resource attribute @key of @r, or NULL. */
static const struct d_kv *res_attr(const struct d_res *r, const char *key)
{
	size_t i;

	for (i = 0; i < r->kvs.n; i++) {
		const struct d_kv *kv = AT(r->kvs, struct d_kv, i);

		if (kv->key && !strcmp(kv->key, key))
			return kv;
	}
	return NULL;
}

/* Compare every table and every sample of @d with @p; 0 when equal, else
 * the line of the first difference. */
static int compare(const struct profile *p, const struct decoded *d)
{
	__u32 st, su, pt, pu;
	__u8 id[16];
	size_t i, j, len, n;

	if (d->strings.n != profile__string_count(p) || d->maps.n != profile__mapping_count(p) ||
	    d->locs.n != profile__location_count(p) || d->fns.n != profile__function_count(p) ||
	    d->attrs.n != profile__attr_count(p) || d->stacks.n != profile__stack_count(p) ||
	    d->nlinks != 1 || !d->link0_ok)
		return __LINE__;
	for (i = 0; i < d->strings.n; i++) {
		const struct d_str *e = AT(d->strings, struct d_str, i);
		const char *s = profile__string(p, i, &len);

		if (e->len != len || memcmp(e->s, s, len) || (!i && len))
			return __LINE__;
	}
	for (i = 0; i < d->maps.n; i++) {
		const struct d_map *e = AT(d->maps, struct d_map, i);
		const struct profile_mapping_entry *m = profile__mapping(p, i);

		if (e->m.memory_start != m->start || e->m.memory_limit != m->limit ||
		    e->m.file_offset != m->file_offset ||
		    (__u32)e->m.filename_strindex != m->filename ||
		    e->attrs.n != (m->attr ? 1 : 0) || (m->attr && e->attrs.v[0] != m->attr) ||
		    (!i && !e->empty))
			return __LINE__;
	}
	for (i = 0; i < d->locs.n; i++) {
		const struct d_loc *e = AT(d->locs, struct d_loc, i);
		const struct profile_location_entry *l = profile__location(p, i);

		if (e->l.address != l->address || (__u32)e->l.mapping_index != l->mapping ||
		    e->nlines != (l->lines ? 1 : 0) || e->function != profile__location_function(p, l) ||
		    e->attrs.n != (l->attr ? 1 : 0) || (l->attr && e->attrs.v[0] != l->attr) ||
		    (!i && !e->empty))
			return __LINE__;
	}
	for (i = 0; i < d->fns.n; i++) {
		const struct d_fn *e = AT(d->fns, struct d_fn, i);
		const struct profile_function_entry *f = profile__function(p, i);

		if ((__u32)e->f.name_strindex != f->name ||
		    (__u32)e->f.system_name_strindex != f->system_name ||
		    (__u32)e->f.filename_strindex != f->filename || (!i && !e->empty))
			return __LINE__;
	}
	for (i = 0; i < d->attrs.n; i++) {
		const struct d_attr *e = AT(d->attrs, struct d_attr, i);
		const struct profile_attr_entry *a = profile__attr(p, i);

		if ((__u32)e->kv.key_strindex != a->key || (__u32)e->kv.unit_strindex != a->unit ||
		    (!i && !e->empty))
			return __LINE__;
		/* nanopb leaves which_value alone for a callback member. */
		if (a->kind == PROFILE_ATTR_STR &&
		    (!e->kv.has_value || !e->str || strcmp(e->str, a->str_value)))
			return __LINE__;
		if (a->kind == PROFILE_ATTR_INT &&
		    (e->kv.value.which_value != PC(AnyValue_int_value_tag) ||
		     e->kv.value.value.int_value != a->int_value))
			return __LINE__;
		if (a->kind == PROFILE_ATTR_NONE && e->kv.has_value)
			return __LINE__;
	}
	for (i = 0; i < d->stacks.n; i++) {
		const struct d_stack *e = AT(d->stacks, struct d_stack, i);
		const __u32 *locs = profile__stack(p, i, &n);

		if (e->n != n || (!i && !e->empty))
			return __LINE__;
		for (j = 0; j < n; j++)
			if (*AT(d->stack_locs, __u32, e->off + j) != locs[j])
				return __LINE__;
	}

	profile__value_types(p, &st, &su, &pt, &pu);
	n = profile__process_count(p);
	if (d->res.n != (n ? n : 1))
		return __LINE__;
	for (i = 0; i < d->res.n; i++) {
		const struct d_res *r = AT(d->res, struct d_res, i);
		const struct profile_meta *meta = profile__meta(p);
		size_t ns = n ? profile__sample_count(p, i) : 0;

		if (r->nscopes != 1 || r->nprofiles != 1 || !r->prof.has_sample_type ||
		    !r->prof.has_period_type || (__u32)r->prof.sample_type.type_strindex != st ||
		    (__u32)r->prof.sample_type.unit_strindex != su ||
		    (__u32)r->prof.period_type.type_strindex != pt ||
		    (__u32)r->prof.period_type.unit_strindex != pu ||
		    r->prof.period != (int64_t)meta->period_ns ||
		    r->prof.time_unix_nano != meta->time_unix_nano ||
		    r->prof.duration_nano != meta->duration_nano || r->prof.profile_id.size != 16)
			return __LINE__;
		/* Each Profile has its own id; the first keeps the meta's. */
		profile__id_of(p, n ? i : SIZE_MAX, id);
		if (memcmp(r->prof.profile_id.bytes, id, 16) ||
		    (i == 0 && memcmp(id, meta->profile_id, 16)))
			return __LINE__;
		for (j = 0; j < i; j++)
			if (!memcmp(AT(d->res, struct d_res, j)->prof.profile_id.bytes, id, 16))
				return __LINE__;
		if (r->samples.n != ns)
			return __LINE__;
		for (j = 0; j < ns; j++) {
			const struct d_sample *e = AT(r->samples, struct d_sample, j);
			const struct profile_sample_entry *s = profile__sample(p, i, j);
			__u32 k;

			if ((__u32)e->s.stack_index != s->stack || e->s.link_index ||
			    e->values.n != 1 || e->values.v[0] != s->value || e->ts.n ||
			    e->attrs.n != s->nattrs)
				return __LINE__;
			for (k = 0; k < s->nattrs; k++)
				if (e->attrs.v[k] != s->attrs[k])
					return __LINE__;
		}
		if (n) {
			const struct profile_process_desc *pd = profile__process(p, i);
			const struct d_kv *kv = res_attr(r, "process.pid");

			if (!kv || kv->v.which_value != PC(AnyValue_int_value_tag) ||
			    kv->v.value.int_value != pd->pid)
				return __LINE__;
		}
		if (!res_attr(r, "host.name") ||
		    strcmp(res_attr(r, "host.name")->str, meta->host_name))
			return __LINE__;
		if (!r->scope_name || strcmp(r->scope_name, meta->scope_name))
			return __LINE__;
	}
	return 0;
}

/* ---- fixtures ---- */

static void set_meta(struct profile *p)
{
	struct profile_meta m = {
		.time_unix_nano = 0x0102030405060708ull,
		.duration_nano = 2000000000ull,
		.period_ns = 10000000ull,
		.profile_id = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		.host_name = "testhost",
		.host_arch = "amd64",
		.os_type = "linux",
		.scope_name = "profcap",
		.scope_version = "0.1",
	};

	profile__set_meta(p, &m);
}

static struct profile *tiny_profile(void)
{
	static const struct profile_mapping_desc libc = {
		.start = 0x7f0000000000ull,
		.limit = 0x7f0000200000ull,
		.file_offset = 0x1000,
		.path = "/usr/lib/libc.so.6",
		.build_id = "abcdef0123",
	};
	static const struct profile_mapping_desc exe = {
		.start = 0x400000,
		.limit = 0x500000,
		.path = "/usr/bin/app",
	};
	const struct profile_frame f1[] = {
		{.address = 0x7f0000001234ull, .mapping = &libc, .function = "memcpy"},
		{.address = 0x401000, .mapping = &exe, .function = "main"},
	};
	const struct profile_frame f2[] = {
		{.address = 0xffffffff81000000ull,
		 .function = "do_syscall_64",
		 .type = PROFILE_FRAME_KERNEL},
		{.address = 0x401234, .mapping = &exe},
	};
	const struct profile_process_desc proc = {
		.pid = 4242,
		.exe_name = "app",
		.exe_path = "/usr/bin/app",
		.cmdline = "app --x",
	};
	const struct profile_process_desc proc2 = {.pid = 7};
	struct profile *p = profile__new();

	if (!p)
		return NULL;
	set_meta(p);
	if (profile__add_sample(p, &proc, 4243, "worker", f1, 2, 3) ||
	    profile__add_sample(p, &proc, 4242, NULL, f2, 2, 5) ||
	    profile__add_sample(p, &proc, 4243, "worker", f1, 2, 1) ||
	    profile__add_sample(p, &proc2, 7, NULL, f2, 1, 2) ||
	    profile__add_sample(p, &proc2, 7, NULL, NULL, 0, 1)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

static int contains(const struct buf *b, const void *pat, size_t n)
{
	size_t i;

	for (i = 0; i + n <= b->len; i++)
		if (!memcmp(b->data + i, pat, n))
			return 1;
	return 0;
}

/* With OTLP_TEST_DUMP=DIR set, save @b as DIR/@name.pb (for otlp_check.py). */
static void dump(const char *name, const struct buf *b)
{
	const char *dir = getenv("OTLP_TEST_DUMP");
	char path[512];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s.pb", dir, name);
	f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(b->data, 1, b->len, f);
	fclose(f);
}

/* ---- tests ---- */

TEST(round_trip)
{
	struct profile *p = tiny_profile();
	struct decoded d;
	struct buf b;
	const struct d_res *r;
	int err, line;

	CHECK(p);
	buf__init(&b, 1 << 20);
	err = otlp__encode(p, &b);
	CHECK_EQ_U64(err, 0);
	CHECK(b.len > 0);
	dump("tiny", &b);
	err = decode(&b, &d);
	line = err ? -1 : compare(p, &d);
	r = d.res.n ? AT(d.res, struct d_res, 0) : NULL;
	if (!line && r) {
		/* Spot checks on the values themselves, not only model equality. */
		const struct d_kv *cmd = res_attr(r, "process.command_line");
		const struct d_kv *exe = res_attr(r, "process.executable.path");
		const struct d_res *r2 = AT(d.res, struct d_res, 1);

		if (!cmd || strcmp(cmd->str, "app --x") || !exe || strcmp(exe->str, "/usr/bin/app"))
			line = __LINE__;
		else if (res_attr(r2, "process.command_line") || !res_attr(r2, "os.type"))
			line = __LINE__;
		else if (r->samples.n != 2 || AT(r->samples, struct d_sample, 0)->values.v[0] != 4)
			line = __LINE__;
		else if (strcmp(r->scope_version, "0.1"))
			line = __LINE__;
	}
	decoded_free(&d);
	buf__release(&b);
	profile__free(p);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(line, 0);
}

TEST(exact_bytes)
{
	/* Link 0: field 4, the zero value Link{} (length 0), followed by
	 * string_table[0] "" (field 5, length 0). */
	static const unsigned char link0[] = {0x22, 0x00, 0x2a, 0x00};
	/* Profile: time_unix_nano is fixed64 field 3, little endian. */
	static const unsigned char time[] = {0x19, 8, 7, 6, 5, 4, 3, 2, 1};
	/* Profile: duration_nano field 4 = 2e9 as varint, period_type (5) =
	 * {3, 4} (strings "cpu", "nanoseconds"), period field 6 = 1e7. */
	static const unsigned char dur[] = {0x20, 0x80, 0xa8, 0xd6, 0xb9, 0x07, 0x2a, 0x04, 0x08,
					    0x03, 0x10, 0x04, 0x30, 0x80, 0xad, 0xe2, 0x04};
	/* Profile: sample_type (1) = {1, 2} ("samples", "count"). */
	static const unsigned char st[] = {0x0a, 0x04, 0x08, 0x01, 0x10, 0x02};
	/* The dictionary opens with mapping_table[0] = {} (field 1, length 0). */
	static const unsigned char map0[] = {0x0a, 0x00};
	struct profile *p = profile__new();
	pb_istream_t s;
	uint64_t len;
	size_t dict;
	struct buf b;
	int err;

	CHECK(p);
	set_meta(p);
	buf__init(&b, 1 << 20);
	err = otlp__encode(p, &b);
	if (!err) {
		/* The output is resource_profiles (field 1) then the dictionary
		 * (field 2), whose first entry follows its tag and length. */
		s = pb_istream_from_buffer(b.data + 1, b.len - 1);
		if (b.data[0] != 0x0a || !pb_decode_varint(&s, &len))
			err = -EBADMSG;
		dict = b.len - s.bytes_left + len;
		if (!err && dict + 3 < b.len && b.data[dict] == 0x12) {
			s = pb_istream_from_buffer(b.data + dict + 1, b.len - dict - 1);
			if (!pb_decode_varint(&s, &len) || len != s.bytes_left ||
			    memcmp(b.data + b.len - len, map0, 2))
				err = -EBADMSG;
		} else {
			err = -EBADMSG;
		}
	}
	if (!err && (!contains(&b, link0, sizeof(link0)) || !contains(&b, time, sizeof(time)) ||
		     !contains(&b, dur, sizeof(dur)) || !contains(&b, st, sizeof(st))))
		err = -EBADMSG;
	dump("empty", &b);
	buf__release(&b);
	profile__free(p);
	CHECK_EQ_U64(err, 0);
}

/* Operator attributes reach every resource: they override host.* but never
 * the detected process.* ones, and keys stay unique. */
TEST(operator_resource_attributes)
{
	static const struct profile_kv extra[] = {
		{"service.name", "checkout"},
		{"host.name", "node-7"},
		{"process.pid", "1"},
		{"deployment.environment", "prod"},
		{"service.name", "ignored-duplicate"},
	};
	struct profile *p = tiny_profile();
	struct profile_meta m = *profile__meta(p);
	const struct d_res *r;
	struct decoded d;
	struct buf b;
	size_t i, j, dup = 0;
	int err;

	CHECK(p);
	m.resource = extra;
	m.nresource = sizeof(extra) / sizeof(extra[0]);
	CHECK(!profile__set_meta(p, &m));
	buf__init(&b, 1 << 20);
	CHECK(!otlp__encode(p, &b));
	err = decode(&b, &d);
	CHECK_EQ_U64(err, 0);
	r = AT(d.res, struct d_res, 0);
	CHECK(res_attr(r, "service.name") && !strcmp(res_attr(r, "service.name")->str, "checkout"));
	CHECK(res_attr(r, "host.name") && !strcmp(res_attr(r, "host.name")->str, "node-7"));
	CHECK(res_attr(r, "deployment.environment"));
	CHECK(res_attr(r, "process.pid") && !res_attr(r, "process.pid")->str);
	for (i = 0; i < r->kvs.n; i++)
		for (j = i + 1; j < r->kvs.n; j++)
			dup += !strcmp(AT(r->kvs, struct d_kv, i)->key,
				       AT(r->kvs, struct d_kv, j)->key);
	CHECK_EQ_U64(dup, 0);
	decoded_free(&d);
	buf__release(&b);
	profile__free(p);
}

TEST(empty_profile)
{
	struct profile *p = profile__new();
	struct decoded d;
	struct buf b;
	int err, line = 0;

	CHECK(p);
	set_meta(p);
	buf__init(&b, 1 << 20);
	err = otlp__encode(p, &b);
	CHECK_EQ_U64(err, 0);
	err = decode(&b, &d);
	if (!err)
		line = compare(p, &d);
	if (!err && !line) {
		const struct d_res *r = AT(d.res, struct d_res, 0);

		if (d.res.n != 1 || r->samples.n || res_attr(r, "process.pid") ||
		    strcmp(res_attr(r, "host.arch")->str, "amd64") || d.strings.n != 5 ||
		    d.maps.n != 1 || d.locs.n != 1 || d.fns.n != 1 || d.attrs.n != 1 ||
		    d.stacks.n != 1 || d.nlinks != 1)
			line = __LINE__;
	}
	decoded_free(&d);
	buf__release(&b);
	profile__free(p);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(line, 0);
}

/* A value type no process holds (an off-CPU capture without one CPU
 * sample) gets an empty Profile on the host, so the strings naming it are
 * referenced; the Profiles' ids stay distinct. */
TEST(unused_value_type)
{
	const struct profile_frame f[] = {{.address = 0x401000, .function = "wait"}};
	const struct profile_process_desc proc = {.pid = 9};
	struct profile *p = profile__new();
	struct decoded d;
	struct buf b;
	__u32 off = 0;
	int err, line = 0;

	CHECK(p);
	set_meta(p);
	CHECK_EQ_U64(profile__add_value_type(p, "off_cpu", "nanoseconds", "context_switch",
					     "count", 1, &off), 0);
	CHECK_EQ_U64(off, 1);
	CHECK_EQ_U64(profile__add_typed_sample(p, off, &proc, 9, NULL, NULL, f, 1, 500), 0);
	CHECK(!profile__value_type_used(p, 0) && profile__value_type_used(p, 1));
	buf__init(&b, 1 << 20);
	err = otlp__encode(p, &b);
	CHECK_EQ_U64(err, 0);
	err = decode(&b, &d);
	if (!err) {
		/* Type by type: the empty CPU Profile first, as the model's. */
		const struct d_res *r0 = AT(d.res, struct d_res, 0);
		const struct d_res *r1 = d.res.n == 2 ? AT(d.res, struct d_res, 1) : NULL;
		__u32 st, su, pt, pu;

		profile__value_type(p, 0, &st, &su, &pt, &pu);
		if (!r1 || r0->samples.n || r1->samples.n != 1 ||
		    (__u32)r0->prof.sample_type.type_strindex != st ||
		    (__u32)r0->prof.period_type.type_strindex != pt ||
		    res_attr(r0, "process.pid") || !res_attr(r1, "process.pid") ||
		    !memcmp(r0->prof.profile_id.bytes, r1->prof.profile_id.bytes, 16))
			line = __LINE__;
	}
	decoded_free(&d);
	buf__release(&b);
	profile__free(p);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(line, 0);
}

TEST(cap_and_append)
{
	struct profile *p = tiny_profile();
	struct buf b;
	size_t full;
	int err;

	CHECK(p);
	buf__init(&b, 1 << 20);
	CHECK_EQ_U64(buf__append(&b, "xy", 2), 0);
	err = otlp__encode(p, &b);
	full = b.len - 2;
	if (!err)
		err = memcmp(b.data, "xy", 2) ? -EBADMSG : 0;
	buf__release(&b);
	CHECK_EQ_U64(err, 0);

	/* One byte short of the room needed: -E2BIG, buffer unchanged. */
	buf__init(&b, full + 1);
	CHECK_EQ_U64(buf__append(&b, "xy", 2), 0);
	err = otlp__encode(p, &b);
	CHECK_EQ_U64(b.len, 2);
	buf__release(&b);
	profile__free(p);
	CHECK_EQ_U64(-err, E2BIG);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define BIG_LOCS 100000
#define BIG_STACKS 50000
#define BIG_DEPTH 16
#define BIG_MAPS 8

/* 100k locations, 50k stacks, 1M samples in total: encode in well under a
 * second, and decode back equal. */
TEST(big_model_speed)
{
	static struct profile_mapping_desc maps[BIG_MAPS];
	static char names[BIG_MAPS][32];
	struct profile_frame frames[BIG_DEPTH] = {0};
	struct profile_process_desc proc = {.pid = 1000, .exe_name = "big"};
	struct profile *p = profile__new();
	static char fname[BIG_LOCS / 5][16];
	struct decoded d;
	struct buf b;
	double t0, t1;
	__u32 rnd = 12345;
	size_t i, j;
	int err = 0, line = 0;

	CHECK(p);
	set_meta(p);
	for (i = 0; i < BIG_MAPS; i++) {
		snprintf(names[i], sizeof(names[i]), "/usr/lib/lib%zu.so", i);
		maps[i].start = 0x10000000ull * (i + 1);
		maps[i].limit = maps[i].start + 0x1000000;
		maps[i].path = names[i];
	}
	for (i = 0; i < BIG_LOCS / 5; i++)
		snprintf(fname[i], sizeof(fname[i]), "fn_%zu", i);
	for (i = 0; i < BIG_STACKS && !err; i++) {
		for (j = 0; j < BIG_DEPTH; j++) {
			/* Two fresh locations per stack cover them all; the rest random. */
			size_t loc =
				j < 2 ? i * 2 + j : (rnd = rnd * 1103515245 + 12345) % BIG_LOCS;

			frames[j].address = maps[loc % BIG_MAPS].start + loc * 16;
			frames[j].mapping = &maps[loc % BIG_MAPS];
			frames[j].function = fname[loc % (BIG_LOCS / 5)];
			frames[j].type = PROFILE_FRAME_NATIVE;
		}
		err = profile__add_sample(p, &proc, 1000 + i % 4, "t", frames, BIG_DEPTH, 20);
	}
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(profile__location_count(p), BIG_LOCS + 1);
	CHECK_EQ_U64(profile__total(p), 1000000);

	buf__init(&b, 1u << 30);
	t0 = now_s();
	err = otlp__encode(p, &b);
	t1 = now_s();
	printf("# otlp__encode: %zu locations, %zu stacks, %zu samples -> %zu bytes in %.1f ms\n",
	       profile__location_count(p), profile__stack_count(p), profile__sample_count(p, 0),
	       b.len, (t1 - t0) * 1e3);
	dump("big", &b);
	if (!err)
		err = decode(&b, &d);
	if (!err) {
		line = compare(p, &d);
		decoded_free(&d);
	}
	buf__release(&b);
	profile__free(p);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(line, 0);
	/* The speed bound holds for the real build, not under sanitizers. */
	if (!SANITIZED)
		CHECK(t1 - t0 < 1.0);
}

int main(void)
{
	RUN(round_trip);
	RUN(exact_bytes);
	RUN(empty_profile);
	RUN(unused_value_type);
	RUN(operator_resource_attributes);
	RUN(cap_and_append);
	RUN(big_model_speed);
	return TEST_DONE();
}
