/* otlp_read.c - OTLP Profiles reader (see otlp_read.h): the top level,
 * resources, scopes and profiles. The dictionary is in otlp_read_dict.c,
 * samples in otlp_read_sample.c, shared helpers in otlp_read_rd.c.
 *
 * The wire format is walked with util/wire.h: no generated decoder runs on
 * the input, so AnyValue's callback oneofs are never filled from untrusted
 * bytes. The walk never recurses deeper than the schema's fixed levels
 * (ProfilesData > ResourceProfiles > ScopeProfiles > Profile > Sample >
 * packed list); values of unused kinds (arrays, kvlists) are skipped as
 * opaque lengths, so nesting depth in the input costs nothing.
 *
 * Order of fields on the wire is free, so the input is read in passes: the
 * dictionary first, then the resources (each one's Resource before its
 * ScopeProfiles). Samples are added to the model as they are met.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/gz.h"
#include "util/log.h"
#include "formats/otlp_json_read.h"
#include "formats/otlp_read.h"
#include "formats/otlp_read_rd.h"
#include "model/profile.h"

/* ---- resources ------------------------------------------------------------------ */

static bool kv_has(const struct profile_kv *kv, size_t n, const char *key, const char *value)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key) && (!value || !strcmp(kv[i].value, value)))
			return true;
	return false;
}

/* Capture-wide (meta) attributes are those every resource carries with the
 * same value: drop from r->kv what resource @res lacks. */
static void meta_keep_common(struct rd *r, const struct resource *res)
{
	size_t i, k = 0;

	for (i = 0; i < r->meta.nresource; i++)
		if (kv_has(res->kv, res->nkv, r->kv[i].key, r->kv[i].value))
			r->kv[k++] = r->kv[i];
	r->meta.nresource = k;
}

/* The key and value of KeyValue @s (the string index of a value resolved). */
static int read_keyvalue_fields(struct rd *r, struct wire *s, const char **key, struct value *v)
{
	struct wire_field f;
	__u64 kidx;
	int err = 0;

	while (!err && otlp_rd__next(r, s, &f, &err)) {
		switch (f.num) {
		case COMMON_TAG(KeyValue, key):
			err = otlp_rd__string(r, &f, "attribute key", key);
			break;
		case COMMON_TAG(KeyValue, key_strindex):
			err = otlp_rd__varint(r, &f, "attribute key_strindex", &kidx);
			err = err ?: otlp_rd__check_str(r, "attribute key_strindex", kidx);
			if (!err)
				*key = otlp_rd__str(r, kidx);
			break;
		case COMMON_TAG(KeyValue, value):
			err = otlp_rd__value(r, &f, "attribute value", v);
			break;
		default:
			break;
		}
	}
	if (!err && v->has_strindex) {
		err = otlp_rd__check_str(r, "attribute value string_value_strindex", v->strindex);
		if (!err)
			v->str = otlp_rd__str(r, v->strindex);
	}
	return err;
}

/* Keep string attribute @key=@value of resource @res: the process's own
 * fields, the host's (once), or one of its other attributes. */
static void resource_string(struct rd *r, struct resource *res, const char *key, const char *value)
{
	if (!strcmp(key, "process.executable.name")) {
		res->desc.exe_name = value;
	} else if (!strcmp(key, "process.executable.path")) {
		res->desc.exe_path = value;
	} else if (!strcmp(key, "process.command_line")) {
		res->desc.cmdline = value;
	} else if (!strcmp(key, "container.id")) {
		res->desc.container_id = value;
	} else if (!strcmp(key, "host.name")) {
		if (!r->meta.host_name)
			r->meta.host_name = value;
	} else if (!strcmp(key, "host.arch")) {
		if (!r->meta.host_arch)
			r->meta.host_arch = value;
	} else if (!strcmp(key, "os.type")) {
		if (!r->meta.os_type)
			r->meta.os_type = value;
	} else if (strncmp(key, "process.", 8) && *key && res->nkv < PROFILE_MAX_RESOURCE_ATTRS &&
		   !kv_has(res->kv, res->nkv, key, NULL)) {
		res->kv[res->nkv].key = key;
		res->kv[res->nkv].value = value;
		res->nkv++;
		if (r->ires == 0 && r->meta.nresource < PROFILE_MAX_RESOURCE_ATTRS) {
			/* Operator attributes (service.name, ...): candidates from
			 * the first resource, kept if every other one has them. */
			r->kv[r->meta.nresource].key = key;
			r->kv[r->meta.nresource].value = value;
			r->meta.nresource++;
		}
	}
}

