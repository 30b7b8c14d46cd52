#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "test.h"

static const struct profile_mapping_desc map_a = {
	.start = 0x400000,
	.limit = 0x401000,
	.file_offset = 0,
	.path = "/bin/a",
	.build_id = "abcd",
};
static const struct profile_mapping_desc map_b = {
	.start = 0x7f0000,
	.limit = 0x7f8000,
	.file_offset = 0x1000,
	.path = "/lib/b.so",
};
static const struct profile_process_desc proc1 = {
	.pid = 101,
	.exe_name = "a",
	.exe_path = "/bin/a",
	.cmdline = "a --x",
};
static const struct profile_process_desc proc2 = {.pid = 202, .exe_name = "b"};

static void frames3(struct profile_frame *f, __u64 leaf)
{
	f[0] = (struct profile_frame){leaf, &map_b, "leaf", PROFILE_FRAME_NATIVE, NULL, NULL, 0};
	f[1] = (struct profile_frame){0x400100, &map_a, "mid", PROFILE_FRAME_NATIVE, NULL, NULL, 0};
	f[2] = (struct profile_frame){0x400200, &map_a, "main", PROFILE_FRAME_NATIVE, NULL, NULL, 0};
}

/* Every non-zero table entry must be referenced (the OTLP orphan rule). */
static int count_orphans(const struct profile *p)
{
	size_t ns = profile__string_count(p), nf = profile__function_count(p);
	size_t nm = profile__mapping_count(p), nl = profile__location_count(p);
	size_t nk = profile__stack_count(p), na = profile__attr_count(p);
	char *rs = calloc(ns, 1), *rf = calloc(nf, 1), *rm = calloc(nm, 1);
	char *rl = calloc(nl, 1), *rk = calloc(nk, 1), *ra = calloc(na, 1);
	__u32 st, su, pt, pu;
	size_t i, j, n, orphans = 0;

	profile__value_types(p, &st, &su, &pt, &pu);
	rs[st] = rs[su] = rs[pt] = rs[pu] = 1;
	for (i = 0; i < profile__process_count(p); i++) {
		for (j = 0; j < profile__sample_count(p, i); j++) {
			const struct profile_sample_entry *s = profile__sample(p, i, j);

			rk[s->stack] = 1;
			for (n = 0; n < s->nattrs; n++)
				ra[s->attrs[n]] = 1;
		}
	}
	for (i = 1; i < nk; i++) {
		const __u32 *l = profile__stack(p, i, &n);

		for (j = 0; rk[i] && j < n; j++)
			rl[l[j]] = 1;
	}
	for (i = 1; i < nl; i++) {
		const struct profile_location_entry *l = profile__location(p, i);

		if (!rl[i])
			continue;
		rm[l->mapping] = rf[profile__location_function(p, l)] = ra[l->attr] = 1;
	}
	for (i = 1; i < nm; i++)
		if (rm[i]) {
			rs[profile__mapping(p, i)->filename] = 1;
			ra[profile__mapping(p, i)->attr] = 1;
		}
	for (i = 1; i < nf; i++)
		if (rf[i])
			rs[profile__function(p, i)->name] = 1;
	for (i = 1; i < na; i++)
		if (ra[i])
			rs[profile__attr(p, i)->key] = rs[profile__attr(p, i)->unit] = 1;
	for (i = 1; i < ns; i++)
		orphans += !rs[i];
	for (i = 1; i < nf; i++)
		orphans += !rf[i];
	for (i = 1; i < nm; i++)
		orphans += !rm[i];
	for (i = 1; i < nl; i++)
		orphans += !rl[i];
	for (i = 1; i < nk; i++)
		orphans += !rk[i];
	for (i = 1; i < na; i++)
		orphans += !ra[i];
	free(rs), free(rf), free(rm), free(rl), free(rk), free(ra);
	return (int)orphans;
}

