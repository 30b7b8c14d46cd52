/* test_otlp_read.c - OTLP reader: round trips through the encoder (plain,
 * gzip'd, dictionary-first framing, empty), a hand-written file in another
 * tool's style (unpacked lists, string indices, no pid, timestamps only),
 * and malformed input: truncation at every byte, bad indices, huge lengths,
 * wrong wire types, deep nesting, a gzip bomb. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb.h"

#include "util/buf.h"
#include "util/gz.h"
#include "formats/otlp.h"
#include "formats/otlp_read.h"
#include "model/profile.h"
#include "test.h"

#define MAX_FILE (64u << 20)

#define REQ(x) opentelemetry_proto_collector_profiles_v1development_ExportProfilesServiceRequest_##x

/* ---- a canonical text form of a model, to compare two of them ---- */

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		buf__append(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static const char *str_or(const char *s)
{
	return s && *s ? s : "-";
}

/* One line per process and per sample, resolved to strings and sorted:
 * independent of table order. The caller frees the result. */
static char *describe(const struct profile *p)
{
	struct buf line, all;
	char **lines = NULL;
	size_t n = 0, cap = 0, i, j, k;

	buf__init(&line, 1 << 20);
	buf__init(&all, 64 << 20);
	for (i = 0; i < profile__process_count(p); i++) {
		const struct profile_process_desc *d = profile__process(p, i);

		for (j = 0; j <= profile__sample_count(p, i); j++) {
			buf__reset(&line);
			put(&line, "pid=%lld exe=%s path=%s cmd=%s", (long long)d->pid,
			    str_or(d->exe_name), str_or(d->exe_path), str_or(d->cmdline));
			if (j < profile__sample_count(p, i)) {
				const struct profile_sample_entry *s = profile__sample(p, i, j);
				size_t nl;
				const __u32 *locs = profile__stack(p, s->stack, &nl);

				put(&line, " value=%llu", (unsigned long long)s->value);
				for (k = 0; k < s->nattrs; k++) {
					const struct profile_attr_entry *a =
						profile__attr(p, s->attrs[k]);

					put(&line, " %s=", profile__string(p, a->key, NULL));
					if (a->kind == PROFILE_ATTR_INT)
						put(&line, "%lld", (long long)a->int_value);
					else
						put(&line, "%s", a->str_value);
				}
				for (k = 0; k < nl; k++) {
					const struct profile_location_entry *l =
						profile__location(p, locs[k]);

					put(&line, " | %llx", (unsigned long long)l->address);
					if (profile__location_function(p, l))
						put(&line, " %s",
						    profile__string(
							    p,
							    profile__function(p, profile__location_function(p, l))->name,
							    NULL));
					if (l->attr)
						put(&line, " [%s]",
						    profile__attr(p, l->attr)->str_value);
					if (l->mapping) {
						const struct profile_mapping_entry *m =
							profile__mapping(p, l->mapping);

						put(&line, " %llx-%llx@%llx %s %s",
						    (unsigned long long)m->start,
						    (unsigned long long)m->limit,
						    (unsigned long long)m->file_offset,
						    profile__string(p, m->filename, NULL),
						    m->attr ? profile__attr(p, m->attr)->str_value
							    : "-");
					}
				}
			}
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				lines = realloc(lines, cap * sizeof(*lines));
			}
			buf__append(&line, "", 1);
			lines[n++] = strdup((char *)line.data);
		}
	}
	if (n)
		qsort(lines, n, sizeof(*lines), cmp_line);
	for (i = 0; i < n; i++) {
		buf__append(&all, lines[i], strlen(lines[i]));
		buf__append(&all, "\n", 1);
		free(lines[i]);
	}
	buf__append(&all, "", 1);
	free(lines);
	buf__release(&line);
	return (char *)all.data;
}

static void value_types(const struct profile *p, const char *out[4])
{
	__u32 v[4];
	int i;

	profile__value_types(p, &v[0], &v[1], &v[2], &v[3]);
	for (i = 0; i < 4; i++)
		out[i] = profile__string(p, v[i], NULL);
}

/* ---- a capture-like model ---- */

static const struct profile_kv res_kv[] = {
	{"service.name", "checkout"},
	{"deployment.environment", "test"},
};

static struct profile *capture_like(void)
{
	static const struct profile_mapping_desc libc = {
		0x7f0000000000, 0x7f0000200000, 0x28000, "/usr/lib/x86_64-linux-gnu/libc.so.6",
		"0123456789abcdef0123456789abcdef01234567", 0};
	static const struct profile_mapping_desc exe = {0x555555554000, 0x555555600000, 0,
							"/usr/sbin/nginx", NULL, 0};
	static const struct profile_mapping_desc kern = {0xffffffff81000000, 0xffffffff83000000, 0,
							 "[kernel.kallsyms]", NULL, 0};
	struct profile_meta meta = {
		.time_unix_nano = 1700000000123456789ull,
		.duration_nano = 5000000000ull,
		.period_ns = 10101010,
		.profile_id = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		.host_name = "box",
		.host_arch = "amd64",
		.os_type = "linux",
		.scope_name = "profcap",
		.scope_version = "1.2.3",
		.resource = res_kv,
		.nresource = 2,
	};
	struct profile_process_desc nginx = {100, "nginx", "/usr/sbin/nginx",
					     "nginx: worker process", NULL};
	struct profile_process_desc idle = {0, "swapper", NULL, NULL, NULL};
	struct profile_process_desc other = {4242, "python3", "/usr/bin/python3.11",
					     "python3 app.py", NULL};
	struct profile_frame f[6] = {
		{0xffffffff81234567, &kern, "do_syscall_64", PROFILE_FRAME_KERNEL, NULL, NULL, 0},
		{0x7f0000031234, &libc, "__libc_write", PROFILE_FRAME_NATIVE, NULL, NULL, 0},
		{0x555555560010, &exe, "ngx_process_events", PROFILE_FRAME_NATIVE, NULL, NULL, 0},
		{0x555555561000, &exe, NULL, PROFILE_FRAME_NATIVE, NULL, NULL, 0},
		{0x1234, NULL, "jit_fn", PROFILE_FRAME_NATIVE, "v8js", NULL, 0},
		{0x5678, NULL, NULL, PROFILE_FRAME_NATIVE, NULL, NULL, 0},
	};
	struct profile *p = profile__new();
	int err = 0;

