/* test_otlp_config.c - export configuration: flags over _PROFILES_ variables
 * over generic ones, URL rules of the OTLP exporter spec, value checks,
 * header lists and their percent-decoding, and header values kept out of
 * every message. The environment is a table here, never the process's. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "export/otlp_config.h"
#include "test.h"

/* ---- a fake environment ---- */

#define ENV_MAX 16
static const char *env_names[ENV_MAX], *env_values[ENV_MAX];
static size_t env_n;

static void env_clear(void)
{
	env_n = 0;
}

static void env_set(const char *name, const char *value)
{
	env_names[env_n] = name;
	env_values[env_n] = value;
	env_n++;
}

static const char *env_get(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; i < env_n; i++)
		if (!strcmp(env_names[i], name))
			return env_values[i];
	return NULL;
}

static const struct env fake_env = {.get = env_get};

/* ---- stderr capture: what the operator would read ---- */

static char err_text[4096];
static int saved_fd = -1;
static FILE *err_file;

static void stderr_begin(void)
{
	fflush(stderr);
	err_file = tmpfile();
	saved_fd = dup(2);
	dup2(fileno(err_file), 2);
}

static const char *stderr_end(void)
{
	size_t n;

	fflush(stderr);
	dup2(saved_fd, 2);
	close(saved_fd);
	rewind(err_file);
	n = fread(err_text, 1, sizeof(err_text) - 1, err_file);
	err_text[n] = '\0';
	fclose(err_file);
	return err_text;
}

/* Resolve with @f under the fake environment; stderr goes to err_text. */
static int resolve(const struct otlp_flags *f, struct otlp_config **c)
{
	int err;

	stderr_begin();
	err = otlp_config__resolve(f, &fake_env, c);
	stderr_end();
	return err;
}

static const char *header(const struct otlp_config *c, const char *key)
{
	for (size_t i = 0; i < c->nheaders; i++)
		if (!strcasecmp(c->headers[i].key, key))
			return c->headers[i].value;
	return NULL;
}

/* ---- tests ---- */

TEST(no_endpoint_means_no_export)
{
	struct otlp_flags f = {0};
	struct otlp_config *c = (void *)1;

	env_clear();
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK(!c);
	/* --spool-dir alone is harmless; other export flags need an endpoint. */
	f.spool_dir = "/tmp";
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK(!c);
	f.compression = "gzip";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "--compression needs an endpoint"));
}

TEST(defaults)
{
	struct otlp_flags f = {0};
	struct otlp_config *c;

	env_clear();
	f.endpoint = "http://127.0.0.1:4317";
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK(c);
	CHECK_EQ_U64(c->protocol, OTLP_PROTOCOL_GRPC);
	CHECK_STR(c->url, "http://127.0.0.1:4317");
	CHECK(!c->tls);
	CHECK(!c->gzip);
	CHECK_EQ_U64(c->timeout_ms, 10000);
	CHECK_EQ_U64(c->nheaders, 0);
	CHECK(!c->ca_file && !c->client_cert && !c->client_key);
	otlp_config__free(c);
	otlp_config__free(NULL);
}