TEST(zero_entries)
{
	struct profile *p = profile__new();
	size_t n;

	CHECK(p);
	CHECK_STR(profile__string(p, 0, NULL), "");
	CHECK_EQ_U64(profile__function(p, 0)->name, 0);
	CHECK_EQ_U64(profile__mapping(p, 0)->limit, 0);
	CHECK_EQ_U64(profile__location(p, 0)->address, 0);
	CHECK_EQ_U64(profile__attr(p, 0)->key, 0);
	profile__stack(p, 0, &n);
	CHECK_EQ_U64(n, 0);
	CHECK_EQ_U64(profile__process_count(p), 0);
	profile__free(p);
	profile__free(NULL);
}

TEST(dedup_and_merge)
{
	struct profile *p = profile__new();
	struct profile_frame f[3];

	CHECK(p);
	frames3(f, 0x7f0010);
	CHECK(!profile__add_sample(p, &proc1, 7, "worker", f, 3, 5));
	CHECK(!profile__add_sample(p, &proc1, 7, "worker", f, 3, 2));
	CHECK(!profile__add_sample(p, &proc1, 8, "worker", f, 3, 1));
	CHECK(!profile__add_sample(p, &proc2, 9, NULL, f, 3, 4));
	frames3(f, 0x7f0020);
	CHECK(!profile__add_sample(p, &proc1, 7, "worker", f, 3, 1));

	CHECK_EQ_U64(profile__process_count(p), 2);
	CHECK_EQ_U64(profile__sample_count(p, 0), 3); /* (tid 7, s1), (8, s1), (7, s2) */
	CHECK_EQ_U64(profile__sample(p, 0, 0)->value, 7);
	CHECK_EQ_U64(profile__sample_count(p, 1), 1);
	CHECK_EQ_U64(profile__sample(p, 1, 0)->nattrs, 1); /* no thread.name */
	CHECK_EQ_U64(profile__total(p), 13);
	CHECK_EQ_U64(profile__mapping_count(p), 3);  /* zero + a + b */
	CHECK_EQ_U64(profile__function_count(p), 4); /* zero + leaf, mid, main */
	CHECK_EQ_U64(profile__location_count(p), 5); /* zero + 4 addresses */
	CHECK_EQ_U64(profile__stack_count(p), 3);
	CHECK_STR(profile__process(p, 0)->cmdline, "a --x");
	CHECK_EQ_U64(profile__mapping(p, 1)->start, 0x7f0000);
	CHECK(profile__mapping(p, 2)->attr != 0); /* map_a has a build-id */
	CHECK_STR(profile__attr(p, profile__mapping(p, 2)->attr)->str_value, "abcd");
	CHECK_EQ_U64(count_orphans(p), 0);
	profile__free(p);
}

/* One PID running two programs (exec) makes two processes. */
TEST(exec_generation_is_another_process)
{
	struct profile *p = profile__new();
	struct profile_process_desc after = proc1;
	struct profile_frame f[3];

	CHECK(p);
	frames3(f, 0x7f0010);
	after.exe_name = "next";
	after.generation = 1;
	CHECK(!profile__add_sample(p, &proc1, 7, "worker", f, 3, 1));
	CHECK(!profile__add_sample(p, &after, 7, "worker", f, 3, 2));
	CHECK(!profile__add_sample(p, &after, 7, "worker", f, 3, 1));
	CHECK_EQ_U64(profile__process_count(p), 2);
	CHECK_EQ_U64(profile__process(p, 0)->pid, profile__process(p, 1)->pid);
	CHECK_STR(profile__process(p, 1)->exe_name, "next");
	CHECK_EQ_U64(profile__process(p, 1)->generation, 1);
	CHECK_EQ_U64(profile__sample(p, 1, 0)->value, 3);
	profile__free(p);
}

