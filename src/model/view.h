/* view.h - how a profile reads to people: one naming policy for frames
 * (function name, else "[mapping]", else "[unknown]"), a frame's type, and
 * the thread of a sample. Every reader (report, flame graph, folded) uses
 * these so the same frame carries the same name everywhere.
 */
#ifndef PROFCAP_MODEL_VIEW_H
#define PROFCAP_MODEL_VIEW_H

#include <stddef.h>
#include <linux/types.h>

struct profile;
struct profile_sample_entry;

/* Printable name of location @loc of @p: its function name, else the base
 * name of its mapping in brackets ("[libc.so.6]"), else "[unknown]".
 * Returns a borrowed pointer into @p or into @scratch (@n bytes); never NULL. */
const char *view__location_name(const struct profile *p, __u32 loc, char *scratch, size_t n);

/* Inlined frames: a location reads as view__line_count() frames (at least
 * 1), i = 0 the innermost inlined function and the last the function that
 * contains the address. view__line_name() names frame @i as
 * view__location_name() does; view__line_source() gives its source file
 * ("" when unknown, borrowed) and *@line (0 when unknown). A frame i > 0 of
 * a location is the caller into which frame i - 1 was inlined: readers mark
 * frames i < count - 1 as inlined. */
size_t view__line_count(const struct profile *p, __u32 loc);
const char *view__line_name(const struct profile *p, __u32 loc, size_t i, char *scratch,
			    size_t n);
const char *view__line_source(const struct profile *p, __u32 loc, size_t i, __s64 *line);

/* Frame type of location @loc ("native", "kernel", "v8js", ...), borrowed
 * from @p; "" when the location carries none. Never NULL. */
const char *view__location_type(const struct profile *p, __u32 loc);

/* Thread of sample @s: *@tid gets thread.id (-1 when absent), *@name the
 * borrowed thread.name ("" when absent). */
void view__sample_thread(const struct profile *p, const struct profile_sample_entry *s,
			 __s64 *tid, const char **name);

#endif
