/* activity_out.c - `profcap report --activity` (see activity_out.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/activity_out.h"
#include "cli/input.h"
#include "cli/timeslice.h"
#include "model/activity.h"
#include "model/profile.h"
#include "util/hex.h"
#include "util/json.h"
#include "util/log.h"

#define NS 1e9
/* Letters of a thread's spans in its text row; '*' past them or where two
 * spans share an interval. */
static const char span_letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
#define NLETTERS (sizeof(span_letters) - 1)

/* Waiting time of @t: its three wait states. */
static __u64 waiting_ns(const __u64 *ns)
{
	return ns[ACTIVITY_INTERRUPTIBLE] + ns[ACTIVITY_UNINTERRUPTIBLE] + ns[ACTIVITY_OTHER_WAIT];
}

static char span_char(size_t k)
{
	return k < NLETTERS ? span_letters[k] : '*';
}

/* The span letter of interval @i of @t: ' ' for none, '*' for several. */
static char span_cell(const struct activity *a, const struct activity_thread *t, size_t i)
{
	__u64 bs = a->start + i * a->interval_ns, be = bs + a->interval_ns;
	char c = ' ';
	size_t k;

	for (k = 0; k < t->nspans; k++) {
		if (t->spans[k].start >= be || t->spans[k].end <= bs)
			continue;
		if (c != ' ')
			return '*';
		c = span_char(k);
	}
	return c;
}

static void print_legend(FILE *f, const struct activity *a)
{
	unsigned int s;

	fputs("legend:", f);
	for (s = 0; s < ACTIVITY__STATES; s++)
		fprintf(f, "  %c %s", activity__state_char(s), activity__state_name(s));
	fputs("  (blank: before the thread's first or after its last sample)\n", f);
	if (!a->has_wait)
		fputs("no off-CPU waits in this profile: capture with --off-cpu (and "
		      "--off-cpu-runnable for preemption) to see waiting and runnable time\n",
		      f);
	else if (!a->has_runnable)
		fputs("no runnable waits: capture with --off-cpu-runnable to see preemption\n", f);
}

static void print_thread_text(FILE *f, const struct activity *a, const struct activity_thread *t,
			      const struct profile *p)
{
	__u64 whole = t->last - t->first;
	char id[48], tr[33], sp[17];
	size_t i;

	snprintf(id, sizeof(id), "%lld/%lld", (long long)t->pid, (long long)t->tid);
	fprintf(f, "%-14s %-16.16s |", id, t->name);
	for (i = 0; i < a->nintervals; i++)
		fputc(activity__state_char(activity__dominant(a, t, i)), f);
	fprintf(f, "| %7.3f %7.3f %7.3f %7.3f  (%.0f%% running, %.0f%% waiting)\n",
		(double)t->ns[ACTIVITY_RUNNING] / NS, (double)t->ns[ACTIVITY_RUNNABLE] / NS,
		(double)waiting_ns(t->ns) / NS, (double)t->ns[ACTIVITY_UNKNOWN] / NS,
		whole ? 100.0 * (double)t->ns[ACTIVITY_RUNNING] / (double)whole : 0.0,
		whole ? 100.0 * (double)waiting_ns(t->ns) / (double)whole : 0.0);
	if (!t->nspans)
		return;
	fprintf(f, "%-14s %-16s |", "", "  spans");
	for (i = 0; i < a->nintervals; i++)
		fputc(span_cell(a, t, i), f);
	fputs("|\n", f);
	for (i = 0; i < t->nspans; i++) {
		const struct activity_span *s = &t->spans[i];
		const struct profile_link *l = profile__link(p, s->link);

		hex__encode(tr, l->trace_id, sizeof(l->trace_id));
		hex__encode(sp, l->span_id, sizeof(l->span_id));
		fprintf(f, "%-14s %-16s   %c %s/%s  +%.3fs to +%.3fs  cpu %.3f s, off-CPU %.3f s\n",
			"", "", span_char(i), tr, sp, (double)(s->start - a->start) / NS,
			(double)(s->end - a->start) / NS, (double)s->cpu_ns / NS,
			(double)s->wait_ns / NS);
	}
}

