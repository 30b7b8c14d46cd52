/* flamegraph.c - SVG flame graphs (see flamegraph.h).
 *
 * Each process's distinct stacks become label sequences, sorted so that
 * stacks sharing a prefix are adjacent; one pass over them keeps the open
 * frames of the common prefix and closes a frame (its width now known) when
 * the next stack leaves it, so identical frames under one parent merge
 * without a tree. A frame narrower than 0.1 px is not drawn; since a child
 * is never wider than its parent, that drops whole subtrees, which are
 * counted and named in the subtitle.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/flamegraph.h"
#include "formats/flamegraph_assets.h"
#include "formats/flamegraph_timeline.h"
#include "formats/flamegraph_timeline_assets.h"
#include "util/array.h"
#include "util/intern.h"
#include "util/log.h"
#include "model/profile.h"
#include "model/view.h"
#include "util/utf8.h"

#define FG_PAD 10	 /* left/right margin, px */
#define FG_FRAME_H 16	 /* row height, px (rect is one less) */
#define FG_TOP 68	 /* space for title, subtitle, legend and controls */
#define FG_LEGEND_Y 58	 /* baseline of the legend */
#define FG_BOTTOM 30	 /* space for the status line */
#define FG_CHAR_W 7.3	 /* width of one 12 px monospace character */
#define FG_MIN_TENTHS 10 /* draw frames of at least 1/10 px */
/* Frames narrower than this do not make the graph taller: deeper ones are
 * hidden until a zoom widens them (the script does the same). */
#define FG_TALL_PX 1.0

#define NO_NODE UINT32_MAX

/* ---- output with a sticky error ---------------------------------------------------- */

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
	/* Only short, fixed-format strings go through here. */
	buf__put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Append @s escaped as XML character data, at most @max characters of it
 * (then ".." is appended; @max 0 = all). Bytes that XML 1.0 cannot carry
 * (invalid UTF-8, control characters, U+FFFE/U+FFFF) become U+FFFD. */
static void put_xml(struct buf_out *o, const char *s, size_t max)
{
	size_t n, count = 0;
	__u32 cp = 0;

	while (*s) {
		if (max && count == max) {
			buf__puts(o, "..");
			return;
		}
		count++;
		n = utf8__decode(s, SIZE_MAX, &cp);
		if (!n || (cp < 0x20 && cp != '\t') || cp == 0xfffe || cp == 0xffff) {
			buf__puts(o, "\xef\xbf\xbd");
			s += n ? n : 1;
			continue;
		}
		switch (*s) {
		case '&':
			buf__puts(o, "&amp;");
			break;
		case '<':
			buf__puts(o, "&lt;");
			break;
		case '>':
			buf__puts(o, "&gt;");
			break;
		case '"':
			buf__puts(o, "&quot;");
			break;
		case '\'':
			buf__puts(o, "&apos;");
			break;
		default:
			buf__put(o, s, n);
		}
		s += n;
	}
}

/* Number of characters (code points or bad bytes) in @s. */
static size_t text_chars(const char *s)
{
	size_t n, count = 0;

	while (*s) {
		n = utf8__seq(s);
		s += n ? n : 1;
		count++;
	}
	return count;
}

/* ---- labels and colours ------------------------------------------------------------ */

/* Colour families: one per frame type, so native code, the kernel and
 * each interpreter or runtime read apart; a frame's hue within its family
 * comes from its name. Per family: base and span of r, g, b for CPU graphs
 * (warm) and for off-CPU graphs (cool: blues and purples, so one is never
 * taken for the other). */
struct family {
	const char *type; /* the legend's word */
	__u8 warm[6], cool[6];
};

enum {
	FAM_ROOT,
	FAM_PROCESS,
	FAM_KERNEL,
	FAM_NATIVE,
	FAM_CPYTHON,
	FAM_V8JS,
	FAM_JVM,
	FAM_PHP,
	FAM_RUBY,
	FAM_PERL,
	FAM_BEAM,
	FAM_DOTNET,
	FAM_OTHER,
	FAM__COUNT
};