static int read_keyvalue(struct rd *r, struct wire *s, struct resource *res)
{
	const char *key = NULL;
	struct value v = {0};
	int err = read_keyvalue_fields(r, s, &key, &v);

	if (err || !key || (v.kind != VAL_STR && v.kind != VAL_INT))
		return err;
	if (!strcmp(key, "process.pid")) {
		if (v.kind == VAL_INT) {
			res->desc.pid = v.num;
			res->has_pid = true;
		} else if (otlp_rd__parse_int(v.str, &res->desc.pid)) {
			res->has_pid = true;
		}
		return 0;
	}
	if (v.kind == VAL_STR)
		resource_string(r, res, key, v.str);
	return 0;
}

static int read_resource(struct rd *r, struct wire *s, struct resource *res)
{
	struct wire_field f;
	struct wire sub;
	int err = 0;

	while (!err && otlp_rd__next(r, s, &f, &err)) {
		if (f.num != RESOURCE_TAG(Resource, attributes))
			continue;
		err = otlp_rd__sub(r, &f, "attributes", &sub);
		err = err ?: read_keyvalue(r, &sub, res);
	}
	return err;
}

/* ---- profiles ------------------------------------------------------------------ */

static int read_value_type(struct rd *r, const struct wire_field *f, const char *field, __u64 vt[2])
{
	struct wire sub;
	struct wire_field g;
	int err;

	vt[0] = vt[1] = 0;
	err = otlp_rd__sub(r, f, field, &sub);
	while (!err && otlp_rd__next(r, &sub, &g, &err)) {
		if (g.num == OTLP_TAG(ValueType, type_strindex))
			err = otlp_rd__varint(r, &g, "type_strindex", &vt[0]);
		else if (g.num == OTLP_TAG(ValueType, unit_strindex))
			err = otlp_rd__varint(r, &g, "unit_strindex", &vt[1]);
	}
	err = err ?: otlp_rd__check_str(r, "type_strindex", vt[0]);
	return err ?: otlp_rd__check_str(r, "unit_strindex", vt[1]);
}

/* pprof's profile-level field among Profile attribute @a into the meta
 * (the first Profile's, as the encoder writes it once). */
static void add_pprof_field(struct rd *r, const struct r_attr *a)
{
	const char **f;

	if (a->role == ROLE_PPROF_COMMENT)
		f = &r->meta.pprof_comment;
	else if (a->role == ROLE_PPROF_DROP_FRAMES)
		f = &r->meta.pprof_drop_frames;
	else if (a->role == ROLE_PPROF_KEEP_FRAMES)
		f = &r->meta.pprof_keep_frames;
	else if (a->role == ROLE_PPROF_DEFAULT_SAMPLE_TYPE)
		f = &r->meta.pprof_default_sample_type;
	else
		return;
	if (!*f && a->v.kind == VAL_STR && *a->v.str)
		*f = a->v.str;
}

/* Add the sample loss counts among Profile attributes @ids (range-checked)
 * to the meta: a writer may give each Profile its own share. */
static void add_losses(struct rd *r, const struct ids *ids)
{
	size_t i;

	for (i = 0; i < ids->n; i++) {
		const struct r_attr *a = VEC_AT(r->attrs, struct r_attr, ids->v[i]);
		__u64 *sum;

		add_pprof_field(r, a);
		if (a->v.kind != VAL_INT || a->v.num <= 0)
			continue;
		if (a->role == ROLE_DROPPED)
			sum = &r->meta.samples_dropped;
		else if (a->role == ROLE_TRUNCATED)
			sum = &r->meta.samples_truncated;
		else if (a->role == ROLE_STACK_MISSING)
			sum = &r->meta.samples_stack_missing;
		else if (a->role == ROLE_TRUNCATED_DEPTH)
			sum = &r->meta.samples_truncated_depth;
		else if (a->role == ROLE_THROTTLED)
			sum = &r->meta.samples_throttled;
		else if (a->role == ROLE_UNTIMED)
			sum = &r->meta.samples_untimed;
		else
			continue;
		*sum = *sum + (__u64)a->v.num < *sum ? UINT64_MAX : *sum + (__u64)a->v.num;
	}
}