TEST(kernel_frames_and_empty_stack)
{
	struct profile *p = profile__new();
	struct profile_mapping_desc k = {0xffffffff81000000ull, 0xffffffff82000000ull, 0,
					 "[kernel.kallsyms]", NULL, 0};
	struct profile_frame f = {0xffffffff81000100ull, &k, "do_sys_open", PROFILE_FRAME_KERNEL,
				  NULL, NULL, 0};
	const struct profile_location_entry *l;

	CHECK(p);
	CHECK(!profile__add_sample(p, &proc1, 1, "t", &f, 1, 1));
	CHECK(!profile__add_sample(p, &proc1, 1, "t", NULL, 0, 1));
	l = profile__location(p, 1);
	CHECK_STR(profile__attr(p, l->attr)->str_value, "kernel");
	CHECK_EQ_U64(profile__sample(p, 0, 1)->stack, 0); /* empty stack is the zero stack */
	CHECK(profile__add_sample(p, &proc1, 1, "t", &f, 1, 0) == -EINVAL);
	profile__free(p);
}

TEST(prune_after_full_table)
{
	struct profile *p = profile__new_limited(24);
	struct profile_frame f[3];
	int err = 0, i, added = 0;

	CHECK(p);
	/* Each add brings a new location, stack and thread.id attribute; the
	 * attribute table fills first, after the location and stack went in. */
	for (i = 0; i < 64 && err != -E2BIG; i++) {
		frames3(f, 0x7f0000 + i);
		err = profile__add_sample(p, &proc1, i, "t", f, 3, 1);
		added += !err;
	}
	CHECK(err == -E2BIG);
	CHECK(count_orphans(p) > 0); /* the failed add left entries behind */
	CHECK(!profile__prune(p));
	CHECK_EQ_U64(count_orphans(p), 0);
	CHECK_EQ_U64(profile__total(p), (__u64)added);
	CHECK_EQ_U64(profile__sample_count(p, 0), (__u64)added);
	CHECK_STR(profile__process(p, 0)->exe_path, "/bin/a");
	profile__free(p);
}

TEST(value_types_and_frame_type_names)
{
	struct profile *p = profile__new();
	struct profile_frame f[3];
	__u32 st, su, pt, pu;

	CHECK(p);
	frames3(f, 0x7f0010);
	f[0].type_name = "v8js";
	CHECK(!profile__add_sample(p, &proc1, 1, "t", f, 3, 2));
	CHECK(!profile__set_value_types(p, "cpu", "nanoseconds", NULL, NULL));
	CHECK(count_orphans(p) > 0); /* "samples" and "count" are unused now */
	CHECK(!profile__prune(p));
	CHECK_EQ_U64(count_orphans(p), 0);
	profile__value_types(p, &st, &su, &pt, &pu);
	CHECK_STR(profile__string(p, st, NULL), "cpu");
	CHECK_STR(profile__string(p, su, NULL), "nanoseconds");
	CHECK_STR(profile__string(p, pt, NULL), "cpu");
	CHECK_STR(profile__string(p, pu, NULL), "nanoseconds");
	CHECK_STR(profile__attr(p, profile__location(p, 1)->attr)->str_value, "v8js");
	CHECK_STR(profile__attr(p, profile__location(p, 2)->attr)->str_value, "native");
	CHECK_EQ_U64(profile__total(p), 2);
	profile__free(p);
}

/* A mapping added again is found by its content, whatever memory the
 * caller's description lives in: the same content gives the same mapping,
 * and one field or string changed in place (a buffer reused) another. The
 * frame type likewise. */
