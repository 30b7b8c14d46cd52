/* otlp_config.h - where and how to export: command-line flags merged with the
 * standard OTEL_EXPORTER_OTLP_* environment variables, flags winning.
 *
 * Pure code: the environment is passed in (a struct env), so every
 * rule is unit-testable. Shared by `capture` and `upload`, which both accept
 * the same export flags (OTLP_CONFIG_LONGOPTS).
 */
#ifndef PROFCAP_OTLP_CONFIG_H
#define PROFCAP_OTLP_CONFIG_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "util/env.h"

enum otlp_protocol {
	OTLP_PROTOCOL_GRPC = 0,
	OTLP_PROTOCOL_HTTP_PROTOBUF,
};

/* Option ids of the export flags, above any short option character. */
enum {
	OTLP_OPT_ENDPOINT = 512,
	OTLP_OPT_PROTOCOL,
	OTLP_OPT_HEADER,
	OTLP_OPT_COMPRESSION,
	OTLP_OPT_TIMEOUT,
	OTLP_OPT_CERTIFICATE,
	OTLP_OPT_CLIENT_KEY,
	OTLP_OPT_CLIENT_CERTIFICATE,
	OTLP_OPT_INSECURE,
	OTLP_OPT_SPOOL_DIR,
};

/* getopt_long entries for the export flags, to splice into a command's table:
 *   --endpoint URL  --protocol grpc|http/protobuf  --header KEY=VALUE (repeatable)
 *   --compression gzip|none  --timeout SECONDS  --certificate FILE
 *   --client-key FILE  --client-certificate FILE  --insecure  --spool-dir DIR */
/* clang-format off */
#define OTLP_CONFIG_LONGOPTS                                                          \
	{ "endpoint", required_argument, NULL, OTLP_OPT_ENDPOINT },                   \
	{ "protocol", required_argument, NULL, OTLP_OPT_PROTOCOL },                   \
	{ "header", required_argument, NULL, OTLP_OPT_HEADER },                       \
	{ "compression", required_argument, NULL, OTLP_OPT_COMPRESSION },             \
	{ "timeout", required_argument, NULL, OTLP_OPT_TIMEOUT },                     \
	{ "certificate", required_argument, NULL, OTLP_OPT_CERTIFICATE },             \
	{ "client-key", required_argument, NULL, OTLP_OPT_CLIENT_KEY },               \
	{ "client-certificate", required_argument, NULL, OTLP_OPT_CLIENT_CERTIFICATE }, \
	{ "insecure", no_argument, NULL, OTLP_OPT_INSECURE },                         \
	{ "spool-dir", required_argument, NULL, OTLP_OPT_SPOOL_DIR }
/* clang-format on */

/* Usage lines for the export flags (for --help texts). */
extern const char otlp_config__usage[];

#define OTLP_MAX_HEADERS 64

/* Raw flag values as given on the command line (borrowed from argv). */
struct otlp_flags {
	const char *endpoint, *protocol, *compression, *timeout;
	const char *certificate, *client_key, *client_certificate, *spool_dir;
	const char *headers[OTLP_MAX_HEADERS]; /* "key=value" */
	size_t nheaders;
	bool insecure;
};

/* Record export flag @opt (an OTLP_OPT_* id) with argument @arg into @f.
 * Returns 0, -ENOENT when @opt is not an export flag, or -EINVAL (too many
 * headers) after printing one error line. Values are checked later by
 * otlp_config__resolve(). */
int otlp_config__flag(struct otlp_flags *f, int opt, const char *arg);

/* The resolved configuration; every string is owned. */
struct otlp_config {
	char *url; /* the full URL requests go to (gRPC: base URL; HTTP: the
		    * per-signal URL with /v1development/profiles appended
		    * when it came from a generic endpoint) */
	enum otlp_protocol protocol;
	bool tls; /* https */
	struct env_kv headers[OTLP_MAX_HEADERS];
	size_t nheaders;
	bool gzip;
	__u64 timeout_ms; /* total export deadline, retries included (default 10000) */
	char *ca_file;	  /* NULL: system bundle */
	char *client_cert, *client_key; /* mTLS, both or neither */
};

/* Merge @flags with the environment read through @env (flags win; the
 * _PROFILES_ variants win over the generic ones) into a new config.
 * Returns 0 with *@out set when an endpoint is configured, 0 with *@out NULL
 * when no endpoint is configured at all (no export wanted), or -EINVAL after
 * printing one error line naming the bad flag or variable and what to do.
 * Files named by certificate options must exist and be readable. Header
 * values never appear in messages. */
int otlp_config__resolve(const struct otlp_flags *flags, const struct env *env,
			 struct otlp_config **out);

/* Free @c. Accepts NULL. */
void otlp_config__free(struct otlp_config *c);

#endif
