/* status.h - fields of /proc/PID/status ("Uid:", "NSpid:", "VmRSS:",
 * "CapEff:"): one reader and one parser for every module that asks.
 */
#ifndef PROFCAP_PROC_STATUS_H
#define PROFCAP_PROC_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Cap on the bytes read from a status file (they are about 1.5 KiB). */
#define PROC_STATUS_MAX (16u << 10)

/* Read status file @path into @dst (@cap bytes, NUL-terminated, so at most
 * @cap - 1 of text). The text length, or -errno. */
ssize_t proc_status__read(const char *path, char *dst, size_t cap);

/* Number @idx (0 first; -1 the last) of the line that starts with @key
 * (with its colon, "Uid:") in NUL-terminated status text @text, parsed in
 * @base (10, or 16 for the Cap* masks). false when the key or that number
 * is absent. */
bool proc_status__field(const char *text, const char *key, int idx, int base,
			unsigned long long *val);

/* proc_status__read() of /proc/self/status then proc_status__field(). 0 or
 * -errno (-ENOENT when the field is absent). */
int proc_status__self(const char *key, int idx, int base, unsigned long long *val);

#endif
