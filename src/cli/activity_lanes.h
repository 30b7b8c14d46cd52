/* activity_lanes.h - `flamegraph --activity`: the thread-activity lanes
 * (formats/flamegraph_activity.h) under the timeline strip, which need the
 * capture's CPU samples and off-CPU waits both, whatever type the graph
 * draws.
 */
#ifndef PROFCAP_CLI_ACTIVITY_LANES_H
#define PROFCAP_CLI_ACTIVITY_LANES_H

struct activity_lanes;
struct flamegraph_opts;
struct profile;
struct symbolize_opt;

/* Load @in as symbolize_opt__load() does (*@p: the profile of @type to
 * draw) and keep every value type for lanes set in @o (o->lanes), sliced
 * by @time (--time, NULL = all) on the same bounds as the graph's. @o's
 * pid filter applies to the lanes. 0, or -errno after one error line;
 * free *@lanes with activity_lanes__free() after rendering. */
int activity_lanes__load(const struct symbolize_opt *sym, const char *in, const char *type,
			 const char *time, struct flamegraph_opts *o, struct profile **p,
			 struct activity_lanes **lanes);
void activity_lanes__free(struct activity_lanes *l);

#endif
