/* otlp_read.h - read OTLP Profiles back into the profile model.
 *
 * Accepts one serialized ProfilesData or ExportProfilesServiceRequest (the
 * same wire format), gzip-compressed or not, written by profcap or any other
 * tool, as protobuf or as OTLP/JSON (transcoded to protobuf first, see
 * otlp_json_read.h). Parsing is done on the wire format with util/wire.h
 * and bounds-checks every length and index: malformed input is an error with
 * a message naming what is wrong, never a crash. Pure code.
 */
#ifndef PROFCAP_OTLP_READ_H
#define PROFCAP_OTLP_READ_H

#include <stddef.h>

#include "util/buf.h"

struct profile;

/* Largest input accepted (after decompression). */
#define OTLP_READ_MAX_BYTES (1ull << 30)

/* Parse @len bytes at @data into a new profile (*@out, freed by the caller
 * with profile__free()). Every resource becomes a process (process.pid,
 * process.executable.*, process.command_line; resources without a pid get
 * a synthetic negative one), samples keep their stack, thread.id and
 * thread.name; a sample's value is its first value, or its number of
 * timestamps when it has no values. Value types, period, time and duration
 * come from the first profile. Returns 0, -EBADMSG with @err (if not NULL,
 * @errlen bytes) describing the problem, -E2BIG or -ENOMEM. */
int otlp_read__parse(const void *data, size_t len, struct profile **out, char *err, size_t errlen);

/* Point *@data, *@len at the binary OTLP of a capture in any of the forms
 * the readers take: as it is, gzip'd (inflated into @plain) or OTLP/JSON
 * (transcoded into @wire); @plain and @wire are initialised by the caller,
 * who releases them. 0, or -errno with a phrase in @why (@whylen bytes). */
int otlp_read__wire(const void **data, size_t *len, size_t max_bytes, struct buf *plain,
		    struct buf *wire, char *why, size_t whylen);

/* Same as otlp_read__parse() with a cap of @max_bytes on the input (after
 * decompression) instead of OTLP_READ_MAX_BYTES: a gzip bomb stops there with
 * -E2BIG. For tests and fuzzing, which cannot afford a 1 GiB buffer. */
int otlp_read__parse_capped(const void *data, size_t len, size_t max_bytes, struct profile **out,
			    char *err, size_t errlen);

/* Read @path ("-" = standard input), gunzip when it starts with the gzip
 * magic, and parse it as above. On failure logs one line naming the file and
 * the problem and returns -errno (-EBADMSG for malformed input). */
int otlp_read__file(const char *path, struct profile **out);

#endif
