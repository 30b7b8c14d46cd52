/* view.h - how a profile reads to people and to OTLP: one naming policy for
 * frames (function name, else system name, else the source line, else the
 * mapping and offset, else the address, else "[unknown]"), a frame's type,
 * the thread of a sample, and the resource attributes of a process with
 * their precedence. Every reader (report, flame graph, folded) and both
 * OTLP writers (protobuf, JSON) use these, so the same frame and resource
 * read the same everywhere.
 */
#ifndef PROFCAP_MODEL_VIEW_H
#define PROFCAP_MODEL_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "model/profile.h"

struct profile;
struct profile_sample_entry;

/* Printable name of location @loc of @p: its function name, else its
 * function's system name, else view__place_name(). Returns a borrowed
 * pointer into @p or into @scratch (@n bytes, truncated with a NUL); never
 * NULL. */
const char *view__frame_name(const struct profile *p, __u32 loc, char *scratch, size_t n);

/* The name location @loc gets when its innermost function has no name, the
 * same in every reader (report, folded, flame graph): its source
 * "file:line" (interpreted code: "app.py:42"), else "<mapping
 * basename>+0x<file offset>" ("libc.so.6+0x2f00", "[vdso]+0x10"), else
 * "[unknown]+0x<address>" without a mapping, else "[unknown]". Same
 * ownership as view__frame_name(). */
const char *view__place_name(const struct profile *p, __u32 loc, char *scratch, size_t n);

/* view__frame_name(p, loc, scratch, n). */
const char *view__location_name(const struct profile *p, __u32 loc, char *scratch, size_t n);

/* The mapping of @loc as a short word for tables: its file's base name,
 * else "[TYPE]" for a frame of an interpreter or runtime without a mapping
 * ("[cpython]"), else "[unknown]". Same ownership as view__frame_name(). */
const char *view__mapping_name(const struct profile *p, __u32 loc, char *scratch, size_t n);

/* Inlined frames: a location reads as view__line_count() frames (at least
 * 1), i = 0 the innermost inlined function and the last the function that
 * contains the address. view__line_name() names frame @i as
 * view__frame_name() does (an unnamed one by its own source line);
 * view__line_source() gives its source file ("" when unknown, borrowed)
 * and *@line (0 when unknown). A frame i > 0 of a location is the caller
 * into which frame i - 1 was inlined: readers mark frames i < count - 1 as
 * inlined. */
size_t view__line_count(const struct profile *p, __u32 loc);
const char *view__line_name(const struct profile *p, __u32 loc, size_t i, char *scratch,
			    size_t n);
const char *view__line_source(const struct profile *p, __u32 loc, size_t i, __s64 *line);
/* The function of frame @i of @loc (its name, else its system name;
 * borrowed), or NULL when the frame has no function or both are empty.
 * *@nlines (when not NULL) gets the location's count of lines, 0 for none. */
const char *view__line_function(const struct profile *p, __u32 loc, size_t i, size_t *nlines);

/* Frame type of location @loc ("native", "kernel", "v8js", ...), borrowed
 * from @p; "" when the location carries none. Never NULL. */
const char *view__location_type(const struct profile *p, __u32 loc);

/* Thread of sample @s: *@tid gets thread.id (-1 when absent), *@name the
 * borrowed thread.name ("" when absent). */
void view__sample_thread(const struct profile *p, const struct profile_sample_entry *s,
			 __s64 *tid, const char **name);

/* Sample @s's attribute @key as text: a string attribute's value (borrowed
 * from @p), an integer one's decimal digits written into @scratch (@n
 * bytes). NULL when @s has no attribute @key. Thread-context attributes
 * (http.route, ...) are string attributes under their own keys. */
const char *view__sample_attr(const struct profile *p, const struct profile_sample_entry *s,
			      const char *key, char *scratch, size_t n);

/* One "KEY=VALUE" sample filter (report --attr, flamegraph --attr). */
struct view_attr_match {
	const char *key;
	const char *value;
};

#define VIEW_MAX_ATTR_MATCH 4 /* filters a command takes */

/* Whether sample @s carries every one of the @n (key, value) pairs of @m
 * (view__sample_attr() equal to the value). True when @n is 0. */
bool view__sample_matches(const struct profile *p, const struct profile_sample_entry *s,
			  const struct view_attr_match *m, size_t n);

/* A resource attribute: a string when @str is set, else the int @num. */
struct view_resource_attr {
	const char *key;
	const char *str;
	__s64 num;
};

/* At most this many resource attributes per resource. */
#define VIEW_MAX_RESOURCE_ATTRS (8 + 2 * PROFILE_MAX_RESOURCE_ATTRS)

/* The resource attributes of process @proc of @p (SIZE_MAX: the host-only
 * resource of a profile without processes) into @out, in the order every
 * OTLP writer emits them: the process's own (process.pid, executable name
 * and path, command line, container.id), then what the process published
 * about itself (desc attrs: OpenTelemetry process context; a "process." key
 * there never overrides a detected one), then the operator's (service.name,
 * OTEL_RESOURCE_ATTRIBUTES, never a "process." key: they cannot relabel a
 * process), then the host's (host.name, host.arch, os.type). Keys are
 * unique, the first one wins; empty strings are left out. Strings are
 * borrowed from @p. Returns how many (<= VIEW_MAX_RESOURCE_ATTRS). */
size_t view__resource_attrs(const struct profile *p, size_t proc,
			    struct view_resource_attr out[VIEW_MAX_RESOURCE_ATTRS]);

#endif
