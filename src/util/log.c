#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "util/log.h"

static enum log_level cur_level = LOG_NORMAL;

void log__set_level(enum log_level level)
{
	cur_level = level;
}

enum log_level log__level(void)
{
	return cur_level;
}

static void log_v(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_v("profcap: error: ", fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	if (cur_level < LOG_NORMAL)
		return;
	va_start(ap, fmt);
	log_v("profcap: warning: ", fmt, ap);
	va_end(ap);
}

void pr_info(const char *fmt, ...)
{
	va_list ap;

	if (cur_level < LOG_NORMAL)
		return;
	va_start(ap, fmt);
	log_v("profcap: ", fmt, ap);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;

	if (cur_level < LOG_VERBOSE)
		return;
	va_start(ap, fmt);
	log_v("profcap: debug: ", fmt, ap);
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
