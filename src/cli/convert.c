/* convert.c - `profcap convert` (see convert.h).
 *
 * The output sink is opened first, so an unwritable destination fails
 * before any work. The whole input is read into memory, its kind decided
 * (--from, else: pprof when the gunzipped bytes are a pprof Profile, perf
 * script text when its first record is a perf script sample header, else
 * OTLP, protobuf or JSON), parsed into the profile model and encoded with format__encode().
 * Without --to the output format follows the output name (.svg, .json,
 * .folded, .pb.gz/.pprof for pprof), else OTLP.
 *
 * perf script text carries no wall-clock time and no host: a converted
 * capture ends "now" (time = now - duration) and names no host.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/args.h"
#include "util/buf.h"
#include "cli/convert.h"
#include "cli/symbolize_opt.h"
#include "formats/format.h"
#include "util/fdio.h"
#include "util/id.h"
#include "util/log.h"
#include "formats/otlp_json_read.h"
#include "formats/otlp_read.h"
#include "formats/perf_script.h"
#include "formats/pprof_read.h"
#include "util/gz.h"
#include "model/profile.h"
#include "export/sink.h"
#include "util/version.h"

/* Format name for Profile.original_payload_format, from the list in the
 * OTLP profiles.proto comments ("jfr", "pprof", "linux_perf"). */
#define PERF_PAYLOAD_FORMAT "linux_perf"

/* Largest output written. */
#define CONVERT_MAX_OUTPUT (1ull << 30)

enum input_kind {
	INPUT_AUTO = 0,
	INPUT_OTLP,
	INPUT_PERF_SCRIPT,
	INPUT_PPROF,
	INPUT_TEXT, /* detected only: text that is not perf script */
};

struct convert_opts {
	const char *in, *out, *title;
	const char *type; /* --type: one value type; NULL = all (OTLP) or cpu */
	enum format to;
	enum input_kind from;
	bool embed_original;
	struct symbolize_opt sym;
};

void convert__usage(void)
{
	printf("Usage: profcap convert IN -o OUT --to FORMAT [options]\n"
	       "\n"
	       "Convert a capture to another format. IN is an OTLP Profiles file (ProfilesData\n"
	       "or ExportProfilesServiceRequest, protobuf or OTLP/JSON, gzip'd or not, from\n"
	       "any tool), a pprof profile or the text output of 'perf script'; '-' reads\n"
	       "standard input.\n"
	       "\n"
	       "Options:\n"
	       "  -o, --output OUT     where to write; '-' = standard output (files are\n"
	       "                       replaced atomically)\n"
	       "      --to FORMAT      otlp | otlp-json | pprof | folded | svg (default: from\n"
	       "                       OUT's name: .svg, .json, .folded, .pb.gz or .pprof\n"
	       "                       for pprof; otherwise otlp)\n"
	       "      --from KIND      otlp | otlp-json | pprof | perf-script (default:\n"
	       "                       detected from the content; gzip'd input is\n"
	       "                       inflated first)\n"
	       "      --embed-original keep the perf script text in the OTLP profile\n"
	       "                       (original_payload, format \"" PERF_PAYLOAD_FORMAT "\");\n"
	       "                       only with perf-script input and --to otlp/otlp-json\n"
	       "      --title TEXT     title of the SVG flame graph\n"
	       "      --type TYPE      only the cpu or off_cpu profile of a capture holding\n"
	       "                       both (pprof, folded and svg take cpu by default)\n"
	       SYMBOLIZE_OPT_HELP
	       "  -h, --help           this help\n"
	       "\n"
	       "perf script input: record with 'perf record -g', then run 'perf script' (default\n"
	       "fields, or -F comm,pid,tid,time,ip,sym,dso). Its times are not wall-clock, so\n"
	       "the converted capture is dated as ending now.\n"
	       "\n"
	       "Exit status: 0 ok, 1 unreadable or malformed input or failed write, 2 bad "
	       "usage.\n");
}

#define usage_error(...) log__usage_error("convert", __VA_ARGS__)

