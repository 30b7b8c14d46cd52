/* format.c - dispatch to the encoder of each output format (see format.h). */
#include <errno.h>
#include <string.h>

#include "formats/flamegraph.h"
#include "formats/folded.h"
#include "formats/format.h"
#include "formats/otlp.h"
#include "formats/otlp_json.h"
#include "formats/pprof.h"

static const char *const names[] = {
	[FORMAT_OTLP] = "otlp",	  [FORMAT_OTLP_JSON] = "otlp-json",
	[FORMAT_PPROF] = "pprof", [FORMAT_FOLDED] = "folded",
	[FORMAT_SVG] = "svg",
};

int format__parse(const char *name, enum format *out)
{
	size_t i;

	for (i = 0; name && i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(name, names[i])) {
			*out = (enum format)i;
			return 0;
		}
	}
	return -EINVAL;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n > m && !strcmp(s + n - m, end);
}

bool format__from_filename(const char *name, enum format *out)
{
	static const struct {
		const char *end;
		enum format f;
	} by_end[] = {
		{".svg", FORMAT_SVG},	  {".json", FORMAT_OTLP_JSON}, {".folded", FORMAT_FOLDED},
		{".pb.gz", FORMAT_PPROF}, {".pprof", FORMAT_PPROF},    {".prof", FORMAT_PPROF},
		{".pb", FORMAT_OTLP},
	};
	size_t i;

	*out = FORMAT_OTLP;
	for (i = 0; name && i < sizeof(by_end) / sizeof(by_end[0]); i++) {
		if (ends_with(name, by_end[i].end)) {
			*out = by_end[i].f;
			return true;
		}
	}
	return false;
}

const char *format__extension(enum format f)
{
	static const char *const ext[] = {
		[FORMAT_OTLP] = ".pb",	   [FORMAT_OTLP_JSON] = ".json",
		[FORMAT_PPROF] = ".pb.gz", [FORMAT_FOLDED] = ".folded",
		[FORMAT_SVG] = ".svg",
	};

	return (size_t)f < sizeof(ext) / sizeof(ext[0]) && ext[f] ? ext[f] : ".out";
}

const char *format__name(enum format f)
{
	return (size_t)f < sizeof(names) / sizeof(names[0]) ? names[f] : "unknown";
}

int format__encode(const struct profile *p, enum format f, const char *title, struct buf *out)
{
	struct flamegraph_opts fo = {.title = title};
	size_t start = out->len;
	int err;

	switch (f) {
	case FORMAT_OTLP:
		return otlp__encode(p, out);
	case FORMAT_OTLP_JSON:
		return otlp_json__encode(p, out);
	case FORMAT_PPROF:
		return pprof__encode(p, out);
	case FORMAT_FOLDED:
		return folded__encode(p, out);
	case FORMAT_SVG:
		err = flamegraph__render(p, &fo, out);
		if (err)
			out->len = start; /* the renderer may leave a partial document */
		return err;
	}
	return -EINVAL;
}
