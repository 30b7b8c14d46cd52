/* flamegraph_timeline.c - the timeline strip of a flame graph (see
 * flamegraph_timeline.h).
 *
 * While the graph lays out a tower, each kept sample's occurrences become
 * (stack, interval, value) entries; when the tower's items are sorted, the
 * entries are renumbered by item, sorted and merged, so the embedded data
 * follows the graph's x order. Bars add up every occurrence whether or not
 * the entries fit under the cap.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/flamegraph_timeline.h"
#include "model/profile.h"
#include "util/array.h"

#define NS 1000000000ull
#define TL_PAD 10	   /* left/right margin, px: the graph's */
#define TL_CAPTION_H 18	   /* caption row */
#define TL_BARS_H 48	   /* bars */
#define TL_AXIS_H 28	   /* ticks and their two labels */
#define TL_GAP 8	   /* between the strip (or its lanes) and the graph */
#define TL_TICK_PX 110	   /* a time label every this many px at least */
#define TL_EDGE_PX 24	   /* no centred label closer to an edge */
#define UNTIMED UINT32_MAX /* the interval of a value without time */

struct tl_entry {
	__u32 key;    /* stack while a tower is laid out, then item */
	__u32 bucket; /* interval, UNTIMED */
	__u64 value;
};

struct fg_timeline {
	const struct profile *p;
	struct flamegraph_timegeom geo;
	bool off_cpu;
	__u64 *bars;	      /* per interval */
	struct tl_entry *cur; /* the tower being laid out */
	size_t ncur, cur_cap;
	struct tl_entry *ent; /* by item, then interval */
	size_t nent, ent_cap;
	__u32 *item_of; /* stack -> item */
	__u32 nitems;
	__u32 cap;   /* entries embedded at most */
	bool capped; /* entries past FG_TL_MAX_ENTRIES: no range selection */
};

