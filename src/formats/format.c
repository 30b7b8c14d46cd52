/* format.c - dispatch to the encoder of each output format (see format.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/flamegraph.h"
#include "formats/folded.h"
#include "formats/format.h"
#include "formats/otlp.h"
#include "formats/otlp_json.h"
#include "formats/perf_script_write.h"
#include "formats/pprof.h"
#include "formats/speedscope.h"
#include "model/profile.h"
#include "util/log.h"

static const char *const names[] = {
	[FORMAT_OTLP] = "otlp",
	[FORMAT_OTLP_JSON] = "otlp-json",
	[FORMAT_PPROF] = "pprof",
	[FORMAT_FOLDED] = "folded",
	[FORMAT_SVG] = "svg",
	[FORMAT_PERF_SCRIPT] = "perf-script",
	[FORMAT_SPEEDSCOPE] = "speedscope",
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
		{".svg", FORMAT_SVG},
		{".speedscope.json", FORMAT_SPEEDSCOPE},
		{".perf.txt", FORMAT_PERF_SCRIPT},
		{".json", FORMAT_OTLP_JSON},
		{".folded", FORMAT_FOLDED},
		{".pb.gz", FORMAT_PPROF},
		{".pprof", FORMAT_PPROF},
		{".prof", FORMAT_PPROF},
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
		[FORMAT_OTLP] = ".pb",
		[FORMAT_OTLP_JSON] = ".json",
		[FORMAT_PPROF] = ".pb.gz",
		[FORMAT_FOLDED] = ".folded",
		[FORMAT_SVG] = ".svg",
		[FORMAT_PERF_SCRIPT] = ".perf.txt",
		[FORMAT_SPEEDSCOPE] = ".speedscope.json",
	};

	return (size_t)f < sizeof(ext) / sizeof(ext[0]) && ext[f] ? ext[f] : ".out";
}

const char *format__name(enum format f)
{
	return (size_t)f < sizeof(names) / sizeof(names[0]) ? names[f] : "unknown";
}

/* Name the value type @t is picked by: "cpu" for CPU samples, else its
 * sample type ("off_cpu"). */
static const char *type_name(const struct profile *p, __u32 t)
{
	__u32 st, su, pt, pu;
	const char *name;

	profile__value_type(p, t, &st, &su, &pt, &pu);
	name = profile__string(p, st, NULL);
	if (!strcmp(name, "samples") && !strcmp(profile__string(p, pt, NULL), "cpu"))
		return "cpu";
	return name;
}

static int find_type(const struct profile *p, const char *want, __u32 *t)
{
	__u32 i;

	for (i = 0; i < profile__value_type_count(p); i++) {
		if (!strcmp(type_name(p, i), want)) {
			*t = i;
			return 0;
		}
	}
	return profile__find_value_type(p, want, t);
}

int format__type_names(const struct profile *p, char *buf, size_t len)
{
	size_t i, n = 0;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < profile__value_type_count(p) && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
				      type_name(p, (__u32)i));
	return (int)profile__value_type_count(p);
}

int format__pick_type(const struct profile *p, const char *want, bool single,
		      struct profile **out)
{
	char names[256];
	__u32 t = 0;

	*out = NULL;
	format__type_names(p, names, sizeof(names));
	if (want && find_type(p, want, &t)) {
		pr_err("the capture has no '%s' profile: pick --type %s", want, names);
		return -ENOENT;
	}
	if (!want && (!single || profile__value_type_count(p) < 2))
		return 0;
	/* Unasked, the first type holding samples: an off-CPU capture that
	 * caught no CPU sample shows its waits, not an empty CPU profile. */
	while (!want && t + 1 < profile__value_type_count(p) && !profile__value_type_used(p, t))
		t++;
	if (!want)
		pr_info("the capture holds %s profiles: showing %s (pick one with --type)", names,
			type_name(p, t));
	if (profile__value_type_count(p) < 2)
		return 0;
	*out = profile__extract_type(p, t);
	if (!*out) {
		pr_err("out of memory selecting the %s profile", type_name(p, t));
		return -ENOMEM;
	}
	return 0;
}

bool format__single_type(enum format f)
{
	return f != FORMAT_OTLP && f != FORMAT_OTLP_JSON;
}

static int encode_one(const struct profile *p, enum format f, const char *title,
		      struct buf *out);

int format__encode(const struct profile *p, enum format f, const char *title, struct buf *out)
{
	struct profile *one;
	int err;

	/* One value type per output: the first (cpu); callers pick others. */
	if (!format__single_type(f) || profile__value_type_count(p) < 2)
		return encode_one(p, f, title, out);
	one = profile__extract_type(p, 0);
	if (!one)
		return -ENOMEM;
	err = encode_one(one, f, title, out);
	profile__free(one);
	return err;
}

static int encode_one(const struct profile *p, enum format f, const char *title,
		      struct buf *out)
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
	case FORMAT_PERF_SCRIPT:
		return perf_script_write__encode(p, out);
	case FORMAT_SPEEDSCOPE:
		return speedscope__encode(p, out);
	case FORMAT_SVG:
		err = flamegraph__render(p, &fo, out);
		if (err)
			out->len = start; /* the renderer may leave a partial document */
		return err;
	}
	return -EINVAL;
}
