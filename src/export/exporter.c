/* exporter.c - OTLP/gRPC and OTLP/HTTP export over libcurl (see exporter.h).
 *
 * One easy handle per exporter, so retries (and further exports) reuse the
 * connection. The request body is built once per export; each attempt only
 * resets the response state and the time budget. An attempt ends in one of
 * three ways: delivered, retryable (the spec says so, or nothing reached the
 * server), or final. Whatever could have reached the server without a clear
 * answer is final: a payload is never sent twice.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <pb_decode.h>

#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb.h"

#include "export/exporter.h"
#include "export/grpc.h"
#include "util/clock.h"
#include "util/gz.h"
#include "util/log.h"
#include "export/retry.h"
#include "util/version.h"

#define PC(x) opentelemetry_proto_collector_profiles_v1development_##x

#define GRPC_PATH "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"
#define RESP_MAX (1U << 20)
#define HINT_CREDENTIALS "; check the credentials sent with --header or OTEL_EXPORTER_OTLP_HEADERS"

static const char *const system_ca_bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Alpine, Arch */
	"/etc/pki/tls/certs/ca-bundle.crt",   /* Fedora, RHEL */
	"/etc/ssl/ca-bundle.pem",	      /* openSUSE */
	"/etc/ssl/cert.pem",		      /* Alpine, macOS-like */
};

struct exporter {
	const struct otlp_config *cfg;
	CURL *curl;
	struct curl_slist *hdrs;
	char *url;
	const char *ca_file;
	struct buf body; /* the request body when it is not the payload itself */
	struct buf resp; /* the response body of the current attempt */
	struct grpc_reply grpc;
	char retry_after[64];
	char ctype[64];
	char errbuf[CURL_ERROR_SIZE];
	__u64 rnd;
	const struct clock *clock; /* the retry deadline and the backoff sleeps */
};

/* How one attempt ended. */
struct attempt {
	int err; /* 0 delivered; -EAGAIN for a retryable reply */
	bool retryable;
	__s64 delay_ms; /* delay the server asked for, -1 if none */
	char why[384];
	const char *hint; /* "; what to do", after the retry count; never NULL */
};

static bool curl_ready;

/* snprintf that truncates silently: messages are cut, never overflowed. */
static void say(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, len, fmt, ap);
	va_end(ap);
}

/* ---- response decoding ---------------------------------------------------------- */

static bool read_partial_message(pb_istream_t *s, const pb_field_t *field, void **arg)
{
	struct export_result *res = *arg;
	size_t n = s->bytes_left, keep = sizeof(res->partial_message) - 1;

	(void)field;
	if (keep > n)
		keep = n;
	if (!pb_read(s, (pb_byte_t *)res->partial_message, keep) || !pb_read(s, NULL, n - keep))
		return false;
	res->partial_message[keep] = '\0';
	return true;
}

int exporter__decode_response(const void *msg, size_t len, struct export_result *res)
{
	PC(ExportProfilesServiceResponse) m = PC(ExportProfilesServiceResponse_init_zero);
	pb_istream_t s = pb_istream_from_buffer(msg, len);

	res->rejected = 0;
	res->partial_message[0] = '\0';
	m.partial_success.error_message.funcs.decode = read_partial_message;
	m.partial_success.error_message.arg = res;
	if (!pb_decode(&s, PC(ExportProfilesServiceResponse_fields), &m)) {
		res->partial_message[0] = '\0';
		return -EBADMSG;
	}
	if (m.has_partial_success)
		res->rejected = m.partial_success.rejected_profiles;
	for (char *p = res->partial_message; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return 0;
}

/* ---- curl callbacks ------------------------------------------------------------- */

/* Copy the value of header line @p (@len bytes) named @name into @out. */
static void header_value(const char *p, size_t len, const char *name, char *out, size_t outlen)
{
	size_t nlen = strlen(name), n;

	if (len <= nlen || p[nlen] != ':' || strncasecmp(p, name, nlen))
		return;
	p += nlen + 1;
	len -= nlen + 1;
	while (len && (*p == ' ' || *p == '\t')) {
		p++;
		len--;
	}
	while (len && (p[len - 1] == '\r' || p[len - 1] == '\n' || p[len - 1] == ' '))
		len--;
	n = len < outlen - 1 ? len : outlen - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

static void reset_reply(struct exporter *e)
{
	buf__reset(&e->resp);
	grpc__reply_init(&e->grpc);
	e->retry_after[0] = '\0';
	e->ctype[0] = '\0';
}

/* Header lines of the response, then (HTTP/2) its trailers. */
static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct exporter *e = arg;
	size_t len = size * n;

	if (len >= 5 && !strncmp(p, "HTTP/", 5)) {
		/* A new response (after an interim 1xx one). */
		reset_reply(e);
		return len;
	}
	grpc__reply_header(&e->grpc, p, len);
	header_value(p, len, "retry-after", e->retry_after, sizeof(e->retry_after));
	header_value(p, len, "content-type", e->ctype, sizeof(e->ctype));
	return len;
}

/* The response body, kept up to RESP_MAX bytes (the rest is dropped). */
static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct exporter *e = arg;
	size_t len = size * n, keep = RESP_MAX - e->resp.len;

	if (keep > len)
		keep = len;
	buf__append(&e->resp, p, keep);
	return len;
}

