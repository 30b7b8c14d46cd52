/* otlp_config.c - export flags merged with OTEL_EXPORTER_OTLP_* (see otlp_config.h).
 *
 * Every value is picked from, in order: the flag, the _PROFILES_ variable,
 * the generic variable; an empty variable counts as unset. Messages name
 * where a bad value came from, and never print a header value (nor a whole
 * header list, which holds values).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util/env.h"
#include "util/log.h"
#include "export/otlp_config.h"
#include "util/scan.h"

#define ENV_GENERIC "OTEL_EXPORTER_OTLP_"
#define ENV_PROFILES "OTEL_EXPORTER_OTLP_PROFILES_"
#define HTTP_PROFILES_PATH "/v1development/profiles"
#define MAX_TIMEOUT_MS (24ULL * 3600 * 1000)

const char otlp_config__usage[] =
	"      --endpoint URL         OTLP endpoint (gRPC: http[s]://HOST:4317; HTTP: the base\n"
	"                             URL, /v1development/profiles is appended)\n"
	"      --protocol PROTO       grpc (default) or http/protobuf\n"
	"      --header KEY=VALUE     extra request header, repeatable (e.g. authorization)\n"
	"      --compression ALG      gzip or none (default)\n"
	"      --timeout SECONDS      total export deadline, retries included (default 10)\n"
	"      --certificate FILE     CA bundle (PEM) to trust instead of the system's\n"
	"      --client-certificate FILE, --client-key FILE\n"
	"                             client certificate and key (PEM) for mutual TLS\n"
	"      --insecure             plain text for a gRPC endpoint given as HOST:PORT\n"
	"      --spool-dir DIR        where undelivered captures wait for 'profcap upload'\n"
	"                             (default /var/spool/profcap for root; PROFCAP_SPOOL_DIR)\n"
	"  Variables: OTEL_EXPORTER_OTLP_{ENDPOINT,PROTOCOL,HEADERS,COMPRESSION,TIMEOUT (ms),\n"
	"  CERTIFICATE,CLIENT_KEY,CLIENT_CERTIFICATE,INSECURE} and their _PROFILES_ variants\n"
	"  (OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT is used as is), OTEL_SERVICE_NAME,\n"
	"  OTEL_RESOURCE_ATTRIBUTES.\n";

int otlp_config__flag(struct otlp_flags *f, int opt, const char *arg)
{
	switch (opt) {
	case OTLP_OPT_ENDPOINT:
		f->endpoint = arg;
		break;
	case OTLP_OPT_PROTOCOL:
		f->protocol = arg;
		break;
	case OTLP_OPT_HEADER:
		if (f->nheaders >= OTLP_MAX_HEADERS) {
			pr_err("too many --header options (at most %d)", OTLP_MAX_HEADERS);
			return -EINVAL;
		}
		f->headers[f->nheaders++] = arg;
		break;
	case OTLP_OPT_COMPRESSION:
		f->compression = arg;
		break;
	case OTLP_OPT_TIMEOUT:
		f->timeout = arg;
		break;
	case OTLP_OPT_CERTIFICATE:
		f->certificate = arg;
		break;
	case OTLP_OPT_CLIENT_KEY:
		f->client_key = arg;
		break;
	case OTLP_OPT_CLIENT_CERTIFICATE:
		f->client_certificate = arg;
		break;
	case OTLP_OPT_INSECURE:
		f->insecure = true;
		break;
	case OTLP_OPT_SPOOL_DIR:
		f->spool_dir = arg;
		break;
	default:
		return -ENOENT;
	}
	return 0;
}

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* ---- picking values ------------------------------------------------------------- */

/* A value and where it came from ("--endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT"). */
struct pick {
	const char *val;
	char src[64];
	bool per_signal; /* from the _PROFILES_ variable */
	bool from_flag;
};

/* Flag @fval (named @flag) wins, then OTEL_EXPORTER_OTLP_PROFILES_<@suffix>,
 * then OTEL_EXPORTER_OTLP_<@suffix>. */
static void pick(struct pick *p, const struct env *env, const char *fval, const char *flag,
		 const char *suffix)
{
	char name[64];

	memset(p, 0, sizeof(*p));
	if (fval) {
		p->val = fval;
		p->from_flag = true;
		snprintf(p->src, sizeof(p->src), "%s", flag);
		return;
	}
	snprintf(name, sizeof(name), ENV_PROFILES "%s", suffix);
	p->val = env__get(env, name);
	if (p->val) {
		p->per_signal = true;
		snprintf(p->src, sizeof(p->src), "%s", name);
		return;
	}
	snprintf(name, sizeof(name), ENV_GENERIC "%s", suffix);
	p->val = env__get(env, name);
	if (p->val)
		snprintf(p->src, sizeof(p->src), "%s", name);
}

