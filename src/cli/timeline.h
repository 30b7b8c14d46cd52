/* timeline.h - `profcap report --timeline`: per interval of a profile's
 * time, the value (CPU) of each process or thread, as text or JSON.
 */
#ifndef PROFCAP_CLI_TIMELINE_H
#define PROFCAP_CLI_TIMELINE_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct profile;

/* Intervals a timeline holds at most: a shorter --interval is refused. */
#define TIMELINE_MAX_INTERVALS 100000u
#define TIMELINE_DEFAULT_INTERVAL_NS 100000000ull

struct timeline_opts {
	const char *file;  /* named in the header */
	__u64 interval_ns; /* > 0 */
	bool by_thread;	   /* rows per thread instead of per process */
	bool json;
	unsigned long top; /* rows per interval in text, 0 = all */
};

/* Write the timeline of @p to @f. 0, -ENODATA (no sample carries a time),
 * -E2BIG (more than TIMELINE_MAX_INTERVALS) or -ENOMEM. Nothing logged. */
int timeline__print(FILE *f, const struct profile *p, const struct timeline_opts *o);

#endif
