/* report_int.h - what report.c, report_build.c and report_out.c share:
 * the rows a report aggregates and the steps that build and print it.
 * Private to cli/.
 */
#ifndef PROFCAP_REPORT_INT_H
#define PROFCAP_REPORT_INT_H

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/args.h"
#include "util/array.h"
#include "util/intern.h"
#include "util/log.h"
#include "model/profile.h"
#include "model/view.h"
#include "util/hex.h"
#include "util/utf8.h"
#include "cli/report.h"

struct row {
	const char *name; /* borrowed: from the profile or a group table */
	const char *type; /* frame type (function rows), NULL otherwise */
	__s64 pid, tid;
	__u64 self, incl;
};

/* A set of rows found by key. */
struct group {
	struct intern *keys;
	struct row *rows;
	__u32 *stamp; /* per row: 1 + the last stack that counted it inclusively */
	size_t cap, stamp_cap;
};

struct thread_key {
	__u64 proc; /* process index */
	__s64 tid;
};

struct report {
	const struct report_opts *o;
	const struct profile *p;
	__u64 total; /* after filtering */
	__u64 *stack_val;
	struct row *procs; /* one per process index */
	struct group threads;
	/* --by span: "TRACE_ID/SPAN_ID" or "(no span)"; --by attr:KEY: the
	 * value, "" for samples without KEY */
	struct group keyed;
	struct group frames; /* functions or mappings */
	__u32 *loc_row;	     /* location -> its first row in rows, UINT32_MAX = not yet */
	__u32 *rows;	     /* rows of each location's frames, innermost first */
	size_t nrows, rows_cap;
};

/* --by ATTR's form: attr:KEY. */
#define BY_ATTR_PREFIX "attr:"
/* The words of --by, by enum report_by. */
extern const char *const report__by_names[BY_ATTR + 1];

/* ---- report_build.c ------------------------------------------------------------ */

/* Aggregate @p's samples kept by @o into @r. 0 or -errno. */
int report__build(struct report *r, const struct report_opts *o, const struct profile *p);
void report__release(struct report *r);
size_t report__group_count(const struct group *g);
/* @rows (@count) sorted by self or @inclusive value into a new *@out of
 * *@n rows. 0 or -ENOMEM. */
int report__sorted(const struct row *rows, size_t count, bool inclusive, struct row **out,
		   size_t *n);

/* ---- report_out.c --------------------------------------------------------------- */

/* Print @r as text or JSON (r->o->json). 0 or -errno. */
int report__print_built(FILE *f, const struct report *r);

#endif
