/* fuzz_perf_script.c - libFuzzer harness for perf_script__parse().
 *
 * Any text must parse or fail with a message, never crash or leak. A profile
 * that parses is encoded with otlp__encode() and read back with
 * otlp_read__parse(): same total and processes (the convert path).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/buf.h"
#include "formats/otlp.h"
#include "formats/otlp_read.h"
#include "formats/perf_script.h"
#include "model/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = NULL, *q = NULL;
	struct perf_script_stats st = {0};
	char err[256] = "";
	struct buf out;
	int ret;

	ret = perf_script__parse(data, size, &p, &st, err, sizeof(err));
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
