/* report.c - `profcap report` (see report.h).
 *
 * One pass over the samples adds each sample's value to its stack, its
 * process and its thread; a second pass over the stacks that got a value
 * gives every group (function or mapping) its self value (the leaf's group)
 * and its inclusive value, counted once per stack however often the group
 * appears in it (recursion). Groups and threads are found through hash
 * tables (intern.h), so the work is linear in samples plus stack frames.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/args.h"
#include "util/intern.h"
#include "util/log.h"
#include "model/profile.h"
#include "model/view.h"
#include "util/hex.h"
#include "util/utf8.h"
#include "cli/report.h"

/* ---- options ----------------------------------------------------------------------- */

void report__default_opts(struct report_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->file = "-";
	o->top = REPORT_DEFAULT_TOP;
}

static const char *const by_names[] = {
	[BY_FUNCTION] = "function",
	[BY_PROCESS] = "process",
	[BY_THREAD] = "thread",
	[BY_MAPPING] = "mapping",
	[BY_SPAN] = "span",
	[BY_ATTR] = "attr",
};

#define BY_ATTR_PREFIX "attr:"

void report__usage(void)
{
	printf("Usage: profcap report FILE [options]\n"
	       "\n"
	       "Show what is hot in a capture: capture metadata, the top functions with self\n"
	       "and inclusive share, and totals per process and per thread. FILE is any OTLP\n"
	       "Profiles file (ProfilesData or ExportProfilesServiceRequest, gzip or not);\n"
	       "'-' reads standard input.\n"
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
	       "      --comm NAME       only samples whose executable name or thread name is NAME\n"
	       "      --trace-id ID     only samples taken in trace ID (32 hex digits)\n"
	       "      --span-id ID      only samples taken in span ID (16 hex digits)\n"
	       "      --attr KEY=VALUE  only samples whose attribute KEY is VALUE (e.g.\n"
	       "                        http.route=/users); up to %d, all must match\n"
	       "      --json            one JSON document instead of text\n"
	       "      --type TYPE       cpu (default) or off_cpu (capture --off-cpu): values\n"
	       "                        of off_cpu are nanoseconds blocked, shares of that time\n"
	       "      --lines           one function row per source line: \"name file:line\"\n"
	       "                        (captures with line information)\n"
	       SYMBOLIZE_OPT_HELP
	       "A function inlined into its caller gets rows of its own, marked \"[inlined]\".\n"
	       "  -h, --help            this help\n"
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
		if (!strcmp(arg, by_names[i]))
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
		return usage_error("--span-id needs 16 hex digits (a W3C span id), not '%s'",
				   arg);
	o->filter_span = true;
	return 0;
}

static int opt_attr(struct report_opts *o, char *arg)
{
	return args__attr_match("report", arg, o->attrs, &o->nattrs, VIEW_MAX_ATTR_MATCH);
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
};

#define NOPTIONS (sizeof(report_options) / sizeof(report_options[0]))
/* getopt_long()'s value for report_options[i]: past every short option. */
#define OPT_BASE 256

static int parse_args(int argc, char **argv, struct report_opts *o)
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
	if (args__one_input("report", argc, argv, &o->file))
		return -EINVAL;
	return 0;
}

/* ---- aggregation ------------------------------------------------------------------ */

struct row {
	const char *name; /* borrowed: from the profile or a group table */
	const char *type; /* frame type (function rows), NULL otherwise */
	__s64 pid, tid;
	__u64 self, incl;
};

/* A set of rows found by key. */
struct group {
	struct intern *keys;
	struct row *rows;
	__u32 *stamp; /* per row: 1 + the last stack that counted it inclusively */
	size_t cap;
};

/* Of the truncated samples, those cut at the depth limit (never more). */
static __u64 depth_cut(const struct profile_meta *m)
{
	return m->samples_truncated_depth < m->samples_truncated ? m->samples_truncated_depth
								 : m->samples_truncated;
}

/* The truncated samples by cause, as the capture recorded them. */
static void print_truncated(FILE *f, const struct profile_meta *m)
{
	__u64 depth = depth_cut(m), other = m->samples_truncated - depth;

	fprintf(f, "  truncated   %llu samples (", (unsigned long long)m->samples_truncated);
	if (depth)
		fprintf(f, "%llu cut at the stack depth limit%s", (unsigned long long)depth,
			other ? "; " : "");
	if (other)
		fprintf(f, "%llu not unwound to the outermost frame: no unwind row, unreadable "
			   "stack or unwind tables not loaded yet",
			(unsigned long long)other);
	fprintf(f, ")\n");
}

