/* report.c - `profcap report` (see report.h).
 *
 * One pass over the samples adds each sample's value to its stack, its
 * process and its thread; a second pass over the stacks that got a value
 * gives every group (function or mapping) its self value (the leaf's group)
 * and its inclusive value, counted once per stack however often the group
 * appears in it (recursion). Groups and threads are found through hash
 * tables (intern.h), so the work is linear in samples plus stack frames.
 */
#include "capture/memory.h"
#include "cli/activity_out.h"
#include "cli/report_int.h"
#include "cli/timeline.h"
#include "cli/timeslice.h"

/* The options of `report` about time, beside struct report_opts (which
 * comes first, so the option handlers reach them from its address). */
struct report_cli {
	struct report_opts o;
	const char *time;  /* --time A-B */
	bool timeline;	   /* --timeline */
	__u64 interval_ns; /* --interval */
	bool activity;	   /* --activity */
};

#define REPORT_CLI(opts) ((struct report_cli *)(void *)(opts))

/* ---- options ----------------------------------------------------------------------- */

void report__default_opts(struct report_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->file = "-";
	o->top = REPORT_DEFAULT_TOP;
}

const char *const report__by_names[BY_ATTR + 1] = {
	[BY_FUNCTION] = "function", [BY_PROCESS] = "process", [BY_THREAD] = "thread",
	[BY_MAPPING] = "mapping",   [BY_SPAN] = "span",	      [BY_ATTR] = "attr",
};

void report__usage(void)
{
	printf("Usage: profcap report FILE [options]\n"
	       "\n"
	       "Show what is hot in a capture: capture metadata, the top functions with self\n"
	       "and inclusive share, and totals per process and per thread. FILE is any OTLP\n"
	       "Profiles file (ProfilesData or ExportProfilesServiceRequest, gzip or not),\n"
	       "or pprof, 'perf script' text or a perf.data file (perf record); '-' reads\n"
	       "standard input.\n"
	       "'profcap report A B' compares two captures (or agent windows) of the same\n"
	       "processes: per stack, the value of --type (default inuse_space) in each and\n"
	       "its growth, largest first (a leak: the stack whose in-use bytes grew).\n"
	       "\n"
	       "Options:\n"
	       "      --top N           rows per table (default %d; 0 = all)\n"
	       "      --by WHAT         group the main table by function (default), process,\n"
	       "                        thread, mapping, span (TRACE_ID/SPAN_ID of the\n"
	       "                        OpenTelemetry span the samples were taken in) or\n"
	       "                        attr:KEY (the values of sample attribute KEY, e.g.\n"
	       "                        attr:http.route from the thread context; \"(none)\"\n"
	       "                        for samples without it)\n"
	       "      --self            sort by self value (default)\n"
	       "      --inclusive       sort by inclusive value (a function counts once per\n"
	       "                        stack, whatever its recursion depth)\n"
	       "      --pid PID         only samples of process PID\n"
	       "      --comm NAME       only samples whose executable or thread name is NAME\n"
	       "      --trace-id ID     only samples taken in trace ID (32 hex digits)\n"
	       "      --span-id ID      only samples taken in span ID (16 hex digits)\n"
	       "      --attr KEY=VALUE  only samples whose attribute KEY is VALUE (e.g.\n"
	       "                        http.route=/users); up to %d, all must match\n"
	       "      --json            one JSON document instead of text\n"
	       "      --type TYPE       cpu (default) or off_cpu (capture --off-cpu): values\n"
	       "                        of off_cpu are time blocked (s, ms or us as the column\n"
	       "                        headers say; nanoseconds in --json), shares of that\n"
	       "                        time; capture --memory: alloc_space, alloc_objects,\n"
	       "                        inuse_space (bytes held at the end) or inuse_objects\n"
	       "                        (KiB, MiB or GiB as the headers say)\n"
	       "      --time A-B        only samples taken from A to B: clock times (14:03:07),\n"
	       "                        dates (2026-11-29T14:03:07), ns since the epoch, or\n"
	       "                        +2.5s from the first sample (captures with timestamps)\n"
	       "      --timeline        per interval, the share of each process (--by thread:\n"
	       "                        of each thread), as text or --json\n"
	       "      --interval D      timeline interval (default 100ms; s, ms, us, ns)\n"
	       "      --activity        per thread over time: running, runnable, waiting\n"
	       "                        (capture --off-cpu) and the spans it ran in, as text\n"
	       "                        or --json (--interval D: one column; default: a\n"
	       "                        round length for 60 columns)\n"
	       "      --lines           one function row per source line: \"name file:line\"\n"
	       "                        (captures with line information)\n" SYMBOLIZE_OPT_HELP
	       "  -h, --help            this help\n"
	       "\n"
	       "A frame without a name reads as FILE+0xOFFSET (mapping and file offset), or\n"
	       "as file:line for interpreted code; the TYPE column tells kernel, native and\n"
	       "interpreted (cpython, v8js, jvm, ...) frames apart.\n"
	       "A function inlined into its caller gets rows of its own, marked \"[inlined]\".\n"
	       "\n"
	       "JSON keys: \"file\"; \"capture\": {\"host\", \"time\" (RFC 3339 UTC or\n"
	       "null), \"time_unix_nano\", \"duration_seconds\", \"period\", \"period_type\",\n"
	       "\"period_unit\", \"frequency_hz\" (null unless the period is cpu nanoseconds),\n"
	       "\"sample_type\", \"sample_unit\", \"total\", \"processes\", \"stacks\",\n"
	       "\"dropped_samples\", \"truncated_samples\" (of which\n"
	       "\"truncated_depth_limit_samples\" were cut at the depth limit and\n"
	       "\"truncated_unwind_samples\" not unwound to their outermost frame),\n"
	       "\"stack_missing_samples\"} (the loss counts the capturing tool recorded,\n"
	       "0 when none);\n"
	       "\"filter\": {\"pid\", \"comm\"} (null when unset; \"trace_id\", \"span_id\"\n"
	       "and \"attrs\" {KEY: VALUE} only when given); \"total\" (value after\n"
	       "filtering); \"by\" (\"attr:KEY\" for attributes); \"sort\" (\"self\" or\n"
	       "\"inclusive\"); \"top\": [{\"name\" (--by attr:KEY: the value, null for\n"
	       "samples without KEY),\n"
	       "\"type\" (frame type, function rows), \"pid\" (process and thread rows),\n"
	       "\"tid\" (thread rows), \"self\", \"self_share\", \"inclusive\",\n"
	       "\"inclusive_share\"}]; \"processes\": [{\"pid\", \"exe\", \"value\", \"share\"}];\n"
	       "\"threads\": [{\"pid\", \"tid\", \"name\", \"value\", \"share\"}].\n"
	       "Shares are fractions of \"total\" (0..1); lists are sorted, largest first.\n"
	       "\n"
	       "Exit status: 0 printed, 1 unreadable or malformed FILE, 2 bad usage.\n",
	       REPORT_DEFAULT_TOP, VIEW_MAX_ATTR_MATCH);
}

