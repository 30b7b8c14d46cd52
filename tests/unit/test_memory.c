/* test_memory.c - the pure parts of memory profiles: the BPF program's
 * fixed-point sampling probability and weights against the formula in
 * floating point (and that the weights make unbiased totals), which files
 * may hold an allocator, the back-pressure share, finding CMD's program,
 * byte counts in human units. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "memory_types.h"
#include "capture/memory.h"
#include "cli/capture_cmd.h"
#include "model/profile.h"
#include "collect/sampler_memory.h"
#include "test.h"

static double prob(__u64 size, __u64 rate)
{
	return 1.0 - exp(-(double)size / (double)rate);
}

TEST(probability_matches_formula)
{
	static const __u64 sizes[] = {1,      8,      64,      256,	 4096,	    65536,
				      100000, 524288, 1000000, 3u << 20, 10u << 20, 64u << 20};
	static const __u64 rates[] = {4096, 65536, 512u << 10, 1u << 20};
	size_t i, k;

	for (k = 0; k < sizeof(rates) / sizeof(rates[0]); k++) {
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			double want = prob(sizes[i], rates[k]);
			double got = (double)mem__prob(sizes[i], rates[k]) / MEM_FP_ONE;

			/* within 1e-4 or the fixed point's unit, and never 0 for
			 * a non-empty allocation */
			CHECK(got > 0);
			CHECK(fabs(got - want) / want < 1e-4 ||
			      fabs(got - want) * MEM_FP_ONE <= 1.0);
		}
	}
	CHECK_EQ_U64(mem__prob(0, 65536), 0);
	CHECK_EQ_U64(mem__prob(1ull << 40, 65536), MEM_FP_ONE);
	CHECK_EQ_U64(mem__prob(20 * 65536, 65536), MEM_FP_ONE);
}

TEST(weights_are_size_over_probability)
{
	static const __u64 sizes[] = {16, 64, 4096, 65536, 200000, 1u << 20, 8u << 20};
	const __u64 rate = 512u << 10;
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		__u64 q = mem__prob(sizes[i], rate);
		double want = sizes[i] / prob(sizes[i], rate);

		CHECK(fabs((double)mem__weight_bytes(sizes[i], q) - want) / want < 1e-3);
		CHECK(fabs((double)mem__weight_objs(q) / (1 << MEM_OBJ_BITS) -
			   1.0 / prob(sizes[i], rate)) /
			      (1.0 / prob(sizes[i], rate)) <
		      2e-3);
	}
	/* always sampled: weight the size itself, one object */
	CHECK_EQ_U64(mem__weight_bytes(123, MEM_FP_ONE), 123);
	CHECK_EQ_U64(mem__weight_objs(MEM_FP_ONE), 1u << MEM_OBJ_BITS);
}

/* Sampling a known stream as the BPF program does (a 28-bit random number
 * below the probability) and summing the weights estimates its bytes and
 * objects without bias. */
TEST(sampled_totals_unbiased)
{
	const __u64 rate = 64u << 10;
	double bytes = 0, objs = 0, true_bytes = 0, true_objs = 0;
	unsigned seed = 42;
	int i;

	for (i = 0; i < 2000000; i++) {
		__u64 size = i % 3 == 0 ? 48 : i % 3 == 1 ? 1000 : 40000;
		__u64 q = mem__prob(size, rate);
		__u64 u = (((__u64)rand_r(&seed) << 16) ^ (__u64)rand_r(&seed)) & (MEM_FP_ONE - 1);

		true_bytes += (double)size;
		true_objs += 1;
		if (u >= q)
			continue;
		bytes += (double)mem__weight_bytes(size, q);
		objs += (double)mem__weight_objs(q) / (1 << MEM_OBJ_BITS);
	}
	CHECK(fabs(bytes - true_bytes) / true_bytes < 0.02);
	CHECK(fabs(objs - true_objs) / true_objs < 0.03);
}