/* 0, 1 when --help was printed, or -EINVAL after one error line. */
static int parse_args(int argc, char **argv, struct convert_opts *o)
{
	enum { OPT_TO = 256, OPT_FROM, OPT_EMBED, OPT_TITLE, OPT_TYPE };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"to", required_argument, NULL, OPT_TO},
		{"from", required_argument, NULL, OPT_FROM},
		{"embed-original", no_argument, NULL, OPT_EMBED},
		{"title", required_argument, NULL, OPT_TITLE},
		{"type", required_argument, NULL, OPT_TYPE},
		SYMBOLIZE_OPT_LONGOPTS,
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	bool have_to = false;
	int c, err;

	memset(o, 0, sizeof(*o));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case OPT_TO:
			if (format__parse(optarg, &o->to))
				return usage_error("unknown --to format '%s': expected otlp, "
						   "otlp-json, pprof, folded or svg",
						   optarg);
			have_to = true;
			break;
		case OPT_FROM:
			/* The OTLP reader tells protobuf from JSON itself. */
			if (!strcmp(optarg, "otlp") || !strcmp(optarg, "otlp-json"))
				o->from = INPUT_OTLP;
			else if (!strcmp(optarg, "perf-script"))
				o->from = INPUT_PERF_SCRIPT;
			else if (!strcmp(optarg, "pprof"))
				o->from = INPUT_PPROF;
			else
				return usage_error("unknown --from '%s': expected otlp, otlp-json, "
						   "pprof or perf-script",
						   optarg);
			break;
		case OPT_EMBED:
			o->embed_original = true;
			break;
		case OPT_TITLE:
			o->title = optarg;
			break;
		case OPT_TYPE:
			o->type = optarg;
			break;
		case 'h':
			convert__usage();
			return 1;
		default:
			err = symbolize_opt__parse(&o->sym, "convert", c, optarg, argv);
			if (err)
				return err;
			break;
		}
	}
	if (args__one_input("convert", argc, argv, &o->in))
		return -EINVAL;
	if (!o->out)
		return usage_error("no output: give -o FILE, or -o - for standard output");
	if (!have_to)
		format__from_filename(o->out, &o->to); /* otlp unless the name says */
	if (o->embed_original && o->from != INPUT_PERF_SCRIPT)
		return usage_error("--embed-original needs --from perf-script");
	if (o->embed_original && o->to != FORMAT_OTLP && o->to != FORMAT_OTLP_JSON)
		return usage_error("--embed-original only applies to --to otlp or otlp-json");
	return 0;
}

/* Parse perf script text into *@out and give it capture metadata. 0 or 1
 * (logged). */
static int read_perf_script(const struct convert_opts *o, const char *name, const struct buf *in,
			    struct profile **out)
{
	struct perf_script_stats st;
	struct profile_meta m = {0};
	struct timespec now;
	char why[256] = "";
	int err;

	err = perf_script__parse(in->data, in->len, out, &st, why, sizeof(why));
	if (err) {
		if (err == -EBADMSG)
			pr_err("%s: %s (expected the text output of 'perf script')", name, why);
		else
			pr_err("%s: cannot convert the perf script text: %s", name, strerror(-err));
		return 1;
	}
	if (st.skipped)
		pr_warn("%s: skipped %zu line%s that are not perf script samples (first: line "
			"%zu)",
			name, st.skipped, st.skipped == 1 ? "" : "s", st.first_skipped_line);
	if (st.truncated)
		pr_warn("%s: %zu callchain%s longer than the model's limit were cut", name,
			st.truncated, st.truncated == 1 ? "" : "s");
	clock_gettime(CLOCK_REALTIME, &now);
	m.duration_nano = st.duration_ns;
	m.time_unix_nano = (__u64)now.tv_sec * 1000000000ull + (__u64)now.tv_nsec;
	m.time_unix_nano =
		m.time_unix_nano > m.duration_nano ? m.time_unix_nano - m.duration_nano : 0;
	m.period_ns = st.period;
	m.os_type = "linux";
	m.scope_name = "profcap";
	m.scope_version = PROFCAP_VERSION;
	id__random(m.profile_id);
	if (o->embed_original) {
		m.original_payload = in->data;
		m.original_payload_len = in->len;
		m.original_payload_format = PERF_PAYLOAD_FORMAT;
	}
	if (profile__set_meta(*out, &m)) {
		pr_err("out of memory converting %s", name);
		profile__free(*out);
		*out = NULL;
		return 1;
	}
	pr_debug("%s: %zu perf script samples", name, st.samples);
	return 0;
}

/* Whether @in starts like text: no NUL and mostly printable in 4 KiB. */
static bool looks_like_text(const struct buf *in)
{
	size_t i, n = in->len < 4096 ? in->len : 4096, bad = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = in->data[i];

		if (!c)
			return false;
		bad += c < 0x20 && c != '\n' && c != '\t' && c != '\r';
	}
	return bad * 20 < n;
}

/* The kind of @in: pprof (gunzipped first, within what the file can
 * plausibly hold), perf script text, other text, else OTLP. */
static enum input_kind detect(const struct buf *in)
{
	enum input_kind kind = INPUT_OTLP;