static void group_release(struct group *g)
{
	intern__free(g->keys);
	free(g->rows);
	free(g->stamp);
	memset(g, 0, sizeof(*g));
}

static int group_init(struct group *g)
{
	memset(g, 0, sizeof(*g));
	g->keys = intern__new(PROFILE_MAX_ENTRIES);
	return g->keys ? 0 : -ENOMEM;
}

static size_t group_count(const struct group *g)
{
	return intern__count(g->keys);
}

/* Find or add the row for @key; *@row gets it, *@added whether it is new
 * (then zeroed but for @name, which points at the stored key when @key is a
 * NUL-terminated string). 0, -E2BIG or -ENOMEM. */
static int group_get(struct group *g, const void *key, size_t len, struct row **row, bool *added)
{
	size_t n = intern__count(g->keys);
	struct row *r;
	__u32 *st;
	__u32 idx;
	int err;

	if (n >= g->cap) {
		size_t ncap = g->cap ? g->cap * 2 : 256;

		r = realloc(g->rows, ncap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		g->rows = r;
		st = realloc(g->stamp, ncap * sizeof(*st));
		if (!st)
			return -ENOMEM;
		g->stamp = st;
		g->cap = ncap;
	}
	err = intern__put(g->keys, key, len, &idx, added);
	if (err)
		return err;
	r = &g->rows[idx];
	if (*added) {
		memset(r, 0, sizeof(*r));
		r->name = intern__get(g->keys, idx, NULL);
		g->stamp[idx] = 0;
	}
	*row = r;
	return 0;
}

struct thread_key {
	__u64 proc; /* process index */
	__s64 tid;
};

struct report {
	const struct report_opts *o;
	const struct profile *p;
	__u64 total; /* after filtering */
	__u64 *stack_val;
	struct row *procs; /* one per process index */
	struct group threads;
	/* --by span: "TRACE_ID/SPAN_ID" or "(no span)"; --by attr:KEY: the
	 * value, "" for samples without KEY */
	struct group keyed;
	struct group frames; /* functions or mappings */
	__u32 *loc_row;	     /* location -> its first row in rows, UINT32_MAX = not yet */
	__u32 *rows;	     /* rows of each location's frames, innermost first */
	size_t nrows, rows_cap;
};

static void report_release(struct report *r)
{
	free(r->stack_val);
	free(r->procs);
	free(r->loc_row);
	free(r->rows);
	group_release(&r->threads);
	group_release(&r->keyed);
	group_release(&r->frames);
}

/* Whether sample @s passes --trace-id/--span-id and --attr. */
static bool sample_kept(const struct report_opts *o, const struct profile *p,
		      const struct profile_sample_entry *s)
{
	const struct profile_link *l;

	if (!view__sample_matches(p, s, o->attrs, o->nattrs))
		return false;
	if (!o->filter_trace && !o->filter_span)
		return true;
	if (!s->link)
		return false;
	l = profile__link(p, s->link);
	return (!o->filter_trace || !memcmp(l->trace_id, o->trace_id, sizeof(l->trace_id))) &&
	       (!o->filter_span || !memcmp(l->span_id, o->span_id, sizeof(l->span_id)));
}

/* --by span or attr:KEY: count @s in the row of its span or of its value
 * of the attribute (keyed and named by its text). */
static int add_keyed(struct report *r, const struct profile_sample_entry *s)
{
	char key[2 * 16 + 1 + 2 * 8 + 1] = "(no span)";
	const char *k = key;
	struct row *row;
	bool added;
	int err;

	if (r->o->by == BY_ATTR) {
		k = view__sample_attr(r->p, s, r->o->by_attr, key, sizeof(key));
		if (!k)
			k = ""; /* no value is empty: the "(none)" row */
	} else if (s->link) {
		const struct profile_link *l = profile__link(r->p, s->link);

		hex__encode(key, l->trace_id, sizeof(l->trace_id));
		key[32] = '/';
		hex__encode(key + 33, l->span_id, sizeof(l->span_id));
	}
	err = group_get(&r->keyed, k, strlen(k) + 1, &row, &added);
	if (err)
		return err;
	if (added) {
		row->pid = -1;
		row->tid = -1;
	}
	row->self += s->value;
	row->incl += s->value;
	return 0;
}

static int add_samples(struct report *r)
{
	const struct report_opts *o = r->o;
	const struct profile *p = r->p;
	size_t np = profile__process_count(p), i, j, ns;
	const struct profile_process_desc *pd;
	const struct profile_sample_entry *s;
	struct thread_key tk;
	const char *tname;
	struct row *tr;
	bool pcomm, added;
	int err;

	for (i = 0; i < np; i++) {
		pd = profile__process(p, i);
		r->procs[i].name = pd->exe_name ? pd->exe_name : "";
		r->procs[i].pid = pd->pid;
		r->procs[i].tid = -1;
		if (o->filter_pid && pd->pid != o->pid)
			continue;
		pcomm = o->comm && pd->exe_name && !strcmp(pd->exe_name, o->comm);
		ns = profile__sample_count(p, i);
		for (j = 0; j < ns; j++) {
			s = profile__sample(p, i, j);
			if (!sample_kept(o, p, s))
				continue;
			memset(&tk, 0, sizeof(tk));
			tk.proc = i;
			view__sample_thread(p, s, &tk.tid, &tname);
			if (o->comm && !pcomm && strcmp(tname, o->comm))
				continue;
			if (o->by == BY_SPAN || o->by == BY_ATTR) {
				err = add_keyed(r, s);
				if (err)
					return err;
			}
			err = group_get(&r->threads, &tk, sizeof(tk), &tr, &added);
			if (err)
				return err;
			if (added) {
				tr->name = tname;
				tr->pid = pd->pid;
				tr->tid = tk.tid;
			} else if (!*tr->name) {
				tr->name = tname;
			}
			tr->self += s->value;
			tr->incl += s->value;
			r->procs[i].self += s->value;
			r->procs[i].incl += s->value;
			r->stack_val[s->stack] += s->value;
			r->total += s->value;
		}
	}
	return 0;
}

static int frame_row(struct report *r, __u32 loc, __u32 *out);

/* Name of frame @k of location @loc (of @n): the function, marked when
 * inlined, with file:line under --lines. Borrowed from @p or @buf. */
static const char *line_row_name(const struct report *r, __u32 loc, size_t k, size_t n,
				 char *buf, size_t len)
{
	char scratch[256];
	const char *name = view__line_name(r->p, loc, k, scratch, sizeof(scratch));
	const char *file = "";
	__s64 line = 0;

	if (r->o->lines)
		file = view__line_source(r->p, loc, k, &line);
	if (!*file && k + 1 == n)
		return name == scratch ? (snprintf(buf, len, "%s", name), buf) : name;
	snprintf(buf, len, "%s%s%s%s", name, k + 1 < n ? " [inlined]" : "", *file ? " " : "",
		 file);
	if (*file && line)
		snprintf(buf + strlen(buf), len - strlen(buf), ":%lld", (long long)line);
	return buf;
}

/* Rows of the frames of location @loc (innermost first): *@out gets them,
 * *@n their number. */
static int frame_rows(struct report *r, __u32 loc, const __u32 **out, size_t *n)
{
	const char *type = view__location_type(r->p, loc);
	size_t k, nl = view__line_count(r->p, loc);
	char buf[1024];
	struct row *row;
	bool added;
	__u32 *nv;
	int err;

	if (r->o->by == BY_MAPPING || nl == 1) {
		__u32 one;

		if (r->loc_row[loc] == UINT32_MAX) {
			err = frame_row(r, loc, &one);
			if (err)
				return err;
		}
	}
	if (r->loc_row[loc] != UINT32_MAX) {
		*out = &r->rows[r->loc_row[loc]];
		*n = r->o->by == BY_MAPPING ? 1 : nl;
		return 0;
	}
	if (r->nrows + nl > r->rows_cap) {
		size_t ncap = (r->rows_cap ? r->rows_cap * 2 : 256) + nl;

		nv = realloc(r->rows, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		r->rows = nv;
		r->rows_cap = ncap;
	}
	for (k = 0; k < nl; k++) {
		const char *name = line_row_name(r, loc, k, nl, buf, sizeof(buf));

		err = group_get(&r->frames, name, strlen(name) + 1, &row, &added);
		if (err)
			return err;
		if (added)
			row->type = type;
		r->rows[r->nrows + k] = (__u32)(row - r->frames.rows);
	}
	r->loc_row[loc] = (__u32)r->nrows;
	r->nrows += nl;
	*out = &r->rows[r->loc_row[loc]];
	*n = nl;
	return 0;
}

/* Row in r->frames of location @loc read as one frame (a mapping, or a
 * location without inlined frames), recorded in r->rows. */
static int frame_row(struct report *r, __u32 loc, __u32 *out)
{
	const struct profile_location_entry *l;
	const char *name, *type = NULL;
	char scratch[1024];
	struct row *row;
	bool added;
	__u32 *nv;
	int err;

	if (r->nrows + 1 > r->rows_cap) {
		size_t ncap = r->rows_cap ? r->rows_cap * 2 : 256;

		nv = realloc(r->rows, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		r->rows = nv;
		r->rows_cap = ncap;
	}
	if (r->o->by == BY_MAPPING) {
		l = profile__location(r->p, loc);
		name = l->mapping
			       ? profile__string(r->p, profile__mapping(r->p, l->mapping)->filename,
						 NULL)
			       : "";
		if (!*name)
			name = "[unknown]";
	} else {
		name = line_row_name(r, loc, 0, 1, scratch, sizeof(scratch));
		type = view__location_type(r->p, loc);
	}
	err = group_get(&r->frames, name, strlen(name) + 1, &row, &added);
	if (err)
		return err;
	if (added)
		row->type = type;
	*out = (__u32)(row - r->frames.rows);
	r->rows[r->nrows] = *out;
	r->loc_row[loc] = (__u32)r->nrows++;
	return 0;
}

static int add_stacks(struct report *r)
{
	size_t nstacks = profile__stack_count(r->p), n, k;
	const __u32 *locs;
	struct row *row;
	__u32 i, g;
	bool added;
	__u64 v;
	int err;

	for (i = 0; i < nstacks; i++) {
		v = r->stack_val[i];
		if (!v)
			continue;
		locs = profile__stack(r->p, i, &n);
		if (!n) {
			err = group_get(&r->frames, "[no stack]", sizeof("[no stack]"), &row,
					&added);
			if (err)
				return err;
			row->self += v;
			row->incl += v;
			continue;
		}
		for (k = 0; k < n; k++) {
			const __u32 *rows;
			size_t nr, m;

			err = frame_rows(r, locs[k], &rows, &nr);
			if (err)
				return err;
			for (m = 0; m < nr; m++) {
				g = rows[m];
				/* Self: the innermost frame of the leaf. */
				if (!k && !m)
					r->frames.rows[g].self += v;
				if (r->frames.stamp[g] != i + 1) {
					r->frames.stamp[g] = i + 1;
					r->frames.rows[g].incl += v;
				}
			}
		}
	}
	return 0;
}

static int report_build(struct report *r, const struct report_opts *o, const struct profile *p)
{
	size_t nloc = profile__location_count(p);
	int err;

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->p = p;
	err = group_init(&r->threads);
	if (!err)
		err = group_init(&r->keyed);
	if (!err)
		err = group_init(&r->frames);
	if (err)
		return err;
	r->stack_val = calloc(profile__stack_count(p), sizeof(*r->stack_val));
	r->procs = calloc(profile__process_count(p) + 1, sizeof(*r->procs));
	r->loc_row = malloc(nloc * sizeof(*r->loc_row));
	if (!r->stack_val || !r->procs || !r->loc_row)
		return -ENOMEM;
	memset(r->loc_row, 0xff, nloc * sizeof(*r->loc_row));
	err = add_samples(r);
	if (!err && (o->by == BY_FUNCTION || o->by == BY_MAPPING))
		err = add_stacks(r);
	return err;
}

/* ---- sorting ----------------------------------------------------------------------- */

static int cmp_tail(const struct row *a, const struct row *b)
{
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return 0;
}

static int cmp_self(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->incl != b->incl)
		return a->incl > b->incl ? -1 : 1;
	return cmp_tail(a, b);
}

static int cmp_incl(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->incl != b->incl)
		return a->incl > b->incl ? -1 : 1;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return cmp_tail(a, b);
}

/* Copy the rows with a value into a new sorted array (*@out, *@n). */
static int sorted(const struct row *rows, size_t count, bool inclusive, struct row **out, size_t *n)
{
	struct row *v;
	size_t i, k = 0;

	v = malloc((count + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < count; i++)
		if (rows[i].self || rows[i].incl)
			v[k++] = rows[i];
	qsort(v, k, sizeof(*v), inclusive ? cmp_incl : cmp_self);
	*out = v;
	*n = k;
	return 0;
}

/* ---- output ------------------------------------------------------------------------ */

/* @s for a terminal: control bytes and invalid UTF-8 become '?'. */
static void put_text(FILE *f, const char *s)
{
	size_t n;

	while (*s) {
		n = utf8__printable(s, SIZE_MAX);
		if (!n) {
			fputc('?', f);
			s++;
			continue;
		}
		fwrite(s, 1, n, f);
		s += n;
	}
}

/* @s as a JSON string: escapes, invalid UTF-8 bytes become U+FFFD. */
static void put_json_str(FILE *f, const char *s)
{
	unsigned char c;
	size_t n;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*s) {
		c = (unsigned char)*s;
		n = utf8__seq(s);
		if (!n) {
			fputs("\\ufffd", f);
			s++;
		} else if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			s++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			s++;
		} else {
			fwrite(s, 1, n, f);
			s += n;
		}
	}
	fputc('"', f);
}

