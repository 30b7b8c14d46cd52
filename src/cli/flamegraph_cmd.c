/* flamegraph_cmd.c - `profcap flamegraph FILE -o OUT.svg` (see flamegraph_cmd.h). */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fdio.h"
#include "cli/args.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/hex.h"
#include "model/profile.h"
#include "formats/flamegraph.h"
#include "export/sink.h"
#include "cli/activity_lanes.h"
#include "cli/flamegraph_cmd.h"
#include "cli/symbolize_opt.h"
#include "cli/timeslice.h"

struct fg_args {
	const char *in, *out;
	const char *type; /* --type */
	const char *time; /* --time A-B */
	bool activity;	  /* --activity */
	struct flamegraph_opts o;
	struct view_attr_match attrs[VIEW_MAX_ATTR_MATCH]; /* --attr */
	struct symbolize_opt sym;
};

void flamegraph__usage(void)
{
	printf("Usage: profcap flamegraph FILE -o OUT.svg [options]\n"
	       "\n"
	       "Write a capture as one self-contained interactive SVG flame graph (no\n"
	       "network, no external scripts): root 'all', one level per program (the\n"
	       "processes of one executable together; --per-pid keeps them apart), then the\n"
	       "stacks from the root to the leaf. Open it in a browser: it takes the\n"
	       "window's width; hover a frame for its samples and share, click to zoom\n"
	       "(Reset zoom to go back), Ctrl-F or Search to highlight frames matching a\n"
	       "regular expression and see their share. Each frame type has its colours\n"
	       "(legend at the top): orange kernel, red native, blue cpython, yellow v8js,\n"
	       "green jvm, ...\n"
	       "A profile with sample times (capture --timestamps, perf.data) gets a timeline\n"
	       "above the graph: samples per interval; drag across it to draw the graph of\n"
	       "that range only (Reset range to go back).\n"
	       "FILE is any OTLP Profiles file, gzip or not, or pprof, 'perf script' text or\n"
	       "a perf.data file (perf record); '-' reads standard input.\n"
	       "\n"
	       "Options:\n"
	       "  -o, --output OUT      the SVG file to write ('-' = standard output); required\n"
	       "      --title TEXT      title (default: host and capture time)\n"
	       "      --pid PID         only process PID\n"
	       "      --trace-id ID     only samples taken in trace ID (32 hex digits;\n"
	       "                        OpenTelemetry thread context)\n"
	       "      --attr KEY=VALUE  only samples whose attribute KEY is VALUE (e.g.\n"
	       "                        http.route=/users); up to %d, all must match\n"
	       "      --time A-B        only samples taken from A to B (as in 'report --time')\n"
	       "      --activity        under the timeline, per thread: running, runnable and\n"
	       "                        waiting (capture --off-cpu) over time, and its spans\n"
	       "      --inverted        icicle graph: leaf functions at the top, their callers\n"
	       "                        below\n"
	       "      --per-pid         one tower per process (\"exe [pid]\") instead of one\n"
	       "                        per executable\n"
	       "      --width PX        fixed image width (default: the browser window's;\n"
	       "                        %u where scripts do not run)\n"
	       "      --type TYPE       cpu (default) or off_cpu: a capture --off-cpu holds\n"
	       "                        both; off-CPU graphs are drawn in blues, their\n"
	       "                        widths are time blocked\n" SYMBOLIZE_OPT_HELP
	       "  -h, --help            this help\n"
	       "\n"
	       "Exit status: 0 written, 1 unreadable or malformed FILE or write failure,\n"
	       "2 bad usage.\n",
	       VIEW_MAX_ATTR_MATCH, FG_DEFAULT_WIDTH);
}

#define usage_error(...) log__usage_error("flamegraph", __VA_ARGS__)

