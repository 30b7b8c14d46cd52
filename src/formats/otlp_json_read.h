/* otlp_json_read.h - OTLP/JSON Profiles in, protobuf wire format out.
 *
 * Transcodes one OTLP/JSON ProfilesData or ExportProfilesServiceRequest
 * document (what otlp_json.c writes, and what other OTLP tools write) to
 * the protobuf encoding of the same message, which otlp_read then parses:
 * one reader of the model's semantics, two syntaxes.
 *
 * Accepted, per the protobuf JSON mapping and OTLP's exceptions to it:
 * field names in lowerCamelCase or as in the .proto (snake_case); 64-bit
 * integers as strings or numbers, 32-bit ones as numbers or strings;
 * traceId, spanId and profileId as hex (base64 also taken); other bytes as
 * base64 (standard or URL-safe, padded or not); null for a default value.
 * Unknown fields are skipped (forward compatibility), as OTLP receivers do.
 * Repeated numbers are written packed.
 *
 * Bounded: nesting deeper than OTLP_JSON_MAX_DEPTH objects/arrays is an
 * error, the output stops at the caller's cap. Malformed input is an error
 * naming what and where (byte offset), never a crash. Pure code.
 */
#ifndef PROFCAP_OTLP_JSON_READ_H
#define PROFCAP_OTLP_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

#define OTLP_JSON_MAX_DEPTH 64

/* True when the first byte that is not white space is '{'. */
bool otlp_json_read__looks_like(const void *data, size_t len);

/* Append the protobuf encoding of the JSON document at @json (@len bytes)
 * to @out (caller owned; its cap bounds the output). 0, -EBADMSG with a
 * message in @err (@errlen bytes, may be 0), -E2BIG past @out's cap or
 * -ENOMEM. On failure @out's contents are unspecified. */
int otlp_json_read__transcode(const char *json, size_t len, struct buf *out, char *err,
			      size_t errlen);

#endif
