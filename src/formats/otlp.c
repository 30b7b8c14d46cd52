/* otlp.c - OTLP Profiles encoder (see otlp.h).
 *
 * nanopb encodes a submessage twice (a size pass, then a write pass) at every
 * nesting level, so every callback here is a pure function of its argument:
 * running it again produces the same bytes. The deep part, a process's
 * Profile with its samples, is encoded once into a scratch buffer and the
 * outer messages then copy those bytes, and so is its Resource (the
 * attributes of a process, at depth four inline); the dictionary sits at
 * depth one and is streamed straight into the output (tables walked twice,
 * no copy).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <pb_encode.h>

#include "opentelemetry/proto/profiles/v1development/profiles.pb.h"

#include "formats/otlp.h"
#include "formats/pbbuf.h"
#include "model/profile.h"
#include "model/view.h"

/* The generated names carry the whole package; shorten them. */
#define PF(x) opentelemetry_proto_profiles_v1development_##x
#define PC(x) opentelemetry_proto_common_v1_##x

/* A list of unsigned indices or counts written as one packed field. */
struct packed {
	const __u32 *v;
	size_t n;
};

struct res_attrs {
	struct view_resource_attr a[VIEW_MAX_RESOURCE_ATTRS];
	size_t n;
};

/* Samples of one process. */
struct samples_arg {
	const struct profile *p;
	size_t proc;
};

/* A message encoded once, copied at each pass. */
struct bytes_arg {
	const unsigned char *p;
	size_t len;
};

/* The scope of a process's profile and the encoded Profile message. */
struct scope_arg {
	const struct profile_meta *meta; /* NULL when the model has none */
	const unsigned char *profile;
	size_t len;
};

static bool enc_packed(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct packed *pk = *arg;
	size_t i, size = 0;

	if (!pk->n)
		return true;
	for (i = 0; i < pk->n; i++)
		size += pbbuf__varint_len(pk->v[i]);
	if (!pb_encode_tag(s, PB_WT_STRING, f->tag) || !pb_encode_varint(s, size))
		return false;
	for (i = 0; i < pk->n; i++)
		if (!pb_encode_varint(s, pk->v[i]))
			return false;
	return true;
}

/* One packed int64 holding the sample's value. */
static bool enc_value(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const __u64 *v = *arg;

	return pb_encode_tag(s, PB_WT_STRING, f->tag) &&
	       pb_encode_varint(s, pbbuf__varint_len(*v)) && pb_encode_varint(s, *v);
}

/* A sample's occurrences: their values (packed int64) or their times
 * (packed fixed64), as the field says. */
struct occ_arg {
	const struct profile_occurrence *o;
	size_t n;
};

static bool enc_occ_values(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct occ_arg *oa = *arg;
	size_t i, size = 0;

	for (i = 0; i < oa->n; i++)
		size += pbbuf__varint_len(oa->o[i].value);
	if (!pb_encode_tag(s, PB_WT_STRING, f->tag) || !pb_encode_varint(s, size))
		return false;
	for (i = 0; i < oa->n; i++)
		if (!pb_encode_varint(s, oa->o[i].value))
			return false;
	return true;
}

static bool enc_occ_times(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct occ_arg *oa = *arg;
	size_t i;

	if (!pb_encode_tag(s, PB_WT_STRING, f->tag) || !pb_encode_varint(s, oa->n * 8))
		return false;
	for (i = 0; i < oa->n; i++)
		if (!pb_encode_fixed64(s, &oa->o[i].time_ns))
			return false;
	return true;
}

/* Occurrences of sample @i of @proc when they account for its whole value
 * (values[i] then goes with timestamps_unix_nano[i]), else n = 0. */
static struct occ_arg sample_occ(const struct profile *p, size_t proc, size_t i, __u64 value)
{
	struct occ_arg oa = {NULL, 0};
	__u64 sum = 0;
	size_t k;

	oa.o = profile__sample_times(p, proc, i, &oa.n);
	for (k = 0; k < oa.n; k++)
		sum += oa.o[k].value;
	if (sum != value)
		oa.n = 0;
	return oa;
}

