/* report_text.h - a report printed into a string, for the tests of the
 * report and of what it shows (links, sample attributes). Header-only:
 * each test is one binary.
 */
#ifndef PROFCAP_TEST_REPORT_TEXT_H
#define PROFCAP_TEST_REPORT_TEXT_H

#include <stdio.h>
#include <stdlib.h>

#include "cli/report.h"

/* The report of @p with @o, as a malloc'd string the caller frees (NULL on
 * failure). */
static char *report_text(const struct profile *p, const struct report_opts *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err;

	if (!f)
		return NULL;
	err = report__print(f, p, o);
	fclose(f);
	if (err) {
		free(text);
		return NULL;
	}
	return text;
}

#endif