	if (!p)
		return NULL;
	err = err ?: profile__set_meta(p, &meta);
	err = err ?: profile__add_sample(p, &nginx, 101, "nginx", f, 4, 7);
	err = err ?: profile__add_sample(p, &nginx, 102, "nginx", f + 1, 3, 5);
	err = err ?: profile__add_sample(p, &nginx, 101, "nginx", f, 4, 2); /* merges */
	err = err ?: profile__add_sample(p, &nginx, 103, NULL, f + 2, 2, 1);
	err = err ?: profile__add_sample(p, &idle, 0, "swapper/0", f, 1, 50);
	err = err ?: profile__add_sample(p, &idle, 0, "swapper/1", NULL, 0, 3);
	err = err ?: profile__add_sample(p, &other, 4243, "worker", f + 4, 2, 11);
	err = err ?: profile__add_sample(p, &other, 4242, "python3", f + 1, 5, 1);
	if (err) {
		profile__free(p);
		return NULL;
	}
	return p;
}

static int encode(const struct profile *p, struct buf *out)
{
	buf__init(out, MAX_FILE);
	return otlp__encode(p, out);
}

/* With OTLP_READ_SEED_DIR set (scripts/fuzz/run.sh), keep the files the
 * tests parse as seeds for the fuzzer. */
static void seed(const char *name, const struct buf *b)
{
	const char *dir = getenv("OTLP_READ_SEED_DIR");
	char path[512];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return;
	fwrite(b->data, 1, b->len, f);
	fclose(f);
}

static int parse(const struct buf *b, struct profile **out, char *err, size_t errlen)
{
	return otlp_read__parse(b->data, b->len, out, err, errlen);
}

/* Same samples, processes, meta and value types. */
static int same_profile(const struct profile *a, const struct profile *b)
{
	const struct profile_meta *ma = profile__meta(a), *mb = profile__meta(b);
	const char *va[4], *vb[4];
	char *da = describe(a), *db = describe(b);
	int same = !strcmp(da, db), i;

	if (!same)
		printf("  model differs:\n--- want\n%s--- got\n%s", da, db);
	free(da);
	free(db);
	value_types(a, va);
	value_types(b, vb);
	for (i = 0; i < 4; i++)
		same = same && !strcmp(va[i], vb[i]);
	same = same && profile__total(a) == profile__total(b);
	same = same && profile__process_count(a) == profile__process_count(b);
	same = same && ma->time_unix_nano == mb->time_unix_nano &&
	       ma->duration_nano == mb->duration_nano && ma->period_ns == mb->period_ns &&
	       !memcmp(ma->profile_id, mb->profile_id, 16);
	same = same && !strcmp(str_or(ma->host_name), str_or(mb->host_name)) &&
	       !strcmp(str_or(ma->host_arch), str_or(mb->host_arch)) &&
	       !strcmp(str_or(ma->os_type), str_or(mb->os_type)) &&
	       !strcmp(str_or(ma->scope_name), str_or(mb->scope_name)) &&
	       !strcmp(str_or(ma->scope_version), str_or(mb->scope_version));
	same = same && ma->original_payload_len == mb->original_payload_len &&
	       !strcmp(str_or(ma->original_payload_format), str_or(mb->original_payload_format)) &&
	       (!ma->original_payload_len ||
		!memcmp(ma->original_payload, mb->original_payload, ma->original_payload_len));
	same = same && ma->samples_dropped == mb->samples_dropped &&
	       ma->samples_truncated == mb->samples_truncated &&
	       ma->samples_stack_missing == mb->samples_stack_missing;
	same = same && ma->nresource == mb->nresource;
	for (size_t k = 0; same && k < ma->nresource; k++)
		same = !strcmp(ma->resource[k].key, mb->resource[k].key) &&
		       !strcmp(ma->resource[k].value, mb->resource[k].value);
	return same;
}

TEST(round_trip)
{
	struct profile *p = capture_like(), *q = NULL, *q2 = NULL;
	struct buf b, b2;
	char err[256];

	CHECK(p);
	CHECK_EQ_U64(encode(p, &b), 0);
	CHECK_EQ_U64(parse(&b, &q, err, sizeof(err)), 0);
	CHECK(q);
	seed("capture_like.pb", &b);
	CHECK(same_profile(p, q));
	CHECK_EQ_U64(profile__process(q, 0)->pid, 100);
	CHECK_STR(profile__process(q, 0)->cmdline, "nginx: worker process");
	CHECK_STR(profile__meta(q)->host_name, "box");
	CHECK_EQ_U64(profile__meta(q)->nresource, 2);
	CHECK_STR(profile__meta(q)->resource[0].value, "checkout");
	/* Re-encoding what was read gives the same bytes. */
	CHECK_EQ_U64(encode(q, &b2), 0);
	CHECK_EQ_U64(b2.len, b.len);
	CHECK(!memcmp(b.data, b2.data, b.len));
	CHECK_EQ_U64(parse(&b2, &q2, err, sizeof(err)), 0);
	CHECK(same_profile(p, q2));
	profile__free(q2);
	profile__free(q);
	profile__free(p);
	buf__release(&b);
	buf__release(&b2);
}

/* The untranslated input of a conversion survives the round trip. */
/* A capture --off-cpu file: each Profile's sample type, period and the
 * off-CPU labels come back; single-type outputs take one type. */
