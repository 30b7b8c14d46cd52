/* fuzz_pprof_read.c - libFuzzer harness for pprof_read__parse() (pprof
 * files from any tool, gzip'd or not). Any input parses or fails with a
 * message; a profile that parses is written as pprof again and read back
 * with the same total and number of processes. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/buf.h"
#include "formats/pprof.h"
#include "formats/pprof_read.h"
#include "model/profile.h"

#define FUZZ_MAX_BYTES (16u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = NULL, *q = NULL;
	char err[256];
	struct buf out;
	int ret;

	(void)pprof_read__looks_like(data, size);
	ret = pprof_read__parse(data, size, FUZZ_MAX_BYTES, &p, err, sizeof(err));
	if (ret) {
		if (p || (ret != -EBADMSG && ret != -E2BIG && ret != -ENOMEM) ||
		    (ret == -EBADMSG && !err[0])) {
			fprintf(stderr, "bad failure: %d \"%s\"\n", ret, err);
			abort();
		}
		return 0;
	}
	buf__init(&out, 64u << 20);
	ret = pprof__encode(p, &out);
	if (!ret) {
		ret = pprof_read__parse(out.data, out.len, FUZZ_MAX_BYTES, &q, err, sizeof(err));
		if (ret || profile__total(q) != profile__total(p) ||
		    profile__process_count(q) != profile__process_count(p)) {
			fprintf(stderr, "re-read differs: %d \"%s\"\n", ret, err);
			abort();
		}
	}
	profile__free(p);
	profile__free(q);
	buf__release(&out);
	return 0;
}
