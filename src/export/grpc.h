/* grpc.h - the pure parts of a unary gRPC call over HTTP/2: message framing,
 * reading grpc-status / grpc-message / grpc-status-details-bin from response
 * headers and trailers, and decoding google.rpc.Status (with RetryInfo).
 *
 * No I/O: the exporter feeds bytes and header lines in. Also used for
 * OTLP/HTTP error bodies, which carry a google.rpc.Status too.
 */
#ifndef PROFCAP_GRPC_H
#define PROFCAP_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define GRPC_FRAME_HEADER 5

/* gRPC status codes (the ones the exporter names). */
enum grpc_code {
	GRPC_OK = 0,
	GRPC_CANCELLED = 1,
	GRPC_UNKNOWN = 2,
	GRPC_INVALID_ARGUMENT = 3,
	GRPC_DEADLINE_EXCEEDED = 4,
	GRPC_NOT_FOUND = 5,
	GRPC_ALREADY_EXISTS = 6,
	GRPC_PERMISSION_DENIED = 7,
	GRPC_RESOURCE_EXHAUSTED = 8,
	GRPC_FAILED_PRECONDITION = 9,
	GRPC_ABORTED = 10,
	GRPC_OUT_OF_RANGE = 11,
	GRPC_UNIMPLEMENTED = 12,
	GRPC_INTERNAL = 13,
	GRPC_UNAVAILABLE = 14,
	GRPC_DATA_LOSS = 15,
	GRPC_UNAUTHENTICATED = 16,
};

/* Write the 5-byte message prefix (compressed flag, big-endian length) for a
 * message of @len bytes into @hdr. -EMSGSIZE when @len does not fit 32 bits. */
int grpc__frame_header(unsigned char hdr[GRPC_FRAME_HEADER], bool compressed, size_t len);

/* Find the single message in response body @body (@len bytes). Sets
 * *@msg and *@msglen to the message inside @body (borrowed) and *@compressed.
 * An empty body is -ENODATA; a truncated frame, a bad flag or trailing
 * bytes give -EBADMSG. */
int grpc__parse_frame(const void *body, size_t len, bool *compressed, const unsigned char **msg,
		      size_t *msglen);

/* Name of status @code ("UNAVAILABLE"), "UNKNOWN_CODE" when out of range. */
const char *grpc__code_name(int code);

/* The gRPC status a reply with HTTP status @http_status and no grpc-status
 * stands for (gRPC's HTTP-to-gRPC mapping: 503 -> UNAVAILABLE, ...). */
int grpc__code_from_http(long http_status);

/* What a reply's header block and trailers said. */
struct grpc_reply {
	int status;	      /* grpc-status, -1 if absent */
	char message[256];    /* grpc-message, percent-decoded and trimmed */
	__s64 retry_delay_ms; /* RetryInfo in grpc-status-details-bin, -1 if none */
	bool gzip;	      /* grpc-encoding: gzip */
};

void grpc__reply_init(struct grpc_reply *r);

/* Feed one header or trailer line "name: value" (CRLF optional; other
 * headers ignored) of @len bytes into @r. */
void grpc__reply_header(struct grpc_reply *r, const char *line, size_t len);

/* Percent-decode grpc-message value @in (@len bytes) into @out (@outlen,
 * NUL-terminated, truncated to fit), trimming surrounding white space. Bad
 * escapes are kept as they are, as the gRPC spec asks. */
void grpc__decode_message(const char *in, size_t len, char *out, size_t outlen);

/* Decode a serialized google.rpc.Status of @len bytes: *@code, its message
 * into @msg (@msglen bytes, may be NULL) and the delay of a
 * google.rpc.RetryInfo among its details into *@retry_delay_ms (-1 when
 * none). 0 or -EBADMSG. */
int grpc__decode_status(const void *buf, size_t len, int *code, char *msg, size_t msglen,
			__s64 *retry_delay_ms);

#endif