TEST(off_cpu_round_trip)
{
	struct profile *p = capture_like(), *q = NULL;
	struct profile_labels lab = {"uninterruptible", 4};
	struct profile_process_desc nginx = {100, NULL, NULL, NULL, NULL};
	struct profile_frame f = {0xffffffff81234567, NULL, "io_schedule", PROFILE_FRAME_KERNEL,
				  NULL};
	__u32 t, st, su, pt, pu;
	char err[256] = "";
	struct buf b;

	CHECK(p);
	CHECK(!profile__add_value_type(p, "off_cpu", "nanoseconds", "context_switch", "count", 1,
				       &t));
	CHECK(!profile__add_typed_sample(p, t, &nginx, 101, "nginx", &lab, &f, 1, 123456789));
	CHECK(!profile__prune(p));
	CHECK(!encode(p, &b));
	CHECK_EQ_U64(parse(&b, &q, err, sizeof(err)), 0);
	CHECK(q);
	CHECK_EQ_U64(profile__value_type_count(q), 2);
	CHECK(!profile__find_value_type(q, "off_cpu", &t));
	CHECK_EQ_U64(profile__type_total(q, t), 123456789);
	CHECK_EQ_U64(profile__type_total(q, 0), profile__type_total(p, 0));
	CHECK_EQ_U64(profile__period(q, t), 1);
	profile__value_type(q, t, &st, &su, &pt, &pu);
	CHECK(!strcmp(profile__string(q, su, NULL), "nanoseconds"));
	CHECK(!strcmp(profile__string(q, pt, NULL), "context_switch"));
	CHECK(!strcmp(profile__string(q, pu, NULL), "count"));
	for (size_t i = 0; i < profile__process_count(q); i++) {
		const struct profile_sample_entry *e;

		if (profile__process_type(q, i) != t)
			continue;
		e = profile__sample(q, i, 0);
		CHECK_EQ_U64(e->nattrs, 4); /* thread.id, thread.name, state, switches */
	}
	profile__free(q);
	buf__release(&b);
	profile__free(p);
}

TEST(original_payload)
{
	static const char perf[] = "app 123/124 [000] 1.0: cpu-clock:\n\t  401000 main (/app)\n";
	struct profile *p = capture_like(), *q = NULL;
	struct profile_meta meta;
	struct buf b;
	char err[256];

	CHECK(p);
	meta = *profile__meta(p);
	meta.original_payload = perf;
	meta.original_payload_len = sizeof(perf) - 1;
	meta.original_payload_format = "linux_perf";
	CHECK_EQ_U64(profile__set_meta(p, &meta), 0);
	CHECK_EQ_U64(encode(p, &b), 0);
	seed("original_payload.pb", &b);
	CHECK_EQ_U64(parse(&b, &q, err, sizeof(err)), 0);
	CHECK(same_profile(p, q));
	CHECK_EQ_U64(profile__meta(q)->original_payload_len, sizeof(perf) - 1);
	CHECK_STR(profile__meta(q)->original_payload_format, "linux_perf");
	profile__free(q);
	profile__free(p);
	buf__release(&b);
}

/* Loss counts travel as Profile attributes; replaced ones leave no orphan. */
TEST(loss_counts)
{
	struct profile *p = capture_like(), *q = NULL;
	struct profile_meta meta;
	struct buf b, b2;
	size_t nattrs, n;
	char err[256];

	CHECK(p);
	nattrs = profile__attr_count(p);
	meta = *profile__meta(p);
	meta.samples_dropped = 5;
	meta.samples_stack_missing = 7;
	CHECK_EQ_U64(profile__set_meta(p, &meta), 0);
	profile__meta_attrs(p, &n);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(profile__attr_count(p), nattrs + 2);
	/* A fresh copy: set_meta freed the strings the old one pointed to
	 * (found by the ASan build of this test). */
	meta = *profile__meta(p);
	meta.samples_dropped = 0;
	meta.samples_truncated = 3;
	meta.samples_stack_missing = 8;
	CHECK_EQ_U64(profile__set_meta(p, &meta), 0);
	CHECK_EQ_U64(profile__prune(p), 0);
	CHECK_EQ_U64(profile__attr_count(p), nattrs + 2);
	CHECK_EQ_U64(encode(p, &b), 0);
	seed("loss_counts.pb", &b);
	CHECK_EQ_U64(parse(&b, &q, err, sizeof(err)), 0);
	CHECK(same_profile(p, q));
	CHECK_EQ_U64(profile__meta(q)->samples_dropped, 0);
	CHECK_EQ_U64(profile__meta(q)->samples_truncated, 3);
	CHECK_EQ_U64(profile__meta(q)->samples_stack_missing, 8);
	/* Written again, they read back the same (table order may differ). */
	CHECK_EQ_U64(encode(q, &b2), 0);
	profile__free(q);
	q = NULL;
	CHECK_EQ_U64(parse(&b2, &q, err, sizeof(err)), 0);
	CHECK(same_profile(p, q));
	profile__free(q);
	profile__free(p);
	buf__release(&b);
	buf__release(&b2);
}

TEST(empty_profile)
{
	struct profile_meta meta = {.time_unix_nano = 42, .period_ns = 1000, .host_name = "h"};
	struct profile *p = profile__new(), *q = NULL;
	struct buf b;
	char err[256];

	CHECK(p);
	CHECK_EQ_U64(profile__set_meta(p, &meta), 0);
	CHECK_EQ_U64(encode(p, &b), 0);
	CHECK_EQ_U64(parse(&b, &q, err, sizeof(err)), 0);
	CHECK_EQ_U64(profile__process_count(q), 0);
	seed("empty.pb", &b);
	CHECK_EQ_U64(profile__total(q), 0);
	CHECK(same_profile(p, q));
	profile__free(q);
	q = NULL;
	/* Zero bytes are an empty ProfilesData, but no capture: an error. */
	CHECK_EQ_U64(otlp_read__parse("", 0, &q, err, sizeof(err)), -EBADMSG);
	CHECK(!q);
	CHECK(strstr(err, "empty input"));
	profile__free(p);
	buf__release(&b);
}