static double share(__u64 v, __u64 total)
{
	return total ? (double)v / (double)total : 0.0;
}

struct meta_view {
	const char *host;
	char time_text[64], time_json[64]; /* "" when unknown */
	double duration;
	double freq; /* 0 when not a cpu-nanoseconds period */
	const char *sample_type, *sample_unit, *period_type, *period_unit;
	size_t stacks;
};

static void meta_view(const struct profile *p, struct meta_view *m)
{
	const struct profile_meta *meta = profile__meta(p);
	__u32 st, su, pt, pu;
	time_t t;
	struct tm tm;

	memset(m, 0, sizeof(*m));
	m->host = meta->host_name && *meta->host_name ? meta->host_name : NULL;
	if (meta->time_unix_nano) {
		t = (time_t)(meta->time_unix_nano / 1000000000ull);
		if (gmtime_r(&t, &tm)) {
			strftime(m->time_text, sizeof(m->time_text), "%Y-%m-%d %H:%M:%S UTC", &tm);
			strftime(m->time_json, sizeof(m->time_json), "%Y-%m-%dT%H:%M:%SZ", &tm);
		}
	}
	m->duration = meta->duration_nano / 1e9;
	profile__value_types(p, &st, &su, &pt, &pu);
	m->sample_type = profile__string(p, st, NULL);
	m->sample_unit = profile__string(p, su, NULL);
	m->period_type = profile__string(p, pt, NULL);
	m->period_unit = profile__string(p, pu, NULL);
	if (meta->period_ns && !strcmp(m->period_type, "cpu") &&
	    !strcmp(m->period_unit, "nanoseconds"))
		m->freq = 1e9 / (double)meta->period_ns;
	m->stacks = profile__stack_count(p) - 1;
}