static const struct family families[FAM__COUNT] = {
	{"all", {185, 10, 185, 10, 190, 10}, {185, 10, 185, 10, 190, 10}},
	{"process", {165, 30, 165, 30, 215, 30}, {150, 30, 150, 30, 160, 30}},
	{"kernel", {230, 25, 130, 50, 0, 40}, {40, 40, 90, 60, 200, 55}},
	{"native", {200, 50, 40, 60, 40, 30}, {30, 40, 150, 50, 180, 50}},
	{"cpython", {60, 50, 125, 50, 205, 45}, {110, 40, 110, 40, 230, 25}},
	{"v8js", {215, 35, 195, 40, 40, 50}, {140, 40, 190, 40, 210, 40}},
	{"jvm", {50, 60, 175, 55, 50, 45}, {20, 40, 170, 50, 140, 40}},
	{"php", {135, 40, 95, 40, 200, 50}, {120, 50, 80, 40, 200, 55}},
	{"ruby", {215, 35, 70, 40, 120, 50}, {170, 40, 100, 40, 210, 40}},
	{"perl", {30, 50, 160, 45, 160, 45}, {60, 40, 190, 40, 200, 40}},
	{"beam", {160, 40, 110, 35, 60, 35}, {90, 30, 120, 30, 160, 30}},
	{"dotnet", {110, 40, 60, 35, 160, 45}, {130, 30, 90, 30, 170, 30}},
	{"other", {150, 40, 150, 40, 110, 35}, {90, 40, 110, 40, 220, 35}},
};

struct label {
	const char *name; /* into the label table */
	const char *type;
	__u8 rgb[3];
	__u8 family;	  /* index into families */
	bool inlined;	  /* a function inlined into its caller */
	bool mixed_lines; /* its locations show different lines */
	size_t chars;	  /* text_chars(name) */
	const char *file; /* source file, borrowed from the profile; NULL = unknown */
	__s64 line;	  /* 0 = unknown */
	__u32 nprocs;	  /* process labels: processes drawn under it */
};

