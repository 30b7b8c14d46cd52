/* fuzz_otlp_read.c - libFuzzer harness for otlp_read__parse().
 *
 * Any input must parse or fail with a message, never crash or leak (ASan,
 * UBSan). A profile that parses is encoded again with otlp__encode() and
 * read back: that must succeed with the same total, processes and stacks,
 * so the encoder and the model get the reader's odd inputs too.
 * Decompressed input is capped at 16 MiB to keep bombs cheap.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/buf.h"
#include "formats/otlp.h"
#include "formats/otlp_read.h"
#include "model/profile.h"

#define FUZZ_MAX_BYTES (16u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = NULL, *q = NULL;
	char err[256];
	struct buf out;
	int ret;

	ret = otlp_read__parse_capped(data, size, FUZZ_MAX_BYTES, &p, err, sizeof(err));
	if (ret) {
		if (p || (ret != -EBADMSG && ret != -E2BIG && ret != -ENOMEM) ||
		    (ret == -EBADMSG && !err[0])) {
			fprintf(stderr, "bad failure: %d \"%s\" p=%p\n", ret, err, (void *)p);
			abort();
		}
		return 0;
	}
	buf__init(&out, 256u << 20);
	ret = otlp__encode(p, &out);
	if (ret) {
		fprintf(stderr, "cannot encode what was read: %d\n", ret);
		abort();
	}
	ret = otlp_read__parse(out.data, out.len, &q, err, sizeof(err));
	if (ret || profile__total(q) != profile__total(p) ||
	    profile__process_count(q) != profile__process_count(p) ||
	    profile__stack_count(q) != profile__stack_count(p)) {
		fprintf(stderr, "re-encoded profile differs: %d \"%s\"\n", ret, err);
		abort();
	}
	profile__free(q);
	profile__free(p);
	buf__release(&out);
	return 0;
}
