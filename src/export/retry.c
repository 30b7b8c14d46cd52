/* retry.c - retry classification, backoff and Retry-After (see retry.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/grpc.h"
#include "export/retry.h"

bool retry__http_retryable(long status)
{
	return status == 429 || status == 502 || status == 503 || status == 504;
}

bool retry__grpc_retryable(int code, bool has_retry_info)
{
	switch (code) {
	case GRPC_CANCELLED:
	case GRPC_DEADLINE_EXCEEDED:
	case GRPC_ABORTED:
	case GRPC_OUT_OF_RANGE:
	case GRPC_UNAVAILABLE:
	case GRPC_DATA_LOSS:
		return true;
	case GRPC_RESOURCE_EXHAUSTED:
		return has_retry_info;
	default:
		return false;
	}
}

__u64 retry__backoff_ms(unsigned int attempt, __u32 rnd)
{
	__u64 base = RETRY_BASE_MS, d;

	for (unsigned int i = 1; i < attempt && base < RETRY_MAX_MS; i++)
		base *= 2;
	if (base > RETRY_MAX_MS)
		base = RETRY_MAX_MS;
	/* base/2 + [0, base]: +-50% around base. */
	d = base / 2 + (__u64)rnd % (base + 1);
	return d > RETRY_MAX_MS ? RETRY_MAX_MS : d;
}

static const char *const date_formats[] = {
	"%a, %d %b %Y %H:%M:%S GMT", /* IMF-fixdate */
	"%A, %d-%b-%y %H:%M:%S GMT", /* RFC 850 */
	"%a %b %d %H:%M:%S %Y",	     /* asctime */
};

int retry__parse_retry_after(const char *v, time_t now, __u64 *ms)
{
	unsigned long long secs;
	const char *end;
	struct tm tm;
	char *e;
	time_t t;

	while (isspace((unsigned char)*v))
		v++;
	if (isdigit((unsigned char)*v)) {
		errno = 0;
		secs = strtoull(v, &e, 10);
		while (isspace((unsigned char)*e))
			e++;
		if (*e || errno)
			return -EINVAL;
		if (secs > 365ULL * 86400)
			secs = 365ULL * 86400;
		*ms = secs * 1000;
		return 0;
	}
	for (size_t i = 0; i < sizeof(date_formats) / sizeof(date_formats[0]); i++) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(v, date_formats[i], &tm);
		if (!end)
			continue;
		while (isspace((unsigned char)*end))
			end++;
		if (*end)
			continue;
		t = timegm(&tm);
		if (t == (time_t)-1)
			return -EINVAL;
		*ms = t > now ? (__u64)(t - now) * 1000 : 0;
		return 0;
	}
	return -EINVAL;
}
