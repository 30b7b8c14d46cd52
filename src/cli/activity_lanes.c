/* activity_lanes.c - `flamegraph --activity` (see activity_lanes.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/activity_lanes.h"
#include "cli/input.h"
#include "cli/symbolize_opt.h"
#include "cli/timeslice.h"
#include "formats/flamegraph.h"
#include "formats/flamegraph_activity.h"
#include "formats/format.h"
#include "model/profile.h"
#include "util/log.h"

struct activity_lanes {
	struct profile *full; /* every type; NULL when the graph's profile is it */
	struct fg_activity_arg arg;
};

/* Slice l->full by @time on the bounds the graph's --time gets from @drawn
 * (not sliced yet): the same range, however the types' first times differ.
 * A range that does not parse is left to the graph's own error. */
static int slice_full(struct activity_lanes *l, const struct profile *drawn, const char *time)
{
	struct profile *s = NULL;
	__u64 first, last, from, to;
	int err;

	if (!time || !l->full || profile__time_span(drawn, &first, &last) ||
	    timeslice__parse(time, first, &from, &to))
		return 0;
	err = profile__slice(l->full, from, to, &s, NULL);
	if (err)
		return err;
	profile__free(l->full);
	l->full = s;
	return 0;
}

int activity_lanes__load(const struct symbolize_opt *sym, const char *in, const char *type,
			 const char *time, struct flamegraph_opts *o, struct profile **p,
			 struct activity_lanes **lanes)
{
	struct activity_lanes *l = calloc(1, sizeof(*l));
	struct profile *sel = NULL;
	int err;

	*p = NULL;
	*lanes = NULL;
	if (!l)
		return -ENOMEM;
	err = input__load(in, &(struct input_opts){0}, &l->full);
	err = err ?: symbolize_opt__apply(sym, in, &l->full);
	err = err ?: format__pick_type(l->full, type, true, &sel);
	if (err) {
		activity_lanes__free(l);
		return err; /* logged */
	}
	if (sel) {
		*p = sel;
	} else { /* one type: the graph's own profile serves the lanes */
		*p = l->full;
		l->full = NULL;
	}
	err = slice_full(l, *p, time);
	if (err) {
		pr_err("%s: cannot slice the profile for --activity: %s", in, strerror(-err));
		profile__free(*p);
		*p = NULL;
		activity_lanes__free(l);
		return err;
	}
	l->arg.full = l->full;
	l->arg.opts.filter_pid = o->filter_pid;
	l->arg.opts.pid = o->pid;
	o->lanes = fg_activity__lanes;
	o->lanes_arg = &l->arg;
	*lanes = l;
	return 0;
}

void activity_lanes__free(struct activity_lanes *l)
{
	if (!l)
		return;
	profile__free(l->full);
	free(l);
}
