/* capture.h - the `profcap capture` command: options, the sampling loop, and
 * turning drained BPF records into the profile model and an output. The
 * loop runs in windows: `capture` is one window, `profcap agent` (agent.c)
 * runs back-to-back windows with the BPF program loaded once.
 */
#ifndef PROFCAP_CAPTURE_H
#define PROFCAP_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "formats/format.h"
#include "export/otlp_config.h"
#include "collect/target.h"

struct capture_opts {
	double seconds;		   /* capture length, > 0; 0 = until CMD exits (with @cmd) */
	__u32 freq_hz;		   /* samples per second per CPU */
	struct target_opts target; /* what to profile; nothing set = every process */
	char **cmd;		   /* `-- CMD ARGS...` (NULL-terminated, from argv) or NULL */
	bool user, kernel, idle;
	bool unwind;	    /* table unwinding of user stacks (default; --no-unwind) */
	/* off-CPU profiles (issue 15) */
	bool off_cpu;	       /* also an off-CPU profile per process */
	__u64 off_cpu_min_ns;  /* --off-cpu-threshold: shorter waits are only counted */
	bool off_cpu_runnable; /* --off-cpu-runnable: also time spent waiting for a CPU */
	const char *output; /* NULL = default name, unless exporting only */
	bool quiet, verbose;
	enum format format;	  /* of the file output; exports are always OTLP */
	struct otlp_flags export; /* --endpoint & co, merged with OTEL_* later */
	/* agent mode (agent.c) */
	bool agent;
	double interval;	/* window length in seconds */
	const char *output_dir; /* one file per window; NULL = none */
	__u64 max_dir_bytes;	/* oldest window files go beyond this */
	bool json;		/* status lines as JSON objects */
};

/* Parse a duration ("1ms", "250us", "2s", "500000ns"; a bare number is
 * microseconds) of at most 10 s into *@ns. 0 or -EINVAL (nothing printed). */
int capture__parse_duration_ns(const char *arg, __u64 *ns);

/* Parse a positive number of seconds (at most a week) into *@out. 0 or
 * -EINVAL (nothing printed). */
int capture__parse_seconds(const char *arg, double *out);

/* Run the capture (or agent) loop for @o; returns the process exit code as
 * capture__main() does. */
int capture__run(const struct capture_opts *o);

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
};

/* clang-format off */
#define CAPTURE_COMMON_LONGOPTS                                          \
	{ "freq", required_argument, NULL, 'F' },                        \
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
	{ "quiet", no_argument, NULL, 'q' },                             \
	{ "verbose", no_argument, NULL, 'v' },                           \
	TARGET_LONGOPTS,                                                 \
	OTLP_CONFIG_LONGOPTS
/* clang-format on */

/* Reset @o to the defaults both `capture` and `agent` start from: 99 Hz,
 * user and kernel stacks, idle samples, table unwinding, 10 s. Cannot fail. */
void capture__default_opts(struct capture_opts *o);

/* Take one shared flag (-F, --no-*, --format, -q, -v, targeting, export;
 * getopt code @c, value @arg) into @o. Any other code, getopt's ':' (missing
 * value) included, is a usage error naming @opt (the argument getopt just
 * read); @cmd names the command in errors. 0, or -EINVAL after one usage
 * error line. */
int capture__common_flag(struct capture_opts *o, int c, const char *arg, const char *opt,
			 const char *cmd);

/* Parse `capture` arguments (argv[0] is "capture") into @o. Returns 0, 1 when
 * --help was printed, or -EINVAL after printing one error line. */
int capture__parse_args(int argc, char **argv, struct capture_opts *o);

/* Run the `capture` command; returns the process exit code: 0 captured (and
 * delivered), 1 capture failure, 2 usage error, 3 captured but not delivered
 * to the endpoint (kept in the -o file or the spool directory). */
int capture__main(int argc, char **argv);

void capture__usage(void);

#endif
