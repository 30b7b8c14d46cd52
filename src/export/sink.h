/* sink.h - where an encoded capture goes: one interface for every output.
 *
 * A sink is created before sampling starts, so a bad destination fails fast
 * (an unwritable directory, later an unreachable endpoint), and receives the
 * finished payload once through sink__deliver(). The file sink writes
 * atomically: a temporary file in the target directory, fsync, rename.
 * Network sinks (OTLP gRPC/HTTP) implement the same ops.
 */
#ifndef PROFCAP_SINK_H
#define PROFCAP_SINK_H

#include <stddef.h>

struct sink;

struct sink_ops {
	/* Deliver the whole payload. 0 or -errno; logs its own failure. */
	int (*deliver)(struct sink *s, const void *data, size_t len);
	/* Release everything; an undelivered sink leaves no partial output. */
	void (*free)(struct sink *s);
};

struct sink {
	const struct sink_ops *ops;
	char *describe; /* human-readable destination, owned */
};

/* Deliver @len bytes of @data to @s. 0 or -errno (already logged). */
int sink__deliver(struct sink *s, const void *data, size_t len);

/* Where the sink writes, for messages ("/tmp/cpu.pb"). */
const char *sink__describe(const struct sink *s);

/* Free @s. Accepts NULL. */
void sink__free(struct sink *s);

/* File sink for @path. Creates the temporary file at once, which proves the
 * directory is writable. NULL on failure, after logging the reason and what
 * to do. An existing regular file at @path is replaced only on successful
 * delivery; a symbolic link is followed and the file it names replaced (the
 * link stays). "-", a character device or a FIFO is written through in
 * place, like `cp` does (a write error is an error); a directory, block
 * device, socket or a link to a missing file is refused. New files are
 * created 0600. */
struct sink *file_sink__new(const char *path);

/* file_sink__open() flags. */
enum {
	FILE_SINK_NOCLOBBER = 1, /* never replace a file: add -1, -2, ... before the extension */
	FILE_SINK_QUIET = 2,	 /* log nothing: the caller reports *@err */
	FILE_SINK_QUIET_WRITE = 4, /* log open failures, not delivery ones */
};

/* File sink for @path, as file_sink__new(), with @flags (FILE_SINK_*).
 * With FILE_SINK_NOCLOBBER the final name is reserved atomically at
 * delivery (renameat2 RENAME_NOREPLACE), "-N" going before @ext (when @path
 * ends with it); sink__describe() then names the file written. NULL on
 * failure with *@err set (-errno). Files are created 0600. */
struct sink *file_sink__open(const char *path, const char *ext, unsigned int flags, int *err);

/* Remove the temporary files ("." name ".tmp.<pid>.XXXXXX") that profcap
 * processes no longer running left in @dir (NULL: the current directory),
 * e.g. after SIGKILL. Returns how many were removed. */
int file_sink__clean_stale(const char *dir);

/* Name for a capture started at @t_unix on @host: "<dir>/profcap-<host>-
 * <YYYYmmddTHHMMSSZ><ext>", or with "-<n>" before @ext when @n > 0 (callers
 * count @n up until the name is free, so captures never clobber each
 * other). @dir NULL: no directory part. Writes into @buf (@len bytes);
 * 0 or -ENAMETOOLONG. */
int file_sink__default_name(char *buf, size_t len, const char *dir, const char *host,
			    long long t_unix, const char *ext, int n);

#endif
