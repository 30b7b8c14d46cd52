/* activity_out.h - `profcap report --activity`: per thread of a profile with
 * times, a row of states over time (running, runnable, waiting, unknown),
 * the spans it ran in, and its totals, as text or JSON (model/activity.h).
 */
#ifndef PROFCAP_CLI_ACTIVITY_OUT_H
#define PROFCAP_CLI_ACTIVITY_OUT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct profile;

/* Intervals a text row gets when no --interval is given. */
#define ACTIVITY_OUT_COLUMNS 60

struct activity_out_opts {
	const char *file;  /* named in the header */
	__u64 interval_ns; /* 0: a round one for ACTIVITY_OUT_COLUMNS columns */
	bool json;
	unsigned long top; /* threads shown, 0 = up to ACTIVITY_MAX_THREADS */
	bool filter_pid;
	__s64 pid;
	const char *comm;
};

/* Write the activity of @p to @f. 0, -ENODATA (no timed CPU sample or
 * wait), -E2BIG (too many intervals) or -ENOMEM. Nothing logged. */
int activity_out__print(FILE *f, const struct profile *p, const struct activity_out_opts *o);

/* `report FILE --activity`: load @o->file (every value type), slice it by
 * @time (--time A-B, NULL = all) and print it to standard output. Returns
 * the exit code: 0, or 1 after one error line. */
int activity_out__report(const struct activity_out_opts *o, const char *time);

#endif