/* Unit word for values: "samples" for sample counts, else the sample unit. */
static const char *value_word(const struct meta_view *m)
{
	if (!strcmp(m->sample_type, "samples") || !*m->sample_unit)
		return "samples";
	return m->sample_unit;
}

/* Whether any option keeps only some samples. */
static bool filtered(const struct report_opts *o)
{
	return o->filter_pid || o->comm || o->filter_trace || o->filter_span || o->nattrs;
}

static void text_header(FILE *f, const struct report *r, const struct meta_view *m)
{
	const struct profile_meta *meta = profile__meta(r->p);
	const struct report_opts *o = r->o;

	fprintf(f, "Capture: ");
	put_text(f, strcmp(o->file, "-") ? o->file : "(standard input)");
	fprintf(f, "\n  host        ");
	put_text(f, m->host ? m->host : "(unknown)");
	fprintf(f, "\n  time        %s\n", m->time_text[0] ? m->time_text : "(unknown)");
	if (meta->duration_nano)
		fprintf(f, "  duration    %.2f s\n", m->duration);
	else
		fprintf(f, "  duration    (unknown)\n");
	if (m->freq > 0)
		fprintf(f, "  frequency   %.0f Hz (period %llu ns of cpu)\n", m->freq,
			(unsigned long long)meta->period_ns);
	else if (meta->period_ns) {
		fprintf(f, "  period      %llu ", (unsigned long long)meta->period_ns);
		put_text(f, m->period_unit);
		fprintf(f, " of ");
		put_text(f, m->period_type);
		fputc('\n', f);
	}
	fprintf(f, "  value       ");
	put_text(f, m->sample_type);
	fputc('/', f);
	put_text(f, m->sample_unit);
	fprintf(f, "\n  total       %llu %s", (unsigned long long)profile__total(r->p),
		value_word(m));
	/* Time values (off-CPU): also in seconds; shares below are of that time. */
	if (!strcmp(m->sample_unit, "nanoseconds") && !strcmp(m->sample_type, "off_cpu"))
		fprintf(f, " (%.3f s)", profile__total(r->p) / 1e9);
	fputc('\n', f);
	fprintf(f, "  processes   %zu\n  stacks      %zu\n", profile__process_count(r->p),
		m->stacks);
	/* What the capture could not keep whole: the report above is short of
	 * the dropped samples, and the others' stacks are incomplete. */
	if (meta->samples_dropped)
		fprintf(f, "  dropped     %llu samples (a table was full; not in this report)\n",
			(unsigned long long)meta->samples_dropped);
	if (meta->samples_truncated)
		print_truncated(f, meta);
	if (meta->samples_stack_missing)
		fprintf(f, "  no stack    %llu samples (stack unreadable or lost)\n",
			(unsigned long long)meta->samples_stack_missing);
	if (filtered(o)) {
		char hex[33];
		size_t i;

		fprintf(f, "  filter     ");
		if (o->filter_pid)
			fprintf(f, " pid %lld", (long long)o->pid);
		if (o->comm) {
			fprintf(f, " comm ");
			put_text(f, o->comm);
		}
		hex__encode(hex, o->trace_id, sizeof(o->trace_id));
		if (o->filter_trace)
			fprintf(f, " trace %s", hex);
		hex__encode(hex, o->span_id, sizeof(o->span_id));
		if (o->filter_span)
			fprintf(f, " span %s", hex);
		for (i = 0; i < o->nattrs; i++) {
			fputc(' ', f);
			put_text(f, o->attrs[i].key);
			fputc('=', f);
			put_text(f, o->attrs[i].value);
		}
		fprintf(f, ": %llu %s (%.2f%%)\n", (unsigned long long)r->total, value_word(m),
			100.0 * share(r->total, profile__total(r->p)));
	}
}

