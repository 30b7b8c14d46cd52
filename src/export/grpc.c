/* grpc.c - gRPC framing and status parsing (see grpc.h).
 *
 * google.rpc.Status is decoded field by field with util/wire.h: we only need
 * three fields of it and one of RetryInfo. Their numbers come from the
 * generated headers of nanopb_protos/google/.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "export/grpc.h"
#include "google/protobuf/any.tags.h"
#include "google/protobuf/duration.tags.h"
#include "google/rpc/error_details.tags.h"
#include "google/rpc/status.tags.h"
#include "util/scan.h"
#include "util/wire.h"

#define RETRY_INFO_TYPE "type.googleapis.com/google.rpc.RetryInfo"

enum {
	STATUS_CODE = google_rpc_Status_code_tag,
	STATUS_MESSAGE = google_rpc_Status_message_tag,
	STATUS_DETAILS = google_rpc_Status_details_tag,
	ANY_TYPE_URL = google_protobuf_Any_type_url_tag,
	ANY_VALUE = google_protobuf_Any_value_tag,
	RETRY_INFO_DELAY = google_rpc_RetryInfo_retry_delay_tag,
	DURATION_SECONDS = google_protobuf_Duration_seconds_tag,
	DURATION_NANOS = google_protobuf_Duration_nanos_tag,
};

int grpc__frame_header(unsigned char hdr[GRPC_FRAME_HEADER], bool compressed, size_t len)
{
	if (len > UINT32_MAX)
		return -EMSGSIZE;
	hdr[0] = compressed ? 1 : 0;
	hdr[1] = (unsigned char)(len >> 24);
	hdr[2] = (unsigned char)(len >> 16);
	hdr[3] = (unsigned char)(len >> 8);
	hdr[4] = (unsigned char)len;
	return 0;
}

int grpc__parse_frame(const void *body, size_t len, bool *compressed, const unsigned char **msg,
		      size_t *msglen)
{
	const unsigned char *b = body;
	size_t n;

	if (!len)
		return -ENODATA;
	if (len < GRPC_FRAME_HEADER || b[0] > 1)
		return -EBADMSG;
	n = (size_t)b[1] << 24 | (size_t)b[2] << 16 | (size_t)b[3] << 8 | b[4];
	if (n != len - GRPC_FRAME_HEADER)
		return -EBADMSG;
	*compressed = b[0];
	*msg = b + GRPC_FRAME_HEADER;
	*msglen = n;
	return 0;
}

static const char *const code_names[] = {
	"OK",
	"CANCELLED",
	"UNKNOWN",
	"INVALID_ARGUMENT",
	"DEADLINE_EXCEEDED",
	"NOT_FOUND",
	"ALREADY_EXISTS",
	"PERMISSION_DENIED",
	"RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION",
	"ABORTED",
	"OUT_OF_RANGE",
	"UNIMPLEMENTED",
	"INTERNAL",
	"UNAVAILABLE",
	"DATA_LOSS",
	"UNAUTHENTICATED",
};

const char *grpc__code_name(int code)
{
	if (code < 0 || (size_t)code >= sizeof(code_names) / sizeof(code_names[0]))
		return "UNKNOWN_CODE";
	return code_names[code];
}

int grpc__code_from_http(long http_status)
{
	switch (http_status) {
	case 400:
		return GRPC_INTERNAL;
	case 401:
		return GRPC_UNAUTHENTICATED;
	case 403:
		return GRPC_PERMISSION_DENIED;
	case 404:
		return GRPC_UNIMPLEMENTED;
	case 429:
	case 502:
	case 503:
	case 504:
		return GRPC_UNAVAILABLE;
	default:
		return GRPC_UNKNOWN;
	}
}

void grpc__reply_init(struct grpc_reply *r)
{
	memset(r, 0, sizeof(*r));
	r->status = -1;
	r->retry_delay_ms = -1;
}

void grpc__decode_message(const char *in, size_t len, char *out, size_t outlen)
{
	const char *e = in + len;
	size_t o = 0;
	int hi, lo;

	if (!outlen)
		return;
	while (in < e && isspace((unsigned char)*in))
		in++;
	while (e > in && isspace((unsigned char)e[-1]))
		e--;
	while (in < e && o + 1 < outlen) {
		if (*in == '%' && e - in >= 3 && (hi = scan__hex_digit(in[1])) >= 0 &&
		    (lo = scan__hex_digit(in[2])) >= 0) {
			out[o++] = (char)(hi << 4 | lo);
			in += 3;
			continue;
		}
		out[o++] = *in++;
	}
	out[o] = '\0';
	/* Keep it one printable line: the text goes into log messages. */
	for (size_t i = 0; i < o; i++)
		if (iscntrl((unsigned char)out[i]))
			out[i] = ' ';
}

