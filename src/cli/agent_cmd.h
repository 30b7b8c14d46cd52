/* agent_cmd.h - the `profcap agent` command: its option table and parsing,
 * then capture__run() in agent mode (capture/agent.c).
 */
#ifndef PROFCAP_AGENT_CMD_H
#define PROFCAP_AGENT_CMD_H

#include "capture/capture.h"

/* Parse `agent` arguments (argv[0] is "agent") into @o. Returns 0, 1 when
 * --help was printed, or -EINVAL after printing one error line. */
int agent_cmd__parse_args(int argc, char **argv, struct capture_opts *o);

/* Run the `agent` command; returns the process exit code (0 after a clean
 * stop by SIGTERM/SIGINT, 1 failure, 2 usage error, 3 when the last window
 * could not be delivered to the endpoint and was kept on disk). */
int agent_cmd__main(int argc, char **argv);

void agent_cmd__usage(void);

#endif
