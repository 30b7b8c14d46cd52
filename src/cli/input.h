/* input.h - the capture a reading command is given: OTLP (protobuf or
 * JSON), pprof, `perf script` text or a perf.data file, gzip'd or not
 * (perf.data not), detected from the content unless the caller says which. convert, report and flamegraph
 * read every form alike.
 */
#ifndef PROFCAP_CLI_INPUT_H
#define PROFCAP_CLI_INPUT_H

#include <stdbool.h>

/* Format name for Profile.original_payload_format, from the list in the
 * OTLP profiles.proto comments ("jfr", "pprof", "linux_perf"). */
#define PERF_PAYLOAD_FORMAT "linux_perf"

/* Largest input read (a capture of any form). */
#define INPUT_MAX_BYTES (1ull << 30)

enum input_kind {
	INPUT_AUTO = 0,
	INPUT_OTLP,
	INPUT_PERF_SCRIPT,
	INPUT_PPROF,
	INPUT_TEXT, /* detected only: text that is not perf script */
	INPUT_PERF_DATA, /* perf.data (file or pipe mode) */
};

struct input_opts {
	enum input_kind from; /* INPUT_AUTO: from the content */
	bool embed_original;  /* perf script: keep the text as the original payload */
};

struct profile;

/* Read @path ("-": standard input) into *@out. A file over INPUT_MAX_BYTES
 * is refused before it is read. 0, or -errno after one error line. */
int input__load(const char *path, const struct input_opts *o, struct profile **out);

#endif