static void print_text(FILE *f, const struct activity *a, const struct profile *p,
		       const struct activity_out_opts *o)
{
	char from[32], to[32];
	size_t i;

	timeslice__fmt_clock(a->start, from, sizeof(from));
	timeslice__fmt_clock(a->end, to, sizeof(to));
	fprintf(f, "Thread activity of %s: %s to %s (%.3f s), one column = %.3f s\n", o->file, from,
		to, (double)(a->end - a->start) / NS, (double)a->interval_ns / NS);
	print_legend(f, a);
	fprintf(f, "\n%-14s %-16s |%-*s| %7s %7s %7s %7s  (seconds)\n", "pid/tid", "name",
		(int)a->nintervals, "+0s", "running", "runnabl", "waiting", "unknown");
	for (i = 0; i < a->nthreads; i++)
		print_thread_text(f, a, &a->threads[i], p);
	if (a->threads_hidden)
		fprintf(f, "%zu more threads not shown (--top N, at most %u)\n", a->threads_hidden,
			ACTIVITY_MAX_THREADS);
	if (a->untimed)
		fprintf(f, "%llu samples without time left out\n", (unsigned long long)a->untimed);
	if (a->segments_dropped || a->spans_dropped || a->dropped)
		fprintf(f,
			"capped: %llu segments, %llu span pieces, %llu pieces of untracked "
			"threads left out\n",
			(unsigned long long)a->segments_dropped,
			(unsigned long long)a->spans_dropped, (unsigned long long)a->dropped);
}

static void json_totals(FILE *f, const __u64 *ns)
{
	unsigned int s;

	fputc('{', f);
	for (s = 0; s < ACTIVITY__STATES; s++)
		fprintf(f, "%s\"%s\":%llu", s ? "," : "", activity__state_name(s),
			(unsigned long long)ns[s]);
	fprintf(f, ",\"waiting_all\":%llu}", (unsigned long long)waiting_ns(ns));
}

static void json_intervals(FILE *f, const struct activity *a, const struct activity_thread *t)
{
	unsigned int s;
	size_t i;

	fputs(",\"row\":\"", f);
	for (i = 0; i < a->nintervals; i++)
		fputc(activity__state_char(activity__dominant(a, t, i)), f);
	fputs("\",\"intervals\":{", f);
	for (s = 0; s < ACTIVITY__STATES; s++) {
		fprintf(f, "%s\"%s\":[", s ? "," : "", activity__state_name(s));
		for (i = 0; i < a->nintervals; i++)
			fprintf(f, "%s%llu", i ? "," : "",
				(unsigned long long)t->cells[i * ACTIVITY__STATES + s]);
		fputc(']', f);
	}
	fputc('}', f);
}

static void json_spans(FILE *f, const struct activity *a, const struct activity_thread *t,
		       const struct profile *p)
{
	char tr[33], sp[17];
	size_t i;

	fputs(",\"segments\":[", f);
	for (i = 0; i < t->nsegs; i++)
		fprintf(f, "%s{\"start_unix_nano\":%llu,\"end_unix_nano\":%llu,\"state\":\"%s\"}",
			i ? "," : "", (unsigned long long)t->segs[i].start,
			(unsigned long long)t->segs[i].end, activity__state_name(t->segs[i].state));
	fputs("],\"spans\":[", f);
	for (i = 0; i < t->nspans; i++) {
		const struct activity_span *s = &t->spans[i];
		const struct profile_link *l = profile__link(p, s->link);

		hex__encode(tr, l->trace_id, sizeof(l->trace_id));
		hex__encode(sp, l->span_id, sizeof(l->span_id));
		fprintf(f,
			"%s{\"trace_id\":\"%s\",\"span_id\":\"%s\",\"start_unix_nano\":%llu,"
			"\"end_unix_nano\":%llu,\"offset_seconds\":%.6f,\"duration_seconds\":%.6f,"
			"\"cpu_ns\":%llu,\"off_cpu_ns\":%llu}",
			i ? "," : "", tr, sp, (unsigned long long)s->start,
			(unsigned long long)s->end, (double)(s->start - a->start) / NS,
			(double)(s->end - s->start) / NS, (unsigned long long)s->cpu_ns,
			(unsigned long long)s->wait_ns);
	}
	fputc(']', f);
}

