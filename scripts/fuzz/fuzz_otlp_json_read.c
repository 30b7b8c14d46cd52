/* fuzz_otlp_json_read.c - libFuzzer harness for otlp_json_read__transcode().
 *
 * Any input must transcode or fail with a message, never crash or leak
 * (ASan, UBSan). What transcodes is read by otlp_read__parse_capped(), as
 * the CLI does: that may fail (the JSON named nonsense), never crash.
 * Output capped at 16 MiB.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/otlp_json_read.h"
#include "formats/otlp_read.h"
#include "model/profile.h"
#include "util/buf.h"

#define FUZZ_MAX_BYTES (16u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = NULL;
	char err[256];
	struct buf out;
	int ret;

	buf__init(&out, FUZZ_MAX_BYTES);
	ret = otlp_json_read__transcode((const char *)data, size, &out, err, sizeof(err));
	if (ret) {
		if (ret != -EBADMSG && ret != -E2BIG && ret != -ENOMEM)
			abort();
		if (ret == -EBADMSG && strncmp(err, "OTLP/JSON at byte ", 18))
			abort(); /* every syntax error says where */
	} else if (out.len) {
		otlp_read__parse_capped(out.data, out.len, FUZZ_MAX_BYTES, &p, err, sizeof(err));
		profile__free(p);
	}
	buf__release(&out);
	return 0;
}
