/* test_pprof_read.c - pprof reader: OTLP -> model -> pprof -> model -> OTLP
 * keeps every sample (process, thread attributes, value) with its stack
 * (functions, addresses, frame types, mappings with build ids); detection of
 * pprof against OTLP; malformed input fails with -EBADMSG and a reason. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/gz.h"
#include "formats/otlp.h"
#include "formats/otlp_read.h"
#include "formats/pprof.h"
#include "formats/pprof_read.h"
#include "model/profile.h"
#include "test.h"

static const struct profile_mapping_desc app_map = {0x1000, 0x9000, 0x200, "/usr/bin/app",
						    "0123abcd"};
static const struct profile_mapping_desc libc_map = {0x7f0000, 0x7f8000, 0, "/lib/libc.so.6",
						     NULL};
static const struct profile_mapping_desc kmap = {0xffffffff81000000ull, 0xffffffff82000000ull, 0,
						 "[kernel.kallsyms]", NULL};

static struct profile *model(void)
{
	const struct profile_process_desc app = {100, "app", "/usr/bin/app", "app --serve 8080",
						 "c0ffee"};
	const struct profile_process_desc db = {200, "db", "/usr/sbin/db", NULL, NULL};
	const struct profile_frame f[] = {
		{0xffffffff81000100ull, &kmap, "do_syscall_64", PROFILE_FRAME_KERNEL, NULL},
		{0x7f1234, &libc_map, "write", PROFILE_FRAME_NATIVE, NULL},
		{0x1234, &app_map, "work", PROFILE_FRAME_NATIVE, NULL},
		{0x1100, &app_map, "main", PROFILE_FRAME_NATIVE, NULL},
		{0x1555, &app_map, NULL, PROFILE_FRAME_NATIVE, NULL},
	};
	const struct profile_meta meta = {
		.time_unix_nano = 1700000000000000000ull,
		.duration_nano = 2000000000ull,
		.period_ns = 1001001,
		.profile_id = {1},
		.scope_name = "profcap",
	};
	struct profile *p = profile__new();

	if (!p)
		return NULL;
	if (profile__set_meta(p, &meta) || profile__add_sample(p, &app, 101, "worker", f, 4, 3) ||
	    profile__add_sample(p, &app, 100, NULL, f + 2, 2, 5) ||
	    profile__add_sample(p, &db, 201, "io", f + 1, 3, 7) ||
	    profile__add_sample(p, &db, 200, "db", f + 4, 1, 1)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *s_or(const char *s)
{
	return s && *s ? s : "-";
}

/* One line per sample: process, thread attributes, value, frames; sorted. */
static char *dump(const struct profile *p)
{
	char *lines[64], *out;
	size_t n = 0, i, j, k, total = 1;

	for (i = 0; i < profile__process_count(p); i++) {
		const struct profile_process_desc *d = profile__process(p, i);

		for (j = 0; j < profile__sample_count(p, i) && n < 64; j++) {
			const struct profile_sample_entry *s = profile__sample(p, i, j);
			char buf[4096];
			size_t nl, len;
			const __u32 *locs = profile__stack(p, s->stack, &nl);

			len = (size_t)snprintf(buf, sizeof(buf), "pid=%lld %s %s %s %s v=%llu",
					       (long long)d->pid, s_or(d->exe_name),
					       s_or(d->exe_path), s_or(d->cmdline),
					       s_or(d->container_id), (unsigned long long)s->value);
			for (k = 0; k < s->nattrs; k++) {
				const struct profile_attr_entry *a = profile__attr(p, s->attrs[k]);

				len += (size_t)snprintf(buf + len, sizeof(buf) - len, " %s=",
							profile__string(p, a->key, NULL));
				if (a->kind == PROFILE_ATTR_STR)
					len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s",
								a->str_value);
				else
					len += (size_t)snprintf(buf + len, sizeof(buf) - len,
								"%lld", (long long)a->int_value);
			}
			for (k = 0; k < nl; k++) {
				const struct profile_location_entry *l = profile__location(p, locs[k]);
				const struct profile_mapping_entry *m =
					l->mapping ? profile__mapping(p, l->mapping) : NULL;
				__u32 fi = profile__location_function(p, l);
				const char *fn =
					fi ? profile__string(p, profile__function(p, fi)->name, NULL) : "?";
				const char *ty = l->attr ? profile__attr(p, l->attr)->str_value : "-";

				len += (size_t)snprintf(
					buf + len, sizeof(buf) - len, " | %s@%llx %s %s %s %llx-%llx+%llx",
					fn, (unsigned long long)l->address, ty,
					m ? profile__string(p, m->filename, NULL) : "-",
					m && m->attr ? profile__attr(p, m->attr)->str_value : "-",
					m ? (unsigned long long)m->start : 0ull,
					m ? (unsigned long long)m->limit : 0ull,
					m ? (unsigned long long)m->file_offset : 0ull);
			}
			lines[n++] = strdup(buf);
			total += len + 1;
		}
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	out = calloc(1, total);
	for (i = 0; out && i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
	}
	for (i = 0; i < n; i++)
		free(lines[i]);
	return out;
}