TEST(allocator_candidates)
{
	CHECK(memsampler__candidate("/usr/lib/x86_64-linux-gnu/libc.so.6", NULL));
	CHECK(memsampler__candidate("/lib/libc-2.31.so", NULL));
	CHECK(memsampler__candidate("/lib/ld-musl-x86_64.so.1", NULL));
	CHECK(memsampler__candidate("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", NULL));
	CHECK(memsampler__candidate("/usr/lib/libtcmalloc_minimal.so.4", NULL));
	CHECK(memsampler__candidate("/usr/lib/libmimalloc.so.2", NULL));
	CHECK(memsampler__candidate("libc.so.6", NULL));
	CHECK(memsampler__candidate("/opt/app/server", "/opt/app/server"));
	CHECK(!memsampler__candidate("/opt/app/server", "/opt/app/other"));
	CHECK(!memsampler__candidate("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", NULL));
	CHECK(!memsampler__candidate("/usr/lib/x86_64-linux-gnu/libcrypto.so.3", NULL));
	CHECK(!memsampler__candidate("/usr/lib/x86_64-linux-gnu/libcap.so.2", NULL));
}

TEST(back_pressure_share)
{
	/* within the budget: full share */
	CHECK_EQ_U64(memsampler__keep(MEM_FP_ONE, 500, 1000000000ull, 1000), MEM_FP_ONE);
	/* four times over: a quarter */
	CHECK_EQ_U64(memsampler__keep(MEM_FP_ONE, 4000, 1000000000ull, 1000), MEM_FP_ONE / 4);
	/* at a quarter, still 4x over in what was kept: a sixteenth */
	CHECK_EQ_U64(memsampler__keep(MEM_FP_ONE / 4, 4000, 1000000000ull, 1000), MEM_FP_ONE / 16);
	/* the load went: full share again; half of it went: half the share */
	CHECK_EQ_U64(memsampler__keep(MEM_FP_ONE / 16, 10, 1000000000ull, 1000), MEM_FP_ONE);
	CHECK_EQ_U64(memsampler__keep(MEM_FP_ONE / 4, 500, 1000000000ull, 1000), MEM_FP_ONE / 2);
	/* never below the floor, never above one */
	CHECK(memsampler__keep(MEM_FP_ONE, 1ull << 40, 1000000000ull, 1) >= MEM_FP_ONE >> 16);
	CHECK_EQ_U64(memsampler__keep(MEM_FP_ONE, 0, 1000000000ull, 1000), MEM_FP_ONE);
	/* no limit */
	CHECK_EQ_U64(memsampler__keep(MEM_FP_ONE / 2, 1u << 30, 1000000000ull, 0), MEM_FP_ONE);
}

TEST(find_program)
{
	char out[4096];

	CHECK(!memory__find_program("sh", "/nonexistent:/bin:/usr/bin", out, sizeof(out)));
	CHECK(!access(out, X_OK));
	CHECK(!memory__find_program("/bin/sh", "", out, sizeof(out)));
	CHECK_STR(out, "/bin/sh");
	CHECK(memory__find_program("no-such-program-here", "/bin:/usr/bin", out, sizeof(out)));
	CHECK(memory__find_program("sh", "", out, sizeof(out)));
}

TEST(human_bytes)
{
	char b[32];

	memory__human_bytes(0, b, sizeof(b));
	CHECK_STR(b, "0 B");
	memory__human_bytes(1023, b, sizeof(b));
	CHECK_STR(b, "1023 B");
	memory__human_bytes(1536, b, sizeof(b));
	CHECK_STR(b, "1.50 KiB");
	memory__human_bytes(512u << 10, b, sizeof(b));
	CHECK_STR(b, "512 KiB");
	memory__human_bytes(20u << 20, b, sizeof(b));
	CHECK_STR(b, "20.0 MiB");
	memory__human_bytes(3ull << 30, b, sizeof(b));
	CHECK_STR(b, "3.00 GiB");
}