TEST(mappings_and_frame_types_by_content)
{
	struct profile *p = profile__new();
	struct profile_mapping_desc m = map_a;
	struct profile_frame f = {0x400100, &m, "mid", PROFILE_FRAME_NATIVE, NULL, NULL, 0};
	char path[16] = "/bin/a", bid[16] = "abcd", type[16] = "native";
	__u32 l1, l2, l3, l4, l5, l6, l7;

	CHECK(p);
	m.path = path;
	m.build_id = bid;
	CHECK(!profile__add_location(p, &f, &l1));
	m = map_a; /* the same content elsewhere */
	CHECK(!profile__add_location(p, &f, &l2));
	CHECK_EQ_U64(l2, l1);
	m.path = path;
	m.build_id = bid;
	bid[0] = 'f'; /* same pointer, another build-id */
	CHECK(!profile__add_location(p, &f, &l3));
	CHECK(l3 != l1);
	CHECK(profile__location(p, l3)->mapping != profile__location(p, l1)->mapping);
	CHECK_STR(profile__attr(p, profile__mapping(p, profile__location(p, l3)->mapping)->attr)
			  ->str_value,
		  "fbcd");
	strcpy(path, "/bin/c"); /* and another path */
	CHECK(!profile__add_location(p, &f, &l4));
	CHECK(l4 != l3);
	CHECK_STR(profile__string(p,
				  profile__mapping(p, profile__location(p, l4)->mapping)->filename,
				  NULL),
		  "/bin/c");
	m.flags = PROFILE_MAPPING_HAS_FUNCTIONS; /* and flags */
	CHECK(!profile__add_location(p, &f, &l5));
	CHECK(l5 != l4);
	m.flags = 0;
	m.build_id = NULL; /* none is not "fbcd" */
	CHECK(!profile__add_location(p, &f, &l6));
	CHECK_EQ_U64(profile__mapping(p, profile__location(p, l6)->mapping)->attr, 0);
	f.type_name = type;
	strcpy(type, "v8js"); /* the frame type, changed in place */
	CHECK(!profile__add_location(p, &f, &l7));
	CHECK(l7 != l6);
	CHECK_STR(profile__attr(p, profile__location(p, l7)->attr)->str_value, "v8js");
	CHECK_STR(profile__attr(p, profile__location(p, l6)->attr)->str_value, "native");
	profile__free(p);
}

TEST(stack_then_samples)
{
	struct profile *p = profile__new();
	struct profile_frame f[3];
	__u32 s1, s2;

	CHECK(p);
	frames3(f, 0x7f0010);
	CHECK(!profile__add_stack(p, f, 3, &s1));
	frames3(f, 0x7f0020);
	CHECK(!profile__add_stack(p, f, 3, &s2)); /* never used: an orphan */
	CHECK(s1 != s2);
	CHECK(!profile__add_stack_sample(p, &proc1, 1, "t", s1, 3));
	CHECK(!profile__add_stack_sample(p, &proc1, 1, "t", s1, 2));
	CHECK(profile__add_stack_sample(p, &proc1, 1, "t", 99, 1) == -EINVAL);
	CHECK_EQ_U64(profile__sample(p, 0, 0)->value, 5);
	CHECK(count_orphans(p) > 0);
	CHECK(!profile__prune(p));
	CHECK_EQ_U64(count_orphans(p), 0);
	CHECK_EQ_U64(profile__stack_count(p), 2);
	CHECK_EQ_U64(profile__total(p), 5);
	profile__free(p);
}

/* An off-CPU value type beside the CPU one: per-process profiles per type,
 * labels in the identity, totals per type, prune and extract keep them. */
