/* activity.c - the thread-activity view (see activity.h).
 *
 * One pass over the samples: their threads, kinds and states (so no
 * attribute is read per occurrence). Then two over the occurrences in time
 * order (profile__events()): each thread's activity, to keep the most
 * active ones; then, for those, the per-interval values, the segments and
 * the spans.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/activity.h"
#include "model/profile.h"
#include "model/view.h"
#include "util/array.h"
#include "util/intern.h"

enum { KIND_NONE = 0, KIND_CPU, KIND_WAIT };

#define HIDDEN UINT32_MAX

/* What a sample is to the view: its tracked thread, kind and state. */
struct sinfo {
	__u32 thread; /* tracked index, HIDDEN when left out */
	__u8 kind;
	__u8 state;
	__u16 pad;
};

struct tkey {
	__s64 pid, tid;
};

struct skey {
	__u32 thread, link;
};

struct build {
	const struct profile *p;
	const struct activity_opts *o;
	struct activity *a;
	__u32 cpu_type, off_type;
	bool have_off;
	bool counting; /* pass 2: count what is left out */
	size_t *base;  /* per process entry: index of its first sample in @info */
	struct sinfo *info;
	struct intern *tracked; /* struct tkey -> tracked index */
	const char **tnames;
	__u64 *tact; /* per tracked thread: ns of activity */
	size_t tcap, acap;
	__u32 *slot;		  /* tracked -> shown thread, HIDDEN when not shown */
	struct intern *span_keys; /* struct skey -> span index */
	struct activity_span *spans;
	size_t spans_cap;
	size_t nsegs; /* over every thread */
	struct profile_event *ev;
	size_t nev;
};

static const char *const state_names[ACTIVITY__STATES] = {
	[ACTIVITY_RUNNING] = "running",
	[ACTIVITY_RUNNABLE] = "runnable",
	[ACTIVITY_INTERRUPTIBLE] = "interruptible",
	[ACTIVITY_UNINTERRUPTIBLE] = "uninterruptible",
	[ACTIVITY_OTHER_WAIT] = "waiting",
	[ACTIVITY_UNKNOWN] = "unknown",
};

const char *activity__state_name(unsigned int s)
{
	return s < ACTIVITY__STATES ? state_names[s] : "?";
}

char activity__state_char(unsigned int s)
{
	static const char c[] = "#+SDw.";

	return s < ACTIVITY__STATES ? c[s] : ' ';
}

__u64 activity__auto_interval(__u64 span_ns, size_t target)
{
	static const __u64 steps[] = {1, 2, 5};
	__u64 scale = 1000000; /* 1 ms */
	size_t i;

	if (!target)
		target = 1;
	for (;;) {
		for (i = 0; i < 3; i++)
			if (span_ns / (steps[i] * scale) < target)
				return steps[i] * scale;
		if (scale > UINT64_MAX / 100)
			return UINT64_MAX / 10;
		scale *= 10;
	}
}

static unsigned int wait_state(const char *s)
{
	if (!s)
		return ACTIVITY_OTHER_WAIT;
	if (!strcmp(s, "runnable"))
		return ACTIVITY_RUNNABLE;
	if (!strcmp(s, "interruptible"))
		return ACTIVITY_INTERRUPTIBLE;
	if (!strcmp(s, "uninterruptible"))
		return ACTIVITY_UNINTERRUPTIBLE;
	return ACTIVITY_OTHER_WAIT;
}

/* The value type of CPU samples (a cpu/nanoseconds period, as profcap and
 * perf write them; not necessarily type 0 in a file read back) into
 * *@type, and its period; 0 when there is none. */
static __u64 cpu_type(const struct profile *p, __u32 *type)
{
	__u32 t, st, su, pt, pu;
	__s64 period;

	for (t = 0; t < profile__value_type_count(p); t++) {
		profile__value_type(p, t, &st, &su, &pt, &pu);
		if (strcmp(profile__string(p, pt, NULL), "cpu") ||
		    strcmp(profile__string(p, pu, NULL), "nanoseconds") ||
		    !strcmp(profile__string(p, st, NULL), "off_cpu"))
			continue;
		period = profile__period(p, t);
		if (period > 0) {
			*type = t;
			return (__u64)period;
		}
	}
	return 0;
}

