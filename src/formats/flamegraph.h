/* flamegraph.h - the SVG flame graph encoder that `profcap flamegraph`,
 * `capture --format svg` and `convert --to svg` use.
 *
 * The SVG is self-contained (inline CSS and JavaScript, no fonts, no network):
 * root "all", one level per program (processes of one executable together;
 * per process, "exe [pid]", with per_pid), then stacks root -> leaf (or leaf
 * -> callers when inverted). Frames with the same name under the same parent
 * are merged; frames narrower than 0.1 px are folded into their parent and
 * counted. Each frame type (kernel, native, cpython, v8js, jvm, ...) has its
 * own colour family, named in a legend; the hue within it is deterministic
 * per name. The height is what the deepest drawn stack needs. In a browser
 * the graph takes the window's width (unless a width is given), hover shows
 * the details, click zooms, Ctrl-F or the Search control highlights matches
 * and says their share. A profile with sample times gets a timeline strip
 * above the graph (flamegraph_timeline.c): samples per interval, and a
 * range dragged on it redraws the graph for that range.
 */
#ifndef PROFCAP_FLAMEGRAPH_H
#define PROFCAP_FLAMEGRAPH_H

#include <stdbool.h>
#include <linux/types.h>

#include "util/buf.h"
#include "model/view.h"

struct profile;

/* The timeline strip's time range and place, for lanes drawn under it. */
struct flamegraph_timegeom {
	__u64 t0_ns;	   /* epoch ns at the strip's left edge */
	__u64 interval_ns; /* one bar of the strip */
	__u32 nintervals;  /* the strip spans [t0_ns, t0_ns + nintervals * interval_ns) */
	__u64 first_ns, last_ns; /* first and last sample time */
	unsigned x, width; /* the time axis in px as drawn (the script rescales it) */
	unsigned y;	   /* top of the first lane, px */
	unsigned svg_width;
};

/* Lanes under the strip (thread activity, spans): append their SVG
 * elements to @out at y >= @g->y, and set *@height to the px they take.
 * Elements of class "fg-tl-scale" (a nested <svg> at x = @g->x, width
 * @g->width, whose viewBox is in time units: see flamegraph_timeline.h)
 * are stretched by the script when the graph's width changes, and text
 * with data-tf="F" is moved to fraction F of the axis. 0 or -errno (the
 * render fails with it). */
typedef int (*flamegraph_lanes_fn)(void *arg, const struct profile *p,
				   const struct flamegraph_timegeom *g, struct buf_out *out,
				   unsigned *height);

#define FG_DEFAULT_WIDTH 1200u
#define FG_MAX_BYTES (1ull << 30) /* largest SVG written */

struct flamegraph_opts {
	const char *title; /* NULL: "Flame graph: <host>, <UTC time>" from the profile */
	bool filter_pid;   /* only process @pid */
	__s64 pid;
	bool filter_trace; /* only samples taken in trace @trace_id (thread context) */
	__u8 trace_id[16];
	/* only samples carrying every one of these attributes (borrowed) */
	const struct view_attr_match *attrs;
	size_t nattrs;
	bool inverted;	/* icicle: leaf at the top, callers below */
	bool per_pid;	/* one tower per process instead of per executable */
	/* image width in px; 0: the window's width in a browser, 1200 where
	 * the SVG's script does not run */
	unsigned width;
	/* extra lanes under the timeline strip (none when NULL, or when the
	 * profile has no sample times); @lanes_arg is passed through */
	flamegraph_lanes_fn lanes;
	void *lanes_arg;
	/* (stack, interval) values the timeline embeds for its script at
	 * most; 0: FG_TL_MAX_ENTRIES. Past it the strip has no range selection. */
	__u32 timeline_cap;
};

/* Append the SVG flame graph of @p to @out (caller owned; its cap bounds the
 * size). @o may be NULL (defaults). Reads @p only. Returns 0, -E2BIG (past
 * @out's cap), -ENOMEM; on failure @out may hold a partial document. */
int flamegraph__render(const struct profile *p, const struct flamegraph_opts *o, struct buf *out);

#endif