/* A NUL-terminated string; NULL counts as "" and emits nothing. */
static bool enc_cstr(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const char *str = *arg;

	if (!str || !*str)
		return true;
	return pb_encode_tag_for_field(s, f) &&
	       pb_encode_string(s, (const pb_byte_t *)str, strlen(str));
}

/* Raw bytes from the profile meta (the original payload). */
static bool enc_payload(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct profile_meta *meta = *arg;

	return pb_encode_tag_for_field(s, f) &&
	       pb_encode_string(s, meta->original_payload, meta->original_payload_len);
}

static void set_packed(pb_callback_t *cb, struct packed *pk, const __u32 *v, size_t n)
{
	pk->v = v;
	pk->n = n;
	cb->funcs.encode = enc_packed;
	cb->arg = pk;
}

static void set_cstr(pb_callback_t *cb, const char *str)
{
	cb->funcs.encode = enc_cstr;
	cb->arg = (void *)str;
}

/* ---- dictionary -------------------------------------------------------- */

static bool enc_mappings(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct profile *p = *arg;
	size_t i, n = profile__mapping_count(p);

	for (i = 0; i < n; i++) {
		PF(Mapping) m = PF(Mapping_init_zero);
		const struct profile_mapping_entry *e;
		struct packed pk;

		if (i) {
			e = profile__mapping(p, i);
			m.memory_start = e->start;
			m.memory_limit = e->limit;
			m.file_offset = e->file_offset;
			m.filename_strindex = e->filename;
			if (e->nattrs)
				set_packed(&m.attribute_indices, &pk, e->attrs, e->nattrs);
		}
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_submessage(s, PF(Mapping_fields), &m))
			return false;
	}
	return true;
}

struct line_list {
	const struct profile_line_entry *v;
	size_t n;
};

static bool enc_lines(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct line_list *ll = *arg;
	size_t i;

	for (i = 0; i < ll->n; i++) {
		PF(Line) l = PF(Line_init_zero);

		l.function_index = (int32_t)ll->v[i].function;
		l.line = ll->v[i].line;
		l.column = ll->v[i].column;
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_submessage(s, PF(Line_fields), &l))
			return false;
	}
	return true;
}

static bool enc_locations(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct profile *p = *arg;
	size_t i, n = profile__location_count(p);

	for (i = 0; i < n; i++) {
		PF(Location) l = PF(Location_init_zero);
		const struct profile_location_entry *e;
		struct line_list ll;
		struct packed pk;

		if (i) {
			e = profile__location(p, i);
			l.mapping_index = e->mapping;
			l.address = e->address;
			ll.v = profile__lines(p, e->lines, &ll.n);
			if (ll.n) {
				l.lines.funcs.encode = enc_lines;
				l.lines.arg = &ll;
			}
			if (e->attr)
				set_packed(&l.attribute_indices, &pk, &e->attr, 1);
		}
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_submessage(s, PF(Location_fields), &l))
			return false;
	}
	return true;
}

static bool enc_functions(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct profile *p = *arg;
	size_t i, n = profile__function_count(p);

	for (i = 0; i < n; i++) {
		PF(Function) fn = PF(Function_init_zero);
		const struct profile_function_entry *e;

		if (i) {
			e = profile__function(p, i);
			fn.name_strindex = e->name;
			fn.system_name_strindex = e->system_name;
			fn.filename_strindex = e->filename;
			fn.start_line = e->start_line;
		}
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_submessage(s, PF(Function_fields), &fn))
			return false;
	}
	return true;
}

/* link_table[0] must be exactly the zero value Link{}: empty trace_id and
 * span_id (an empty submessage), as the official conformance checker
 * requires; the samples' spans (thread context) follow with ids of full
 * width, each once. */
