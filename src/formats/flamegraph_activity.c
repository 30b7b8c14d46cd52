/* flamegraph_activity.c - thread-activity lanes of an SVG flame graph (see
 * flamegraph_activity.h).
 *
 * Each thread is a <g class="act-thread"> holding its caption, its state
 * lane and its span lane. Lanes are nested <svg class="fg-tl-scale"> in
 * the strip's time units, so the strip's script stretches them with it;
 * every piece is a rect with its state (data-s) and its time (data-a,
 * data-b: ns from the strip's left edge), which the lanes' own script sums
 * for a selected range.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "formats/flamegraph_activity.h"
#include "formats/flamegraph_timeline.h"
#include "model/profile.h"
#include "util/buf.h"
#include "util/hex.h"

#define CAPTION_H 14 /* the lanes' title line */
#define LABEL_H 14   /* a thread's caption */
#define LANE_H 12
#define SPAN_H 7
#define GAP_H 3

static const char lanes_css[] = ".act-bg { fill: #f1f1f1; }\n"
				".act-running { fill: #d9534f; }\n"
				".act-runnable { fill: #f0ad4e; }\n"
				".act-interruptible { fill: #5b9bd5; }\n"
				".act-uninterruptible { fill: #7b4fa0; }\n"
				".act-waiting { fill: #9aa5b1; }\n"
				".act-span { fill: #3c9d6e; stroke: #fff; stroke-width: 0.5; }\n"
				".act-span.alt { fill: #2b6f4e; }\n"
				".act-sum { pointer-events: none; }\n";

/* On a range (the strip's onRange), each caption gives its thread's time
 * per state within it, summed from the lane's pieces. */
static const char lanes_js[] =
	"(function () {\n"
	"\twindow.addEventListener(\"load\", function () {\n"
	"\t\tvar api = window.profcapFlamegraph, tl = document.getElementById(\"fg-tl\");\n"
	"\t\tif (!api || !api.onRange || !tl)\n"
	"\t\t\treturn;\n"
	"\t\tvar first = +tl.getAttribute(\"data-first\");\n"
	"\t\tvar lanes = document.querySelectorAll(\"g.act-thread\");\n"
	"\t\tfunction s(ns) {\n"
	"\t\t\treturn (ns / 1e9).toFixed(3) + \" s\";\n"
	"\t\t}\n"
	"\t\tapi.onRange(function (sel) {\n"
	"\t\t\tvar a = sel ? sel.from + first : -Infinity, b = sel ? sel.to + first : Infinity;\n"
	"\t\t\tArray.prototype.forEach.call(lanes, function (lane) {\n"
	"\t\t\t\tvar t = {running: 0, runnable: 0, waiting: 0};\n"
	"\t\t\t\tvar rs = lane.querySelectorAll(\"rect[data-s]\"), i, o, k;\n"
	"\t\t\t\tfor (i = 0; i < rs.length; i++) {\n"
	"\t\t\t\t\to = Math.min(+rs[i].getAttribute(\"data-b\"), b) -\n"
	"\t\t\t\t\t\tMath.max(+rs[i].getAttribute(\"data-a\"), a);\n"
	"\t\t\t\t\tk = rs[i].getAttribute(\"data-s\");\n"
	"\t\t\t\t\tif (o > 0)\n"
	"\t\t\t\t\t\tt[k === \"running\" || k === \"runnable\" ? k : \"waiting\"] += o;\n"
	"\t\t\t\t}\n"
	"\t\t\t\tk = lane.getAttribute(\"data-name\");\n"
	"\t\t\t\tlane.querySelector(\".act-sum\").textContent = k + \": running \" +\n"
	"\t\t\t\t\ts(t.running) + \", runnable \" + s(t.runnable) + \", waiting \" +\n"
	"\t\t\t\t\ts(t.waiting) + (sel ? \" in the range\" : \"\");\n"
	"\t\t\t});\n"
	"\t\t});\n"
	"\t});\n"
	"})();\n";

struct lanes {
	const struct activity *a;
	const struct profile *p; /* of the links */
	const struct flamegraph_timegeom *g;
	struct buf_out *out;
	__u64 end;    /* the strip's right edge, epoch ns */
	__u64 px_ns;  /* ns a pixel spans at the drawn width */
	size_t rects; /* drawn so far */
	size_t max_rects;
	bool capped;
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
		o->err = o->err ?: -EINVAL;
		return;
	}
	buf__put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* A thread name as XML text: markup escaped, anything but printable ASCII
 * as '?'. */
