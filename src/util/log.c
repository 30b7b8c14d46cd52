#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "util/json.h"
#include "util/log.h"

static enum log_level cur_level = LOG_NORMAL;
static bool json_lines;

void log__set_level(enum log_level level)
{
	cur_level = level;
}

enum log_level log__level(void)
{
	return cur_level;
}

void log__set_json(bool on)
{
	json_lines = on;
}

/* One message: "profcap: <prefix><message>", or with log__set_json() an
 * event {"event":"log","level":@level,"message":...} on one line. */
static void log_v(const char *level, const char *prefix, const char *fmt, va_list ap)
{
	char msg[2048];

	if (!json_lines) {
		fprintf(stderr, "profcap: %s", prefix);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "{\"event\":\"log\",\"level\":\"%s\",\"message\":", level);
	json__fput_str(stderr, msg);
	fputs("}\n", stderr);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_v("error", "error: ", fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	if (cur_level < LOG_NORMAL)
		return;
	va_start(ap, fmt);
	log_v("warning", "warning: ", fmt, ap);
	va_end(ap);
}

void pr_info(const char *fmt, ...)
{
	va_list ap;

	if (cur_level < LOG_NORMAL)
		return;
	va_start(ap, fmt);
	log_v("info", "", fmt, ap);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;

	if (cur_level < LOG_VERBOSE)
		return;
	va_start(ap, fmt);
	log_v("debug", "debug: ", fmt, ap);
	va_end(ap);
}

int log__usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("profcap: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'profcap %s --help'\n", cmd);
	return -EINVAL;
}
