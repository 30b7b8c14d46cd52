/* format.h - the output formats a profile can be written in, all produced
 * from the one profile model: OTLP protobuf, OTLP/JSON, pprof, folded stacks
 * and a self-contained SVG flame graph. Used by `convert` and
 * `capture --format`.
 */
#ifndef PROFCAP_FORMAT_H
#define PROFCAP_FORMAT_H

#include <stdbool.h>

#include "util/buf.h"

struct profile;

enum format {
	FORMAT_OTLP = 0,  /* ProfilesData protobuf (default) */
	FORMAT_OTLP_JSON, /* OTLP/JSON mapping */
	FORMAT_PPROF,	  /* gzip'd perftools.profiles.Profile */
	FORMAT_FOLDED,	  /* "comm;frame;frame count" lines */
	FORMAT_SVG,	  /* interactive flame graph */
};

/* Format named @name ("otlp", "otlp-json", "pprof", "folded", "svg").
 * 0 or -EINVAL. */
int format__parse(const char *name, enum format *out);

const char *format__name(enum format f);

/* The format an output file name asks for, by its ending: ".svg" svg,
 * ".json" otlp-json, ".folded" folded, ".pb.gz", ".pprof" or ".prof" pprof,
 * ".pb" otlp; anything else (and NULL, "-") gives otlp, the default.
 * Returns true when the name had one of these endings. */
bool format__from_filename(const char *name, enum format *out);

/* Usual file name extension for @f (".pb", ".json", ".pb.gz", ".folded",
 * ".svg"). */
const char *format__extension(enum format f);

/* Encode @p as @f, appended to @out. @title is used by the SVG (NULL: a
 * default from the profile). 0 or -errno (-E2BIG past @out's cap). */
int format__encode(const struct profile *p, enum format f, const char *title, struct buf *out);

#endif