TEST(precedence)
{
	struct otlp_flags f = {0};
	struct otlp_config *c;

	env_clear();
	env_set("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:1");
	env_set("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
	env_set("OTEL_EXPORTER_OTLP_COMPRESSION", "none");
	env_set("OTEL_EXPORTER_OTLP_TIMEOUT", "1000");
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_STR(c->url, "http://generic:1");
	CHECK_EQ_U64(c->timeout_ms, 1000);
	otlp_config__free(c);

	/* _PROFILES_ variables win over the generic ones. */
	env_set("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "http://profiles:2");
	env_set("OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION", "gzip");
	env_set("OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", "2000");
	env_set("OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", "http/protobuf");
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_STR(c->url, "http://profiles:2"); /* per-signal: used as is */
	CHECK(c->gzip);
	CHECK_EQ_U64(c->timeout_ms, 2000);
	CHECK_EQ_U64(c->protocol, OTLP_PROTOCOL_HTTP_PROTOBUF);
	otlp_config__free(c);

	/* Flags win over both. */
	f.endpoint = "http://flag:3";
	f.compression = "none";
	f.timeout = "0.25";
	f.protocol = "grpc";
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_STR(c->url, "http://flag:3");
	CHECK(!c->gzip);
	CHECK_EQ_U64(c->timeout_ms, 250);
	CHECK_EQ_U64(c->protocol, OTLP_PROTOCOL_GRPC);
	otlp_config__free(c);

	/* An empty variable counts as unset. */
	env_clear();
	env_set("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "");
	env_set("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:1");
	memset(&f, 0, sizeof(f));
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_STR(c->url, "http://generic:1");
	otlp_config__free(c);
}

static int http_url(const char *flag, const char *generic, const char *per_signal, char *out,
		    size_t len)
{
	struct otlp_flags f = {0};
	struct otlp_config *c;
	int err;

	env_clear();
	env_set("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf");
	if (generic)
		env_set("OTEL_EXPORTER_OTLP_ENDPOINT", generic);
	if (per_signal)
		env_set("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", per_signal);
	f.endpoint = flag;
	err = resolve(&f, &c);
	if (err)
		return err;
	snprintf(out, len, "%s", c->url);
	otlp_config__free(c);
	return 0;
}

TEST(http_url_rules)
{
	char u[256];

	CHECK(!http_url(NULL, "http://h:4318", NULL, u, sizeof(u)));
	CHECK_STR(u, "http://h:4318/v1development/profiles");
	CHECK(!http_url(NULL, "http://h:4318/", NULL, u, sizeof(u)));
	CHECK_STR(u, "http://h:4318/v1development/profiles");
	CHECK(!http_url(NULL, "https://h:4318/otlp//", NULL, u, sizeof(u)));
	CHECK_STR(u, "https://h:4318/otlp/v1development/profiles");
	CHECK(!http_url(NULL, "http://h:4318/otlp?x=1", NULL, u, sizeof(u)));
	CHECK_STR(u, "http://h:4318/otlp/v1development/profiles?x=1");
	/* The flag is treated like the generic variable. */
	CHECK(!http_url("http://flag:4318/base/", NULL, NULL, u, sizeof(u)));
	CHECK_STR(u, "http://flag:4318/base/v1development/profiles");
	/* The per-signal variable is used as is, even without a path. */
	CHECK(!http_url(NULL, NULL, "http://h:4318/custom/path", u, sizeof(u)));
	CHECK_STR(u, "http://h:4318/custom/path");
	CHECK(!http_url(NULL, NULL, "http://h:4318", u, sizeof(u)));
	CHECK_STR(u, "http://h:4318");
	CHECK(!http_url(NULL, "http://generic:1", "http://sig:2/x", u, sizeof(u)));
	CHECK_STR(u, "http://sig:2/x");
	CHECK(!http_url("http://flag:3", "http://generic:1", "http://sig:2/x", u, sizeof(u)));
	CHECK_STR(u, "http://flag:3/v1development/profiles");
	/* Scheme case and surrounding blanks are tolerated. */
	CHECK(!http_url(" HTTP://h:1 ", NULL, NULL, u, sizeof(u)));
	CHECK_STR(u, "http://h:1/v1development/profiles");

	/* OTLP/HTTP needs a scheme; others and credentials are refused. */
	CHECK_EQ_U64(http_url("h:4318", NULL, NULL, u, sizeof(u)), -EINVAL);
	CHECK(strstr(err_text, "no scheme"));
	CHECK_EQ_U64(http_url("ftp://h:1", NULL, NULL, u, sizeof(u)), -EINVAL);
	CHECK_EQ_U64(http_url("http://", NULL, NULL, u, sizeof(u)), -EINVAL);
	CHECK_EQ_U64(http_url("http://user:pw-secret@h:1", NULL, NULL, u, sizeof(u)), -EINVAL);
	CHECK(!strstr(err_text, "pw-secret"));
	CHECK_EQ_U64(http_url("http://h: 1", NULL, NULL, u, sizeof(u)), -EINVAL);
}

TEST(grpc_url_and_insecure)
{
	struct otlp_flags f = {0};
	struct otlp_config *c;

	env_clear();
	f.endpoint = "http://h:4317/ignored/path";
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_STR(c->url, "http://h:4317");
	CHECK(!c->tls);
	otlp_config__free(c);

	/* host:port without scheme: https unless insecure. */
	f.endpoint = "collector:4317";
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_STR(c->url, "https://collector:4317");
	CHECK(c->tls);
	otlp_config__free(c);

	f.insecure = true;
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_STR(c->url, "http://collector:4317");
	CHECK(!c->tls);
	otlp_config__free(c);

	f.insecure = false;
	env_set("OTEL_EXPORTER_OTLP_INSECURE", "TRUE");
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_STR(c->url, "http://collector:4317");
	otlp_config__free(c);

	/* Insecure does not touch an explicit https:// scheme. */
	f.endpoint = "https://[::1]:4317";
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_STR(c->url, "https://[::1]:4317");
	CHECK(c->tls);
	otlp_config__free(c);

	env_clear();
	env_set("OTEL_EXPORTER_OTLP_PROFILES_INSECURE", "false");
	env_set("OTEL_EXPORTER_OTLP_INSECURE", "true");
	f.endpoint = "collector:4317";
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_STR(c->url, "https://collector:4317");
	otlp_config__free(c);

	env_clear();
	env_set("OTEL_EXPORTER_OTLP_INSECURE", "yes");
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "OTEL_EXPORTER_OTLP_INSECURE"));
}

TEST(value_checks)
{
	struct otlp_flags f = {0};
	struct otlp_config *c;

	env_clear();
	f.endpoint = "http://h:1";
	f.protocol = "http/json";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "profcap: error: --protocol: protocol http/json is not supported"));
	CHECK(!strchr(strchr(err_text, '\n') + 1, '\n')); /* one line */
	f.protocol = "grpcx";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	f.protocol = NULL;
	env_set("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json");
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "OTEL_EXPORTER_OTLP_PROTOCOL"));

	env_clear();
	f.compression = "zstd";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "gzip or none"));
	f.compression = "GZIP";
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK(c->gzip);
	otlp_config__free(c);
	f.compression = NULL;

	/* --timeout takes seconds, the variable milliseconds. */
	f.timeout = "2.5";
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_EQ_U64(c->timeout_ms, 2500);
	otlp_config__free(c);
	f.timeout = "0";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	f.timeout = "-1";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	f.timeout = "1s";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	f.timeout = "nan";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	f.timeout = NULL;
	env_set("OTEL_EXPORTER_OTLP_TIMEOUT", "1500");
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_EQ_U64(c->timeout_ms, 1500);
	otlp_config__free(c);
	env_clear();
	env_set("OTEL_EXPORTER_OTLP_TIMEOUT", "1.5");
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "milliseconds"));
	env_clear();
	env_set("OTEL_EXPORTER_OTLP_TIMEOUT", "0");
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	env_clear();
	f.endpoint = "";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
}

