/* test_exporter.c - the OTLP exporter end to end over OTLP/HTTP against a
 * scripted local HTTP/1.1 server (127.0.0.1 only): retries and their count,
 * no retry on permanent errors, Retry-After against the deadline, gzip and
 * headers on the wire, partial success, connection refused, protocol and TLS
 * mismatches; and partial-success decoding from bytes built with nanopb.
 * gRPC over HTTP/2 is covered by the end-to-end tests (real grpcio server). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <pb_encode.h>

#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb.h"

#include "util/buf.h"
#include "export/exporter.h"
#include "util/clock.h"
#include "util/gz.h"
#include "httpd.h"
#include "export/otlp_config.h"
#include "test.h"

#define PC(x) opentelemetry_proto_collector_profiles_v1development_##x

static const char payload[] = "\x12\x00pretend-profiles-data-0123456789";
#define PAYLOAD_LEN (sizeof(payload) - 1)

static bool encode_str(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
	const char *str = *arg;

	return pb_encode_tag_for_field(s, f) &&
	       pb_encode_string(s, (const pb_byte_t *)str, strlen(str));
}

/* Serialize an ExportProfilesServiceResponse into @out; returns its length. */
static size_t build_response(unsigned char *out, size_t len, bool partial, __s64 rejected,
			     const char *msg)
{
	PC(ExportProfilesServiceResponse) m = PC(ExportProfilesServiceResponse_init_zero);
	pb_ostream_t s = pb_ostream_from_buffer(out, len);

	m.has_partial_success = partial;
	m.partial_success.rejected_profiles = rejected;
	if (msg) {
		m.partial_success.error_message.funcs.encode = encode_str;
		m.partial_success.error_message.arg = (void *)msg;
	}
	if (!pb_encode(&s, PC(ExportProfilesServiceResponse_fields), &m))
		return 0;
	return s.bytes_written;
}

/* A google.rpc.Status{code: 3, message: @msg}, written by hand. */
static size_t build_status(unsigned char *out, const char *msg)
{
	size_t n = strlen(msg);

	out[0] = 0x08;
	out[1] = 3;
	out[2] = 0x12;
	out[3] = (unsigned char)n;
	memcpy(out + 4, msg, n);
	return n + 4;
}

/* The exporter's clock in these tests: time moves only when the exporter
 * sleeps between attempts, so deadlines and backoffs are exact and nothing
 * waits. */
struct fake_clock {
	__u64 now_ns;
	__u64 slept_ns;
	unsigned int sleeps;
};

static __u64 fake_now(void *ctx)
{
	return ((struct fake_clock *)ctx)->now_ns;
}

static void fake_sleep(void *ctx, __u64 ns)
{
	struct fake_clock *c = ctx;

	c->now_ns += ns;
	c->slept_ns += ns;
	c->sleeps++;
}

struct setup {
	struct otlp_flags f;
	struct otlp_config *cfg;
	struct exporter *exp;
	char url[128];
	struct fake_clock time;
	struct clock clock;
};

static void setup(struct setup *s, int port, const char *scheme, const char *protocol,
		  const char *timeout)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->url, sizeof(s->url), "%s://127.0.0.1:%d", scheme, port);
	s->f.endpoint = s->url;
	s->f.protocol = protocol;
	s->f.timeout = timeout;
}

static int setup_open(struct setup *s)
{
	if (otlp_config__resolve(&s->f, NULL, &s->cfg) || !s->cfg)
		return -EINVAL;
	s->exp = exporter__new(s->cfg);
	if (!s->exp)
		return -EINVAL;
	s->time.now_ns = 1000000000ull;
	s->clock = (struct clock){fake_now, fake_sleep, &s->time};
	exporter__set_clock(s->exp, &s->clock);
	return 0;
}

static void teardown(struct setup *s)
{
	exporter__free(s->exp);
	otlp_config__free(s->cfg);
}

/* ---- pure ---- */

