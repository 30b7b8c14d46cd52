/* fuzz_upload.c - libFuzzer harness for upload__check(), which decides
 * whether a file handed to `profcap upload` (a spooled or rescued capture,
 * or anything a user points it at) is an OTLP ProfilesData worth sending.
 * Any input is accepted or refused with a reason; never a crash. The
 * exporter and endpoint configuration that `upload` also links are not
 * reached by upload__check(): link-only stand-ins below abort if called. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/upload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];
	size_t n = 0;
	int ret;

	why[0] = '\0';
	ret = upload__check(data, size, &n, why, sizeof(why));
	if (ret && (ret != -EBADMSG || !why[0] || strnlen(why, sizeof(why)) == sizeof(why))) {
		fprintf(stderr, "bad failure: %d \"%s\"\n", ret, why);
		abort();
	}
	return 0;
}

/* Link-only: upload__main's collaborators, never called by upload__check. */
#define NOT_CALLED(name)            \
	void name(void);            \
	void name(void)             \
	{                           \
		abort();            \
	}
NOT_CALLED(env__process)
NOT_CALLED(exporter__export)
NOT_CALLED(exporter__free)
NOT_CALLED(exporter__new)
NOT_CALLED(otlp_config__flag)
NOT_CALLED(otlp_config__free)
NOT_CALLED(otlp_config__resolve)
NOT_CALLED(otlp_config__usage)