/* The model value type of a Profile (not the first) whose sample_type is
 * @vt: 0 when it is the first Profile's, else one added for it. */
static int profile_type(struct rd *r, const __u64 vt[2])
{
	const char *st = otlp_rd__str(r, vt[0]), *su = otlp_rd__str(r, vt[1]);
	__u32 i, t[4];
	int err;

	r->cur_type = 0;
	if (!strcmp(st, otlp_rd__str(r, r->sample_type[0])) &&
	    !strcmp(su, otlp_rd__str(r, r->sample_type[1])))
		return 0;
	for (i = 1; i < profile__value_type_count(r->p); i++) {
		profile__value_type(r->p, i, &t[0], &t[1], &t[2], &t[3]);
		if (!strcmp(st, profile__string(r->p, t[0], NULL)) &&
		    !strcmp(su, profile__string(r->p, t[1], NULL))) {
			r->cur_type = i;
			return 0;
		}
	}
	err = profile__add_value_type(r->p, st, su, "", "", 0, &r->cur_type);
	if (err == -E2BIG)
		return otlp_rd__fail(r, err, "more than %d sample types", PROFILE_MAX_TYPES);
	return err ? otlp_rd__nomem(r) : 0;
}

/* One Profile being read: what its fields left for the end. */
struct r_profile {
	const struct resource *res;
	bool first;
	const char *payload_format, *payload;
	size_t payload_len;
	bool have_pvt;
	__u64 pvt[2];
	__s64 period;
	struct ids attrs;
};

/* The value types, period and time of a Profile: the first Profile's are
 * the capture's; a later one's sample type is its own value type. */
static int profile_scalar(struct rd *r, struct r_profile *p, const struct wire_field *f)
{
	__u64 vt[2], x;
	int err = 0;

	switch (f->num) {
	case OTLP_TAG(Profile, sample_type):
		err = read_value_type(r, f, "sample_type", vt);
		if (!err && p->first) {
			memcpy(r->sample_type, vt, sizeof(vt));
			r->have_sample_type = true;
		} else if (!err) {
			err = profile_type(r, vt);
		}
		break;
	case OTLP_TAG(Profile, period_type):
		err = read_value_type(r, f, "period_type", vt);
		if (!err && p->first) {
			memcpy(r->period_type, vt, sizeof(vt));
			r->have_period_type = true;
		} else if (!err) {
			memcpy(p->pvt, vt, sizeof(vt));
			p->have_pvt = true;
		}
		break;
	case OTLP_TAG(Profile, time_unix_nano):
		err = otlp_rd__fixed64(r, f, "time_unix_nano", &x);
		if (!err && p->first)
			r->meta.time_unix_nano = x;
		break;
	case OTLP_TAG(Profile, duration_nano):
		err = otlp_rd__varint(r, f, "duration_nano", &x);
		if (!err && p->first)
			r->meta.duration_nano = x;
		break;
	case OTLP_TAG(Profile, period):
		err = otlp_rd__varint(r, f, "period", &x);
		if (!err && p->first)
			r->meta.period_ns = (__s64)x > 0 ? x : 0;
		else if (!err)
			p->period = (__s64)x > 0 ? (__s64)x : 0;
		break;
	}
	return err;
}

