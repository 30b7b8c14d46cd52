/* agent.h - the `profcap agent` command: continuous profiling in
 * back-to-back windows (one BPF load), each window written to a file in
 * --output-dir (under a total size cap) and/or exported to an OTLP endpoint.
 * The loop itself is capture.c's; this module owns the options.
 */
#ifndef PROFCAP_AGENT_H
#define PROFCAP_AGENT_H

#include "capture/capture.h"

#define AGENT_DEFAULT_MAX_DIR_BYTES (256ull << 20)

/* Parse `agent` arguments (argv[0] is "agent") into @o. Returns 0, 1 when
 * --help was printed, or -EINVAL after printing one error line. */
int agent__parse_args(int argc, char **argv, struct capture_opts *o);

/* Run the `agent` command; returns the process exit code (0 after a clean
 * stop by SIGTERM/SIGINT, 1 failure, 2 usage error, 3 when the last window
 * could not be delivered to the endpoint and was kept on disk). */
int agent__main(int argc, char **argv);

void agent__usage(void);

#endif