TEST(gzip)
{
	struct profile *p = capture_like(), *q = NULL;
	struct buf b, z;
	char err[256];

	CHECK(p);
	CHECK_EQ_U64(encode(p, &b), 0);
	buf__init(&z, MAX_FILE);
	CHECK_EQ_U64(gz__compress(b.data, b.len, &z), 0);
	seed("capture_like.pb.gz", &z);
	CHECK_EQ_U64(parse(&z, &q, err, sizeof(err)), 0);
	CHECK(same_profile(p, q));
	profile__free(q);
	q = NULL;
	/* Truncated gzip is an error, not a crash. */
	CHECK_EQ_U64(otlp_read__parse(z.data, z.len / 2, &q, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "gzip"));
	CHECK(!q);
	profile__free(p);
	buf__release(&b);
	buf__release(&z);
}

/* ---- a tiny protobuf writer for hand-made files ---- */

#define WT_VARINT 0
#define WT_I64 1
#define WT_LEN 2

static void pw_varint(struct buf *b, __u64 v)
{
	unsigned char c;

	do {
		c = v & 0x7f;
		v >>= 7;
		if (v)
			c |= 0x80;
		buf__append(b, &c, 1);
	} while (v);
}

static void pw_tag(struct buf *b, __u32 field, __u32 wt)
{
	pw_varint(b, (__u64)field << 3 | wt);
}

static void pw_uint(struct buf *b, __u32 field, __u64 v)
{
	pw_tag(b, field, WT_VARINT);
	pw_varint(b, v);
}

static void pw_fixed64(struct buf *b, __u32 field, __u64 v)
{
	pw_tag(b, field, WT_I64);
	buf__append(b, &v, 8); /* x86: little endian */
}

static void pw_bytes(struct buf *b, __u32 field, const void *d, size_t len)
{
	pw_tag(b, field, WT_LEN);
	pw_varint(b, len);
	buf__append(b, d, len);
}

static void pw_str(struct buf *b, __u32 field, const char *s)
{
	pw_bytes(b, field, s, strlen(s));
}

/* Append message @sub as field @field and empty @sub for reuse. */
static void pw_msg(struct buf *b, __u32 field, struct buf *sub)
{
	pw_bytes(b, field, sub->data, sub->len);
	buf__reset(sub);
}

static void pw_init(struct buf *b)
{
	buf__init(b, MAX_FILE);
}

/* A KeyValue with an inline key and a string or int value. */
static void pw_kv(struct buf *b, __u32 field, const char *key, const char *str, __s64 num)
{
	struct buf kv, v;

	pw_init(&kv);
	pw_init(&v);
	pw_str(&kv, 1, key);
	if (str)
		pw_str(&v, 1, str);
	else
		pw_uint(&v, 3, (__u64)num);
	pw_msg(&kv, 2, &v);
	pw_msg(b, field, &kv);
	buf__release(&kv);
	buf__release(&v);
}

/* Dictionary attribute: key string index, value as string index or int. */
static void pw_attr(struct buf *d, __u32 key, int strindex, __u32 sval, __s64 ival)
{
	struct buf a, v;

	pw_init(&a);
	pw_init(&v);
	pw_uint(&a, 1, key);
	if (strindex)
		pw_uint(&v, 8, sval);
	else
		pw_uint(&v, 3, (__u64)ival);
	pw_msg(&a, 2, &v);
	pw_msg(d, 6, &a);
	buf__release(&a);
	buf__release(&v);
}

/* Strings of the foreign file. */
enum {
	S_EMPTY,
	S_WALL,
	S_NS,
	S_MAIN,
	S_SYS_ONLY,
	S_FILE_ONLY,
	S_APP,
	S_FTYPE,
	S_PYTHON,
	S_TID,
	S_TNAME,
	S_WORKER,
	S_KERNEL,
	S_BUILD_ID_KEY,
	S_BUILD_ID,
	S_COUNT,
};

static const char *const foreign_strings[S_COUNT] = {
	"",
	"wall",
	"nanoseconds",
	"main",
	"sys_only",
	"file.py",
	"/opt/app",
	"profile.frame.type",
	"python",
	"thread.id",
	"thread.name",
	"worker",
	"kernel",
	"process.executable.build_id.gnu",
	"abcdef",
};

/* A file like other tools write: unpacked index lists, AnyValue string
 * indices, a string pid, a resource without pid, samples with timestamps
 * only, an unknown field everywhere, two scopes and two profiles. */
