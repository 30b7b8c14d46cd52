/* timeslice.h - the time ranges of `--time A-B` (report, flamegraph,
 * convert): parsing them against a profile's time span, and slicing.
 *
 * A bound is absolute or relative to the profile's first sample:
 *   14:03:07[.25]            local time, on the day of the first sample
 *   2026-11-29T14:03:07[.25] local time (a trailing Z: UTC)
 *   1764425587000000000      nanoseconds since the epoch
 *   +2.5s  +2.5  +250ms      from the first sample (s, ms, us, ns; s when bare)
 */
#ifndef PROFCAP_CLI_TIMESLICE_H
#define PROFCAP_CLI_TIMESLICE_H

#include <stddef.h>
#include <linux/types.h>

struct profile;

/* The message for a profile without time, for --time and --timeline. */
#define TIMESLICE_NO_TIME "captured without timestamps: capture with --timestamps"

/* Parse bound @s (@len bytes) into *@ns, relative ones from @start_ns and
 * clock times on the local day of @start_ns. 0 or -EINVAL. */
int timeslice__parse_bound(const char *s, size_t len, __u64 start_ns, __u64 *ns);

/* Parse range "A-B" into [*@from, *@to): the first '-' that splits it into
 * two bounds. 0 or -EINVAL (also when B is not after A). */
int timeslice__parse(const char *arg, __u64 start_ns, __u64 *from, __u64 *to);

/* "14:03:07.250" (local time of day) of @ns into @buf. */
void timeslice__fmt_clock(__u64 ns, char *buf, size_t len);

/* Replace *@p with its slice by range @arg (--time of command @cmd). 0, or
 * -EINVAL / -ENOMEM after one error line naming the profile's span. */
int timeslice__apply(const char *cmd, const char *arg, struct profile **p);

/* Parse a duration ("100ms", "1s", "2.5", "500us") into *@ns (> 0). 0 or
 * -EINVAL. */
int timeslice__parse_duration(const char *s, __u64 *ns);

#endif