static size_t shown(const struct report_opts *o, size_t n)
{
	return o->top && o->top < n ? o->top : n;
}

static void text_more(FILE *f, size_t n, size_t k)
{
	if (k < n)
		fprintf(f, "  ... %zu more (--top 0 shows all)\n", n - k);
}

static void text_frames(FILE *f, const struct report *r, const struct row *v, size_t n)
{
	const struct report_opts *o = r->o;
	size_t i, k = shown(o, n);
	const char *type;

	fprintf(f, "\nTop %zu %s by %s value:\n", k, o->by == BY_MAPPING ? "mappings" : "functions",
		o->inclusive ? "inclusive" : "self");
	fprintf(f, "   SELF%%        SELF  INCLUSIVE%%   INCLUSIVE  %s%s\n",
		o->by == BY_MAPPING ? "" : "TYPE     ",
		o->by == BY_MAPPING ? "MAPPING" : "FUNCTION");
	for (i = 0; i < k; i++) {
		fprintf(f, "  %6.2f%% %11llu     %6.2f%% %11llu  ",
			100.0 * share(v[i].self, r->total), (unsigned long long)v[i].self,
			100.0 * share(v[i].incl, r->total), (unsigned long long)v[i].incl);
		if (o->by != BY_MAPPING) {
			type = v[i].type && *v[i].type ? v[i].type : "-";
			put_text(f, type);
			fprintf(f, "%*s", strlen(type) < 8 ? (int)(9 - strlen(type)) : 1, "");
		}
		put_text(f, v[i].name);
		fputc('\n', f);
	}
	text_more(f, n, k);
}