TEST(decode_partial_success)
{
	unsigned char b[512];
	struct export_result r;
	size_t n;

	n = build_response(b, sizeof(b), true, 3, "3 profiles too old\nsee docs");
	CHECK(n > 0);
	memset(&r, 0, sizeof(r));
	CHECK_EQ_U64(exporter__decode_response(b, n, &r), 0);
	CHECK_EQ_U64(r.rejected, 3);
	CHECK_STR(r.partial_message, "3 profiles too old see docs");

	/* A warning only: nothing rejected, a message. */
	n = build_response(b, sizeof(b), true, 0, "deprecated field");
	CHECK_EQ_U64(exporter__decode_response(b, n, &r), 0);
	CHECK_EQ_U64(r.rejected, 0);
	CHECK_STR(r.partial_message, "deprecated field");

	/* Everything accepted: an empty message. */
	CHECK_EQ_U64(exporter__decode_response("", 0, &r), 0);
	CHECK_EQ_U64(r.rejected, 0);
	CHECK_STR(r.partial_message, "");

	/* A long message is cut to fit. */
	char longmsg[600];
	memset(longmsg, 'm', sizeof(longmsg) - 1);
	longmsg[sizeof(longmsg) - 1] = '\0';
	n = build_response(b, sizeof(b), true, 1, longmsg);
	CHECK(n == 0); /* does not fit 512: build into a bigger buffer */
	unsigned char big[1024];
	n = build_response(big, sizeof(big), true, 1, longmsg);
	CHECK_EQ_U64(exporter__decode_response(big, n, &r), 0);
	CHECK_EQ_U64(strlen(r.partial_message), sizeof(r.partial_message) - 1);

	CHECK_EQ_U64(exporter__decode_response("\x0a\x05\x08", 3, &r), -EBADMSG);
}

/* ---- over the wire ---- */

TEST(http_503_503_200_delivers_once)
{
	static const struct httpd_reply script[] = {
		{503, NULL, NULL, 0},
		{503, "Retry-After: 0\r\n", NULL, 0},
		{200, "Content-Type: application/x-protobuf\r\n", NULL, 0},
	};
	struct export_result r;
	struct httpd h;
	struct setup s;

	CHECK_EQ_U64(httpd_start(&h, script, 3), 0);
	setup(&s, h.port, "http", "http/protobuf", "10");
	CHECK_EQ_U64(setup_open(&s), 0);
	CHECK_EQ_U64(exporter__export(s.exp, payload, PAYLOAD_LEN, &r), 0);
	teardown(&s);
	httpd_stop(&h);
	CHECK_EQ_U64(r.attempts, 3);
	CHECK_EQ_U64(h.nrequests, 3);
	CHECK_EQ_U64(h.nconnections, 1); /* the connection is reused */
	CHECK_EQ_U64(r.http_status, 200);
	CHECK_EQ_U64(r.bytes_sent, PAYLOAD_LEN);
	CHECK_STR(r.error, "");
	/* One backoff (500 ms +-50%), then Retry-After: 0 (no wait). */
	CHECK_EQ_U64(s.time.sleeps, 2);
	CHECK(s.time.slept_ns >= 250000000ull && s.time.slept_ns <= 750000000ull);
	CHECK(r.seconds * 1e9 > s.time.slept_ns - 1e6 && r.seconds * 1e9 < s.time.slept_ns + 1e6);
	CHECK_STR(h.path, "/v1development/profiles");
	for (int i = 0; i < 3; i++)
		CHECK(h.body_lens[i] == PAYLOAD_LEN && !memcmp(h.bodies[i], payload, PAYLOAD_LEN));
	CHECK(strstr(h.headers, "Content-Type: application/x-protobuf"));
	CHECK(!strstr(h.headers, "Content-Encoding"));
	CHECK(!strstr(h.headers, "Expect"));
	httpd_release(&h);
}

TEST(http_400_is_final)
{
	unsigned char st[64];
	struct httpd_reply script[] = {
		{400, "Content-Type: application/x-protobuf\r\n", st, build_status(st, "bad data")},
		{200, NULL, NULL, 0},
	};
	struct export_result r;
	struct httpd h;
	struct setup s;
	int err;

	CHECK_EQ_U64(httpd_start(&h, script, 2), 0);
	setup(&s, h.port, "http", "http/protobuf", NULL);
	s.f.headers[s.f.nheaders++] = "authorization=Bearer s3cr3t";
	CHECK_EQ_U64(setup_open(&s), 0);
	err = exporter__export(s.exp, payload, PAYLOAD_LEN, &r);
	teardown(&s);
	httpd_stop(&h);
	httpd_release(&h);
	CHECK_EQ_U64(err, -EBADMSG);
	CHECK_EQ_U64(r.attempts, 1);
	CHECK_EQ_U64(h.nrequests, 1);
	CHECK_EQ_U64(r.http_status, 400);
	CHECK_STR(r.error, "HTTP 400: bad data");
	CHECK(strstr(h.headers, "authorization: Bearer s3cr3t"));
}