/* The tracked index of thread (@pid, @tid), added when new. */
static int track(struct build *b, __s64 pid, __s64 tid, const char *name, __u32 *idx)
{
	struct tkey k = {pid, tid};
	bool added;
	int err;

	err = intern__put(b->tracked, &k, sizeof(k), idx, &added);
	if (!err && added)
		err = array__grow((void **)&b->tnames, &b->tcap, *idx, sizeof(*b->tnames), 64,
				  ACTIVITY_MAX_TRACKED);
	if (!err && added)
		err = array__grow((void **)&b->tact, &b->acap, *idx, sizeof(*b->tact), 64,
				  ACTIVITY_MAX_TRACKED);
	if (!err && added) {
		b->tnames[*idx] = name;
		b->tact[*idx] = 0;
	}
	return err;
}

/* The info of sample @j of process entry @i (of kind @kind). */
static int sample_info(struct build *b, size_t i, size_t j, __u8 kind, struct sinfo *si)
{
	const struct profile_process_desc *d = profile__process(b->p, i);
	const struct profile_sample_entry *s = profile__sample(b->p, i, j);
	const char *tname, *exe = d->exe_name && *d->exe_name ? d->exe_name : NULL;
	char scratch[32];
	__s64 tid;
	int err;

	si->thread = HIDDEN;
	view__sample_thread(b->p, s, &tid, &tname);
	if (b->o->filter_pid && d->pid != b->o->pid)
		return 0;
	if (b->o->comm && !(exe && !strcmp(exe, b->o->comm)) && strcmp(tname, b->o->comm))
		return 0;
	si->kind = kind;
	if (kind == KIND_WAIT)
		si->state = (__u8)wait_state(view__sample_attr(b->p, s, PROFILE_ATTR_OFF_CPU_STATE,
							       scratch, sizeof(scratch)));
	else
		si->state = ACTIVITY_RUNNING;
	err = track(b, d->pid, tid, *tname ? tname : exe ? exe : "?", &si->thread);
	if (err == -E2BIG) {
		si->thread = HIDDEN;
		return 0; /* counted as dropped when its pieces come */
	}
	return err;
}

/* Pass 1: the info of every sample of a kind the view reads. */
static int classify(struct build *b)
{
	size_t i, j, n = 0, cap = 0, nproc = profile__process_count(b->p);
	int err = 0;

	b->base = calloc(nproc + 1, sizeof(*b->base));
	if (!b->base)
		return -ENOMEM;
	for (i = 0; i < nproc && !err; i++) {
		__u32 type = profile__process_type(b->p, i);
		__u8 kind = KIND_NONE;

		if (b->a->period_ns && type == b->cpu_type)
			kind = KIND_CPU;
		else if (b->have_off && type == b->off_type)
			kind = KIND_WAIT;
		b->base[i] = n;
		for (j = 0; j < profile__sample_count(b->p, i) && !err; j++, n++) {
			err = array__grow((void **)&b->info, &cap, n, sizeof(*b->info), 256,
					  SIZE_MAX / sizeof(*b->info));
			if (err)
				break;
			b->info[n] = (struct sinfo){.thread = HIDDEN, .kind = KIND_NONE};
			if (kind != KIND_NONE)
				err = sample_info(b, i, j, kind, &b->info[n]);
		}
	}
	b->base[nproc] = n;
	return err;
}