/* One field of a Profile. */
static int profile_field(struct rd *r, struct r_profile *p, const struct wire_field *f)
{
	struct wire sub;
	int err = 0;

	switch (f->num) {
	case OTLP_TAG(Profile, samples):
		err = otlp_rd__sub(r, f, "samples", &sub);
		if (err)
			break;
		r->ctx = CTX_SAMPLE;
		err = otlp_rd__add_sample(r, p->res, &sub);
		r->ctx = CTX_PROFILE;
		r->isample++;
		break;
	case OTLP_TAG(Profile, profile_id):
		err = otlp_rd__sub(r, f, "profile_id", &sub);
		/* Only a well-formed (16-byte) id is kept. */
		if (!err && p->first && wire__left(&sub) == sizeof(r->meta.profile_id))
			memcpy(r->meta.profile_id, wire__pos(&sub), sizeof(r->meta.profile_id));
		break;
	case OTLP_TAG(Profile, original_payload_format):
		err = otlp_rd__string(r, f, "original_payload_format", &p->payload_format);
		break;
	case OTLP_TAG(Profile, original_payload):
		err = otlp_rd__sub(r, f, "original_payload", &sub);
		p->payload_len = err ? 0 : wire__left(&sub);
		err = err ?: otlp_rd__copy(r, wire__pos(&sub), p->payload_len, &p->payload);
		break;
	case OTLP_TAG(Profile, attribute_indices):
		p->attrs.n = 0;
		err = otlp_rd__ids(r, f, "attribute_indices", &p->attrs);
		err = err ?: otlp_rd__check_attrs(r, &p->attrs, 0, p->attrs.n);
		if (!err)
			add_losses(r, &p->attrs);
		break;
	default:
		err = profile_scalar(r, p, f);
	}
	return err;
}

static int read_profile(struct rd *r, struct wire *s, const struct resource *res)
{
	struct r_profile p = {.res = res, .first = !r->have_profile};
	struct wire_field f;
	int err = 0;

	r->have_profile = true;
	r->isample = 0;
	r->cur_type = 0;
	while (!err && otlp_rd__next(r, s, &f, &err))
		err = profile_field(r, &p, &f);
	free(p.attrs.v);
	if (!err && r->cur_type && p.have_pvt)
		err = profile__set_period(r->p, r->cur_type, otlp_rd__str(r, p.pvt[0]),
					  otlp_rd__str(r, p.pvt[1]), p.period);
	if (err == -ENOMEM)
		return otlp_rd__nomem(r);
	/* Kept from the first profile carrying one (the encoder writes it
	 * once). */
	if (!err && p.payload_len && p.payload_format && *p.payload_format &&
	    !r->meta.original_payload_len) {
		r->meta.original_payload = p.payload;
		r->meta.original_payload_len = p.payload_len;
		r->meta.original_payload_format = p.payload_format;
	}
	return err;
}

static int read_scope(struct rd *r, struct wire *s)
{
	const char *name = NULL, *version = NULL;
	struct wire_field f;
	int err = 0;

	while (!err && otlp_rd__next(r, s, &f, &err)) {
		if (f.num == COMMON_TAG(InstrumentationScope, name))
			err = otlp_rd__string(r, &f, "scope.name", &name);
		else if (f.num == COMMON_TAG(InstrumentationScope, version))
			err = otlp_rd__string(r, &f, "scope.version", &version);
	}
	if (!err && !r->have_scope && name && *name) {
		r->meta.scope_name = name;
		r->meta.scope_version = version;
		r->have_scope = true;
	}
	return err;
}

static int read_scope_profiles(struct rd *r, struct wire *s, const struct resource *res)
{
	struct wire_field f;
	struct wire sub;
	int err = 0;

	r->iprof = 0;
	while (!err && otlp_rd__next(r, s, &f, &err)) {
		if (f.num == OTLP_TAG(ScopeProfiles, scope)) {
			err = otlp_rd__sub(r, &f, "scope", &sub);
			err = err ?: read_scope(r, &sub);
		} else if (f.num == OTLP_TAG(ScopeProfiles, profiles)) {
			err = otlp_rd__sub(r, &f, "profiles", &sub);
			if (err)
				break;
			r->ctx = CTX_PROFILE;
			err = read_profile(r, &sub, res);
			r->ctx = CTX_SCOPE;
			r->iprof++;
		}
	}
	return err;
}

