/* status.c - /proc/PID/status fields (see status.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/status.h"
#include "util/fdio.h"

ssize_t proc_status__read(const char *path, char *dst, size_t cap)
{
	ssize_t n;

	if (!cap)
		return -EINVAL;
	n = fdio__read_file(path, dst, cap - 1);
	dst[n > 0 ? n : 0] = '\0';
	return n;
}

static bool is_digit(char c, int base)
{
	return base == 16 ? isxdigit((unsigned char)c) : c >= '0' && c <= '9';
}

bool proc_status__field(const char *text, const char *key, int idx, int base,
			unsigned long long *val)
{
	size_t klen = strlen(key);
	const char *line, *p;
	bool found = false;
	int i;

	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, key, klen))
			break;
	if (!line || !*line)
		return false;
	for (p = line + klen, i = 0; *p && *p != '\n'; i++) {
		char *end;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!is_digit(*p, base))
			break;
		*val = strtoull(p, &end, base);
		p = end;
		found = true;
		if (i == idx)
			return true;
	}
	return idx < 0 && found;
}

int proc_status__self(const char *key, int idx, int base, unsigned long long *val)
{
	char text[PROC_STATUS_MAX];
	ssize_t n;

	n = proc_status__read("/proc/self/status", text, sizeof(text));
	if (n < 0)
		return (int)n;
	return proc_status__field(text, key, idx, base, val) ? 0 : -ENOENT;
}