static int parse_protocol(const struct pick *p, enum otlp_protocol *out)
{
	*out = OTLP_PROTOCOL_GRPC;
	if (!p->val || !strcmp(p->val, "grpc"))
		return 0;
	if (!strcmp(p->val, "http/protobuf")) {
		*out = OTLP_PROTOCOL_HTTP_PROTOBUF;
		return 0;
	}
	if (!strcmp(p->val, "http/json"))
		pr_err("%s: protocol http/json is not supported; use grpc or http/protobuf",
		       p->src);
	else
		pr_err("%s: unknown protocol '%s'; use grpc or http/protobuf", p->src, p->val);
	return -EINVAL;
}

static int parse_compression(const struct pick *p, bool *gzip)
{
	*gzip = false;
	if (!p->val || !strcasecmp(p->val, "none"))
		return 0;
	if (!strcasecmp(p->val, "gzip")) {
		*gzip = true;
		return 0;
	}
	pr_err("%s: unknown compression '%s'; use gzip or none", p->src, p->val);
	return -EINVAL;
}

/* The flag takes seconds (decimal), the variables milliseconds (integer). */
static int parse_timeout(const struct pick *p, __u64 *ms)
{
	unsigned long long v;
	char *end;
	double d;

	*ms = 10000;
	if (!p->val)
		return 0;
	errno = 0;
	if (p->from_flag) {
		d = strtod(p->val, &end);
		if (end == p->val || *end || errno || !isfinite(d) || d <= 0 ||
		    d * 1000 > (double)MAX_TIMEOUT_MS) {
			pr_err("%s: '%s' is not a number of seconds between 0.001 and 86400",
			       p->src, p->val);
			return -EINVAL;
		}
		*ms = (__u64)llround(d * 1000);
		if (!*ms)
			*ms = 1;
		return 0;
	}
	v = strtoull(p->val, &end, 10);
	if (!isdigit((unsigned char)p->val[0]) || *end || errno || !v || v > MAX_TIMEOUT_MS) {
		pr_err("%s: '%s' is not a number of milliseconds between 1 and %llu", p->src,
		       p->val, MAX_TIMEOUT_MS);
		return -EINVAL;
	}
	*ms = v;
	return 0;
}

static int parse_insecure(const struct otlp_flags *f, const struct env *env, bool *insecure)
{
	struct pick p;

	*insecure = f->insecure;
	if (f->insecure)
		return 0;
	pick(&p, env, NULL, NULL, "INSECURE");
	if (!p.val || !strcasecmp(p.val, "false"))
		return 0;
	if (!strcasecmp(p.val, "true")) {
		*insecure = true;
		return 0;
	}
	pr_err("%s: '%s' is not a boolean; use true or false", p.src, p.val);
	return -EINVAL;
}

/* A readable file named by a certificate option, copied; NULL val gives NULL. */
static int check_file(const struct pick *p, const char *what, char **out)
{
	int fd;

	*out = NULL;
	if (!p->val)
		return 0;
	fd = open(p->val, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_err("%s: cannot read %s: %s; give a readable PEM %s", p->src, p->val,
		       strerror(errno), what);
		return -EINVAL;
	}
	close(fd);
	*out = strdup(p->val);
	return *out ? 0 : -ENOMEM;
}

/* ---- the endpoint URL ----------------------------------------------------------- */

/* Build the request URL from endpoint @p (see the OTLP exporter spec): gRPC
 * keeps scheme://host:port (a bare host:port gets https, or http when
 * @insecure); OTLP/HTTP appends /v1development/profiles to the path of a
 * generic endpoint and uses a per-signal one as is. */
static int build_url(const struct pick *p, enum otlp_protocol proto, bool insecure,
		     struct otlp_config *c)
{
	const char *s = p->val, *e, *rest, *sep, *hostend, *tail;
	const char *scheme;
	size_t plen;
	int n;

