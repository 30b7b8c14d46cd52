/* timeslice.c - `--time A-B` ranges (see timeslice.h). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/timeslice.h"
#include "model/profile.h"
#include "util/log.h"

#define NS 1000000000ull

/* Digits and an optional fraction at @s (@len bytes) as @scale ns per unit
 * into *@ns; *@used gets the bytes read. */
static int parse_decimal(const char *s, size_t len, __u64 scale, __u64 *ns, size_t *used)
{
	__u64 whole = 0, frac = 0, div = 1;
	size_t i = 0, nd = 0;

	for (; i < len && isdigit((unsigned char)s[i]); i++, nd++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		whole = whole * 10 + (__u64)(s[i] - '0');
	}
	if (i < len && s[i] == '.') {
		for (i++; i < len && isdigit((unsigned char)s[i]); i++, nd++)
			if (div < NS) {
				frac = frac * 10 + (__u64)(s[i] - '0');
				div *= 10;
			}
	}
	if (!nd || !scale || scale > NS || whole > UINT64_MAX / scale)
		return -EINVAL;
	*ns = whole * scale + frac * (NS / div) * scale / NS;
	*used = i;
	return 0;
}

/* A number with an optional unit (s when none) into *@ns. */
static int parse_span(const char *s, size_t len, __u64 *ns)
{
	static const struct {
		const char *unit;
		__u64 scale;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", NS}, {"", NS}};
	size_t used, i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t ul = strlen(units[i].unit);

		if (len < ul || memcmp(s + len - ul, units[i].unit, ul))
			continue;
		if (parse_decimal(s, len - ul, units[i].scale, ns, &used) || used != len - ul)
			return -EINVAL;
		return 0;
	}
	return -EINVAL;
}

int timeslice__parse_duration(const char *s, __u64 *ns)
{
	if (!s || parse_span(s, strlen(s), ns) || !*ns)
		return -EINVAL;
	return 0;
}

/* "HH:MM:SS[.frac]" at @s into @tm's time of day and *@frac_ns. */
static int parse_clock(const char *s, size_t len, struct tm *tm, __u64 *frac_ns)
{
	unsigned int h, m, sec;
	__u64 ns = 0;
	size_t used = 8;

	if (len < 8 || s[2] != ':' || s[5] != ':' || !isdigit((unsigned char)s[0]) ||
	    sscanf(s, "%2u:%2u:%2u", &h, &m, &sec) != 3 || h > 23 || m > 59 || sec > 60)
		return -EINVAL;
	if (len > 8 &&
	    (s[8] != '.' || parse_decimal(s + 8, len - 8, NS, &ns, &used) || used != len - 8))
		return -EINVAL;
	tm->tm_hour = (int)h;
	tm->tm_min = (int)m;
	tm->tm_sec = (int)sec;
	*frac_ns = ns;
	return 0;
}

/* An absolute time: a clock time, a date and time, or epoch nanoseconds. */
static int parse_absolute(const char *s, size_t len, __u64 start_ns, __u64 *ns)
{
	time_t start = (time_t)(start_ns / NS), t;
	struct tm tm;
	__u64 frac;
	unsigned int y, mo, d;
	bool utc = false;
	size_t used;

	if (len >= 16 && !parse_decimal(s, len, 1, ns, &used) && used == len &&
	    !memchr(s, '.', len))
		return 0;
	localtime_r(&start, &tm);
	if (len >= 19 && s[4] == '-' && s[7] == '-' && s[10] == 'T') {
		if (sscanf(s, "%4u-%2u-%2u", &y, &mo, &d) != 3 || mo < 1 || mo > 12 || d < 1 ||
		    d > 31)
			return -EINVAL;
		utc = s[len - 1] == 'Z';
		memset(&tm, 0, sizeof(tm));
		tm.tm_year = (int)y - 1900;
		tm.tm_mon = (int)mo - 1;
		tm.tm_mday = (int)d;
		if (parse_clock(s + 11, len - 11 - utc, &tm, &frac))
			return -EINVAL;
	} else if (parse_clock(s, len, &tm, &frac)) {
		return -EINVAL;
	}
	tm.tm_isdst = -1;
	t = utc ? timegm(&tm) : mktime(&tm);
	if (t < 0)
		return -EINVAL;
	/* A clock time past midnight of a capture that started the day before. */
	if (len <= 18 && (__u64)t + 12 * 3600 < start_ns / NS)
		t += 24 * 3600;
	*ns = (__u64)t * NS + frac;
	return 0;
}

int timeslice__parse_bound(const char *s, size_t len, __u64 start_ns, __u64 *ns)
{
	__u64 off;

	if (!len)
		return -EINVAL;
	if (s[0] == '+') {
		if (parse_span(s + 1, len - 1, &off))
			return -EINVAL;
		*ns = start_ns + off;
		return 0;
	}
	return parse_absolute(s, len, start_ns, ns);
}

int timeslice__parse(const char *arg, __u64 start_ns, __u64 *from, __u64 *to)
{
	size_t len = strlen(arg), i;

	for (i = 1; i + 1 < len; i++) {
		if (arg[i] != '-')
			continue;
		if (!timeslice__parse_bound(arg, i, start_ns, from) &&
		    !timeslice__parse_bound(arg + i + 1, len - i - 1, start_ns, to))
			return *to > *from ? 0 : -EINVAL;
	}
	return -EINVAL;
}

void timeslice__fmt_clock(__u64 ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / NS);
	struct tm tm;

	localtime_r(&t, &tm);
	snprintf(buf, len, "%02d:%02d:%02d.%03llu", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned long long)(ns % NS / 1000000));
}

int timeslice__apply(const char *cmd, const char *arg, struct profile **p)
{
	struct profile_slice_note note;
	struct profile *s = NULL;
	__u64 first, last, from, to;
	char a[32], b[32];
	int err;

	if (profile__time_span(*p, &first, &last)) {
		pr_err("%s --time: the profile was " TIMESLICE_NO_TIME, cmd);
		return -EINVAL;
	}
	timeslice__fmt_clock(first, a, sizeof(a));
	timeslice__fmt_clock(last, b, sizeof(b));
	if (timeslice__parse(arg, first, &from, &to)) {
		pr_err("%s --time: '%s' is not a range A-B (A and B clock times like 14:03:07, "
		       "dates like 2026-11-29T14:03:07, ns since the epoch, or +2.5s from the "
		       "start); the profile spans %s to %s (+0s to +%.3fs)",
		       cmd, arg, a, b, (double)(last - first) / 1e9);
		return -EINVAL;
	}
	if (to <= first || from > last) {
		pr_err("%s --time %s: no sample in this range; the profile spans %s to %s (+0s to "
		       "+%.3fs)",
		       cmd, arg, a, b, (double)(last - first) / 1e9);
		return -EINVAL;
	}
	err = profile__slice(*p, from, to, &s, &note);
	if (err) {
		pr_err("%s --time %s: cannot slice the profile: %s", cmd, arg, strerror(-err));
		return err;
	}
	if (note.untimed_dropped)
		pr_warn("%s --time: %llu sample value%s without timestamps left out", cmd,
			(unsigned long long)note.untimed_dropped,
			note.untimed_dropped == 1 ? "" : "s");
	profile__free(*p);
	*p = s;
	return 0;
}