TEST(value_type_per_profile)
{
	struct profile *p = profile__new(), *off;
	struct profile_labels sleep = {"interruptible", 3}, disk = {"uninterruptible", 1};
	struct profile_frame f[3];
	__u32 t, t2, st, su, pt, pu;

	CHECK(p);
	frames3(f, 0x7f0010);
	CHECK(!profile__add_sample(p, &proc1, 1, "t", f, 3, 7));
	CHECK(!profile__add_value_type(p, "off_cpu", "nanoseconds", "context_switch", "count", 1,
				       &t));
	CHECK_EQ_U64(t, 1);
	CHECK(!profile__add_value_type(p, "off_cpu", "nanoseconds", "context_switch", "count", 1,
				       &t2));
	CHECK_EQ_U64(t2, 1);
	CHECK_EQ_U64(profile__value_type_count(p), 2);
	CHECK(!profile__add_typed_sample(p, t, &proc1, 1, "t", &sleep, f, 3, 5000));
	CHECK(!profile__add_typed_sample(p, t, &proc1, 1, "t", &sleep, f, 3, 1000));
	CHECK(!profile__add_typed_sample(p, t, &proc1, 1, "t", &disk, f, 3, 300));
	CHECK(profile__add_typed_sample(p, 5, &proc1, 1, "t", NULL, f, 3, 1) == -EINVAL);
	/* One process entry per (process, type). */
	CHECK_EQ_U64(profile__process_count(p), 2);
	CHECK_EQ_U64(profile__process_type(p, 0), 0);
	CHECK_EQ_U64(profile__process_type(p, 1), 1);
	CHECK_EQ_U64(profile__sample_count(p, 1), 2); /* two states */
	CHECK_EQ_U64(profile__type_total(p, 0), 7);
	CHECK_EQ_U64(profile__type_total(p, 1), 6300);
	CHECK_EQ_U64(profile__period(p, 1), 1);
	profile__value_type(p, 1, &st, &su, &pt, &pu);
	CHECK(!strcmp(profile__string(p, st, NULL), "off_cpu"));
	CHECK(!strcmp(profile__string(p, pt, NULL), "context_switch"));
	CHECK(!profile__find_value_type(p, "off_cpu", &t2) && t2 == 1);
	CHECK(profile__find_value_type(p, "wall", &t2) == -ENOENT);

	off = profile__extract_type(p, 1);
	CHECK(off);
	CHECK_EQ_U64(profile__value_type_count(off), 1);
	CHECK_EQ_U64(profile__total(off), 6300);
	CHECK_EQ_U64(profile__meta(off)->period_ns, 1);
	profile__value_types(off, &st, &su, &pt, &pu);
	CHECK(!strcmp(profile__string(off, st, NULL), "off_cpu"));
	CHECK(!strcmp(profile__string(off, su, NULL), "nanoseconds"));
	CHECK_EQ_U64(count_orphans(off), 0);
	profile__free(off);

	/* prune keeps types and labels. */
	CHECK(!profile__prune(p));
	CHECK_EQ_U64(profile__value_type_count(p), 2);
	CHECK_EQ_U64(profile__type_total(p, 1), 6300);
	CHECK_EQ_U64(profile__sample_count(p, 1), 2);
	CHECK_EQ_U64(profile__sample(p, 1, 0)->nattrs, 4);
	profile__free(p);
}

/* A process context found after the process's first sample (its maps file
 * looked at later) names its resource from then on; one found first stays. */
TEST(context_attrs_added_later)
{
	struct profile *p = profile__new();
	const struct profile_kv kv1[] = {{"service.name", "svc"}}, kv2[] = {{"service.name", "x"}};
	struct profile_process_desc d = {.pid = 9, .exe_name = "svc"};
	struct profile_frame f[1] = {{.address = 0x1000}};

	CHECK(p);
	CHECK(!profile__add_sample(p, &d, 9, NULL, f, 1, 1));
	CHECK_EQ_U64(profile__process(p, 0)->nattrs, 0);
	d.attrs = kv1;
	d.nattrs = 1;
	CHECK(!profile__add_sample(p, &d, 9, NULL, f, 1, 1));
	CHECK_EQ_U64(profile__process_count(p), 1);
	CHECK_EQ_U64(profile__process(p, 0)->nattrs, 1);
	CHECK_STR(profile__process(p, 0)->attrs[0].value, "svc");
	d.attrs = kv2;
	CHECK(!profile__add_sample(p, &d, 9, NULL, f, 1, 1));
	CHECK_STR(profile__process(p, 0)->attrs[0].value, "svc");
	profile__free(p);
}

int main(void)
{
	RUN(zero_entries);
	RUN(context_attrs_added_later);
	RUN(dedup_and_merge);
	RUN(exec_generation_is_another_process);
	RUN(kernel_frames_and_empty_stack);
	RUN(prune_after_full_table);
	RUN(value_types_and_frame_type_names);
	RUN(mappings_and_frame_types_by_content);
	RUN(stack_then_samples);
	RUN(value_type_per_profile);
	return TEST_DONE();
}