#define usage_error(...) log__usage_error("report", __VA_ARGS__)

/* 0, 1 when --help was printed, or -EINVAL after one error line. */
/* One option of `profcap report`: its handler takes the option's argument
 * (NULL when it has none) and returns 0 or -EINVAL after a usage error. */
struct report_option {
	const char *name;
	int has_arg;
	int (*set)(struct report_opts *o, char *arg);
};

static int opt_top(struct report_opts *o, char *arg)
{
	long long v;

	if (!args__int(arg, 0, 1000000, &v))
		return usage_error("--top needs a number from 0 to 1000000, not '%s'", arg);
	o->top = (unsigned long)v;
	return 0;
}

static int opt_by(struct report_opts *o, char *arg)
{
	size_t i, plen = strlen(BY_ATTR_PREFIX);

	if (!strncmp(arg, BY_ATTR_PREFIX, plen) && arg[plen]) {
		o->by = BY_ATTR;
		o->by_attr = arg + plen;
		return 0;
	}
	for (i = 0; i < BY_ATTR; i++)
		if (!strcmp(arg, report__by_names[i]))
			break;
	if (i == BY_ATTR)
		return usage_error("--by takes function, process, thread, mapping, span or "
				   "attr:KEY (e.g. attr:http.route), not '%s'",
				   arg);
	o->by = (enum report_by)i;
	return 0;
}

static int opt_self(struct report_opts *o, char *arg)
{
	(void)arg;
	o->inclusive = false;
	return 0;
}

