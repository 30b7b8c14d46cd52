/* debugfile.h - find the separate debug file of an ELF file, and its htlhash.
 *
 * Looks where perf and elfutils look, in this order:
 *   1. by GNU build-id: DIR/.build-id/<2 hex>/<rest>.debug for each extra
 *      debug directory (--debug-dir, host paths), then the process's own
 *      /usr/lib/debug;
 *   2. by .gnu_debuglink NAME: the binary's directory, its .debug/
 *      subdirectory, then DIR/<binary's directory>/NAME for the same debug
 *      directories.
 * Paths of the process (its directory, /usr/lib/debug) are resolved inside
 * the process's root (containers) with openat2(RESOLVE_IN_ROOT): a symbolic
 * link cannot lead out of it. A candidate is accepted only when it belongs
 * to the binary: same build-id when both have one, else (debuglink) the
 * CRC32 the link records. A candidate that exists but does not match, or
 * is not ELF, is skipped with one warning and never trusted.
 */
#ifndef PROFCAP_DEBUGFILE_H
#define PROFCAP_DEBUGFILE_H

#include <stddef.h>
#include <linux/types.h>

#define DEBUGFILE_MAX_DIRS 16
#define DEBUGFILE_HTLHASH_HEX 33

struct debugfile_query {
	const char *root;     /* the process's root dir ("/proc/PID/root"), NULL = host "/" */
	const char *path;     /* the binary's path inside that root ("/usr/bin/x") */
	const char *build_id; /* its GNU build-id (hex), NULL if none */
	const char *debuglink; /* its .gnu_debuglink name, NULL if none */
	__u32 debuglink_crc;
	const char *const *dirs; /* extra debug directories (host paths) */
	size_t ndirs;
	__u64 dev, ino; /* the binary itself (never its own debug file); 0 = unknown */
};

/* Open the debug file of the binary described by @q. Returns an fd (the
 * caller's) or -ENOENT (none found), -errno. *@how (if not NULL) gets
 * "build-id" or "debuglink". */
int debugfile__open(const struct debugfile_query *q, const char **how);

/* Open @path (absolute, inside the process's root @root; NULL = host) for
 * reading without following links out of @root, through proc/pfile.h
 * (regular files only, never blocks on a FIFO). fd or -errno. */
int debugfile__open_in_root(const char *root, const char *path);

/* process.executable.build_id.htlhash of the file on @fd: the first 16
 * bytes of SHA-256(first 4096 bytes, last 4096 bytes, big-endian u64
 * length) as 32 lower-case hex digits in @hex (DEBUGFILE_HTLHASH_HEX
 * bytes). 0 or -errno. */
int debugfile__htlhash(int fd, char *hex);

/* GNU debuglink CRC32 of the whole file on @fd into *@crc. 0 or -errno. */
int debugfile__crc32(int fd, __u32 *crc);

#endif
