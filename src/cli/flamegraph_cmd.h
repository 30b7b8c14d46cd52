/* flamegraph_cmd.h - the `profcap flamegraph` command: an OTLP capture in,
 * one self-contained SVG flame graph out (formats/flamegraph.h draws it).
 */
#ifndef PROFCAP_CLI_FLAMEGRAPH_CMD_H
#define PROFCAP_CLI_FLAMEGRAPH_CMD_H

/* Run `profcap flamegraph FILE -o OUT [--title T] [--pid P] [--inverted]`;
 * @argv[0] is "flamegraph". Returns the exit code: 0 written, 1 unreadable
 * or malformed input or failed write, 2 bad usage. */
int flamegraph__main(int argc, char **argv);

void flamegraph__usage(void);

#endif
