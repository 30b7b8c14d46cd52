/* test_retry.c - which failures are retried, backoff bounds, Retry-After in
 * both forms. */
#include <errno.h>
#include <stdlib.h>

#include "export/grpc.h"
#include "export/retry.h"
#include "test.h"

TEST(http_classification)
{
	static const long yes[] = {429, 502, 503, 504};
	static const long no[] = {200, 301, 400, 401, 403, 404, 408, 413, 415, 500, 501, 505};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK(retry__http_retryable(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK(!retry__http_retryable(no[i]));
}

TEST(grpc_classification)
{
	static const int yes[] = {GRPC_CANCELLED,    GRPC_DEADLINE_EXCEEDED, GRPC_ABORTED,
				  GRPC_OUT_OF_RANGE, GRPC_UNAVAILABLE,	     GRPC_DATA_LOSS};
	static const int no[] = {GRPC_OK,
				 GRPC_UNKNOWN,
				 GRPC_INVALID_ARGUMENT,
				 GRPC_NOT_FOUND,
				 GRPC_ALREADY_EXISTS,
				 GRPC_PERMISSION_DENIED,
				 GRPC_FAILED_PRECONDITION,
				 GRPC_UNIMPLEMENTED,
				 GRPC_INTERNAL,
				 GRPC_UNAUTHENTICATED,
				 99};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK(retry__grpc_retryable(yes[i], false));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK(!retry__grpc_retryable(no[i], true));
	/* RESOURCE_EXHAUSTED only with RetryInfo. */
	CHECK(!retry__grpc_retryable(GRPC_RESOURCE_EXHAUSTED, false));
	CHECK(retry__grpc_retryable(GRPC_RESOURCE_EXHAUSTED, true));
}

TEST(backoff_bounds)
{
	static const __u32 rnds[] = {0, 1, 249, 250, 499, 500, 12345, 0x7fffffff, 0xffffffff};
	__u64 base = RETRY_BASE_MS, d, min_seen, max_seen;

	for (unsigned int attempt = 1; attempt <= 40; attempt++) {
		min_seen = ~0ULL;
		max_seen = 0;
		for (size_t i = 0; i < sizeof(rnds) / sizeof(rnds[0]); i++) {
			d = retry__backoff_ms(attempt, rnds[i]);
			CHECK(d >= base / 2);
			CHECK(d <= base + base / 2);
			CHECK(d <= RETRY_MAX_MS);
		}
		for (__u32 r = 0; r < 20000; r += 7) {
			d = retry__backoff_ms(attempt, r * 2654435761U);
			CHECK(d >= base / 2 && d <= RETRY_MAX_MS);
			min_seen = d < min_seen ? d : min_seen;
			max_seen = d > max_seen ? d : max_seen;
		}
		/* The jitter really spreads the delays. */
		CHECK(max_seen - min_seen >= base / 2);
		if (base < RETRY_MAX_MS)
			base *= 2;
	}
	/* Exponential from 0.5 s: rnd = base/2 gives exactly base. */
	CHECK_EQ_U64(retry__backoff_ms(1, 250), 500);
	CHECK_EQ_U64(retry__backoff_ms(2, 500), 1000);
	CHECK_EQ_U64(retry__backoff_ms(3, 1000), 2000);
	CHECK_EQ_U64(retry__backoff_ms(5, 4000), 8000);
	CHECK_EQ_U64(retry__backoff_ms(9, 4000), 8000);
	CHECK_EQ_U64(retry__backoff_ms(1, 0), 250);
	CHECK_EQ_U64(retry__backoff_ms(1, 500), 750);
}

TEST(retry_after_seconds)
{
	__u64 ms = 1;

	CHECK_EQ_U64(retry__parse_retry_after("0", 1000, &ms), 0);
	CHECK_EQ_U64(ms, 0);
	CHECK_EQ_U64(retry__parse_retry_after("3", 1000, &ms), 0);
	CHECK_EQ_U64(ms, 3000);
	CHECK_EQ_U64(retry__parse_retry_after(" 120 ", 1000, &ms), 0);
	CHECK_EQ_U64(ms, 120000);
	CHECK_EQ_U64(retry__parse_retry_after("1.5", 1000, &ms), -EINVAL);
	CHECK_EQ_U64(retry__parse_retry_after("-1", 1000, &ms), -EINVAL);
	CHECK_EQ_U64(retry__parse_retry_after("", 1000, &ms), -EINVAL);
	CHECK_EQ_U64(retry__parse_retry_after("soon", 1000, &ms), -EINVAL);
	CHECK_EQ_U64(retry__parse_retry_after("99999999999999999999999", 1000, &ms), -EINVAL);
}

TEST(retry_after_dates)
{
	/* Sun, 06 Nov 1994 08:49:37 GMT */
	const time_t t = 784111777;
	__u64 ms = 1;

	CHECK_EQ_U64(retry__parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", t - 5, &ms), 0);
	CHECK_EQ_U64(ms, 5000);
	CHECK_EQ_U64(retry__parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", t - 7, &ms), 0);
	CHECK_EQ_U64(ms, 7000);
	CHECK_EQ_U64(retry__parse_retry_after("Sun Nov  6 08:49:37 1994", t - 1, &ms), 0);
	CHECK_EQ_U64(ms, 1000);
	/* A date in the past means now. */
	CHECK_EQ_U64(retry__parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", t + 60, &ms), 0);
	CHECK_EQ_U64(ms, 0);
	CHECK_EQ_U64(retry__parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT junk", t, &ms),
		     -EINVAL);
	CHECK_EQ_U64(retry__parse_retry_after("Sun, 06 Nov 1994", t, &ms), -EINVAL);
}

int main(void)
{
	RUN(http_classification);
	RUN(grpc_classification);
	RUN(backoff_bounds);
	RUN(retry_after_seconds);
	RUN(retry_after_dates);
	return TEST_DONE();
}
