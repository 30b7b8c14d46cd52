/* read_bench.c - driver for read_bench.sh: writes a large synthetic OTLP
 * capture with otlp__encode() and times otlp_read__file() on it.
 *
 *   read_bench gen FILE STACKS ENTRIES TOTAL   write FILE
 *   read_bench parse FILE [ROUNDS]             parse it, print ms and peak RSS
 *
 * The model: STACKS distinct stacks (depth 8..47, frames spread over 20k
 * functions with ~4 call sites each in 40 mappings, a kernel tail on a
 * quarter of them), spread
 * over 64 processes of 8 threads; ENTRIES distinct (process, thread, stack)
 * sample entries whose values add up to TOTAL samples.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "util/buf.h"
#include "formats/otlp.h"
#include "formats/otlp_read.h"
#include "model/profile.h"

#define NFUNCS 20000
#define NMAPS 40
#define NPROCS 64
#define NTHREADS 8
#define MAX_DEPTH 48

static __u64 rng = 0x243f6a8885a308d3ull;

static __u64 next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int gen(const char *path, size_t nstacks, size_t entries, __u64 total)
{
	static char fnames[NFUNCS][48], paths[NMAPS][64], bids[NMAPS][41], comms[NPROCS][16];
	static struct profile_mapping_desc maps[NMAPS + 1];
	struct profile_frame frames[MAX_DEPTH];
	struct profile_meta meta = {.time_unix_nano = 1700000000000000000ull,
				    .duration_nano = 60000000000ull,
				    .period_ns = 10101010,
				    .profile_id = {1},
				    .host_name = "bench",
				    .host_arch = "amd64",
				    .os_type = "linux",
				    .scope_name = "profcap",
				    .scope_version = "bench"};
	struct profile *p = profile__new();
	__u32 *depth = calloc(nstacks, sizeof(*depth));
	__u64 *seed = calloc(nstacks, sizeof(*seed));
	struct buf out;
	size_t i, j;
	FILE *f;
	int err;

	if (!p || !depth || !seed)
		return -ENOMEM;
	for (i = 0; i < NFUNCS; i++)
		snprintf(fnames[i], sizeof(fnames[i]), "ns::module%zu::function_%zu", i % 97, i);
	for (i = 0; i < NMAPS; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/usr/lib/x86_64-linux-gnu/libbench%zu.so", i);
		for (j = 0; j < 40; j++)
			bids[i][j] = "0123456789abcdef"[(i * 7 + j) % 16];
		maps[i].start = 0x7f0000000000ull + (i << 24);
		maps[i].limit = maps[i].start + (1 << 24);
		maps[i].path = paths[i];
		maps[i].build_id = bids[i];
	}
	maps[NMAPS].start = 0xffffffff81000000ull;
	maps[NMAPS].limit = 0xffffffff83000000ull;
	maps[NMAPS].path = "[kernel.kallsyms]";
	for (i = 0; i < NPROCS; i++)
		snprintf(comms[i], sizeof(comms[i]), "proc%zu", i);
	for (i = 0; i < nstacks; i++) {
		depth[i] = 8 + next_rand() % (MAX_DEPTH - 8);
		seed[i] = next_rand();
	}
	profile__set_meta(p, &meta);
	for (i = 0; i < entries; i++) {
		size_t s = i % nstacks, k = i / nstacks;
		size_t proc = (s + k * 7) % NPROCS, tid = k % NTHREADS;
		struct profile_process_desc d = {.pid = 1000 + proc, .exe_name = comms[proc]};
		__u64 r = seed[s], value = total / entries + (i < total % entries);
		char tname[16];

		for (j = 0; j < depth[s]; j++) {
			/* Deterministic per stack; shared callers near the root. */
			size_t fn = j + 3 >= depth[s] ? j : (r >> (j % 40)) % NFUNCS;
			size_t m = fn % NMAPS;
			bool kern = (seed[s] & 3) == 0 && j < 3;

			r = r * 6364136223846793005ull + 1442695040888963407ull;
			/* A function is called from a few sites: ~4 locations each. */
			frames[j].address = kern ? maps[NMAPS].start + fn * 64
						 : maps[m].start + fn * 64 + (r >> 60) % 4 * 8;
			frames[j].mapping = kern ? &maps[NMAPS] : &maps[m];
			frames[j].function = fnames[fn];
			frames[j].type = kern ? PROFILE_FRAME_KERNEL : PROFILE_FRAME_NATIVE;
			frames[j].type_name = NULL;
		}
		snprintf(tname, sizeof(tname), "worker-%zu", tid);
		err = profile__add_sample(p, &d, (__u32)(d.pid * 100 + tid), tname, frames,
					  depth[s], value ? value : 1);
		if (err)
			return err;
	}
	buf__init(&out, 1ull << 31);
	err = otlp__encode(p, &out);
	if (err)
		return err;
	f = fopen(path, "w");
	if (!f || fwrite(out.data, 1, out.len, f) != out.len || fclose(f))
		return -EIO;
	printf("wrote %s: %zu bytes, %zu stacks, %zu locations, %zu functions, %zu entries in "
	       "%zu processes, %llu samples\n",
	       path, out.len, profile__stack_count(p) - 1, profile__location_count(p) - 1,
	       profile__function_count(p) - 1, entries, profile__process_count(p),
	       (unsigned long long)profile__total(p));
	buf__release(&out);
	profile__free(p);
	free(depth);
	free(seed);
	return 0;
}

static int parse(const char *path, int rounds)
{
	double best = 1e30, best_cpu = 1e30;
	struct rusage ru;
	int i, err;

	for (i = 0; i < rounds; i++) {
		struct profile *p = NULL;
		double t0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID), t, c;
		size_t n = 0, k;

		err = otlp_read__file(path, &p);
		if (err)
			return err;
		t = now_ms(CLOCK_MONOTONIC) - t0;
		c = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
		if (t < best)
			best = t;
		if (c < best_cpu)
			best_cpu = c;
		for (k = 0; k < profile__process_count(p); k++)
			n += profile__sample_count(p, k);
		if (!i)
			printf("read %zu processes, %zu sample entries, %llu samples, %zu stacks\n",
			       profile__process_count(p), n, (unsigned long long)profile__total(p),
			       profile__stack_count(p) - 1);
		profile__free(p);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("parse (best of %d): %.1f ms wall, %.1f ms CPU; peak RSS %ld MB\n", rounds, best,
	       best_cpu, ru.ru_maxrss / 1024);
	return 0;
}

int main(int argc, char **argv)
{
	int err = -EINVAL;

	if (argc == 6 && !strcmp(argv[1], "gen"))
		err = gen(argv[2], strtoul(argv[3], NULL, 0), strtoul(argv[4], NULL, 0),
			  strtoull(argv[5], NULL, 0));
	else if ((argc == 3 || argc == 4) && !strcmp(argv[1], "parse"))
		err = parse(argv[2], argc == 4 ? atoi(argv[3]) : 1);
	else
		fprintf(stderr, "usage: read_bench gen FILE STACKS ENTRIES TOTAL | parse FILE "
				"[ROUNDS]\n");
	if (err)
		fprintf(stderr, "read_bench: %s\n", strerror(-err));
	return err ? 1 : 0;
}