/* --by span: the samples' OpenTelemetry spans; --by attr:KEY: the values
 * of attribute KEY. */
static void text_keyed(FILE *f, const struct report *r, const struct row *v, size_t n)
{
	size_t i, k = shown(r->o, n);

	if (r->o->by == BY_ATTR) {
		fprintf(f, "\nValues of ");
		put_text(f, r->o->by_attr);
		fprintf(f, " (%zu):\n    SHARE       VALUE  ", n);
		put_text(f, r->o->by_attr);
		fputc('\n', f);
	} else {
		fprintf(f, "\nSpans (%zu):\n    SHARE       VALUE  TRACE_ID/SPAN_ID\n", n);
	}
	for (i = 0; i < k; i++) {
		fprintf(f, "  %6.2f%% %11llu  ", 100.0 * share(v[i].self, r->total),
			(unsigned long long)v[i].self);
		put_text(f, *v[i].name ? v[i].name : "(none)");
		fputc('\n', f);
	}
	text_more(f, n, k);
}

/* The process table, or with @threads the thread table (one more column). */
static void text_tasks(FILE *f, const struct report *r, const struct row *v, size_t n,
		       bool threads)
{
	size_t i, k = shown(r->o, n);

	fprintf(f, "\n%s (%zu):\n    SHARE       VALUE         PID%s\n",
		threads ? "Threads" : "Processes", n,
		threads ? "         TID  NAME" : "  EXE");
	for (i = 0; i < k; i++) {
		fprintf(f, "  %6.2f%% %11llu %11lld", 100.0 * share(v[i].self, r->total),
			(unsigned long long)v[i].self, (long long)v[i].pid);
		if (threads)
			fprintf(f, " %11lld", (long long)v[i].tid);
		fputs("  ", f);
		put_text(f, *v[i].name ? v[i].name : "(unknown)");
		fputc('\n', f);
	}
	text_more(f, n, k);
}