TEST(http_404_hint_and_text_body)
{
	static const struct httpd_reply script[] = {
		{404, "Content-Type: text/plain\r\n", "no such\npath", 12},
	};
	struct export_result r;
	struct httpd h;
	struct setup s;
	int err;

	CHECK_EQ_U64(httpd_start(&h, script, 1), 0);
	setup(&s, h.port, "http", "http/protobuf", NULL);
	CHECK_EQ_U64(setup_open(&s), 0);
	err = exporter__export(s.exp, payload, PAYLOAD_LEN, &r);
	teardown(&s);
	httpd_stop(&h);
	httpd_release(&h);
	CHECK_EQ_U64(err, -EBADMSG);
	CHECK_EQ_U64(r.attempts, 1);
	CHECK(!strncmp(r.error, "HTTP 404: no such path; check the URL path", 42));
}

TEST(gzip_headers_and_partial_success)
{
	unsigned char resp[128];
	struct httpd_reply script[] = {
		{200, "Content-Type: application/x-protobuf\r\n", resp,
		 build_response(resp, sizeof(resp), true, 2, "2 profiles rejected: too old")},
	};
	struct export_result r;
	struct buf plain;
	struct httpd h;
	struct setup s;

	CHECK_EQ_U64(httpd_start(&h, script, 1), 0);
	setup(&s, h.port, "http", "http/protobuf", NULL);
	s.f.compression = "gzip";
	s.f.headers[s.f.nheaders++] = "x-scope-orgid=tenant-7";
	s.f.headers[s.f.nheaders++] = "x-empty=";
	CHECK_EQ_U64(setup_open(&s), 0);
	CHECK_EQ_U64(exporter__export(s.exp, payload, PAYLOAD_LEN, &r), 0);
	teardown(&s);
	httpd_stop(&h);
	CHECK_EQ_U64(r.attempts, 1);
	CHECK_EQ_U64(r.rejected, 2);
	CHECK_STR(r.partial_message, "2 profiles rejected: too old");
	CHECK(strstr(h.headers, "Content-Encoding: gzip"));
	CHECK(strstr(h.headers, "x-scope-orgid: tenant-7"));
	CHECK(strstr(h.headers, "x-empty:"));
	CHECK(strstr(h.headers, "User-Agent: profcap/"));
	CHECK_EQ_U64(r.bytes_sent, h.body_lens[0]);
	buf__init(&plain, 1 << 20);
	CHECK_EQ_U64(gz__decompress(h.bodies[0], h.body_lens[0], &plain), 0);
	CHECK(plain.len == PAYLOAD_LEN && !memcmp(plain.data, payload, PAYLOAD_LEN));
	buf__release(&plain);
	httpd_release(&h);
}

TEST(retry_after_past_deadline_gives_up_early)
{
	static const struct httpd_reply script[] = {
		{429, "Retry-After: 30\r\n", NULL, 0},
	};
	struct export_result r;
	struct httpd h;
	struct setup s;
	int err;

	CHECK_EQ_U64(httpd_start(&h, script, 1), 0);
	setup(&s, h.port, "http", "http/protobuf", "2");
	CHECK_EQ_U64(setup_open(&s), 0);
	err = exporter__export(s.exp, payload, PAYLOAD_LEN, &r);
	teardown(&s);
	httpd_stop(&h);
	httpd_release(&h);
	CHECK_EQ_U64(err, -ETIMEDOUT);
	CHECK_EQ_U64(r.attempts, 1);
	CHECK_EQ_U64(s.time.sleeps, 0); /* gave up at once, without waiting */
	CHECK(r.seconds == 0);
	CHECK(strstr(r.error, "HTTP 429 after 1 attempt in"));
	CHECK(strstr(r.error, "asked to retry in 30.0 s, past the 2.0 s deadline"));
}

