/* procctx.h - read the OpenTelemetry process context (OTEP 4719) of another
 * process: the resource attributes its SDK published in a mapping named
 * OTEL_CTX.
 *
 * The mapping starts with a 32-byte header: "OTEL_CTX", version (2), payload
 * size, a publish timestamp (written last; 0 while the publisher changes it)
 * and a pointer to the payload, a protobuf ProcessContext
 * (nanopb_protos/opentelemetry/proto/processcontext/). Everything read from
 * the other process is untrusted: sizes are bounded, the payload is decoded
 * with util/wire.h (field numbers from the generated *.tags.h: no nanopb
 * code below formats/), and anything malformed is refused with an error, never half-applied.
 *
 * Pure parts (header check, payload decode) work on buffers and are fuzzed
 * (scripts/fuzz/fuzz_procctx.c); the readers take an open /proc/PID/mem fd.
 */
#ifndef PROFCAP_PROCCTX_H
#define PROFCAP_PROCCTX_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "proc/procmaps.h"

#define PROCCTX_HEADER_SIZE 32
#define PROCCTX_VERSION 2
#define PROCCTX_MAX_PAYLOAD (64u << 10) /* larger payloads are refused */
#define PROCCTX_MAX_ATTRS 64		/* attributes kept per process */
#define PROCCTX_MAX_KEY 256		/* longer keys: attribute skipped */
#define PROCCTX_MAX_VALUE 4096		/* longer values: attribute skipped */
#define PROCCTX_READ_TRIES 4		/* header/payload/header rounds */

struct procctx_header {
	__u32 version;
	__u32 payload_size;
	__u64 published_at_ns;
	__u64 payload; /* address in the publishing process */
};

/* One resource attribute; values of other types are rendered as text
 * (bool "true"/"false", int decimal, double "%.17g"); arrays, kvlists and
 * bytes are skipped. */
struct procctx_kv {
	char *key;
	char *value;
};

/* OTEP 4947's entries in ProcessContext.attributes. */
#define PROCCTX_KEY_MAP "threadlocal.attribute_key_map"
#define PROCCTX_SCHEMA "threadlocal.schema_version"
#define PROCCTX_MAX_THREAD_KEYS 256 /* key indexes are uint8 */

/* A decoded context. Owned by the caller; procctx__clear() frees it.
 * thread_keys[i] names thread-context key index i (NULL: an entry of the map
 * that is not a valid string, whose attributes are dropped like unknown
 * ones); nthread_keys is 0 when the context has no key map, or its
 * threadlocal.schema_version names a schema other than the TLS record's
 * ("tlsdesc_v1_dev", "tls_v1"; absent = assumed). */
struct procctx {
	__u64 published_at_ns;
	size_t n;
	struct procctx_kv kv[PROCCTX_MAX_ATTRS];
	size_t nthread_keys;
	char *thread_keys[PROCCTX_MAX_THREAD_KEYS];
	/* the process publishes OTEP 4947 thread context: a TLS
	 * threadlocal.schema_version, or a key map with no schema */
	bool thread_ctx;
};

/* True when maps entry @e is a process-context mapping: "[anon:OTEL_CTX]",
 * "[anon_shmem:OTEL_CTX]" or "/memfd:OTEL_CTX" (a " (deleted)" suffix is
 * already stripped by procmaps), readable and at least a header long. */
bool procctx__is_mapping(const struct procmaps_entry *e);

/* Check the @len header bytes at @buf (len >= PROCCTX_HEADER_SIZE) read from
 * a mapping [@map_start, @map_end) and fill *@out. Returns 0; -EINVAL (bad
 * signature, short buffer, NULL payload pointer, a payload that wraps or
 * starts inside the mapping but ends past it), -EPROTONOSUPPORT (version
 * not 2), -EFBIG (payload_size over PROCCTX_MAX_PAYLOAD) or -EAGAIN (timestamp
 * 0: being updated, try again). */
int procctx__parse_header(const void *buf, size_t len, __u64 map_start, __u64 map_end,
			  struct procctx_header *out);

/* Decode @len payload bytes (a ProcessContext) into *@out (zeroed first):
 * the string-convertible attributes of its resource, first of a duplicated
 * key wins, at most PROCCTX_MAX_ATTRS; and from its attributes the
 * thread-context key map (first occurrence wins, at most
 * PROCCTX_MAX_THREAD_KEYS keys of at most PROCCTX_MAX_KEY bytes). Returns 0, -EBADMSG (not a valid
 * message: truncated, bad wire type, too deep, a key or string that is not
 * UTF-8 or holds NUL) or -ENOMEM; on error *@out is left empty. */
int procctx__decode(const void *buf, size_t len, struct procctx *out);

/* Read the context of the mapping [@start, @end) through @mem_fd (an open
 * /proc/PID/mem) with the OTEP's protocol: header, payload, header again,
 * retried (PROCCTX_READ_TRIES rounds) while the timestamp is 0 or changed.
 * Returns 0 with *@out filled, -EAGAIN (still changing), -EIO (memory not
 * readable, e.g. a payload pointer into unmapped memory), or an error of
 * procctx__parse_header()/procctx__decode(). */
int procctx__read(int mem_fd, __u64 start, __u64 end, struct procctx *out);

/* The current publish timestamp at @start (a cheap 32-byte read to detect
 * updates); 0 when the header is unreadable or invalid or being updated. */
__u64 procctx__published_at(int mem_fd, __u64 start, __u64 end);

/* Free the strings of @c and empty it. Accepts NULL. */
void procctx__clear(struct procctx *c);

#endif