	if (gz__is_gzip(in->data, in->len)) {
		size_t size = 0;
		struct buf plain;

		if (gz__inflated_size(in->data, in->len,
				      gz__plausible_size(in->len, CONVERT_MAX_INPUT), &size))
			return INPUT_OTLP; /* its reader says what is wrong */
		buf__init(&plain, size);
		if (!gz__decompress(in->data, in->len, &plain) &&
		    pprof_read__looks_like(plain.data, plain.len))
			kind = INPUT_PPROF;
		buf__release(&plain);
		return kind;
	}
	if (pprof_read__looks_like(in->data, in->len))
		return INPUT_PPROF;
	if (perf_script__looks_like(in->data, in->len))
		return INPUT_PERF_SCRIPT;
	if (otlp_json_read__looks_like(in->data, in->len))
		return INPUT_OTLP; /* OTLP/JSON: the OTLP reader transcodes it */
	return looks_like_text(in) ? INPUT_TEXT : INPUT_OTLP;
}

/* Parse pprof data into *@out with capture metadata. 0 or 1 (logged). */
static int read_pprof(const char *name, const struct buf *in, struct profile **out)
{
	struct profile_meta m;
	char why[256] = "";
	int err;

	err = pprof_read__parse(in->data, in->len, CONVERT_MAX_INPUT, out, why, sizeof(why));
	if (err) {
		pr_err("%s: %s (is it a pprof profile, gzip'd or not?)", name,
		       why[0] ? why : strerror(-err));
		return 1;
	}
	m = *profile__meta(*out);
	m.os_type = "linux";
	m.scope_name = "profcap";
	m.scope_version = PROFCAP_VERSION;
	id__random(m.profile_id);
	if (!m.duration_nano)
		m.duration_nano = 1; /* pprof without a duration: the model wants one */
	if (profile__set_meta(*out, &m)) {
		pr_err("out of memory converting %s", name);
		profile__free(*out);
		*out = NULL;
		return 1;
	}
	return 0;
}

/* Read and parse the input. 0, or 1 after logging. */
static int load(const struct convert_opts *o, struct profile **out)
{
	const char *name = strcmp(o->in, "-") ? o->in : "standard input";
	enum input_kind kind = o->from;
	char why[256] = "";
	struct buf in;
	int err, ret = 1;

	buf__init(&in, CONVERT_MAX_INPUT);
	err = buf__read_file(&in, strcmp(o->in, "-") ? o->in : "/dev/stdin");
	if (err == -E2BIG) {
		pr_err("%s is larger than %llu MiB; convert a smaller capture", name,
		       CONVERT_MAX_INPUT >> 20);
		goto out;
	}
	if (err) {
		pr_err("cannot read %s: %s; check the path and its permissions", name,
		       strerror(-err));
		goto out;
	}
	if (!in.len) {
		pr_err("%s is empty: nothing to convert", name);
		goto out;
	}
	if (kind == INPUT_AUTO)
		kind = detect(&in);
	if (kind == INPUT_PERF_SCRIPT) {
		ret = read_perf_script(o, name, &in, out);
		goto out;
	}
	if (kind == INPUT_PPROF) {
		ret = read_pprof(name, &in, out);
		goto out;
	}
	if (kind == INPUT_TEXT) {
		pr_err("%s is text but not 'perf script' output (its first record is no perf "
		       "script sample header); convert takes OTLP, pprof or 'perf script' text",
		       name);
		goto out;
	}
	err = otlp_read__parse(in.data, in.len, out, why, sizeof(why));
	if (err) {
		pr_err("%s: %s (is it an OTLP Profiles file, or 'perf script' text with --from "
		       "perf-script?)",
		       name, why);
		goto out;
	}
	ret = 0;
out:
	buf__release(&in);
	return ret;
}

int convert__main(int argc, char **argv)
{
	struct profile *p = NULL, *sel = NULL;
	struct sink *sink = NULL;
	struct convert_opts o;
	struct buf data;
	int ret, err;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	buf__init(&data, CONVERT_MAX_OUTPUT);
	sink = file_sink__new(o.out);
	if (!sink)
		return 1;
	ret = load(&o, &p);
	if (ret)
		goto out;
	ret = 1;
	if (symbolize_opt__apply(&o.sym, o.in, &p))
		goto out;
	if (format__pick_type(p, o.type, format__single_type(o.to), &sel))
		goto out;
	err = format__encode(sel ? sel : p, o.to, o.title, &data);
	if (err) {
		pr_err("cannot encode %s as %s: %s", o.in, format__name(o.to),
		       err == -E2BIG ? "the output would be larger than 1 GiB" : strerror(-err));
		goto out;
	}
	if (sink__deliver(sink, data.data, data.len))
		goto out;
	if (strcmp(o.out, "-"))
		pr_info("wrote %s (%zu bytes, %s)", sink__describe(sink), data.len,
			format__name(o.to));
	ret = 0;
out:
	buf__release(&data);
	profile__free(sel);
	profile__free(p);
	sink__free(sink);
	return ret;
}
