/* convert.h - the `profcap convert` command: read a capture (OTLP Profiles,
 * pprof, `perf script` text or a perf.data file) and write it as OTLP, OTLP/JSON, pprof, folded
 * stacks or an SVG flame graph.
 */
#ifndef PROFCAP_CONVERT_H
#define PROFCAP_CONVERT_H

/* Run `profcap convert IN -o OUT --to FORMAT [--from otlp|otlp-json|pprof|perf-script|perf-data]
 * [--embed-original] [--title T]`; @argv[0] is "convert". IN and OUT may be
 * "-" (standard input / output); a file OUT is written atomically. Returns
 * the exit code: 0 written, 1 unreadable or malformed input or a failed
 * write (one error line), 2 bad usage. */
int convert__main(int argc, char **argv);

void convert__usage(void);

#endif