static bool enc_links(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct profile *p = *arg;
	size_t i, n = profile__link_count(p);

	for (i = 0; i < n; i++) {
		PF(Link) l = PF(Link_init_zero);

		if (i) {
			const struct profile_link *e = profile__link(p, (__u32)i);

			l.trace_id.size = sizeof(e->trace_id);
			memcpy(l.trace_id.bytes, e->trace_id, sizeof(e->trace_id));
			l.span_id.size = sizeof(e->span_id);
			memcpy(l.span_id.bytes, e->span_id, sizeof(e->span_id));
		}
		if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, PF(Link_fields), &l))
			return false;
	}
	return true;
}

static bool enc_strings(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct profile *p = *arg;
	size_t i, len, n = profile__string_count(p);

	for (i = 0; i < n; i++) {
		const char *str = i ? profile__string(p, i, &len) : "";

		if (!i)
			len = 0;
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_string(s, (const pb_byte_t *)str, len))
			return false;
	}
	return true;
}

static bool enc_attrs(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct profile *p = *arg;
	size_t i, n = profile__attr_count(p);

	for (i = 0; i < n; i++) {
		PF(KeyValueAndUnit) kv = PF(KeyValueAndUnit_init_zero);
		const struct profile_attr_entry *e;

		if (i) {
			e = profile__attr(p, i);
			kv.key_strindex = e->key;
			kv.unit_strindex = e->unit;
			if (e->kind == PROFILE_ATTR_STR) {
				kv.has_value = true;
				kv.value.which_value = PC(AnyValue_string_value_tag);
				set_cstr(&kv.value.value.string_value, e->str_value);
			} else if (e->kind == PROFILE_ATTR_INT) {
				kv.has_value = true;
				kv.value.which_value = PC(AnyValue_int_value_tag);
				kv.value.value.int_value = e->int_value;
			} else if (e->kind == PROFILE_ATTR_BOOL) {
				kv.has_value = true;
				kv.value.which_value = PC(AnyValue_bool_value_tag);
				kv.value.value.bool_value = e->int_value != 0;
			}
		}
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_submessage(s, PF(KeyValueAndUnit_fields), &kv))
			return false;
	}
	return true;
}

static bool enc_stacks(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct profile *p = *arg;
	size_t i, n = profile__stack_count(p);

	for (i = 0; i < n; i++) {
		PF(Stack) st = PF(Stack_init_zero);
		struct packed pk;
		const __u32 *locs;
		size_t nlocs = 0;

		if (i) {
			locs = profile__stack(p, i, &nlocs);
			set_packed(&st.location_indices, &pk, locs, nlocs);
		}
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_submessage(s, PF(Stack_fields), &st))
			return false;
	}
	return true;
}

static bool encode_dictionary(pb_ostream_t *s, const struct profile *p)
{
	PF(ProfilesDictionary) d = PF(ProfilesDictionary_init_zero);
	void *arg = (void *)p;

	d.mapping_table.funcs.encode = enc_mappings;
	d.mapping_table.arg = arg;
	d.location_table.funcs.encode = enc_locations;
	d.location_table.arg = arg;
	d.function_table.funcs.encode = enc_functions;
	d.function_table.arg = arg;
	d.link_table.funcs.encode = enc_links;
	d.link_table.arg = arg;
	d.string_table.funcs.encode = enc_strings;
	d.string_table.arg = arg;
	d.attribute_table.funcs.encode = enc_attrs;
	d.attribute_table.arg = arg;
	d.stack_table.funcs.encode = enc_stacks;
	d.stack_table.arg = arg;
	return pb_encode_tag(s, PB_WT_STRING, PF(ProfilesData_dictionary_tag)) &&
	       pb_encode_submessage(s, PF(ProfilesDictionary_fields), &d);
}

/* ---- one resource ------------------------------------------------------ */