static void foreign_file(struct buf *out)
{
	struct buf d, m, sub, sub2, rp, sp, pr, s, res;
	int i;

	pw_init(&d);
	pw_init(&m);
	pw_init(&sub);
	pw_init(&sub2);
	pw_init(&rp);
	pw_init(&sp);
	pw_init(&pr);
	pw_init(&s);
	pw_init(&res);
	pw_init(out);

	/* Resources first: the dictionary comes last on the wire. */
	/* resource 0: pid as a string, exe */
	pw_kv(&res, 1, "process.pid", "777", 0);
	pw_kv(&res, 1, "process.executable.name", "app", 0);
	pw_kv(&res, 1, "host.name", "foreign-host", 0);
	pw_kv(&res, 1, "process.runtime.name", "cpython", 0); /* dropped: process.* */
	pw_uint(&res, 99, 5);				      /* unknown */
	/* scope 0: two profiles */
	pw_str(&sub, 1, "other-profiler");
	pw_str(&sub, 2, "9.9");
	pw_msg(&sp, 1, &sub);
	/* profile 0 */
	pw_uint(&sub, 1, S_WALL);
	pw_uint(&sub, 2, S_NS);
	pw_msg(&pr, 1, &sub);
	pw_uint(&sub, 1, S_WALL);
	pw_uint(&sub, 2, S_NS);
	pw_msg(&pr, 5, &sub);
	pw_uint(&pr, 6, 1000000);
	pw_fixed64(&pr, 3, 1600000000000000000ull);
	pw_uint(&pr, 4, 2000000000);
	/* sample: stack 1, unpacked attrs (tid 7, name worker), 3 timestamps */
	pw_uint(&s, 1, 1);
	pw_uint(&s, 2, 2);
	pw_uint(&s, 2, 3);
	for (i = 0; i < 3; i++)
		pw_fixed64(&s, 5, 1600000000000000000ull + i);
	pw_uint(&s, 77, 1); /* unknown */
	pw_msg(&pr, 2, &s);
	/* sample: stack 2, unpacked values 4 and 9 -> 4 */
	pw_uint(&s, 1, 2);
	pw_uint(&s, 4, 4);
	pw_uint(&s, 4, 9);
	pw_msg(&pr, 2, &s);
	/* sample: zero value, skipped */
	pw_uint(&s, 1, 2);
	pw_uint(&s, 4, 0);
	pw_msg(&pr, 2, &s);
	/* sample: empty (no values, no timestamps): value 0, skipped */
	pw_uint(&s, 1, 1);
	pw_msg(&pr, 2, &s);
	pw_msg(&sp, 2, &pr);
	/* profile 1 of the same scope: packed timestamps */
	pw_uint(&s, 1, 1);
	pw_tag(&s, 5, WT_LEN);
	pw_varint(&s, 16);
	buf__append(&s, "0123456789abcdef", 16);
	pw_msg(&pr, 2, &s);
	pw_msg(&sp, 2, &pr);
	pw_msg(&rp, 2, &sp);
	/* the Resource after its scopes */
	pw_msg(&rp, 1, &res);
	pw_msg(out, 1, &rp);

	/* resource 1: no pid, a second scope; resource 2: no pid either */
	for (i = 0; i < 2; i++) {
		pw_kv(&res, 1, "process.executable.name", i ? "third" : "nopid", 0);
		pw_kv(&res, 1, "process.command_line", "x --y", 0);
		pw_msg(&rp, 1, &res);
		pw_str(&sub, 1, "another-scope");
		pw_msg(&sp, 1, &sub);
		pw_uint(&s, 1, 3);
		pw_tag(&s, 4, WT_LEN); /* packed values 6, 1 */
		pw_varint(&s, 2);
		pw_varint(&s, 6);
		pw_varint(&s, 1);
		pw_msg(&pr, 2, &s);
		pw_msg(&sp, 2, &pr);
		pw_msg(&rp, 2, &sp);
		pw_msg(out, 1, &rp);
	}

	/* dictionary */
	/* mappings: 0 zero; 1 /opt/app with build id (attr 4); 2 empty range */
	pw_msg(&d, 1, &m);
	pw_uint(&m, 1, 0x400000);
	pw_uint(&m, 2, 0x500000);
	pw_uint(&m, 3, 0x1000);
	pw_uint(&m, 4, S_APP);
	pw_uint(&m, 5, 4);
	pw_msg(&d, 1, &m);
	pw_uint(&m, 1, 0x600000);
	pw_uint(&m, 2, 0x600000);
	pw_uint(&m, 4, S_APP);
	pw_msg(&d, 1, &m);
	/* functions: 0 zero; 1 main; 2 system name only; 3 filename only */
	pw_msg(&d, 3, &m);
	pw_uint(&m, 1, S_MAIN);
	pw_msg(&d, 3, &m);
	pw_uint(&m, 2, S_SYS_ONLY);
	pw_msg(&d, 3, &m);
	pw_uint(&m, 3, S_FILE_ONLY);
	pw_uint(&m, 4, 12);
	pw_msg(&d, 3, &m);
	/* locations: 0 zero; 1 main in /opt/app (two lines: lines[0] names it);
	 * 2 sys_only, python frame; 3 file only in the empty mapping; 4 kernel */
	pw_msg(&d, 2, &m);
	pw_uint(&m, 1, 1);
	pw_uint(&m, 2, 0x401000);
	pw_uint(&sub2, 1, 1);
	pw_uint(&sub2, 2, 33);
	pw_msg(&m, 3, &sub2);
	pw_uint(&sub2, 1, 2);
	pw_msg(&m, 3, &sub2);
	pw_msg(&d, 2, &m);
	pw_uint(&m, 2, 0x10);
	pw_uint(&sub2, 1, 2);
	pw_msg(&m, 3, &sub2);
	pw_uint(&m, 4, 1);
	pw_msg(&d, 2, &m);
	pw_uint(&m, 1, 2);
	pw_uint(&m, 2, 0x600010);
	pw_uint(&sub2, 1, 3);
	pw_msg(&m, 3, &sub2);
	pw_msg(&d, 2, &m);
	pw_uint(&m, 2, 0xffffffff81000000ull);
	pw_uint(&m, 4, 5);
	pw_msg(&d, 2, &m);
	/* stacks: 0 zero; 1 = [1, 2] unpacked; 2 = [3, 1] packed; 3 = [4, 1] */
	pw_msg(&d, 7, &m);
	pw_uint(&m, 1, 1);
	pw_uint(&m, 1, 2);
	pw_msg(&d, 7, &m);
	pw_tag(&m, 1, WT_LEN);
	pw_varint(&m, 2);
	pw_varint(&m, 3);
	pw_varint(&m, 1);
	pw_msg(&d, 7, &m);
	pw_tag(&m, 1, WT_LEN);
	pw_varint(&m, 2);
	pw_varint(&m, 4);
	pw_varint(&m, 1);
	pw_msg(&d, 7, &m);
	/* attributes: 0 zero; 1 python frame type; 2 tid 7; 3 name; 4 build id;
	 * 5 kernel frame type (inline string) */
	pw_msg(&d, 6, &m);
	pw_attr(&d, S_FTYPE, 1, S_PYTHON, 0);
	pw_attr(&d, S_TID, 0, 0, 7);
	pw_attr(&d, S_TNAME, 1, S_WORKER, 0);
	pw_attr(&d, S_BUILD_ID_KEY, 1, S_BUILD_ID, 0);
	pw_uint(&m, 1, S_FTYPE);
	pw_str(&sub, 1, "kernel");
	pw_msg(&m, 2, &sub);
	pw_msg(&d, 6, &m);
	pw_uint(&d, 100, 1); /* unknown */
	for (i = 0; i < S_COUNT; i++)
		pw_str(&d, 5, foreign_strings[i]);
	pw_msg(out, 2, &d);

	buf__release(&d);
	buf__release(&m);
	buf__release(&sub);
	buf__release(&sub2);
	buf__release(&rp);
	buf__release(&sp);
	buf__release(&pr);
	buf__release(&s);
	buf__release(&res);
}