static struct profile *via_otlp(const struct profile *p)
{
	struct profile *q = NULL;
	struct buf b;
	char why[256];

	buf__init(&b, 1 << 24);
	if (!otlp__encode(p, &b))
		otlp_read__parse(b.data, b.len, &q, why, sizeof(why));
	buf__release(&b);
	return q;
}

static struct profile *via_pprof(const struct profile *p, bool gunzip)
{
	struct profile *q = NULL;
	struct buf b, plain;
	char why[256];

	buf__init(&b, 1 << 24);
	buf__init(&plain, 1 << 24);
	if (!pprof__encode(p, &b)) {
		if (gunzip && !gz__decompress(b.data, b.len, &plain))
			pprof_read__parse(plain.data, plain.len, 1 << 24, &q, why, sizeof(why));
		else if (!gunzip)
			pprof_read__parse(b.data, b.len, 1 << 24, &q, why, sizeof(why));
	}
	buf__release(&b);
	buf__release(&plain);
	return q;
}

TEST(otlp_pprof_otlp_roundtrip)
{
	struct profile *a = model(), *b = NULL, *c = NULL, *d = NULL, *e = NULL;
	char *da = NULL, *db = NULL, *dd = NULL, *de = NULL;
	int ok;

	CHECK(a);
	b = via_otlp(a);
	c = b ? via_pprof(b, false) : NULL;
	d = c ? via_otlp(c) : NULL;
	e = b ? via_pprof(b, true) : NULL;
	ok = b && c && d && e;
	if (ok) {
		da = dump(a);
		db = dump(b);
		dd = dump(d);
		de = dump(e);
		ok = da && db && dd && de && !strcmp(db, dd) && !strcmp(da, db) && !strcmp(dd, de);
		/* The dump holds what the round trip must keep. */
		ok = ok && strstr(dd, "do_syscall_64@ffffffff81000100 kernel [kernel.kallsyms]") &&
		     strstr(dd, "app --serve 8080 c0ffee v=3 thread.id=101 thread.name=worker") &&
		     strstr(dd, "work@1234 native /usr/bin/app 0123abcd 1000-9000+200") &&
		     strstr(dd, "| ?@1555 native /usr/bin/app");
		if (!ok)
			printf("# a:\n%s# b:\n%s# d:\n%s", da ? da : "", db ? db : "", dd ? dd : "");
	}
	if (ok) {
		const struct profile_meta *m = profile__meta(d);
		__u32 st, su, pt, pu;

		profile__value_types(d, &st, &su, &pt, &pu);
		ok = m->time_unix_nano == 1700000000000000000ull &&
		     m->duration_nano == 2000000000ull && m->period_ns == 1001001 &&
		     !strcmp(profile__string(d, st, NULL), "samples") &&
		     !strcmp(profile__string(d, pu, NULL), "nanoseconds") &&
		     profile__total(d) == 16 && profile__process_count(d) == 2;
	}
	free(da);
	free(db);
	free(dd);
	free(de);
	profile__free(a);
	profile__free(b);
	profile__free(c);
	profile__free(d);
	profile__free(e);
	CHECK(ok);
}

/* A model with every field pprof can hold: inline chains with system
 * names, files, start lines and columns; mappings with flags; loss counts
 * and pprof's profile-level fields; thread, process and numeric labels with
 * units; thread-context attributes and links; a PID that ran two programs. */
