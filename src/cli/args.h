/* args.h - the command-line steps every command shares: the error for an
 * option getopt refused, and the one input file operand.
 */
#ifndef PROFCAP_CLI_ARGS_H
#define PROFCAP_CLI_ARGS_H

#include <stdbool.h>

/* The usage error of command @cmd for getopt_long()'s answer @c about
 * argv[optind - 1]: ':' a missing value, anything else an unknown option.
 * Returns log__usage_error()'s -EINVAL. */
int args__bad_option(const char *cmd, int c, char **argv);

struct option;

/* args__bad_option() that also suggests the long option of @longopts
 * (NULL-terminated, or NULL) nearest to a mistyped one. */
int args__bad_option_in(const char *cmd, int c, char **argv, const struct option *longopts);

/* The name of the option in @longopts closest to @given ("--frequncy",
 * "--freqency=99"): within two edits and half its length; or NULL. */
const char *args__nearest(const struct option *longopts, const char *given);

/* The one operand left after the options: *@in = argv[optind] ("-" is
 * standard input). 0, or the usage error (-EINVAL) when there is none or
 * more than one. */
int args__one_input(const char *cmd, int argc, char **argv, const char **in);

/* The whole of @s as a decimal number from @min to @max into *@v. False
 * (and *@v unspecified) otherwise. */
bool args__int(const char *s, long long min, long long max, long long *v);

struct view_attr_match;

/* One `--attr KEY=VALUE` of command @cmd: @arg cut at its first '=' (made a NUL) into
 * m[*@n] (key and value point into @arg), and *@n incremented. The usage
 * error (-EINVAL) when the key or the value is empty or @max filters are
 * given already. */
int args__attr_match(const char *cmd, char *arg, struct view_attr_match *m, size_t *n,
		     size_t max);

#endif
