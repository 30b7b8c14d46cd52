/* capture.h - the `profcap capture` command: options, the sampling loop, and
 * turning drained BPF records into the profile model and an output.
 */
#ifndef PROFCAP_CAPTURE_H
#define PROFCAP_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "format.h"
#include "otlp_config.h"

#define CAPTURE_MAX_PIDS 1024

struct capture_opts {
	double seconds; /* capture length, > 0 */
	__u32 freq_hz;	/* samples per second per CPU */
	int pids[CAPTURE_MAX_PIDS];
	size_t npids; /* 0 = every process */
	bool user, kernel, idle;
	const char *output; /* NULL = default name, unless exporting only */
	bool quiet, verbose;
	enum format format;	  /* of the file output; exports are always OTLP */
	struct otlp_flags export; /* --endpoint & co, merged with OTEL_* later */
};

/* Parse `capture` arguments (argv[0] is "capture") into @o. Returns 0, 1 when
 * --help was printed, or -EINVAL after printing one error line. */
int capture__parse_args(int argc, char **argv, struct capture_opts *o);

/* Run the `capture` command; returns the process exit code: 0 captured (and
 * delivered), 1 capture failure, 2 usage error, 3 captured but not delivered
 * to the endpoint (kept in the -o file or the spool directory). */
int capture__main(int argc, char **argv);

void capture__usage(void);

#endif
