/* test_env.c - configuration from the environment: resource attributes
 * (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, k8s downward API), the
 * spool directory and TMPDIR, all read through an injected table. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/env.h"
#include "test.h"

struct table {
	const char *kv[32];
};

static const char *table_get(void *ctx, const char *name)
{
	const struct table *t = ctx;

	for (size_t i = 0; t->kv[i]; i += 2)
		if (!strcmp(t->kv[i], name))
			return t->kv[i + 1];
	return NULL;
}

#define ENV(...)                                                                \
	(&(struct env){.get = table_get,                                        \
		       .ctx = &(struct table){.kv = {__VA_ARGS__, NULL}}})

static const char *value(const struct env_kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key))
			return kv[i].value;
	return NULL;
}

TEST(get_treats_empty_as_unset)
{
	const struct env *e = ENV("A", "1", "B", "");

	CHECK_STR(env__get(e, "A"), "1");
	CHECK(!env__get(e, "B"));
	CHECK(!env__get(e, "C"));
	CHECK(!env__get(NULL, "A"));
}

TEST(resource_service_list_and_k8s)
{
	struct env_kv kv[16] = {{0}};
	size_t n;

	n = env__resource(ENV("OTEL_SERVICE_NAME", "checkout", "OTEL_RESOURCE_ATTRIBUTES",
			      "team=core,region=eu%2Dwest,k8s.pod.name=from-list",
			      "OTEL_RESOURCE_ATTRIBUTES_POD_NAME", "op-pod", "POD_NAME", "plain",
			      "POD_NAMESPACE", "ns1", "K8S_NODE_NAME", "node7", "POD_UID", ""),
			  kv, 16);
	CHECK_EQ_U64(n, 6);
	CHECK_STR(kv[0].key, "service.name");
	CHECK_STR(kv[0].value, "checkout");
	CHECK_STR(value(kv, n, "region"), "eu-west");
	/* The list wins over the downward-API variables. */
	CHECK_STR(value(kv, n, "k8s.pod.name"), "from-list");
	CHECK_STR(value(kv, n, "k8s.namespace.name"), "ns1");
	CHECK_STR(value(kv, n, "k8s.node.name"), "node7");
	CHECK(!value(kv, n, "k8s.pod.uid"));
	env__kv_free(kv, n);

	/* The Operator's variable before K8S_* and POD_*. */
	n = env__resource(ENV("POD_NAME", "plain", "OTEL_RESOURCE_ATTRIBUTES_POD_NAME", "op"), kv,
			  16);
	CHECK_EQ_U64(n, 1);
	CHECK_STR(value(kv, n, "k8s.pod.name"), "op");
	env__kv_free(kv, n);
}

TEST(resource_malformed_list_is_ignored)
{
	struct env_kv kv[4] = {{0}};
	size_t n;

	n = env__resource(ENV("OTEL_RESOURCE_ATTRIBUTES", "novalue", "OTEL_SERVICE_NAME", "s"),
			  kv, 4);
	CHECK_EQ_U64(n, 1);
	CHECK_STR(kv[0].value, "s");
	env__kv_free(kv, n);
	CHECK_EQ_U64(env__resource(ENV("X", "1"), kv, 4), 0);
}

TEST(resource_respects_the_cap)
{
	struct env_kv kv[2] = {{0}};
	size_t n;

	n = env__resource(ENV("OTEL_SERVICE_NAME", "s", "OTEL_RESOURCE_ATTRIBUTES", "a=1",
			      "K8S_CONTAINER_NAME", "c"),
			  kv, 2);
	CHECK_EQ_U64(n, 2);
	env__kv_free(kv, n);
}

TEST(spool_dir_order)
{
	char buf[256], tiny[8];

	CHECK_EQ_U64(env__spool_dir(ENV("PROFCAP_SPOOL_DIR", "/e"), "/flag", true, 0, buf,
				    sizeof(buf)),
		     0);
	CHECK_STR(buf, "/flag");
	CHECK_EQ_U64(env__spool_dir(ENV("PROFCAP_SPOOL_DIR", "/e"), NULL, true, 0, buf,
				    sizeof(buf)),
		     0);
	CHECK_STR(buf, "/e");
	CHECK_EQ_U64(env__spool_dir(ENV("HOME", "/home/u"), NULL, true, 0, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "/var/spool/profcap");
	CHECK_EQ_U64(env__spool_dir(ENV("HOME", "/home/u", "XDG_STATE_HOME", "/x"), NULL, false,
				    5, buf, sizeof(buf)),
		     0);
	CHECK_STR(buf, "/x/profcap/spool");
	CHECK_EQ_U64(env__spool_dir(ENV("HOME", "/home/u", "XDG_STATE_HOME", "rel"), NULL, false,
				    5, buf, sizeof(buf)),
		     0);
	CHECK_STR(buf, "/home/u/.local/state/profcap/spool");
	CHECK_EQ_U64(env__spool_dir(ENV("HOME", ""), NULL, false, 5, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "/tmp/profcap-spool-5");
	CHECK_EQ_U64(env__spool_dir(ENV("X", "1"), NULL, true, 0, tiny, sizeof(tiny)),
		     -ENAMETOOLONG);
}

TEST(tmpdir)
{
	CHECK_STR(env__tmpdir(ENV("TMPDIR", "/t")), "/t");
	CHECK_STR(env__tmpdir(ENV("TMPDIR", "")), "/tmp");
	CHECK_STR(env__tmpdir(ENV("X", "1")), "/tmp");
}

int main(void)
{
	RUN(get_treats_empty_as_unset);
	RUN(resource_service_list_and_k8s);
	RUN(resource_malformed_list_is_ignored);
	RUN(resource_respects_the_cap);
	RUN(spool_dir_order);
	RUN(tmpdir);
	return TEST_DONE();
}