static void put_name(struct buf_out *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '&')
			buf__puts(o, "&amp;");
		else if (*s == '<')
			buf__puts(o, "&lt;");
		else if (*s == '>')
			buf__puts(o, "&gt;");
		else if (*s == '"')
			buf__puts(o, "&quot;");
		else
			buf__put(o, *s >= 0x20 && *s < 0x7f ? s : "?", 1);
	}
}

/* Seconds of @ns from the first sample, signed. */
static double rel(const struct lanes *l, __u64 ns)
{
	return ((double)ns - (double)l->g->first_ns) / 1e9;
}

/* One piece [@s, @e) of class @cls, clipped to the strip; @title follows. */
static bool put_piece(struct lanes *l, __u64 s, __u64 e, const char *cls, const char *state,
		      unsigned h)
{
	const struct flamegraph_timegeom *g = l->g;

	s = s < g->t0_ns ? g->t0_ns : s;
	e = e > l->end ? l->end : e;
	if (s >= e)
		return false;
	if (l->rects >= l->max_rects) {
		l->capped = true;
		return false;
	}
	l->rects++;
	putf(l->out, "<rect class=\"%s\" x=\"%.2f\" y=\"0\" width=\"%.3f\" height=\"%u\"", cls,
	     fg_timeline__x(g, s), fg_timeline__x(g, e) - fg_timeline__x(g, s), h);
	if (state)
		putf(l->out, " data-s=\"%s\" data-a=\"%llu\" data-b=\"%llu\"", state,
		     (unsigned long long)(s - g->t0_ns), (unsigned long long)(e - g->t0_ns));
	buf__puts(l->out, "><title>");
	return true;
}

/* The state lane of @t: its segments, neighbours of one state closer than
 * a pixel drawn as one. */
static void put_states(struct lanes *l, const struct activity_thread *t, unsigned y)
{
	char cls[40];
	size_t i, j;

	fg_timeline__scale_open(l->out, l->g, y, LANE_H, "");
	putf(l->out, "<rect class=\"act-bg\" x=\"0\" y=\"0\" width=\"%llu\" height=\"%u\"/>",
	     (unsigned long long)l->g->nintervals * FG_TL_UNITS, LANE_H);
	for (i = 0; i < t->nsegs; i = j) {
		const struct activity_segment *sg = &t->segs[i];
		const char *name = activity__state_name(sg->state);
		__u64 end = sg->end;

		for (j = i + 1; j < t->nsegs && t->segs[j].state == sg->state &&
				t->segs[j].start < end + l->px_ns;
		     j++)
			end = t->segs[j].end;
		snprintf(cls, sizeof(cls), "act-%s", name);
		if (!put_piece(l, sg->start, end, cls, name, LANE_H))
			continue;
		putf(l->out, "%lld/%lld ", (long long)t->pid, (long long)t->tid);
		put_name(l->out, t->name);
		putf(l->out, ": %s %+.3fs to %+.3fs (%.1f ms)</title></rect>", name,
		     rel(l, sg->start), rel(l, end), (double)(end - sg->start) / 1e6);
	}
	buf__puts(l->out, "</svg>\n");
}

/* The span lane of @t, its spans alternating in shade. */
static void put_spans(struct lanes *l, const struct activity_thread *t, unsigned y)
{
	char tr[33], sp[17];
	size_t i;

	fg_timeline__scale_open(l->out, l->g, y, SPAN_H, "");
	for (i = 0; i < t->nspans; i++) {
		const struct activity_span *s = &t->spans[i];
		const struct profile_link *k = profile__link(l->p, s->link);

		if (!put_piece(l, s->start, s->end, i % 2 ? "act-span alt" : "act-span", NULL,
			       SPAN_H))
			continue;
		hex__encode(tr, k->trace_id, sizeof(k->trace_id));
		hex__encode(sp, k->span_id, sizeof(k->span_id));
		putf(l->out,
		     "span %s/%s on %lld/%lld: %+.3fs to %+.3fs, cpu %.3f s, off-CPU %.3f s"
		     "</title></rect>",
		     tr, sp, (long long)t->pid, (long long)t->tid, rel(l, s->start), rel(l, s->end),
		     (double)s->cpu_ns / 1e9, (double)s->wait_ns / 1e9);
	}
	buf__puts(l->out, "</svg>\n");
}

