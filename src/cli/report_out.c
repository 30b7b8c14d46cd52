/* report_out.c - `profcap report` as text or JSON (see report.h). */
#include "cli/report_int.h"
#include "util/json.h"

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
		fprintf(f,
			"%llu not unwound to the outermost frame: no unwind row, unreadable "
			"stack or unwind tables not loaded yet",
			(unsigned long long)other);
	fprintf(f, ")\n");
}

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

/* How text tables print values: counts as integers; times (nanoseconds)
 * and sizes (bytes) in the unit that suits the total, named in the column
 * headers. */
struct vunit {
	const char *name; /* "s", "ms", "us", "GiB", "MiB", "KiB"; NULL: plain counts */
	double div;	  /* sample units per unit */
};

static struct vunit value_unit(const struct meta_view *m, __u64 total)
{
	if (!strcmp(m->sample_unit, "bytes")) {
		if (total >= 1ull << 30)
			return (struct vunit){"GiB", (double)(1ull << 30)};
		if (total >= 1ull << 20)
			return (struct vunit){"MiB", (double)(1ull << 20)};
		return (struct vunit){"KiB", 1024.0};
	}
	if (strcmp(m->sample_unit, "nanoseconds"))
		return (struct vunit){NULL, 1};
	if (total >= 1000000000ull)
		return (struct vunit){"s", 1e9};
	if (total >= 1000000ull)
		return (struct vunit){"ms", 1e6};
	return (struct vunit){"us", 1e3};
}

/* Value @v right-aligned in @width characters. */
static void put_value(FILE *f, const struct vunit *u, __u64 v, int width)
{
	if (u->name)
		fprintf(f, "%*.3f", width, (double)v / u->div);
	else
		fprintf(f, "%*llu", width, (unsigned long long)v);
}

/* Column header @word, with the unit when values are times ("SELF(ms)"),
 * right-aligned in @width characters. */
