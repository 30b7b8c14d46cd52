/* env.c - configuration from the environment (see env.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/env.h"
#include "util/log.h"
#include "util/scan.h"

static const char *process_get(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

static const struct env process_env = {.get = process_get};

const struct env *env__process(void)
{
	return &process_env;
}

const char *env__get(const struct env *e, const char *name)
{
	const char *v = e && e->get ? e->get(e->ctx, name) : NULL;

	return v && *v ? v : NULL;
}

void env__kv_free(struct env_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
		kv[i].key = kv[i].value = NULL;
	}
}

/* RFC 9110 token characters. */
static int is_tchar(int c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

bool env__is_token(const char *s)
{
	return scan__all(s, is_tchar);
}

int env__dup_span(const char *s, const char *e, bool decode, char **out)
{
	int hi, lo;
	char *o;

	while (s < e && is_ows(*s))
		s++;
	while (e > s && is_ows(e[-1]))
		e--;
	*out = malloc((size_t)(e - s) + 1);
	if (!*out)
		return -ENOMEM;
	for (o = *out; s < e; s++) {
		if (!decode || *s != '%') {
			*o++ = *s;
			continue;
		}
		if (e - s < 3 || (hi = scan__hex_digit(s[1])) < 0 ||
		    (lo = scan__hex_digit(s[2])) < 0) {
			free(*out);
			*out = NULL;
			return -EINVAL;
		}
		*o++ = (char)(hi << 4 | lo);
		s += 2;
	}
	*o = '\0';
	return 0;
}

/* Take pair (@key, @value) into @kv (@n used of @max); a repeated key keeps
 * the last value. 0 or -E2BIG (nothing taken). */
static int kv_put(struct env_kv *kv, size_t *n, size_t max, char *key, char *value)
{
	size_t i;

	for (i = 0; i < *n && strcmp(kv[i].key, key); i++)
		;
	if (i < *n) {
		free(kv[i].value);
		free(key);
		kv[i].value = value;
		return 0;
	}
	if (*n == max)
		return -E2BIG;
	kv[*n].key = key;
	kv[*n].value = value;
	(*n)++;
	return 0;
}

int env__parse_kv_list(const char *s, struct env_kv *kv, size_t max)
{
	const char *item, *end, *eq;
	char *key = NULL, *value = NULL;
	size_t n = 0;
	int err;

	for (item = s; item && *item; item = *end ? end + 1 : end) {
		end = strchr(item, ',');
		if (!end)
			end = item + strlen(item);
		eq = memchr(item, '=', (size_t)(end - item));
		if (!eq) {
			/* Empty members ("a=1,,b=2", a trailing comma) are tolerated. */
			while (item < end && is_ows(*item))
				item++;
			if (item == end)
				continue;
			err = -EINVAL;
			goto err_out;
		}
		err = env__dup_span(item, eq, false, &key);
		if (!err)
			err = env__dup_span(eq + 1, end, true, &value);
		if (!err && !env__is_token(key))
			err = -EINVAL;
		if (!err)
			err = kv_put(kv, &n, max, key, value);
		if (err)
			goto err_out;
		key = value = NULL;
	}
	return (int)n;

err_out:
	free(key);
	free(value);
	env__kv_free(kv, n);
	return err;
}

/* Kubernetes downward-API variables, as a sidecar's pod spec sets them
 * (fieldRef: metadata.name, ...): the semconv key and the variable names
 * used for it, the OpenTelemetry Operator's first. */
static const struct {
	const char *key;
	const char *vars[3];
} k8s_env[] = {
	{"k8s.pod.name", {"OTEL_RESOURCE_ATTRIBUTES_POD_NAME", "K8S_POD_NAME", "POD_NAME"}},
	{"k8s.pod.uid", {"OTEL_RESOURCE_ATTRIBUTES_POD_UID", "K8S_POD_UID", "POD_UID"}},
	{"k8s.namespace.name", {"K8S_NAMESPACE_NAME", "POD_NAMESPACE", NULL}},
	{"k8s.node.name", {"OTEL_RESOURCE_ATTRIBUTES_NODE_NAME", "K8S_NODE_NAME", NULL}},
	{"k8s.container.name", {"K8S_CONTAINER_NAME", NULL, NULL}},
};

/* Append a copy of (@key, @value) to @kv unless @key is there already. */
static void add_pair(struct env_kv *kv, size_t *n, size_t max, const char *key, const char *value)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp(kv[i].key, key))
			return;
	if (*n == max)
		return;
	kv[*n].key = strdup(key);
	kv[*n].value = strdup(value);
	if (!kv[*n].key || !kv[*n].value) {
		env__kv_free(kv + *n, 1);
		return;
	}
	(*n)++;
}

size_t env__resource(const struct env *e, struct env_kv *kv, size_t max)
{
	const char *svc = env__get(e, "OTEL_SERVICE_NAME");
	const char *list = env__get(e, "OTEL_RESOURCE_ATTRIBUTES");
	const char *val;
	size_t n = 0, i, j;
	int r;

	if (svc)
		add_pair(kv, &n, max, "service.name", svc);
	if (list) {
		r = env__parse_kv_list(list, kv + n, max - n);
		if (r < 0)
			pr_warn("ignoring OTEL_RESOURCE_ATTRIBUTES: expected key=value,key=value "
				"with percent-encoded values");
		else
			n += (size_t)r;
	}
	/* OTEL_RESOURCE_ATTRIBUTES wins when it names the same key. */
	for (i = 0; i < sizeof(k8s_env) / sizeof(k8s_env[0]); i++) {
		for (j = 0, val = NULL; j < 3 && k8s_env[i].vars[j] && !val; j++)
			val = env__get(e, k8s_env[i].vars[j]);
		if (val)
			add_pair(kv, &n, max, k8s_env[i].key, val);
	}
	return n;
}

int env__spool_dir(const struct env *e, const char *flag, bool root, unsigned int uid,
		   char *buf, size_t len)
{
	const char *v = flag && *flag ? flag : env__get(e, "PROFCAP_SPOOL_DIR");
	const char *xdg = env__get(e, "XDG_STATE_HOME"), *home = env__get(e, "HOME");
	int n;

	if (v)
		n = snprintf(buf, len, "%s", v);
	else if (root)
		n = snprintf(buf, len, "/var/spool/profcap");
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/profcap/spool", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.local/state/profcap/spool", home);
	else
		n = snprintf(buf, len, "/tmp/profcap-spool-%u", uid);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const char *env__tmpdir(const struct env *e)
{
	const char *v = env__get(e, "TMPDIR");

	return v ? v : "/tmp";
}