/* One thread at @y: caption, states, spans. The px it takes. */
static unsigned put_thread(struct lanes *l, const struct activity_thread *t, unsigned y)
{
	__u64 ns[ACTIVITY__STATES] = {0};
	size_t i;

	/* What the lane shows: its pieces within the strip. */
	for (i = 0; i < t->nsegs; i++) {
		__u64 s = t->segs[i].start > l->g->t0_ns ? t->segs[i].start : l->g->t0_ns;
		__u64 e = t->segs[i].end < l->end ? t->segs[i].end : l->end;

		ns[t->segs[i].state] += e > s ? e - s : 0;
	}
	putf(l->out, "<g class=\"act-thread\" data-tid=\"%lld\" data-name=\"%lld/%lld ",
	     (long long)t->tid, (long long)t->pid, (long long)t->tid);
	put_name(l->out, t->name);
	putf(l->out, "\">\n<text class=\"small act-sum\" x=\"%u\" y=\"%u\">%lld/%lld ", l->g->x,
	     y + LABEL_H - 4, (long long)t->pid, (long long)t->tid);
	put_name(l->out, t->name);
	putf(l->out, ": running %.3f s, runnable %.3f s, waiting %.3f s</text>\n",
	     (double)ns[ACTIVITY_RUNNING] / 1e9, (double)ns[ACTIVITY_RUNNABLE] / 1e9,
	     (double)(ns[ACTIVITY_INTERRUPTIBLE] + ns[ACTIVITY_UNINTERRUPTIBLE] +
		      ns[ACTIVITY_OTHER_WAIT]) /
		     1e9);
	put_states(l, t, y + LABEL_H);
	y += LABEL_H + LANE_H;
	if (t->nspans) {
		put_spans(l, t, y + 1);
		y += SPAN_H + 1;
	}
	buf__puts(l->out, "</g>\n");
	return LABEL_H + LANE_H + (t->nspans ? SPAN_H + 1 : 0) + GAP_H;
}

/* The lanes' title line: what the colours mean, and what was left out. */
static void put_caption(struct lanes *l, unsigned y)
{
	const struct activity *a = l->a;
	unsigned s;

	putf(l->out, "<text class=\"small\" x=\"%u\" y=\"%u\">Thread activity:", l->g->x,
	     y + CAPTION_H - 3);
	for (s = 0; s < ACTIVITY_UNKNOWN; s++)
		putf(l->out, " <tspan class=\"act-%s\">\xe2\x96\xa0</tspan> %s",
		     activity__state_name(s), activity__state_name(s));
	buf__puts(l->out, " <tspan class=\"act-span\">\xe2\x96\xa0</tspan> span; blank: unknown");
	if (!a->has_wait)
		buf__puts(l->out, " (no off-CPU waits: capture with --off-cpu)");
	if (a->threads_hidden)
		putf(l->out, " (%zu more threads not drawn)", a->threads_hidden);
	buf__puts(l->out, "</text>\n");
}

int fg_activity__lanes(void *arg, const struct profile *p, const struct flamegraph_timegeom *g,
		       struct buf_out *out, unsigned *height)
{
	const struct fg_activity_arg *fa = arg;
	struct activity_opts o = fa->opts;
	struct activity *a = NULL;
	struct lanes l = {.g = g, .out = out, .p = fa->full ? fa->full : p};
	unsigned y = g->y + 8;
	size_t i;
	int err;

	*height = 0;
	o.interval_ns = 0;
	o.max_threads = FG_ACT_MAX_LANES;
	err = activity__build(l.p, &o, &a);
	if (err == -ENODATA)
		return 0;
	if (err)
		return err;
	l.a = a;
	l.max_rects = fa->max_rects ? fa->max_rects : FG_ACT_MAX_RECTS;
	l.end = g->t0_ns + (__u64)g->nintervals * g->interval_ns;
	l.px_ns = g->width ? (l.end - g->t0_ns) / g->width : 0;
	buf__puts(out, "<g id=\"fg-act\">\n<style>\n");
	buf__puts(out, lanes_css);
	buf__puts(out, "</style>\n");
	put_caption(&l, y);
	y += CAPTION_H;
	for (i = 0; i < a->nthreads; i++)
		y += put_thread(&l, &a->threads[i], y);
	if (l.capped)
		putf(out,
		     "<text class=\"small\" x=\"%u\" y=\"%u\">lanes cut short: more than %u "
		     "pieces</text>\n",
		     g->x, y + LABEL_H - 2, (unsigned)l.max_rects);
	y += l.capped ? LABEL_H : 0;
	buf__puts(out, "<script><![CDATA[\n");
	buf__puts(out, lanes_js);
	buf__puts(out, "]]></script>\n</g>\n");
	activity__free(a);
	*height = y - g->y;
	return out->err;
}