/* ---- setup ---------------------------------------------------------------------- */

static const char *system_ca_bundle(void)
{
	for (size_t i = 0; i < sizeof(system_ca_bundles) / sizeof(system_ca_bundles[0]); i++)
		if (!access(system_ca_bundles[i], R_OK))
			return system_ca_bundles[i];
	return NULL;
}

static int add_header(struct curl_slist **list, const char *fmt, const char *a, const char *b)
{
	struct curl_slist *l;
	char *line = NULL;

	if (asprintf(&line, fmt, a, b) < 0)
		return -ENOMEM;
	l = curl_slist_append(*list, line);
	free(line);
	if (!l)
		return -ENOMEM;
	*list = l;
	return 0;
}

static int build_headers(struct exporter *e)
{
	const struct otlp_config *c = e->cfg;
	int err = 0;

	if (c->protocol == OTLP_PROTOCOL_GRPC) {
		err = add_header(&e->hdrs, "%s%s", "content-type: application/grpc", "");
		if (!err)
			err = add_header(&e->hdrs, "%s%s", "te: trailers", "");
		if (!err && c->gzip)
			err = add_header(&e->hdrs, "%s%s", "grpc-encoding: gzip", "");
		if (!err && c->gzip)
			err = add_header(&e->hdrs, "%s%s", "grpc-accept-encoding: gzip", "");
	} else {
		err = add_header(&e->hdrs, "%s%s", "Content-Type: application/x-protobuf", "");
		if (!err && c->gzip)
			err = add_header(&e->hdrs, "%s%s", "Content-Encoding: gzip", "");
		/* No "Expect: 100-continue" round trip for large bodies. */
		if (!err)
			err = add_header(&e->hdrs, "%s%s", "Expect:", "");
	}
	for (size_t i = 0; !err && i < c->nheaders; i++) {
		if (c->headers[i].value[0])
			err = add_header(&e->hdrs, "%s: %s", c->headers[i].key,
					 c->headers[i].value);
		else /* curl's syntax for a header with an empty value */
			err = add_header(&e->hdrs, "%s;%s", c->headers[i].key, "");
	}
	return err;
}

#define SETOPT(opt, val)                                             \
	do {                                                         \
		if (curl_easy_setopt(e->curl, opt, val) != CURLE_OK) \
			goto err_curl;                               \
	} while (0)