/* One sample of @v at stack main -> @site -> malloc in process 7. */
static int add(struct profile *p, const char *site, __u64 v)
{
	const struct profile_process_desc d = {.pid = 7, .exe_name = "app"};
	struct profile_frame f[3] = {
		{.address = 0x10, .function = "malloc"},
		{.address = 0x20, .function = site},
		{.address = 0x30, .function = "main"},
	};

	return profile__add_sample(p, &d, 7, "app", f, 3, v);
}

TEST(growth_of_two_windows)
{
	struct profile *a = profile__new(), *b = profile__new();
	struct memory_growth_row *rows = NULL;
	char buf[2048] = "";
	size_t n = 0;
	FILE *f;

	CHECK(a && b);
	CHECK(!add(a, "leak", 1000) && !add(a, "churn", 500) && !add(a, "gone", 300));
	CHECK(!add(b, "leak", 5000) && !add(b, "churn", 400) && !add(b, "new", 100));
	CHECK(!memory__growth(a, b, &rows, &n));
	CHECK_EQ_U64(n, 4);
	CHECK_STR(rows[0].stack, "app;main;leak;malloc");
	CHECK_EQ_U64(rows[0].before, 1000);
	CHECK_EQ_U64(rows[0].after, 5000);
	CHECK_STR(rows[1].stack, "app;main;new;malloc");
	CHECK_STR(rows[2].stack, "app;main;churn;malloc");
	CHECK_STR(rows[3].stack, "app;main;gone;malloc");
	CHECK_EQ_U64(rows[3].after, 0);
	f = fmemopen(buf, sizeof(buf), "w");
	CHECK(f);
	memory__growth_print(f, rows, n, 2, "bytes");
	fclose(f);
	CHECK(strstr(buf, "+3.91 KiB") && strstr(buf, "app;main;leak;malloc"));
	CHECK(strstr(buf, "2 more"));
	memory__growth_free(rows, n);
	profile__free(a);
	profile__free(b);
}

#define ARGS(...) ((char *[]){"capture", __VA_ARGS__, NULL})
#define NARGS(...) ((int)(sizeof((char *[]){"capture", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(o, ...) capture_cmd__parse_args(NARGS(__VA_ARGS__), ARGS(__VA_ARGS__), o)

TEST(capture_options)
{
	struct capture_opts o;

	CHECK(!PARSE(&o, "-p", "12"));
	CHECK(!o.memory);
	CHECK(!PARSE(&o, "--memory", "-p", "12"));
	CHECK(o.memory && !o.memory_opts.system_wide && !o.memory_opts.anon_mmap);
	CHECK_EQ_U64(o.memory_opts.rate, 0); /* the default */
	CHECK(!PARSE(&o, "--memory-rate", "64KiB", "-p", "12"));
	CHECK(o.memory);
	CHECK_EQ_U64(o.memory_opts.rate, 65536);
	CHECK(!PARSE(&o, "--memory-rate", "1m", "--memory-mmap", "-p", "12"));
	CHECK_EQ_U64(o.memory_opts.rate, 1u << 20);
	CHECK(o.memory_opts.anon_mmap);
	CHECK(!PARSE(&o, "--memory", "--", "/bin/true"));
	CHECK(o.memory && !o.memory_opts.system_wide);
	/* every process only when asked */
	CHECK(PARSE(&o, "--memory"));
	CHECK(!PARSE(&o, "--memory", "-a"));
	CHECK(o.memory_opts.system_wide);
	CHECK(!PARSE(&o, "--memory", "--comm", "x"));
	CHECK(o.memory_opts.system_wide);
	CHECK(PARSE(&o, "--memory-rate", "0", "-p", "1"));
	CHECK(PARSE(&o, "--memory-rate", "5GiB", "-p", "1"));
	CHECK(PARSE(&o, "--memory-rate", "12x", "-p", "1"));
}

int main(void)
{
	RUN(probability_matches_formula);
	RUN(weights_are_size_over_probability);
	RUN(sampled_totals_unbiased);
	RUN(allocator_candidates);
	RUN(back_pressure_share);
	RUN(find_program);
	RUN(human_bytes);
	RUN(capture_options);
	RUN(growth_of_two_windows);
	return TEST_DONE();
}
