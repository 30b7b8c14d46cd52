/* symbolize_opt.h - the --symbolize / --debug-dir options that report,
 * flamegraph and convert share: symbolize a capture later, on a machine that
 * has the debug files (symbolize/resymbolize.h).
 *   --symbolize      name what the capture left unnamed, add lines and
 *                    inlined frames (files found by build-id)
 *   --debug-dir DIR  also look in DIR (DIR/.build-id/xx/rest.debug, and
 *                    DIR/<path> as perf --symfs); repeatable; implies
 *                    --symbolize
 */
#ifndef PROFCAP_SYMBOLIZE_OPT_H
#define PROFCAP_SYMBOLIZE_OPT_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

struct profile;

#define SYMBOLIZE_OPT_MAX_DIRS 16
#define SYMBOLIZE_OPT_HELP                                                                  \
	"      --symbolize       name unnamed frames and add source lines and inlined\n"     \
	"                        frames from files matched by build-id (debug files under\n" \
	"                        /usr/lib/debug/.build-id, the mapped files themselves)\n"   \
	"      --debug-dir DIR   also look in DIR (DIR/.build-id/xx/rest.debug,\n"         \
	"                        DIR/PATH); repeatable; implies --symbolize\n"

struct symbolize_opt {
	bool on;
	const char *dirs[SYMBOLIZE_OPT_MAX_DIRS];
	size_t ndirs;
};

/* getopt_long() codes of the two options, above any command's own, and
 * their entries for a command's option table. */
enum { SYMBOLIZE_OPT_ON = 0x1000, SYMBOLIZE_OPT_DIR };
#define SYMBOLIZE_OPT_LONGOPTS                                  \
	{"symbolize", no_argument, NULL, SYMBOLIZE_OPT_ON},     \
	{                                                       \
		"debug-dir", required_argument, NULL, SYMBOLIZE_OPT_DIR \
	}

/* getopt_long() returned @c (with @arg) in command @cmd, for an option the
 * command itself does not take: 0 when it is one of these (taken), else
 * -EINVAL after one usage error line (too many --debug-dir, or an unknown
 * option of @argv, as args__bad_option() says it). */
int symbolize_opt__parse(struct symbolize_opt *o, const char *cmd, int c, const char *arg,
			  char **argv);

/* Take --debug-dir @dir. 0, or -E2BIG past SYMBOLIZE_OPT_MAX_DIRS. */
int symbolize_opt__add_dir(struct symbolize_opt *o, const char *dir);

/* When @o is on, replace *@p by its symbolized copy and say on stderr what
 * was found. 0, or -errno with *@p unchanged (logged). */
int symbolize_opt__apply(const struct symbolize_opt *o, const char *what, struct profile **p);

/* The input of report and flamegraph: read the OTLP file @path, symbolize
 * it as @o says and keep the one value type @type names (the first when
 * NULL; format__pick_type()). *@out gets the profile (caller frees). 0, or
 * non-zero after one error line with *@out NULL. */
int symbolize_opt__load(const struct symbolize_opt *o, const char *path, const char *type,
			struct profile **out);

#endif