struct exporter *exporter__new(const struct otlp_config *cfg)
{
	struct exporter *e = NULL;
	int n;

	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			pr_err("cannot initialise libcurl; this is a bug, please report it");
			return NULL;
		}
		curl_ready = true;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		goto err_nomem;
	e->cfg = cfg;
	e->clock = &clock__system;
	buf__init(&e->body, 0);
	buf__init(&e->resp, RESP_MAX);
	e->rnd = (__u64)time(NULL) * 0x9e3779b97f4a7c15ULL ^ (__u64)getpid() << 32 ^
		 (__u64)(unsigned long)e;
	if (cfg->tls) {
		e->ca_file = cfg->ca_file ? cfg->ca_file : system_ca_bundle();
		if (!e->ca_file) {
			pr_err("no CA bundle found for %s (looked in /etc/ssl/certs and "
			       "/etc/pki/tls/certs); give one with --certificate or "
			       "OTEL_EXPORTER_OTLP_CERTIFICATE",
			       cfg->url);
			goto err_out;
		}
	}
	if (cfg->protocol == OTLP_PROTOCOL_GRPC)
		n = asprintf(&e->url, "%s%s", cfg->url, GRPC_PATH);
	else
		n = asprintf(&e->url, "%s", cfg->url);
	if (n < 0) {
		e->url = NULL;
		goto err_nomem;
	}
	e->curl = curl_easy_init();
	if (!e->curl || build_headers(e))
		goto err_nomem;

	SETOPT(CURLOPT_URL, e->url);
	SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
	/* CURLOPT_NOSIGNAL stays off: the resolver is threaded (no alarm()),
	 * and libcurl then keeps SIGPIPE from a closed TLS socket away. */
	SETOPT(CURLOPT_ERRORBUFFER, e->errbuf);
	SETOPT(CURLOPT_POST, 1L);
	SETOPT(CURLOPT_HTTPHEADER, e->hdrs);
	SETOPT(CURLOPT_USERAGENT, "profcap/" PROFCAP_VERSION);
	SETOPT(CURLOPT_FOLLOWLOCATION, 0L);
	SETOPT(CURLOPT_TCP_KEEPALIVE, 1L);
	SETOPT(CURLOPT_HEADERFUNCTION, on_header);
	SETOPT(CURLOPT_HEADERDATA, e);
	SETOPT(CURLOPT_WRITEFUNCTION, on_body);
	SETOPT(CURLOPT_WRITEDATA, e);
	if (cfg->protocol == OTLP_PROTOCOL_GRPC)
		SETOPT(CURLOPT_HTTP_VERSION, cfg->tls ? (long)CURL_HTTP_VERSION_2TLS
						      : (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
	else
		SETOPT(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	/* Reusing a prior-knowledge h2c connection needs the fix for curl
	 * issue 10634, which build.sh applies (third_party/curl/). */
	if (cfg->tls) {
		SETOPT(CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
		SETOPT(CURLOPT_SSL_VERIFYPEER, 1L);
		SETOPT(CURLOPT_SSL_VERIFYHOST, 2L);
		SETOPT(CURLOPT_CAINFO, e->ca_file);
		if (cfg->client_cert) {
			SETOPT(CURLOPT_SSLCERT, cfg->client_cert);
			SETOPT(CURLOPT_SSLCERTTYPE, "PEM");
			SETOPT(CURLOPT_SSLKEY, cfg->client_key);
			SETOPT(CURLOPT_SSLKEYTYPE, "PEM");
		}
	}
	return e;

err_curl:
	pr_err("libcurl refused an option for %s: it lacks a feature profcap needs (HTTP/2 or "
	       "TLS); rebuild with ./build.sh",
	       cfg->url);
	goto err_out;
err_nomem:
	pr_err("out of memory");
err_out:
	exporter__free(e);
	return NULL;
}

void exporter__free(struct exporter *e)
{
	if (!e)
		return;
	if (e->curl)
		curl_easy_cleanup(e->curl);
	curl_slist_free_all(e->hdrs);
	buf__release(&e->body);
	buf__release(&e->resp);
	free(e->url);
	free(e);
}

/* ---- one attempt ---------------------------------------------------------------- */

static bool contains(const char *s, const char *needle)
{
	return strcasestr(s, needle) != NULL;
}

static bool is_tls_error(CURLcode rc)
{
	switch (rc) {
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_ENGINE_INITFAILED:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_SHUTDOWN_FAILED:
	case CURLE_SSL_CLIENTCERT:
	case CURLE_USE_SSL_FAILED:
		return true;
	default:
		return false;
	}
}

static void tls_failure(CURLcode rc, const char *detail, struct attempt *a)
{
	const char *prefix = "SSL certificate problem: ", *hint;

	a->err = -EPROTO;
	if (rc == CURLE_PEER_FAILED_VERIFICATION) {
		if (contains(detail, "subject name") || contains(detail, "does not match")) {
			say(a->why, sizeof(a->why),
			    "TLS: %s; connect with a host name the endpoint's certificate is "
			    "issued for",
			    detail);
			return;
		}
		if (!strncmp(detail, prefix, strlen(prefix)))
			detail += strlen(prefix);
		say(a->why, sizeof(a->why),
		    "TLS: certificate verify failed (%s); pass the CA that signed the "
		    "endpoint's certificate with --certificate (or "
		    "OTEL_EXPORTER_OTLP_CERTIFICATE)",
		    detail);
		return;
	}
	if (rc == CURLE_SSL_CACERT_BADFILE)
		hint = "check the CA bundle given with --certificate (PEM)";
	else if (rc == CURLE_SSL_CERTPROBLEM)
		hint = "check --client-certificate and --client-key (PEM files of one pair)";
	else if (rc == CURLE_SSL_CLIENTCERT || contains(detail, "certificate required"))
		hint = "the endpoint wants a client certificate: give --client-certificate "
		       "and --client-key";
	else if (contains(detail, "wrong version number") || contains(detail, "packet length"))
		hint = "the endpoint may not speak TLS: try an http:// URL";
	else if (contains(detail, "alert") && contains(detail, "certificate"))
		hint = "the endpoint refused the client certificate: check --client-certificate "
		       "and --client-key";
	else
		hint = "check that the endpoint speaks TLS 1.2 or 1.3 on this port";
	say(a->why, sizeof(a->why), "TLS: %s; %s", detail, hint);
}

/* What to try after a connection broke mid-request: with TLS the usual
 * cause is a refused (or missing) client certificate, which TLS 1.3 only
 * reports after the handshake; otherwise a protocol mismatch. */
static const char *broken_hint(const struct otlp_config *c, const char *detail)
{
	bool grpc = c->protocol == OTLP_PROTOCOL_GRPC;

	if (c->tls && c->client_cert)
		return "; check that the endpoint accepts the client certificate "
		       "(--client-certificate)";
	if (c->tls || contains(detail, "certificate") || contains(detail, "alert"))
		return grpc ? "; if the endpoint wants a client certificate, give "
			      "--client-certificate and --client-key; if it is an OTLP/HTTP "
			      "endpoint, use --protocol http/protobuf"
			    : "; if the endpoint wants a client certificate, give "
			      "--client-certificate and --client-key; if it is an OTLP/gRPC "
			      "endpoint, use --protocol grpc";
	return grpc ? "; if it is an OTLP/HTTP endpoint, use --protocol http/protobuf"
		    : "; if it is an OTLP/gRPC endpoint, use --protocol grpc";
}

static void curl_failure(struct exporter *e, CURLcode rc, __u64 budget_ms, struct attempt *a)
{
	const char *detail = e->errbuf[0] ? e->errbuf : curl_easy_strerror(rc);
	bool grpc = e->cfg->protocol == OTLP_PROTOCOL_GRPC;
	long oserr = 0;

	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		/* Nothing was sent: safe to try again. */
		a->err = -EHOSTUNREACH;
		a->retryable = true;
		a->hint = "; check the host name of the endpoint";
		say(a->why, sizeof(a->why), "cannot resolve the host (%s)", detail);
		return;
	case CURLE_COULDNT_CONNECT:
		a->retryable = true;
		curl_easy_getinfo(e->curl, CURLINFO_OS_ERRNO, &oserr);
		if (oserr == ECONNREFUSED || !oserr) {
			a->err = -ECONNREFUSED;
			say(a->why, sizeof(a->why), "connection refused");
		} else {
			a->err = -(int)oserr;
			say(a->why, sizeof(a->why), "cannot connect: %s", strerror((int)oserr));
		}
		return;
	case CURLE_OPERATION_TIMEDOUT:
		a->err = -ETIMEDOUT;
		say(a->why, sizeof(a->why),
		    "no answer within the %.1f s left of the deadline (%s); raise --timeout",
		    budget_ms / 1000.0, detail);
		return;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_PARTIAL_FILE:
		a->err = -ECONNRESET;
		a->hint = broken_hint(e->cfg, detail);
		say(a->why, sizeof(a->why),
		    "the connection broke after the request went out (%s); not retried so "
		    "the endpoint never gets the capture twice",
		    detail);
		return;
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_WEIRD_SERVER_REPLY:
		a->err = -EPROTO;
		say(a->why, sizeof(a->why), "unexpected reply (%s)%s", detail,
		    grpc ? "; if it is an OTLP/HTTP endpoint, use --protocol http/protobuf"
			 : "; if it is an OTLP/gRPC endpoint, use --protocol grpc");
		return;
	default:
		if (is_tls_error(rc)) {
			tls_failure(rc, detail, a);
			return;
		}
		a->err = -EIO;
		say(a->why, sizeof(a->why), "%s", detail);
		return;
	}
}

static void decode_grpc_body(struct exporter *e, struct export_result *res)
{
	const unsigned char *msg;
	struct buf plain;
	bool compressed;
	size_t n;

	if (grpc__parse_frame(e->resp.data, e->resp.len, &compressed, &msg, &n))
		return;
	if (!compressed) {
		exporter__decode_response(msg, n, res);
		return;
	}
	if (!e->grpc.gzip)
		return;
	buf__init(&plain, RESP_MAX);
	if (!gz__decompress(msg, n, &plain))
		exporter__decode_response(plain.data, plain.len, res);
	buf__release(&plain);
}

static void grpc_outcome(struct exporter *e, long http, struct attempt *a,
			 struct export_result *res)
{
	int code = e->grpc.status;
	const char *hint = "";
	long ver = 0;

	curl_easy_getinfo(e->curl, CURLINFO_HTTP_VERSION, &ver);
	if (ver != CURL_HTTP_VERSION_2_0) {
		a->err = -EPROTO;
		say(a->why, sizeof(a->why),
		    "the endpoint answered over HTTP/1 (HTTP %ld) but gRPC needs HTTP/2; for "
		    "an OTLP/HTTP endpoint use --protocol http/protobuf",
		    http);
		return;
	}
	if (code < 0) {
		if (http == 200) {
			a->err = -EPROTO;
			say(a->why, sizeof(a->why),
			    "the reply has no grpc-status; is it a gRPC endpoint? for OTLP/HTTP "
			    "use --protocol http/protobuf");
			return;
		}
		/* A proxy or a non-gRPC server: gRPC's HTTP status mapping. */
		code = grpc__code_from_http(http);
	}
	res->grpc_status = code;
	if (code == GRPC_OK) {
		decode_grpc_body(e, res);
		a->err = 0;
		return;
	}
	a->retryable = retry__grpc_retryable(code, e->grpc.retry_delay_ms >= 0);
	a->delay_ms = e->grpc.retry_delay_ms;
	a->err = a->retryable ? -EAGAIN : -EBADMSG;
	if (code == GRPC_UNIMPLEMENTED)
		hint = "; the endpoint does not serve OTLP profiles (enable a profiles pipeline, "
		       "or check --protocol)";
	else if (code == GRPC_UNAUTHENTICATED || code == GRPC_PERMISSION_DENIED)
		hint = HINT_CREDENTIALS;
	else if (code == GRPC_RESOURCE_EXHAUSTED && !a->retryable)
		hint = "; not retried: the endpoint sent no RetryInfo";
	if (e->grpc.status < 0)
		say(a->why, sizeof(a->why), "HTTP %ld without grpc-status (gRPC %s)%s", http,
		    grpc__code_name(code), hint);
	else
		say(a->why, sizeof(a->why), "gRPC status %d %s%s%s%s", code, grpc__code_name(code),
		    e->grpc.message[0] ? ": " : "", e->grpc.message, hint);
}

/* The readable part of an error body: google.rpc.Status or short text. */
static void error_body_message(struct exporter *e, char *msg, size_t len)
{
	__s64 delay;
	size_t n;
	int code;

	msg[0] = '\0';
	if (!e->resp.len)
		return;
	if (!strncasecmp(e->ctype, "application/x-protobuf", 22) ||
	    !strncasecmp(e->ctype, "application/protobuf", 20)) {
		if (grpc__decode_status(e->resp.data, e->resp.len, &code, msg, len, &delay))
			msg[0] = '\0';
		return;
	}
	if (strncasecmp(e->ctype, "text/", 5) && strncasecmp(e->ctype, "application/json", 16))
		return;
	n = e->resp.len < len - 1 ? e->resp.len : len - 1;
	if (n > 200)
		n = 200;
	memcpy(msg, e->resp.data, n);
	msg[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
			msg[i] = ' ';
	while (n && msg[n - 1] == ' ')
		msg[--n] = '\0';
}

static void http_outcome(struct exporter *e, long http, struct attempt *a,
			 struct export_result *res)
{
	const char *hint = "";
	char msg[224];
	__u64 ms;

	if (http >= 200 && http < 300) {
		if (e->resp.len)
			exporter__decode_response(e->resp.data, e->resp.len, res);
		a->err = 0;
		return;
	}
	error_body_message(e, msg, sizeof(msg));
	a->retryable = retry__http_retryable(http);
	if (a->retryable && e->retry_after[0] &&
	    !retry__parse_retry_after(e->retry_after, time(NULL), &ms))
		a->delay_ms = (__s64)ms;
	a->err = a->retryable ? -EAGAIN : http ? -EBADMSG : -EPROTO;
	if (http >= 300 && http < 400)
		hint = "; redirects are not followed: use the URL the endpoint points to";
	else if (http == 401 || http == 403)
		hint = HINT_CREDENTIALS;
	else if (http == 404)
		hint = "; check the URL path (/v1development/profiles is appended to --endpoint "
		       "and OTEL_EXPORTER_OTLP_ENDPOINT; OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT "
		       "is used as is)";
	else if (http == 413)
		hint = "; the capture is larger than the endpoint accepts (try --compression "
		       "gzip or raise the endpoint's limit)";
	else if (http == 415)
		hint = "; the endpoint does not take application/x-protobuf";
	say(a->why, sizeof(a->why), "HTTP %ld%s%s%s", http, msg[0] ? ": " : "", msg, hint);
}

static void attempt(struct exporter *e, __u64 budget_ms, struct attempt *a,
		    struct export_result *res)
{
	long http = 0;
	CURLcode rc;

	memset(a, 0, sizeof(*a));
	a->delay_ms = -1;
	a->hint = "";
	reset_reply(e);
	e->errbuf[0] = '\0';
	curl_easy_setopt(e->curl, CURLOPT_TIMEOUT_MS, (long)budget_ms);
	curl_easy_setopt(e->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)budget_ms);
	rc = curl_easy_perform(e->curl);
	curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &http);
	res->http_status = http;
	if (rc != CURLE_OK)
		curl_failure(e, rc, budget_ms, a);
	else if (e->cfg->protocol == OTLP_PROTOCOL_GRPC)
		grpc_outcome(e, http, a, res);
	else
		http_outcome(e, http, a, res);
}

/* ---- export --------------------------------------------------------------------- */

static __u64 now_ms(const struct exporter *e)
{
	return e->clock->now_ns(e->clock->ctx) / 1000000;
}

static void sleep_ms(const struct exporter *e, __u64 ms)
{
	e->clock->sleep_ns(e->clock->ctx, ms * 1000000);
}

static __u32 next_random(struct exporter *e)
{
	/* xorshift64: jitter only, not security. */
	e->rnd ^= e->rnd << 13;
	e->rnd ^= e->rnd >> 7;
	e->rnd ^= e->rnd << 17;
	return (__u32)(e->rnd >> 32);
}

/* Build the request body once: the payload as is, gzip-compressed, and for
 * gRPC inside a length-prefixed frame. */
static int build_body(struct exporter *e, const void *payload, size_t len, const void **body,
		      size_t *blen)
{
	bool grpc = e->cfg->protocol == OTLP_PROTOCOL_GRPC;
	unsigned char hdr[GRPC_FRAME_HEADER] = {0};
	int err;

	if (!grpc && !e->cfg->gzip) {
		*body = payload;
		*blen = len;
		return 0;
	}
	buf__release(&e->body);
	buf__init(&e->body, len + len / 8 + 65536);
	if (grpc) {
		err = buf__append(&e->body, hdr, sizeof(hdr));
		if (err)
			return err;
	}
	err = e->cfg->gzip ? gz__compress(payload, len, &e->body)
			   : buf__append(&e->body, payload, len);
	if (err)
		return err;
	if (grpc) {
		err = grpc__frame_header(e->body.data, e->cfg->gzip,
					 e->body.len - GRPC_FRAME_HEADER);
		if (err)
			return err;
	}
	*body = e->body.data;
	*blen = e->body.len;
	return 0;
}

static void finish(const struct exporter *e, struct export_result *res, __u64 t0)
{
	res->seconds = (now_ms(e) - t0) / 1000.0;
}

void exporter__set_clock(struct exporter *e, const struct clock *c)
{
	e->clock = c ? c : &clock__system;
}

int exporter__export(struct exporter *e, const void *payload, size_t len, struct export_result *res)
{
	return exporter__export_within(e, payload, len, e->cfg->timeout_ms, res);
}

int exporter__export_within(struct exporter *e, const void *payload, size_t len,
			    __u64 timeout_ms, struct export_result *res)
{
	__u64 limit = timeout_ms && timeout_ms < e->cfg->timeout_ms ? timeout_ms : e->cfg->timeout_ms;
	__u64 t0 = now_ms(e), deadline = t0 + limit, now, delay;
	const void *body = NULL;
	struct attempt a;
	size_t blen = 0;
	int err;

	memset(res, 0, sizeof(*res));
	res->grpc_status = -1;
	err = build_body(e, payload, len, &body, &blen);
	if (err) {
		say(res->error, sizeof(res->error), "cannot build the request: %s", strerror(-err));
		return err;
	}
	res->bytes_sent = blen;
	curl_easy_setopt(e->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
	curl_easy_setopt(e->curl, CURLOPT_POSTFIELDS, body);
	for (;;) {
		now = now_ms(e);
		res->attempts++;
		attempt(e, deadline > now ? deadline - now : 1, &a, res);
		if (!a.err) {
			finish(e, res, t0);
			return 0;
		}
		/* A delivered-or-not answer is never retried. */
		res->rejected = 0;
		res->partial_message[0] = '\0';
		now = now_ms(e);
		if (!a.retryable) {
			finish(e, res, t0);
			if (res->attempts == 1)
				say(res->error, sizeof(res->error), "%s%s", a.why, a.hint);
			else
				say(res->error, sizeof(res->error),
				    "%s (attempt %u, after %.1f s)%s", a.why, res->attempts,
				    res->seconds, a.hint);
			return a.err == -EAGAIN ? -EBADMSG : a.err;
		}
		delay = a.delay_ms >= 0 ? (__u64)a.delay_ms
					: retry__backoff_ms(res->attempts, next_random(e));
		if (now + delay >= deadline) {
			finish(e, res, t0);
			if (a.delay_ms >= 0)
				say(res->error, sizeof(res->error),
				    "%s after %u attempt%s in %.1f s; the endpoint asked to retry "
				    "in "
				    "%.1f s, past the %.1f s deadline (--timeout)%s",
				    a.why, res->attempts, res->attempts == 1 ? "" : "s",
				    res->seconds, delay / 1000.0, limit / 1000.0, a.hint);
			else
				say(res->error, sizeof(res->error),
				    "%s after %u attempt%s in %.1f s (another retry would pass the "
				    "%.1f s deadline, see --timeout)%s",
				    a.why, res->attempts, res->attempts == 1 ? "" : "s",
				    res->seconds, limit / 1000.0, a.hint);
			return a.err == -EAGAIN ? -ETIMEDOUT : a.err;
		}
		sleep_ms(e, delay);
	}
}
