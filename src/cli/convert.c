/* convert.c - `profcap convert` (see convert.h).
 *
 * The output sink is opened first, so an unwritable destination fails
 * before any work. The whole input is read into memory, its kind decided
 * (--from, else: perf.data by its magic, pprof when the gunzipped bytes are a
 * pprof Profile, perf script text when its first record is a perf script
 * sample header, else OTLP, protobuf or JSON), parsed into the profile model
 * and encoded with format__encode().
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
#include "cli/input.h"
#include "cli/symbolize_opt.h"
#include "cli/timeslice.h"
#include "formats/format.h"
#include "util/fdio.h"
#include "util/id.h"
#include "util/log.h"
#include "formats/otlp_json_read.h"
#include "formats/otlp_read.h"
#include "formats/perf_script.h"
#include "formats/pprof.h"
#include "formats/pprof_read.h"
#include "util/gz.h"
#include "model/profile.h"
#include "export/sink.h"
#include "util/version.h"

/* Largest output written. */
#define CONVERT_MAX_OUTPUT (1ull << 30)

struct convert_opts {
	const char *in, *out, *title;
	const char *type; /* --type: one value type; NULL = all (OTLP) or cpu */
	const char *time; /* --time A-B */
	enum format to;
	struct input_opts input;
	struct symbolize_opt sym;
};

void convert__usage(void)
{
	printf("Usage: profcap convert IN -o OUT --to FORMAT [options]\n"
	       "\n"
	       "Convert a capture to another format. IN is an OTLP Profiles file (ProfilesData\n"
	       "or ExportProfilesServiceRequest, protobuf or OTLP/JSON, gzip'd or not, from\n"
	       "any tool), a pprof profile, the text output of 'perf script' or a perf.data\n"
	       "file (perf record); '-' reads standard input.\n"
	       "\n"
	       "Options:\n"
	       "  -o, --output OUT     where to write; '-' = standard output (files are\n"
	       "                       replaced atomically)\n"
	       "      --to FORMAT      otlp | otlp-json | pprof | folded | svg | perf-script |\n"
	       "                       speedscope (default: from OUT's name: .svg, .json,\n"
	       "                       .folded, .perf.txt, .speedscope.json, .pb.gz or\n"
	       "                       .pprof for pprof; otherwise otlp); perf-script and\n"
	       "                       speedscope are in time order\n"
	       "      --from KIND      otlp | otlp-json | pprof | perf-script | perf-data\n"
	       "                       (a perf.data file; default: detected from the\n"
	       "                       content; gzip'd input is inflated first)\n"
	       "      --embed-original keep the perf script text in the OTLP profile\n"
	       "                       (original_payload, format \"" PERF_PAYLOAD_FORMAT "\");\n"
	       "                       only with perf-script input and --to otlp/otlp-json\n"
	       "      --title TEXT     title of the SVG flame graph\n"
	       "      --time A-B       only samples taken from A to B (as in 'report --time')\n"
	       "      --type TYPE      only the cpu or off_cpu profile of a capture holding\n"
	       "                       both (pprof, folded and svg take cpu by default)\n"
	       SYMBOLIZE_OPT_HELP
	       "  -h, --help           this help\n"
	       "\n"
	       "perf script input: record with 'perf record -g', then run 'perf script' (default\n"
	       "fields, or -F comm,pid,tid,cpu,time,ip,sym,dso). Each sample keeps its time\n"
	       "(perf's seconds since boot, mapped to wall-clock time with this host's clocks)\n"
	       "and CPU, for --time and report --timeline.\n"
	       "\n"
	       "perf.data input ('perf record -g', '--call-graph dwarf', '-a') is read\n"
	       "directly, no perf binary needed; the capture ends at the file's modification\n"
	       "time (now for standard input).\n"
	       "\n"
	       "Exit status: 0 ok, 1 unreadable or malformed input or failed write, 2 bad "
	       "usage.\n");
}

#define usage_error(...) log__usage_error("convert", __VA_ARGS__)

/* 0, 1 when --help was printed, or -EINVAL after one error line. */
static int parse_args(int argc, char **argv, struct convert_opts *o)
{
	enum { OPT_TO = 256, OPT_FROM, OPT_EMBED, OPT_TITLE, OPT_TYPE, OPT_TIME };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"to", required_argument, NULL, OPT_TO},
		{"from", required_argument, NULL, OPT_FROM},
		{"embed-original", no_argument, NULL, OPT_EMBED},
		{"title", required_argument, NULL, OPT_TITLE},
		{"type", required_argument, NULL, OPT_TYPE},
		{"time", required_argument, NULL, OPT_TIME},
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
						   "otlp-json, pprof, folded, svg, perf-script "
						   "or speedscope",
						   optarg);
			have_to = true;
			break;
		case OPT_FROM:
			/* The OTLP reader tells protobuf from JSON itself. */
			if (!strcmp(optarg, "otlp") || !strcmp(optarg, "otlp-json"))
				o->input.from = INPUT_OTLP;
			else if (!strcmp(optarg, "perf-script"))
				o->input.from = INPUT_PERF_SCRIPT;
			else if (!strcmp(optarg, "pprof"))
				o->input.from = INPUT_PPROF;
			else if (!strcmp(optarg, "perf-data"))
				o->input.from = INPUT_PERF_DATA;
			else
				return usage_error("unknown --from '%s': expected otlp, otlp-json, "
						   "pprof, perf-script or perf-data",
						   optarg);
			break;
		case OPT_EMBED:
			o->input.embed_original = true;
			break;
		case OPT_TITLE:
			o->title = optarg;
			break;
		case OPT_TYPE:
			o->type = optarg;
			break;
		case OPT_TIME:
			o->time = optarg;
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
	if (o->input.embed_original && o->input.from != INPUT_PERF_SCRIPT)
		return usage_error("--embed-original needs --from perf-script");
	if (o->input.embed_original && o->to != FORMAT_OTLP && o->to != FORMAT_OTLP_JSON)
		return usage_error("--embed-original only applies to --to otlp or otlp-json");
	return 0;
}

/* One line naming what of @p a pprof file of @sel (NULL: @p's first value
 * type) cannot hold, when there is something. */
static void say_unheld(const struct profile *p, const struct profile *sel, const char *in)
{
	__u32 type = 0, st, su, pt, pu;
	struct buf line;

	if (sel) {
		profile__value_type(sel, 0, &st, &su, &pt, &pu);
		if (profile__find_value_type(p, profile__string(sel, st, NULL), &type))
			type = 0;
	}
	buf__init(&line, 4096);
	if (pprof__unheld(p, type, &line) && !buf__append(&line, "", 1))
		pr_info("%s: pprof cannot hold these fields, left out: %s",
			strcmp(in, "-") ? in : "standard input", (const char *)line.data);
	buf__release(&line);
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
	ret = input__load(o.in, &o.input, &p) ? 1 : 0;
	if (ret)
		goto out;
	ret = 1;
	if (symbolize_opt__apply(&o.sym, o.in, &p))
		goto out;
	if (o.time && timeslice__apply("convert", o.time, &p))
		goto out;
	if (format__pick_type(p, o.type, format__single_type(o.to), &sel))
		goto out;
	if (o.to == FORMAT_PPROF)
		say_unheld(p, sel, o.in);
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