void grpc__reply_header(struct grpc_reply *r, const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len), *v, *e = line + len;
	unsigned char bin[1024];
	size_t nlen;
	int n, code;

	if (!colon)
		return;
	nlen = (size_t)(colon - line);
	v = colon + 1;
	while (e > v && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	if (nlen == 11 && !strncasecmp(line, "grpc-status", nlen)) {
		code = 0;
		if (v == e)
			return;
		for (; v < e; v++) {
			if (!isdigit((unsigned char)*v) || code > 1000)
				return;
			code = code * 10 + (*v - '0');
		}
		r->status = code;
	} else if (nlen == 12 && !strncasecmp(line, "grpc-message", nlen)) {
		grpc__decode_message(v, (size_t)(e - v), r->message, sizeof(r->message));
	} else if (nlen == 13 && !strncasecmp(line, "grpc-encoding", nlen)) {
		r->gzip = (size_t)(e - v) == 4 && !strncasecmp(v, "gzip", 4);
	} else if (nlen == 23 && !strncasecmp(line, "grpc-status-details-bin", nlen)) {
		n = scan__base64(v, (size_t)(e - v), bin, sizeof(bin));
		if (n >= 0)
			grpc__decode_status(bin, (size_t)n, &code, NULL, 0, &r->retry_delay_ms);
	}
}

/* ---- google.rpc.Status ---------------------------------------------------------- */

/* Bytes @f into @out (NUL-terminated, truncated). */
static void copy_string(const struct wire_field *f, char *out, size_t outlen)
{
	size_t n = wire__left(&f->sub), keep;

	if (!out || !outlen)
		return;
	keep = n < outlen - 1 ? n : outlen - 1;
	memcpy(out, wire__pos(&f->sub), keep);
	out[keep] = '\0';
}

/* google.protobuf.Duration -> milliseconds (rounded up, never negative). */
static int decode_duration(struct wire w, __s64 *ms)
{
	__s64 sec = 0, nanos = 0;
	struct wire_field f;
	int ret;

	while ((ret = wire__next(&w, &f)) > 0) {
		if (f.num == DURATION_SECONDS && f.wt == WIRE_VARINT)
			sec = (__s64)f.v;
		else if (f.num == DURATION_NANOS && f.wt == WIRE_VARINT)
			nanos = (__s32)(__u32)f.v;
	}
	if (ret)
		return ret;
	if (sec < 0 || nanos < 0)
		sec = nanos = 0;
	if (sec > 86400 * 365)
		sec = 86400 * 365;
	*ms = sec * 1000 + (nanos + 999999) / 1000000;
	return 0;
}

/* google.rpc.RetryInfo { Duration retry_delay = 1; } */
static int decode_retry_info(struct wire w, __s64 *ms)
{
	struct wire_field f;
	int ret, err = 0;

	while (!err && (ret = wire__next(&w, &f)) > 0)
		if (f.num == RETRY_INFO_DELAY && f.wt == WIRE_LEN)
			err = decode_duration(f.sub, ms);
	return err ?: ret;
}

/* google.protobuf.Any { string type_url = 1; bytes value = 2; }: a RetryInfo
 * sets *@ms. The value may come before the type URL. */
static int decode_detail(struct wire w, __s64 *ms)
{
	struct wire value = wire__from(NULL, 0);
	struct wire_field f;
	char type[64] = "";
	bool have_value = false;
	int ret;

	while ((ret = wire__next(&w, &f)) > 0) {
		if (f.num == ANY_TYPE_URL && f.wt == WIRE_LEN) {
			copy_string(&f, type, sizeof(type));
		} else if (f.num == ANY_VALUE && f.wt == WIRE_LEN) {
			value = f.sub;
			have_value = true;
		}
	}
	if (ret)
		return ret;
	if (have_value && !strcmp(type, RETRY_INFO_TYPE))
		return decode_retry_info(value, ms);
	return 0;
}

int grpc__decode_status(const void *buf, size_t len, int *code, char *msg, size_t msglen,
			__s64 *retry_delay_ms)
{
	struct wire w = wire__from(buf, len);
	struct wire_field f;
	int ret, err = 0;

	*code = 0;
	*retry_delay_ms = -1;
	if (msg && msglen)
		msg[0] = '\0';
	while (!err && (ret = wire__next(&w, &f)) > 0) {
		if (f.num == STATUS_CODE && f.wt == WIRE_VARINT)
			*code = (int)(__s32)(__u32)f.v;
		else if (f.num == STATUS_MESSAGE && f.wt == WIRE_LEN)
			copy_string(&f, msg, msglen);
		else if (f.num == STATUS_DETAILS && f.wt == WIRE_LEN)
			err = decode_detail(f.sub, retry_delay_ms);
	}
	if (err || ret)
		return -EBADMSG;
	if (msg)
		for (size_t i = 0; msg[i]; i++)
			if (iscntrl((unsigned char)msg[i]))
				msg[i] = ' ';
	return 0;
}
