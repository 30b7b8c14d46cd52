/* args.c - shared command-line steps (see args.h). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "util/log.h"
#include "model/view.h"

int args__bad_option(const char *cmd, int c, char **argv)
{
	if (c == ':')
		return log__usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
	return log__usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
}

bool args__int(const char *s, long long min, long long max, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return !errno && end != s && !*end && *v >= min && *v <= max;
}

int args__one_input(const char *cmd, int argc, char **argv, const char **in)
{
	if (optind >= argc)
		return log__usage_error(cmd, "no file given: name a capture file, or '-' for "
					     "standard input");
	if (argc - optind > 1)
		return log__usage_error(cmd, "one file at a time: unexpected '%s'",
					argv[optind + 1]);
	*in = argv[optind];
	return 0;
}

int args__attr_match(const char *cmd, char *arg, struct view_attr_match *m, size_t *n,
		     size_t max)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return log__usage_error(cmd, "--attr needs KEY=VALUE (a sample attribute, e.g. "
					     "http.route=/users), not '%s'",
					arg);
	if (*n >= max)
		return log__usage_error(cmd, "at most %zu --attr filters", max);
	*eq = '\0';
	m[*n].key = arg;
	m[*n].value = eq + 1;
	(*n)++;
	return 0;
}
