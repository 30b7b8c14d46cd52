/* report.h - the `profcap report` command: what is hot in a capture, read
 * from an OTLP Profiles file, as text for people or JSON for machines.
 *
 * Also the small read-side helpers on the profile model that the flame graph
 * shares with it: a printable name for a location, its frame type, and the
 * thread of a sample.
 */
#ifndef PROFCAP_REPORT_H
#define PROFCAP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct profile;
struct profile_sample_entry;

/* Printable name of location @loc of @p: its function name, else the base
 * name of its mapping in brackets ("[libc.so.6]"), else "[unknown]".
 * Returns a borrowed pointer into @p or into @scratch (@n bytes); never NULL. */
const char *report__location_name(const struct profile *p, __u32 loc, char *scratch, size_t n);

/* Frame type of location @loc ("native", "kernel", "v8js", ...), borrowed
 * from @p; "" when the location carries none. Never NULL. */
const char *report__location_type(const struct profile *p, __u32 loc);

/* Thread of sample @s: *@tid gets thread.id (-1 when absent), *@name the
 * borrowed thread.name ("" when absent). */
void report__sample_thread(const struct profile *p, const struct profile_sample_entry *s,
			   __s64 *tid, const char **name);

/* Length (1-4) of the well-formed UTF-8 sequence at @s, which must not be at
 * its terminating NUL; 0 when the bytes there are not valid UTF-8 (overlong,
 * surrogate, truncated). Lets writers of XML and JSON replace bad bytes. */
size_t report__utf8_seq(const char *s);

enum report_by {
	BY_FUNCTION = 0, /* function name (unknown frames: their mapping) */
	BY_PROCESS,
	BY_THREAD,
	BY_MAPPING, /* mapping file name */
};

#define REPORT_DEFAULT_TOP 20

struct report_opts {
	const char *file;  /* shown in the header ("-" = standard input) */
	unsigned long top; /* rows per table, 0 = all */
	enum report_by by;
	bool inclusive; /* sort by inclusive value instead of self */
	bool filter_pid;
	__s64 pid;
	const char *comm; /* only samples whose exe name or thread name is this */
	bool json;
};

/* Defaults: file "-", top 20, by function, sorted by self, no filter, text. */
void report__default_opts(struct report_opts *o);

/* Write the report of @p (read only) as @o says to @f. Returns 0, or -ENOMEM
 * / -E2BIG (a table is full) with nothing logged; output may be partial. */
int report__print(FILE *f, const struct profile *p, const struct report_opts *o);

/* Run `profcap report FILE [options]`; @argv[0] is "report". Returns the exit
 * code: 0 printed, 1 unreadable or malformed input, 2 bad usage. */
int report__main(int argc, char **argv);

void report__usage(void);

#endif