/* @a * @b and @a + @b, at most UINT64_MAX: values come from files. */
static __u64 mul_sat(__u64 a, __u64 b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static __u64 add_sat(__u64 a, __u64 b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The piece of time event @e stands for: [*@s, *@e), its state. NULL when
 * the view does not read it. */
static const struct sinfo *piece(struct build *b, const struct profile_event *e, __u64 *s,
				 __u64 *end)
{
	const struct sinfo *si = &b->info[b->base[e->proc] + e->sample];
	__u64 half;

	if (si->kind == KIND_NONE)
		return NULL;
	if (!e->time_ns) {
		b->a->untimed += b->counting ? 1 : 0;
		return NULL;
	}
	if (si->kind == KIND_WAIT) {
		*s = e->time_ns;
		*end = add_sat(e->time_ns, e->value);
	} else {
		half = mul_sat(e->value, b->a->period_ns) / 2;
		*s = e->time_ns > half ? e->time_ns - half : 0;
		*end = add_sat(e->time_ns, half);
	}
	if (si->thread == HIDDEN && b->counting)
		b->a->dropped++;
	return *end > *s ? si : NULL;
}

/* The CPU time of event @e of kind @kind. */
static __u64 event_ns(const struct build *b, const struct profile_event *e, __u8 kind)
{
	return kind == KIND_WAIT ? e->value : mul_sat(e->value, b->a->period_ns);
}

/* Pass 2: each thread's activity and the time range of all. */
static void measure(struct build *b)
{
	struct activity *a = b->a;
	size_t i;
	__u64 s, e;

	a->start = UINT64_MAX;
	b->counting = true;
	for (i = 0; i < b->nev; i++) {
		const struct sinfo *si = piece(b, &b->ev[i], &s, &e);

		if (!si || si->thread == HIDDEN)
			continue;
		b->tact[si->thread] += event_ns(b, &b->ev[i], si->kind);
		a->start = s < a->start ? s : a->start;
		a->end = e > a->end ? e : a->end;
		if (si->kind == KIND_WAIT)
			a->has_wait = true;
		if (si->state == ACTIVITY_RUNNABLE)
			a->has_runnable = true;
	}
	b->counting = false;
}

struct ranked {
	__u64 act;
	__u32 idx, pad;
};

static int cmp_act_desc(const void *x, const void *y)
{
	const struct ranked *i = x, *j = y;

	if (i->act != j->act)
		return i->act > j->act ? -1 : 1;
	return i->idx < j->idx ? -1 : i->idx > j->idx;
}

static int cmp_thread(const void *x, const void *y)
{
	const struct activity_thread *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* The most active threads become the shown ones, in pid and tid order. */
static int pick_threads(struct build *b)
{
	size_t n = intern__count(b->tracked), keep, i;
	__u32 max = b->o->max_threads;
	struct ranked *order;
	struct activity *a = b->a;

	if (!max || max > ACTIVITY_MAX_THREADS)
		max = ACTIVITY_MAX_THREADS;
	order = malloc((n ? n : 1) * sizeof(*order));
	b->slot = malloc((n ? n : 1) * sizeof(*b->slot));
	if (!order || !b->slot) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		order[i] = (struct ranked){.act = b->tact[i], .idx = (__u32)i};
		b->slot[i] = HIDDEN;
	}
	qsort(order, n, sizeof(*order), cmp_act_desc);
	keep = n < max ? n : max;
	while (keep && !order[keep - 1].act)
		keep--;
	a->threads = calloc(keep ? keep : 1, sizeof(*a->threads));
	if (!a->threads) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < keep; i++) {
		const struct tkey *k = intern__get(b->tracked, order[i].idx, NULL);

		a->threads[i] = (struct activity_thread){.pid = k->pid,
							 .tid = k->tid,
							 .name = b->tnames[order[i].idx],
							 .first = UINT64_MAX};
	}
	for (i = keep; i < n; i++)
		a->threads_hidden += order[i].act ? 1 : 0;
	a->nthreads = keep;
	qsort(a->threads, keep, sizeof(*a->threads), cmp_thread);
	for (i = 0; i < keep; i++) {
		struct tkey k = {a->threads[i].pid, a->threads[i].tid};
		__u32 idx;

		if (!intern__find(b->tracked, &k, sizeof(k), &idx))
			b->slot[idx] = (__u32)i;
	}
	free(order);
	return 0;
}

/* Append segment [@s, @e) of @state to @t, or extend its last one. */
static int add_segment(struct build *b, struct activity_thread *t, __u64 s, __u64 e,
		       unsigned int state)
{
	bool wait = state != ACTIVITY_RUNNING;
	struct activity_segment *last;
	__u64 tol = wait ? 0 : b->a->period_ns / 2;
	int err;

	/* A wait was measured: a sampled run that overlaps it gives way. */
	while (t->nsegs) {
		last = &t->segs[t->nsegs - 1];
		if (last->end <= s)
			break;
		if (wait && last->state == ACTIVITY_RUNNING) {
			if (last->start < s) {
				last->end = s;
				break;
			}
			t->nsegs--;
			b->nsegs--;
			continue;
		}
		if (!wait || last->state != state)
			s = last->end > s ? last->end : s;
		break;
	}
	if (s >= e)
		return 0;
	last = t->nsegs ? &t->segs[t->nsegs - 1] : NULL;
	if (last && last->state == state && s <= last->end + tol) {
		last->end = e > last->end ? e : last->end;
		return 0;
	}
	if (b->nsegs >= ACTIVITY_MAX_SEGMENTS) {
		b->a->segments_dropped++;
		return 0;
	}
	err = array__grow((void **)&t->segs, &t->segs_cap, t->nsegs, sizeof(*t->segs), 64,
			  ACTIVITY_MAX_SEGMENTS);
	if (err)
		return err;
	t->segs[t->nsegs++] = (struct activity_segment){.start = s, .end = e, .state = state};
	b->nsegs++;
	return 0;
}

/* Add @ns of @state at [@s, @e) to @t's intervals: a CPU sample at its
 * time (@point), a wait split over the intervals it spans. */
static void add_cells(const struct activity *a, struct activity_thread *t, __u64 s, __u64 e,
		      unsigned int state, __u64 ns, __u64 point)
{
	size_t i, last;

	if (!t->cells)
		return;
	if (state == ACTIVITY_RUNNING) {
		i = (size_t)((point - a->start) / a->interval_ns);
		t->cells[(i < a->nintervals ? i : a->nintervals - 1) * ACTIVITY__STATES + state] +=
			ns;
		return;
	}
	i = (size_t)((s - a->start) / a->interval_ns);
	last = (size_t)((e - 1 - a->start) / a->interval_ns);
	for (; i <= last && i < a->nintervals; i++) {
		__u64 bs = a->start + i * a->interval_ns, be = bs + a->interval_ns;

		t->cells[i * ACTIVITY__STATES + state] += (e < be ? e : be) - (s > bs ? s : bs);
	}
}

/* Piece [@s, @e) (@ns of time) of shown thread @ti in span @link. */
static int add_span(struct build *b, __u32 ti, __u32 link, __u64 s, __u64 e, __u64 ns, bool wait)
{
	struct skey k = {ti, link};
	struct activity_span *sp;
	bool added;
	__u32 idx;
	int err;

	err = intern__put(b->span_keys, &k, sizeof(k), &idx, &added);
	if (err == -E2BIG) {
		b->a->spans_dropped++;
		return 0;
	}
	if (!err && added)
		err = array__grow((void **)&b->spans, &b->spans_cap, idx, sizeof(*b->spans), 64,
				  ACTIVITY_MAX_SPANS);
	if (err)
		return err;
	sp = &b->spans[idx];
	if (added)
		*sp = (struct activity_span){.start = s, .end = e, .link = link};
	sp->start = s < sp->start ? s : sp->start;
	sp->end = e > sp->end ? e : sp->end;
	if (wait)
		sp->wait_ns += ns;
	else
		sp->cpu_ns += ns;
	return 0;
}

/* Pass 3: intervals, segments and spans of the shown threads. */
static int fill(struct build *b)
{
	struct activity *a = b->a;
	size_t i;
	__u64 s, e, ns;
	int err = 0;

	for (i = 0; i < b->nev && !err; i++) {
		const struct profile_event *ev = &b->ev[i];
		const struct sinfo *si = piece(b, ev, &s, &e);
		const struct profile_sample_entry *se;
		struct activity_thread *t;
		__u32 ti;

		if (!si || si->thread == HIDDEN || (ti = b->slot[si->thread]) == HIDDEN)
			continue;
		t = &a->threads[ti];
		ns = event_ns(b, ev, si->kind);
		t->ns[si->state] += ns;
		t->first = s < t->first ? s : t->first;
		t->last = e > t->last ? e : t->last;
		add_cells(a, t, s, e, si->state, ns, ev->time_ns);
		err = add_segment(b, t, s, e, si->state);
		se = profile__sample(b->p, ev->proc, ev->sample);
		if (!err && se->link)
			err = add_span(b, ti, se->link, s, e, ns, si->kind == KIND_WAIT);
	}
	return err;
}

static int cmp_span(const void *x, const void *y)
{
	const struct activity_span *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->link < b->link ? -1 : a->link > b->link;
}

/* Hand the spans to their threads, each thread's by start. */
static int hand_out_spans(struct build *b)
{
	struct activity *a = b->a;
	size_t i, n = intern__count(b->span_keys);
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		const struct skey *k = intern__get(b->span_keys, (__u32)i, NULL);
		struct activity_thread *t = &a->threads[k->thread];

		err = array__grow((void **)&t->spans, &t->spans_cap, t->nspans, sizeof(*t->spans),
				  8, ACTIVITY_MAX_SPANS);
		if (!err)
			t->spans[t->nspans++] = b->spans[i];
	}
	for (i = 0; i < a->nthreads && !err; i++)
		if (a->threads[i].nspans)
			qsort(a->threads[i].spans, a->threads[i].nspans,
			      sizeof(struct activity_span), cmp_span);
	return err;
}

