/* capture_cmd.h - the `profcap capture` command: its option table and
 * parsing, then capture__run(). Also the flags `capture` and `agent` share
 * (agent_cmd.c uses them).
 */
#ifndef PROFCAP_CAPTURE_CMD_H
#define PROFCAP_CAPTURE_CMD_H

#include <getopt.h>

#include "capture/capture.h"

/* Option ids of the flags `capture` and `agent` share, above any short
 * option character and the export and targeting ids. */
enum {
	CAPTURE_OPT_NO_KERNEL = 0x2000,
	CAPTURE_OPT_NO_USER,
	CAPTURE_OPT_NO_IDLE,
	CAPTURE_OPT_FORMAT,
	CAPTURE_OPT_NO_UNWIND,
	CAPTURE_OPT_OFF_CPU,
	CAPTURE_OPT_OFF_CPU_THRESHOLD,
	CAPTURE_OPT_OFF_CPU_RUNNABLE,
	CAPTURE_OPT_DEBUG_DIR,
};

/* clang-format off */
#define CAPTURE_COMMON_LONGOPTS                                          \
	{ "freq", required_argument, NULL, 'F' },                        \
	{ "frequency", required_argument, NULL, 'F' },                   \
	{ "all-cpus", no_argument, NULL, 'a' },                          \
	{ "no-kernel", no_argument, NULL, CAPTURE_OPT_NO_KERNEL },       \
	{ "no-user", no_argument, NULL, CAPTURE_OPT_NO_USER },           \
	{ "no-idle", no_argument, NULL, CAPTURE_OPT_NO_IDLE },           \
	{ "format", required_argument, NULL, CAPTURE_OPT_FORMAT },       \
	{ "no-unwind", no_argument, NULL, CAPTURE_OPT_NO_UNWIND },       \
	{ "off-cpu", no_argument, NULL, CAPTURE_OPT_OFF_CPU },           \
	{ "off-cpu-threshold", required_argument, NULL,                  \
	  CAPTURE_OPT_OFF_CPU_THRESHOLD },                               \
	{ "off-cpu-runnable", no_argument, NULL,                         \
	  CAPTURE_OPT_OFF_CPU_RUNNABLE },                                \
	{ "debug-dir", required_argument, NULL, CAPTURE_OPT_DEBUG_DIR }, \
	{ "quiet", no_argument, NULL, 'q' },                             \
	{ "verbose", no_argument, NULL, 'v' },                           \
	{ "help", no_argument, NULL, 'h' },                              \
	TARGET_LONGOPTS,                                                 \
	OTLP_CONFIG_LONGOPTS
/* clang-format on */

/* Parse a duration ("1ms", "250us", "2s", "500000ns"; a bare number is
 * microseconds) of at most 10 s into *@ns. 0 or -EINVAL (nothing printed). */
int capture_cmd__parse_duration_ns(const char *arg, __u64 *ns);

/* Parse a positive number of seconds (at most a week) into *@out. 0 or
 * -EINVAL (nothing printed). */
int capture_cmd__parse_seconds(const char *arg, double *out);

/* Help lines of the shared sampling flags; "%s" stands where the caller's
 * printf() puts target__usage. */
#define CAPTURE_CMD_SAMPLING_HELP                                                       \
	"  -F, --freq HZ      samples per second per CPU (default 99; at most 10000 and\n" \
	"                     kernel.perf_event_max_sample_rate: higher is lowered)\n" \
	"  -a, --all-cpus     sample every process on every CPU (the default)\n"      \
	"%s"                                                                            \
	"      --no-kernel    do not collect kernel stacks\n"                          \
	"      --no-user      do not collect user stacks\n"                            \
	"      --no-idle      drop samples of the idle task (pid 0)\n"

/* How `capture` or `agent` reads its command line. */
struct capture_cmd_syntax {
	const char *cmd; /* the command, named in errors */
	const char *shortopts;
	const struct option *longopts;
	void (*usage)(void); /* -h, --help */
	/* The command's own option @c (value @arg): 0 taken, -ENOENT when it is
	 * not one of them, or -EINVAL after one usage error line. */
	int (*own)(int c, const char *arg, void *ctx);
	void *ctx;
};

/* The option loop of `capture` and `agent`: getopt_long() over @argv as @sx
 * says, from the first argument. -h prints the help; each other option goes
 * to sx->own, then -a sets *@all, and the shared flags (-F, --no-*,
 * --format, -q, -v, targeting, export) go into @o. Any other option, or one
 * missing its value, is a usage error. Leaves optind at the first operand.
 * 0, 1 when the help was printed, or -EINVAL after one usage error line. */
int capture_cmd__options(const struct capture_cmd_syntax *sx, int argc, char **argv,
			 struct capture_opts *o, bool *all);

/* Parse `capture` arguments (argv[0] is "capture") into @o. Returns 0, 1 when
 * --help was printed, or -EINVAL after printing one error line. */
int capture_cmd__parse_args(int argc, char **argv, struct capture_opts *o);

/* Run the `capture` command; returns the process exit code: 0 captured (and
 * delivered), 1 capture failure, 2 usage error, 3 captured but not delivered
 * to the endpoint (kept in the -o file or the spool directory). */
int capture_cmd__main(int argc, char **argv);

/* Parse @argv with @parse (capture_cmd__parse_args() or the agent's) and
 * run the capture. The exit status: 0, 1 (failure, logged) or 2 (usage). */
int capture_cmd__run(int (*parse)(int, char **, struct capture_opts *), int argc, char **argv);

void capture_cmd__usage(void);

#endif