TEST(foreign_file)
{
	static const char want[] =
		"pid=-2 exe=nopid path=- cmd=x --y\n"
		"pid=-2 exe=nopid path=- cmd=x --y value=6 thread.id=0 | ffffffff81000000 "
		"[kernel] | 401000 main [native] 400000-500000@1000 /opt/app abcdef\n"
		"pid=-3 exe=third path=- cmd=x --y\n"
		"pid=-3 exe=third path=- cmd=x --y value=6 thread.id=0 | ffffffff81000000 "
		"[kernel] | 401000 main [native] 400000-500000@1000 /opt/app abcdef\n"
		"pid=777 exe=app path=- cmd=-\n"
		"pid=777 exe=app path=- cmd=- value=2 thread.id=0 | 401000 main [native] "
		"400000-500000@1000 /opt/app abcdef | 10 sys_only [python]\n"
		"pid=777 exe=app path=- cmd=- value=3 thread.id=7 thread.name=worker | 401000 main "
		"[native] 400000-500000@1000 /opt/app abcdef | 10 sys_only [python]\n"
		"pid=777 exe=app path=- cmd=- value=4 thread.id=0 | 600010 file.py [native] | "
		"401000 main [native] 400000-500000@1000 /opt/app abcdef\n";
	struct profile *q = NULL;
	const char *vt[4];
	struct buf b;
	char err[256], *got;

	foreign_file(&b);
	seed("foreign.pb", &b);
	CHECK_EQ_U64(parse(&b, &q, err, sizeof(err)), 0);
	got = describe(q);
	if (strcmp(got, want))
		printf("  got:\n%s", got);
	CHECK(!strcmp(got, want));
	free(got);
	value_types(q, vt);
	CHECK_STR(vt[0], "wall");
	CHECK_STR(vt[1], "nanoseconds");
	CHECK_STR(vt[2], "wall");
	CHECK_EQ_U64(profile__meta(q)->period_ns, 1000000);
	CHECK_EQ_U64(profile__meta(q)->time_unix_nano, 1600000000000000000ull);
	CHECK_EQ_U64(profile__meta(q)->duration_nano, 2000000000);
	CHECK_STR(profile__meta(q)->host_name, "foreign-host");
	CHECK_STR(profile__meta(q)->scope_name, "other-profiler");
	CHECK_STR(profile__meta(q)->scope_version, "9.9");
	CHECK_EQ_U64(profile__meta(q)->nresource, 0);
	CHECK_EQ_U64(profile__total(q), 3 + 4 + 2 + 6 + 6);
	profile__free(q);
	buf__release(&b);
}

/* The dictionary may come first: a request framed that way reads the same.
 * ExportProfilesServiceRequest has ProfilesData's field numbers. */
TEST(dictionary_first)
{
	struct profile *p = capture_like(), *q = NULL;
	struct buf b, r;
	size_t dict_at;
	char err[256];

	_Static_assert(REQ(resource_profiles_tag) == 1, "request field numbers");
	_Static_assert(REQ(dictionary_tag) == 2, "request field numbers");
	CHECK(p);
	CHECK_EQ_U64(encode(p, &b), 0);
	/* The encoder writes the dictionary last: find its tag (0x12) by
	 * walking the top-level fields (all length-delimited). */
	dict_at = 0;
	while (dict_at < b.len && b.data[dict_at] != 0x12) {
		size_t len = 0, shift = 0, i = dict_at + 1;

		while (b.data[i] & 0x80) {
			len |= (size_t)(b.data[i++] & 0x7f) << shift;
			shift += 7;
		}
		len |= (size_t)b.data[i++] << shift;
		dict_at = i + len;
	}
	CHECK(dict_at < b.len);
	buf__init(&r, MAX_FILE);
	buf__append(&r, b.data + dict_at, b.len - dict_at);
	buf__append(&r, b.data, dict_at);
	seed("dictionary_first.pb", &r);
	CHECK_EQ_U64(parse(&r, &q, err, sizeof(err)), 0);
	CHECK(same_profile(p, q));
	profile__free(q);
	profile__free(p);
	buf__release(&b);
	buf__release(&r);
}

/* ---- malformed input ---- */

TEST(truncated_everywhere)
{
	struct profile *p = capture_like(), *q = NULL;
	size_t i, ok = 0;
	struct buf b;
	char err[256];
	int ret;

	CHECK(p);
	CHECK_EQ_U64(encode(p, &b), 0);
	for (i = 0; i < b.len; i++) {
		/* A copy of exactly i bytes, so a read past it is caught by
		 * valgrind or ASan. */
		unsigned char *c = malloc(i ? i : 1);

		memcpy(c, b.data, i);
		q = NULL;
		err[0] = '\0';
		ret = otlp_read__parse(c, i, &q, err, sizeof(err));
		free(c);
		if (!ret) {
			ok++;
			CHECK(q);
			profile__free(q);
			continue;
		}
		CHECK(!q);
		if (ret != -EBADMSG) {
			printf("  cut at %zu: %d %s\n", i, ret, err);
			CHECK(0);
		}
		CHECK(err[0]);
	}
	/* Cuts at a top-level field boundary are valid files (but not the cut
	 * at 0: zero bytes are no capture). */
	CHECK(ok < 10);
	profile__free(p);
	buf__release(&b);
}

static int parse_err(const struct buf *b, char *err, size_t errlen)
{
	struct profile *q = NULL;
	int ret = otlp_read__parse(b->data, b->len, &q, err, errlen);

	if (!ret || q) {
		profile__free(q);
		return 0;
	}
	return ret;
}

