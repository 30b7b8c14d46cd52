/* flamegraph_timeline.h - the timeline strip of an SVG flame graph whose
 * profile carries sample times (flamegraph.c draws the graph, this its
 * strip and the data its script redraws a time range from).
 *
 * The strip cuts the profile's time into intervals (a round length, at
 * least one sampling period, bars at least FG_TL_BAR_PX wide as drawn) and
 * draws the value of each as a bar, with a time axis in seconds from the
 * first sample and in clock time. For the script, every drawn stack (an
 * "item": one distinct stack of one tower, in drawing order, so that items
 * tile the graph's x axis) gets its value per interval, embedded as text
 * in <metadata id="fg-tl-data">:
 *
 *   data  = item* ; item = entry* ";"
 *   entry = DELTA [":" VALUE] " "  |  "~" VALUE " "
 *
 * DELTA is the entry's interval minus the previous entry's of the item
 * (the first: minus 0), VALUE its value (omitted when 1), both base 36;
 * "~" is the part of the item's value that has no time. A range of
 * intervals gives each item its value in the range; a frame covers a run
 * of whole items, so its value in the range is a difference of prefix sums.
 * At most FG_TL_MAX_ENTRIES entries are embedded: past that the strip is
 * drawn but range selection is off, and the strip's caption says so.
 *
 * Lanes (flamegraph_opts.lanes) are drawn under the strip with the same
 * geometry. In a nested <svg class="fg-tl-scale"> opened by
 * fg_timeline__scale_open(), x is in FG_TL_UNITS per interval from the
 * strip's left edge (fg_timeline__x()), so the script can stretch it.
 */
#ifndef PROFCAP_FLAMEGRAPH_TIMELINE_H
#define PROFCAP_FLAMEGRAPH_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "util/buf.h"
#include "formats/flamegraph.h"

struct profile;
struct profile_sample_entry;
struct fg_timeline;

#define FG_TL_BAR_PX 3		     /* narrowest bar as drawn */
#define FG_TL_MAX_ENTRIES (1u << 20) /* (item, interval) values embedded */
#define FG_TL_UNITS 100		     /* viewBox units per interval in scaled elements */

/* A timeline for @p drawn @width px wide, embedding at most @cap values
 * (0: FG_TL_MAX_ENTRIES), in *@out; NULL when @p carries no sample time.
 * 0 or -ENOMEM. */
int fg_timeline__new(const struct profile *p, unsigned width, __u32 cap, struct fg_timeline **out);
void fg_timeline__free(struct fg_timeline *t);

/* Sample @i of process entry @proc (kept by the graph's filters) is drawn
 * as its stack in the current tower: count its occurrences. 0 or -ENOMEM. */
int fg_timeline__add(struct fg_timeline *t, size_t proc, size_t i,
		     const struct profile_sample_entry *s);

/* The current tower's items are final: @stacks[k] is the stack of its k-th
 * item in drawing order (@n items, distinct stacks). 0 or -ENOMEM. */
int fg_timeline__end_tower(struct fg_timeline *t, const __u32 *stacks, size_t n);

/* Draw the strip at @y, then @o's lanes under it, into @out; *@height gets
 * the px they take together (gap to the graph included). */
int fg_timeline__put(struct fg_timeline *t, const struct flamegraph_opts *o, unsigned y,
		     struct buf_out *out, unsigned *height);

/* The embedded data and the script's timeline part (after the main script
 * and before its end). */
void fg_timeline__put_data(const struct fg_timeline *t, struct buf_out *out);

/* x of time @ns (epoch) in the viewBox units of a scaled element. */
double fg_timeline__x(const struct flamegraph_timegeom *g, __u64 ns);

/* Open a nested <svg class="fg-tl-scale"> from @y, @h px tall, over the
 * time axis of @g (close it with "</svg>"); @extra: more attributes or "". */
void fg_timeline__scale_open(struct buf_out *out, const struct flamegraph_timegeom *g, unsigned y,
			     unsigned h, const char *extra);

#endif