static void put_header(FILE *f, const struct vunit *u, const char *word, int width)
{
	char h[32];

	if (u->name)
		snprintf(h, sizeof(h), "%s(%s)", word, u->name);
	else
		snprintf(h, sizeof(h), "%s", word);
	fprintf(f, "%*s", width, h);
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
		fprintf(f,
			"  dropped     %llu samples (not in this capture: tables full, lost while "
			"recording, or drained too late)\n",
			(unsigned long long)meta->samples_dropped);
	if (meta->samples_truncated)
		print_truncated(f, meta);
	if (meta->samples_stack_missing)
		fprintf(f, "  no stack    %llu samples (stack unreadable or lost)\n",
			(unsigned long long)meta->samples_stack_missing);
	if (meta->samples_throttled)
		fprintf(f,
			"  throttled   %llu sampled allocations (back-pressure; weighed into those "
			"kept)\n",
			(unsigned long long)meta->samples_throttled);
	if (meta->samples_untimed)
		fprintf(f, "  time lost   %llu samples (the times ring was full: timed when drained, "
			"up to a second late; marked %s)\n",
			(unsigned long long)meta->samples_untimed, PROFILE_ATTR_TIME_LOST);
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

static void text_frames(FILE *f, const struct report *r, const struct vunit *u, const struct row *v,
			size_t n)
{
	const struct report_opts *o = r->o;
	size_t i, k = shown(o, n);
	int w = u->name ? 13 : 11; /* value columns: room for "INCLUSIVE(ms)" */
	const char *type;

	fprintf(f, "\nTop %zu %s by %s value:\n", k, o->by == BY_MAPPING ? "mappings" : "functions",
		o->inclusive ? "inclusive" : "self");
	fprintf(f, "   SELF%% ");
	put_header(f, u, "SELF", w);
	fprintf(f, "  INCLUSIVE%% ");
	put_header(f, u, "INCLUSIVE", w);
	fprintf(f, "  %s%s\n", o->by == BY_MAPPING ? "" : "TYPE     ",
		o->by == BY_MAPPING ? "MAPPING" : "FUNCTION");
	for (i = 0; i < k; i++) {
		fprintf(f, "  %6.2f%% ", 100.0 * share(v[i].self, r->total));
		put_value(f, u, v[i].self, w);
		fprintf(f, "     %6.2f%% ", 100.0 * share(v[i].incl, r->total));
		put_value(f, u, v[i].incl, w);
		fputs("  ", f);
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
static void text_keyed(FILE *f, const struct report *r, const struct vunit *u, const struct row *v,
		       size_t n)
{
	size_t i, k = shown(r->o, n);

	if (r->o->by == BY_ATTR) {
		fprintf(f, "\nValues of ");
		put_text(f, r->o->by_attr);
		fprintf(f, " (%zu):\n    SHARE ", n);
		put_header(f, u, "VALUE", 11);
		fputs("  ", f);
		put_text(f, r->o->by_attr);
		fputc('\n', f);
	} else {
		fprintf(f, "\nSpans (%zu):\n    SHARE ", n);
		put_header(f, u, "VALUE", 11);
		fputs("  TRACE_ID/SPAN_ID\n", f);
	}
	for (i = 0; i < k; i++) {
		fprintf(f, "  %6.2f%% ", 100.0 * share(v[i].self, r->total));
		put_value(f, u, v[i].self, 11);
		fputs("  ", f);
		put_text(f, *v[i].name ? v[i].name : "(none)");
		fputc('\n', f);
	}
	text_more(f, n, k);
}

/* The process table, or with @threads the thread table (one more column). */
static void text_tasks(FILE *f, const struct report *r, const struct vunit *u, const struct row *v,
		       size_t n, bool threads)
{
	size_t i, k = shown(r->o, n);

	fprintf(f, "\n%s (%zu):\n    SHARE ", threads ? "Threads" : "Processes", n);
	put_header(f, u, "VALUE", 11);
	fprintf(f, "         PID%s\n", threads ? "         TID  NAME" : "  EXE");
	for (i = 0; i < k; i++) {
		fprintf(f, "  %6.2f%% ", 100.0 * share(v[i].self, r->total));
		put_value(f, u, v[i].self, 11);
		fprintf(f, " %11lld", (long long)v[i].pid);
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
			json__fput_str(f, kind == BY_ATTR && !*v[i].name ? NULL : v[i].name);
			if (kind == BY_FUNCTION) {
				fprintf(f, ",\"type\":");
				json__fput_str(f, v[i].type && *v[i].type ? v[i].type : NULL);
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
		json__fput_str(f, v[i].name);
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
	json__fput_str(f, o->file);
	fprintf(f, ",\n\"capture\":{\"host\":");
	json__fput_str(f, m->host);
	fprintf(f, ",\"time\":");
	json__fput_str(f, m->time_json[0] ? m->time_json : NULL);
	fprintf(f, ",\"time_unix_nano\":%llu,\"duration_seconds\":%.6f,\"period\":%llu,",
		(unsigned long long)meta->time_unix_nano, m->duration,
		(unsigned long long)meta->period_ns);
	fprintf(f, "\"period_type\":");
	json__fput_str(f, m->period_type);
	fprintf(f, ",\"period_unit\":");
	json__fput_str(f, m->period_unit);
	if (m->freq > 0)
		fprintf(f, ",\"frequency_hz\":%.3f", m->freq);
	else
		fprintf(f, ",\"frequency_hz\":null");
	fprintf(f, ",\"sample_type\":");
	json__fput_str(f, m->sample_type);
	fprintf(f, ",\"sample_unit\":");
	json__fput_str(f, m->sample_unit);
	fprintf(f, ",\"total\":%llu,\"processes\":%zu,\"stacks\":%zu,",
		(unsigned long long)profile__total(r->p), profile__process_count(r->p), m->stacks);
	fprintf(f,
		"\"dropped_samples\":%llu,\"truncated_samples\":%llu,"
		"\"truncated_depth_limit_samples\":%llu,\"truncated_unwind_samples\":%llu,"
		"\"stack_missing_samples\":%llu,\"untimed_samples\":%llu},\n",
		(unsigned long long)meta->samples_dropped,
		(unsigned long long)meta->samples_truncated, (unsigned long long)depth_cut(meta),
		(unsigned long long)(meta->samples_truncated - depth_cut(meta)),
		(unsigned long long)meta->samples_stack_missing,
		(unsigned long long)meta->samples_untimed);
	fprintf(f, "\"filter\":{\"pid\":");
	if (o->filter_pid)
		fprintf(f, "%lld", (long long)o->pid);
	else
		fprintf(f, "null");
	fprintf(f, ",\"comm\":");
	json__fput_str(f, o->comm);
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
		json__fput_str(f, o->attrs[i].key);
		fputc(':', f);
		json__fput_str(f, o->attrs[i].value);
		if (i + 1 == o->nattrs)
			fputc('}', f);
	}
	fprintf(f, "},\n\"total\":%llu,\"by\":", (unsigned long long)r->total);
	if (o->by == BY_ATTR) {
		char *by = NULL;

		if (asprintf(&by, BY_ATTR_PREFIX "%s", o->by_attr) < 0)
			by = NULL;
		json__fput_str(f, by ? by : BY_ATTR_PREFIX);
		free(by);
	} else {
		fprintf(f, "\"%s\"", report__by_names[o->by]);
	}
	fprintf(f, ",\"sort\":\"%s\"", o->inclusive ? "inclusive" : "self");
}

int report__print_built(FILE *f, const struct report *r)
{
	const struct report_opts *o = r->o;
	struct row *frames = NULL, *procs = NULL, *threads = NULL, *keyed = NULL;
	size_t nf = 0, np = 0, nt = 0, nk = 0;
	struct meta_view m;
	struct vunit u;
	int err;

	err = report__sorted(r->procs, profile__process_count(r->p), false, &procs, &np);
	if (!err)
		err = report__sorted(r->threads.rows, report__group_count(&r->threads), false,
				     &threads, &nt);
	if (!err)
		err = report__sorted(r->frames.rows, report__group_count(&r->frames), o->inclusive,
				     &frames, &nf);
	if (!err)
		err = report__sorted(r->keyed.rows, report__group_count(&r->keyed), false, &keyed,
				     &nk);
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
	u = value_unit(&m, r->total);
	if (o->by == BY_FUNCTION || o->by == BY_MAPPING)
		text_frames(f, r, &u, frames, nf);
	if (o->by == BY_SPAN || o->by == BY_ATTR)
		text_keyed(f, r, &u, keyed, nk);
	text_tasks(f, r, &u, procs, np, false);
	text_tasks(f, r, &u, threads, nt, true);
out:
	free(frames);
	free(procs);
	free(threads);
	free(keyed);
	return err;
}