	while (is_ows(*s))
		s++;
	e = s + strlen(s);
	while (e > s && (is_ows(e[-1]) || e[-1] == '\n'))
		e--;
	for (const char *q = s; q < e; q++) {
		if (isspace((unsigned char)*q) || iscntrl((unsigned char)*q)) {
			pr_err("%s: the URL contains white space; give http(s)://HOST:PORT",
			       p->src);
			return -EINVAL;
		}
	}
	sep = strstr(s, "://");
	if (sep && sep < e) {
		if ((size_t)(sep - s) == 4 && !strncasecmp(s, "http", 4)) {
			scheme = "http";
		} else if ((size_t)(sep - s) == 5 && !strncasecmp(s, "https", 5)) {
			scheme = "https";
		} else {
			pr_err("%s: unsupported URL scheme in '%.*s'; use http:// or https://",
			       p->src, (int)(e - s), s);
			return -EINVAL;
		}
		rest = sep + 3;
	} else if (proto == OTLP_PROTOCOL_GRPC) {
		scheme = insecure ? "http" : "https";
		rest = s;
	} else {
		pr_err("%s: '%.*s' has no scheme; give http://HOST:PORT or https://HOST:PORT",
		       p->src, (int)(e - s), s);
		return -EINVAL;
	}
	hostend = rest;
	while (hostend < e && *hostend != '/' && *hostend != '?' && *hostend != '#')
		hostend++;
	if (hostend == rest) {
		pr_err("%s: no host in '%.*s'; give %s://HOST:PORT", p->src, (int)(e - s), s,
		       scheme);
		return -EINVAL;
	}
	if (memchr(rest, '@', (size_t)(hostend - rest))) {
		/* Do not echo it: it holds credentials. */
		pr_err("%s: credentials in the URL are not supported; send them with --header "
		       "or OTEL_EXPORTER_OTLP_HEADERS",
		       p->src);
		return -EINVAL;
	}
	c->tls = !strcmp(scheme, "https");
	if (proto == OTLP_PROTOCOL_GRPC) {
		n = asprintf(&c->url, "%s://%.*s", scheme, (int)(hostend - rest), rest);
	} else if (p->per_signal) {
		n = asprintf(&c->url, "%s://%.*s", scheme, (int)(e - rest), rest);
	} else {
		tail = hostend;
		while (tail < e && *tail != '?' && *tail != '#')
			tail++;
		plen = (size_t)(tail - hostend);
		while (plen && hostend[plen - 1] == '/')
			plen--;
		n = asprintf(&c->url, "%s://%.*s%.*s" HTTP_PROFILES_PATH "%.*s", scheme,
			     (int)(hostend - rest), rest, (int)plen, hostend, (int)(e - tail),
			     tail);
	}
	if (n < 0) {
		c->url = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* ---- headers -------------------------------------------------------------------- */

static bool value_ok(const char *v)
{
	for (; *v; v++)
		if (*v == '\r' || *v == '\n')
			return false;
	return true;
}

/* Set header @key to @value (both owned by @c afterwards); a name already
 * there (case-insensitive) is replaced. */
static int set_header(struct otlp_config *c, char *key, char *value)
{
	size_t i;

	for (i = 0; i < c->nheaders && strcasecmp(c->headers[i].key, key); i++)
		;
	if (i < c->nheaders) {
		free(c->headers[i].key);
		free(c->headers[i].value);
	} else if (c->nheaders == OTLP_MAX_HEADERS) {
		free(key);
		free(value);
		return -E2BIG;
	} else {
		c->nheaders++;
	}
	c->headers[i].key = key;
	c->headers[i].value = value;
	return 0;
}

static int resolve_headers(const struct otlp_flags *f, const struct env *env, struct otlp_config *c)
{
	struct env_kv kv[OTLP_MAX_HEADERS] = {0};
	const char *h, *eq;
	char *key, *value;
	struct pick p;
	int n, err;
	size_t i;

	pick(&p, env, NULL, NULL, "HEADERS");
	if (p.val) {
		n = env__parse_kv_list(p.val, kv, OTLP_MAX_HEADERS);
		if (n == -ENOMEM)
			return n;
		if (n < 0) {
			pr_err("%s is not a valid header list (contents not shown): expected "
			       "name=value,name2=value2 with percent-encoded values, at most %d",
			       p.src, OTLP_MAX_HEADERS);
			return -EINVAL;
		}
		for (i = 0; i < (size_t)n; i++) {
			if (!value_ok(kv[i].value)) {
				pr_err("%s: the value of header '%s' contains a line break; fix "
				       "the variable",
				       p.src, kv[i].key);
				env__kv_free(kv + i, (size_t)n - i);
				return -EINVAL;
			}
			err = set_header(c, kv[i].key, kv[i].value);
			kv[i].key = kv[i].value = NULL;
			if (err) {
				env__kv_free(kv + i + 1, (size_t)n - i - 1);
				return err;
			}
		}
	}
	for (i = 0; i < f->nheaders; i++) {
		h = f->headers[i];
		eq = strchr(h, '=');
		if (!eq) {
			pr_err("--header: expected NAME=VALUE (the argument has no '='; it is "
			       "not shown)");
			return -EINVAL;
		}
		key = value = NULL;
		err = env__dup_span(h, eq, false, &key);
		if (!err)
			err = env__dup_span(eq + 1, eq + 1 + strlen(eq + 1), false, &value);
		if (err) {
			free(key);
			return err;
		}
		if (!env__is_token(key) || !value_ok(value)) {
			if (env__is_token(key))
				pr_err("--header %s=...: the value contains a line break", key);
			else
				pr_err("--header: the name before '=' must be a header name "
				       "(letters, digits, '-', ...)");
			free(key);
			free(value);
			return -EINVAL;
		}
		err = set_header(c, key, value);
		if (err)
			return err;
	}
	return 0;
}

/* ---- resolve -------------------------------------------------------------------- */

/* An export flag that only makes sense with an endpoint, or NULL. */
static const char *endpoint_only_flag(const struct otlp_flags *f)
{
	if (f->protocol)
		return "--protocol";
	if (f->nheaders)
		return "--header";
	if (f->compression)
		return "--compression";
	if (f->timeout)
		return "--timeout";
	if (f->certificate)
		return "--certificate";
	if (f->client_key)
		return "--client-key";
	if (f->client_certificate)
		return "--client-certificate";
	if (f->insecure)
		return "--insecure";
	return NULL;
}

void otlp_config__free(struct otlp_config *c)
{
	if (!c)
		return;
	free(c->url);
	env__kv_free(c->headers, c->nheaders);
	free(c->ca_file);
	free(c->client_cert);
	free(c->client_key);
	free(c);
}

int otlp_config__resolve(const struct otlp_flags *flags, const struct env *env,
			 struct otlp_config **out)
{
	struct otlp_config *c = NULL;
	struct pick ep, p, key, cert;
	const char *v;
	bool insecure;
	int err;

	*out = NULL;
	pick(&ep, env, flags->endpoint, "--endpoint", "ENDPOINT");
	if (flags->endpoint && !*flags->endpoint) {
		pr_err("--endpoint needs a URL, e.g. http://127.0.0.1:4317");
		return -EINVAL;
	}
	if (!ep.val) {
		v = endpoint_only_flag(flags);
		if (!v)
			return 0;
		pr_err("%s needs an endpoint: give --endpoint URL or set "
		       "OTEL_EXPORTER_OTLP_ENDPOINT",
		       v);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		err = -ENOMEM;
		goto err_out;
	}
	pick(&p, env, flags->protocol, "--protocol", "PROTOCOL");
	err = parse_protocol(&p, &c->protocol);
	if (err)
		goto err_out;
	err = parse_insecure(flags, env, &insecure);
	if (err)
		goto err_out;
	err = build_url(&ep, c->protocol, insecure, c);
	if (err)
		goto err_out;
	pick(&p, env, flags->compression, "--compression", "COMPRESSION");
	err = parse_compression(&p, &c->gzip);
	if (err)
		goto err_out;
	pick(&p, env, flags->timeout, "--timeout", "TIMEOUT");
	err = parse_timeout(&p, &c->timeout_ms);
	if (err)
		goto err_out;
	err = resolve_headers(flags, env, c);
	if (err)
		goto err_out;
	pick(&p, env, flags->certificate, "--certificate", "CERTIFICATE");
	err = check_file(&p, "CA bundle", &c->ca_file);
	if (err)
		goto err_out;
	pick(&cert, env, flags->client_certificate, "--client-certificate", "CLIENT_CERTIFICATE");
	pick(&key, env, flags->client_key, "--client-key", "CLIENT_KEY");
	if (!cert.val != !key.val) {
		pr_err("%s is set but no client %s: mutual TLS needs both --client-certificate "
		       "and --client-key",
		       cert.val ? cert.src : key.src, cert.val ? "key" : "certificate");
		err = -EINVAL;
		goto err_out;
	}
	err = check_file(&cert, "client certificate", &c->client_cert);
	if (!err)
		err = check_file(&key, "private key", &c->client_key);
	if (err)
		goto err_out;
	if (flags->spool_dir && !*flags->spool_dir) {
		pr_err("--spool-dir needs a directory");
		err = -EINVAL;
		goto err_out;
	}
	*out = c;
	return 0;

err_out:
	if (err == -ENOMEM)
		pr_err("out of memory");
	else if (err == -E2BIG)
		pr_err("too many headers (at most %d)", OTLP_MAX_HEADERS);
	otlp_config__free(c);
	return err == -E2BIG ? -EINVAL : err;
}