/* Unknown time: per interval and in all, within each thread's own time. */
static void unknowns(struct activity *a)
{
	size_t i, k, st;

	for (i = 0; i < a->nthreads; i++) {
		struct activity_thread *t = &a->threads[i];
		__u64 known = 0, span = t->last - t->first;

		for (st = 0; st < ACTIVITY_UNKNOWN; st++)
			known += t->ns[st];
		t->ns[ACTIVITY_UNKNOWN] = span > known ? span - known : 0;
		for (k = 0; t->cells && k < a->nintervals; k++) {
			__u64 bs = a->start + k * a->interval_ns, be = bs + a->interval_ns;
			__u64 from = bs > t->first ? bs : t->first,
			      to = be < t->last ? be : t->last;
			__u64 *c = &t->cells[k * ACTIVITY__STATES];

			for (st = 0, known = 0; st < ACTIVITY_UNKNOWN; st++)
				known += c[st];
			c[ACTIVITY_UNKNOWN] =
				to > from && to - from > known ? to - from - known : 0;
		}
	}
}

unsigned int activity__dominant(const struct activity *a, const struct activity_thread *t, size_t i)
{
	__u64 bs, be, from, to, best = 0;
	unsigned int st, pick = ACTIVITY_UNKNOWN;
	const __u64 *c;

	if (!t->cells || i >= a->nintervals)
		return ACTIVITY__STATES;
	bs = a->start + i * a->interval_ns;
	be = bs + a->interval_ns;
	if (be <= t->first || bs >= t->last)
		return ACTIVITY__STATES;
	from = bs > t->first ? bs : t->first;
	to = be < t->last ? be : t->last;
	c = &t->cells[i * ACTIVITY__STATES];
	for (st = 0; st < ACTIVITY_UNKNOWN; st++)
		if (c[st] > best) {
			best = c[st];
			pick = st;
		}
	/* Sampling leaves most of a thread's time unknown when it gets little
	 * CPU: a known state is shown from a quarter of the interval on. */
	return best * 4 >= to - from ? pick : ACTIVITY_UNKNOWN;
}

