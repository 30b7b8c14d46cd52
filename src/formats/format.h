/* format.h - the output formats a profile can be written in, all produced
 * from the one profile model: OTLP protobuf, OTLP/JSON, pprof, folded stacks
 * and a self-contained SVG flame graph. Used by `convert` and
 * `capture --format`.
 */
#ifndef PROFCAP_FORMAT_H
#define PROFCAP_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

struct profile;

enum format {
	FORMAT_OTLP = 0,    /* ProfilesData protobuf (default) */
	FORMAT_OTLP_JSON,   /* OTLP/JSON mapping */
	FORMAT_PPROF,	    /* gzip'd perftools.profiles.Profile */
	FORMAT_FOLDED,	    /* "comm;frame;frame count" lines */
	FORMAT_SVG,	    /* interactive flame graph */
	FORMAT_PERF_SCRIPT, /* perf script text, time ordered */
	FORMAT_SPEEDSCOPE,  /* speedscope JSON, sampled profiles per thread */
};

/* Format named @name ("otlp", "otlp-json", "pprof", "folded", "svg",
 * "perf-script", "speedscope").
 * 0 or -EINVAL. */
int format__parse(const char *name, enum format *out);

const char *format__name(enum format f);

/* The format an output file name asks for, by its ending: ".svg" svg,
 * ".speedscope.json" speedscope, ".perf.txt" perf-script, ".json" otlp-json, ".folded" folded,
 * ".pb.gz", ".pprof" or ".prof" pprof,
 * ".pb" otlp; anything else (and NULL, "-") gives otlp, the default.
 * Returns true when the name had one of these endings. */
bool format__from_filename(const char *name, enum format *out);

/* Usual file name extension for @f (".pb", ".json", ".pb.gz", ".folded",
 * ".svg"). */
const char *format__extension(enum format f);

/* Does @f carry one value type only (pprof, folded, svg)? OTLP carries all. */
bool format__single_type(enum format f);

/* Pick the profile of one value type for an output or a report: @want
 * names it ("cpu", "off_cpu", or any sample type), NULL = all types, or
 * for @single outputs the first (cpu) with a note naming the others.
 * *@out gets a new profile holding only that type (caller frees), or NULL
 * when @p serves as is. 0, -ENOENT after an error line listing the types,
 * -ENOMEM. */
int format__pick_type(const struct profile *p, const char *want, bool single,
		      struct profile **out);

/* Comma-separated names of @p's value types into @buf; returns their count. */
int format__type_names(const struct profile *p, char *buf, size_t len);

/* Encode @p as @f, appended to @out. @title is used by the SVG (NULL: a
 * default from the profile). 0 or -errno (-E2BIG past @out's cap). */
int format__encode(const struct profile *p, enum format f, const char *title, struct buf *out);

#endif