/* A file with 3 empty stacks, one string and one sample of stack @stack
 * (with attribute index @attr unless 0); @extra adds one broken entry. */
static void one_sample_file(struct buf *out, __u64 stack, __u64 attr, int extra)
{
	struct buf d, rp, sp, pr, s, e;
	int i;

	pw_init(&d);
	pw_init(&rp);
	pw_init(&sp);
	pw_init(&pr);
	pw_init(&s);
	pw_init(&e);
	pw_init(out);
	for (i = 0; i < 3; i++)
		pw_msg(&d, 7, &e); /* 3 stacks */
	pw_str(&d, 5, "");
	if (extra == 1) { /* a location pointing at mapping 5 */
		pw_msg(&d, 2, &e);
		pw_uint(&e, 1, 5);
		pw_msg(&d, 2, &e);
	}
	if (extra == 2) { /* a stack pointing at location 9 */
		pw_uint(&e, 1, 9);
		pw_msg(&d, 7, &e);
	}
	if (extra == 3) { /* a function with string index 3 */
		pw_uint(&e, 1, 3);
		pw_msg(&d, 3, &e);
	}
	pw_msg(out, 2, &d);
	pw_uint(&s, 1, stack);
	if (attr)
		pw_uint(&s, 2, attr);
	pw_uint(&s, 4, 1);
	pw_msg(&pr, 2, &s);
	pw_msg(&sp, 2, &pr);
	pw_msg(&rp, 2, &sp);
	pw_msg(out, 1, &rp);
	buf__release(&d);
	buf__release(&rp);
	buf__release(&sp);
	buf__release(&pr);
	buf__release(&s);
	buf__release(&e);
}

TEST(bad_indices)
{
	struct buf b;
	char err[256];

	one_sample_file(&b, 2, 0, 0);
	seed("one_sample.pb", &b);
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), 0); /* valid */
	buf__release(&b);

	one_sample_file(&b, 99, 0, 0);
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK_STR(err, "sample 0 of resource 0 (scope 0, profile 0): stack_index 99 out of range "
		       "(stack_table has 3 entries)");
	buf__release(&b);

	one_sample_file(&b, (__u64)-1, 0, 0); /* int32 -1 on the wire */
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "stack_index -1 is negative"));
	buf__release(&b);

	one_sample_file(&b, 1, 4, 0);
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "attribute index 4 out of range (attribute_table has 1 entries)"));
	buf__release(&b);

	one_sample_file(&b, 1, 0, 1);
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK_STR(err, "dictionary: location_table 1: mapping_index 5 out of range "
		       "(mapping_table has 1 entries)");
	buf__release(&b);

	one_sample_file(&b, 1, 0, 2);
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "stack_table 3: location index 9 out of range"));
	buf__release(&b);

	one_sample_file(&b, 1, 0, 3);
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "function_table 0: name_strindex 3 out of range (string_table has 1"));
	buf__release(&b);
}

/* Append a ProfilesData holding Sample @sample (and no dictionary) to @out. */
static void wrap_sample(struct buf *out, struct buf *sample)
{
	struct buf pr, sp, rp;

	pw_init(&pr);
	pw_init(&sp);
	pw_init(&rp);
	pw_msg(&pr, 2, sample);
	pw_msg(&sp, 2, &pr);
	pw_msg(&rp, 2, &sp);
	pw_msg(out, 1, &rp);
	buf__release(&pr);
	buf__release(&sp);
	buf__release(&rp);
}

TEST(bad_wire)
{
	static const unsigned char huge_len[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00};
	static const unsigned char huge_len64[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0xff,
						   0xff, 0xff, 0xff, 0xff, 0x01};
	static const unsigned char wrong_top[] = {0x08, 0x01}; /* resource_profiles as varint */
	static const unsigned char bad_wt[] = {0x0f, 0x01};    /* wire type 7 */
	static const unsigned char zero_tag[] = {0x00, 0x01};
	/* field number 2^29, one past the largest */
	static const unsigned char big_field[] = {0x80, 0x80, 0x80, 0x80, 0x10, 0x00};
	/* dictionary { mapping_table { memory_start: an 11-byte varint } } */
	static const unsigned char long_varint[] = {0x12, 0x0e, 0x0a, 0x0c, 0x08, 0xff, 0xff, 0xff,
						    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	static const unsigned char text[] = "hello, this is not protobuf\n";
	struct buf b, sub;
	struct profile *q = NULL;
	char err[256];

	buf__init(&b, 64);
	buf__append(&b, huge_len, sizeof(huge_len));
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	if (!strstr(err, "runs past the end"))
		printf("  %s\n", err);
	CHECK(strstr(err, "runs past the end"));
	buf__reset(&b);
	buf__append(&b, huge_len64, sizeof(huge_len64));
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	buf__reset(&b);
	buf__append(&b, wrong_top, sizeof(wrong_top));
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK_STR(err, "resource_profiles has wire type varint, expected length-delimited");
	buf__reset(&b);
	buf__append(&b, bad_wt, sizeof(bad_wt));
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	buf__reset(&b);
	buf__append(&b, zero_tag, sizeof(zero_tag));
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	buf__reset(&b);
	buf__append(&b, long_varint, sizeof(long_varint));
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "varint overflow"));
	buf__reset(&b);
	buf__append(&b, big_field, sizeof(big_field));
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK_STR(err, "malformed protobuf (field number too large)");
	buf__reset(&b);
	buf__append(&b, bad_wt, sizeof(bad_wt));
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK_STR(err, "malformed protobuf (group or invalid wire type)");
	buf__reset(&b);
	buf__append(&b, text, sizeof(text) - 1);
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	buf__release(&b);

	/* Inside a sample: stack_index as a length-delimited field. */
	pw_init(&b);
	pw_init(&sub);
	pw_str(&sub, 1, "x");
	wrap_sample(&b, &sub);
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK_STR(err, "sample 0 of resource 0 (scope 0, profile 0): stack_index has wire type "
		       "length-delimited, expected varint");
	buf__release(&b);
	buf__release(&sub);

	/* Packed timestamps of a length that is not a multiple of 8. */
	pw_init(&b);
	pw_init(&sub);
	pw_bytes(&sub, 5, "1234567", 7);
	wrap_sample(&b, &sub);
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "timestamps_unix_nano: packed length 7 is not a multiple of 8"));
	buf__release(&b);
	buf__release(&sub);

	/* A negative value paired with a timestamp. */
	pw_init(&b);
	pw_init(&sub);
	pw_uint(&sub, 4, 5);
	pw_uint(&sub, 4, (__u64)-2);
	pw_fixed64(&sub, 5, 1);
	pw_fixed64(&sub, 5, 2);
	wrap_sample(&b, &sub);
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "values[1] is negative (-2)"));
	buf__release(&b);
	buf__release(&sub);

	/* A negative value. */
	pw_init(&b);
	pw_init(&sub);
	pw_uint(&sub, 4, (__u64)-3);
	wrap_sample(&b, &sub);
	CHECK_EQ_U64(parse_err(&b, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "values[0] is negative (-3)"));
	buf__release(&b);
	buf__release(&sub);

	/* No error buffer is fine. */
	one_sample_file(&b, 1, 0, 0);
	CHECK_EQ_U64(otlp_read__parse(b.data, b.len, &q, NULL, 0), 0); /* NULL err is fine */
	profile__free(q);
	buf__release(&b);
}

