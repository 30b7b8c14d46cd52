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
 * to do. An existing file at @path is replaced only on successful delivery. */
struct sink *file_sink__new(const char *path);

/* Name for a capture started at @t_unix on @host: "<dir>/profcap-<host>-
 * <YYYYmmddTHHMMSSZ><ext>", or with "-<n>" before @ext when @n > 0 (callers
 * count @n up until the name is free, so captures never clobber each
 * other). @dir NULL: no directory part. Writes into @buf (@len bytes);
 * 0 or -ENAMETOOLONG. */
int file_sink__default_name(char *buf, size_t len, const char *dir, const char *host,
			    long long t_unix, const char *ext, int n);

#endif
