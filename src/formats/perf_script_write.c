/* perf_script_write.c - perf script text from the model (see
 * perf_script_write.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/perf_script_write.h"
#include "model/profile.h"
#include "model/view.h"

#define NAME_LEN 1024

/* What one record needs beside its stack. */
struct rec {
	const char *comm;
	__s64 pid, tid;
	__u32 cpu;
	bool has_cpu;
	__u64 time_ns, period;
	const char *event;
};

static void put_printf(struct buf_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put_printf(struct buf_out *o, const char *fmt, ...)
{
	char line[NAME_LEN * 2 + 96];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		buf__put(o, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* A name without the characters that end perf script's fields. */
static const char *clean(const char *s, char *out, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		out[i] = s[i] == '\n' || s[i] == '\r' || s[i] == '(' || s[i] == ')' ? '_' : s[i];
	out[i] = '\0';
	return out;
}

/* The mapping of @loc in parentheses: its file, "[kernel.kallsyms]" for a
 * kernel frame without one, else "[unknown]". */
static const char *mapping_of(const struct profile *p, __u32 loc)
{
	const struct profile_location_entry *l = profile__location(p, loc);
	const char *t = view__location_type(p, loc);

	if (l->mapping) {
		const char *path =
			profile__string(p, profile__mapping(p, l->mapping)->filename, NULL);

		if (path && *path)
			return path;
	}
	return !strcmp(t, "kernel") ? "[kernel.kallsyms]" : "[unknown]";
}

static void put_stack(struct buf_out *o, const struct profile *p, __u32 stack)
{
	char name[NAME_LEN], map[NAME_LEN];
	const __u32 *locs;
	size_t n, i, k, nl;

	locs = profile__stack(p, stack, &n);
	for (i = 0; i < n; i++) {
		const struct profile_location_entry *l = profile__location(p, locs[i]);

		clean(mapping_of(p, locs[i]), map, sizeof(map));
		nl = view__line_count(p, locs[i]);
		for (k = 0; k < nl; k++) {
			const char *fn = view__line_function(p, locs[i], k, NULL);

			if (!fn)
				fn = "[unknown]"; /* as perf writes it */
			put_printf(o, "\t%16" PRIx64 " %s (%s)\n", (uint64_t)l->address,
				   clean(fn, name, sizeof(name)), map);
		}
	}
	buf__puts(o, "\n");
}

static void put_header(struct buf_out *o, const struct rec *r)
{
	char comm[NAME_LEN];

	put_printf(o, "%s %lld/%lld ", clean(r->comm, comm, sizeof(comm)), (long long)r->pid,
		   (long long)r->tid);
	if (r->has_cpu)
		put_printf(o, "[%03u] ", r->cpu);
	if (r->time_ns) /* no time field for a sample without one */
		put_printf(o, "%" PRIu64 ".%09" PRIu64 ": ", (uint64_t)(r->time_ns / 1000000000ull),
			   (uint64_t)(r->time_ns % 1000000000ull));
	put_printf(o, "%" PRIu64 " %s:\n", (uint64_t)r->period, r->event);
}

/* The event name and whether values count records (CPU samples). */
static const char *event_of(const struct profile *p, bool *counts)
{
	__u32 st, su, pt, pu;
	const char *sample, *unit, *period;

	profile__value_type(p, 0, &st, &su, &pt, &pu);
	sample = profile__string(p, st, NULL);
	unit = profile__string(p, su, NULL);
	period = profile__string(p, pt, NULL);
	*counts = !strcmp(unit, "count");
	if (*counts && !strcmp(period, "cpu"))
		return "cpu-clock";
	return *sample ? sample : "samples";
}

/* Records of one event: @value of them when values count records (up to
 * PERF_SCRIPT_MAX_REPEAT), else one carrying @value as its period. */
static void put_event(struct buf_out *o, const struct profile *p, const struct profile_event *e,
		      const char *event, bool counts)
{
	const struct profile_process_desc *d = profile__process(p, e->proc);
	const struct profile_sample_entry *s = profile__sample(p, e->proc, e->sample);
	struct rec r = {.pid = d->pid, .time_ns = e->time_ns, .event = event};
	__u64 i, n = counts ? e->value : 1;
	const char *tname;

	view__sample_thread(p, s, &r.tid, &tname);
	r.comm = *tname ? tname : d->exe_name && *d->exe_name ? d->exe_name : "[unknown]";
	if (r.tid < 0)
		r.tid = r.pid;
	r.has_cpu = !profile__sample_cpu(p, s, &r.cpu);
	r.period = counts ? (__u64)profile__period(p, 0) : e->value;
	if (!r.period)
		r.period = 1;
	if (n > PERF_SCRIPT_MAX_REPEAT)
		n = PERF_SCRIPT_MAX_REPEAT;
	for (i = 0; i < n && !o->err; i++) {
		put_header(o, &r);
		put_stack(o, p, s->stack);
	}
}

int perf_script_write__encode(const struct profile *p, struct buf *out)
{
	struct buf_out o = {out, 0};
	struct profile_event *ev;
	size_t start = out->len, n, i;
	const char *event;
	bool counts;
	int err;

	err = profile__events(p, &ev, &n);
	if (err)
		return err;
	event = event_of(p, &counts);
	for (i = 0; i < n && !o.err; i++)
		if (profile__process_type(p, ev[i].proc) == 0)
			put_event(&o, p, &ev[i], event, counts);
	free(ev);
	if (o.err)
		out->len = start;
	return o.err;
}
