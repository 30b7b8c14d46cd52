/* exporter.h - deliver one encoded ProfilesData to an OTLP endpoint over
 * libcurl: OTLP/gRPC (HTTP/2, h2c prior knowledge for http://, ALPN h2 for
 * https://, gRPC framing, grpc-status from trailers or trailers-only
 * replies) or OTLP/HTTP (POST application/x-protobuf), optional gzip, TLS
 * 1.2/1.3 with verification and mTLS.
 *
 * Retries what the OTLP spec calls retryable (HTTP 429/502/503/504, gRPC
 * UNAVAILABLE, DEADLINE_EXCEEDED, ... and RESOURCE_EXHAUSTED with RetryInfo;
 * connection failures before anything was sent) with exponential backoff and
 * jitter, honouring Retry-After / RetryInfo, within the config's total
 * deadline. Never resends a payload the server may have accepted.
 */
#ifndef PROFCAP_EXPORTER_H
#define PROFCAP_EXPORTER_H

#include <stddef.h>
#include <linux/types.h>

#include "export/otlp_config.h"

struct export_result {
	unsigned attempts;
	long http_status;	   /* last HTTP status, 0 if none */
	int grpc_status;	   /* last grpc-status, -1 if none */
	__s64 rejected;		   /* partial_success.rejected_profiles */
	char partial_message[256]; /* partial_success.error_message */
	char error[512];	   /* why it failed (never contains header values) */
	size_t bytes_sent;	   /* request body bytes of the last attempt (after gzip) */
	double seconds;		   /* wall time of the whole export */
};

struct exporter;
struct clock;

/* Prepare an exporter for @cfg (borrowed; must outlive the exporter).
 * Initialises libcurl once. NULL on failure after logging why. */
struct exporter *exporter__new(const struct otlp_config *cfg);

void exporter__free(struct exporter *e);

/* Read time from @c (borrowed; it must outlive @e) instead of the system
 * clock: the deadline (--timeout), the backoff sleeps and res->seconds
 * follow it, so tests step time instead of waiting. NULL restores the
 * system clock. */
void exporter__set_clock(struct exporter *e, const struct clock *c);

/* Send @len bytes of @payload (one ProfilesData), retrying as described
 * above. Returns 0 when the endpoint accepted it (possibly partially: see
 * res->rejected), -ETIMEDOUT when the deadline passed, -ECONNREFUSED,
 * -EPROTO (TLS or protocol failure), -EBADMSG (permanent rejection, e.g.
 * HTTP 400 or gRPC INVALID_ARGUMENT), other -errno. Fills @res either way.
 * Logs nothing: the caller decides (spool, message). */
int exporter__export(struct exporter *e, const void *payload, size_t len,
		     struct export_result *res);

/* exporter__export() within at most @timeout_ms (retries included), or the
 * config's deadline when that is shorter (0: the config's). For a last
 * bounded try on shutdown. */
int exporter__export_within(struct exporter *e, const void *payload, size_t len,
			    __u64 timeout_ms, struct export_result *res);

/* Decode a serialized ExportProfilesServiceResponse of @len bytes into
 * @res->rejected and @res->partial_message (one printable line). Pure;
 * 0 or -EBADMSG. */
int exporter__decode_response(const void *msg, size_t len, struct export_result *res);

#endif
