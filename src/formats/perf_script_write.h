/* perf_script_write.h - a profile as `perf script` text, in time order, as
 * speedscope, the Firefox Profiler and profcap's own perf script reader
 * import it:
 *
 *   comm pid/tid [cpu] secs.nanosecs: period event:
 *   \t    addr function (mapping)        one line per frame, leaf first
 *   (blank line)
 *
 * One record per occurrence; times are seconds since the epoch (perf prints
 * seconds since boot: readers take both as relative times). A location with
 * inlined functions reads as one line per function, innermost first. The
 * CPU ("[003]") is printed when the sample carries one; a frame without a
 * function is "[unknown]", as perf writes it. A sample
 * without times is written once per count (count-valued types) or once
 * with its value as the period, without a time, before the timed ones. The
 * event is "cpu-clock" for CPU samples, else the sample type's name. Pure
 * code.
 */
#ifndef PROFCAP_PERF_SCRIPT_WRITE_H
#define PROFCAP_PERF_SCRIPT_WRITE_H

#include "util/buf.h"

struct profile;

/* Records written for one untimed sample at most (its count beyond is
 * carried by the period field). */
#define PERF_SCRIPT_MAX_REPEAT 100000u

/* Append value type 0 of @p to @out (its cap bounds the output). On
 * failure @out keeps its previous length. 0, -E2BIG or -ENOMEM. */
int perf_script_write__encode(const struct profile *p, struct buf *out);

#endif