/* @levels AnyValues nested through array_value around a string leaf,
 * written outside in (no copying). */
static void nested_value(struct buf *out, size_t levels)
{
	size_t *len = calloc(levels + 1, sizeof(*len)), k;

	/* len[k]: bytes of the AnyValue at depth k (0 = the leaf). */
	len[0] = 6; /* string_value "leaf" */
	for (k = 1; k <= levels; k++) {
		size_t arr = 1 + (len[k - 1] < 128 ? 1 : len[k - 1] < 16384 ? 2 : 3) + len[k - 1];

		len[k] = 1 + (arr < 128 ? 1 : arr < 16384 ? 2 : 3) + arr;
	}
	for (k = levels; k >= 1; k--) {
		pw_tag(out, 5, WT_LEN);
		pw_varint(out, len[k - 1] + 1 +
				       (len[k - 1] < 128     ? 1
					: len[k - 1] < 16384 ? 2
							     : 3));
		pw_tag(out, 1, WT_LEN);
		pw_varint(out, len[k - 1]);
	}
	pw_str(out, 1, "leaf");
	free(len);
}

/* An attribute value nested 100000 arrays deep, and the same bytes as an
 * unknown field: skipped as opaque bytes, no recursion. */
TEST(deep_nesting)
{
	struct buf v, w, d, out;
	struct profile *q = NULL;
	char err[256];

	pw_init(&v);
	pw_init(&w);
	pw_init(&d);
	pw_init(&out);
	nested_value(&v, 100000);
	pw_uint(&w, 1, 0);
	pw_msg(&w, 2, &v);
	pw_msg(&d, 6, &w);
	pw_str(&d, 5, "");
	pw_msg(&out, 2, &d);
	CHECK_EQ_U64(otlp_read__parse(out.data, out.len, &q, err, sizeof(err)), 0);
	CHECK_EQ_U64(profile__process_count(q), 0);
	profile__free(q);
	q = NULL;
	buf__reset(&out);
	nested_value(&v, 100000);
	pw_msg(&out, 9, &v);
	CHECK_EQ_U64(otlp_read__parse(out.data, out.len, &q, err, sizeof(err)), 0);
	profile__free(q);
	buf__release(&v);
	buf__release(&w);
	buf__release(&d);
	buf__release(&out);
}

TEST(gzip_bomb)
{
	size_t big = 64u << 20;
	unsigned char *zeros = calloc(1, big);
	struct profile *q = NULL;
	struct buf z;
	char err[256];

	CHECK(zeros);
	buf__init(&z, 1 << 20);
	CHECK_EQ_U64(gz__compress(zeros, big, &z), 0);
	free(zeros);
	CHECK(z.len < 256 * 1024);
	CHECK_EQ_U64(otlp_read__parse_capped(z.data, z.len, 4u << 20, &q, err, sizeof(err)),
		     -E2BIG);
	CHECK(!q);
	CHECK(strstr(err, "inflates past"));
	/* An uncompressed input over the cap is refused before parsing. */
	CHECK_EQ_U64(otlp_read__parse_capped(z.data, z.len, 16, &q, err, sizeof(err)), -E2BIG);
	buf__release(&z);
}

TEST(read_file)
{
	char path[] = "/tmp/test_otlp_read.XXXXXX";
	struct profile *p = capture_like(), *q = NULL;
	struct buf b;
	int fd;

	CHECK(p);
	CHECK_EQ_U64(encode(p, &b), 0);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_EQ_U64(write(fd, b.data, b.len), b.len);
	close(fd);
	CHECK_EQ_U64(otlp_read__file(path, &q), 0);
	CHECK(same_profile(p, q));
	profile__free(q);
	q = NULL;
	/* Corrupt it: an error naming the file (logged), no profile. */
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0);
	CHECK_EQ_U64(write(fd, b.data, b.len - 3), b.len - 3);
	close(fd);
	CHECK_EQ_U64(otlp_read__file(path, &q), -EBADMSG);
	CHECK(!q);
	unlink(path);
	CHECK_EQ_U64(otlp_read__file(path, &q), -ENOENT);
	profile__free(p);
	buf__release(&b);
}

int main(void)
{
	RUN(round_trip);
	RUN(off_cpu_round_trip);
	RUN(original_payload);
	RUN(loss_counts);
	RUN(empty_profile);
	RUN(gzip);
	RUN(foreign_file);
	RUN(dictionary_first);
	RUN(truncated_everywhere);
	RUN(bad_indices);
	RUN(bad_wire);
	RUN(deep_nesting);
	RUN(gzip_bomb);
	RUN(read_file);
	return TEST_DONE();
}