TEST(deadline_bounds_retries)
{
	static const struct httpd_reply script[] = {{503, NULL, NULL, 0}};
	struct export_result r;
	struct httpd h;
	struct setup s;
	int err;

	CHECK_EQ_U64(httpd_start(&h, script, 1), 0);
	setup(&s, h.port, "http", "http/protobuf", "1.6");
	CHECK_EQ_U64(setup_open(&s), 0);
	err = exporter__export(s.exp, payload, PAYLOAD_LEN, &r);
	teardown(&s);
	httpd_stop(&h);
	httpd_release(&h);
	CHECK_EQ_U64(err, -ETIMEDOUT);
	CHECK(r.attempts >= 2);
	CHECK_EQ_U64(h.nrequests, r.attempts);
	CHECK_EQ_U64(s.time.sleeps, r.attempts - 1);
	CHECK(s.time.slept_ns < 1600000000ull); /* never slept past the deadline */
	CHECK(strstr(r.error, "HTTP 503 after "));
	CHECK(strstr(r.error, " attempts in "));
	CHECK(strstr(r.error, "another retry would pass the 1.6 s deadline"));
}

TEST(connection_refused_is_retried)
{
	struct export_result r;
	struct setup s;
	int err, port = httpd_closed_port();

	CHECK(port > 0);
	setup(&s, port, "http", "http/protobuf", "1.2");
	CHECK_EQ_U64(setup_open(&s), 0);
	err = exporter__export(s.exp, payload, PAYLOAD_LEN, &r);
	teardown(&s);
	CHECK_EQ_U64(err, -ECONNREFUSED);
	CHECK(r.attempts >= 2);
	CHECK_EQ_U64(s.time.sleeps, r.attempts - 1);
	CHECK(s.time.slept_ns < 1200000000ull);
	CHECK(!strncmp(r.error, "connection refused after ", 25));
	CHECK_EQ_U64(r.http_status, 0);
}

TEST(grpc_to_http1_server_is_not_retried)
{
	static const struct httpd_reply script[] = {{200, NULL, NULL, 0}};
	struct export_result r;
	struct httpd h;
	struct setup s;
	int err;

	CHECK_EQ_U64(httpd_start(&h, script, 1), 0);
	setup(&s, h.port, "http", NULL, "3");
	CHECK_EQ_U64(setup_open(&s), 0);
	err = exporter__export(s.exp, payload, PAYLOAD_LEN, &r);
	teardown(&s);
	httpd_stop(&h);
	httpd_release(&h);
	CHECK(err < 0);
	CHECK_EQ_U64(r.attempts, 1);
	CHECK(strstr(r.error, "--protocol http/protobuf"));
}

TEST(tls_to_plain_server_is_a_tls_error)
{
	static const struct httpd_reply script[] = {{400, NULL, NULL, 0}};
	char ca[] = "/tmp/profcap-test-ca-XXXXXX";
	struct export_result r;
	struct httpd h;
	struct setup s;
	int err, fd;

	/* Any PEM file will do: the handshake fails before it matters. Use the
	 * system bundle when there is one, so the CA loads. */
	fd = mkstemp(ca);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ_U64(httpd_start(&h, script, 1), 0);
	setup(&s, h.port, "https", "http/protobuf", "3");
	s.f.certificate = access("/etc/ssl/certs/ca-certificates.crt", R_OK)
				  ? ca
				  : "/etc/ssl/certs/ca-certificates.crt";
	CHECK_EQ_U64(setup_open(&s), 0);
	err = exporter__export(s.exp, payload, PAYLOAD_LEN, &r);
	teardown(&s);
	httpd_stop(&h);
	httpd_release(&h);
	unlink(ca);
	CHECK_EQ_U64(err, -EPROTO);
	CHECK_EQ_U64(r.attempts, 1);
	CHECK(!strncmp(r.error, "TLS: ", 5));
}

int main(void)
{
	/* Loopback only: no proxy from the environment may get in the way. */
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("https_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("ALL_PROXY");
	unsetenv("all_proxy");
	RUN(decode_partial_success);
	RUN(http_503_503_200_delivers_once);
	RUN(http_400_is_final);
	RUN(http_404_hint_and_text_body);
	RUN(gzip_headers_and_partial_success);
	RUN(retry_after_past_deadline_gives_up_early);
	RUN(deadline_bounds_retries);
	RUN(connection_refused_is_retried);
	RUN(grpc_to_http1_server_is_not_retried);
	RUN(tls_to_plain_server_is_a_tls_error);
	return TEST_DONE();
}
