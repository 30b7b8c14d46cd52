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
	return args__bad_option_in(cmd, c, argv, NULL);
}

/* Edit distance between @a[0, @alen) and @b (both short option names);
 * larger than any real option's beyond 31 bytes. */
static size_t distance(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b), row[32], prev, cur;

	if (alen > 31 || blen > 31)
		return 99;
	for (size_t j = 0; j <= blen; j++)
		row[j] = j;
	for (size_t i = 1; i <= alen; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= blen; j++) {
			cur = row[j];
			row[j] = prev + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (cur + 1 < row[j])
				row[j] = cur + 1;
			prev = cur;
		}
	}
	return row[blen];
}

const char *args__nearest(const struct option *longopts, const char *given)
{
	const char *best = NULL;
	size_t len, d, bestd = 3;

	if (!longopts || strncmp(given, "--", 2))
		return NULL;
	given += 2;
	len = strcspn(given, "=");
	if (len < 2)
		return NULL;
	for (const struct option *o = longopts; o->name; o++) {
		d = distance(given, len, o->name);
		if (d < bestd && d <= len / 2) {
			bestd = d;
			best = o->name;
		}
	}
	return best;
}

int args__bad_option_in(const char *cmd, int c, char **argv, const struct option *longopts)
{
	const char *opt = argv[optind - 1], *near;

	if (c == ':')
		return log__usage_error(cmd, "option '%s' needs a value", opt);
	near = args__nearest(longopts, opt);
	if (near)
		return log__usage_error(cmd, "unknown option '%s' (did you mean --%s?)", opt, near);
	return log__usage_error(cmd, "unknown option '%s'", opt);
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

int args__attr_match(const char *cmd, char *arg, struct view_attr_match *m, size_t *n, size_t max)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return log__usage_error(cmd,
					"--attr needs KEY=VALUE (a sample attribute, e.g. "
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
