/* log.h - leveled logging to stderr, one line per event.
 *
 * Log once, where the context is known, with a hint for the operator.
 * Messages are prefixed "profcap: " (errors add "error: ").
 */
#ifndef PROFCAP_LOG_H
#define PROFCAP_LOG_H

enum log_level {
	LOG_QUIET = 0, /* errors only */
	LOG_NORMAL,    /* + warnings and summaries */
	LOG_VERBOSE,   /* + debug detail */
};

#include <stdbool.h>

void log__set_level(enum log_level level);

/* With @on, every message is a JSON event on one line of stderr
 * ({"event":"log","level":"error","message":"..."}), for `agent --json`,
 * whose other events are JSON too. */
void log__set_json(bool on);
enum log_level log__level(void);

void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One usage error line for command @cmd: "profcap: error: <message>; see
 * 'profcap <cmd> --help'". Always printed. Returns -EINVAL, for
 * "return log__usage_error(...)" in argument parsers. */
int log__usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
