/* agent.c - the agent's window hook (see agent.h). */
#include <stdlib.h>

#include "capture/agent.h"
#include "capture/status.h"
#include "util/env.h"
#include "util/log.h"

struct agent {
	const struct capture_opts *o;
	struct delivery *d;
	struct status_totals totals;
	bool warned_rows; /* the unwind row store filled up */
};

struct agent *agent__new(const struct capture_opts *o, struct delivery *d)
{
	struct agent *a = calloc(1, sizeof(*a));

	if (!a) {
		pr_err("out of memory");
		return NULL;
	}
	a->o = o;
	a->d = d;
	return a;
}

/* Unwind rows are never reused, so a long run on a host that keeps starting
 * new binaries can fill the store; later files then fall back to frame
 * pointers. Say so once. */
static void warn_row_store_full(struct agent *a, const struct sampler_unwind_stats *us)
{
	if (a->warned_rows || !us || !us->tables.files_no_room)
		return;
	a->warned_rows = true;
	pr_warn("the unwind row store is full (%llu rows): binaries seen from now on are "
		"walked with frame pointers and their stacks may be partial; restart the agent "
		"to start over",
		(unsigned long long)us->tables.rows);
}

int agent__window(void *ctx, const struct session_window *w)
{
	struct agent *a = ctx;
	int ret;

	a->totals.windows++;
	a->totals.samples += w->status.samples;
	a->totals.dropped += w->status.dropped;
	ret = delivery__deliver_profile(a->d, w->prof, w->otlp, w->t_unix_ns,
					(w->final ? DELIVERY_LAST : 0) |
						(w->signalled ? DELIVERY_URGENT : 0));
	delivery__stats(a->d, &a->totals.delivery);
	status__window(&w->status, &a->totals, ret, a->o->json, a->o->quiet);
	if (!w->final)
		warn_row_store_full(a, w->status.us);
	return ret;
}

int agent__finish(struct agent *a, int ret)
{
	int xret = delivery__finish(a->d, true);

	delivery__stats(a->d, &a->totals.delivery);
	if (a->totals.delivery.rescued || a->totals.delivery.lost) {
		pr_warn("%llu windows were not written where asked (%llu rescued to %s, "
			"%llu lost): see the errors above",
			(unsigned long long)(a->totals.delivery.rescued + a->totals.delivery.lost),
			(unsigned long long)a->totals.delivery.rescued,
			env__tmpdir(env__process()),
			(unsigned long long)a->totals.delivery.lost);
		ret = 1;
	} else if (!ret) {
		ret = xret;
	}
	if (a->o->json)
		status__totals(&a->totals, ret);
	return ret;
}

void agent__free(struct agent *a)
{
	free(a);
}