static unsigned family_of(const char *type)
{
	static const struct {
		const char *type;
		unsigned fam;
	} alias[] = {
		{"root", FAM_ROOT},   {"", FAM_NATIVE},	       {"go", FAM_NATIVE},
		{"rust", FAM_NATIVE}, {"python", FAM_CPYTHON}, {"nodejs", FAM_V8JS},
		{"js", FAM_V8JS},     {"java", FAM_JVM},       {"hotspot", FAM_JVM},
	};
	unsigned i;

	for (i = 0; i < FAM_OTHER; i++)
		if (!strcmp(type, families[i].type))
			return i;
	for (i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (!strcmp(type, alias[i].type))
			return alias[i].fam;
	return FAM_OTHER;
}

/* Deterministic colour for @name in family @fam; @off: the cool colours of
 * off-CPU graphs. */
static void colour(const char *name, unsigned fam, bool off, __u8 rgb[3])
{
	const __u8 *c = off ? families[fam].cool : families[fam].warm;
	__u32 h = (__u32)intern__hash(name, strlen(name));
	double a = (h & 0xffff) / 65535.0, b = (h >> 16) / 65535.0;

	rgb[0] = (__u8)(c[0] + c[1] * a);
	rgb[1] = (__u8)(c[2] + c[3] * b);
	rgb[2] = (__u8)(c[4] + c[5] * a);
}

/* ---- building the graph ------------------------------------------------------------ */

/* A frame that will be drawn: offset and width in value units. */
struct fg_frame {
	__u64 x, v;
	__u32 depth, label;
};

/* One distinct stack of the process being drawn: its labels as ranks, in
 * drawing order (root first, or leaf first when inverted). */
struct item {
	const __u32 *seq;
	__u32 len;
	__u32 stack;
	__u64 value;
};

struct open_frame {
	__u64 x;
	__u32 rank;
};

struct graph {
	const struct profile *p;
	const struct flamegraph_opts *o;
	unsigned width;
	__u64 total;
	bool off_cpu; /* values are nanoseconds off the CPU: cool colours, times */

	struct intern *labels; /* "type\0name\0" -> label */
	struct label *lab;
	size_t lab_cap;
	__u32 *loc_label;  /* location -> its first label in loc_labels */
	__u32 *loc_labels; /* labels of each location's frames, innermost first */
	__u32 *loc_nlab;   /* location -> number of frames (inlined ones included) */
	__u32 *proc_label; /* process -> label */
	__u32 *rank;	   /* label -> position in name order */
	__u32 *by_rank;	   /* position in name order -> label */

	__u64 *stack_val; /* per stack, for the process being added */
	__u32 *touched;	  /* stacks with a value in stack_val */

	struct fg_frame *frames; /* drawn */
	size_t nframes, frames_cap;
	size_t dropped; /* frames too narrow to draw */
	size_t nprocs;	/* processes drawn */
	size_t ntowers; /* their towers: programs, or processes with --per-pid */
	__u32 max_depth; /* of the frames at least FG_TALL_PX wide: the height */

	struct fg_timeline *tl; /* NULL: the profile has no sample times */
	struct buf tl_svg;	/* the strip and its lanes, drawn before the header */
	unsigned top;		/* y of the graph: FG_TOP, plus the strip */
};

static void graph_release(struct graph *g)
{
	intern__free(g->labels);
	free(g->lab);
	free(g->loc_label);
	free(g->loc_labels);
	free(g->loc_nlab);
	free(g->proc_label);
	free(g->rank);
	free(g->by_rank);
	free(g->stack_val);
	free(g->touched);
	free(g->frames);
	fg_timeline__free(g->tl);
	buf__release(&g->tl_svg);
}

static int get_label(struct graph *g, const char *type, const char *name, bool inlined,
		     __u32 *idx)
{
	size_t tl = strlen(type), nl = strlen(name), n = intern__count(g->labels);
	char stackbuf[512], *key = stackbuf;
	struct label *l;
	bool added;
	int err;

	/* Room for the label's entry: an existing one or the next. */
	err = array__grow((void **)&g->lab, &g->lab_cap, n, sizeof(*g->lab), 256,
			  (size_t)PROFILE_MAX_ENTRIES + 1);
	if (err)
		return err;
	if (tl + nl + 3 > sizeof(stackbuf)) {
		key = malloc(tl + nl + 3);
		if (!key)
			return -ENOMEM;
	}
	memcpy(key, type, tl + 1);
	memcpy(key + tl + 1, name, nl + 1);
	key[tl + nl + 2] = inlined;
	err = intern__put(g->labels, key, tl + nl + 3, idx, &added);
	if (key != stackbuf)
		free(key);
	if (err || !added)
		return err;
	l = &g->lab[*idx];
	l->type = intern__get(g->labels, *idx, NULL);
	l->name = l->type + tl + 1;
	l->chars = text_chars(l->name);
	l->inlined = inlined;
	l->mixed_lines = false;
	l->file = NULL;
	l->line = 0;
	l->nprocs = 0;
	l->family = (__u8)family_of(l->type);
	colour(l->name, l->family, g->off_cpu, l->rgb);
	if (inlined) {
		/* Inlined frames: the same hue, paler. */
		l->rgb[0] = (__u8)(l->rgb[0] + (255 - l->rgb[0]) / 2);
		l->rgb[1] = (__u8)(l->rgb[1] + (255 - l->rgb[1]) / 2);
		l->rgb[2] = (__u8)(l->rgb[2] + (255 - l->rgb[2]) / 2);
	}
	return 0;
}

/* Remember where label @idx is in the source (for its tooltip). */
static void label_source(struct graph *g, __u32 idx, const char *file, __s64 line)
{
	struct label *l = &g->lab[idx];

	if (!*file)
		return;
	if (!l->file) {
		l->file = file;
		l->line = line;
	} else if (strcmp(l->file, file) || l->line != line) {
		l->mixed_lines = true;
	}
}

/* Labels of every location's frames, innermost first. */
static int location_labels(struct graph *g)
{
	size_t nloc = profile__location_count(g->p), i, k, total = 0;
	char name[320];
	const char *file;
	__s64 line;
	int err = 0;

	for (i = 1; i < nloc; i++) {
		g->loc_nlab[i] = (__u32)view__line_count(g->p, (__u32)i);
		g->loc_label[i] = (__u32)total;
		total += g->loc_nlab[i];
	}
	g->loc_labels = malloc((total + 1) * sizeof(*g->loc_labels));
	if (!g->loc_labels)
		return -ENOMEM;
	for (i = 1; !err && i < nloc; i++) {
		for (k = 0; !err && k < g->loc_nlab[i]; k++) {
			__u32 *lab = &g->loc_labels[g->loc_label[i] + k];

			err = get_label(g, view__location_type(g->p, (__u32)i),
					view__line_name(g->p, (__u32)i, k, name, sizeof(name)),
					k + 1 < g->loc_nlab[i], lab);
			file = view__line_source(g->p, (__u32)i, k, &line);
			if (!err)
				label_source(g, *lab, file, line);
		}
	}
	return err;
}

/* Whether sample @s passes the trace and attribute filters. */
static bool sample_kept(const struct graph *g, const struct profile_sample_entry *s)
{
	if (!view__sample_matches(g->p, s, g->o->attrs, g->o->nattrs))
		return false;
	return !g->o->filter_trace ||
	       (s->link && !memcmp(profile__link(g->p, s->link)->trace_id, g->o->trace_id,
				   sizeof(g->o->trace_id)));
}

/* Sum of the values of process @i, 0 when it is filtered out. */
static __u64 process_sum(const struct graph *g, size_t i)
{
	size_t j, ns = profile__sample_count(g->p, i);
	__u64 sum = 0;

	if (g->o->filter_pid && profile__process(g->p, i)->pid != g->o->pid)
		return 0;
	for (j = 0; j < ns; j++)
		if (sample_kept(g, profile__sample(g->p, i, j)))
			sum += profile__sample(g->p, i, j)->value;
	return sum;
}

struct label_sort {
	const char *name, *type;
	__u32 idx;
};

static int cmp_label(const void *x, const void *y)
{
	const struct label_sort *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	return c ? c : strcmp(a->type, b->type);
}

/* Labels of every location and process, and their order by name. */
static int make_labels(struct graph *g)
{
	size_t nloc = profile__location_count(g->p), np = profile__process_count(g->p), i, n;
	const struct profile_process_desc *pd;
	struct label_sort *tmp;
	char name[320];
	__u32 idx;
	int err;

	(void)nloc;
	err = get_label(g, "root", "all", false, &idx);
	err = err ?: location_labels(g);
	for (i = 0; !err && i < np; i++) {
		pd = profile__process(g->p, i);
		/* One tower per program unless --per-pid; a process without
		 * a name cannot be grouped. */
		if (!pd->exe_name || !*pd->exe_name)
			snprintf(name, sizeof(name), "[pid %lld]", (long long)pd->pid);
		else if (g->o->per_pid)
			snprintf(name, sizeof(name), "%s [%lld]", pd->exe_name, (long long)pd->pid);
		else
			snprintf(name, sizeof(name), "%s", pd->exe_name);
		err = get_label(g, "process", name, false, &g->proc_label[i]);
	}
	if (err)
		return err;
	n = intern__count(g->labels);
	g->rank = malloc(n * sizeof(*g->rank));
	g->by_rank = malloc(n * sizeof(*g->by_rank));
	tmp = malloc(n * sizeof(*tmp));
	if (!g->rank || !g->by_rank || !tmp) {
		free(tmp);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		tmp[i].name = g->lab[i].name;
		tmp[i].type = g->lab[i].type;
		tmp[i].idx = (__u32)i;
	}
	qsort(tmp, n, sizeof(*tmp), cmp_label);
	for (i = 0; i < n; i++) {
		g->rank[tmp[i].idx] = (__u32)i;
		g->by_rank[i] = tmp[i].idx;
	}
	free(tmp);
	return 0;
}

/* Width of @v in px. */
static double px_width(const struct graph *g, __u64 v)
{
	return g->total ? (double)v * (g->width - 2 * FG_PAD) / (double)g->total : 0;
}

static bool visible(const struct graph *g, __u64 v)
{
	/* At least 1/FG_MIN_TENTHS px wide. */
	return (double)v * (g->width - 2 * FG_PAD) * FG_MIN_TENTHS >= (double)g->total;
}

/* A frame from @x to @end at @depth is complete: keep it if wide enough. */
static int close_frame(struct graph *g, __u64 x, __u64 end, __u32 depth, __u32 label)
{
	if (!visible(g, end - x)) {
		g->dropped++;
		return 0;
	}
	if (array__grow((void **)&g->frames, &g->frames_cap, g->nframes, sizeof(*g->frames), 1024,
			SIZE_MAX / sizeof(*g->frames)))
		return -ENOMEM;
	g->frames[g->nframes++] = (struct fg_frame){x, end - x, depth, label};
	if (depth > g->max_depth && px_width(g, end - x) >= FG_TALL_PX)
		g->max_depth = depth;
	return 0;
}

static int cmp_item(const void *x, const void *y)
{
	const struct item *a = x, *b = y;
	__u32 i, n = a->len < b->len ? a->len : b->len;

	for (i = 0; i < n; i++)
		if (a->seq[i] != b->seq[i])
			return a->seq[i] < b->seq[i] ? -1 : 1;
	return a->len < b->len ? -1 : a->len > b->len;
}

struct proc_order {
	const char *name, *type;
	size_t idx;
	__u64 sum;
};

/* The distinct stacks of the @np processes @procs (one tower) as items,
 * sorted by name order, so stacks sharing a prefix are adjacent. *@seq and
 * *@items are the caller's to free. */
static int process_items(struct graph *g, const struct proc_order *procs, size_t np,
			 struct item **items, size_t *nitems, __u32 **seq)
{
	size_t nt = 0, total_len = 0, j, k, n, off, start, pi;
	const struct profile_sample_entry *s;
	const __u32 *locs;
	struct item *it;
	__u32 *q;

	for (pi = 0; pi < np; pi++) {
		size_t ns = profile__sample_count(g->p, procs[pi].idx);

		for (j = 0; j < ns; j++) {
			s = profile__sample(g->p, procs[pi].idx, j);
			if (!sample_kept(g, s))
				continue;
			if (g->tl && fg_timeline__add(g->tl, procs[pi].idx, j, s))
				goto nomem;
			if (!g->stack_val[s->stack]) {
				g->touched[nt++] = s->stack;
				locs = profile__stack(g->p, s->stack, &n);
				for (k = 0; k < n; k++)
					total_len += g->loc_nlab[locs[k]];
			}
			g->stack_val[s->stack] += s->value;
		}
	}
	it = malloc((nt + 1) * sizeof(*it));
	q = malloc((total_len + 1) * sizeof(*q));
	if (!it || !q) {
		free(it);
		free(q);
		goto nomem;
	}
	for (off = 0, j = 0; j < nt; j++) {
		locs = profile__stack(g->p, g->touched[j], &n);
		it[j].seq = q + off;
		it[j].stack = g->touched[j];
		it[j].value = g->stack_val[g->touched[j]];
		g->stack_val[g->touched[j]] = 0;
		/* Stacks and a location's frames are innermost first: walk
		 * from the root unless inverted. */
		for (start = off, k = 0; k < n; k++) {
			__u32 loc = locs[g->o->inverted ? k : n - 1 - k];
			const __u32 *labs = &g->loc_labels[g->loc_label[loc]];
			__u32 nl = g->loc_nlab[loc], m;

			for (m = 0; m < nl; m++)
				q[off++] = g->rank[labs[g->o->inverted ? m : nl - 1 - m]];
		}
		it[j].len = (__u32)(off - start);
	}
	qsort(it, nt, sizeof(*it), cmp_item);
	if (g->tl) {
		/* The items' stacks in drawing order (touched is free again). */
		for (j = 0; j < nt; j++)
			g->touched[j] = it[j].stack;
		if (fg_timeline__end_tower(g->tl, g->touched, nt)) {
			free(it);
			free(q);
			return -ENOMEM;
		}
	}
	*items = it;
	*nitems = nt;
	*seq = q;
	return 0;
nomem:
	for (j = 0; j < nt; j++)
		g->stack_val[g->touched[j]] = 0;
	return -ENOMEM;
}

/* Lay out the @np processes @procs, which share tower @label, from offset
 * *@x on: the tower's frame at depth 1, the stacks above. Consecutive sorted
 * stacks share their common prefix of open frames; a frame's width is known
 * when it closes. */
static int add_tower(struct graph *g, const struct proc_order *procs, size_t np, __u32 label,
		     __u64 *x)
{
	struct open_frame *path = NULL;
	struct item *items = NULL;
	size_t nitems = 0, j, maxlen = 0;
	__u64 start = *x, cur = *x;
	__u32 *seq = NULL, depth = 0, common;
	int err;

	err = process_items(g, procs, np, &items, &nitems, &seq);
	if (err)
		return err;
	for (j = 0; j < nitems; j++)
		if (items[j].len > maxlen)
			maxlen = items[j].len;
	path = malloc((maxlen + 1) * sizeof(*path));
	if (!path) {
		err = -ENOMEM;
		goto out;
	}
	for (j = 0; j < nitems && !err; j++) {
		const struct item *it = &items[j];

		for (common = 0; common < depth && common < it->len; common++)
			if (path[common].rank != it->seq[common])
				break;
		while (depth > common && !err) {
			depth--;
			err = close_frame(g, path[depth].x, cur, depth + 2,
					  g->by_rank[path[depth].rank]);
		}
		for (; depth < it->len; depth++)
			path[depth] = (struct open_frame){cur, it->seq[depth]};
		cur += it->value;
	}
	while (depth > 0 && !err) {
		depth--;
		err = close_frame(g, path[depth].x, cur, depth + 2, g->by_rank[path[depth].rank]);
	}
	if (!err)
		err = close_frame(g, start, cur, 1, label);
	*x = cur;
out:
	free(path);
	free(items);
	free(seq);
	return err;
}

static int cmp_proc(const void *x, const void *y)
{
	const struct proc_order *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

static int frame_order(const void *x, const void *y)
{
	const struct fg_frame *a = x, *b = y;

	/* Offset, then depth: each frame comes right before its children. */
	if (a->x != b->x)
		return a->x < b->x ? -1 : 1;
	return (a->depth > b->depth) - (a->depth < b->depth);
}

static int graph_build(struct graph *g, const struct profile *p, const struct flamegraph_opts *o)
{
	size_t np = profile__process_count(p), i, j, n = 0;
	struct proc_order *order = NULL;
	__u64 x = 0;
	int err;

	memset(g, 0, sizeof(*g));
	g->p = p;
	g->o = o;
	{
		__u32 st, su, pt, pu;

		profile__value_types(p, &st, &su, &pt, &pu);
		g->off_cpu = !strcmp(profile__string(p, st, NULL), "off_cpu");
	}
	g->width = o->width ? o->width : FG_DEFAULT_WIDTH;
	if (g->width < 4 * FG_PAD)
		g->width = 4 * FG_PAD;
	g->top = FG_TOP;
	buf__init(&g->tl_svg, FG_MAX_BYTES);
	err = fg_timeline__new(p, g->width, o->timeline_cap, &g->tl);
	if (err)
		goto out;
	g->labels = intern__new(PROFILE_MAX_ENTRIES);
	g->loc_label = calloc(profile__location_count(p), sizeof(*g->loc_label));
	g->loc_nlab = calloc(profile__location_count(p), sizeof(*g->loc_nlab));
	g->proc_label = calloc(np + 1, sizeof(*g->proc_label));
	g->stack_val = calloc(profile__stack_count(p), sizeof(*g->stack_val));
	g->touched = malloc(profile__stack_count(p) * sizeof(*g->touched));
	order = malloc((np + 1) * sizeof(*order));
	err = -ENOMEM;
	if (!g->labels || !g->loc_label || !g->loc_nlab || !g->proc_label || !g->stack_val ||
	    !g->touched || !order)
		goto out;
	err = make_labels(g);
	if (err)
		goto out;
	for (i = 0; i < np; i++) {
		order[n].sum = process_sum(g, i);
		if (!order[n].sum)
			continue;
		order[n].name = g->lab[g->proc_label[i]].name;
		order[n].type = "";
		order[n].idx = i;
		g->lab[g->proc_label[i]].nprocs++;
		g->total += order[n++].sum;
	}
	if (n) /* qsort wants a non-NULL array even for 0 elements (UBSan) */
		qsort(order, n, sizeof(*order), cmp_proc);
	g->nprocs = n;
	/* Processes of one tower are adjacent: sorted by their label's name. */
	for (i = 0; i < n && !err; i = j) {
		__u32 label = g->proc_label[order[i].idx];

		for (j = i + 1; j < n && g->proc_label[order[j].idx] == label; j++)
			;
		g->ntowers++;
		err = add_tower(g, order + i, j - i, label, &x);
	}
	if (!err && g->total)
		err = close_frame(g, 0, g->total, 0, 0); /* "all" is label 0 */
	if (!err && g->nframes)
		qsort(g->frames, g->nframes, sizeof(*g->frames), frame_order);
out:
	free(order);
	return err;
}

/* ---- SVG ------------------------------------------------------------------------------- */

static void put_title(struct buf_out *o, const struct profile *p, const struct flamegraph_opts *fo)
{
	const struct profile_meta *m = profile__meta(p);
	char when[64] = "";
	struct tm tm;
	time_t t;

	if (fo->title) {
		put_xml(o, fo->title, 0);
		return;
	}
	buf__puts(o, "Flame graph");
	if (m->host_name && *m->host_name) {
		buf__puts(o, ": ");
		put_xml(o, m->host_name, 0);
	}
	t = (time_t)(m->time_unix_nano / 1000000000ull);
	if (m->time_unix_nano && gmtime_r(&t, &tm) &&
	    strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm))
		putf(o, "%s%s", m->host_name && *m->host_name ? ", " : ": ", when);
}

static void put_subtitle(struct buf_out *o, const struct graph *g)
{
	const struct profile_meta *m = profile__meta(g->p);
	__u32 st, su, pt, pu;
	const char *stype;

	profile__value_types(g->p, &st, &su, &pt, &pu);
	stype = profile__string(g->p, st, NULL);
	if (g->off_cpu) {
		putf(o, "OFF-CPU: %.3f s blocked (widths are time off the CPU)",
		     g->total / 1e9);
	} else {
		putf(o, "%llu ", (unsigned long long)g->total);
		put_xml(o, *stype ? stype : "samples", 0);
	}
	putf(o, ", %zu process%s", g->nprocs, g->nprocs == 1 ? "" : "es");
	if (g->ntowers < g->nprocs)
		putf(o, " of %zu program%s", g->ntowers, g->ntowers == 1 ? "" : "s");
	if (m->duration_nano)
		putf(o, ", %.1f s", m->duration_nano / 1e9);
	if (m->period_ns && !strcmp(profile__string(g->p, pt, NULL), "cpu"))
		putf(o, ", %.0f Hz", 1e9 / (double)m->period_ns);
	if (g->o->filter_pid)
		putf(o, ", pid %lld only", (long long)g->o->pid);
	if (g->o->filter_trace) {
		buf__puts(o, ", trace ");
		for (size_t b = 0; b < sizeof(g->o->trace_id); b++)
			putf(o, "%02x", g->o->trace_id[b]);
		buf__puts(o, " only");
	}
	for (size_t i = 0; i < g->o->nattrs; i++) { /* ", http.route=/users only" */
		buf__puts(o, ", ");
		put_xml(o, g->o->attrs[i].key, 0);
		buf__puts(o, "=");
		put_xml(o, g->o->attrs[i].value, 0);
		if (i + 1 == g->o->nattrs)
			buf__puts(o, " only");
	}
	if (g->o->inverted)
		buf__puts(o, ", inverted (leaf functions at the top, callers below)");
	if (g->dropped)
		putf(o, "; %zu frame%s narrower than 0.1 px not drawn", g->dropped,
		     g->dropped == 1 ? "" : "s");
}

/* One swatch per colour family of the frames drawn, in family order. */
static void put_legend(struct buf_out *o, const struct graph *g)
{
	bool seen[FAM__COUNT] = {false}, inlined = false;
	unsigned x = FG_PAD, f;
	__u8 rgb[3];
	size_t i;

	for (i = 0; i < g->nframes; i++) {
		seen[g->lab[g->frames[i].label].family] = true;
		inlined |= g->lab[g->frames[i].label].inlined;
	}
	for (f = FAM_PROCESS; f < FAM__COUNT; f++) {
		if (!seen[f])
			continue;
		colour(families[f].type, f, g->off_cpu, rgb);
		putf(o,
		     "<g class=\"lg\"><rect x=\"%u\" y=\"%u\" width=\"10\" height=\"10\" "
		     "fill=\"rgb(%u,%u,%u)\"/><text x=\"%u\" y=\"%u\" "
		     "class=\"small\">%s</text></g>\n",
		     x, FG_LEGEND_Y - 9, rgb[0], rgb[1], rgb[2], x + 14, FG_LEGEND_Y,
		     families[f].type);
		x += 30 + (unsigned)(strlen(families[f].type) * FG_CHAR_W);
	}
	if (inlined)
		putf(o, "<text x=\"%u\" y=\"%u\" class=\"small\">paler: inlined</text>\n", x,
		     FG_LEGEND_Y);
}

static void put_frame(struct buf_out *o, const struct graph *g, const struct fg_frame *f)
{
	const struct label *lab = &g->lab[f->label];
	double scale = (double)(g->width - 2 * FG_PAD) / (double)g->total;
	double x = FG_PAD + f->x * scale, w = f->v * scale;
	bool deep = f->depth > g->max_depth;
	unsigned y = g->o->inverted ? g->top + f->depth * FG_FRAME_H
		     : deep	    ? 0
				    : g->top + (g->max_depth - f->depth) * FG_FRAME_H;
	double fit = (w - 6) / FG_CHAR_W;
	size_t chars = fit > 0 ? (size_t)fit : 0;

	putf(o, "<g class=\"f\" data-x=\"%llu\" data-v=\"%llu\" data-d=\"%u\"%s><title>",
	     (unsigned long long)f->x, (unsigned long long)f->v, f->depth,
	     deep ? " style=\"display:none\"" : "");
	put_xml(o, lab->name, 0);
	if (g->off_cpu)
		putf(o, "\n%.3f ms off-CPU, %.2f%% of all, type ", f->v / 1e6,
		     100.0 * (double)f->v / (double)g->total);
	else
		putf(o, "\n%llu samples, %.2f%% of all, type ", (unsigned long long)f->v,
		     100.0 * (double)f->v / (double)g->total);
	put_xml(o, *lab->type ? lab->type : "unknown", 0);
	if (lab->nprocs > 1)
		putf(o, ", %u processes", lab->nprocs);
	if (lab->inlined)
		buf__puts(o, ", inlined");
	if (lab->file) {
		buf__puts(o, "\n");
		put_xml(o, lab->file, 0);
		if (lab->line && !lab->mixed_lines)
			putf(o, ":%lld", (long long)lab->line);
		else if (lab->mixed_lines)
			buf__puts(o, " (several lines)");
	}
	putf(o,
	     "</title><rect x=\"%.1f\" y=\"%u\" width=\"%.1f\" height=\"%u\" "
	     "fill=\"rgb(%u,%u,%u)\"/><text x=\"%.1f\" y=\"%u\">",
	     x, y, w, FG_FRAME_H - 1, lab->rgb[0], lab->rgb[1], lab->rgb[2], x + 3, y + 11);
	if (chars >= 3)
		put_xml(o, lab->name, lab->chars > chars ? chars - 2 : 0);
	buf__puts(o, "</text></g>\n");
}

static void put_svg(struct buf_out *o, const struct graph *g)
{
	unsigned w = g->width, h = g->top + (g->max_depth + 1) * FG_FRAME_H + FG_BOTTOM;
	size_t i;

	putf(o,
	     "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	     "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"fg-svg\" "
	     "width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\">\n",
	     w, h, w, h);
	buf__puts(o, "<style>");
	buf__puts(o, flamegraph_css);
	if (g->tl)
		buf__puts(o, flamegraph_timeline_css);
	buf__puts(o, "</style>\n");
	putf(o, "<rect id=\"fg-bg\" class=\"bg\" x=\"0\" y=\"0\" width=\"%u\" height=\"%u\"/>\n", w,
	     h);
	putf(o, "<text id=\"fg-title\" class=\"title\" data-anchor=\"c\" x=\"%u\" y=\"20\">",
	     w / 2);
	put_title(o, g->p, g->o);
	putf(o, "</text>\n<text id=\"fg-sub\" class=\"sub\" x=\"%u\" y=\"40\">", FG_PAD);
	put_subtitle(o, g);
	buf__puts(o, "</text>\n");
	put_legend(o, g);
	putf(o,
	     "<text id=\"fg-reset\" class=\"btn\" x=\"%u\" y=\"20\" style=\"display:none\">"
	     "Reset zoom</text>\n"
	     "<text id=\"fg-search\" class=\"btn end\" data-anchor=\"r\" x=\"%u\" y=\"20\">"
	     "Search (Ctrl-F)</text>\n",
	     FG_PAD, w - FG_PAD);
	if (g->tl) {
		putf(o,
		     "<text id=\"fg-tl-reset\" class=\"btn\" x=\"%u\" y=\"20\" "
		     "style=\"display:none\">Reset range</text>\n",
		     FG_PAD + 100);
		buf__put(o, g->tl_svg.data, g->tl_svg.len);
	}
	putf(o,
	     "<g id=\"fg-frames\" data-total=\"%llu\" data-width=\"%u\" data-pad=\"%u\" "
	     "data-fixed=\"%d\" data-inverted=\"%d\" data-top=\"%u\" data-row=\"%u\" "
	     "data-bottom=\"%u\">\n",
	     (unsigned long long)g->total, w, FG_PAD, g->o->width ? 1 : 0, g->o->inverted ? 1 : 0,
	     g->top, FG_FRAME_H, FG_BOTTOM);
	for (i = 0; i < g->nframes; i++)
		put_frame(o, g, &g->frames[i]);
	buf__puts(o, "</g>\n");
	if (!g->total)
		putf(o, "<text class=\"small\" x=\"%u\" y=\"%u\">No samples to draw</text>\n",
		     FG_PAD, g->top + 12);
	putf(o,
	     "<text id=\"fg-status\" class=\"small\" x=\"%u\" y=\"%u\">Hover a frame for details, "
	     "click to zoom, Ctrl-F to search</text>\n"
	     "<text id=\"fg-matched\" class=\"small end\" data-anchor=\"r\" x=\"%u\" "
	     "y=\"%u\"></text>\n",
	     FG_PAD, h - 10, w - FG_PAD, h - 10);
	if (g->tl)
		fg_timeline__put_data(g->tl, o);
	buf__puts(o, "<script><![CDATA[");
	buf__puts(o, flamegraph_js);
	if (g->tl)
		buf__puts(o, flamegraph_timeline_js);
	buf__puts(o, flamegraph_js_end);
	buf__puts(o, "]]></script>\n</svg>\n");
}

int flamegraph__render(const struct profile *p, const struct flamegraph_opts *o, struct buf *out)
{
	static const struct flamegraph_opts defaults;
	struct buf_out w = {.b = out};
	struct graph g;
	int err;

	if (!o)
		o = &defaults;
	err = graph_build(&g, p, o);
	if (!err && g.tl) {
		struct buf_out tw = {.b = &g.tl_svg};
		unsigned h = 0;

		err = fg_timeline__put(g.tl, o, FG_TOP, &tw, &h);
		g.top = FG_TOP + h;
	}
	if (!err) {
		put_svg(&w, &g);
		err = w.err;
	}
	graph_release(&g);
	return err;
}
