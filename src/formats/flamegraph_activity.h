/* flamegraph_activity.h - thread-activity lanes under the timeline strip of
 * an SVG flame graph (model/activity.h): per thread, a lane of its states
 * over time (running, runnable, waiting by state; unknown left blank) and,
 * when it ran in spans, a lane of those spans where they ran. Hovering a
 * piece shows its thread, state or span and times (SVG <title>); a range
 * selected on the strip shades the lanes with it, and each lane's caption
 * gives its states' time within the range.
 */
#ifndef PROFCAP_FLAMEGRAPH_ACTIVITY_H
#define PROFCAP_FLAMEGRAPH_ACTIVITY_H

#include <stdbool.h>
#include <linux/types.h>

#include "formats/flamegraph.h"
#include "model/activity.h"

struct profile;
struct buf_out;

#define FG_ACT_MAX_LANES 32u	/* threads drawn, the most active */
#define FG_ACT_MAX_RECTS 50000u /* pieces drawn in all (about 250 bytes each) */

struct fg_activity_arg {
	/* The profile with every value type (CPU samples and off-CPU waits),
	 * sliced as the graph's; NULL: the graph's own profile. */
	const struct profile *full;
	struct activity_opts opts; /* filters (interval_ns unused) */
	__u32 max_rects;	   /* pieces drawn at most; 0 = FG_ACT_MAX_RECTS */
};

/* A flamegraph_lanes_fn: @arg is a struct fg_activity_arg. A profile
 * without timed CPU samples or waits draws no lane. */
int fg_activity__lanes(void *arg, const struct profile *p, const struct flamegraph_timegeom *g,
		       struct buf_out *out, unsigned *height);

#endif
