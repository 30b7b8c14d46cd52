/* retry.h - the export retry policy of the OTLP exporter spec: which
 * failures are worth another attempt, how long to wait (exponential backoff
 * with jitter), and server-given delays (Retry-After).
 *
 * Pure code: time and randomness are passed in, so every rule is testable.
 */
#ifndef PROFCAP_RETRY_H
#define PROFCAP_RETRY_H

#include <stdbool.h>
#include <time.h>
#include <linux/types.h>

#define RETRY_BASE_MS 500
#define RETRY_MAX_MS 8000

/* OTLP/HTTP: 429, 502, 503 and 504 are retryable; everything else is final. */
bool retry__http_retryable(long status);

/* OTLP/gRPC: CANCELLED, DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE,
 * UNAVAILABLE and DATA_LOSS are retryable; RESOURCE_EXHAUSTED only when the
 * server sent RetryInfo (@has_retry_info). */
bool retry__grpc_retryable(int code, bool has_retry_info);

/* Delay before the attempt following failed attempt number @attempt (1 for
 * the first): 500 ms doubling per attempt up to 8 s, each spread by +-50%
 * with @rnd (any 32-bit random value) and never above 8 s. */
__u64 retry__backoff_ms(unsigned int attempt, __u32 rnd);

/* Parse a Retry-After value @v: delta seconds ("120") or an HTTP-date ("Sun,
 * 06 Nov 1994 08:49:37 GMT", also the RFC 850 and asctime forms) relative to
 * @now. A date in the past gives 0. 0 with *@ms set, or -EINVAL. */
int retry__parse_retry_after(const char *v, time_t now, __u64 *ms);

#endif