static void print_json(FILE *f, const struct activity *a, const struct profile *p,
		       const struct activity_out_opts *o)
{
	unsigned int s;
	size_t i;

	fputs("{\"file\":", f);
	json__fput_str(f, o->file);
	fprintf(f,
		",\"start_unix_nano\":%llu,\"end_unix_nano\":%llu,\"interval_ns\":%llu,"
		"\"period_ns\":%llu,\"has_off_cpu\":%s,\"has_runnable\":%s,\"threads_hidden\":%zu,"
		"\"untimed\":%llu,\"segments_dropped\":%llu,\"spans_dropped\":%llu,\"states\":[",
		(unsigned long long)a->start, (unsigned long long)a->end,
		(unsigned long long)a->interval_ns, (unsigned long long)a->period_ns,
		a->has_wait ? "true" : "false", a->has_runnable ? "true" : "false",
		a->threads_hidden, (unsigned long long)a->untimed,
		(unsigned long long)a->segments_dropped, (unsigned long long)a->spans_dropped);
	for (s = 0; s < ACTIVITY__STATES; s++)
		fprintf(f, "%s\"%s\"", s ? "," : "", activity__state_name(s));
	fputs("],\"threads\":[", f);
	for (i = 0; i < a->nthreads; i++) {
		const struct activity_thread *t = &a->threads[i];

		fprintf(f, "%s{\"pid\":%lld,\"tid\":%lld,\"name\":", i ? "," : "",
			(long long)t->pid, (long long)t->tid);
		json__fput_str(f, t->name);
		fprintf(f, ",\"first_unix_nano\":%llu,\"last_unix_nano\":%llu,\"totals\":",
			(unsigned long long)t->first, (unsigned long long)t->last);
		json_totals(f, t->ns);
		json_intervals(f, a, t);
		json_spans(f, a, t, p);
		fputc('}', f);
	}
	fputs("]}\n", f);
}

int activity_out__print(FILE *f, const struct profile *p, const struct activity_out_opts *o)
{
	struct activity_opts ao = {.interval_ns = o->interval_ns,
				   .max_threads =
					   (__u32)(o->top < ACTIVITY_MAX_THREADS ? o->top : 0),
				   .filter_pid = o->filter_pid,
				   .pid = o->pid,
				   .comm = o->comm};
	struct activity *a = NULL;
	int err;

	ao.columns = ACTIVITY_OUT_COLUMNS;
	err = activity__build(p, &ao, &a);
	if (err)
		return err;
	if (o->json)
		print_json(f, a, p, o);
	else
		print_text(f, a, p, o);
	activity__free(a);
	return 0;
}

int activity_out__report(const struct activity_out_opts *o, const char *time)
{
	struct profile *p = NULL;
	__u64 first, last;
	bool timed;
	int err;

	if (input__load(o->file, &(struct input_opts){0}, &p))
		return 1; /* logged */
	if (time && timeslice__apply("report", time, &p)) {
		profile__free(p);
		return 1;
	}
	err = activity_out__print(stdout, p, o);
	timed = !profile__time_span(p, &first, &last);
	profile__free(p);
	if (err == -ENODATA && timed && !o->filter_pid && !o->comm)
		pr_err("%s: --activity: the profile has no timed CPU sample or off-CPU wait "
		       "(its other samples are not states of threads)",
		       o->file);
	else if (err == -ENODATA && timed)
		pr_err("%s: --activity: no timed CPU sample or off-CPU wait of the threads asked "
		       "for: see 'profcap report %s --by thread'",
		       o->file, o->file);
	else if (err == -ENODATA)
		pr_err("%s: --activity: no timed CPU sample or off-CPU wait: the profile "
		       "was " TIMESLICE_NO_TIME " (and --off-cpu for waits)",
		       o->file);
	else if (err == -E2BIG)
		pr_err("%s: --activity: more than %u intervals: give a longer --interval", o->file,
		       ACTIVITY_MAX_INTERVALS);
	else if (err)
		pr_err("%s: cannot build the activity view: %s", o->file, strerror(-err));
	if (!err && (fflush(stdout) || ferror(stdout))) {
		pr_err("cannot write the activity view: %s", strerror(errno));
		err = -EIO;
	}
	return err ? 1 : 0;
}