/* 0, 1 when --help was printed, or -EINVAL after one error line. */
static int parse_args(int argc, char **argv, struct fg_args *a)
{
	enum {
		OPT_TITLE = 256,
		OPT_PID,
		OPT_INVERTED,
		OPT_WIDTH,
		OPT_TYPE,
		OPT_TRACE,
		OPT_ATTR,
		OPT_PER_PID,
		OPT_TIME,
		OPT_ACTIVITY
	};
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"title", required_argument, NULL, OPT_TITLE},
		{"pid", required_argument, NULL, OPT_PID},
		{"inverted", no_argument, NULL, OPT_INVERTED},
		{"per-pid", no_argument, NULL, OPT_PER_PID},
		{"width", required_argument, NULL, OPT_WIDTH},
		{"type", required_argument, NULL, OPT_TYPE},
		{"trace-id", required_argument, NULL, OPT_TRACE},
		{"attr", required_argument, NULL, OPT_ATTR},
		{"time", required_argument, NULL, OPT_TIME},
		{"activity", no_argument, NULL, OPT_ACTIVITY},
		SYMBOLIZE_OPT_LONGOPTS,
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	long long v;
	int c, err;

	memset(a, 0, sizeof(*a));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			a->out = optarg;
			break;
		case OPT_TITLE:
			a->o.title = optarg;
			break;
		case OPT_PID:
			if (!args__int(optarg, INT32_MIN, INT32_MAX, &v))
				return usage_error("--pid needs a process id, not '%s'", optarg);
			a->o.filter_pid = true;
			a->o.pid = v;
			break;
		case OPT_TYPE:
			a->type = optarg;
			break;
		case OPT_TIME:
			a->time = optarg;
			break;
		case OPT_ACTIVITY:
			a->activity = true;
			break;
		case OPT_TRACE:
			if (!hex__decode(optarg, a->o.trace_id, sizeof(a->o.trace_id)))
				return usage_error("--trace-id needs 32 hex digits (a W3C trace id), "
						   "not '%s'",
						   optarg);
			a->o.filter_trace = true;
			break;
		case OPT_ATTR:
			err = args__attr_match("flamegraph", optarg, a->attrs, &a->o.nattrs,
					       VIEW_MAX_ATTR_MATCH);
			if (err)
				return err;
			a->o.attrs = a->attrs;
			break;
		case OPT_INVERTED:
			a->o.inverted = true;
			break;
		case OPT_PER_PID:
			a->o.per_pid = true;
			break;
		case OPT_WIDTH:
			if (!args__int(optarg, 200, 100000, &v))
				return usage_error("--width needs a number of pixels from 200 to "
						   "100000, not '%s'",
						   optarg);
			a->o.width = (unsigned)v;
			break;
		case 'h':
			flamegraph__usage();
			return 1;
		default:
			err = symbolize_opt__parse(&a->sym, "flamegraph", c, optarg, argv);
			if (err)
				return err;
			break;
		}
	}
	if (args__one_input("flamegraph", argc, argv, &a->in))
		return -EINVAL;
	if (!a->out)
		return usage_error("no output: give -o OUT.svg (or -o - for standard output)");
	return 0;
}

static int write_out(const char *path, const struct buf *b)
{
	struct sink *s;
	int err;

	s = file_sink__new(path);
	if (!s)
		return -EIO; /* logged */
	err = sink__deliver(s, b->data, b->len);
	if (!err && strcmp(path, "-"))
		pr_info("wrote %s (%zu bytes, svg)", sink__describe(s), b->len);
	sink__free(s);
	return err;
}

/* Whether any sample of @p passes the --attr filters of @o. */
static bool any_match(const struct profile *p, const struct flamegraph_opts *o)
{
	size_t i, j;

	for (i = 0; i < profile__process_count(p); i++)
		for (j = 0; j < profile__sample_count(p, i); j++)
			if (view__sample_matches(p, profile__sample(p, i, j), o->attrs, o->nattrs))
				return true;
	return false;
}

int flamegraph__main(int argc, char **argv)
{
	struct profile *p = NULL;
	struct activity_lanes *lanes = NULL;
	struct fg_args a;
	struct buf svg;
	int ret, err;

	ret = parse_args(argc, argv, &a);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (a.activity ? activity_lanes__load(&a.sym, a.in, a.type, a.time, &a.o, &p, &lanes)
		       : symbolize_opt__load(&a.sym, a.in, a.type, &p))
		return 1; /* logged */
	if (a.time && timeslice__apply("flamegraph", a.time, &p)) {
		profile__free(p);
		activity_lanes__free(lanes);
		return 1;
	}
	if (a.o.filter_pid) {
		size_t i;

		for (i = 0; i < profile__process_count(p); i++)
			if (profile__process(p, i)->pid == a.o.pid)
				break;
		if (i == profile__process_count(p))
			pr_warn("%s has no samples of pid %lld: the flame graph is empty; run "
				"'profcap report %s --by process' to see the processes",
				a.in, (long long)a.o.pid, a.in);
	}
	if (a.o.nattrs && !any_match(p, &a.o))
		pr_warn("%s has no samples with %s=%s%s: the flame graph is empty; run "
			"'profcap report %s --by attr:%s' to see its values",
			a.in, a.o.attrs[0].key, a.o.attrs[0].value,
			a.o.nattrs > 1 ? " and the other --attr" : "", a.in, a.o.attrs[0].key);
	buf__init(&svg, FG_MAX_BYTES);
	err = flamegraph__render(p, &a.o, &svg);
	if (err)
		pr_err("%s: cannot render the flame graph: %s", a.in,
		       err == -E2BIG ? "it would exceed 1 GiB" : strerror(-err));
	else
		err = write_out(a.out, &svg);
	buf__release(&svg);
	profile__free(p);
	activity_lanes__free(lanes);
	return err ? 1 : 0;
}