/* The Resource of ResourceProfiles @s (wherever it sits) into @res. */
static int resource_of(struct rd *r, struct wire s, struct resource *res)
{
	struct wire_field f;
	struct wire sub;
	int err = 0;

	while (!err && otlp_rd__next(r, &s, &f, &err)) {
		if (f.num != OTLP_TAG(ResourceProfiles, resource))
			continue;
		err = otlp_rd__sub(r, &f, "resource", &sub);
		err = err ?: read_resource(r, &sub, res);
	}
	if (err)
		return err;
	if (!res->has_pid)
		res->desc.pid = -(__s64)r->ires - 1;
	/* Each resource is its own process, also when a PID comes again (a
	 * program it exec()ed). */
	res->desc.generation = (__u32)r->ires;
	res->desc.attrs = res->kv;
	res->desc.nattrs = res->nkv;
	if (r->ires > 0)
		meta_keep_common(r, res);
	return 0;
}

/* One ResourceProfiles: its Resource first, then its scopes. */
static int read_resource_profiles(struct rd *r, struct wire *s)
{
	struct resource res = {.has_pid = false};
	struct wire_field f;
	struct wire sub;
	int err;

	r->ctx = CTX_RESOURCE;
	err = resource_of(r, *s, &res);
	r->iscope = 0;
	while (!err && otlp_rd__next(r, s, &f, &err)) {
		if (f.num != OTLP_TAG(ResourceProfiles, scope_profiles))
			continue;
		err = otlp_rd__sub(r, &f, "scope_profiles", &sub);
		if (err)
			break;
		r->ctx = CTX_SCOPE;
		err = read_scope_profiles(r, &sub, &res);
		r->ctx = CTX_RESOURCE;
		r->iscope++;
	}
	return err;
}

/* ---- top level ------------------------------------------------------------------ */

/* Walk the top-level fields, handing those numbered @want_tag to @fn. */
static int walk_top(struct rd *r, const void *data, size_t len, __u32 want_tag,
		    int (*fn)(struct rd *, struct wire *))
{
	struct wire s = wire__from(data, len), sub;
	struct wire_field f;
	const char *name;
	int err = 0;

	r->ctx = CTX_TOP;
	while (!err && otlp_rd__next(r, &s, &f, &err)) {
		if (f.num == OTLP_TAG(ProfilesData, dictionary))
			name = "dictionary";
		else if (f.num == OTLP_TAG(ProfilesData, resource_profiles))
			name = "resource_profiles";
		else
			continue;
		err = otlp_rd__sub(r, &f, name, &sub);
		if (!err && f.num == want_tag)
			err = fn(r, &sub);
		r->ctx = CTX_TOP;
	}
	return err;
}

static int one_resource(struct rd *r, struct wire *s)
{
	int err = read_resource_profiles(r, s);

	r->ires++;
	return err;
}

static int finish(struct rd *r)
{
	const char *st = NULL, *su = NULL, *pt = NULL, *pu = NULL;
	int err;

	r->ctx = CTX_TOP;
	r->meta.resource = r->kv;
	if (r->have_sample_type) {
		st = otlp_rd__str(r, r->sample_type[0]);
		su = otlp_rd__str(r, r->sample_type[1]);
	}
	if (r->have_period_type) {
		pt = otlp_rd__str(r, r->period_type[0]);
		pu = otlp_rd__str(r, r->period_type[1]);
	}
	err = profile__set_value_types(r->p, st, su, pt, pu);
	err = err ?: profile__set_meta(r->p, &r->meta);
	/* Drops the default value type strings when they were replaced. */
	err = err ?: profile__prune(r->p);
	if (err)
		return otlp_rd__fail(r, err, "cannot build the profile (%s)", strerror(-err));
	return 0;
}

static void rd_release(struct rd *r)
{
	otlp_rd__arena_free(r);
	free(r->strings.d);
	free(r->links.d);
	free(r->mappings.d);
	free(r->locations.d);
	free(r->functions.d);
	free(r->attrs.d);
	free(r->stacks.d);
	free(r->map_attrs.v);
	free(r->loc_attrs.v);
	free(r->line_fns.v);
	free(r->stack_locs.v);
	free(r->mdescs);
	free(r->lframes);
	free(r->llines);
	free(r->line_pos.d);
	free(r->lmodel);
	free(r->smodel);
	free(r->locs);
	free(r->svals.v);
	free(r->stimes.v);
	free(r->sattrs.v);
}