static void putf(struct buf_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void putf(struct buf_out *o, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0) {
		if (!o->err)
			o->err = -EINVAL;
		return;
	}
	buf__put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* The smallest of 1, 2, 5 x 10^k ns (from 1 us) that is at least @ns. */
static __u64 round_up_nice(__u64 ns)
{
	static const __u64 steps[] = {1, 2, 5};
	__u64 dec = 1000;
	unsigned i;

	for (;;) {
		for (i = 0; i < 3; i++)
			if (steps[i] * dec >= ns)
				return steps[i] * dec;
		if (dec > UINT64_MAX / 100)
			return 5 * dec;
		dec *= 10;
	}
}

static bool is_off_cpu(const struct profile *p, bool *cpu_period)
{
	__u32 st, su, pt, pu;

	profile__value_types(p, &st, &su, &pt, &pu);
	*cpu_period = !strcmp(profile__string(p, pt, NULL), "cpu");
	return !strcmp(profile__string(p, st, NULL), "off_cpu");
}

int fg_timeline__new(const struct profile *p, unsigned width, __u32 cap, struct fg_timeline **out)
{
	struct flamegraph_timegeom *g;
	struct fg_timeline *t;
	__u64 first, last, span, iv, maxbars;
	bool cpu_period;

	*out = NULL;
	if (!profile__time_count(p) || profile__time_span(p, &first, &last))
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->p = p;
	t->cap = cap && cap < FG_TL_MAX_ENTRIES ? cap : FG_TL_MAX_ENTRIES;
	t->off_cpu = is_off_cpu(p, &cpu_period);
	g = &t->geo;
	g->x = TL_PAD;
	g->width = width - 2 * TL_PAD;
	g->svg_width = width;
	g->first_ns = first;
	g->last_ns = last;
	span = last - first + 1;
	maxbars = g->width / FG_TL_BAR_PX;
	iv = (span + maxbars - 1) / maxbars;
	/* A bar shorter than a sampling period is mostly empty. */
	if (!t->off_cpu && cpu_period && profile__meta(p)->period_ns > iv)
		iv = profile__meta(p)->period_ns;
	iv = round_up_nice(iv);
	g->interval_ns = iv;
	g->t0_ns = first - first % iv;
	g->nintervals = (__u32)((last - g->t0_ns) / iv + 1);
	t->bars = calloc(g->nintervals, sizeof(*t->bars));
	t->item_of = malloc((profile__stack_count(p) + 1) * sizeof(*t->item_of));
	if (!t->bars || !t->item_of) {
		fg_timeline__free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void fg_timeline__free(struct fg_timeline *t)
{
	if (!t)
		return;
	free(t->bars);
	free(t->cur);
	free(t->ent);
	free(t->item_of);
	free(t);
}

static int cmp_entry(const void *x, const void *y)
{
	const struct tl_entry *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->bucket > b->bucket) - (a->bucket < b->bucket);
}

/* Sort @e by (key, bucket) and merge equal ones; returns the new count. */
static size_t sort_merge(struct tl_entry *e, size_t n)
{
	size_t i, m = 0;

	if (!n)
		return 0;
	qsort(e, n, sizeof(*e), cmp_entry);
	for (i = 1; i < n; i++) {
		if (e[i].key == e[m].key && e[i].bucket == e[m].bucket)
			e[m].value += e[i].value;
		else
			e[++m] = e[i];
	}
	return m + 1;
}

static void drop_entries(struct fg_timeline *t)
{
	t->capped = true;
	free(t->cur);
	free(t->ent);
	t->cur = t->ent = NULL;
	t->ncur = t->cur_cap = t->nent = t->ent_cap = 0;
}

/* One (stack, interval, value) of the current tower; the last one merges
 * with it when equal (occurrences mostly come in time order). */
static int add_entry(struct fg_timeline *t, __u32 stack, __u32 bucket, __u64 value)
{
	struct tl_entry *last = t->ncur ? &t->cur[t->ncur - 1] : NULL;

	if (t->capped)
		return 0;
	if (last && last->key == stack && last->bucket == bucket) {
		last->value += value;
		return 0;
	}
	if (t->ncur == t->cap) {
		t->ncur = sort_merge(t->cur, t->ncur);
		if (t->ncur > t->cap / 4 * 3) {
			drop_entries(t);
			return 0;
		}
	}
	if (array__grow((void **)&t->cur, &t->cur_cap, t->ncur, sizeof(*t->cur), 1024, t->cap))
		return -ENOMEM;
	t->cur[t->ncur++] = (struct tl_entry){stack, bucket, value};
	return 0;
}

int fg_timeline__add(struct fg_timeline *t, size_t proc, size_t i,
		     const struct profile_sample_entry *s)
{
	const struct flamegraph_timegeom *g = &t->geo;
	const struct profile_occurrence *oc;
	__u64 timed = 0, b;
	size_t n, k;
	int err = 0;

	oc = profile__sample_times(t->p, proc, i, &n);
	for (k = 0; k < n && !err; k++) {
		if (oc[k].time_ns < g->t0_ns)
			continue; /* cannot be: t0 is at most the first time */
		b = (oc[k].time_ns - g->t0_ns) / g->interval_ns;
		if (b >= g->nintervals)
			b = g->nintervals - 1;
		t->bars[b] += oc[k].value;
		timed += oc[k].value;
		err = add_entry(t, s->stack, (__u32)b, oc[k].value);
	}
	if (!err && s->value > timed)
		err = add_entry(t, s->stack, UNTIMED, s->value - timed);
	return err;
}

int fg_timeline__end_tower(struct fg_timeline *t, const __u32 *stacks, size_t n)
{
	size_t k;
	int err;

	for (k = 0; k < n; k++)
		t->item_of[stacks[k]] = t->nitems + (__u32)k;
	t->nitems += (__u32)n;
	if (t->capped)
		return 0;
	for (k = 0; k < t->ncur; k++)
		t->cur[k].key = t->item_of[t->cur[k].key];
	t->ncur = sort_merge(t->cur, t->ncur);
	if (t->nent + t->ncur > t->cap) {
		drop_entries(t);
		return 0;
	}
	err = array__grow((void **)&t->ent, &t->ent_cap, t->nent + t->ncur, sizeof(*t->ent), 1024,
			  (size_t)t->cap + 1);
	if (err)
		return err;
	if (t->ncur)
		memcpy(t->ent + t->nent, t->cur, t->ncur * sizeof(*t->cur));
	t->nent += t->ncur;
	t->ncur = 0;
	return 0;
}

double fg_timeline__x(const struct flamegraph_timegeom *g, __u64 ns)
{
	if (ns <= g->t0_ns)
		return 0;
	return (double)(ns - g->t0_ns) * FG_TL_UNITS / (double)g->interval_ns;
}

void fg_timeline__scale_open(struct buf_out *out, const struct flamegraph_timegeom *g, unsigned y,
			     unsigned h, const char *extra)
{
	putf(out,
	     "<svg class=\"fg-tl-scale\" x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" "
	     "viewBox=\"0 0 %llu %u\" preserveAspectRatio=\"none\"%s%s>",
	     g->x, y, g->width, h, (unsigned long long)g->nintervals * FG_TL_UNITS, h,
	     *extra ? " " : "", extra);
}

/* ---- drawing ----------------------------------------------------------------------- */

/* Decimals a time step of @ns needs in seconds (at most 6). */
static int step_decimals(__u64 ns)
{
	__u64 unit = NS;
	int d = 0;

	while (d < 6 && ns % unit) {
		unit /= 10;
		d++;
	}
	return d;
}

/* "14:03:07.250" (local time, @dec decimals) of @ns into @buf. */
static void fmt_clock(__u64 ns, int dec, char *buf, size_t len)
{
	time_t s = (time_t)(ns / NS);
	struct tm tm;
	char hms[16] = "??:??:??";
	__u64 frac = ns % NS;
	int i;

	if (localtime_r(&s, &tm))
		strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
	for (i = dec; i < 9; i++)
		frac /= 10;
	if (dec)
		snprintf(buf, len, "%s.%0*llu", hms, dec, (unsigned long long)frac);
	else
		snprintf(buf, len, "%s", hms);
}

/* "+1.25s" for @ns after the first sample. */
static void fmt_rel(__u64 ns, int dec, char *buf, size_t len)
{
	snprintf(buf, len, "+%.*fs", dec, (double)ns / 1e9);
}

/* The value of one bar in words: "12 samples", "3.500 ms off-CPU". */
static void fmt_value(const struct fg_timeline *t, __u64 v, char *buf, size_t len)
{
	if (t->off_cpu)
		snprintf(buf, len, "%.3f ms off-CPU", (double)v / 1e6);
	else
		snprintf(buf, len, "%llu sample%s", (unsigned long long)v, v == 1 ? "" : "s");
}

/* "20 ms", "1 s", "500 us". */
static void fmt_span(__u64 ns, char *buf, size_t len)
{
	if (ns >= NS && !(ns % NS))
		snprintf(buf, len, "%llu s", (unsigned long long)(ns / NS));
	else if (ns >= 1000000 && !(ns % 1000000))
		snprintf(buf, len, "%llu ms", (unsigned long long)(ns / 1000000));
	else
		snprintf(buf, len, "%llu us", (unsigned long long)(ns / 1000));
}

static void put_caption(const struct fg_timeline *t, unsigned y, struct buf_out *out)
{
	const struct flamegraph_timegeom *g = &t->geo;
	char span[32], zone[16] = "", first[32];
	__u64 max = 0;
	time_t s = (time_t)(g->first_ns / NS);
	struct tm tm;
	__u32 i;

	for (i = 0; i < g->nintervals; i++)
		if (t->bars[i] > max)
			max = t->bars[i];
	fmt_span(g->interval_ns, span, sizeof(span));
	fmt_clock(g->first_ns, 3, first, sizeof(first));
	if (localtime_r(&s, &tm))
		strftime(zone, sizeof(zone), "%Z", &tm);
	putf(out,
	     "<text id=\"fg-tl-caption\" class=\"small\" x=\"%u\" y=\"%u\">%s per %s "
	     "(highest %llu), from %s %s",
	     g->x, y + 12, t->off_cpu ? "ms off-CPU" : "samples", span,
	     t->off_cpu ? (unsigned long long)(max / 1000000) : (unsigned long long)max, first,
	     zone);
	if (t->capped)
		putf(out, "; range selection off: more than %u (stack, interval) values", t->cap);
	else
		buf__puts(out, "; drag across it to draw a range");
	putf(out,
	     "</text>\n<text id=\"fg-tl-sel\" class=\"small end\" data-anchor=\"r\" x=\"%u\" "
	     "y=\"%u\"></text>\n",
	     g->svg_width - TL_PAD, y + 12);
}

static void put_bars(const struct fg_timeline *t, unsigned y, struct buf_out *out)
{
	const struct flamegraph_timegeom *g = &t->geo;
	char rel[32], clock[32], val[48];
	int dec = step_decimals(g->interval_ns);
	__u64 max = 1, start;
	double h;
	__u32 i;

	for (i = 0; i < g->nintervals; i++)
		if (t->bars[i] > max)
			max = t->bars[i];
	fg_timeline__scale_open(out, g, y, TL_BARS_H, "id=\"fg-tl-bars\"");
	putf(out, "<rect class=\"tl-bg\" x=\"0\" y=\"0\" width=\"%llu\" height=\"%u\"/>\n",
	     (unsigned long long)g->nintervals * FG_TL_UNITS, TL_BARS_H);
	for (i = 0; i < g->nintervals; i++) {
		if (!t->bars[i])
			continue;
		h = (double)t->bars[i] * TL_BARS_H / (double)max;
		start = g->t0_ns + (__u64)i * g->interval_ns;
		fmt_rel(start > g->first_ns ? start - g->first_ns : 0, dec, rel, sizeof(rel));
		fmt_clock(start, dec > 3 ? 6 : 3, clock, sizeof(clock));
		fmt_value(t, t->bars[i], val, sizeof(val));
		putf(out,
		     "<rect data-i=\"%u\" data-v=\"%llu\" x=\"%u\" y=\"%.1f\" width=\"%u\" "
		     "height=\"%.1f\"><title>%s %s: %s</title></rect>\n",
		     i, (unsigned long long)t->bars[i], i * FG_TL_UNITS, TL_BARS_H - h,
		     FG_TL_UNITS * 9 / 10, h, rel, clock, val);
	}
	buf__puts(out, "</svg>\n");
}

/* Tick marks every round step from the first sample, labelled with the
 * time since it and the clock time. */
static void put_axis(const struct fg_timeline *t, unsigned y, struct buf_out *out)
{
	const struct flamegraph_timegeom *g = &t->geo;
	__u64 end = g->t0_ns + (__u64)g->nintervals * g->interval_ns, step, tick;
	double span = (double)(end - g->t0_ns), x, px;
	char rel[32], clock[32];
	int dec;

	step = round_up_nice((__u64)(span * TL_TICK_PX / g->width) + 1);
	dec = step_decimals(step);
	fg_timeline__scale_open(out, g, y, 5, "");
	for (tick = g->first_ns; tick < end; tick += step)
		putf(out,
		     "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"5\" class=\"tl-tick\" "
		     "vector-effect=\"non-scaling-stroke\"/>",
		     fg_timeline__x(g, tick), fg_timeline__x(g, tick));
	buf__puts(out, "</svg>\n");
	for (tick = g->first_ns; tick < end; tick += step) {
		x = (double)(tick - g->t0_ns) / span;
		px = g->x + x * g->width;
		/* Centred labels, but none across the edges: the first one
		 * starts at the first sample when that is near the edge. */
		if (px > g->x + g->width - TL_EDGE_PX ||
		    (tick != g->first_ns && px < g->x + TL_EDGE_PX))
			continue;
		fmt_rel(tick - g->first_ns, dec, rel, sizeof(rel));
		fmt_clock(tick, dec, clock, sizeof(clock));
		putf(out,
		     "<text class=\"small tl-lab%s\" data-tf=\"%.6f\" x=\"%.1f\" y=\"%u\">%s</text>"
		     "<text class=\"small tl-lab%s\" data-tf=\"%.6f\" x=\"%.1f\" "
		     "y=\"%u\">%s</text>\n",
		     px < g->x + TL_EDGE_PX ? "" : " mid", x, px, y + 16, rel,
		     px < g->x + TL_EDGE_PX ? "" : " mid", x, px, y + 27, clock);
	}
}

int fg_timeline__put(struct fg_timeline *t, const struct flamegraph_opts *o, unsigned y,
		     struct buf_out *out, unsigned *height)
{
	struct flamegraph_timegeom *g = &t->geo;
	unsigned bars = y + TL_CAPTION_H, lanes = 0;
	int err = 0;

	putf(out,
	     "<g id=\"fg-tl\" data-n=\"%u\" data-interval=\"%llu\" data-first=\"%llu\" "
	     "data-t0=\"%llu\" data-off-cpu=\"%d\" data-y=\"%u\" data-h=\"%u\">\n",
	     g->nintervals, (unsigned long long)g->interval_ns,
	     (unsigned long long)(g->first_ns - g->t0_ns), (unsigned long long)g->t0_ns,
	     t->off_cpu ? 1 : 0, bars, TL_BARS_H + TL_AXIS_H);
	put_caption(t, y, out);
	put_bars(t, bars, out);
	put_axis(t, bars + TL_BARS_H, out);
	g->y = bars + TL_BARS_H + TL_AXIS_H;
	if (o->lanes)
		err = o->lanes(o->lanes_arg, t->p, g, out, &lanes);
	if (err)
		return err;
	/* The selection shades whatever lies outside it, strip and lanes. */
	fg_timeline__scale_open(out, g, bars, TL_BARS_H + TL_AXIS_H + lanes,
				"id=\"fg-tl-shade\" pointer-events=\"none\"");
	putf(out,
	     "<rect id=\"fg-tl-shade-l\" class=\"tl-shade\" x=\"0\" y=\"0\" width=\"0\" "
	     "height=\"%u\"/><rect id=\"fg-tl-shade-r\" class=\"tl-shade\" x=\"0\" y=\"0\" "
	     "width=\"0\" height=\"%u\"/></svg>\n</g>\n",
	     TL_BARS_H + TL_AXIS_H + lanes, TL_BARS_H + TL_AXIS_H + lanes);
	*height = TL_CAPTION_H + TL_BARS_H + TL_AXIS_H + lanes + TL_GAP;
	return out->err;
}

/* @v in base 36. */
static void put_b36(struct buf_out *out, __u64 v)
{
	char tmp[16];
	int i = sizeof(tmp);

	do {
		tmp[--i] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
		v /= 36;
	} while (v);
	buf__put(out, tmp + i, sizeof(tmp) - (size_t)i);
}

void fg_timeline__put_data(const struct fg_timeline *t, struct buf_out *out)
{
	size_t e = 0, start;
	__u32 item, prev;

	if (!t->capped) {
		buf__puts(out, "<metadata id=\"fg-tl-data\">");
		for (item = 0; item < t->nitems; item++) {
			for (prev = 0, start = e; e < t->nent && t->ent[e].key == item; e++) {
				const struct tl_entry *en = &t->ent[e];

				if (e > start)
					buf__puts(out, " ");
				if (en->bucket == UNTIMED) {
					buf__puts(out, "~");
					put_b36(out, en->value);
				} else {
					put_b36(out, en->bucket - prev);
					prev = en->bucket;
					if (en->value != 1) {
						buf__puts(out, ":");
						put_b36(out, en->value);
					}
				}
			}
			buf__puts(out, ";");
		}
		buf__puts(out, "</metadata>\n");
	}
}
