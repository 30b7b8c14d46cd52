/* fuzz_perf_data.c - libFuzzer harness for perf_data__parse().
 *
 * Any bytes must parse or fail with a message, never crash or leak. The
 * unwind callbacks are in memory: a few rows for some files, none (frame
 * pointers) for others, and a build-id for files the input gave none, so
 * dwarf-mode stacks are walked over the input's stack copies. A profile
 * that parses is encoded with otlp__encode() and read back with
 * otlp_read__parse(): same total and processes (the convert path).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "formats/otlp.h"
#include "formats/otlp_read.h"
#include "formats/perf_data.h"
#include "model/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Packed rows (bpf/unwind.h): rsp+8 from 0x1000, rbp+16 with the caller's
 * rbp at CFA-16 from 0x1100, the outermost frame from 0x1200. */
static const __u64 rows[] = {
	0x1000ull | 1ull << 32 | (8ull << 45),
	0x1100ull | 2ull << 32 | 1ull << 35 | ((__u64)(-2 & 0xff) << 37) | (16ull << 45),
	0x1200ull | 6ull << 32,
};

static int rows_cb(void *ctx, const char *path, const char *build_id, __u64 pgoff,
		   const __u64 **out, __u32 *n, __u64 *vaddr)
{
	(void)ctx, (void)build_id;
	if (strlen(path) % 2)
		return -ENOENT;
	*out = rows;
	*n = sizeof(rows) / sizeof(rows[0]);
	*vaddr = pgoff;
	return 0;
}

static int build_id_cb(void *ctx, const char *path, char *hex, size_t len)
{
	(void)ctx;
	if (path[0] != '/' || len < 41)
		return -ENOENT;
	memcpy(hex, "0123456789abcdef0123456789abcdef01234567", 41);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_data_unwind_ops ops = {.rows = rows_cb, .build_id = build_id_cb};
	struct profile *p = NULL, *q = NULL;
	struct perf_data_stats st;
	char err[256] = "";
	struct buf out;
	int ret;

	ret = perf_data__parse(data, size, &ops, &p, &st, err, sizeof(err));
	if (ret) {
		if (p || (ret != -EBADMSG && ret != -E2BIG && ret != -ENOMEM) ||
		    (ret == -EBADMSG && !err[0])) {
			fprintf(stderr, "bad failure: %d \"%s\" p=%p\n", ret, err, (void *)p);
			abort();
		}
		return 0;
	}
	if (profile__total(p) != st.samples) {
		fprintf(stderr, "total %llu != %zu samples read\n",
			(unsigned long long)profile__total(p), st.samples);
		abort();
	}
	buf__init(&out, 256u << 20);
	ret = otlp__encode(p, &out);
	if (!ret)
		ret = otlp_read__parse(out.data, out.len, &q, err, sizeof(err));
	if (ret || profile__total(q) != profile__total(p) ||
	    profile__process_count(q) != profile__process_count(p)) {
		fprintf(stderr, "OTLP round trip differs: %d \"%s\"\n", ret, err);
		abort();
	}
	profile__free(q);
	profile__free(p);
	buf__release(&out);
	return 0;
}
