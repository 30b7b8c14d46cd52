/* otlp.h - serialize the profile model as OTLP Profiles (v1development).
 *
 * Produces one ProfilesData message, whose bytes are also a valid
 * ExportProfilesServiceRequest (same fields, same numbers): one shared
 * ProfilesDictionary holding the model's tables index for index, and one
 * ResourceProfiles per process with a single Profile of its samples. Encoded
 * with nanopb from the project's own .proto files (nanopb_protos/).
 *
 * Pure code: no I/O, no logging; callers report errors.
 */
#ifndef PROFCAP_OTLP_H
#define PROFCAP_OTLP_H

#include "util/buf.h"

struct profile;

/* Encode @p as one serialized ProfilesData and append it to @out. The caller
 * owns @out; its hard cap bounds the encoded size. @p is only read and must
 * stay unchanged during the call. On failure @out keeps its previous length.
 * Returns 0, -E2BIG (output past @out's cap), -ENOMEM, or -EIO (nanopb
 * refused the data, a bug). */
int otlp__encode(const struct profile *p, struct buf *out);

#endif