static int opt_inclusive(struct report_opts *o, char *arg)
{
	(void)arg;
	o->inclusive = true;
	return 0;
}

static int opt_pid(struct report_opts *o, char *arg)
{
	long long v;

	if (!args__int(arg, INT32_MIN, LLONG_MAX, &v))
		return usage_error("--pid needs a process id, not '%s'", arg);
	o->filter_pid = true;
	o->pid = v;
	return 0;
}

static int opt_comm(struct report_opts *o, char *arg)
{
	if (!*arg)
		return usage_error("--comm needs a non-empty name");
	o->comm = arg;
	return 0;
}

static int opt_type(struct report_opts *o, char *arg)
{
	o->type = arg;
	return 0;
}

static int opt_json(struct report_opts *o, char *arg)
{
	(void)arg;
	o->json = true;
	return 0;
}

static int opt_lines(struct report_opts *o, char *arg)
{
	(void)arg;
	o->lines = true;
	return 0;
}

static int opt_trace_id(struct report_opts *o, char *arg)
{
	if (!hex__decode(arg, o->trace_id, sizeof(o->trace_id)))
		return usage_error("--trace-id needs 32 hex digits (a W3C trace id), not '%s'",
				   arg);
	o->filter_trace = true;
	return 0;
}

static int opt_span_id(struct report_opts *o, char *arg)
{
	if (!hex__decode(arg, o->span_id, sizeof(o->span_id)))
		return usage_error("--span-id needs 16 hex digits (a W3C span id), not '%s'", arg);
	o->filter_span = true;
	return 0;
}

static int opt_attr(struct report_opts *o, char *arg)
{
	return args__attr_match("report", arg, o->attrs, &o->nattrs, VIEW_MAX_ATTR_MATCH);
}

static int opt_time(struct report_opts *o, char *arg)
{
	REPORT_CLI(o)->time = arg;
	return 0;
}

static int opt_timeline(struct report_opts *o, char *arg)
{
	(void)arg;
	REPORT_CLI(o)->timeline = true;
	return 0;
}

static int opt_interval(struct report_opts *o, char *arg)
{
	if (timeslice__parse_duration(arg, &REPORT_CLI(o)->interval_ns))
		return usage_error("--interval needs a duration like 100ms or 1s, not '%s'", arg);
	return 0;
}

static int opt_activity(struct report_opts *o, char *arg)
{
	(void)arg;
	REPORT_CLI(o)->activity = true;
	return 0;
}

static const struct report_option report_options[] = {
	{"top", required_argument, opt_top},
	{"by", required_argument, opt_by},
	{"self", no_argument, opt_self},
	{"inclusive", no_argument, opt_inclusive},
	{"pid", required_argument, opt_pid},
	{"comm", required_argument, opt_comm},
	{"json", no_argument, opt_json},
	{"type", required_argument, opt_type},
	{"lines", no_argument, opt_lines},
	{"trace-id", required_argument, opt_trace_id},
	{"span-id", required_argument, opt_span_id},
	{"attr", required_argument, opt_attr},
	{"time", required_argument, opt_time},
	{"timeline", no_argument, opt_timeline},
	{"interval", required_argument, opt_interval},
	{"activity", no_argument, opt_activity},
};

#define NOPTIONS (sizeof(report_options) / sizeof(report_options[0]))
/* getopt_long()'s value for report_options[i]: past every short option. */
#define OPT_BASE 256

/* @later: the second file of `report A B` (the growth view), or NULL. */
static int parse_args(int argc, char **argv, struct report_opts *o, const char **later)
{
	static const struct option shared[] = {
		SYMBOLIZE_OPT_LONGOPTS,
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct option longopts[NOPTIONS + sizeof(shared) / sizeof(shared[0])];
	size_t i;
	int c, err;

	for (i = 0; i < NOPTIONS; i++)
		longopts[i] = (struct option){report_options[i].name, report_options[i].has_arg,
					      NULL, OPT_BASE + (int)i};
	memcpy(&longopts[NOPTIONS], shared, sizeof(shared));
	report__default_opts(o);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h') {
			report__usage();
			return 1;
		}
		if (c >= OPT_BASE && c < OPT_BASE + (int)NOPTIONS)
			err = report_options[c - OPT_BASE].set(o, optarg);
		else
			err = symbolize_opt__parse(&o->sym, "report", c, optarg, argv);
		if (err)
			return err;
	}
	*later = NULL;
	if (argc - optind == 2) { /* report A B: what grew from A to B */
		o->file = argv[optind];
		*later = argv[optind + 1];
		return 0;
	}
	if (args__one_input("report", argc, argv, &o->file))
		return -EINVAL;
	return 0;
}