int otlp_read__wire(const void **data, size_t *len, size_t max_bytes, struct buf *plain,
		    struct buf *wire, char *why, size_t whylen)
{
	int ret;

	why[0] = '\0';
	ret = gz__reader_input(data, len, max_bytes, plain, why, whylen);
	if (ret)
		return ret;
	/* OTLP/JSON: transcoded to the wire format. A protobuf message never
	 * starts with '{' (field 15, a group); one may start with white space
	 * and '{' bytes (field 1 of length 123): when that does not read as
	 * JSON, it is read as protobuf. */
	if (!otlp_json_read__looks_like(*data, *len))
		return 0;
	ret = otlp_json_read__transcode(*data, *len, wire, why, whylen);
	if (!ret) {
		*data = wire->data;
		*len = wire->len;
	} else if (**(const char *const *)data != '{') {
		why[0] = '\0';
		ret = 0;
	}
	return ret;
}

int otlp_read__parse_capped(const void *data, size_t len, size_t max_bytes, struct profile **out,
			    char *err, size_t errlen)
{
	struct rd r = {.err = err, .errlen = errlen};
	struct buf plain, wire;
	char why[192];
	int ret;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	buf__init(&plain, max_bytes);
	buf__init(&wire, max_bytes);
	if (!len) {
		/* Zero bytes are a valid empty ProfilesData, but no capture: every
		 * capture writes a resource, even one without samples. */
		ret = otlp_rd__fail(&r, -EBADMSG, "empty input (0 bytes): not a capture");
		goto out;
	}
	ret = otlp_read__wire(&data, &len, max_bytes, &plain, &wire, why, sizeof(why));
	if (ret) {
		ret = otlp_rd__fail(&r, ret, "%s", why);
		goto out;
	}
	r.strings.max = r.mappings.max = r.locations.max = OTLP_RD_MAX_TABLE;
	r.functions.max = r.attrs.max = r.stacks.max = r.links.max = OTLP_RD_MAX_TABLE;
	r.line_pos.max = OTLP_RD_MAX_POOL;
	r.p = profile__new();
	if (!r.p) {
		ret = otlp_rd__nomem(&r);
		goto out;
	}
	ret = walk_top(&r, data, len, OTLP_TAG(ProfilesData, dictionary), otlp_rd__read_dictionary);
	ret = ret ?: otlp_rd__resolve_dictionary(&r);
	ret = ret
		      ?: walk_top(&r, data, len, OTLP_TAG(ProfilesData, resource_profiles),
				  one_resource);
	ret = ret ?: finish(&r);
	if (!ret) {
		*out = r.p;
		r.p = NULL;
	}
out:
	profile__free(r.p);
	rd_release(&r);
	buf__release(&wire);
	buf__release(&plain);
	return ret;
}

int otlp_read__parse(const void *data, size_t len, struct profile **out, char *err, size_t errlen)
{
	return otlp_read__parse_capped(data, len, OTLP_READ_MAX_BYTES, out, err, errlen);
}

int otlp_read__file(const char *path, struct profile **out)
{
	const char *name = strcmp(path, "-") ? path : "standard input";
	struct buf in;
	char why[256];
	int err;

	*out = NULL;
	buf__init(&in, OTLP_READ_MAX_BYTES);
	err = buf__read_file(&in, strcmp(path, "-") ? path : "/dev/stdin");
	if (err == -E2BIG) {
		pr_err("%s: larger than %llu bytes; not an OTLP Profiles capture?", name,
		       (unsigned long long)OTLP_READ_MAX_BYTES);
		goto out;
	}
	if (err) {
		pr_err("cannot read %s: %s", name, strerror(-err));
		goto out;
	}
	err = otlp_read__parse(in.data, in.len, out, why, sizeof(why));
	if (err)
		pr_err("%s: %s (is it an OTLP Profiles file, ProfilesData or "
		       "ExportProfilesServiceRequest, written completely?)",
		       name, why);
out:
	buf__release(&in);
	return err;
}
