/* spool.h - captures that could not be delivered wait on disk until
 * `profcap upload` sends them.
 *
 * Files are written atomically (file sink) into the spool directory as
 * "profcap-<host>-<UTC time>[-N].pb", created with mode 0700 if missing.
 */
#ifndef PROFCAP_SPOOL_H
#define PROFCAP_SPOOL_H

#include <stddef.h>

/* Check (creating it if needed) that @dir can take files. 0 or -errno after
 * logging one line with a hint (--spool-dir). */
int spool__prepare(const char *dir);

/* spool__prepare() without the message, for directories that are not the
 * spool (the agent's --output-dir): 0 or -errno. */
int spool__dir_ready(const char *dir);

/* Save @len bytes of @data into @dir; the new file's path goes to @path.
 * 0 or -errno (logged). */
int spool__save(const char *dir, const char *host, const void *data, size_t len, char *path,
		size_t pathlen);

#endif