/* The intervals of every shown thread. */
static int alloc_cells(struct activity *a)
{
	size_t i;

	if (!a->interval_ns)
		return 0;
	a->nintervals = (size_t)((a->end - a->start + a->interval_ns - 1) / a->interval_ns);
	if (!a->nintervals)
		a->nintervals = 1;
	if (a->nintervals > ACTIVITY_MAX_INTERVALS)
		return -E2BIG;
	for (i = 0; i < a->nthreads; i++) {
		a->threads[i].cells =
			calloc(a->nintervals * ACTIVITY__STATES, sizeof(*a->threads[i].cells));
		if (!a->threads[i].cells)
			return -ENOMEM;
	}
	return 0;
}

static int build(struct build *b)
{
	struct activity *a = b->a;
	int err;

	a->period_ns = cpu_type(b->p, &b->cpu_type);
	b->have_off = !profile__find_value_type(b->p, "off_cpu", &b->off_type);
	b->tracked = intern__new(ACTIVITY_MAX_TRACKED);
	b->span_keys = intern__new(ACTIVITY_MAX_SPANS);
	if (!b->tracked || !b->span_keys)
		return -ENOMEM;
	err = classify(b);
	err = err ?: profile__events(b->p, &b->ev, &b->nev);
	if (err)
		return err;
	measure(b);
	if (a->start >= a->end)
		return -ENODATA;
	if (!a->interval_ns && b->o->columns)
		a->interval_ns = activity__auto_interval(a->end - a->start, b->o->columns);
	err = pick_threads(b);
	err = err ?: alloc_cells(a);
	err = err ?: fill(b);
	err = err ?: hand_out_spans(b);
	if (!err)
		unknowns(a);
	return err;
}

int activity__build(const struct profile *p, const struct activity_opts *o, struct activity **out)
{
	struct build b = {.p = p, .o = o};
	int err;

	*out = NULL;
	b.a = calloc(1, sizeof(*b.a));
	if (!b.a)
		return -ENOMEM;
	b.a->interval_ns = o->interval_ns;
	err = build(&b);
	free(b.base);
	free(b.info);
	intern__free(b.tracked);
	free(b.tnames);
	free(b.tact);
	free(b.slot);
	intern__free(b.span_keys);
	free(b.spans);
	free(b.ev);
	if (err) {
		activity__free(b.a);
		return err;
	}
	*out = b.a;
	return 0;
}

void activity__free(struct activity *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->nthreads; i++) {
		free(a->threads[i].cells);
		free(a->threads[i].segs);
		free(a->threads[i].spans);
	}
	free(a->threads);
	free(a);
}