TEST(certificate_files)
{
	char path[] = "/tmp/profcap-test-cert-XXXXXX";
	struct otlp_flags f = {0};
	struct otlp_config *c;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	env_clear();
	f.endpoint = "https://h:1";
	f.certificate = "/nonexistent/ca.pem";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "--certificate: cannot read /nonexistent/ca.pem"));
	f.certificate = path;
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_STR(c->ca_file, path);
	otlp_config__free(c);

	/* mTLS needs both halves. */
	f.client_certificate = path;
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "--client-key"));
	f.client_certificate = NULL;
	env_set("OTEL_EXPORTER_OTLP_CLIENT_KEY", path);
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "OTEL_EXPORTER_OTLP_CLIENT_KEY"));
	env_set("OTEL_EXPORTER_OTLP_PROFILES_CLIENT_CERTIFICATE", path);
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_STR(c->client_cert, path);
	CHECK_STR(c->client_key, path);
	otlp_config__free(c);
	env_clear();
	env_set("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/env-ca.pem");
	f.certificate = NULL;
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "OTEL_EXPORTER_OTLP_CERTIFICATE"));
	unlink(path);
}

TEST(headers_merge)
{
	struct otlp_flags f = {0};
	struct otlp_config *c;

	env_clear();
	env_set("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20abc,x-tenant=t1");
	f.endpoint = "http://h:1";
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_EQ_U64(c->nheaders, 2);
	CHECK_STR(header(c, "authorization"), "Bearer abc");
	CHECK_STR(header(c, "x-tenant"), "t1");
	otlp_config__free(c);

	/* The per-signal list replaces the generic one as a whole. */
	env_set("OTEL_EXPORTER_OTLP_PROFILES_HEADERS", "x-other=2");
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_EQ_U64(c->nheaders, 1);
	CHECK_STR(header(c, "x-other"), "2");
	otlp_config__free(c);

	/* Flags override by name (case-insensitive), are not percent-decoded,
	 * and add new names. */
	f.headers[f.nheaders++] = "X-Other=literal%20";
	f.headers[f.nheaders++] = "x-new= spaced value ";
	f.headers[f.nheaders++] = "x-empty=";
	CHECK_EQ_U64(resolve(&f, &c), 0);
	CHECK_EQ_U64(c->nheaders, 3);
	CHECK_STR(header(c, "x-other"), "literal%20");
	CHECK_STR(header(c, "x-new"), "spaced value");
	CHECK_STR(header(c, "x-empty"), "");
	otlp_config__free(c);
}

