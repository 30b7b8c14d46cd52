/* test_grpc.c - gRPC framing, status/message from header lines (both header
 * block and trailers look alike here), percent-decoding of grpc-message,
 * base64 of -bin headers and google.rpc.Status with RetryInfo, built byte by
 * byte in the test. */
#include <errno.h>
#include <stdlib.h>

#include "export/grpc.h"
#include "util/scan.h"
#include "test.h"

/* ---- a tiny protobuf writer, independent of the code under test ---- */

struct pbw {
	unsigned char b[512];
	size_t n;
};

static void put_varint(struct pbw *w, unsigned long long v)
{
	do {
		w->b[w->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void put_tag(struct pbw *w, unsigned int field, unsigned int wt)
{
	put_varint(w, field << 3 | wt);
}

static void put_bytes(struct pbw *w, unsigned int field, const void *p, size_t len)
{
	put_tag(w, field, 2);
	put_varint(w, len);
	memcpy(w->b + w->n, p, len);
	w->n += len;
}

static void put_uint(struct pbw *w, unsigned int field, unsigned long long v)
{
	put_tag(w, field, 0);
	put_varint(w, v);
}

/* google.rpc.Status{code, message, details: [Any{type, RetryInfo{delay}}]} */
static void build_status(struct pbw *st, int code, const char *msg, const char *type, long long sec,
			 int nanos)
{
	struct pbw dur = {0}, ri = {0}, any = {0}, other = {0};

	memset(st, 0, sizeof(*st));
	put_uint(st, 1, (unsigned long long)code);
	put_bytes(st, 2, msg, strlen(msg));
	/* An unrelated detail first: it must be skipped. */
	put_bytes(&other, 1, "type.googleapis.com/google.rpc.DebugInfo", 40);
	put_bytes(&other, 2, "xyz", 3);
	put_bytes(st, 3, other.b, other.n);
	if (type) {
		put_uint(&dur, 1, (unsigned long long)sec);
		put_uint(&dur, 2, (unsigned long long)nanos);
		put_bytes(&ri, 1, dur.b, dur.n);
		/* value before type_url: field order must not matter. */
		put_bytes(&any, 2, ri.b, ri.n);
		put_bytes(&any, 1, type, strlen(type));
		put_bytes(st, 3, any.b, any.n);
	}
}

static void b64(const unsigned char *in, size_t n, char *out, int pad)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, o = 0;

	for (i = 0; i + 2 < n; i += 3) {
		out[o++] = a[in[i] >> 2];
		out[o++] = a[(in[i] & 3) << 4 | in[i + 1] >> 4];
		out[o++] = a[(in[i + 1] & 15) << 2 | in[i + 2] >> 6];
		out[o++] = a[in[i + 2] & 63];
	}
	if (n - i == 1) {
		out[o++] = a[in[i] >> 2];
		out[o++] = a[(in[i] & 3) << 4];
		if (pad) {
			out[o++] = '=';
			out[o++] = '=';
		}
	} else if (n - i == 2) {
		out[o++] = a[in[i] >> 2];
		out[o++] = a[(in[i] & 3) << 4 | in[i + 1] >> 4];
		out[o++] = a[(in[i + 1] & 15) << 2];
		if (pad)
			out[o++] = '=';
	}
	out[o] = '\0';
}

static void feed(struct grpc_reply *r, const char *line)
{
	grpc__reply_header(r, line, strlen(line));
}

/* ---- tests ---- */

TEST(frame_round_trip)
{
	unsigned char buf[5 + 300];
	const unsigned char *msg;
	bool comp;
	size_t n;

	CHECK_EQ_U64(grpc__frame_header(buf, false, 300), 0);
	CHECK_EQ_U64(buf[0], 0);
	CHECK_EQ_U64(buf[1], 0);
	CHECK_EQ_U64(buf[2], 0);
	CHECK_EQ_U64(buf[3], 1);
	CHECK_EQ_U64(buf[4], 44);
	memset(buf + 5, 'x', 300);
	CHECK_EQ_U64(grpc__parse_frame(buf, sizeof(buf), &comp, &msg, &n), 0);
	CHECK(!comp);
	CHECK(msg == buf + 5);
	CHECK_EQ_U64(n, 300);

	CHECK_EQ_U64(grpc__frame_header(buf, true, 0x01020304), 0);
	CHECK_EQ_U64(buf[0], 1);
	CHECK_EQ_U64(buf[1], 1);
	CHECK_EQ_U64(buf[4], 4);
	CHECK_EQ_U64(grpc__frame_header(buf, true, 0x100000000ULL), -EMSGSIZE);

	/* An empty message is a valid frame. */
	CHECK_EQ_U64(grpc__frame_header(buf, false, 0), 0);
	CHECK_EQ_U64(grpc__parse_frame(buf, 5, &comp, &msg, &n), 0);
	CHECK_EQ_U64(n, 0);
}

TEST(frame_errors)
{
	unsigned char buf[16] = {0, 0, 0, 0, 4, 'a', 'b', 'c', 'd', 'e'};
	const unsigned char *msg;
	bool comp;
	size_t n;

	CHECK_EQ_U64(grpc__parse_frame(buf, 0, &comp, &msg, &n), -ENODATA);
	CHECK_EQ_U64(grpc__parse_frame(buf, 4, &comp, &msg, &n), -EBADMSG);  /* short prefix */
	CHECK_EQ_U64(grpc__parse_frame(buf, 8, &comp, &msg, &n), -EBADMSG);  /* truncated */
	CHECK_EQ_U64(grpc__parse_frame(buf, 10, &comp, &msg, &n), -EBADMSG); /* trailing */
	CHECK_EQ_U64(grpc__parse_frame(buf, 9, &comp, &msg, &n), 0);
	buf[0] = 2;
	CHECK_EQ_U64(grpc__parse_frame(buf, 9, &comp, &msg, &n), -EBADMSG); /* bad flag */
}

TEST(status_and_message_lines)
{
	struct grpc_reply r;

	grpc__reply_init(&r);
	CHECK_EQ_U64(r.status, -1);
	CHECK(r.retry_delay_ms == -1);
	feed(&r, ":status: 200\r\n");
	feed(&r, "content-type: application/grpc\r\n");
	CHECK_EQ_U64(r.status, -1);
	feed(&r, "grpc-status: 14\r\n");
	feed(&r, "grpc-message:  connection%20reset%3A 100%25 busy \r\n");
	CHECK_EQ_U64(r.status, 14);
	CHECK_STR(r.message, "connection reset: 100% busy");

	/* Case-insensitive names, no CRLF, bad escapes kept as they are. */
	grpc__reply_init(&r);
	feed(&r, "Grpc-Status:0");
	feed(&r, "GRPC-MESSAGE: 50%zz%2");
	CHECK_EQ_U64(r.status, 0);
	CHECK_STR(r.message, "50%zz%2");

	/* Not numbers, or other headers with the same prefix, are ignored. */
	grpc__reply_init(&r);
	feed(&r, "grpc-status: abc\r\n");
	feed(&r, "grpc-statusx: 3\r\n");
	feed(&r, "grpc-status:\r\n");
	CHECK_EQ_U64(r.status, -1);
	feed(&r, "grpc-encoding: gzip\r\n");
	CHECK(r.gzip);
	feed(&r, "grpc-encoding: identity\r\n");
	CHECK(!r.gzip);

	/* Control characters never reach a log line. */
	grpc__reply_init(&r);
	feed(&r, "grpc-message: a%0Ab\r\n");
	CHECK_STR(r.message, "a b");
}

TEST(message_truncation)
{
	char out[8];

	grpc__decode_message("  abcdefghijk ", 14, out, sizeof(out));
	CHECK_STR(out, "abcdefg");
	grpc__decode_message("%41%42", 6, out, sizeof(out));
	CHECK_STR(out, "AB");
}

TEST(base64)
{
	unsigned char out[16];
	char enc[32];

	CHECK_EQ_U64(scan__base64("aGVsbG8", 7, out, sizeof(out)), 5);
	CHECK(!memcmp(out, "hello", 5));
	CHECK_EQ_U64(scan__base64("aGVsbG8=", 8, out, sizeof(out)), 5);
	CHECK_EQ_U64(scan__base64("aGk=", 4, out, sizeof(out)), 2);
	CHECK_EQ_U64(scan__base64("", 0, out, sizeof(out)), 0);
	CHECK_EQ_U64(scan__base64("a!==", 4, out, sizeof(out)), -EINVAL);
	CHECK_EQ_U64(scan__base64("a", 1, out, sizeof(out)), -EINVAL);
	CHECK_EQ_U64(scan__base64("aGVsbG8", 7, out, 3), -ENOSPC);
	b64((const unsigned char *)"\xff\xfe\x00", 3, enc, 1);
	CHECK_EQ_U64(scan__base64(enc, strlen(enc), out, sizeof(out)), 3);
	CHECK(!memcmp(out, "\xff\xfe\x00", 3));
}

TEST(status_with_retry_info)
{
	struct pbw st;
	char msg[64];
	__s64 delay;
	int code;

	build_status(&st, 8, "slow down", "type.googleapis.com/google.rpc.RetryInfo", 2, 500000000);
	CHECK_EQ_U64(grpc__decode_status(st.b, st.n, &code, msg, sizeof(msg), &delay), 0);
	CHECK_EQ_U64(code, 8);
	CHECK_STR(msg, "slow down");
	CHECK_EQ_U64(delay, 2500);

	/* Another detail type gives no delay. */
	build_status(&st, 8, "x", "type.googleapis.com/google.rpc.QuotaFailure", 2, 0);
	CHECK_EQ_U64(grpc__decode_status(st.b, st.n, &code, msg, sizeof(msg), &delay), 0);
	CHECK(delay == -1);
	build_status(&st, 3, "bad", NULL, 0, 0);
	CHECK_EQ_U64(grpc__decode_status(st.b, st.n, &code, NULL, 0, &delay), 0);
	CHECK_EQ_U64(code, 3);
	CHECK(delay == -1);

	/* Truncated bytes are refused. */
	build_status(&st, 8, "slow down", "type.googleapis.com/google.rpc.RetryInfo", 1, 0);
	CHECK_EQ_U64(grpc__decode_status(st.b, st.n - 1, &code, msg, sizeof(msg), &delay),
		     -EBADMSG);
	CHECK_EQ_U64(grpc__decode_status("\xff", 1, &code, msg, sizeof(msg), &delay), -EBADMSG);
}

TEST(details_bin_header)
{
	struct grpc_reply r;
	char line[1024];
	struct pbw st;

	build_status(&st, 8, "quota", "type.googleapis.com/google.rpc.RetryInfo", 0, 250000000);
	strcpy(line, "grpc-status-details-bin: ");
	b64(st.b, st.n, line + strlen(line), 0); /* gRPC sends it unpadded */
	strcat(line, "\r\n");
	grpc__reply_init(&r);
	feed(&r, "grpc-status: 8\r\n");
	feed(&r, line);
	CHECK_EQ_U64(r.status, 8);
	CHECK_EQ_U64(r.retry_delay_ms, 250);

	grpc__reply_init(&r);
	feed(&r, "grpc-status-details-bin: !!!\r\n");
	CHECK(r.retry_delay_ms == -1);
}

TEST(code_mapping)
{
	CHECK_STR(grpc__code_name(GRPC_UNAVAILABLE), "UNAVAILABLE");
	CHECK_STR(grpc__code_name(GRPC_UNAUTHENTICATED), "UNAUTHENTICATED");
	CHECK_STR(grpc__code_name(0), "OK");
	CHECK_STR(grpc__code_name(17), "UNKNOWN_CODE");
	CHECK_STR(grpc__code_name(-1), "UNKNOWN_CODE");
	CHECK_EQ_U64(grpc__code_from_http(503), GRPC_UNAVAILABLE);
	CHECK_EQ_U64(grpc__code_from_http(429), GRPC_UNAVAILABLE);
	CHECK_EQ_U64(grpc__code_from_http(401), GRPC_UNAUTHENTICATED);
	CHECK_EQ_U64(grpc__code_from_http(404), GRPC_UNIMPLEMENTED);
	CHECK_EQ_U64(grpc__code_from_http(400), GRPC_INTERNAL);
	CHECK_EQ_U64(grpc__code_from_http(500), GRPC_UNKNOWN);
}

int main(void)
{
	RUN(frame_round_trip);
	RUN(frame_errors);
	RUN(status_and_message_lines);
	RUN(message_truncation);
	RUN(base64);
	RUN(status_with_retry_info);
	RUN(details_bin_header);
	RUN(code_mapping);
	return TEST_DONE();
}