static struct profile *rich_model(void)
{
	static const struct profile_mapping_desc exe = {0x1000, 0x9000, 0x200, "/usr/bin/app",
							"0123abcd", PROFILE_MAPPING_HAS__ALL};
	static const struct profile_line chain[] = {
		{"mix", NULL, "/src/app.c", 14, 17, 5},
		{"hot_caller", "_Z10hot_callerm", "/src/app.c", 23, 25, 9},
		{"outer", NULL, "/src/app.c", 40, 44, 0},
	};
	static const struct profile_line one[] = {{"main", NULL, "/src/main.c", 3, 8, 2}};
	const struct profile_frame f[] = {
		{0x1234, &exe, NULL, PROFILE_FRAME_NATIVE, NULL, NULL, chain, 3},
		{0x1100, &exe, NULL, PROFILE_FRAME_NATIVE, NULL, NULL, one, 1},
		{0xffffffff81000100ull, &kmap, "do_syscall_64", PROFILE_FRAME_KERNEL, NULL},
	};
	static const struct profile_link span = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
						  16},
						 {0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 1, 2}};
	static const struct profile_ctx_attr ctx[] = {{"http.route", "/users/{id}"}};
	static const struct profile_num_attr num[] = {{"bytes", "bytes", 4096}, {"retries", NULL, 3}};
	const struct profile_labels lab = {.link = &span, .ctx = ctx, .nctx = 1, .num = num,
					   .nnum = 2};
	const struct profile_process_desc app = {100, "app", "/usr/bin/app", "app --serve",
						 "c0ffee"};
	/* The program PID 100 exec()ed: a process of its own. */
	const struct profile_process_desc spin = {.pid = 100,
						  .exe_name = "spin",
						  .exe_path = "/usr/bin/spin",
						  .cmdline = "spin",
						  .container_id = "c0ffee",
						  .generation = 1};
	const struct profile_meta meta = {
		.time_unix_nano = 1700000000000000000ull,
		.duration_nano = 2000000000ull,
		.period_ns = 1001001,
		.profile_id = {7},
		.samples_dropped = 2,
		.samples_truncated = 355,
		.samples_truncated_depth = 5,
		.samples_stack_missing = 4,
		.pprof_comment = "first comment\nsecond",
		.pprof_drop_frames = "runtime\\..*",
		.pprof_keep_frames = "main",
		.pprof_default_sample_type = "samples",
	};
	struct profile *p = profile__new();

	if (!p)
		return NULL;
	if (profile__set_meta(p, &meta) ||
	    profile__add_typed_sample(p, 0, &app, 101, "worker", &lab, f, 2, 3) ||
	    profile__add_typed_sample(p, 0, &app, 100, NULL, NULL, f + 1, 2, 5) ||
	    profile__add_typed_sample(p, 0, &app, 102, "io", NULL, f, 3, 9) ||
	    profile__add_typed_sample(p, 0, &spin, 100, "spin", NULL, f + 1, 1, 2)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

/* @p rebuilt (meta, then samples in order) as OTLP, with @like's profile
 * id (pprof carries none). */
static int otlp_like(const struct profile *p, const struct profile *like, struct buf *out)
{
	struct profile_meta m = *profile__meta(p);
	struct profile *q = NULL;
	int err;

	memcpy(m.profile_id, profile__meta(like)->profile_id, sizeof(m.profile_id));
	err = profile__rebuild(p, NULL, NULL, &q);
	err = err ?: profile__set_meta(q, &m);
	err = err ?: otlp__encode(q, out);
	profile__free(q);
	return err;
}

/* OTLP -> pprof -> OTLP gives the same OTLP bytes, and pprof -> OTLP ->
 * pprof the same pprof bytes: every field survives both ways. */
TEST(every_field_survives)
{
	struct profile *a = rich_model(), *b = NULL, *c = NULL, *d = NULL;
	struct buf x, y, px, py, plain;

	buf__init(&x, 1 << 22);
	buf__init(&y, 1 << 22);
	buf__init(&px, 1 << 22);
	buf__init(&py, 1 << 22);
	buf__init(&plain, 1 << 22);
	CHECK(a);
	b = via_otlp(a);
	CHECK(b);
	c = via_pprof(b, true);
	CHECK(c);
	/* Both rebuilt, so their tables are in the same order. */
	CHECK_EQ_U64(otlp_like(b, b, &x), 0);
	CHECK_EQ_U64(otlp_like(c, b, &y), 0);
	CHECK_EQ_U64(x.len, y.len);
	CHECK(!memcmp(x.data, y.data, x.len));
	/* The loss counts and pprof fields made it through pprof. */
	CHECK_EQ_U64(profile__meta(c)->samples_truncated, 355);
	CHECK_EQ_U64(profile__meta(c)->samples_truncated_depth, 5);
	CHECK_STR(profile__meta(c)->pprof_comment, "first comment\nsecond");
	CHECK_STR(profile__meta(c)->pprof_default_sample_type, "samples");
	CHECK_EQ_U64(profile__process_count(c), 2);
	/* pprof -> OTLP -> pprof */
	d = via_otlp(c);
	CHECK(d);
	CHECK_EQ_U64(pprof__encode(c, &px), 0);
	CHECK_EQ_U64(pprof__encode(d, &py), 0);
	CHECK_EQ_U64(gz__decompress(px.data, px.len, &plain), 0);
	buf__reset(&px);
	CHECK_EQ_U64(buf__append(&px, plain.data, plain.len), 0);
	buf__reset(&plain);
	CHECK_EQ_U64(gz__decompress(py.data, py.len, &plain), 0);
	CHECK_EQ_U64(px.len, plain.len);
	CHECK(!memcmp(px.data, plain.data, plain.len));
	buf__release(&x);
	buf__release(&y);
	buf__release(&px);
	buf__release(&py);
	buf__release(&plain);
	profile__free(a);
	profile__free(b);
	profile__free(c);
	profile__free(d);
}

/* Another tool's profile with two sample types (a heap profile): both
 * values are kept, each as its own value type. */
TEST(every_sample_type_is_kept)
{
	static const char heap[] =
		"\x0a\x04\x08\x01\x10\x02"			/* sample_type alloc_objects/count */
		"\x0a\x04\x08\x03\x10\x04"			/* sample_type alloc_space/bytes */
		"\x12\x08\x0a\x01\x01\x12\x03\x03\x80\x20" /* sample [loc 1], [3, 4096] */
		"\x22\x06\x08\x01\x22\x02\x08\x01"		/* location 1: function 1 */
		"\x2a\x04\x08\x01\x10\x05"			/* function 1 "f" */
		"\x32\x00\x32\x0d"
		"alloc_objects"
		"\x32\x05"
		"count"
		"\x32\x0b"
		"alloc_space"
		"\x32\x05"
		"bytes"
		"\x32\x01"
		"f";
	struct profile *p = NULL;
	__u32 t;
	char why[256];

	CHECK_EQ_U64(pprof_read__parse(heap, sizeof(heap) - 1, 1 << 20, &p, why, sizeof(why)), 0);
	CHECK_EQ_U64(profile__value_type_count(p), 2);
	CHECK_EQ_U64(profile__find_value_type(p, "alloc_objects", &t), 0);
	CHECK_EQ_U64(profile__type_total(p, t), 3);
	CHECK_EQ_U64(profile__find_value_type(p, "alloc_space", &t), 0);
	CHECK_EQ_U64(profile__type_total(p, t), 4096);
	profile__free(p);
}

TEST(detect)
{
	struct profile *a = model();
	struct buf b, plain;

	CHECK(a);
	buf__init(&b, 1 << 24);
	buf__init(&plain, 1 << 24);
	CHECK_EQ_U64(pprof__encode(a, &b), 0);
	CHECK_EQ_U64(gz__decompress(b.data, b.len, &plain), 0);
	CHECK(pprof_read__looks_like(plain.data, plain.len));
	buf__reset(&b);
	CHECK_EQ_U64(otlp__encode(a, &b), 0);
	CHECK(!pprof_read__looks_like(b.data, b.len));
	CHECK(!pprof_read__looks_like("hello world 123\n", 16));
	buf__release(&b);
	buf__release(&plain);
	profile__free(a);
}

static int parse(const void *d, size_t n, char *why)
{
	struct profile *p = NULL;
	int err = pprof_read__parse(d, n, 1 << 20, &p, why, 256);

	profile__free(p);
	return err;
}

TEST(malformed)
{
	/* string_table "", "x"; sample naming location 7 that does not exist */
	static const unsigned char no_loc[] = {0x32, 0x00, 0x32, 0x01, 'x', 0x12, 0x02, 0x08, 0x07};
	/* location 1 naming mapping 9 that does not exist */
	static const unsigned char no_map[] = {0x32, 0x00, 0x22, 0x04, 0x08, 0x01, 0x10, 0x09,
					       0x12, 0x04, 0x08, 0x01, 0x10, 0x01};
	/* a length past the end */
	static const unsigned char trunc[] = {0x32, 0x00, 0x12, 0x7f, 0x08};
	/* string_table[0] not empty */
	static const unsigned char str0[] = {0x32, 0x01, 'x'};
	/* mapping with a filename index out of range */
	static const unsigned char bad_str[] = {0x32, 0x00, 0x1a, 0x04, 0x08, 0x01, 0x28, 0x05};
	char why[256];

	CHECK_EQ_U64(parse(no_loc, sizeof(no_loc), why), -EBADMSG);
	CHECK(strstr(why, "location id 7"));
	CHECK_EQ_U64(parse(no_map, sizeof(no_map), why), -EBADMSG);
	CHECK(strstr(why, "mapping id 9"));
	CHECK_EQ_U64(parse(trunc, sizeof(trunc), why), -EBADMSG);
	CHECK(strstr(why, "malformed protobuf at the top level (a length runs past the end"));
	CHECK_EQ_U64(parse(str0, sizeof(str0), why), -EBADMSG);
	CHECK_EQ_U64(parse(bad_str, sizeof(bad_str), why), -EBADMSG);
	CHECK_EQ_U64(parse("", 0, why), -EBADMSG);
	CHECK(strstr(why, "string table"));
}

int main(void)
{
	RUN(otlp_pprof_otlp_roundtrip);
	RUN(every_field_survives);
	RUN(every_sample_type_is_kept);
	RUN(detect);
	RUN(malformed);
	return TEST_DONE();
}