TEST(header_values_never_printed)
{
	struct otlp_flags f = {0};
	struct otlp_config *c;

	env_clear();
	f.endpoint = "http://h:1";
	env_set("OTEL_EXPORTER_OTLP_HEADERS", "authorization=s3cr3t-token%zz");
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "OTEL_EXPORTER_OTLP_HEADERS"));
	CHECK(!strstr(err_text, "s3cr3t"));

	env_clear();
	env_set("OTEL_EXPORTER_OTLP_PROFILES_HEADERS", "s3cr3t-no-equals");
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "OTEL_EXPORTER_OTLP_PROFILES_HEADERS"));
	CHECK(!strstr(err_text, "s3cr3t"));

	env_clear();
	env_set("OTEL_EXPORTER_OTLP_HEADERS", "authorization=s3cr3t%0d%0aevil: 1");
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "'authorization'"));
	CHECK(!strstr(err_text, "s3cr3t"));

	env_clear();
	f.headers[f.nheaders++] = "Bearer s3cr3t";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "--header"));
	CHECK(!strstr(err_text, "s3cr3t"));
	f.headers[0] = "bad name=s3cr3t";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(!strstr(err_text, "s3cr3t"));
	f.headers[0] = "x-key=s3cr3t\r\nx: y";
	CHECK_EQ_U64(resolve(&f, &c), -EINVAL);
	CHECK(strstr(err_text, "x-key"));
	CHECK(!strstr(err_text, "s3cr3t"));
}

TEST(too_many_headers)
{
	struct otlp_flags f = {0};
	int err = 0;

	for (int i = 0; i < OTLP_MAX_HEADERS; i++)
		CHECK_EQ_U64(otlp_config__flag(&f, OTLP_OPT_HEADER, "a=b"), 0);
	stderr_begin();
	err = otlp_config__flag(&f, OTLP_OPT_HEADER, "a=b");
	stderr_end();
	CHECK_EQ_U64(err, -EINVAL);
	CHECK(strstr(err_text, "too many --header"));
	CHECK_EQ_U64(otlp_config__flag(&f, 'x', "1"), -ENOENT);
	CHECK_EQ_U64(otlp_config__flag(&f, OTLP_OPT_INSECURE, NULL), 0);
	CHECK(f.insecure);
}

TEST(kv_list_edges)
{
	struct env_kv kv[4];
	int n;

	CHECK_EQ_U64(env__parse_kv_list("", kv, 4), 0);
	n = env__parse_kv_list(" a = 1 ,b=x=y,, c=%41%2c%3D ,", kv, 4);
	CHECK_EQ_U64(n, 3);
	CHECK_STR(kv[0].key, "a");
	CHECK_STR(kv[0].value, "1");
	CHECK_STR(kv[1].key, "b");
	CHECK_STR(kv[1].value, "x=y");
	CHECK_STR(kv[2].key, "c");
	CHECK_STR(kv[2].value, "A,=");
	for (int i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	/* A repeated key: the last wins. An empty value is a value. */
	n = env__parse_kv_list("k=1,k=2,e=", kv, 4);
	CHECK_EQ_U64(n, 2);
	CHECK_STR(kv[0].value, "2");
	CHECK_STR(kv[1].value, "");
	for (int i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	n = env__parse_kv_list("service.name=api,deployment.environment=prod", kv, 4);
	CHECK_EQ_U64(n, 2);
	CHECK_STR(kv[0].key, "service.name");
	for (int i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	CHECK_EQ_U64(env__parse_kv_list("a", kv, 4), -EINVAL);
	CHECK_EQ_U64(env__parse_kv_list("=1", kv, 4), -EINVAL);
	CHECK_EQ_U64(env__parse_kv_list("a b=1", kv, 4), -EINVAL);
	CHECK_EQ_U64(env__parse_kv_list("a=1,b=%4", kv, 4), -EINVAL);
	CHECK_EQ_U64(env__parse_kv_list("a=%g1", kv, 4), -EINVAL);
	CHECK_EQ_U64(env__parse_kv_list("a=1,b=2,c=3", kv, 2), -E2BIG);
}

TEST(usage_mentions_every_flag)
{
	static const char *const flags[] = {
		"--endpoint", "--protocol",    "--header",     "--compression",
		"--timeout",  "--certificate", "--client-key", "--client-certificate",
		"--insecure", "--spool-dir",
	};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		CHECK(strstr(otlp_config__usage, flags[i]));
}

int main(void)
{
	RUN(no_endpoint_means_no_export);
	RUN(defaults);
	RUN(precedence);
	RUN(http_url_rules);
	RUN(grpc_url_and_insecure);
	RUN(value_checks);
	RUN(certificate_files);
	RUN(headers_merge);
	RUN(header_values_never_printed);
	RUN(too_many_headers);
	RUN(kv_list_edges);
	RUN(usage_mentions_every_flag);
	return TEST_DONE();
}
