/* folded.h - "folded stacks" text, the input of flamegraph.pl, speedscope
 * and inferno: one line per distinct stack, "comm;root;...;leaf count".
 *
 * comm is the process's executable name ("[pid N]" when unknown), so all
 * threads of a process share one tower. A frame is its function name, or
 * without one the name every reader gives it (view__place_name():
 * "libc.so.6+0x2724a", "app.py:42", "[unknown]+0x7f00", "[unknown]"). ';'
 * and line breaks inside names become '_'. A location with inlined functions reads as
 * several frames, the caller first; each inlined one carries the "_[i]"
 * suffix (as stackcollapse-perf.pl --inline writes them and flamegraph.pl
 * colours them). Lines are aggregated and sorted by byte
 * order, so the output is stable. Pure code.
 */
#ifndef PROFCAP_FOLDED_H
#define PROFCAP_FOLDED_H

#include <stddef.h>
#include <linux/types.h>

#include "util/buf.h"

struct profile;

/* Append @p as folded lines to @out (caller owned; its cap bounds the
 * output). On failure @out keeps its previous length. 0, -E2BIG (past the
 * cap, or more distinct lines than the model's table limit) or -ENOMEM. */
int folded__encode(const struct profile *p, struct buf *out);

/* Write the folded name of location @loc of @p (see above) into @name
 * (@len bytes, NUL-terminated, truncated if needed). Returns @name. */
const char *folded__frame_name(const struct profile *p, __u32 loc, char *name, size_t len);

#define FOLDED_INLINE_MARK "_[i]"

/* The same for line @i of location @loc (0 = innermost): inlined lines
 * (all but the last) get FOLDED_INLINE_MARK. Returns @name. */
const char *folded__line_name(const struct profile *p, __u32 loc, size_t i, char *name,
			      size_t len);

#endif