static void json_rows(FILE *f, const struct report *r, const char *key, const struct row *v,
		      size_t n, enum report_by kind)
{
	size_t i, k = shown(r->o, n);

	fprintf(f, ",\n\"%s\":[", key);
	for (i = 0; i < k; i++) {
		fprintf(f, "%s\n {", i ? "," : "");
		if (kind == BY_FUNCTION || kind == BY_MAPPING || !strcmp(key, "top")) {
			fprintf(f, "\"name\":");
			put_json_str(f, kind == BY_ATTR && !*v[i].name ? NULL : v[i].name);
			if (kind == BY_FUNCTION) {
				fprintf(f, ",\"type\":");
				put_json_str(f, v[i].type && *v[i].type ? v[i].type : NULL);
			}
			if (kind == BY_PROCESS || kind == BY_THREAD)
				fprintf(f, ",\"pid\":%lld", (long long)v[i].pid);
			if (kind == BY_THREAD)
				fprintf(f, ",\"tid\":%lld", (long long)v[i].tid);
			fprintf(f,
				",\"self\":%llu,\"self_share\":%.6f,\"inclusive\":%llu,"
				"\"inclusive_share\":%.6f}",
				(unsigned long long)v[i].self, share(v[i].self, r->total),
				(unsigned long long)v[i].incl, share(v[i].incl, r->total));
			continue;
		}
		fprintf(f, "\"pid\":%lld,", (long long)v[i].pid);
		if (kind == BY_THREAD)
			fprintf(f, "\"tid\":%lld,\"name\":", (long long)v[i].tid);
		else
			fprintf(f, "\"exe\":");
		put_json_str(f, v[i].name);
		fprintf(f, ",\"value\":%llu,\"share\":%.6f}", (unsigned long long)v[i].self,
			share(v[i].self, r->total));
	}
	fprintf(f, "]");
}

static void json_header(FILE *f, const struct report *r, const struct meta_view *m)
{
	const struct profile_meta *meta = profile__meta(r->p);
	const struct report_opts *o = r->o;

	fprintf(f, "{\"file\":");
	put_json_str(f, o->file);
	fprintf(f, ",\n\"capture\":{\"host\":");
	put_json_str(f, m->host);
	fprintf(f, ",\"time\":");
	put_json_str(f, m->time_json[0] ? m->time_json : NULL);
	fprintf(f, ",\"time_unix_nano\":%llu,\"duration_seconds\":%.6f,\"period\":%llu,",
		(unsigned long long)meta->time_unix_nano, m->duration,
		(unsigned long long)meta->period_ns);
	fprintf(f, "\"period_type\":");
	put_json_str(f, m->period_type);
	fprintf(f, ",\"period_unit\":");
	put_json_str(f, m->period_unit);
	if (m->freq > 0)
		fprintf(f, ",\"frequency_hz\":%.3f", m->freq);
	else
		fprintf(f, ",\"frequency_hz\":null");
	fprintf(f, ",\"sample_type\":");
	put_json_str(f, m->sample_type);
	fprintf(f, ",\"sample_unit\":");
	put_json_str(f, m->sample_unit);
	fprintf(f, ",\"total\":%llu,\"processes\":%zu,\"stacks\":%zu,",
		(unsigned long long)profile__total(r->p), profile__process_count(r->p), m->stacks);
	fprintf(f,
		"\"dropped_samples\":%llu,\"truncated_samples\":%llu,"
		"\"truncated_depth_limit_samples\":%llu,\"truncated_unwind_samples\":%llu,"
		"\"stack_missing_samples\":%llu},\n",
		(unsigned long long)meta->samples_dropped,
		(unsigned long long)meta->samples_truncated, (unsigned long long)depth_cut(meta),
		(unsigned long long)(meta->samples_truncated - depth_cut(meta)),
		(unsigned long long)meta->samples_stack_missing);
	fprintf(f, "\"filter\":{\"pid\":");
	if (o->filter_pid)
		fprintf(f, "%lld", (long long)o->pid);
	else
		fprintf(f, "null");
	fprintf(f, ",\"comm\":");
	put_json_str(f, o->comm);
	{ /* only when given: the filter object keeps its keys otherwise */
		char hex[33];

		hex__encode(hex, o->trace_id, sizeof(o->trace_id));
		if (o->filter_trace)
			fprintf(f, ",\"trace_id\":\"%s\"", hex);
		hex__encode(hex, o->span_id, sizeof(o->span_id));
		if (o->filter_span)
			fprintf(f, ",\"span_id\":\"%s\"", hex);
	}
	for (size_t i = 0; i < o->nattrs; i++) {
		fprintf(f, "%s", i ? "," : ",\"attrs\":{");
		put_json_str(f, o->attrs[i].key);
		fputc(':', f);
		put_json_str(f, o->attrs[i].value);
		if (i + 1 == o->nattrs)
			fputc('}', f);
	}
	fprintf(f, "},\n\"total\":%llu,\"by\":", (unsigned long long)r->total);
	if (o->by == BY_ATTR) {
		char *by = NULL;

		if (asprintf(&by, BY_ATTR_PREFIX "%s", o->by_attr) < 0)
			by = NULL;
		put_json_str(f, by ? by : BY_ATTR_PREFIX);
		free(by);
	} else {
		fprintf(f, "\"%s\"", by_names[o->by]);
	}
	fprintf(f, ",\"sort\":\"%s\"", o->inclusive ? "inclusive" : "self");
}

