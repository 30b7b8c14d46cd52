/* otlp_json.h - serialize the profile model in the OTLP/JSON encoding of
 * OTLP Profiles (v1development): the same ProfilesData that otlp.c writes,
 * as the protobuf JSON mapping with OTLP's exceptions.
 *
 * - field names in lowerCamelCase ("resourceProfiles", "stringTable");
 * - 64-bit integers (int64, uint64, fixed64) as decimal strings, 32-bit ones
 *   as numbers; no enums occur in these messages;
 * - traceId, spanId and profileId as lower-case hex strings (the OTLP spec
 *   requires hex for trace and span ids; profileId follows them, as the
 *   OpenTelemetry Collector does), every other bytes field base64;
 * - fields at their default value are omitted, except that dictionary
 *   tables keep their zero entry at index 0 ({} or "").
 * Strings are escaped for JSON; invalid UTF-8 bytes become U+FFFD.
 * Pure code: no I/O, no logging.
 */
#ifndef PROFCAP_OTLP_JSON_H
#define PROFCAP_OTLP_JSON_H

#include "util/buf.h"

struct profile;

/* Append @p as one OTLP/JSON ProfilesData document (with a final newline)
 * to @out (caller owned; its cap bounds the size). On failure @out keeps
 * its previous length. 0, -E2BIG or -ENOMEM. */
int otlp_json__encode(const struct profile *p, struct buf *out);

#endif
