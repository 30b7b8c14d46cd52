/* env.h - the one owner of profcap's configuration from the environment.
 *
 * Every variable profcap reads (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
 * the Kubernetes downward-API variables, OTEL_EXPORTER_OTLP_* through
 * otlp_config, PROFCAP_SPOOL_DIR, PROFCAP_FORK_HOOK (collect/forkhook.h),
 * TMPDIR, XDG_STATE_HOME, HOME, PATH, and DEBUGINFOD_URLS,
 * DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXSIZE through
 * symbolize/debuginfod) is read through a struct env, so tests pass a table
 * instead of the process's environment. An empty variable counts as unset
 * everywhere.
 */
#ifndef PROFCAP_ENV_H
#define PROFCAP_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* A getenv: @get returns the value of @name (borrowed) or NULL. */
struct env {
	const char *(*get)(void *ctx, const char *name);
	void *ctx;
};

/* The process's own environment (getenv). Never NULL. */
const struct env *env__process(void);

/* The value of @name in @e, or NULL when unset or empty. @e may be NULL
 * (nothing is set). The string is borrowed from @e. */
const char *env__get(const struct env *e, const char *name);

/* A key=value pair; both strings owned by whoever holds the pair. */
struct env_kv {
	char *key;
	char *value;
};

/* Free the strings of @n pairs of @kv (set to NULL). */
void env__kv_free(struct env_kv *kv, size_t n);

/* RFC 9110 token (a header name, a baggage key): non-empty, token chars. */
bool env__is_token(const char *s);

/* Copy [@s, @e) into a new string *@out (owned by the caller), trimmed of
 * optional whitespace and, when @decode, percent-decoded. 0, -EINVAL (bad
 * escape) or -ENOMEM. */
int env__dup_span(const char *s, const char *e, bool decode, char **out);

/* Parse a W3C-baggage-like list "k1=v1,k2=v2" (values percent-decoded) as
 * used by OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES into @kv
 * (at most @max pairs; strings owned by the caller afterwards; a repeated
 * key keeps its last value). Returns the number of pairs, -EINVAL for a
 * malformed list, -E2BIG for more than @max pairs or -ENOMEM; on failure
 * nothing is left allocated. */
int env__parse_kv_list(const char *s, struct env_kv *kv, size_t max);

/* The resource attributes every capture is labelled with, in order:
 * service.name from OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES (a malformed
 * list is ignored with one warning, as the OpenTelemetry SDKs do), then the
 * k8s.* keys from the downward-API variables (OTEL_RESOURCE_ATTRIBUTES_POD_*
 * of the OpenTelemetry Operator first, then K8S_*, POD_*) unless already
 * named. At most @max pairs into @kv (owned by the caller: env__kv_free).
 * Returns the count (0 on allocation failure of a pair, which is skipped). */
size_t env__resource(const struct env *e, struct env_kv *kv, size_t max);

/* The spool directory: @flag (--spool-dir), else PROFCAP_SPOOL_DIR, else the
 * default: /var/spool/profcap when @root, else $XDG_STATE_HOME/profcap/spool,
 * ~/.local/state/profcap/spool, or /tmp/profcap-spool-<uid>. Into @buf;
 * 0 or -ENAMETOOLONG. */
int env__spool_dir(const struct env *e, const char *flag, bool root, unsigned int uid,
		   char *buf, size_t len);

/* Where a capture that could not be delivered is rescued: $TMPDIR, or /tmp
 * when unset. Borrowed. */
const char *env__tmpdir(const struct env *e);

#endif