static int print_report(FILE *f, const struct report *r)
{
	const struct report_opts *o = r->o;
	struct row *frames = NULL, *procs = NULL, *threads = NULL, *keyed = NULL;
	size_t nf = 0, np = 0, nt = 0, nk = 0;
	struct meta_view m;
	int err;

	err = sorted(r->procs, profile__process_count(r->p), false, &procs, &np);
	if (!err)
		err = sorted(r->threads.rows, group_count(&r->threads), false, &threads, &nt);
	if (!err)
		err = sorted(r->frames.rows, group_count(&r->frames), o->inclusive, &frames, &nf);
	if (!err)
		err = sorted(r->keyed.rows, group_count(&r->keyed), false, &keyed, &nk);
	if (err)
		goto out;
	meta_view(r->p, &m);
	if (o->json) {
		json_header(f, r, &m);
		if (o->by == BY_PROCESS)
			json_rows(f, r, "top", procs, np, BY_PROCESS);
		else if (o->by == BY_THREAD)
			json_rows(f, r, "top", threads, nt, BY_THREAD);
		else if (o->by == BY_SPAN || o->by == BY_ATTR)
			json_rows(f, r, "top", keyed, nk, o->by);
		else
			json_rows(f, r, "top", frames, nf, o->by);
		json_rows(f, r, "processes", procs, np, BY_PROCESS);
		json_rows(f, r, "threads", threads, nt, BY_THREAD);
		fprintf(f, "}\n");
		goto out;
	}
	text_header(f, r, &m);
	if (!r->total) {
		fprintf(f, "\nNo samples%s.\n",
			filtered(o) ? " match the filter" : " in this capture");
		goto out;
	}
	if (o->by == BY_FUNCTION || o->by == BY_MAPPING)
		text_frames(f, r, frames, nf);
	if (o->by == BY_SPAN || o->by == BY_ATTR)
		text_keyed(f, r, keyed, nk);
	text_tasks(f, r, procs, np, false);
	text_tasks(f, r, threads, nt, true);
out:
	free(frames);
	free(procs);
	free(threads);
	free(keyed);
	return err;
}

int report__print(FILE *f, const struct profile *p, const struct report_opts *o)
{
	struct report r;
	int err;

	err = report_build(&r, o, p);
	if (!err)
		err = print_report(f, &r);
	report_release(&r);
	return err;
}

int report__main(int argc, char **argv)
{
	struct profile *p = NULL;
	struct report_opts o;
	int ret, err;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (symbolize_opt__load(&o.sym, o.file, o.type, &p))
		return 1; /* logged */
	err = report__print(stdout, p, &o);
	profile__free(p);
	if (err) {
		pr_err("%s: cannot build the report: %s", o.file, strerror(-err));
		return 1;
	}
	if (fflush(stdout) || ferror(stdout)) {
		pr_err("cannot write the report: %s", strerror(errno));
		return 1;
	}
	return 0;
}