int report__print(FILE *f, const struct profile *p, const struct report_opts *o)
{
	struct report r;
	int err;

	err = report__build(&r, o, p);
	if (!err)
		err = report__print_built(f, &r);
	report__release(&r);
	return err;
}

/* report A B: per stack, the values of @o->type (default inuse_space) in A
 * and in B, largest growth first (capture/memory.h). */
static int report_growth(const struct report_opts *o, const char *later)
{
	const char *type = o->type ? o->type : MEMORY_TYPE_INUSE_SPACE;
	struct profile *a = NULL, *b = NULL;
	struct memory_growth_row *rows = NULL;
	__u32 st, su, pt, pu;
	size_t n = 0;
	int err = 1;

	if (symbolize_opt__load(&o->sym, o->file, type, &a) ||
	    symbolize_opt__load(&o->sym, later, type, &b))
		goto out; /* logged */
	err = memory__growth(a, b, &rows, &n);
	if (err) {
		pr_err("cannot compare %s and %s: %s", o->file, later, strerror(-err));
		err = 1;
		goto out;
	}
	profile__value_type(b, 0, &st, &su, &pt, &pu);
	printf("Compared: %s -> %s (%s)\n", o->file, later, type);
	memory__growth_print(stdout, rows, n, o->top, profile__string(b, su, NULL));
	err = fflush(stdout) || ferror(stdout);
out:
	memory__growth_free(rows, n);
	profile__free(a);
	profile__free(b);
	return err;
}

/* The timeline of @p, as --timeline asks. 0 or 1 (logged). */
static int print_timeline(const struct profile *p, const struct report_cli *c)
{
	struct timeline_opts t = {.file = c->o.file,
				  .by_thread = c->o.by == BY_THREAD,
				  .json = c->o.json,
				  .top = 5,
				  .interval_ns = c->interval_ns ?: TIMELINE_DEFAULT_INTERVAL_NS};
	int err = timeline__print(stdout, p, &t);

	if (err == -ENODATA)
		pr_err("%s: --timeline: the profile was " TIMESLICE_NO_TIME, c->o.file);
	else if (err == -E2BIG)
		pr_err("%s: --timeline: more than %u intervals: give a longer --interval",
		       c->o.file, TIMELINE_MAX_INTERVALS);
	else if (err)
		pr_err("%s: cannot build the timeline: %s", c->o.file, strerror(-err));
	return err ? 1 : 0;
}

int report__main(int argc, char **argv)
{
	struct profile *p = NULL;
	struct report_cli c = {0};
	struct report_opts *op = &c.o;
	const char *later;
	int ret, err;

	ret = parse_args(argc, argv, op, &later);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (later)
		return report_growth(op, later);
	if (c.timeline && c.o.by != BY_PROCESS && c.o.by != BY_THREAD && c.o.by != BY_FUNCTION) {
		log__usage_error("report", "--timeline groups by process or thread only");
		return 2;
	}
	if (c.activity)
		return activity_out__report(
			&(struct activity_out_opts){.file = op->file, .interval_ns = c.interval_ns,
						    .json = op->json, .top = op->top,
						    .filter_pid = op->filter_pid, .pid = op->pid,
						    .comm = op->comm},
			c.time);
	if (symbolize_opt__load(&op->sym, op->file, op->type, &p))
		return 1; /* logged */
	if (c.time && timeslice__apply("report", c.time, &p)) {
		profile__free(p);
		return 1;
	}
	if (c.timeline) {
		ret = print_timeline(p, &c);
		profile__free(p);
		return ret ?: (fflush(stdout) ? 1 : 0);
	}
	err = report__print(stdout, p, op);
	profile__free(p);
	if (err) {
		pr_err("%s: cannot build the report: %s", op->file, strerror(-err));
		return 1;
	}
	if (fflush(stdout) || ferror(stdout)) {
		pr_err("cannot write the report: %s", strerror(errno));
		return 1;
	}
	return 0;
}