static bool enc_samples(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct samples_arg *sa = *arg;
	size_t i, n = profile__sample_count(sa->p, sa->proc);

	for (i = 0; i < n; i++) {
		const struct profile_sample_entry *e = profile__sample(sa->p, sa->proc, i);
		PF(Sample) sm = PF(Sample_init_zero);
		struct occ_arg oa = sample_occ(sa->p, sa->proc, i, e->value);
		struct packed pk;

		sm.stack_index = e->stack;
		sm.link_index = (int32_t)e->link;
		set_packed(&sm.attribute_indices, &pk, e->attrs, e->nattrs);
		sm.values.funcs.encode = enc_value;
		sm.values.arg = (void *)&e->value;
		if (oa.n) {
			sm.values.funcs.encode = enc_occ_values;
			sm.values.arg = &oa;
			sm.timestamps_unix_nano.funcs.encode = enc_occ_times;
			sm.timestamps_unix_nano.arg = &oa;
		}
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_submessage(s, PF(Sample_fields), &sm))
			return false;
	}
	return true;
}

/* Encode the Profile of process @proc (or an empty one of value type @type
 * when @proc is SIZE_MAX) into @k's buffer, replacing its contents. @slot
 * numbers the Profiles in the order written: it makes the id, and the
 * first (0) carries what is said once. */
static bool encode_profile(struct pbbuf *k, const struct profile *p, size_t proc, __u32 type,
			   size_t slot)
{
	const struct profile_meta *meta = profile__meta(p);
	PF(Profile) pr = PF(Profile_init_zero);
	pb_ostream_t s = pbbuf__stream(k);
	__u32 st, su, pt, pu;
	struct samples_arg sa = {p, proc};
	struct packed pk;
	const __u32 *mattrs;
	size_t nmattrs;

	buf__reset(k->b);
	profile__value_type(p, type, &st, &su, &pt, &pu);
	pr.has_sample_type = true;
	pr.sample_type.type_strindex = st;
	pr.sample_type.unit_strindex = su;
	pr.has_period_type = true;
	pr.period_type.type_strindex = pt;
	pr.period_type.unit_strindex = pu;
	if (proc != SIZE_MAX) {
		pr.samples.funcs.encode = enc_samples;
		pr.samples.arg = &sa;
	}
	if (meta) {
		__u64 start, dur;

		profile__time_range(p, &start, &dur);
		pr.time_unix_nano = start;
		pr.duration_nano = dur;
		pr.period = (int64_t)profile__period(p, type);
		pr.profile_id.size = sizeof(meta->profile_id);
		profile__id_of(p, slot, pr.profile_id.bytes); /* one per Profile */
	}
	/* The original payload and the loss counts are facts of the whole
	 * capture, not of one process: the first Profile of the message
	 * carries them, once. */
	if (meta && meta->original_payload_len && slot == 0) {
		set_cstr(&pr.original_payload_format, meta->original_payload_format);
		pr.original_payload.funcs.encode = enc_payload;
		pr.original_payload.arg = (void *)meta;
	}
	mattrs = profile__meta_attrs(p, &nmattrs);
	if (nmattrs && slot == 0)
		set_packed(&pr.attribute_indices, &pk, mattrs, nmattrs);
	return pb_encode(&s, PF(Profile_fields), &pr);
}

static bool enc_profile_bytes(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct scope_arg *sc = *arg;

	return pb_encode_tag_for_field(s, f) && pb_encode_string(s, sc->profile, sc->len);
}

static bool enc_scope_profiles(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct scope_arg *sc = *arg;
	PF(ScopeProfiles) sp = PF(ScopeProfiles_init_zero);

	if (sc->meta) {
		sp.has_scope = true;
		set_cstr(&sp.scope.name, sc->meta->scope_name);
		set_cstr(&sp.scope.version, sc->meta->scope_version);
	}
	sp.profiles.funcs.encode = enc_profile_bytes;
	sp.profiles.arg = *arg;
	return pb_encode_tag_for_field(s, f) &&
	       pb_encode_submessage(s, PF(ScopeProfiles_fields), &sp);
}

static bool enc_res_attrs(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct res_attrs *ra = *arg;
	size_t i;

	for (i = 0; i < ra->n; i++) {
		PC(KeyValue) kv = PC(KeyValue_init_zero);

		set_cstr(&kv.key, ra->a[i].key);
		kv.has_value = true;
		if (ra->a[i].str) {
			kv.value.which_value = PC(AnyValue_string_value_tag);
			set_cstr(&kv.value.value.string_value, ra->a[i].str);
		} else {
			kv.value.which_value = PC(AnyValue_int_value_tag);
			kv.value.value.int_value = ra->a[i].num;
		}
		if (!pb_encode_tag_for_field(s, f) ||
		    !pb_encode_submessage(s, PC(KeyValue_fields), &kv))
			return false;
	}
	return true;
}

