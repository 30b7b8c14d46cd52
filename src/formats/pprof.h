/* pprof.h - serialize the profile model as a gzip'd pprof profile
 * (perftools.profiles.Profile), the format of `go tool pprof`, Pyroscope
 * and speedscope.
 *
 * Encoded with nanopb from our own profile.proto (nanopb_protos/perftools/).
 * The model's dictionary maps onto pprof one to one: model mapping,
 * location and function index i is pprof id i (pprof ids are 1-based, and
 * index 0 is the model's zero entry); a location keeps all its lines (an
 * inline chain, innermost first) with their columns, a mapping its has_*
 * flags as the model states them. Sample types: the model's sample type,
 * plus ("cpu", "nanoseconds") = count x period when the model is a CPU
 * sample profile (("samples", "count") over ("cpu", "nanoseconds")). Labels:
 * "pid" (num) and "process" (executable name) from the process, "tid" (num)
 * and "thread" (name) from the sample, other sample attributes under their
 * own key (numeric ones with their unit). The meta's pprof comments, drop
 * and keep frames and default sample type go to their fields; its loss
 * counts become comments "profcap.samples.KEY=N", which pprof_read.c reads
 * back. Pure code: no I/O, no logging.
 */
#ifndef PROFCAP_PPROF_H
#define PROFCAP_PPROF_H

#include <stddef.h>
#include <linux/types.h>

#include "util/buf.h"

struct profile;

/* Encode @p as a gzip-compressed serialized perftools.profiles.Profile and
 * append it to @out (caller owned; its cap bounds the compressed size and
 * the uncompressed scratch). @p is only read. On failure @out keeps its
 * previous length. 0, -E2BIG, -ENOMEM or -EIO (nanopb or zlib failed). */
int pprof__encode(const struct profile *p, struct buf *out);

/* What @p holds that a pprof profile of its value type @type cannot:
 * host and resource attributes beyond the process labels, scope, profile
 * ids, the original payload, the other value types' profiles, mapping ids
 * other than the GNU build id, frame types other than kernel and native,
 * units of non-numeric attributes. Appends them to @out as one
 * comma-separated list, each named with its count ("service.name (3
 * resources)"), and returns how many; 0 when pprof holds everything. */
size_t pprof__unheld(const struct profile *p, __u32 type, struct buf *out);

#endif
