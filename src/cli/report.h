/* report.h - the `profcap report` command: what is hot in a capture, read
 * from an OTLP Profiles file, as text for people or JSON for machines.
 */
#ifndef PROFCAP_REPORT_H
#define PROFCAP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "cli/symbolize_opt.h"
#include "model/view.h"

struct profile;

enum report_by {
	BY_FUNCTION = 0, /* function name (unknown frames: their mapping) */
	BY_PROCESS,
	BY_THREAD,
	BY_MAPPING, /* mapping file name */
	BY_SPAN,    /* the span samples were taken in (thread context) */
	BY_ATTR,    /* the value of sample attribute @by_attr ("attr:KEY") */
};

#define REPORT_DEFAULT_TOP 20

struct report_opts {
	const char *file;  /* shown in the header ("-" = standard input) */
	unsigned long top; /* rows per table, 0 = all */
	enum report_by by;
	const char *by_attr; /* BY_ATTR: the attribute key (http.route) */
	bool inclusive; /* sort by inclusive value instead of self */
	bool filter_pid;
	__s64 pid;
	const char *comm; /* only samples whose exe name or thread name is this */
	bool filter_trace; /* only samples linked to trace @trace_id */
	__u8 trace_id[16];
	bool filter_span; /* only samples linked to span @span_id */
	__u8 span_id[8];
	/* only samples carrying every one of these attributes (--attr KEY=VALUE) */
	struct view_attr_match attrs[VIEW_MAX_ATTR_MATCH];
	size_t nattrs;
	bool json;
	const char *type; /* --type: cpu, off_cpu; NULL = the first */
	bool lines; /* function rows per source line ("name file:line") */
	struct symbolize_opt sym; /* report__main(): --symbolize, --debug-dir */
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