static bool enc_bytes(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const struct bytes_arg *b = *arg;

	return pb_encode_tag_for_field(s, f) && pb_encode_string(s, b->p, b->len);
}

/* Encode the Resource of process @proc (the host's only when SIZE_MAX) into
 * @k's buffer, replacing its contents. */
static bool encode_res(struct pbbuf *k, const struct profile *p, size_t proc)
{
	opentelemetry_proto_resource_v1_Resource r = opentelemetry_proto_resource_v1_Resource_init_zero;
	pb_ostream_t s = pbbuf__stream(k);
	struct res_attrs ra;

	buf__reset(k->b);
	ra.n = view__resource_attrs(p, proc, ra.a);
	r.attributes.funcs.encode = enc_res_attrs;
	r.attributes.arg = &ra;
	return pb_encode(&s, opentelemetry_proto_resource_v1_Resource_fields, &r);
}

/* Append one ResourceProfiles (process @proc, or host only with an empty
 * Profile of @type when SIZE_MAX) to @s, using @scratch for the Profile
 * bytes and @rscratch for the Resource's; @slot as encode_profile(). */
static bool encode_resource(pb_ostream_t *s, struct pbbuf *scratch, struct pbbuf *rscratch,
			    const struct profile *p, size_t proc, __u32 type, size_t slot)
{
	const struct profile_meta *meta = profile__meta(p);
	PF(ResourceProfiles) rp = PF(ResourceProfiles_init_zero);
	struct bytes_arg res;
	struct scope_arg sc;

	if (!encode_profile(scratch, p, proc, type, slot) || !encode_res(rscratch, p, proc))
		return false;
	res.p = rscratch->b->data;
	res.len = rscratch->b->len;
	rp.resource.funcs.encode = enc_bytes;
	rp.resource.arg = &res;
	sc.meta = meta;
	sc.profile = scratch->b->data;
	sc.len = scratch->b->len;
	rp.scope_profiles.funcs.encode = enc_scope_profiles;
	rp.scope_profiles.arg = &sc;
	return pb_encode_tag(s, PB_WT_STRING, PF(ProfilesData_resource_profiles_tag)) &&
	       pb_encode_submessage(s, PF(ResourceProfiles_fields), &rp);
}

int otlp__encode(const struct profile *p, struct buf *out)
{
	struct buf tmp, rtmp;
	struct pbbuf k = {out, 0}, sk = {&tmp, 0}, rk = {&rtmp, 0};
	pb_ostream_t s = pbbuf__stream(&k);
	size_t i, n = profile__process_count(p), start = out->len;
	size_t ntypes = profile__value_type_count(p), slot = 0;
	bool ok = true;
	__u32 t;
	int err = 0;

	buf__init(&tmp, out->max);
	buf__init(&rtmp, out->max);
	/* Type by type, so a reader meets the types in the model's order (the
	 * first Profile's is its first). A type no process holds (no CPU
	 * sample in an off-CPU capture, or nothing at all) still gets its
	 * empty Profile, on the host. */
	for (t = 0; ok && t < ntypes; t++) {
		if (!profile__value_type_used(p, t)) {
			ok = encode_resource(&s, &sk, &rk, p, SIZE_MAX, t, slot++);
			continue;
		}
		for (i = 0; ok && i < n; i++)
			if (profile__process_type(p, i) == t)
				ok = encode_resource(&s, &sk, &rk, p, i, t, slot++);
	}
	if (ok)
		ok = encode_dictionary(&s, p);
	if (!ok) {
		err = k.err ? k.err : sk.err ? sk.err : rk.err ? rk.err : -EIO;
		out->len = start;
	}
	buf__release(&rtmp);
	buf__release(&tmp);
	return err;
}
