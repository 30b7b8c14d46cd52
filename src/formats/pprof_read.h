/* pprof_read.h - read a pprof profile (perftools.profiles.Profile, gzip'd or
 * not) into the profile model, so `convert` goes both ways between OTLP and
 * pprof without loss.
 *
 * The inverse of pprof.c: each sample type (up to PROFILE_MAX_TYPES) becomes
 * a model value type with the period type and period, and each sample's
 * values its samples of those types (a ("cpu","nanoseconds") value beside
 * ("samples","count"), as pprof.c and Go write, is count x period and is
 * dropped).
 * Labels: "pid" (num) and "process", "process.executable.path",
 * "process.command_line", "container.id" (str) describe the process (no pid
 * label: one synthetic process, pid -1; a PID seen with two programs is two
 * processes, as after an exec); "tid" (num) and "thread" (str) the thread;
 * "trace_id"/"span_id" the link; other labels become sample attributes
 * under their keys, numeric ones with their unit. Each pprof location is one
 * model location with all its lines (an inline chain, innermost first) and
 * their functions (name, system name, file, start line), lines and columns.
 * Mappings keep range, offset, file name, build id and the has_* flags;
 * frames in a mapping named "[kernel...]" are kernel frames. The meta gets
 * time, duration, period, drop/keep frames, the default sample type and the
 * comments; a comment "profcap.samples.KEY=N" is a loss count. The caller
 * sets the profile_id.
 * Pure code: no I/O, no logging; hostile input fails with -EBADMSG.
 */
#ifndef PROFCAP_PPROF_READ_H
#define PROFCAP_PPROF_READ_H

#include <stdbool.h>
#include <stddef.h>

struct profile;

/* Whether @len bytes at @data (already gunzipped) look like a pprof Profile
 * rather than OTLP: a well-formed protobuf message whose top level has a
 * field numbered 3 to 14 (OTLP's ProfilesData and export request use only 1
 * and 2) and a string_table (field 6). */
bool pprof_read__looks_like(const void *data, size_t len);

/* Parse pprof data (@len bytes at @data, gzip'd or not; gzip is inflated
 * only up to what the input can plausibly hold, at most @max_bytes) into a
 * new profile (*@out, freed by the caller). Returns 0, or -EBADMSG /
 * -E2BIG / -ENOMEM with @err (@errlen bytes) saying why. */
int pprof_read__parse(const void *data, size_t len, size_t max_bytes, struct profile **out,
		      char *err, size_t errlen);

#endif
